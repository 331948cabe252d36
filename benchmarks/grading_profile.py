"""Where the time of grading one submission goes: start-up, imports, lecture cells, answers, checks.

For each notebook (01.01 and 05.03 by default) an honest submission (the whole student notebook
with the master's solutions, as ``grading_throughput.py`` makes it) is graded by
``coursekit.grading.grader`` in this process, confined as ``make grade`` confines it, three times on one
pool of workers: cold (the zygote starts), warm with the marked lecture cells skipped, and warm with
every cell run. The script prints, per run, the time spent in each part (exclusive: a part's time
excludes the parts it calls) and, once, the fixed costs of a batch: starting Dask's local cluster
and starting a grading process (``python -m coursekit.grading.grader --serve``'s imports)::

    python benchmarks/grading_profile.py                 # 01.01 and 05.03
    python benchmarks/grading_profile.py --notebooks 05.03

Nothing here asserts on time; the numbers depend on what else the machine is running.
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import nbformat

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grading_throughput
from coursekit import skipping
from coursekit.build.assign import assign_one
from coursekit.grading import fanout, grader, sandbox, submission, zygote
from coursekit.notebooks import master_notebooks
from coursekit.repository import ROOT

IMPORTS = (
    "import time; start = time.monotonic(); import coursekit.grading.grader as g; "
    "[__import__(m) for m in g._PRELOAD]; import otter.test_files.exception_test; "
    "print(time.monotonic() - start)"
)


class Profile:
    """Exclusive time per part: each wrapped call's time, less that of the wrapped calls it makes."""

    def __init__(self) -> None:
        self.totals, self.stack = defaultdict(float), []

    def wrap(self, owner, attribute: str, part) -> None:
        """Time ``owner.attribute`` as ``part`` (a string, or a function of the call's arguments)."""
        original = getattr(owner, attribute)

        @functools.wraps(original)
        def timed(*args, **kwargs):
            self.stack.append(0.0)
            start = time.monotonic()
            try:
                return original(*args, **kwargs)
            finally:
                elapsed = time.monotonic() - start
                inner = self.stack.pop()
                self.totals[part(*args) if callable(part) else part] += elapsed - inner
                if self.stack:
                    self.stack[-1] += elapsed

        setattr(owner, attribute, timed)


def profile(master: Path, autograders: Path, student_dir: Path, folder: Path) -> None:
    """Grade an honest submission of ``master`` cold, warm and warm with every cell; print the parts."""
    nb = grading_throughput.honest_submission(master, nbformat.read(student_dir / master.name, as_version=4))
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / master.name)
    zip_path = autograders / f"{master.stem}-autograder.zip"
    skipped = grader.Assignment.load(zip_path)
    every = grader.Assignment.load(skipping.every_cell(autograders, folder / "every-cell") / zip_path.name)
    answers = {grader.fingerprint(c.source) for c in grading_throughput.exercises.answer_cells(nb)}
    first = next(c.source for c in nb.cells if c.cell_type == "code")

    def cell(_sandbox, source, _timeout):
        if source in (first, *submission.statements(first)):
            return "cells: imports"
        if grader.fingerprint(source) in answers:
            return "cells: answers"
        marked = grader.fingerprint(source) in skipped.skippable
        return "cells: lecture, marked" if marked else "cells: lecture, unmarked"

    timer = Profile()
    timer.wrap(zygote.Zygote, "start", "zygote start-up (sandbox, imports)")
    timer.wrap(zygote.Zygote, "spawn", "a worker forked")
    timer.wrap(zygote.Zygote, "reset", "a worker ended, sandbox checked")
    timer.wrap(sandbox.Sandbox, "run", cell)
    timer.wrap(grader, "_grade_question", "checks")
    timer.wrap(grader, "grade_submission", "other")
    protect = (folder, autograders, ROOT, ROOT.parent)
    with zygote.WorkerPool("required", protect) as pool:
        for run, assignment in (("cold", skipped), ("warm", skipped), ("warm, every cell", every)):
            timer.totals.clear()
            start = time.monotonic()
            result = grader.grade_submission(assignment, folder / master.name, pool=pool)
            seconds = time.monotonic() - start
            score = sum(q["score"] for q in result["questions"].values())
            possible = sum(q["possible"] for q in result["questions"].values())
            print(f"{master.stem[:5]} {run}: {seconds:.1f} s ({score:g}/{possible:g})")
            for part, spent in sorted(timer.totals.items(), key=lambda item: -item[1]):
                print(f"    {part:40} {spent:6.2f} s")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebooks", nargs="+", default=["01.01", "05.03"], help="masters by number")
    args = parser.parse_args(argv)
    masters = {m.stem[:5]: m for m in master_notebooks()}
    start = time.monotonic()
    with fanout.cluster(jobs=2):
        print(f"Dask's local cluster started (and stopped) in {time.monotonic() - start:.1f} s")
    imports = subprocess.run([sys.executable, "-c", IMPORTS], capture_output=True, text=True, check=True)
    print(f"a grading process's imports (checker, NumPy, SciPy, otter): {float(imports.stdout):.1f} s")
    with tempfile.TemporaryDirectory(prefix="grading-profile-") as tmp:
        tmp = Path(tmp)
        for number in args.notebooks:
            assign_one(masters[number], tmp / "dist", run_tests=False)
        for number in args.notebooks:
            profile(masters[number], tmp / "dist" / "autograder", tmp / "dist" / "student", tmp / number)


if __name__ == "__main__":
    main()
