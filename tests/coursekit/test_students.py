"""A class with a roster: each student's own notebook, graded on its owner's variant, a borrowed one flagged.

``make assignments ROSTER=... SECRET=...`` and ``make grade ... ROSTER=... SECRET=...`` end to end on
04.02 (its Questions 1, 2 and 4 vary, Question 3 does not): every student's solution scores full; a
classmate's notebook handed in under another student's id is graded on the id's own variant, loses the points
of the questions whose answers differ, and is flagged with the classmate's id. ``make check-release`` runs the
class of 200 the course promises; ``make test`` a class of six.
"""

from __future__ import annotations

import shutil
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from coursekit.build.assign import personal_notebooks
from coursekit.build.personal import TEMPLATE, answer_for
from coursekit.exercises import grading_copy, questions
from coursekit.grading.gradebook import grade
from coursekit.grading.grader import Assignment
from coursekit.grading.owners import Owners
from coursekit.repository import MASTERS
from coursekit.variants import read_roster, variant_seed, write_secret

NAME = "04.02-MAP-Estimation"
LINKED = "05.01-Latent-Variables-and-the-EM-Lower-Bound"  # links to the notation page
FORMS = "01.01-Bayes-Rule-and-Maximum-Likelihood"  # Question 6: true/false statements with not-forms


def solved(nb: nbformat.NotebookNode, master: nbformat.NotebookNode, variant: dict) -> nbformat.NotebookNode:
    """``nb``, a student's notebook, with the master's solutions worked on its ``variant``."""
    answers = {i: answer_for(q.name, q.solution, variant.get(q.name, {})) for i, q in enumerate(questions(master))}
    return grading_copy(nb, answers)


def course(release: Path, tmp_path: Path, names: tuple[str, ...], size: int) -> tuple[Path, Path, Path]:
    """A copy of the release's ``dist`` with the templates of ``names``, a roster of ``size`` and a secret."""
    dist = tmp_path / "dist"
    for name in names:
        (dist / "assign" / name).mkdir(parents=True)
        shutil.copy2(release / "assign" / name / TEMPLATE, dist / "assign" / name / TEMPLATE)
    shutil.copytree(release / "autograder", dist / "autograder")
    shutil.copytree(release / "student", dist / "student")
    shutil.copy2(release / "notation.md", dist / "notation.md")
    roster = tmp_path / "roster.csv"
    roster.write_text("id,name\n" + "".join(f"s{k:03d},Student {k}\n" for k in range(size)))
    return dist, roster, write_secret(tmp_path / "secret", repository=tmp_path / "elsewhere")


def run_class(release: Path, tmp_path: Path, size: int) -> None:
    dist, roster, secret_path = course(release, tmp_path, (NAME, LINKED), size)
    start = time.monotonic()
    masters = [MASTERS / f"{name}.ipynb" for name in (NAME, LINKED)]
    personal_notebooks(roster, secret_path, dist, masters=masters, secret_in_zips=True)
    print(f"{size} students' notebooks of {NAME} and {LINKED} made in {time.monotonic() - start:.1f} s")
    with zipfile.ZipFile(dist / "autograder" / f"{NAME}-autograder.zip") as archive:  # for Gradescope
        info = archive.getinfo("variant-secret")
        assert archive.read(info) == secret_path.read_bytes() and (info.external_attr >> 16) & 0o777 == 0o600

    ids = [s.id for s in read_roster(roster)]
    folder = dist / "student" / ids[0]  # a student's folder stands alone: its links to the notation resolve in it
    assert (folder / "notation.md").is_file()
    links = [c.source for p in folder.glob("*.ipynb") for c in nbformat.read(p, as_version=4).cells]
    assert any("](notation.md" in text for text in links) and not any("](../notation.md" in t for t in links)
    secret = secret_path.read_bytes()
    declared = Assignment.load(dist / "autograder" / f"{NAME}-autograder.zip").variants
    master = nbformat.read(MASTERS / f"{NAME}.ipynb", as_version=4)
    submissions = tmp_path / "submissions"
    for student in ids:
        own = nbformat.read(dist / "student" / student / f"{NAME}.ipynb", as_version=4)
        (submissions / student).mkdir(parents=True)
        nbformat.write(
            solved(own, master, declared.of(variant_seed(secret, student, NAME))),
            submissions / student / f"{NAME}.ipynb",
        )
    lender, borrower = ids[0], ids[1]  # the borrower hands in the lender's solved notebook
    shutil.copy2(submissions / lender / f"{NAME}.ipynb", submissions / borrower / f"{NAME}.ipynb")

    def differ(question: str) -> bool:  # whether the lender's right answer is wrong for the borrower
        lent, own = (declared.params(question, variant_seed(secret, s, NAME)) for s in (lender, borrower))
        if question == "q4":  # a number, graded to a tolerance
            return lent["_answer"] != pytest.approx(own["_answer"], abs=2e-3)
        return {k: v for k, v in lent.items() if k[0] != "_"} != {k: v for k, v in own.items() if k[0] != "_"}

    rows = {
        row["submission"].split("/")[0]: row
        for row in grade(
            submissions, tmp_path / "scores.csv", dist / "autograder", owners=Owners(read_roster(roster), secret)
        )
    }
    assert set(rows) == set(ids)
    for student, row in rows.items():
        if student == borrower:
            continue
        assert not row.get("error") and not row["flag"], (student, row)
        assert row["total"] == row["possible"] == 15, (student, row)
    row = rows[borrower]
    assert row["flag"].startswith("carries the variant of another student (") and lender in row["flag"]
    assert row["q3"] == 4  # the same for every student
    for question, full in (("q1", 4), ("q2", 4), ("q4", 3)):  # graded on the borrower's own setting
        assert row[question] == (0 if differ(question) else full), (question, row)
    scores = (tmp_path / "scores.csv").read_text()
    assert "carries the variant of another student (" in scores


def test_a_class_of_six(release, tmp_path):
    run_class(release, tmp_path, 6)


@pytest.mark.release
def test_a_class_of_two_hundred(release, tmp_path):
    run_class(release, tmp_path, 200)


def test_statements_shown_in_their_not_forms_are_graded_in_the_students_letters_and_forms(release, tmp_path):
    dist, roster, secret_path = course(release, tmp_path, (FORMS,), 8)
    personal_notebooks(roster, secret_path, dist, masters=[MASTERS / f"{FORMS}.ipynb"])
    declared = Assignment.load(dist / "autograder" / f"{FORMS}-autograder.zip").variants
    secret = secret_path.read_bytes()
    variant = {s.id: declared.of(variant_seed(secret, s.id, FORMS)) for s in read_roster(roster)}
    student = next(s for s, v in variant.items() if v["q6"]["flips"])  # 63 students in 64 have one
    own = nbformat.read(dist / "student" / student / f"{FORMS}.ipynb", as_version=4)
    master = nbformat.read(MASTERS / f"{FORMS}.ipynb", as_version=4)
    q6 = next(c for c in own.cells if c.cell_type == "markdown" and c.source.startswith("**Question 6"))
    assert "<!--" not in q6.source and sum(form in q6.source for form in ("1/4", "1/8")) == 1
    submissions = tmp_path / "submissions" / student
    for folder, answers in (("own", variant[student]), ("masters", {**variant[student], "q6": {}})):  # q6 unread
        (submissions / folder).mkdir(parents=True)
        nbformat.write(solved(own, master, answers), submissions / folder / f"{FORMS}.ipynb")
    rows = {
        row["submission"].split("/")[1]: row
        for row in grade(
            tmp_path / "submissions",
            tmp_path / "scores.csv",
            dist / "autograder",
            owners=Owners(read_roster(roster), secret),
        )
    }
    assert rows["own"]["total"] == rows["own"]["possible"] and not rows["own"]["flag"], rows["own"]
    assert rows["masters"]["q6"] == 0 and rows["masters"]["total"] == rows["own"]["total"] - 3, rows["masters"]
