"""How far the students' variants differ: 04.02's questions and 01.01's Question 6 over a class of 200."""

from __future__ import annotations

import nbformat

from coursekit.exercises import questions
from coursekit.repository import MASTERS
from coursekit.variety import answer, answered, shares


def test_an_answer_is_compared_as_the_grader_compares_it():
    assert answer("q1 = 5 / 8\n", "q1") == 0.625 and answer("q1 = 2 / 3\n", "q1") == 0.667
    assert answer('q1 = {"b", "a"}\n', "q1") == ("a", "b")
    assert answer("q1_a = 1 / 3\nq1_b = {2, 1}\n", ["q1_a", "q1_b"]) == (0.333, (1, 2))


def test_an_answer_is_read_from_the_variables_its_tests_take():
    nb = nbformat.read(MASTERS / "01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb", as_version=4)
    found = {q.name: answered(q) for q in questions(nb)}
    assert found["q4"] == ["q4_log_likelihood", "q4_estimate"] and found["q6"] == "q6"
    assert found["q1"] == "positive_predictive_value"  # an implement question: its function


def test_a_number_of_its_own_and_statements_in_two_forms_are_shared_by_few():
    rows = {row["question"]: row for row in shares(MASTERS / "04.02-MAP-Estimation.ipynb", 200, b"s" * 32)}
    assert set(rows) == {"q1", "q2", "q4"}  # q3 is an implement question, the same for everyone
    for row in rows.values():  # two derivations in a setting of their own, a number by hand
        assert row["answers"] >= 60 and row["share"] <= 0.05, row
    assert rows["q4"]["varies"] == "setting (flips, heads, mean)"
    assert rows["q2"]["varies"] == "setting (V, positive[], signs, domains[])"  # a list shows, a digest does not
    master = MASTERS / "01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb"
    rows = {row["question"]: row for row in shares(master, 200, b"s" * 32)}
    assert rows["q6"]["varies"] == "order of 7 options and form of 7 statements"
    assert rows["q6"]["answers"] >= 80 and rows["q6"]["share"] <= 0.05, rows["q6"]  # 128 answers, each 1 in 128
