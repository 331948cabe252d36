"""How far the students' variants differ: 04.02's Question 4 and 01.01's Question 6 over a class of 200."""

from __future__ import annotations

from coursekit.repository import MASTERS
from coursekit.variety import answer, shares


def test_an_answer_is_compared_as_the_grader_compares_it():
    assert answer("q1 = 5 / 8\n", "q1") == 0.625 and answer("q1 = 2 / 3\n", "q1") == 0.667
    assert answer('q1 = {"b", "a"}\n', "q1") == ("a", "b")


def test_a_number_of_its_own_and_statements_in_two_forms_are_shared_by_few():
    rows = {row["question"]: row for row in shares(MASTERS / "04.02-MAP-Estimation.ipynb", 200, b"s" * 32)}
    assert set(rows) == {"q4"}
    assert rows["q4"]["answers"] >= 60 and rows["q4"]["share"] <= 0.05, rows["q4"]
    assert "flips" in rows["q4"]["varies"]
    master = MASTERS / "01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb"
    rows = {row["question"]: row for row in shares(master, 200, b"s" * 32)}
    assert rows["q6"]["varies"] == "order of 6 options and form of 6 statements"
    assert rows["q6"]["answers"] >= 40 and rows["q6"]["share"] <= 0.05, rows["q6"]  # 64 answers, each 1 in 64
