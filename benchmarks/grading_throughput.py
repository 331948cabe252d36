"""Grading throughput: honest submissions per minute through ``make grade`` (``course.grade``).

Each submission is the whole student notebook with every answer cell replaced by the master's
solution, as a student who did everything hands it in (lecture cells included). ``--count`` copies
of it, each in a student's folder of its own, are graded in one batch ``--jobs`` at a time, and the
script prints the wall time and submissions per minute, per notebook::

    python benchmarks/grading_throughput.py                      # 01.01 and 05.03, 20 and 4 copies
    python benchmarks/grading_throughput.py --notebooks 01.01 --count 20

The autograder zips are generated into a temporary folder with ``otter assign`` (without otter's
own test run), or taken from ``--autograders`` (e.g. ``dist/autograder`` after ``make
assignments``). Every submission must score full marks, or the script fails: a fast grader that
loses points is not faster. Nothing here asserts on time; the numbers are for reading, and they
depend on what else the machine is running.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import course  # noqa: E402
import exercises  # noqa: E402

DEFAULT_COUNTS = {"01.01": 20, "05.03": 4}


def honest_submission(master: Path, student: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The whole student notebook with the master's solution in every answer cell."""
    solutions = [q.solution for q in exercises.questions(nbformat.read(master, as_version=4))]
    if len(exercises.answer_cells(student)) != len(solutions):
        raise SystemExit(f"{master.name}: {len(solutions)} questions but {len(exercises.answer_cells(student))} "
                         "answer cells")
    return exercises.whole_copy(student, dict(enumerate(solutions)))


def throughput(master: Path, count: int, autograders: Path, student_dir: Path, folder: Path,
               jobs: int) -> float:
    """Grade ``count`` honest copies of ``master`` in one batch; submissions per minute.

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
        Submissions graded per minute.
    """
    student = nbformat.read(student_dir / master.name, as_version=4)
    nb = honest_submission(master, student)
    for k in range(count):
        (folder / f"student-{k:03d}").mkdir(parents=True)
        nbformat.write(nb, folder / f"student-{k:03d}" / master.name)
    start = time.monotonic()
    rows = course.grade(folder, folder / "scores.csv", autograders, jobs=jobs)
    seconds = time.monotonic() - start
    short = [r for r in rows if r.get("error") or float(r["total"]) != float(r.get("possible", -1))]
    if short:
        raise SystemExit(f"{master.stem[:5]}: {len(short)} honest submissions did not score full marks: {short[0]}")
    rate = 60 * count / seconds
    print(f"{master.stem[:5]}: {count} submissions, {jobs} at a time, in {seconds:.1f} s: "
          f"{rate:.1f} submissions per minute ({seconds * jobs / count:.1f} s each)", flush=True)
    return rate


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="+", default=list(DEFAULT_COUNTS),
                        help="masters by number, e.g. 01.01 05.03")
    parser.add_argument("--count", type=int, default=None, help="copies per notebook (default 20 for 01.01, 4 for 05.03)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--autograders", type=Path, default=None,
                        help="folder of autograder zips (default: generate them); student notebooks beside it")
    args = parser.parse_args(argv)
    masters = {m.stem[:5]: m for m in course.master_notebooks()}
    with tempfile.TemporaryDirectory(prefix="grading-throughput-") as tmp:
        tmp = Path(tmp)
        if args.autograders is None:
            for number in args.notebooks:
                course.assign_one(masters[number], tmp / "dist", run_tests=False)
            autograders, student_dir = tmp / "dist" / "autograder", tmp / "dist" / "student"
        else:
            autograders, student_dir = args.autograders, args.autograders.parent / "student"
        for number in args.notebooks:
            count = args.count or DEFAULT_COUNTS.get(number, 4)
            throughput(masters[number], count, autograders, student_dir, tmp / "submissions" / number, args.jobs)


if __name__ == "__main__":
    main()
