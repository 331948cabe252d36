"""make grade on a cluster of machines: Dask's own scheduler and workers (coursekit.grading.fanout).

A real scheduler and two worker processes are started on this machine with Dask's command-line
tools (``dask scheduler``, ``dask worker``, on 127.0.0.1), as an instructor or dask-jobqueue starts
them on a cluster; a small batch of two assignments graded through them gives the same
``scores.csv`` as the local run (but for the ``seconds`` column, which is timing). Then one worker
is killed while it grades: no submission is lost, and the one it was grading is graded again on the
other worker, once (Dask's own record of the task says so). A task the cluster fails outright is
submitted again, its zip sent along.
"""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import nbformat
import pytest

from coursekit import exercises
from coursekit.grading import fanout, gradebook
from coursekit.repository import MASTERS

NOTEBOOKS = {
    "01.01-Bayes-Rule-and-Maximum-Likelihood": ("solution", "blank", "wrong-1", "wrong-2"),
    "05.03-Naive-Bayes-with-Missing-Labels": ("solution", "wrong-1"),
}
DASK = str(Path(sys.executable).parent / "dask")


@pytest.fixture(scope="module")
def batch(release, tmp_path_factory) -> Path:
    """Whole submissions, lecture cells and all: right, blank and wrong, to two assignments."""
    folder = tmp_path_factory.mktemp("batch")
    for stem, names in NOTEBOOKS.items():
        master = MASTERS / f"{stem}.ipynb"
        subs, _ = exercises.variants(master, nbformat.read(release / "student" / master.name, as_version=4), whole=True)
        for name in names:
            (folder / stem[:5] / name).mkdir(parents=True)
            nbformat.write(subs[name], folder / stem[:5] / name / master.name)
    return folder


def table(path: Path) -> list[dict]:
    with path.open() as handle:
        return [{k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)]


@pytest.fixture(scope="module")
def local(batch, release) -> list[dict]:
    gradebook.grade(batch, batch.parent / "local.csv", release / "autograder", jobs=2)
    return table(batch.parent / "local.csv")


@pytest.fixture(scope="module")
def dask_cluster(tmp_path_factory):
    """``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1; the scheduler's address."""
    folder = tmp_path_factory.mktemp("cluster")
    scheduler_file = folder / "scheduler.json"
    environment = {**os.environ, "TMPDIR": str(folder)}
    logs = open(folder / "dask.log", "w")  # noqa: SIM115 - the cluster's for the whole fixture, closed at its end
    processes = [
        subprocess.Popen(
            [
                DASK,
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-dashboard",
                "--scheduler-file",
                str(scheduler_file),
            ],
            stdout=logs,
            stderr=logs,
            env=environment,
        )
    ]
    try:
        for _ in range(600):
            if scheduler_file.exists():
                break
            time.sleep(0.1)
        workers = [
            subprocess.Popen(
                [
                    DASK,
                    "worker",
                    "--scheduler-file",
                    str(scheduler_file),
                    "--host",
                    "127.0.0.1",
                    "--nthreads",
                    "1",
                    "--no-nanny",
                    "--no-dashboard",
                    "--name",
                    f"worker-{i}",
                ],
                stdout=logs,
                stderr=logs,
                env=environment,
            )
            for i in range(2)
        ]
        processes += workers
        from distributed import Client

        with Client(scheduler_file=str(scheduler_file), timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
            address = client.scheduler.address
        yield address, workers
    finally:
        for process in reversed(processes):
            process.kill()
            process.wait()
        logs.close()


def test_a_cluster_grades_as_the_local_run_does(batch, release, local, dask_cluster):
    address, _ = dask_cluster
    rows = gradebook.grade(batch, batch.parent / "cluster.csv", release / "autograder", scheduler=address)
    assert table(batch.parent / "cluster.csv") == local
    assert len(rows) == 6 and all(row["error"] == "" for row in local)
    for row in local:  # right and blank answers score as they should: the batch was really graded
        variant = row["submission"].split("/")[1]
        wanted = {"solution": float(row["possible"]), "blank": 0.0}.get(variant)
        assert wanted is None or float(row["total"]) == wanted, row
    print(f"\n{len(rows)} submissions graded on the cluster at {address}: scores.csv as the local run's")


def test_a_worker_killed_mid_batch_loses_no_submission(batch, release, local, dask_cluster):
    from distributed import Client

    address, workers = dask_cluster
    result = {}
    grading = threading.Thread(
        target=lambda: result.update(
            rows=gradebook.grade(batch, batch.parent / "killed.csv", release / "autograder", scheduler=address)
        )
    )
    with Client(address, timeout=60) as client:
        grading.start()
        pids = client.run(os.getpid)
        victim, key = None, None
        deadline = time.monotonic() + 300
        while key is None and time.monotonic() < deadline:
            executing = client.run(lambda dask_worker: sorted(t.key for t in dask_worker.state.executing))
            victim, key = next(((w, keys[0]) for w, keys in executing.items() if keys), (None, None))
            if key is None:
                time.sleep(0.05)
                continue
            # Frozen first, so that it cannot finish the task between the look and the kill; killed only
            # if the scheduler still waits for that task from it.
            os.kill(pids[victim], signal.SIGSTOP)
            time.sleep(0.5)
            if key in client.processing([victim])[victim]:
                os.kill(pids[victim], signal.SIGKILL)
            else:
                os.kill(pids[victim], signal.SIGCONT)
                victim, key = None, None
        assert key is not None, "no worker started grading"
        grading.join(timeout=600)
        story = client.story(key, *(f"{key}-retry{n}" for n in range(1, fanout.CLUSTER_RETRIES + 1)))
    assert not grading.is_alive()
    assert table(batch.parent / "killed.csv") == local  # every submission, each once, as graded locally
    # graded once more, under its own key or, if the cluster lost the task, a retry's
    graded = [s for s in story if s[0] not in (victim, "scheduler") and s[2:4] == ("executing", "memory")]
    finished = [s for s in story if s[0] == "scheduler" and s[3] == "memory"]
    assert len(graded) == 1 and len(finished) == 1, story
    survivor = graded[0][0]
    print(f"\nkilled {victim} while it graded {key}; graded again on {survivor}, once:")
    for line in story:
        print("   ", line[:4])


MARKS = Path(os.environ.get("TMPDIR", "/tmp"))  # set per test below; read by the task in the worker thread


def lost_once(name, notebook, zip_name, digest, zip_data, seed=0):
    """A task that the cluster loses the first time it runs for a submission (its data gone, say)."""
    mark = MARKS / name.replace("/", "_")
    if not mark.exists():
        mark.write_text(digest)
        raise RuntimeError(f"lost {name}")
    return {"total": len(notebook) + len(zip_data), "zip": zip_name}


def test_a_task_the_cluster_loses_is_submitted_again(monkeypatch, tmp_path):
    monkeypatch.setattr(sys.modules[__name__], "MARKS", tmp_path)
    monkeypatch.setattr(fanout, "grade_task", lost_once)
    (tmp_path / "a.zip").write_bytes(b"zip")
    submissions = []
    for name in ("one", "two"):
        (tmp_path / f"{name}.ipynb").write_bytes(name.encode())
        submissions.append((name, tmp_path / f"{name}.ipynb", tmp_path / "a.zip"))
    options = {"timeout": 60, "protect": [], "cell_seconds": 5, "unisolated": False}
    rows = fanout.grade_all(submissions, options, jobs=1)
    assert rows == {"one": {"total": 6, "zip": "a.zip"}, "two": {"total": 6, "zip": "a.zip"}}
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == "") == ["one", "two"]  # each failed once

    monkeypatch.setattr(fanout, "CLUSTER_RETRIES", 0)  # and one the cluster keeps losing gets an error, named
    for mark in ("one", "two"):
        (tmp_path / mark).unlink()
    rows = fanout.grade_all(submissions[:1], options, jobs=1)
    assert rows == {"one": {"error": "not graded: the grading cluster failed (RuntimeError)"}}
