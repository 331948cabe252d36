"""Grading a folder of submissions: ``make grade`` (``python tools/course.py grade FOLDER``).

Every ``.ipynb`` under the folder is graded against the autograder zip its metadata names, with
``lecturekit.grader`` (the student's code in a worker confined by bubblewrap, the checks in the
grader), a few at a time, and the scores go to ``scores.csv`` with a per-question ``summary.csv``.

Grading **fails closed**: where the workers cannot be confined (no bubblewrap, no user
namespaces, not Linux), :func:`grade` stops before grading anything and says how to get the
confinement, unless the instructor asks for unconfined grading explicitly (``unisolated``,
``make grade ... UNISOLATED=1``); the ``isolated`` column of ``scores.csv`` says how each
submission was graded. See the instructor guide.
"""

from __future__ import annotations

import csv
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from course import DIST, ROOT, log
from lecturekit import isolation

# The grader's own backstop for one submission (lecturekit.grader limits each cell and each check to
# the assignment's CellTimeLimit seconds, and a submission's cells and checks together to this).
SUBMISSION_TIMEOUT = 900
UNISOLATED_HINT = "make grade SUBMISSIONS=... UNISOLATED=1 (python tools/course.py grade --unisolated)"


def assignment_name(path: Path) -> str | None:
    """The assignment a submitted notebook belongs to (its otter metadata, else its file name)."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        name = ((nb.get("metadata") or {}).get("otter") or {}).get("assignment_name")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None  # the grader reports what is wrong with it
    return name or path.stem


class GraderProcess:
    """A ``python -m lecturekit.grader --serve`` process, which grades one submission at a time.

    One per grading job: the checker's imports (otter, SciPy) are paid once, while every submission
    still runs in a fresh worker of its own. A request that outlasts its time ends the process. Its
    temporary files (the autograders' support files, the zygotes' logs) go to a folder of its own,
    removed by :meth:`close` however the process ended.
    """

    def __init__(self) -> None:
        self.stderr = tempfile.TemporaryFile()
        self.scratch = tempfile.mkdtemp(prefix="lecturekit-grader-")
        self.process = subprocess.Popen([sys.executable, "-m", "lecturekit.grader", "--serve"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr,
                                        env={**os.environ, "TMPDIR": self.scratch})
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
        self.stderr.seek(0)
        lines = self.stderr.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else ""

    def close(self) -> None:
        """End the process (asked first: it stops its sandboxes) and remove its files."""
        try:
            self.process.stdin.close()
            self.process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        self.stderr.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def grade_one(submission: Path, autograder: Path, timeout: float = SUBMISSION_TIMEOUT,
              protect: tuple[Path, ...] = (), cell_seconds: float | None = None,
              grader: GraderProcess | None = None, unisolated: bool = False) -> dict:
    """Grade one notebook with ``lecturekit.grader``, in ``grader`` or in a process of its own.

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
        Grade without confining the worker (never implicit: see :func:`grade`).

    Returns
    -------
    dict
        ``{question: score, "question reason": why points were lost, "possible": total,
        "isolated": "yes" or "no"}``, with ``"error"`` where it could not be graded.
    """
    request = {"autograder": str(autograder), "submission": str(submission), "protect": [str(p) for p in protect],
               "isolation": "off" if unisolated else "required", "budget_seconds": timeout,
               "cell_seconds": cell_seconds}
    own = grader is None
    grader = grader or GraderProcess()
    try:
        result = grader.grade(request, timeout + 60)
    except TimeoutError:
        grader.close()
        return {"error": f"grading stopped after {timeout + 60:g} s"}
    except (RuntimeError, ValueError) as error:
        grader.close()
        return {"error": f"the grader failed: {error}"}
    finally:
        if own:
            grader.close()
    row = {"error": result.get("error", "")} if result.get("error") else {}
    row["isolated"] = "yes" if result.get("isolated") else "no"
    for question, entry in result["questions"].items():
        row[question] = entry["score"]
        row[f"{question} reason"] = entry["reason"]
        row["possible"] = row.get("possible", 0) + entry["possible"]
    return row


def grade(submissions: Path, out_csv: Path, autograders: Path = DIST / "autograder",
          timeout: float = SUBMISSION_TIMEOUT, jobs: int | None = None, progress: bool = False,
          cell_seconds: float | None = None, unisolated: bool = False) -> list[dict]:
    """Grade every notebook under ``submissions`` and write one row per submission to ``out_csv``.

    Parameters
    ----------
    submissions : Path
        A folder of submitted notebooks, in sub-folders or not.
    out_csv : Path
        The scores file to write; ``summary.csv`` goes beside it.
    autograders : Path
        The folder of ``<assignment>-autograder.zip`` files.
    timeout : float
        The longest one submission may take.
    jobs : int or None
        Submissions graded at a time (default: the number of CPUs).
    progress : bool
        Show a progress bar.
    cell_seconds : float or None
        Time limit of each cell and check; default: each assignment's.
    unisolated : bool
        Grade even where the workers cannot be confined. Without it, grading stops first if they
        cannot be (SystemExit, saying how to get bubblewrap).

    Returns
    -------
    list of dict
        One row per submission: every question's score and, where points were lost, the reason;
        whether the worker was confined (``isolated``); an ``error`` where it could not be graded.
        ``summary.csv`` has each question's mean and how many answers timed out, crashed or ran out
        of memory. A confined student's code sees none of the repository, the other submissions,
        the autograder zips, home folders or caches (see :mod:`lecturekit.isolation`).
    """
    if not submissions.is_dir():
        raise SystemExit(f"{submissions} is not a folder of submitted notebooks")
    paths = sorted(p for p in submissions.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
    if not paths:
        raise SystemExit(f"no .ipynb files under {submissions}")
    protect = tuple(p.resolve() for p in (submissions, autograders, ROOT, ROOT.parent))
    problem = isolation.problem(protect)
    if problem and not unisolated:
        raise SystemExit(f"Not grading: the workers that run the students' code cannot be confined here: {problem}.\n"
                         "Without that, a submission can read the repository, the hidden tests and other "
                         "students' notebooks, and change your files. To grade anyway, knowing this: "
                         + UNISOLATED_HINT)
    jobs = jobs or os.cpu_count() or 1
    how = ("WITHOUT confining the workers (a submission can read and change whatever you can)" if unisolated
           else "each worker confined by bubblewrap")
    log(f"grading {len(paths)} submissions, {jobs} at a time, {how}; each is stopped after {timeout / 60:g} min, "
        f"so this takes at most {len(paths) * (timeout + 60) / jobs / 60:.0f} min")

    local, started = threading.local(), []  # one grader process per job, made on first use

    def grade_path(path: Path) -> dict:
        name = assignment_name(path)
        zip_path = autograders / f"{name}-autograder.zip"
        row = {"submission": str(path.relative_to(submissions)), "assignment": name or ""}
        if name is None:
            row["error"] = "not a notebook: the file is not valid notebook JSON"
        elif path.stem != name and (autograders / f"{path.stem}-autograder.zip").exists():
            row["error"] = (f"this notebook is for assignment {name!r}, but it was submitted as {path.name}; "
                            "ask for the notebook of that assignment")
        elif not zip_path.exists():
            row["error"] = f"no autograder {zip_path.name}; run `make assignments` first"
        else:
            grader = getattr(local, "grader", None)
            if grader is None or grader.process.poll() is not None:
                grader = local.grader = GraderProcess()
                started.append(grader)
            start = time.monotonic()
            row.update(grade_one(path, zip_path, timeout, protect, cell_seconds, grader, unisolated))
            row["seconds"] = round(time.monotonic() - start, 1)
        row["total"] = sum(v for k, v in row.items() if re.fullmatch(r"q\d+\w*", k))
        return row

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(paths), unit="submission")
    rows = []
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for row in pool.map(grade_path, paths):
                rows.append(row)
                if bar is not None:
                    bar.update()
                log(f"{row['submission']}: {row['total']:g}" + (f" ({row['error']})" if row.get("error") else ""))
    finally:
        for grader in started:
            grader.close()
    if bar is not None:
        bar.close()
    write_scores(rows, out_csv)
    return rows


def _question_order(key: str) -> list:
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", key)]


def write_scores(rows: list[dict], out_csv: Path) -> None:
    """``out_csv``: one row per submission; ``summary.csv`` beside it: one row per question."""
    questions = sorted({k for row in rows for k in row if re.fullmatch(r"q\d+\w*", k)}, key=_question_order)
    columns = ["submission", "assignment"]
    for question in questions:
        columns += [question, f"{question} reason"]
    columns += ["total", "possible", "seconds", "isolated", "error"]
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    with out_csv.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        writer.writerows(rows)
    summary = []
    for question in questions:
        graded = [row for row in rows if question in row]
        reasons = [row.get(f"{question} reason", "") for row in graded]
        summary.append({
            "question": question, "submissions": len(graded),
            "mean": round(sum(row[question] for row in graded) / len(graded), 3) if graded else "",
            "full": sum(not reason for reason in reasons),
            "timed out": sum("timed out" in reason for reason in reasons),
            "crashed": sum("process died" in reason for reason in reasons),
            "out of memory": sum("GiB" in reason for reason in reasons)})
    with (out_csv.parent / "summary.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["question", "submissions", "mean", "full", "timed out",
                                                    "crashed", "out of memory"])
        writer.writeheader()
        writer.writerows(summary)
    unreadable = sum(bool(row.get("error")) for row in rows)
    log(f"scores written to {out_csv}, per-question summary to {out_csv.parent / 'summary.csv'}"
        + (f"; {unreadable} submissions could not be graded (see the error column)" if unreadable else ""))
    for line in summary:
        log(f"  {line['question']}: mean {line['mean']}, {line['timed out']} timed out, {line['crashed']} crashed, "
            f"{line['out of memory']} out of memory")


