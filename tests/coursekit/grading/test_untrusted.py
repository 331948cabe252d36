"""Untrusted text (coursekit.grading.untrusted): whatever bytes arrive, JSON parses within its bounds or fails
with one kind of error, and what reaches the scores file is plain ASCII of bounded length."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coursekit.grading.untrusted import UntrustedInput, identifier, json_values, load_json, plain


@given(st.text(alphabet=st.characters(blacklist_categories=()), max_size=400), st.integers(3, 500))
def test_plain_text_is_printable_ascii_of_bounded_length(text, limit):
    out = plain(text, limit)
    assert len(out) <= limit and all(" " <= c <= "~" for c in out)
    out.encode("ascii")  # never fails
    if all(" " <= c <= "~" for c in text) and len(text) <= limit:
        assert out == text


def test_plain_text_escapes_what_broke_the_scores_file():
    assert plain("\udcff") == "?" and plain("a\nb\r,c") == "a?b?,c"


@given(st.text(max_size=80))
def test_an_identifier_is_kept_only_when_it_is_one(name):
    kept = identifier(name)
    assert kept == name if (name.isidentifier() and name.isascii() and len(name) <= 64) else kept == "an exception"


@pytest.mark.parametrize("name", ["/tmp/lecturekit-grader-x", "load 3.2 2.1", "a" * 65, "\udcff", "", 3, None, "é"])
def test_names_that_carry_anything_but_a_name_are_replaced(name):
    assert identifier(name) == "an exception"


@given(st.binary(max_size=300))
def test_any_bytes_parse_or_fail_with_one_error(raw):
    try:
        load_json(raw, 1000, 1000)
    except UntrustedInput as error:
        str(error).encode("ascii")


@pytest.mark.parametrize(
    "raw, says",
    [
        (b"[" * 100_000, "not JSON \\(nested too deep\\)"),
        (b'{"a": ' * 50_000 + b"1" + b"}" * 50_000, "not JSON \\(nested too deep\\)"),
        (b"\xff\xfe{}", "not UTF-8 text"),
        (b"x" * 2_000_000, "larger than 1 MiB"),
        (b"[" + b"1," * 300_000 + b"1]", "more than 200,000 JSON values"),
    ],
)
def test_what_the_grader_refuses_and_why(raw, says):
    with pytest.raises(UntrustedInput, match="the notebook is " + says if "values" not in says else says):
        load_json(raw, 2**20, 200_000, "the notebook")


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
        max_leaves=30,
    )
)
def test_the_count_of_values_bounds_what_json_holds(value):
    raw = json.dumps(value).encode()

    def count(v):
        if isinstance(v, list):
            return 1 + sum(count(x) for x in v)
        if isinstance(v, dict):
            return 1 + sum(1 + count(x) for x in v.values())
        return 1

    assert json_values(raw) >= count(value)
    assert load_json(raw, 10**6, json_values(raw)) == value
