"""Grading a folder (``make grade``, :mod:`coursekit.grading.gradebook`): whole submissions of 1.1
scored as they should be, and a submission without an autograder reported.
"""

from __future__ import annotations

import csv

import nbformat
import pytest

from coursekit.exercises import solution_answers, whole_copy
from coursekit.grading.gradebook import grade
from coursekit.repository import MASTERS
from released import BAYES, CORRECT, submission

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded(release, tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    cases = {
        # Whole notebooks, lecture included (tests/test_grader.py grades hostile and broken ones).
        # The instructor's solutions in the whole student notebook.
        "solutions": whole_copy(
            nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4),
            solution_answers(MASTERS / f"{BAYES}.ipynb"),
        ),
        "independent-correct": submission(release, CORRECT),
        "blank": submission(release, {}),
        # q1 passes its public test by hard-coding it but fails the hidden one (0 of 3: public tests
        # give no points);
        # q2 forgets the kK in the denominator (0 of 3); q3 is right (3 of 3).
        "wrong": submission(
            release,
            {
                "positive_predictive_value": "def positive_predictive_value(prevalence, sensitivity, specificity):\n"
                "    return 0.009 / 0.0585\n",
                "add_k_estimate": "def add_k_estimate(counts, k):\n"
                "    counts = np.asarray(counts, dtype=float)\n"
                "    return (counts + k) / counts.sum()\n",
                "classify": CORRECT["classify"],
            },
        ),
    }
    for name, nb in cases.items():
        (folder / name).mkdir()
        nbformat.write(nb, folder / name / f"{BAYES}.ipynb")
    rows = grade(folder, folder / "scores.csv", release / "autograder")
    with (folder / "scores.csv").open() as handle:
        table = {row["submission"].split("/")[0]: row for row in csv.DictReader(handle)}
    assert len(rows) == len(cases) == len(table)
    return table


@pytest.mark.parametrize(
    "case, expected",
    [
        ("solutions", {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3, "total": 19}),
        ("independent-correct", {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3, "total": 19}),
        ("blank", {"q1": 0, "q2": 0, "q3": 0, "q4": 0, "q5": 0, "q6": 0, "total": 0}),
        ("wrong", {"q1": 0, "q2": 0, "q3": 3, "q4": 0, "total": 3}),
    ],
)
def test_grading(graded, case, expected):
    row = graded[case]
    assert row["error"] == "", row["error"]
    assert float(row["possible"]) == 19
    got = {key: float(row[key]) for key in expected}
    assert got == expected


def test_grade_reports_a_missing_autograder(tmp_path):
    (tmp_path / "subs").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["otter"] = {"assignment_name": "no-such-assignment"}
    nbformat.write(nb, tmp_path / "subs" / "x.ipynb")
    rows = grade(tmp_path / "subs", tmp_path / "scores.csv", tmp_path)
    assert "make assignments" in rows[0]["error"] and rows[0]["total"] == 0
