"""Grading a folder of submissions: ``make grade`` (``python -m coursekit grade FOLDER``).

Every ``.ipynb`` under the folder is graded against the autograder zip its metadata names, with
``coursekit.grading.grader`` (the student's code in a worker confined by bubblewrap, the checks in the
grader), one Dask task per submission (:mod:`coursekit.grading.fanout`): on a local cluster sized to this
machine, or on an existing cluster given its scheduler's address (``make grade ...
SCHEDULER=tcp://host:8786``). The scores go to ``scores.csv`` with a per-question ``summary.csv``; then
the instructor's report, ``report.html``, and ``gradebook.csv`` beside them (:mod:`coursekit.grading.report`).

Grading **fails closed**: where the workers cannot be confined (no bubblewrap, no user
namespaces, not Linux), :func:`grade` stops before grading anything and says how to get the
confinement, unless the instructor asks for unconfined grading explicitly (``unisolated``,
``make grade ... UNISOLATED=1``); the ``isolated`` column of ``scores.csv`` says how each
submission was graded. See the instructor guide.
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
from pathlib import Path

from coursekit.grading import isolation, limits, submission
from coursekit.grading.fanout import SUBMISSION_TIMEOUT, GraderProcess, grade_all, grade_one  # noqa: F401 (the API)
from coursekit.grading.grader import Assignment
from coursekit.grading.item_analysis import FAULTS, fault, question_order
from coursekit.grading.owners import Owners, recorded_tag
from coursekit.grading.untrusted import plain
from coursekit.repository import DIST, ROOT, log
from coursekit.variants import read_roster, read_secret

UNISOLATED_HINT = "make grade SUBMISSIONS=... UNISOLATED=1 (python -m coursekit grade --unisolated)"
UNBOUNDED_HINT = "make grade SUBMISSIONS=... UNBOUNDED=1 (python -m coursekit grade --unbounded)"
# What one grading job may hold at worst: its sandbox's bound (the worker's 2 GiB and the zygote's 1 GiB),
# a check's process (1 GiB above the grader's own) and the grading process itself.
MEMORY_PER_JOB = 5 * 2**30


def _memory() -> int:
    """This machine's memory in bytes (MemTotal), or a figure that keeps the default jobs where unknown."""
    try:
        with open("/proc/meminfo") as meminfo:
            return next(int(line.split()[1]) * 1024 for line in meminfo if line.startswith("MemTotal:"))
    except (OSError, StopIteration, ValueError):
        return 2**62


def clean_row(row: dict) -> dict:
    """A grading result made fit for the scores file: known columns, finite scores, plain text.

    A row comes from a grading process that read what a student sent; whatever slipped through,
    only a question's score (a finite number), its reason, the points possible, the seconds, the
    ``isolated`` flag and the error reach the file, each string printable ASCII of bounded length.
    """
    clean = {}
    for key, value in row.items():
        if not isinstance(key, str):
            continue
        if re.fullmatch(r"q\d+\w{0,20}", key) or key in ("possible", "seconds"):
            if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
                clean[key] = value
        elif re.fullmatch(r"q\d+\w{0,20} reason", key) or key in ("error", "isolated"):
            clean[key] = plain(value)
        elif key == "memory" and isinstance(value, dict):  # peaks, for the log (not a column)
            clean[key] = {k: v for k, v in value.items() if k in ("grader", "sandbox") and type(v) is int}
    return clean


def grade(
    submissions: Path,
    out_csv: Path,
    autograders: Path = DIST / "autograder",
    timeout: float = SUBMISSION_TIMEOUT,
    jobs: int | None = None,
    progress: bool = False,
    cell_seconds: float | None = None,
    unisolated: bool = False,
    scheduler: str | None = None,
    unbounded: bool = False,
    owners: Owners | None = None,
    seeds: dict[str, int] | None = None,
) -> list[dict]:
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
        Submissions graded at a time on the local cluster (default: the number of CPUs, and no more
        than one per :data:`MEMORY_PER_JOB` of the machine's memory).
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
    unbounded : bool
        Grade without bounding each sandbox as a whole (where no cgroup can be made here:
        :mod:`coursekit.grading.limits`), each worker limited by process only. Without it, grading
        stops first if they cannot be bounded (SystemExit, saying what would bound them).
    owners : Owners or None
        The roster and the course secret: each notebook, in a folder named by its owner's id, is
        graded on its owner's variant and flagged (column ``flag``) where it carries another's
        (:mod:`coursekit.grading.owners`). None: every notebook on the public variant, 0.
    seeds : dict or None
        The seed to grade each submission on, by its path under ``submissions`` (as ``exercises check
        --variants`` sets them); it overrides ``owners``.

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
        raise SystemExit(
            f"Not grading: the workers that run the students' code cannot be confined here: {problem}.\n"
            "Without that, a submission can read the repository, the hidden tests and other "
            "students' notebooks, and change your files. To grade anyway, knowing this: " + UNISOLATED_HINT
        )
    unbound = None if unisolated or unbounded else limits.problem()
    if unbound:
        raise SystemExit(
            f"Not grading: the sandboxes cannot be bounded as a whole here: {unbound}.\n"
            "Without that, one submission can take the machine's memory, processes or CPU from its "
            "classmates (each process is still limited). To grade anyway, knowing this: " + UNBOUNDED_HINT
        )
    jobs = jobs or min(os.cpu_count() or 1, max(1, _memory() // MEMORY_PER_JOB))
    how = (
        "WITHOUT confining the workers (a submission can read and change whatever you can)"
        if unisolated
        else "each worker confined by bubblewrap"
        + (f" and bounded as a whole by {limits.mechanism()}" if not unbounded else ", WITHOUT bounds as a whole")
    )
    where = f"on the Dask cluster at {scheduler}" if scheduler else f"{jobs} at a time"
    log(f"grading {len(paths)} submissions, {where}, {how}; each is stopped after {timeout / 60:g} min")

    rows, tasks, seeds, declared = {}, [], dict(seeds or {}), {}
    for path in paths:
        key = str(path.relative_to(submissions))
        try:
            nb = submission.read(path)
            name = submission.assignment_name(nb) or path.stem
        except submission.Unreadable as error:
            rows[key] = {"submission": key, "assignment": "", "error": f"not a readable notebook ({error})"}
            continue
        zip_path = autograders / f"{name}-autograder.zip"
        rows[key] = {"submission": key, "assignment": name}
        student = owners.owner(key) if owners is not None else None
        if path.stem != name and (autograders / f"{path.stem}-autograder.zip").exists():
            rows[key]["error"] = (
                f"this notebook is for assignment {name!r}, but it was submitted as {path.name}; "
                "ask for the notebook of that assignment"
            )
        elif not zip_path.exists():
            rows[key]["error"] = f"no autograder {zip_path.name}; run `make assignments` first"
        elif owners is not None and student is None:
            rows[key]["error"] = (
                "not in a folder named by a roster id: put each student's notebooks in SUBMISSIONS/<id>/"
            )
        else:
            if student is not None:  # graded on its owner's variant, flagged if it carries another
                if zip_path not in declared:
                    declared[zip_path] = Assignment.load(zip_path).variants
                seeds.setdefault(key, owners.seed(student, name))
                rows[key]["flag"] = owners.flag(student, name, declared[zip_path], recorded_tag(nb))
            tasks.append((key, path, zip_path))

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(paths), unit="submission")

    def finished(key: str, row: dict) -> None:
        rows[key].update(clean_row(row))
        rows[key]["total"] = sum(v for k, v in rows[key].items() if re.fullmatch(r"q\d+\w*", k))
        if bar is not None:
            bar.update()
        memory = rows[key].get("memory") or {}
        said = [rows[key]["error"]] if rows[key].get("error") else []
        said += [f"{rows[key]['seconds']:g} s"] if "seconds" in rows[key] else []
        said += [f"{part} {memory[part] / 2**20:.0f} MiB" for part in ("grader", "sandbox") if memory.get(part)]
        log(f"{key}: {rows[key]['total']:g}" + (f" ({', '.join(said)})" if said else ""))

    for key in rows.keys() - {key for key, _, _ in tasks}:
        finished(key, {})
    options = {
        "timeout": timeout,
        "protect": [str(p) for p in protect],
        "cell_seconds": cell_seconds,
        "unisolated": unisolated,
        "unbounded": unbounded,
    }
    if tasks:
        grade_all(tasks, options, scheduler, jobs, finished, seeds)
    if bar is not None:
        bar.close()
    peaks = [row.get("memory", {}) for row in rows.values()]
    grader, sandbox = (max([p.get(part, 0) for p in peaks] or [0]) / 2**20 for part in ("grader", "sandbox"))
    log(f"the grading processes held at most {grader:.0f} MiB, a sandbox at most {sandbox:.0f} MiB")
    write_scores(list(rows.values()), out_csv)  # in the order of the paths
    return list(rows.values())


def write_scores(rows: list[dict], out_csv: Path) -> None:
    """``out_csv``: one row per submission; ``summary.csv`` beside it: one row per question."""
    questions = sorted({k for row in rows for k in row if re.fullmatch(r"q\d+\w*", k)}, key=question_order)
    columns = ["submission", "assignment"]
    for question in questions:
        columns += [question, f"{question} reason"]
    columns += ["total", "possible", "seconds", "isolated", "flag", "error"]
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    # Names of submitted files may hold any character the file system allows: none can fail the file.
    with out_csv.open("w", newline="", encoding="utf-8", errors="backslashreplace") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="", extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    summary = []
    for question in questions:
        graded = [row for row in rows if question in row]
        reasons = [row.get(f"{question} reason", "") for row in graded]
        summary.append(
            {
                "question": question,
                "submissions": len(graded),
                "mean": round(sum(row[question] for row in graded) / len(graded), 3) if graded else "",
                "full": sum(not reason for reason in reasons),
                **{kind: sum(fault(reason) == kind for reason in reasons) for kind in FAULTS},
            }
        )
    with (out_csv.parent / "summary.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=["question", "submissions", "mean", "full", "timed out", "crashed", "out of memory"]
        )
        writer.writeheader()
        writer.writerows(summary)
    unreadable = sum(bool(row.get("error")) for row in rows)
    log(
        f"scores written to {out_csv}, per-question summary to {out_csv.parent / 'summary.csv'}"
        + (f"; {unreadable} submissions could not be graded (see the error column)" if unreadable else "")
    )
    for line in summary:
        log(
            f"  {line['question']}: mean {line['mean']}, {line['timed out']} timed out, {line['crashed']} crashed, "
            f"{line['out of memory']} out of memory"
        )


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit grade SUBMISSIONS``: what ``make grade`` runs."""
    parser = argparse.ArgumentParser(prog=prog, description="grade a folder of submitted notebooks")
    parser.add_argument("submissions", type=Path, help="folder holding the submitted .ipynb files")
    parser.add_argument("--out", type=Path, default=None, help="CSV to write (default: SUBMISSIONS/scores.csv)")
    parser.add_argument("--autograders", type=Path, default=DIST / "autograder")
    parser.add_argument(
        "--scheduler",
        default=None,
        help="grade on the Dask cluster of this scheduler (tcp://host:8786); "
        "default: a local cluster sized to this machine",
    )
    parser.add_argument(
        "--unbounded",
        action="store_true",
        help="grade without bounding each sandbox as a whole (where no cgroup can be made "
        "here): each worker process is still limited, the sandbox as a whole is not",
    )
    parser.add_argument(
        "--unisolated",
        action="store_true",
        help="grade even where the students' code cannot be confined (bubblewrap missing "
        "or unable to run): a submission can then read and change whatever you can",
    )
    parser.add_argument(
        "--roster", type=Path, default=None, help="the roster (CSV with a column id): grade each student's own variant"
    )
    parser.add_argument("--secret", type=Path, default=None, help="the course secret the notebooks were made with")
    args = parser.parse_args(argv)
    out = args.out or args.submissions / "scores.csv"
    owners = None
    if (args.roster is None) != (args.secret is None):
        parser.error("--roster and --secret go together: the notebooks' variants come from both")
    if args.roster is not None:
        try:
            owners = Owners(read_roster(args.roster), read_secret(args.secret))
        except ValueError as error:
            raise SystemExit(f"error: {error}") from None
    grade(
        args.submissions,
        out,
        args.autograders,
        progress=True,
        unisolated=args.unisolated,
        scheduler=args.scheduler,
        unbounded=args.unbounded,
        owners=owners,
    )
    from coursekit.grading import report  # matplotlib and the catalogue: only once the grading is done

    report.write(out, args.autograders)
