"""Every question answered by a function declares the edges of its stated domain, and its hidden tests
reach them (coursekit.reach)."""

from __future__ import annotations

import nbformat
import pytest

from coursekit import reach
from coursekit.notebooks import master_notebooks

MASTERS = master_notebooks()


def notebook(config: str, solution: str, hidden: str):
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import numpy as np"),
        nbformat.v4.new_raw_cell(f"# BEGIN QUESTION\nname: q1\n{config}"),
        nbformat.v4.new_markdown_cell("**Question 1.** Write `f(x, k=2)`."),
        nbformat.v4.new_raw_cell("# BEGIN SOLUTION"),
        nbformat.v4.new_code_cell(solution),
        nbformat.v4.new_raw_cell("# END SOLUTION"),
        nbformat.v4.new_raw_cell("# BEGIN TESTS"),
        nbformat.v4.new_code_cell(hidden),
        nbformat.v4.new_raw_cell("# END TESTS"),
        nbformat.v4.new_raw_cell("# END QUESTION"),
    ]
    return nb


SOLUTION = "def f(x, k=2):\n    x = np.asarray(x)\n    x[...] = 0  # an answer may change its input\n    return k"
HIDDEN = (
    "# HIDDEN\ndef test_q1(f):\n    for x in ([1.0, 2.0], [[5.0]]):\n        assert f(np.array(x)) == 2\n\ntest_q1(f)"
)


def test_an_edge_is_reached_when_one_call_meets_it_and_defaults_are_bound(tmp_path):
    config = (
        'reaches:\n  f:\n    - "np.asarray(x).max() >= 5"\n    - "np.asarray(x).ndim == 2 and k == 2"\n'
        '    - "np.asarray(x).max() > 5"\n    - "undefined_name > 0"'
    )
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook(config, SOLUTION, HIDDEN), path)
    edges = reach.reached(path)
    assert [(e.expression.split()[0], e.reached, e.calls) for e in edges] == [
        ("np.asarray(x).max()", True, 2),
        ("np.asarray(x).ndim", True, 2),
        ("np.asarray(x).max()", False, 2),
        ("undefined_name", False, 2),
    ]  # seen before the answer zeroed x; an expression that raises is false
    found = reach.unreached([path])
    assert len(found) == 2 and "never reach 'np.asarray(x).max() > 5' (2 calls of f)" in found[0]


def test_an_answer_function_without_declared_edges_is_named(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook("points: [1]", SOLUTION, HIDDEN), path)
    assert reach.unreached([path]) == [
        f"{path.stem[:5]} q1: f declares no edges of its domain (reaches: in the question's configuration)"
    ]


def test_a_declared_function_the_solution_does_not_define_is_an_error(tmp_path):
    path = tmp_path / "nb.ipynb"
    nbformat.write(notebook('reaches:\n  g:\n    - "True"', SOLUTION, HIDDEN), path)
    with pytest.raises(ValueError, match="names 'g', which the solution does not define"):
        reach.reached(path)


@pytest.mark.parametrize("master", MASTERS, ids=lambda p: p.stem[:5])
def test_hidden_tests_reach_every_stated_edge(master):
    assert reach.unreached([master]) == []
