"""The student's check: it never says "passed", and a symbolic answer is read as the grader reads it."""

import json
import textwrap

import nbformat
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.check import NO_PROBLEM, CheckResult, Notebook, as_graded
from coursekit.grading import plain_data
from coursekit.symbolic import SymbolicAnswerError, parse, random_points, to_data

N1, a, N = sympy.symbols("N1 a N", positive=True)
POINTS = random_points({"N1": (0.5, 30), "a": (0.3, 6), "N": (40, 80)}, seed=1)
# A question's public test as otter assign writes it into the notebook's tests, calling as_graded.
PUBLIC_TEST = """
from otter.test_files import test_case

OK_FORMAT = False

name = "q1"
points = [0]

@test_case(points=None, hidden=False)
def test_q1_form(q1):
    from coursekit.check import as_graded
    from coursekit.symbolic import random_points
    points = random_points({"N1": (0.5, 30), "a": (0.3, 6), "N": (40, 80)}, seed=1)
    q1 = as_graded(q1, points, name="q1")
    assert q1.free_symbols, "q1 is a number: enter one formula in N1, a and N"
"""


def graded_elsewhere(answer):
    """``answer`` as a check in the grader receives it: encoded in the worker, sent as JSON, decoded."""
    return plain_data.decode(json.loads(json.dumps(plain_data.encode(answer))))


@pytest.fixture
def grader(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # otter writes its log into the working folder
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "q1.py").write_text(textwrap.dedent(PUBLIC_TEST))
    return Notebook(tests_dir=str(tmp_path / "tests"))


def shown(result: CheckResult) -> tuple[str, str]:
    return repr(result), result._repr_html_()


# --------------------------------------------------------------------------- what the check says


def test_a_check_whose_public_tests_pass_says_no_problem_and_never_passed(grader):
    result = grader.check("q1", {"q1": (N1 + a) / N})
    text, page = shown(result)
    assert result.passed_all and result.score == 0  # otter's result, read through
    assert text.startswith(NO_PROBLEM.format(name="q1"))
    assert "the hidden tests decide the grade" in text and "the hidden tests decide the grade" in page
    for said in (text, page):
        assert "passed" not in said.lower() and "🎉" not in said, said


def test_a_failing_check_shows_otters_report_and_the_tests_message(grader):
    result = grader.check("q1", {"q1": sympy.Integer(3)})
    text, page = shown(result)
    assert not result.passed_all
    assert "q1 results:" in text and "AssertionError: q1 is a number: enter one formula in N1, a and N" in text
    assert "q1 is a number: enter one formula" in page and "hidden tests decide" not in text
    assert "passed!" not in text and "All test cases passed" not in text


def test_a_check_reads_the_answers_where_the_notebook_holds_them(grader):
    notebook = {"grader": grader, "q1": (N1 + a) / N}
    exec('result = grader.check("q1")', notebook)  # noqa: S102 - the caller's globals, as in a notebook's cell
    assert notebook["result"].passed_all
    notebook["q1"] = sympy.Integer(3)
    exec('result = grader.check("q1")', notebook)  # noqa: S102
    assert not notebook["result"].passed_all


def test_check_all_reports_in_the_same_words(grader):
    notebook = {"grader": grader, "q1": (N1 + a) / N}
    exec("results = grader.check_all()", notebook)  # noqa: S102 - as a notebook's cell runs it
    summary = notebook["results"].summary()
    assert NO_PROBLEM.format(name="q1") in summary and "passed" not in summary.lower()


def test_otters_export_still_works(grader, tmp_path):
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("q1 = 1")]), tmp_path / "hw.ipynb")
    grader = Notebook("hw.ipynb", tests_dir=str(tmp_path / "tests"))
    grader.export(pdf=False, force_save=False)
    assert list(tmp_path.glob("hw_*.zip")), sorted(p.name for p in tmp_path.iterdir())


# --------------------------------------------------------------------------- what the grader reads


def test_the_check_shows_the_answer_as_the_grader_read_it(grader):
    meant, typed = (N1 + a) / N, N1 + a / N  # the student meant the first, typed the second
    text, page = shown(grader.check("q1", {"q1": typed}))
    read = parse(to_data(typed)["sympy"])
    assert f"The grader reads q1 as: {sympy.sstr(read)}" in text
    assert sympy.latex(read) in page and sympy.latex(read) != sympy.latex(meant)
    assert sympy.sstr(meant) not in text


def test_a_refused_expression_fails_with_the_parsers_words(grader):
    refused = sympy.Function("f")(a) + N1  # an undefined function: no allowlist takes it
    with pytest.raises(SymbolicAnswerError) as parser:
        parse(to_data(refused)["sympy"])
    with pytest.raises(AssertionError) as student:
        as_graded(refused, POINTS, name="q1")
    assert str(student.value) == f"the grader does not accept q1: {parser.value}"
    # The same public test run by the grader, on the answer as it arrives there, says the same.
    with pytest.raises(AssertionError) as grader_side:
        as_graded(graded_elsewhere(refused), POINTS, name="q1")
    assert str(grader_side.value) == str(student.value)
    text, _ = shown(grader.check("q1", {"q1": refused}))
    assert str(parser.value) in text and "q1 results:" in text


@pytest.mark.parametrize(
    "answer, where",
    [
        (sympy.log(a - N1), "N1 = "),  # negative where N1 > a: no real logarithm
        (N1 / (a - a), "every point"),  # a division by zero, in no symbol's value
        (sympy.exp(1000 * N1), "N1 = "),  # beyond where the grader computes exp
    ],
)
def test_an_answer_without_a_value_at_the_points_fails_and_says_where(answer, where):
    with pytest.raises(AssertionError, match="the grader computes no value for q1 at") as failure:
        as_graded(answer, POINTS, name="q1")
    assert where in str(failure.value) and "not a finite real number" in str(failure.value)


def test_an_answer_in_symbols_the_question_does_not_define_fails():
    with pytest.raises(AssertionError, match=r"q1\[1\] uses x, which the question does not define"):
        as_graded((N1, sympy.Symbol("x")), POINTS, name="q1")


def test_entries_are_read_one_by_one_and_named_in_messages():
    answer = [sympy.Matrix([[N1, a]]), (a / N, sympy.Tuple(N, N1))]
    read = as_graded(answer, POINTS, name="q2")
    assert type(read) is list and isinstance(read[0], sympy.ImmutableMatrix) and type(read[1]) is tuple
    assert read[0] == sympy.ImmutableMatrix([[N1, a]]) and read[1][1] == sympy.Tuple(N, N1)
    with pytest.raises(AssertionError, match=r"q2\[0, 1\] at"):
        as_graded(sympy.Matrix([[N1, sympy.log(-a)]]), POINTS, name="q2")


def test_what_is_not_sympy_is_left_to_the_questions_own_checks():
    for answer in (..., 0.5, None, "N1 + a"):
        assert as_graded(answer, POINTS, name="q1") is answer


expressions = st.recursive(
    st.sampled_from([N1, a, N, sympy.Integer(2), sympy.Rational(1, 3), sympy.Float("0.25")]),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
        st.tuples(inner, inner).map(lambda p: p[0] * p[1]),
        st.tuples(inner, inner).map(lambda p: p[0] / (1 + p[1] ** 2)),
        inner.map(lambda e: sympy.log(1 + e**2)),
    ),
    max_leaves=8,
)


@settings(max_examples=60, deadline=None)
@given(expressions)
def test_reading_is_the_graders_and_reading_again_changes_nothing(expression):
    """In the student's kernel and in the grader (which reads what it received) the answer is the same."""
    read = as_graded(expression, POINTS, name="q1")
    assert sympy.srepr(read) == sympy.srepr(graded_elsewhere(expression))
    assert sympy.srepr(as_graded(read, POINTS, name="q1")) == sympy.srepr(read)
