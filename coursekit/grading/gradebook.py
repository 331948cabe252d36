"""Grading a folder of submissions: ``make grade`` (``python -m coursekit grade FOLDER``).

Every ``.ipynb`` under the folder is graded against the autograder zip its metadata names, with
``coursekit.grading.grader`` (the student's code in a worker confined by bubblewrap, the checks in the
grader), one Dask task per submission (:mod:`coursekit.grading.fanout`): on a local cluster sized to this
machine, or on an existing cluster given its scheduler's address (``make grade ...
SCHEDULER=tcp://host:8786``). The scores go to ``scores.csv`` with a per-question ``summary.csv``.

Grading **fails closed**: where the workers cannot be confined (no bubblewrap, no user
namespaces, not Linux), :func:`grade` stops before grading anything and says how to get the
confinement, unless the instructor asks for unconfined grading explicitly (``unisolated``,
``make grade ... UNISOLATED=1``); the ``isolated`` column of ``scores.csv`` says how each
submission was graded. See the instructor guide.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
from pathlib import Path

from coursekit.grading import isolation
from coursekit.grading.fanout import SUBMISSION_TIMEOUT, GraderProcess, grade_all, grade_one  # noqa: F401 (the API)
from coursekit.repository import DIST, ROOT, log

UNISOLATED_HINT = "make grade SUBMISSIONS=... UNISOLATED=1 (python -m coursekit grade --unisolated)"


def assignment_name(path: Path) -> str | None:
    """The assignment a submitted notebook belongs to (its otter metadata, else its file name)."""
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
        name = ((nb.get("metadata") or {}).get("otter") or {}).get("assignment_name")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError):
        return None  # the grader reports what is wrong with it
    return name or path.stem


def grade(submissions: Path, out_csv: Path, autograders: Path = DIST / "autograder",
          timeout: float = SUBMISSION_TIMEOUT, jobs: int | None = None, progress: bool = False,
          cell_seconds: float | None = None, unisolated: bool = False, scheduler: str | None = None) -> list[dict]:
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
        Submissions graded at a time on the local cluster (default: the number of CPUs).
    progress : bool
        Show a progress bar.
    cell_seconds : float or None
        Time limit of each cell and check; default: each assignment's.
    unisolated : bool
        Grade even where the workers cannot be confined. Without it, grading stops first if they
        cannot be (SystemExit, saying how to get bubblewrap).
    scheduler : str or None
        The address of a Dask scheduler (``tcp://host:8786``) whose workers grade; None: a local
        cluster of ``jobs`` threads, started for this batch.

    Returns
    -------
    list of dict
        One row per submission: every question's score and, where points were lost, the reason;
        whether the worker was confined (``isolated``); an ``error`` where it could not be graded.
        ``summary.csv`` has each question's mean and how many answers timed out, crashed or ran out
        of memory. A confined student's code sees none of the repository, the other submissions,
        the autograder zips, home folders or caches (see :mod:`coursekit.grading.isolation`).
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
    where = f"on the Dask cluster at {scheduler}" if scheduler else f"{jobs} at a time"
    log(f"grading {len(paths)} submissions, {where}, {how}; each is stopped after {timeout / 60:g} min")

    rows, tasks = {}, []
    for path in paths:
        name = assignment_name(path)
        zip_path = autograders / f"{name}-autograder.zip"
        key = str(path.relative_to(submissions))
        rows[key] = {"submission": key, "assignment": name or ""}
        if name is None:
            rows[key]["error"] = "not a notebook: the file is not valid notebook JSON"
        elif path.stem != name and (autograders / f"{path.stem}-autograder.zip").exists():
            rows[key]["error"] = (f"this notebook is for assignment {name!r}, but it was submitted as {path.name}; "
                                  "ask for the notebook of that assignment")
        elif not zip_path.exists():
            rows[key]["error"] = f"no autograder {zip_path.name}; run `make assignments` first"
        else:
            tasks.append((key, path, zip_path))

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(paths), unit="submission")

    def finished(key: str, row: dict) -> None:
        rows[key].update(row)
        rows[key]["total"] = sum(v for k, v in rows[key].items() if re.fullmatch(r"q\d+\w*", k))
        if bar is not None:
            bar.update()
        log(f"{key}: {rows[key]['total']:g}" + (f" ({rows[key]['error']})" if rows[key].get("error") else ""))

    for key in rows.keys() - {key for key, _, _ in tasks}:
        finished(key, {})
    options = {"timeout": timeout, "protect": [str(p) for p in protect], "cell_seconds": cell_seconds,
               "unisolated": unisolated}
    if tasks:
        grade_all(tasks, options, scheduler, jobs, finished)
    if bar is not None:
        bar.close()
    write_scores(list(rows.values()), out_csv)  # in the order of the paths
    return list(rows.values())


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


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit grade SUBMISSIONS``: what ``make grade`` runs."""
    parser = argparse.ArgumentParser(prog=prog, description="grade a folder of submitted notebooks")
    parser.add_argument("submissions", type=Path, help="folder holding the submitted .ipynb files")
    parser.add_argument("--out", type=Path, default=None, help="CSV to write (default: SUBMISSIONS/scores.csv)")
    parser.add_argument("--autograders", type=Path, default=DIST / "autograder")
    parser.add_argument("--scheduler", default=None,
                        help="grade on the Dask cluster of this scheduler (tcp://host:8786); "
                             "default: a local cluster sized to this machine")
    parser.add_argument("--unisolated", action="store_true",
                        help="grade even where the students' code cannot be confined (bubblewrap missing "
                             "or unable to run): a submission can then read and change whatever you can")
    args = parser.parse_args(argv)
    grade(args.submissions, args.out or args.submissions / "scores.csv", args.autograders, progress=True,
          unisolated=args.unisolated, scheduler=args.scheduler)
