"""How far the students' variants differ: 04.02's Question 4 over a class of 200."""

from __future__ import annotations

from coursekit.repository import MASTERS
from coursekit.variety import answer, shares


def test_an_answer_is_compared_as_the_grader_compares_it():
    assert answer("q1 = 5 / 8\n", "q1") == 0.625 and answer("q1 = 2 / 3\n", "q1") == 0.667
    assert answer('q1 = {"b", "a"}\n', "q1") == ("a", "b")


def test_a_number_of_its_own_is_shared_by_few_and_shuffled_options_by_one_in_their_number():
    rows = {row["question"]: row for row in shares(MASTERS / "04.02-MAP-Estimation.ipynb", 200, b"s" * 32)}
    assert set(rows) == {"q4"}
    assert rows["q4"]["answers"] >= 60 and rows["q4"]["share"] <= 0.05, rows["q4"]
    assert "flips" in rows["q4"]["varies"]
    rows = {row["question"]: row for row in shares(MASTERS / "02.04-Quadratic-Discriminant-Analysis.ipynb", 200)}
    assert rows["q4"]["answers"] == 5 and rows["q4"]["varies"] == "order of 5 options"  # one letter of five
    assert rows["q5"]["answers"] > 10  # a set of three true statements of six: 20 possible answers
