"""True/false questions give no verdict away by their form (coursekit.cues)."""

from __future__ import annotations

import pytest

from coursekit import cues
from coursekit.exercises import Question, options
from coursekit.notebooks import master_notebooks


def question(texts: list[str], solution: str) -> Question:
    prompt = "\n".join(f"- ({chr(97 + i)}) {text}" for i, text in enumerate(texts)) + "\n"
    return Question("q1", "conceptual", 3.0, solution, [], prompt=prompt)


def test_a_set_answer_and_a_tuple_of_verdicts_give_the_same_statements():
    texts = ["short one", "a much longer statement here", "mid length one"]
    as_set = cues.statements(question(texts, 'q1 = {"b"}  # SOLUTION'))
    as_tuple = cues.statements(question(texts, "q1 = (False, True, False)"))
    assert as_set == as_tuple
    assert [s.true for s in as_set] == [False, True, False]
    assert cues.statements(question(texts, 'q1 = "b"')) == []  # a single answer is not a set of verdicts
    assert [s.true for s in cues.statements(question(texts, "q1 = set()"))] == [False, False, False]


def test_lengths_and_words_that_mark_the_true_statements_are_found():
    long_true = cues.statements(
        question(["it can often be the case here", "it never is", "it always is", "x may y"], 'q1 = {"a", "d"}')
    )
    assert cues.longest_are_true(long_true) is False  # "x may y" is shorter than the false ones
    assert cues.ratio(long_true) == pytest.approx(((29 + 7) / 2) / ((11 + 12) / 2))
    assert cues.marked_by_words(long_true) == ["hedges", "absolutes"]
    assert cues.word_gap(long_true, cues.HEDGES) == 1.0
    fair = cues.statements(question(["it can be", "it may never be so", "it is always", "short"], 'q1 = {"a", "c"}'))
    assert cues.marked_by_words(fair) == [] and not cues.longest_are_true(fair)
    longest = cues.statements(question(["the longest of them all", "tiny", "the second longest"], 'q1 = {"a", "c"}'))
    assert cues.longest_are_true(longest)


def test_math_and_code_do_not_count_as_words():
    assert not cues._has("$p(x) = 0$ for `all` x", cues.ABSOLUTES)
    assert cues._has("for all x", cues.ABSOLUTES)


def test_no_true_false_question_of_the_course_gives_its_verdicts_away():
    masters = master_notebooks()
    assert cues.summary(masters)["questions"] >= 10
    assert cues.problems(masters) == []


def test_a_not_form_is_a_statement_with_the_opposite_verdict():
    prompt = "- (a) it is always so\n  <!--not: it is not always so-->\n- (b) it holds here\n"
    q = Question("q1", "conceptual", 3.0, 'q1 = {"b"}', [], prompt=prompt)
    assert options(q) == {"a": "it is always so", "b": "it holds here"}
    found = cues.statements(q)
    assert [(s.letter, s.text, s.true) for s in found] == [
        ("a", "it is always so", False),
        ("b", "it holds here", True),
        ("a'", "it is not always so", True),
    ]
