"""How much a hostile sandbox slows its classmates' grading: honest submissions alone, then beside attacks.

``make grade`` bounds each sandbox as a whole (``coursekit.grading.limits``): at most one CPU's worth
of time, 256 tasks, 3 GiB. This script grades ``--count`` honest submissions of 1.1 (imports and
answers only) ``--jobs`` at a time, first alone, then in a batch where as many submissions as there
are other jobs hold their sandbox's CPU: 100 processes spinning in sessions of their own for the
whole of a cell's time limit. It prints the honest submissions' mean time alone and beside the
spinners, with the sandboxes bounded as a whole and, in the same run, without (``--unbounded``, as
grading where no cgroup can be made), and each ratio::

    python benchmarks/grading_neighbours.py
    python benchmarks/grading_neighbours.py --count 12 --seconds 20 --autograders dist/autograder

Nothing here asserts on time; the numbers depend on what else the machine runs.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

import nbformat

from coursekit import exercises
from coursekit.build.assign import assign_one
from coursekit.grading.gradebook import grade
from coursekit.repository import MASTERS

BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"
SPIN = (
    "import os, time\n"
    "for _ in range(100):\n"
    "    if os.fork() == 0:\n"
    "        os.setsid()\n"
    "        while True:\n"
    "            pass\n"
    "time.sleep({seconds})\n"
    "q6 = {{'z'}}\n"
)


def batch(folder: Path, student, solutions: dict[int, str], count: int, spinners: int, seconds: float) -> Path:
    """``count`` honest submissions and ``spinners`` hostile ones, named so that they interleave."""
    folder.mkdir(parents=True)
    for index in range(count):
        name = f"{index:03d}-honest"
        (folder / name).mkdir()
        nbformat.write(exercises.grading_copy(student, solutions), folder / name / f"{BAYES}.ipynb")
    for index in range(spinners):
        name = f"{index:03d}-hostile"  # beside the first honest ones, on another grading thread
        (folder / name).mkdir()
        nbformat.write(
            exercises.grading_copy(student, {5: SPIN.format(seconds=seconds)}), folder / name / f"{BAYES}.ipynb"
        )
    return folder


def honest_seconds(rows: list[dict]) -> float:
    times = [row["seconds"] for row in rows if row["submission"].split("/")[0].endswith("honest")]
    if any(row.get("total") != 19 for row in rows if row["submission"].split("/")[0].endswith("honest")):
        raise SystemExit("an honest submission lost points: the comparison means nothing")
    return statistics.mean(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10, help="honest submissions in each batch")
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at a time")
    parser.add_argument("--seconds", type=float, default=20, help="the cell time limit; the spinners hold it")
    parser.add_argument("--autograders", type=Path, default=None, help="a folder of autograder zips")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="grading-neighbours-") as scratch:
        scratch = Path(scratch)
        autograders = args.autograders
        if autograders is None:
            autograders = scratch / "autograder"
            assign_one(MASTERS / f"{BAYES}.ipynb", scratch / "dist", run_tests=False)
            autograders = scratch / "dist" / "autograder"
        student = nbformat.read(autograders.parent / "student" / f"{BAYES}.ipynb", as_version=4)
        solutions = dict(
            enumerate(q.solution for q in exercises.questions(nbformat.read(MASTERS / f"{BAYES}.ipynb", as_version=4)))
        )
        hold = args.seconds - 2  # the spinners' cell ends before its limit: they spin for the checks too
        results = {}
        for bounded in (True, False):
            label = "bounded" if bounded else "unbounded"
            for spinners in (0, args.jobs - 1):
                folder = batch(scratch / f"{label}-{spinners}", student, solutions, args.count, spinners, hold)
                rows = grade(
                    folder,
                    folder / "scores.csv",
                    autograders,
                    jobs=args.jobs,
                    cell_seconds=args.seconds,
                    unbounded=not bounded,
                )
                results[label, spinners] = honest_seconds(rows)
    print(
        f"{args.count} honest submissions of 1.1, {args.jobs} at a time; beside: {args.jobs - 1} sandboxes of "
        f"100 spinning processes for {hold:g} s"
    )
    for label in ("bounded", "unbounded"):
        alone, beside = results[label, 0], results[label, args.jobs - 1]
        print(f"{label:>9}: {alone:6.1f} s alone, {beside:6.1f} s beside the spinners, ratio {beside / alone:.2f}")


if __name__ == "__main__":
    sys.exit(main())
