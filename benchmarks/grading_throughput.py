"""Grading throughput: honest submissions per minute through ``make grade`` (``coursekit.grading.gradebook.grade``).

Each submission is the whole student notebook with every answer cell replaced by the master's
solution, as a student who did everything hands it in (lecture cells included). ``--count`` copies
of it, each in a student's folder of its own, are graded in one batch ``--jobs`` at a time, and the
script prints the wall time and submissions per minute, per notebook::

    python benchmarks/grading_throughput.py                      # 01.01 and 05.03, 20 copies each
    python benchmarks/grading_throughput.py --notebooks 01.01 --count 20
    python benchmarks/grading_throughput.py --every-cell         # and with no lecture cell skipped
    python benchmarks/grading_throughput.py --before 812fd7b     # and that commit's grader, in the same run

With ``--every-cell`` each batch is also graded by this checkout's grader with skipping turned off
(autograder zips that list no cell as skippable, ``coursekit/skipping.py``): every cell runs. With
``--before REVISION`` it is also graded by the course as it was at that commit (its tree, exported
with ``git archive``, running its own copy of this script with this environment: its notebooks,
its grader, its pool). Each comparison runs just before this checkout's batch, and a table compares
them: wall time, time per submission, submissions per minute and the time a class of 200 would take.

The autograder zips are generated into a temporary folder with ``otter assign`` (without otter's
own test run), or taken from ``--autograders`` (e.g. ``dist/autograder`` after ``make
assignments``). Every submission must score full marks, or the script fails: a fast grader that
loses points is not faster. Nothing here asserts on time; the numbers are for reading, and they
depend on what else the machine is running.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from coursekit import exercises, skipping
from coursekit.build.assign import assign_one
from coursekit.grading.gradebook import grade
from coursekit.notebooks import master_notebooks
from coursekit.repository import ROOT

DEFAULT_COUNTS = {"01.01": 20, "05.03": 20}
CLASS = 200


def honest_submission(master: Path, student: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The whole student notebook with the master's solution in every answer cell."""
    solutions = [q.solution for q in exercises.questions(nbformat.read(master, as_version=4))]
    if len(exercises.answer_cells(student)) != len(solutions):
        raise SystemExit(
            f"{master.name}: {len(solutions)} questions but {len(exercises.answer_cells(student))} answer cells"
        )
    return exercises.whole_copy(student, dict(enumerate(solutions)))


def throughput(master: Path, count: int, autograders: Path, student_dir: Path, folder: Path, jobs: int) -> float:
    """Grade ``count`` honest copies of ``master`` in one batch; the seconds it took.

    Parameters
    ----------
    master : Path
        The master notebook.
    count : int
        How many copies to grade.
    autograders, student_dir : Path
        Where the assignment's autograder zip and student notebook are.
    folder : Path
        An empty folder for the submissions and the scores.
    jobs : int
        Submissions graded at a time.

    Returns
    -------
    float
        The batch's wall time, in seconds.
    """
    student = nbformat.read(student_dir / master.name, as_version=4)
    nb = honest_submission(master, student)
    for k in range(count):
        (folder / f"student-{k:03d}").mkdir(parents=True)
        nbformat.write(nb, folder / f"student-{k:03d}" / master.name)
    start = time.monotonic()
    rows = grade(folder, folder / "scores.csv", autograders, jobs=jobs)
    seconds = time.monotonic() - start
    short = [r for r in rows if r.get("error") or float(r["total"]) != float(r.get("possible", -1))]
    if short:
        raise SystemExit(f"{master.stem[:5]}: {len(short)} honest submissions did not score full marks: {short[0]}")
    print(
        f"{master.stem[:5]}: {count} submissions, {jobs} at a time, in {seconds:.1f} s: "
        f"{60 * count / seconds:.1f} submissions per minute ({seconds * jobs / count:.1f} s each)",
        flush=True,
    )
    return seconds


def before(revision: str, number: str, count: int, jobs: int, tmp: Path) -> float:
    """The seconds the course at ``revision`` takes for the same batch (its own copy of this script)."""
    tree = tmp / f"before-{revision}"
    if not tree.exists():
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", revision], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    # Its lecturekit first on the path (the script's folder is benchmarks/, not the tree's root).
    done = subprocess.run(
        [
            sys.executable,
            str(tree / "benchmarks" / "grading_throughput.py"),
            "--notebooks",
            number,
            "--count",
            str(count),
            "--jobs",
            str(jobs),
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )
    found = re.search(rf"^{re.escape(number)}: {count} submissions, .* in ([\d.]+) s", done.stdout, re.M)
    if done.returncode or not found:
        raise SystemExit(f"the benchmark at {revision} failed: {(done.stderr or done.stdout).strip()[-500:]}")
    print(found.group(0) + f" (at {revision})", flush=True)
    return float(found.group(1))


def table(results: list[tuple[str, str, int, float]], jobs: int) -> str:
    """A Markdown table: assignment, submissions, wall time, per submission, a class of :data:`CLASS`."""
    lines = [
        f"| assignment | grader | submissions | wall time | per submission ({jobs} at a time) | "
        f"submissions per minute | a class of {CLASS} |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for number, which, count, seconds in results:
        lines.append(
            f"| {number} | {which} | {count} | {seconds:.1f} s | {seconds * jobs / count:.1f} s | "
            f"{60 * count / seconds:.1f} | {CLASS * seconds / count / 60:.1f} min |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--notebooks", nargs="+", default=list(DEFAULT_COUNTS), help="masters by number, e.g. 01.01 05.03"
    )
    parser.add_argument("--count", type=int, default=None, help="copies per notebook (default 20)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument(
        "--autograders",
        type=Path,
        default=None,
        help="folder of autograder zips (default: generate them); student notebooks beside it",
    )
    parser.add_argument(
        "--before",
        default=None,
        metavar="REVISION",
        help="also grade each batch with the course at this commit, and compare",
    )
    parser.add_argument(
        "--every-cell", action="store_true", help="also grade each batch with no lecture cell skipped, and compare"
    )
    args = parser.parse_args(argv)
    masters = {m.stem[:5]: m for m in master_notebooks()}
    results = []
    with tempfile.TemporaryDirectory(prefix="grading-throughput-") as tmp:
        tmp = Path(tmp)
        if args.autograders is None:
            for number in args.notebooks:
                assign_one(masters[number], tmp / "dist", run_tests=False)
            autograders, student_dir = tmp / "dist" / "autograder", tmp / "dist" / "student"
        else:
            autograders, student_dir = args.autograders, args.autograders.parent / "student"
        every = skipping.every_cell(autograders, tmp / "every-cell") if args.every_cell else None
        for number in args.notebooks:
            count = args.count or DEFAULT_COUNTS.get(number, 20)
            if args.before:
                results.append((number, f"at {args.before}", count, before(args.before, number, count, args.jobs, tmp)))
            if every is not None:
                results.append(
                    (
                        number,
                        "every cell run",
                        count,
                        throughput(
                            masters[number],
                            count,
                            every,
                            student_dir,
                            tmp / "every-cell-submissions" / number,
                            args.jobs,
                        ),
                    )
                )
            seconds = throughput(
                masters[number], count, autograders, student_dir, tmp / "submissions" / number, args.jobs
            )
            results.append((number, "marked cells skipped", count, seconds))
    print(table(results, args.jobs))
    for number, which, _, seconds in results:
        if which != "marked cells skipped":
            after = next(t for n, w, _, t in results if n == number and w == "marked cells skipped")
            print(f"{number}: {seconds / after:.1f} times as many submissions per minute as {which}")


if __name__ == "__main__":
    main()
