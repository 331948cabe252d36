"""How long ``make report`` takes on a class of 200: the instructor's report and gradebook.csv.

A class of 200 students of 1.1 (``tests/simulated_class.py``: a Rasch model, seeded, each answer the
solution, a blank or a catalogued wrong answer, the grader's words made up from the catalogue, so
that nothing is graded) is written to a ``scores.csv`` in a temporary folder, beside 1.1's autograder
zip (``otter assign`` on 1.1, not timed). Then ``python -m coursekit report`` runs on it, as ``make
report`` runs it, a new process each time (its imports, reading the zip, the statistics, matplotlib's
histogram, the page), and the script prints the wall time of each run and the best::

    python benchmarks/report_time.py              # 200 students, 3 runs
    python benchmarks/report_time.py --students 1000 --runs 1

Nothing here asserts on time; the numbers depend on what else the machine is running.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "tests"))  # after the checkout: tests/coursekit would hide coursekit
import nbformat  # noqa: E402
import simulated_class  # noqa: E402

from coursekit import exercises  # noqa: E402
from coursekit.build.assign import assign_one  # noqa: E402
from coursekit.grading import report  # noqa: E402
from coursekit.grading.gradebook import write_scores  # noqa: E402
from coursekit.repository import MASTERS  # noqa: E402

STEM = "01.01-Bayes-Rule-and-Maximum-Likelihood"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", type=int, default=simulated_class.STUDENTS)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    master = MASTERS / f"{STEM}.ipynb"
    with tempfile.TemporaryDirectory(prefix="report-time-") as tmp:
        folder, dist = Path(tmp) / "submissions", Path(tmp) / "dist"
        assign_one(master, dist, run_tests=False)
        possible = {q.name: q.points for q in exercises.questions(nbformat.read(master, as_version=4))}
        catalogue = report.catalogue(STEM)
        pool = {q: simulated_class.wrong_indices(entries) for q, entries in catalogue.items()}
        named = {q: {i for i in pool[q] if catalogue[q][i].get("feedback")} for q in catalogue}
        truth = simulated_class.simulate(pool, named, students=args.students)
        write_scores(
            simulated_class.compose(truth, simulated_class.synthetic_outcomes(catalogue, possible), STEM),
            folder / "scores.csv",
        )
        command = [sys.executable, "-m", "coursekit", "report", str(folder), "--autograders", str(dist / "autograder")]
        times = []
        for run in range(args.runs):
            start = time.perf_counter()
            subprocess.run(
                command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONPATH": str(ROOT)}
            )
            times.append(time.perf_counter() - start)
            print(f"run {run + 1}: {times[-1]:.2f} s")
        size = (folder / "report.html").stat().st_size
        load = os.getloadavg()[0]
        print(
            f"make report on {args.students} submissions: best {min(times):.2f} s of {args.runs} runs "
            f"(page {size / 1e3:.0f} kB; load average {load:.1f} on {os.cpu_count()} cores)"
        )


if __name__ == "__main__":
    main()
