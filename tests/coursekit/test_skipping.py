"""Skipping the lecture when grading changes no score (coursekit.skipping, coursekit.grading.grader).

A master marks the lecture cells whose results no answer or check uses (``skip-when-grading``);
the autograder zip lists their fingerprints and the grader does not run a submission's cell that is
exactly one of them. Here: every mark stands up to the static check (no name a marked cell binds is
read elsewhere, no effect on the process); whole submissions (lecture cells and all) score the same
with the marked cells skipped and with every cell run; an answer that uses a skipped cell's
variable is graded as if nothing were skipped; and a student's edit to a lecture cell runs as any
cell does, so it cannot raise a score.
"""

from __future__ import annotations

import csv
import json
import zipfile
from pathlib import Path

import nbformat
import pytest

from conftest import assignment_masters
from coursekit import exercises, skipping
from coursekit.grading import gradebook
from coursekit.grading.grader import SKIPPABLE, fingerprint
from coursekit.notebooks import SKIP_TAG
from coursekit.repository import MASTERS as MASTERS_FOLDER

MASTERS = assignment_masters()
BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"


@pytest.mark.parametrize("master", MASTERS, ids=lambda m: m.stem[:5])
def test_every_marked_cell_can_be_skipped(master):
    assert skipping.problems(master) == []


def test_mark_leaves_what_an_answer_reads_or_what_changes_the_process(tmp_path, monkeypatch):
    master = MASTERS_FOLDER / f"{BAYES}.ipynb"
    nb = nbformat.read(master, as_version=4)
    lecture = skipping.lecture_cells(nb)
    lecture[0].source = "rate = 0.25\n"  # read by an answer below
    lecture[1].source = "np.random.seed(0)\n"  # changes the process
    lecture[2].source = "rate_doubled = 2 * rate\n"  # reads a cell that must run: may be skipped itself
    for cell in lecture:
        cell.metadata.pop("tags", None)
    question = next(c for c in nb.cells if c.cell_type == "code" and "# SOLUTION" in c.source)
    question.source = question.source.replace("# SOLUTION", "* rate / rate  # SOLUTION", 1)
    nbformat.write(nb, tmp_path / master.name)
    (tmp_path / f"{BAYES}.yml").write_text("")
    monkeypatch.setattr(exercises, "WRONG_ANSWERS", tmp_path)  # no catalogued wrong answers
    marked = skipping.mark(tmp_path / master.name)
    cells = skipping.lecture_cells(nbformat.read(tmp_path / master.name, as_version=4))
    assert [skipping.marked(c) for c in cells[:3]] == [False, False, True]
    assert marked == len(cells) - 2 and skipping.problems(tmp_path / master.name) == []


def test_the_zip_lists_the_marked_cells_and_the_student_notebook_carries_no_mark(release):
    for master in MASTERS:
        nb = nbformat.read(master, as_version=4)
        marked = {fingerprint(c.source) for c in skipping.lecture_cells(nb) if skipping.marked(c)}
        with zipfile.ZipFile(release / "autograder" / f"{master.stem}-autograder.zip") as archive:
            listed = set(json.loads(archive.read(SKIPPABLE))["cells"])
        assert listed == marked, master.name
        student = nbformat.read(release / "student" / master.name, as_version=4)
        assert not any(SKIP_TAG in c.metadata.get("tags", []) for c in student.cells), master.name
        sources = {fingerprint(c.source) for c in student.cells if c.cell_type == "code"}
        assert listed <= sources, f"{master.name}: a marked cell is not in the student notebook as it is"


def grade(folder: Path, autograders: Path) -> dict[str, dict]:
    # One grading process: a second would start its own sandboxes for one or two submissions.
    gradebook.grade(folder, folder / "scores.csv", autograders, jobs=1)
    with (folder / "scores.csv").open() as handle:
        return {row["submission"]: {k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)}


@pytest.mark.slow
def test_no_score_depends_on_a_skipped_cell(release, tmp_path):
    """1.1's solution, blank and first round of wrong answers (one to every question), whole: the
    same scores and reasons with the marked cells skipped and with every cell run. Every cell of all
    17 notebooks takes about twenty minutes on two cores, too long for every build: the static check
    above covers every mark of every master, and ``python -m coursekit exercises check`` compares every
    catalogued wrong answer of the notebooks it is given so."""
    bayes = [m for m in MASTERS if m.stem == BAYES]
    assert (
        bayes
        and skipping.differences(
            bayes, release / "student", release / "autograder", tmp_path, ("solution", "blank", "wrong-1")
        )
        == []
    )


def test_an_answer_that_uses_a_skipped_cells_variable_is_graded_with_every_cell(release, tmp_path):
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    master = MASTERS_FOLDER / f"{BAYES}.ipynb"
    solutions = exercises.solution_answers(master)
    lecture = next(
        c for c in student.cells if c.cell_type == "code" and "prevalence, sensitivity, specificity =" in c.source
    )
    assert (
        fingerprint(lecture.source)
        in json.loads(zipfile.ZipFile(release / "autograder" / f"{BAYES}-autograder.zip").read(SKIPPABLE))["cells"]
    )
    # The lecture's worked example, reused by name in the answer to a question without a ban (a
    # question with one is graded in a worker that runs only the imports and its answer, where the
    # name is missing with every cell run too): a NameError where that cell is skipped.
    banned = json.loads(zipfile.ZipFile(release / "autograder" / f"{BAYES}-autograder.zip").read("questions.json"))
    free = next(
        i
        for i, q in enumerate(exercises.questions(nbformat.read(master, as_version=4)))
        if not (banned.get(q.name) or {}).get("forbids")
    )
    uses = {**solutions, free: solutions[free] + "\nexample = prevalence * sensitivity / specificity\n"}
    (tmp_path / "subs" / "uses-lecture").mkdir(parents=True)
    nbformat.write(exercises.whole_copy(student, uses), tmp_path / "subs" / "uses-lecture" / f"{BAYES}.ipynb")
    skipped = grade(tmp_path / "subs", release / "autograder")
    everything = grade(tmp_path / "subs", skipping.every_cell(release / "autograder", tmp_path / "every-cell"))
    assert skipped == everything
    assert float(skipped[f"uses-lecture/{BAYES}.ipynb"]["total"]) == 19


PATCH = (
    "import numpy as np, builtins\nnp.isclose = lambda *a, **k: True\nnp.allclose = lambda *a, **k: True\n"
    "builtins.isinstance = lambda *a: True\n"
)


def test_an_edited_lecture_cell_runs_and_cannot_raise_a_score(release, tmp_path):
    """A student's edit to a marked cell makes it a cell like any other: it runs (so it can define what
    an answer uses, as it could before), and what it does cannot raise a score. Marks that a student
    adds to a notebook are ignored."""
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    wrong = {
        0: "def positive_predictive_value(prevalence, sensitivity, specificity):\n    return -1.0\n",
        4: "q5 = 2.0\n",
        5: 'q6 = {"z"}\n',
    }
    marked = [
        c
        for c in student.cells
        if c.cell_type == "code"
        and fingerprint(c.source)
        in set(json.loads(zipfile.ZipFile(release / "autograder" / f"{BAYES}-autograder.zip").read(SKIPPABLE))["cells"])
    ]
    cases = {}
    # A marked cell that defines the answer q6 uses: run, as it is edited. (q6, because it is not banned:
    # a banned answer runs after the imports cell alone.)
    nb = exercises.whole_copy(student, {5: "q6 = lecture_value\n"})
    edited = next(c for c in nb.cells if c.source == marked[0].source)
    edited.source += "\nlecture_value = {'b', 'd', 'f', 'g'}\n"
    cases["defines-an-answer"] = nb
    # A marked cell that patches NumPy and builtins, before wrong answers; one that sets the answers
    # right, before answer cells that set them wrong; answer cells tagged as skippable.
    nb = exercises.whole_copy(student, wrong)
    next(c for c in nb.cells if c.source == marked[1].source).source = PATCH + marked[1].source
    next(c for c in nb.cells if c.source == marked[2].source).source += "\nq6 = {'b', 'd', 'f', 'g'}\nq5 = 0.0154\n"
    for cell in exercises.answer_cells(nb):
        cell.metadata["tags"] = ["otter_answer_cell", SKIP_TAG]
    nb.metadata[SKIP_TAG] = [fingerprint(c.source) for c in exercises.answer_cells(nb)]
    cases["patches-and-tags"] = nb
    for name, nb in cases.items():
        (tmp_path / "subs" / name).mkdir(parents=True)
        nbformat.write(nb, tmp_path / "subs" / name / f"{BAYES}.ipynb")
    skipped = grade(tmp_path / "subs", release / "autograder")
    everything = grade(tmp_path / "subs", skipping.every_cell(release / "autograder", tmp_path / "every-cell"))
    assert skipped == everything
    assert float(skipped[f"defines-an-answer/{BAYES}.ipynb"]["q6"]) == 3
    row = skipped[f"patches-and-tags/{BAYES}.ipynb"]
    assert [float(row[q]) for q in ("q1", "q5", "q6")] == [0, 0, 0], row
