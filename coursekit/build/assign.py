"""Assigning: student notebooks and autograder zips from the masters (``python -m coursekit assign``).

``otter assign`` on every master: student notebooks (no solutions, no hidden tests) in
``dist/student/`` and one autograder zip per assignment in ``dist/autograder/``, made
self-contained for a grading image (:func:`complete_autograder`): the zip carries ``lecturekit``,
the grading machinery of ``coursekit`` and ``data/``, and its ``run_autograder`` grades with
:mod:`coursekit.grading.grader`.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
import zipfile
from pathlib import Path

import nbformat
import yaml

from coursekit.build.personal import TEMPLATE, declarations, personalise, template
from coursekit.grading.grader import SKIPPABLE, VARIANTS, Assignment, fingerprint
from coursekit.grading.sandbox import backstop
from coursekit.grading.variant import PUBLIC, Variants
from coursekit.notebooks import SKIP_TAG, clean_notebook, is_assignment, master_notebooks
from coursekit.repository import DIST, ROOT, log, run
from coursekit.variants import read_roster, read_secret, variant_seed

# Where a grading image unpacks the autograder zip: Gradescope's and otter's default autograder_dir
# is /autograder, and the zip's contents go to its source/ folder.
GRADER_SOURCE = "/autograder/source"
# What of coursekit the grader needs beside lecturekit: the grading subpackage (the grader, its
# worker, the CellTimeLimit plugin), the symbolic checks the tests call (coursekit.check's as_graded
# among them), and the paths they import.
GRADER_PARTS = [
    "coursekit/__init__.py",
    "coursekit/repository.py",
    "coursekit/symbolic.py",
    "coursekit/evaluator.py",
    "coursekit/check.py",
    "coursekit/choices.py",
    "coursekit/variants.py",
    "coursekit/grading",
]


def assign(dist: Path = DIST, *, run_tests: bool = True) -> Path:
    """Generate student notebooks and autograder zips from every master notebook.

    Returns the folder of student notebooks (``dist/student``).
    """
    student_dir, autograder_dir, work = dist / "student", dist / "autograder", dist / "assign"
    for folder in (student_dir, autograder_dir, work):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    for master in master_notebooks():
        assign_one(master, dist, run_tests=run_tests)
    shutil.copy2(ROOT / "notation.md", dist / "notation.md")  # where the notebooks' ../notation.md points
    log(f"student notebooks in {student_dir}, autograders in {autograder_dir}")
    return student_dir


def assign_one(master: Path, dist: Path = DIST, *, run_tests: bool = True) -> None:
    """``otter assign`` on one master: its student notebook and autograder zip into ``dist``."""
    student_dir, autograder_dir, work = dist / "student", dist / "autograder", dist / "assign"
    for folder in (student_dir, autograder_dir, work):
        folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(master, as_version=4)
    if not is_assignment(nb):
        nbformat.write(clean_notebook(nb, clear_outputs=True), student_dir / master.name)
        return
    out = work / master.stem
    shutil.rmtree(out, ignore_errors=True)
    variants = declarations(nb)
    variants.check()  # a declaration that fails on some seed fails here, not when a student is graded
    command = [sys.executable, "-m", "otter", "assign", master, out]
    # otter's own run of the tests cannot give a question's tests its VARIANT (the grader binds it):
    # a notebook with varying numbers has its solutions graded by `exercises check` alone.
    if not run_tests or variants.sources:
        command.insert(4, "--no-run-tests")
    run(command)
    student = nbformat.read(out / "student" / master.name, as_version=4)
    student = template(nb, student, variants)
    use_honest_check(student)
    skippable = skippable_cells(nb, student)
    for extra in (out / "student").iterdir():  # support files the assignment ships, if any
        if extra.name != master.name:
            copy = shutil.copytree if extra.is_dir() else shutil.copy2
            copy(extra, student_dir / extra.name)
    (zip_path,) = (out / "autograder").glob("*-autograder_*.zip")
    target = autograder_dir / f"{master.stem}-autograder.zip"
    complete_autograder(zip_path, target, question_rules(nb), skippable, variants)
    state_time_limits(nb, student, Assignment.load(target).cell_seconds)  # as the grader reads them
    student = clean_notebook(student, clear_outputs=True)
    nbformat.write(student, out / TEMPLATE)  # what each student's own notebook is made from
    nbformat.write(personalise(student, variants, PUBLIC), student_dir / master.name)


TIME_LIMITS_ID = "grading-time-limits"


def time_limits_statement(seconds: float) -> str:
    """What a student notebook says of the grader's time limits, for a cell limit of ``seconds``."""
    return (
        f"**Time limits when graded.** Each answer cell, and each question's check of your answers, may use "
        f"{seconds:g} seconds of CPU time: the time your code spends computing, however busy the grading "
        f"machine is. Code that waits without computing (a `sleep`, a wait on input) is stopped after "
        f"{backstop(seconds):g} seconds of wall-clock time. A cell or check that goes over scores 0 for its "
        f"question, with the reason; the other questions are graded as usual."
    )


def state_time_limits(master: nbformat.NotebookNode, student: nbformat.NotebookNode, seconds: float) -> None:
    """Put the statement of the time limits just before the first question of ``student`` (in place).

    The first question's prompt is the master's first markdown cell after a ``# BEGIN QUESTION``
    cell, which ``otter assign`` copies as it is.
    """
    cells = master.cells
    start = next(
        (i for i, c in enumerate(cells) if c.cell_type == "raw" and c.source.lstrip().startswith("# BEGIN QUESTION")),
        len(cells),
    )
    prompt = next((c.source for c in cells[start + 1 :] if c.cell_type == "markdown"), None)
    where = next((i for i, c in enumerate(student.cells) if c.cell_type == "markdown" and c.source == prompt), None)
    if where is None:
        raise SystemExit(
            "the student notebook has no first question's prompt to put the time limits before: "
            "a master's first # BEGIN QUESTION cell must be followed by its prompt (a markdown cell)"
        )
    cell = nbformat.v4.new_markdown_cell(time_limits_statement(seconds))
    cell.id = TIME_LIMITS_ID  # the same in every build
    student.cells.insert(where, cell)


# The first line of otter's initialisation cell, which the book hides (coursekit.build.book) and the
# grader skips (coursekit.grading.submission): the rewritten cell keeps it.
OTTER_INIT = "# Initialize Otter"
_OTTER_NOTEBOOK = re.compile(r"^grader = otter\.Notebook\((?P<args>.*)\)$", re.M)


def use_honest_check(student: nbformat.NotebookNode) -> None:
    """Make the student notebook's ``grader`` a :class:`coursekit.check.Notebook` (``student``, changed in place).

    ``otter assign`` writes ``import otter`` and ``grader = otter.Notebook("NAME.ipynb")`` under a
    first line ``# Initialize Otter``; the cell keeps that line and the notebook's name, and makes the
    course's ``Notebook``, whose check never says "passed" (the hidden tests decide the grade).
    """
    cells = [c for c in student.cells if c.cell_type == "code" and c.source.lstrip().startswith(OTTER_INIT)]
    match = _OTTER_NOTEBOOK.search(cells[0].source) if len(cells) == 1 else None
    if match is None:
        raise SystemExit(
            f"expected one otter initialisation cell ({OTTER_INIT!r}, then `grader = "
            f"otter.Notebook(...)`) in the student notebook, found {len(cells)}: has otter assign "
            "changed what it writes?"
        )
    cells[0].source = f"{OTTER_INIT}\nfrom coursekit.check import Notebook\ngrader = Notebook({match['args']})"


def skippable_cells(master: nbformat.NotebookNode, student: nbformat.NotebookNode) -> list[str]:
    """The fingerprints of the master's cells tagged :data:`SKIP_TAG`, as the student notebook has them.

    The tag is taken off the student notebook (``student``, changed in place): the grader trusts the
    autograder zip's list, never a submission's tags.
    """
    tagged = {c.source for c in master.cells if c.cell_type == "code" and SKIP_TAG in c.metadata.get("tags", [])}
    found = set()
    for cell in student.cells:
        tags = cell.metadata.get("tags", [])
        if SKIP_TAG in tags:
            tags.remove(SKIP_TAG)
            if not tags:
                del cell.metadata["tags"]
        if cell.cell_type == "code" and cell.source in tagged:
            found.add(cell.source)
    if found != tagged:
        raise SystemExit(
            f"{len(tagged - found)} cells tagged {SKIP_TAG} are not in the student notebook as "
            f"the master has them: {sorted(tagged - found)[0][:80]!r}"
        )
    return sorted(fingerprint(source) for source in found)


def question_rules(nb: nbformat.NotebookNode) -> dict[str, dict]:
    """What the grader enforces per question, from its ``# BEGIN QUESTION`` cell: ``forbids``, the
    modules its answer may not import (the grader runs it where they cannot be)."""
    rules = {}
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(cell.source.split("\n", 1)[1]) or {}
            if config.get("forbids"):
                rules[config["name"]] = {"forbids": sorted(config["forbids"])}
    return rules


def complete_autograder(
    generated: Path, target: Path, rules: dict | None = None, skippable=(), variants: Variants | None = None
) -> None:
    """Copy otter's autograder zip to ``target``, made self-contained for a grading image.

    ``otter assign`` zips the tests and an environment with otter alone, and cannot add files from
    outside the notebook's folder. A grading image built from the zip (Gradescope's, or ``otter
    grade``'s Docker image) also needs the course's pinned packages, ``lecturekit`` (the notebooks
    import it), the grading part of ``coursekit`` (:data:`GRADER_PARTS`: the grader, the symbolic
    checks the tests call, every assignment's CellTimeLimit plugin) and the corpora of ``data/``.
    Otter copies whatever is under ``files/`` in the zip next to each submission, so
    ``lecturekit/`` and ``data/`` land beside the notebook as in the repository (a grading worker
    never sees ``coursekit/``: :data:`coursekit.grading.isolation.GRADER_PACKAGES`);
    ``environment.yml`` gets the pins of requirements.txt, the course's Python, and both packages
    from ``GRADER_SOURCE/files`` (for the plugin, which loads before the notebook runs). The image's
    ``setup.sh`` also installs bubblewrap, which confines the grading worker where the image's
    container allows it (``run_autograder`` grades with ``--isolation auto``). ``questions.json``
    holds ``rules``, what the grader enforces per question (:func:`question_rules`), and
    ``skippable.json`` the fingerprints of the lecture cells the grader may skip (:func:`skippable_cells`),
    and ``variants.json`` the questions' variant declarations (:func:`coursekit.build.personal.declarations`).
    """
    with zipfile.ZipFile(generated) as original:
        entries = {name: original.read(name) for name in original.namelist() if not name.startswith("files/")}
    setup = entries["setup.sh"].decode()
    if "\napt-get update\n" not in setup:
        raise SystemExit("otter's setup.sh no longer runs `apt-get update`: put bubblewrap's installation elsewhere")
    entries["setup.sh"] = setup.replace("\napt-get update\n", f"\napt-get update\n{SETUP_GRADING}\n", 1).encode()
    entries["environment.yml"] = grading_environment().encode()
    entries["run_autograder"] = RUN_AUTOGRADER.encode()
    entries["questions.json"] = json.dumps(rules or {}, indent=1, sort_keys=True).encode()
    entries[SKIPPABLE] = json.dumps({"cells": sorted(skippable)}, indent=1).encode()
    entries[VARIANTS] = (variants or Variants()).to_json().encode()
    package_files = [ROOT / "pyproject.toml", ROOT / "README.md"]
    package_files += sorted(p for p in (ROOT / "lecturekit").rglob("*.py"))
    package_files += grader_files()
    package_files += sorted(p for p in (ROOT / "data").iterdir() if p.is_file())
    for path in package_files:
        entries[f"files/{path.relative_to(ROOT).as_posix()}"] = path.read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible bytes
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name == "run_autograder" else 0o644) << 16
            archive.writestr(info, data)


# The grading image's entry point (Gradescope runs /autograder/run_autograder): coursekit's grader,
# which keeps the student's code out of the checks, instead of otter's in-process run. otter's
# setup.sh still builds the image (conda environment "otter-env" from environment.yml).
RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grade /autograder/submission/*.ipynb with coursekit.grading.grader (see the course's instructor guide).
set -uo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
if [ -x /root/miniforge3/bin/mamba ]; then
    export PATH=/root/miniforge3/bin:$PATH
    eval "$(mamba shell hook --shell bash)"
    mamba activate otter-env
fi
submission=$(ls "$root"/submission/*.ipynb | head -n 1)
mkdir -p "$root/results"
# Confined by bubblewrap where the container allows it; where it does not, the worker runs as an
# unprivileged user of its own, which must not read the tests, the submission or the results (root's
# alone), but must reach the environment (setup.sh makes /root searchable).
chmod 700 "$root/source" "$root/submission" "$root/results"
# Each student's own variant where the zip carries the course secret (make assignments ROSTER=... SECRET=...
# GRADESCOPE=1): the owner is the submission's first user's SID, which must be the roster's id.
"${PYTHON:-python}" -m coursekit.grading.grader "$root/source" "$submission" --isolation auto \\
    --protect "$root/submission" --protect "$root/results" --gradescope "$root/results/results.json" \\
    --student-metadata "$root/submission_metadata.json" --variant-secret "$root/source/variant-secret" > /dev/null
"""
# Added to otter's setup.sh: bubblewrap, which confines the grading worker (coursekit.grading.isolation),
# libseccomp, which builds its system-call filter (coursekit.grading.syscalls), and, for a container
# where bubblewrap cannot run, /root searchable but not readable, so that a worker running as a user of
# its own reaches the environment in /root/miniforge3 (coursekit.grading.unprivileged).
SETUP_GRADING = "apt-get install -y bubblewrap libseccomp2\nchmod 711 /root"


def grader_files() -> list[Path]:
    """What of ``coursekit`` an autograder zip carries: :data:`GRADER_PARTS`, their ``.py`` files."""
    files = []
    for part in GRADER_PARTS:
        path = ROOT / part
        files += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return files


def course_python() -> str:
    """The Python version environment.yml asks for (e.g. "3.11")."""
    dependencies = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    return next(d.split("=", 1)[1] for d in dependencies if isinstance(d, str) and d.startswith("python="))


def pinned_requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def grading_environment() -> str:
    """The conda environment of the grading image: the course's Python and pins, lecturekit and coursekit."""
    otter = next(r for r in pinned_requirements() if r.startswith("otter-grader=="))
    pins = [otter.replace("otter-grader", "otter-grader[grading,plugins]")]
    pins += [r for r in pinned_requirements() if not r.startswith("otter-grader==")]
    pins.append(f"{GRADER_SOURCE}/files")  # lecturekit and coursekit, from the zip (pyproject.toml there)
    lines = [
        "name: otter-env",
        "channels:",
        "  - conda-forge",
        "dependencies:",
        f"  - python={course_python()}",
        "  - pip",
        "  - jupyter_server",
        "  - pip:",
    ]
    lines += [f"      - {pin}" for pin in pins]
    return "\n".join(lines) + "\n"


def personal_notebooks(
    roster: Path, secret_path: Path, dist: Path = DIST, *, secret_in_zips: bool = False, masters=None
) -> Path:
    """Each student's own notebooks, ``dist/student/<id>/NAME.ipynb`` beside a copy of ``notation.md``, from the
    templates of :func:`assign`.

    Each is the variant of the student's seed (:func:`coursekit.variants.variant_seed`); a notebook
    without varying questions is the same for everyone. With ``secret_in_zips`` the autograder zips
    also carry the secret (``variant-secret``), so that a grading image (Gradescope's) grades each
    submission on its owner's variant; the zips are the staff's alone, never a student's. ``masters``:
    the notebooks to make (default: every master).
    """
    students, secret = read_roster(roster), read_secret(secret_path)
    student_dir = dist / "student"
    start = time.monotonic()
    for master in masters or master_notebooks():
        path = dist / "assign" / master.stem / TEMPLATE
        if not path.exists():  # not an assignment: the notebook as every student gets it
            same = beside_notation(nbformat.read(student_dir / master.name, as_version=4))
            for student in students:
                (student_dir / student.id).mkdir(parents=True, exist_ok=True)
                nbformat.write(same, student_dir / student.id / master.name)
            continue
        nb = nbformat.read(path, as_version=4)
        zip_path = dist / "autograder" / f"{master.stem}-autograder.zip"
        variants = Assignment.load(zip_path).variants
        for student in students:
            (student_dir / student.id).mkdir(parents=True, exist_ok=True)
            own = personalise(nb, variants, variant_seed(secret, student.id, master.stem))
            nbformat.write(beside_notation(own), student_dir / student.id / master.name)
        if secret_in_zips:
            with zipfile.ZipFile(zip_path, "a") as archive:
                info = zipfile.ZipInfo("variant-secret", date_time=(2020, 1, 1, 0, 0, 0))
                info.external_attr = 0o600 << 16
                archive.writestr(info, secret)
    for student in students:
        shutil.copy2(dist / "notation.md", student_dir / student.id / "notation.md")
    log(f"{len(students)} students' own notebooks in {student_dir}/<id>/ in {time.monotonic() - start:.0f} s")
    return student_dir


def beside_notation(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """``nb`` (changed in place) linking to a ``notation.md`` in its own folder, as a student's folder holds it
    (the public notebooks link to ``../notation.md``, beside ``dist/student/`` and the repository's ``notebooks/``)."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = cell.source.replace("](../notation.md", "](notation.md")
    return nb


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit assign [--roster ROSTER --secret FILE [--secret-in-zips]]``."""
    parser = argparse.ArgumentParser(prog=prog, description="student notebooks and autograder zips into dist/")
    parser.add_argument("--roster", type=Path, help="a CSV with a column id: each student's own notebooks too")
    parser.add_argument("--secret", type=Path, help="the course secret (python -m coursekit variants secret FILE)")
    parser.add_argument(
        "--secret-in-zips",
        action="store_true",
        help="put the secret in the autograder zips, for a grading image that grades each student's own variant",
    )
    args = parser.parse_args(argv)
    if (args.roster is None) != (args.secret is None):
        parser.error("--roster and --secret go together: each student's variant comes from both")
    if args.secret_in_zips and args.roster is None:
        parser.error("--secret-in-zips needs --roster and --secret")
    assign()
    if args.roster is not None:
        try:
            personal_notebooks(args.roster, args.secret, secret_in_zips=args.secret_in_zips)
        except ValueError as error:
            raise SystemExit(f"error: {error}") from None
