"""Grading many submissions at once, on Dask distributed: a local cluster, or an existing one.

``make grade`` (coursekit/grading/gradebook.py) makes one task per submission and hands them to Dask
distributed (:func:`grade_all`): by default to a cluster of this machine's own, started for the
batch and sized to its cores; given a scheduler's address, to an existing cluster of machines (one
that dask-jobqueue starts on SLURM, dask-kubernetes on Kubernetes, or ``dask scheduler`` and
``dask worker`` by hand). A task carries the submitted notebook's bytes and the digest of its
autograder zip; each zip goes to every worker once per batch. So a worker machine needs the
course's environment (these packages, ``lecturekit`` at the same version) and bubblewrap, and no
shared file system.

On a worker, :class:`GradingPlugin` keeps one grading process per worker thread
(:class:`GraderProcess`, ``python -m coursekit.grading.grader --serve``): the checker's imports and the
sandbox's zygote are paid once per worker, while every submission still runs in a fresh confined
worker of its own. A grading process that outlasts a submission's time is killed and replaced. A
Dask worker that dies mid-task (a machine lost, a job pre-empted) loses no submission: the scheduler
gives its tasks to another worker, which grades them from the start.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

from coursekit.grading import limits
from coursekit.grading.untrusted import identifier
from coursekit.repository import log

__all__ = ["GraderProcess", "GradingPlugin", "grade_all", "grade_one", "SUBMISSION_TIMEOUT"]

# The grader's own backstop for one submission (coursekit.grading.grader limits each cell and each check to
# the assignment's CellTimeLimit seconds, and a submission's cells and checks together to this).
SUBMISSION_TIMEOUT = 900
PLUGIN = "lecturekit-grading"
# How often a submission whose task the cluster lost (its data or its workers gone) is submitted again.
CLUSTER_RETRIES = 2


class GraderProcess:
    """A ``python -m coursekit.grading.grader --serve`` process, which grades one submission at a time.

    One per grading thread: the checker's imports (otter, SciPy) are paid once, while every
    submission still runs in a fresh worker of its own. A request that outlasts its time ends the
    process. Its temporary files (the autograders' support files, the zygotes' logs) go to a folder
    of its own, removed by :meth:`close` however the process ended.
    """

    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - the server's for its whole life: close() closes it
        self.scratch = tempfile.mkdtemp(prefix="lecturekit-grader-")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "coursekit.grading.grader", "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={
                **os.environ,
                "TMPDIR": self.scratch,
                "OPENBLAS_NUM_THREADS": "1",
                "OMP_NUM_THREADS": "1",
                "MKL_NUM_THREADS": "1",
            },
        )
        self.buffer = b""

    def grade(self, request: dict, timeout: float) -> dict:
        """The grader's result for one request; TimeoutError, or RuntimeError if the process ended."""
        try:
            self.process.stdin.write((json.dumps(request) + "\n").encode())
            self.process.stdin.flush()
        except OSError as error:
            raise RuntimeError(self.last_words() or str(error)) from error
        deadline, fd = time.monotonic() + timeout, self.process.stdout.fileno()
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise RuntimeError(self.last_words() or f"exit status {self.process.wait()}")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def last_words(self) -> str:
        """The last line the process wrote to its standard error."""
        self.stderr.seek(0)
        lines = self.stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def close(self) -> None:
        """End the process (asked first: it stops its sandboxes) and remove its files and what is left of
        its sandboxes' cgroups (after a kill, their processes die with bubblewrap, the cgroups stay)."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        limits.remove_stale(self.process.pid)
        self.stderr.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def grade_one(
    submission: Path,
    autograder: Path,
    timeout: float = SUBMISSION_TIMEOUT,
    protect: tuple[Path, ...] = (),
    cell_seconds: float | None = None,
    grader: GraderProcess | None = None,
    unisolated: bool = False,
    unbounded: bool = False,
    seed: int = 0,
) -> dict:
    """Grade one notebook with ``coursekit.grading.grader``, in ``grader`` or in a process of its own.

    Parameters
    ----------
    submission, autograder : Path
        The notebook, and its assignment's autograder zip.
    timeout : float
        The backstop for the grader itself (it limits the submission's time on its own).
    protect : tuple of Path
        Folders the worker must not see (the grader refuses to confine it if it would).
    cell_seconds : float or None
        Time limit of each cell and check; default: the assignment's.
    grader : GraderProcess or None
        A grading process to reuse; None: one of its own.
    unisolated : bool
        Grade without confining the worker (never implicit: see ``coursekit/grading/gradebook.py``).
    unbounded : bool
        Grade without bounding each sandbox as a whole (never implicit either).
    seed : int
        The seed of the owner's variant (:mod:`coursekit.grading.variant`); 0, the public one.

    Returns
    -------
    dict
        ``{question: score, "question reason": why points were lost, "possible": total,
        "isolated": "yes" or "no"}``, with ``"error"`` where it could not be graded.
    """
    request = {
        "autograder": str(autograder),
        "submission": str(submission),
        "protect": [str(p) for p in protect],
        "isolation": "off" if unisolated else "required",
        "bounded": not unbounded,
        "budget_seconds": timeout,
        "cell_seconds": cell_seconds,
        "seed": seed,
    }
    own = grader is None
    grader = grader or GraderProcess()
    try:
        result = grader.grade(request, timeout + 60)
    except TimeoutError:
        grader.close()
        return {"error": f"grading stopped after {timeout + 60:g} s"}
    except (RuntimeError, ValueError) as error:  # what it said goes to the log, not to the scores file
        log(f"{submission.name}: the grading process failed: {error}")
        grader.close()
        return {"error": "not graded: the grading process failed on this submission (its last words are in the log)"}
    finally:
        if own:
            grader.close()
    row = {"error": result.get("error", "")} if result.get("error") else {}
    row["isolated"] = "yes" if result.get("isolated") else "no"
    row["memory"] = result.get("memory", {})  # not a column of the scores: for the log and the tests
    for question, entry in result["questions"].items():
        row[question] = entry["score"]
        row[f"{question} reason"] = entry["reason"]
        row["possible"] = row.get("possible", 0) + entry["possible"]
    return row


def _checkout() -> tuple[Path, ...]:
    """The course repository this ``coursekit`` runs from, and the folder above it (none if installed)."""
    root = Path(__file__).resolve().parents[2]
    return (root, root.parent) if (root / "notebooks").is_dir() else ()


try:
    from distributed import WorkerPlugin
except ImportError:  # a student's environment without Dask: only grade_one and GraderProcess are of use
    WorkerPlugin = object


class GradingPlugin(WorkerPlugin):
    """What a Dask worker keeps for grading: a grading process per thread, the zips, a scratch folder.

    Parameters
    ----------
    options : dict
        ``timeout``, ``protect`` (paths the workers must not see, as the client names them),
        ``cell_seconds``, ``unisolated`` and ``unbounded``, as :func:`grade_one` takes them.
    """

    name = PLUGIN

    def __init__(self, options: dict):
        self.options = options

    def setup(self, worker=None) -> None:
        """Make the worker's scratch folder (its submissions and zips); graders start on first use."""
        self.scratch = Path(tempfile.mkdtemp(prefix="lecturekit-grading-"))
        self.local, self.graders, self.lock = threading.local(), [], threading.Lock()

    def teardown(self, worker=None) -> None:
        """Close every grading process and remove the scratch folder."""
        for grader in self.graders:
            grader.close()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def _autograder(self, name: str, digest: str, data: bytes) -> Path:
        path = self.scratch / "autograders" / digest / name
        with self.lock:
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_suffix(".partial")
                partial.write_bytes(data)
                partial.rename(path)
        return path

    def grade(self, name: str, notebook: bytes, zip_name: str, digest: str, zip_data: bytes, seed: int = 0) -> dict:
        """Grade one submission (see :func:`grade_one`); its row, with the seconds it took."""
        autograder = self._autograder(zip_name, digest, zip_data)
        folder = Path(tempfile.mkdtemp(dir=self.scratch, prefix="submission-"))
        try:
            path = folder / Path(name).name
            path.write_bytes(notebook)
            grader = getattr(self.local, "grader", None)
            if grader is None or grader.process.poll() is not None:
                grader = self.local.grader = GraderProcess()
                with self.lock:
                    self.graders.append(grader)
            protect = (*map(Path, self.options["protect"]), self.scratch, *_checkout())
            start = time.monotonic()
            row = grade_one(
                path,
                autograder,
                self.options["timeout"],
                protect,
                self.options["cell_seconds"],
                grader,
                self.options["unisolated"],
                self.options.get("unbounded", False),
                seed,
            )
            row["seconds"] = round(time.monotonic() - start, 1)
            return row
        finally:
            shutil.rmtree(folder, ignore_errors=True)


def grade_task(name: str, notebook: bytes, zip_name: str, digest: str, zip_data: bytes, seed: int = 0) -> dict:
    """One submission's task: graded by this worker's :class:`GradingPlugin`."""
    from distributed import get_worker

    return get_worker().plugins[PLUGIN].grade(name, notebook, zip_name, digest, zip_data, seed)


@contextlib.contextmanager
def cluster(scheduler: str | None = None, jobs: int | None = None):
    """A Dask client: on the scheduler at ``scheduler``, or on a local cluster of ``jobs`` threads.

    The local cluster runs in this process (its workers' threads only wait for the grading
    processes, which do the work) and closes with the block.

    Yields
    ------
    distributed.Client
    """
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler, timeout=60) as client:
            yield client
        return
    jobs = jobs or os.cpu_count() or 1
    with (
        LocalCluster(
            n_workers=1,
            threads_per_worker=jobs,
            processes=False,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": ":0"},  # no dashboard; its HTTP server on any port
            silence_logs=logging.ERROR,
        ) as local,
        Client(local) as client,
    ):
        yield client


def grade_all(
    submissions: list[tuple[str, Path, Path]],
    options: dict,
    scheduler: str | None = None,
    jobs: int | None = None,
    done: Callable[[str, dict], None] | None = None,
    seeds: dict[str, int] | None = None,
) -> dict[str, dict]:
    """Grade submissions on Dask, each in a task of its own; their rows by name.

    Parameters
    ----------
    submissions : list of (str, Path, Path)
        Each submission's name (unique, e.g. its path under the submissions folder), its notebook
        and its autograder zip.
    options : dict
        For :class:`GradingPlugin`: ``timeout``, ``protect``, ``cell_seconds``, ``unisolated``, ``unbounded``.
    scheduler : str or None
        The address of an existing cluster's scheduler (``tcp://host:8786``); None: a local
        cluster of ``jobs`` threads (default: this machine's cores).
    jobs : int or None
        See ``scheduler``.
    done : callable or None
        Called with each name and row as soon as it is graded.
    seeds : dict or None
        The seed of each name's variant (the owner's, :mod:`coursekit.grading.variant`); 0 where absent.

    Returns
    -------
    dict
        Each name's row, as :func:`grade_one` gives it with ``seconds``; a submission whose task
        the cluster lost is submitted again (:data:`CLUSTER_RETRIES` times, under keys ending
        ``-retry1``, ``-retry2``), and one whose tasks all failed gets an ``error`` instead.
    """
    from distributed import as_completed

    rows = {}
    with cluster(scheduler, jobs) as client:
        client.register_plugin(GradingPlugin(options))
        zips = {}
        for zip_path in sorted({z for _, _, z in submissions}):
            data = Path(zip_path).read_bytes()
            zips[zip_path] = (hashlib.sha256(data).hexdigest()[:16], client.scatter(data, broadcast=True, hash=False))
        run = uuid.uuid4().hex[:8]
        futures, given, attempts = {}, {}, {}
        for index, (name, notebook, zip_path) in enumerate(submissions):
            digest, data = zips[zip_path]
            future = client.submit(
                grade_task,
                name,
                Path(notebook).read_bytes(),
                Path(zip_path).name,
                digest,
                data,
                (seeds or {}).get(name, 0),
                key=f"grade-{run}-{index:05d}",
                pure=False,
            )
            futures[future], given[name] = name, (future.key, notebook, zip_path)
        queue = as_completed(futures)
        for future in queue:
            name = futures.pop(future)
            try:
                rows[name] = future.result()
            except Exception as error:  # noqa: BLE001 - the cluster's failure (e.g. KilledWorker), not the student's
                attempts[name] = attempts.get(name, 0) + 1
                log(f"{name}: the grading cluster failed: {type(error).__name__}: {error}")
                if attempts[name] <= CLUSTER_RETRIES:  # its zip sent along, not scattered: it may be what was lost
                    key, notebook, zip_path = given[name]
                    again = client.submit(
                        grade_task,
                        name,
                        Path(notebook).read_bytes(),
                        Path(zip_path).name,
                        zips[zip_path][0],
                        Path(zip_path).read_bytes(),
                        (seeds or {}).get(name, 0),
                        key=f"{key}-retry{attempts[name]}",
                        pure=False,
                    )
                    futures[again] = name
                    queue.add(again)
                    future.release()
                    continue
                rows[name] = {"error": f"not graded: the grading cluster failed ({identifier(type(error).__name__)})"}
            future.release()
            if done is not None:
                done(name, rows[name])
    return rows
