"""Degenerate answers: no hidden test of any master gives points to an empty, scalar or broadcasting
answer (coursekit/degenerate.py), and the sweep that says so finds what it should.

The sweep runs the masters' solutions and hidden tests in this process, in seconds; that the test files
it writes are otter's is checked against the autograder zips (slow, it needs the release).
"""

from __future__ import annotations

import zipfile

import nbformat
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from coursekit import cli, degenerate
from coursekit.exercises import Question, questions
from coursekit.notebooks import master_notebooks

MASTERS = master_notebooks()


def question(solution: str, *hidden: str, name: str = "q1") -> Question:
    """A question of one public check that passes anything and the given hidden checks, 2 points each."""
    tests = [
        "def test_form(env):\n    pass\n\ntest_form(env)",
        *(f"# HIDDEN\n{source}\n\n{source.split('(')[0][4:]}(...)" for source in hidden),
    ]
    return Question(name, "implement", 2.0 * len(hidden), solution, tests, test_points=[0.0] + [2.0] * len(hidden))


def sweep(q: Question) -> list[str]:
    namespace = {"np": np}
    exec(q.solution, namespace)  # noqa: S102 - the demo question's own solution
    return [f.form for f in degenerate.sweep_question("00.00-demo", q, namespace)]


# --------------------------------------------------------------------------- the forms

arrays = hnp.arrays(
    np.float64, hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4), elements=st.floats(-10, 10)
)
answers = st.one_of(
    arrays,
    st.floats(-10, 10),
    st.integers(-5, 5),
    st.text("abc", min_size=1, max_size=2),
    st.tuples(arrays, st.floats(-10, 10)),
    st.tuples(arrays, arrays, arrays),
    st.frozensets(st.sampled_from("abcd"), min_size=1),
)


@settings(max_examples=60, deadline=None)
@given(answers)
def test_no_form_keeps_the_type_and_shape_of_the_answer(value):
    forms = degenerate.degenerate_forms(value)
    signatures = [degenerate._signature(v) for v in forms.values()]
    assert degenerate._signature(value) not in signatures, forms
    assert len(set(signatures)) == len(signatures), "two labels give the same form"
    assert {"an empty array", "()", "an axis in front"} <= set(forms)
    assert ("a scalar" in forms) == (isinstance(value, (tuple, frozenset)) or np.ndim(value) > 0)


def test_forms_of_a_tuple_change_it_whole_and_one_element_at_a_time():
    value = (np.array([0.25, 0.75]), 3.0)
    forms = degenerate.degenerate_forms(value)
    front = forms["an axis in front"]
    assert front[0].shape == (1, 2) and front[1].shape == (1,)
    assert forms["element 1 as an empty array"][0].shape == (0, 2) and forms["element 1 as an empty array"][1] == 3.0
    assert forms["element 2 as ()"] == (value[0], ())
    assert forms["a scalar"] == 0.25 and forms["element 1 as a scalar"] == (0.25, 3.0)
    assert forms["element 2 as an axis in front"][1].tolist() == [3.0]


def test_a_string_becomes_an_array_of_it_and_never_a_scalar():
    forms = degenerate.degenerate_forms("b")
    assert forms["an axis in front"].tolist() == ["b"] and "a scalar" not in forms and "an axis behind" not in forms


# --------------------------------------------------------------------------- the sweep


def test_values_compared_before_the_shape_are_caught_and_a_shape_check_stops_them():
    solution = "def probabilities(x):\n    return np.full(3, 1 / 3)"
    lenient = (
        "def test_p(probabilities):\n    import numpy as np\n    assert np.allclose(probabilities(0), [1 / 3] * 3)"
    )
    found = sweep(question(solution, lenient))
    assert {
        "probabilities returns an empty array",
        "probabilities returns a scalar",
        "probabilities returns an axis in front",
        "probabilities returns an axis behind",
    } <= set(found), found
    strict = (
        "def test_p(probabilities):\n    import numpy as np\n    p = probabilities(0)\n"
        "    assert np.shape(p) == (3,)\n    assert np.allclose(p, [1 / 3] * 3)"
    )
    assert sweep(question(solution, strict)) == []


def test_a_zip_over_an_empty_answer_and_a_letter_in_an_array_are_caught():
    merge = "def merge(a, b):\n    return a + b, a * b"
    lenient = "def test_m(merge):\n    for got, want in zip(merge(2, 3), (5, 6)):\n        assert got == want"
    found = sweep(question(merge, lenient))
    assert {"merge returns ()", "merge returns []", "merge returns an axis in front"} <= set(found), found
    strict = (
        "def test_m(merge):\n    import numpy as np\n    answer = merge(2, 3)\n"
        "    assert len(answer) == 2 and all(np.ndim(got) == 0 for got in answer)\n"
        "    for got, want in zip(answer, (5, 6)):\n        assert got == want"
    )
    assert sweep(question(merge, strict)) == []
    choice = "q3 = 'b'"
    assert sweep(question(choice, "def test_c(q3):\n    assert q3 == 'b'", name="q3")) == ["q3 as an axis in front"]
    assert sweep(question(choice, "def test_c(q3):\n    assert isinstance(q3, str) and q3 == 'b'", name="q3")) == []


def test_a_tuple_graded_element_by_element_keeps_the_points_of_its_right_elements():
    solution = "q1 = (1.0, 2.0)"
    checks = [
        f"def test_{i}(q1):\n    import numpy as np\n    assert isinstance(q1, tuple) and len(q1) == 2\n"
        f"    assert np.ndim(q1[{i}]) == 0 and q1[{i}] == {i + 1}.0"
        for i in (0, 1)
    ]
    assert sweep(question(solution, *checks)) == []  # element 1 degenerate: test_1 rightly passes
    lenient = checks[0].replace("np.ndim(q1[0]) == 0 and ", "")
    assert set(sweep(question(solution, lenient, checks[1]))) == {
        "q1 as an axis in front",
        "q1 as element 1 as an axis in front",
    }


def test_an_element_with_no_wrong_form_of_its_own_may_keep_nothing():
    # A list of labels has no wrong form of the same type and shape to compare with: its degenerate
    # forms may earn nothing, and the test below takes one, comparing it with a list of strings.
    solution = "def fit():\n    return ['ham', 'spam'], np.array([0.5, 0.5])"
    check = (
        "def test_f(fit):\n    import numpy as np\n    classes, p = fit()\n"
        "    assert list(classes) == ['ham', 'spam']\n    assert np.shape(p) == (2,) and np.allclose(p, 0.5)"
    )
    assert "fit returns element 1 as an axis behind" in sweep(question(solution, check))
    strict = check.replace("    assert list(classes)", "    assert np.shape(classes) == (2,)\n    assert list(classes)")
    assert sweep(question(solution, strict)) == []


def test_a_test_of_another_answer_keeps_its_points():
    solution = "a = np.zeros(2)\nb = 'x'"
    checks = [
        "def test_a(a):\n    import numpy as np\n    assert np.shape(a) == (2,) and np.all(a == 0)",
        "def test_b(b):\n    assert isinstance(b, str) and b == 'x'",
    ]
    assert sweep(question(solution, *checks)) == []


def test_the_solution_must_score_full_marks_with_its_answers_as_plain_data():
    # A rigged value equals everything in the student's process; the tests get a placeholder that equals nothing.
    rigged = "class Anything:\n    def __eq__(self, other):\n        return True\n\nq2 = Anything()"
    assert sweep(question(rigged, "def test_r(q2):\n    assert q2 == 'b'", name="q2")) == ["the solution"]


# --------------------------------------------------------------------------- the masters


@pytest.mark.parametrize("master", MASTERS, ids=lambda m: m.stem[:5])
def test_no_degenerate_answer_scores_in_any_master(master):
    found = degenerate.sweep([master])
    assert not found, "hidden tests pass degenerate answers (check the shape first):\n" + "\n".join(map(str, found))


def test_the_command_line_sweeps_the_notebooks_named(capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["exercises", "degenerate", str(MASTERS[0])])
    assert stop.value.code == 0
    assert "no degenerate answer scores in 1 notebooks" in capsys.readouterr().out


@pytest.mark.slow
def test_the_test_files_are_those_of_the_autograder_zips(release):
    for master in MASTERS:
        with zipfile.ZipFile(release / "autograder" / f"{master.stem}-autograder.zip") as archive:
            for q in questions(nbformat.read(master, as_version=4)):
                shipped = archive.read(f"tests/{q.name}.py").decode()
                assert degenerate.otter_test_file(q) == shipped, (master.stem, q.name)
