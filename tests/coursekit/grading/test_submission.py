"""A submitted notebook read as untrusted input (coursekit.grading.submission): every way a file can fail
to be a notebook is an Unreadable error in plain ASCII, and splitting its first cell costs a bounded
amount, however it is built."""

from __future__ import annotations

import json
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coursekit.grading import submission
from coursekit.grading.submission import MAX_SPLIT, Unreadable, assignment_name, code_cells, read, statements

NAME = "01.01-Bayes-Rule-and-Maximum-Likelihood"


def notebook(**metadata) -> dict:
    return {
        "cells": [{"cell_type": "code", "source": "import numpy as np\n", "metadata": {}}],
        "metadata": metadata,
        "nbformat": 4,
        "nbformat_minor": 5,
    }


@pytest.mark.parametrize(
    "text, says",
    [
        ("[" * 100_000, "nested too deep"),
        (json.dumps(notebook())[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deep"),
        ("{ this is not json", "not JSON"),
        ("[1, 2]", "no list of cells"),
        ('{"cells": {}}', "no list of cells"),
    ],
)
def test_files_that_are_not_notebooks_say_why(tmp_path, text, says):
    path = tmp_path / "x.ipynb"
    path.write_text(text)
    with pytest.raises(Unreadable, match=says) as raised:
        read(path)
    str(raised.value).encode("ascii")


def test_bytes_that_are_not_text_and_files_too_large_are_unreadable(tmp_path, monkeypatch):
    (tmp_path / "binary.ipynb").write_bytes(b"\xff\xfe\x00{")
    with pytest.raises(Unreadable, match="not UTF-8"):
        read(tmp_path / "binary.ipynb")
    monkeypatch.setattr(submission, "MAX_BYTES", 1000)
    (tmp_path / "large.ipynb").write_text(json.dumps(notebook(padding="x" * 2000)))
    with pytest.raises(Unreadable, match="larger than"):
        read(tmp_path / "large.ipynb")
    with pytest.raises(Unreadable, match="cannot be read"):
        read(tmp_path / "missing.ipynb")


@pytest.mark.parametrize("name", ["\udcff", "../../autograder/x", "a b", "", 3, ["x"], {"a": 1}, "x" * 101])
def test_an_assignment_name_is_a_plain_name_or_nothing(tmp_path, name):
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(notebook(otter={"assignment_name": name})))  # JSON escapes the surrogate
    nb = read(path)
    if name == "":
        assert assignment_name(nb) is None
    else:
        with pytest.raises(Unreadable, match="names no assignment"):
            assignment_name(nb)


def test_a_plain_name_is_read():
    assert assignment_name(notebook(otter={"assignment_name": NAME})) == NAME
    assert assignment_name(notebook()) is None and assignment_name({"cells": [], "metadata": 3}) is None


@settings(max_examples=60)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "cell_type": st.sampled_from(["code", "markdown", 3]),
                "source": st.one_of(
                    st.text(max_size=30),
                    st.lists(st.one_of(st.text(max_size=5), st.integers())),
                    st.integers(),
                    st.none(),
                ),
                "metadata": st.one_of(
                    st.none(),
                    st.integers(),
                    st.fixed_dictionaries(
                        {"tags": st.one_of(st.integers(), st.lists(st.sampled_from(["otter_answer_cell", "x"])))}
                    ),
                ),
            }
        ),
        max_size=8,
    )
)
def test_any_cells_give_sources_and_owners(cells):
    cells = cells + [{"cell_type": "code", "source": 'grader.check("q1")'}]
    sources, owner = code_cells({"cells": cells})
    assert all(isinstance(s, str) for s in sources)
    assert set(owner.values()) <= {"q1"} and all(0 <= i < len(sources) for i in owner)


def test_a_long_first_cell_is_not_parsed():
    huge = "x\n" * 2_000_000  # two million names: ast.parse took 3 GB
    tracemalloc.start()
    try:
        assert statements(huge) == [huge]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 2**20
    short = "import numpy as np\n" * (MAX_SPLIT // 40)
    assert len(statements(short)) == MAX_SPLIT // 40
    assert statements("def f(:\n") == ["def f(:\n"]
