"""The numbers of the instructor's report (coursekit.grading.item_analysis), without grading anything.

Invariants as properties (hypothesis): facility lies in [0, 1]; discrimination in [-1, 1], or None
(shown on the page as "undefined") exactly when the question's column or the rest's totals are
constant; a question that orders the submissions as the rest does discriminates perfectly. Then the
matching of reasons to the catalogue's named mistakes and the pairs that share unusual wrong answers,
on small classes made by hand.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from coursekit.grading import item_analysis as analysis
from coursekit.grading.gradebook import write_scores

SCORES = st.floats(0, 4, allow_nan=False).map(lambda x: round(x * 2) / 2)  # half points, as the checks give
MATRICES = st.tuples(st.integers(1, 40), st.integers(1, 6)).flatmap(lambda shape: arrays(float, shape, elements=SCORES))


@settings(max_examples=200, deadline=None)
@given(MATRICES, st.floats(0.5, 10))
def test_facility_lies_between_zero_and_one(scores, extra):
    possible = float(scores.max()) + extra
    for j in range(scores.shape[1]):
        value = analysis.facility(scores[:, j], possible)
        assert 0 <= value <= 1
        assert value == pytest.approx(scores[:, j].mean() / possible)


@settings(max_examples=300, deadline=None)
@given(MATRICES)
def test_discrimination_lies_in_minus_one_to_one_or_is_undefined_on_a_constant_column(scores):
    for j in range(scores.shape[1]):
        value = analysis.discrimination(scores, j)
        rest = scores.sum(axis=1) - scores[:, j]
        constant = np.ptp(scores[:, j]) == 0 or np.ptp(rest) == 0 or len(scores) < 3
        assert (value is None) == constant
        if value is not None:
            assert -1 <= value <= 1
            assert value == pytest.approx(np.corrcoef(scores[:, j], rest)[0, 1])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=3, max_size=30).filter(lambda xs: len(set(xs)) > 1))
def test_a_question_that_orders_the_class_as_the_rest_does_discriminates_perfectly(column):
    item = np.array(column, dtype=float)
    scores = np.column_stack([item, 2 * item, item + 1])  # the rest: 3 * item + 1
    assert analysis.discrimination(scores, 0) == pytest.approx(1.0)
    assert analysis.discrimination(np.column_stack([item, 3 - item]), 0) == pytest.approx(-1.0)


def test_review_flags_each_threshold():
    assert analysis.review(0.5, 0.3) == []
    assert analysis.review(0.5, None) == []  # undefined is no evidence of a bad question
    assert analysis.review(0.19, 0.3) == ["facility 0.19 below 0.2"]
    assert analysis.review(0.96, 0.09) == ["discrimination 0.09 below 0.1", "facility 0.96 above 0.95"]


ENTRIES = [
    {"mistake": "adds k to the numerator only", "feedback": "do not sum to one"},
    {"mistake": "adds k once to the total", "feedback": "Your total gains k only once"},
    {"mistake": "smooths with a library call", "shortcut": "uses add_k"},
    {"correct": "smooths with a loop", "feedback": "failed"},
]


def test_a_reason_names_the_mistake_whose_feedback_it_holds_the_most_specific_first():
    assert (
        analysis.named("failed 2 of 2 tests; k is added: the estimates do not sum to one.", ENTRIES)
        == "adds k to the numerator only"
    )
    # both phrases are in it: the longer one is the more specific
    assert (
        analysis.named("failed; your total gains k only once (the estimates do not sum to one)", ENTRIES)
        == "adds k once to the total"
    )
    assert analysis.named("failed 1 of 2 tests", ENTRIES) is None  # a right answer's entry names nothing
    assert analysis.named("the reason says it: smooths with a library call", ENTRIES) == "smooths with a library call"


def test_mistakes_are_counted_named_first_and_the_rest_grouped():
    reasons = (
        ["x: the estimates do not sum to one"] * 3
        + ["Your total gains k only once"]
        + ["failed 1 of 2 tests"] * 2
        + ["timed out after 20 s of CPU time in this cell"]
    )
    found = analysis.mistakes(reasons, ENTRIES)
    assert [(m.label, m.count, m.named) for m in found] == [
        ("adds k to the numerator only", 3, True),
        ("adds k once to the total", 1, True),
        (analysis.NOT_NAMED, 3, False),
    ]
    assert found[-1].reasons == [("failed 1 of 2 tests", 2), ("timed out after 20 s of CPU time in this cell", 1)]


def test_faults_are_counted_as_summary_csv_counts_them(tmp_path):
    reasons = [
        "timed out after 20 s of CPU time in this cell",
        "the process died in this cell",
        "used more than 2 GiB in this cell",
        "failed 1 of 1 tests",
    ]
    rows = [
        {"submission": f"s{i}", "assignment": "a", "q1": 0, "q1 reason": reason, "total": 0}
        for i, reason in enumerate(reasons)
    ]
    write_scores(rows, tmp_path / "scores.csv")
    summary = (tmp_path / "summary.csv").read_text().splitlines()
    assert summary[1].endswith(",1,1,1")  # timed out, crashed, out of memory
    question = analysis.summarize("a", analysis.read_scores(tmp_path / "scores.csv"), {"q1": 1}, {}).questions[0]
    assert question.faults == {"timed out": 0.25, "crashed": 0.25, "out of memory": 0.25}


def wrong(n: int, **answers: str) -> dict:
    return {
        "submission": f"s{n:02d}",
        "assignment": "a",
        "isolated": "yes",
        "seconds": 1.0,
        **{q: 0.0 if q in answers else 1.0 for q in ("q1", "q2", "q3", "q4")},
        **{f"{q} reason": reason for q, reason in answers.items()},
    }


def test_pairs_share_unusual_wrong_answers_on_three_questions_and_common_ones_do_not_count():
    common = {"q1": "failed 1 of 1 tests", "q2": "failed 1 of 1 tests", "q3": "failed 1 of 1 tests"}
    rows = [wrong(n, **common) for n in range(30)]  # the same wrong answers, but 30 of 40 gave them
    rows += [wrong(n) for n in range(30, 36)]
    rare = {"q1": "r1", "q2": "r2", "q3": "r3", "q4": "r4"}
    rows += [wrong(36, **rare), wrong(37, **rare), wrong(38, q1="r1", q2="r2"), wrong(39, q1="r1", q2="r2", q3="x")]
    summary = analysis.summarize("a", rows, {q: 1.0 for q in rare}, {})
    assert analysis.unusual_limit(40) == 2
    # r1 and r2 are given by four submissions: no longer unusual among 40; r3 and r4 are
    assert [(p.first, p.second, p.shared) for p in summary.pairs] == []
    # in a class of 80, four is few enough: the two who share four unusual answers are a pair, and only they
    summary = analysis.summarize("a", rows + [wrong(n) for n in range(40, 80)], {q: 1.0 for q in rare}, {})
    assert analysis.unusual_limit(80) == 4
    assert [(p.first, p.second, p.shared) for p in summary.pairs] == [("s36", "s37", rare)]


def test_summarize_counts_unconfined_submissions_and_refuses_unknown_points():
    rows = [wrong(1, q1="x"), {**wrong(2), "isolated": "no"}, wrong(3, q2="y")]
    summary = analysis.summarize("a", rows, {q: 1.0 for q in ("q1", "q2", "q3", "q4")}, {})
    assert summary.unconfined == ["s02"] and summary.totals == [3.0, 4.0, 3.0] and summary.possible == 4
    assert [q.discrimination for q in summary.questions][2:] == [None, None]  # everyone scored full
    with pytest.raises(ValueError, match="points possible of q4"):
        analysis.summarize("a", rows, {"q1": 1, "q2": 1, "q3": 1}, {})
