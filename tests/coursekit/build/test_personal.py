"""Each student's variant: the declarations, the option order, the notebook made for it, the answers read back."""

from __future__ import annotations

import string

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coursekit.build.personal import answer_for, declarations, personalise, template
from coursekit.choices import translate
from coursekit.grading.owners import Owners, recorded_tag
from coursekit.grading.variant import PUBLIC, VariantError, Variants
from coursekit.variants import Student

VARIANT_CELL = """# VARIANT q1
PUBLIC = {"count": 3, "_answer": 9}


def draw(rng):
    count = int(rng.integers(2, 40))
    return {"count": count, "_answer": count**2}


def valid(v):
    return v["count"] != 3  # every other variant differs from the public one


VARIANT = PUBLIC
"""
PROMPT = """**Question 1.** Square 3<!--v:count-->. Which are true?

- (a) first statement
- (b) second statement,
  on two lines
- (c) third statement

Graded as a whole."""


def master() -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(VARIANT_CELL)
    cell.metadata["tags"] = ["variant"]
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell,
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 1\noptions: shuffle"),
        nbformat.v4.new_markdown_cell(PROMPT),
    ]
    nb.metadata["otter"] = {
        "tests": {"q1": "from otter.test_files import test_case\n\nOK_FORMAT = False\n\nname = 'q1'\n"}
    }
    return nb


def test_a_declaration_is_read_and_its_variants_drawn():
    declared = declarations(master())
    assert declared.options == {"q1": ["a", "b", "c"]}
    assert declared.params("q1", PUBLIC) == {"count": 3, "_answer": 9}
    drawn = [declared.params("q1", seed) for seed in range(1, 60)]
    assert all(v["_answer"] == v["count"] ** 2 and v["count"] != 3 for v in drawn)  # valid redraws
    assert declared.params("q1", 17) == declared.params("q1", 17)  # a seed's variant never changes
    assert len({v["count"] for v in drawn}) > 10
    assert declared.order("q1", PUBLIC) == {"a": "a", "b": "b", "c": "c"}
    assert {tuple(declared.order("q1", seed).values()) for seed in range(1, 60)} == {
        ("a", "b", "c"),
        ("a", "c", "b"),
        ("b", "a", "c"),
        ("b", "c", "a"),
        ("c", "a", "b"),
        ("c", "b", "a"),
    }
    declared.check(50)


def test_a_variant_is_drawn_once_and_each_caller_gets_its_own_copy():
    declared = declarations(master())
    space = declared.space("q1")
    calls, draw = [], space["draw"]
    space["draw"] = lambda rng: calls.append(1) or draw(rng)
    first = declared.params("q1", 5)
    first["count"] = -1  # a caller that changes what it got changes nothing for the next
    assert declared.params("q1", 5)["count"] != -1 and declared.of(5)["q1"]["params"]["count"] != -1
    assert len(calls) >= 1 and declared.tag(5) == declared.tag(5)
    drawn = len(calls)
    declared.params("q1", 5), declared.of(5), declared.shown(5)
    assert len(calls) == drawn  # the seed's numbers were drawn once


@pytest.mark.parametrize(
    ("source", "says"),
    [
        (
            "# VARIANT q1\nPUBLIC = {'x': 1}\ndef draw(rng):\n    return {'y': 1}\nVARIANT = PUBLIC\n",
            "draw returns the keys",
        ),
        (
            "# VARIANT q1\nPUBLIC = {'x': 1}\ndef draw(rng):\n    return {'x': 1 / 0}\nVARIANT = PUBLIC\n",
            "ZeroDivisionError",
        ),
        (
            "# VARIANT q1\nPUBLIC = {'x': 1}\ndef draw(rng):\n    return {'x': 1}\ndef valid(v):\n    return False\n"
            "VARIANT = PUBLIC\n",
            "valid refused",
        ),
        ("# VARIANT q1\ndef draw(rng):\n    return {}\nVARIANT = 1\n", "defines no PUBLIC"),
        (
            "# VARIANT q1\nPUBLIC = {'x': 1}\ndef draw(rng):\n    return {'x': float('nan')}\nVARIANT = PUBLIC\n",
            "not plain literals",
        ),
    ],
)
def test_a_broken_declaration_fails_at_assign_with_its_question(source, says):
    with pytest.raises(VariantError, match=says):
        Variants({"q1": source}).check(20)


def test_the_master_must_show_variant_0_where_it_marks_a_number():
    nb = master()
    nb.cells[2].source = nb.cells[2].source.replace("3<!--v:count-->", "4<!--v:count-->")
    with pytest.raises(VariantError, match="the master must show variant 0"):
        template(nb, nb, declarations(nb))
    nb.cells[2].source = PROMPT.replace("<!--v:count-->", "<!--v:_answer-->")
    with pytest.raises(VariantError, match="names no public key"):
        template(nb, nb, declarations(nb))


def test_a_students_notebook_shows_their_numbers_and_order_and_none_of_the_graders():
    nb = master()
    declared = declarations(nb)
    base = template(nb, nb, declared)
    assert not any("VARIANT q1" in c.source for c in base.cells)  # the declaration stays in the master
    public = personalise(base, declared, PUBLIC)
    assert "Square 3." in public.cells[-1].source and "<!--" not in public.cells[-1].source
    for seed in range(1, 30):
        own = personalise(base, declared, seed)
        params, order = declared.params("q1", seed), declared.order("q1", seed)
        text = own.cells[-1].source
        assert f"Square {params['count']}." in text and "<!--" not in text
        lines = [line for line in text.splitlines() if line.startswith("- (")]
        bodies = {"a": "first", "b": "second", "c": "third"}
        assert [line[3] for line in lines] == ["a", "b", "c"]  # the letters stay in place
        assert [bodies[order[line[3]]] in line for line in lines] == [True] * 3
        assert text.count("on two lines") == 1 and text.endswith("Graded as a whole.")
        tests = own.metadata.otter.tests["q1"]
        assert f"VARIANT = {{'count': {params['count']}}}" in tests and "_answer" not in tests
        assert own.metadata.coursekit == {"variant": declared.tag(seed), "options": {"q1": order}}
        assert recorded_tag(own) == declared.tag(seed)


options = st.integers(2, 8).flatmap(lambda n: st.permutations(string.ascii_lowercase[:n]))


@given(options, st.data())
def test_an_answer_in_the_students_letters_is_read_in_the_masters(permutation, data):
    letters = sorted(permutation)
    order = dict(zip(letters, permutation, strict=True))  # student letter -> master letter
    chosen = data.draw(st.sampled_from(letters))
    subset = data.draw(st.sets(st.sampled_from(letters)))
    truths = tuple(data.draw(st.lists(st.booleans(), min_size=len(letters), max_size=len(letters))))
    for master_answer in (chosen, subset, truths):
        source = answer_for("q9", f"q9 = {master_answer!r}\n", {"options": order})
        space: dict = {}
        exec(source, space)  # noqa: S102 - the catalogue's answer, written for the master, made the student's
        assert translate(space["q9"], order) == master_answer
    assert translate("not a letter", order) == "not a letter" and translate(3, order) == 3


def test_a_notebook_carrying_another_students_variant_is_flagged():
    declared = declarations(master())
    owners = Owners([Student("ann"), Student("bob"), Student("cy")], b"k" * 32)
    tag = {s: declared.tag(owners.seed(s, "hw")) for s in ("ann", "bob")}
    assert owners.owner("ann/hw.ipynb") == "ann" and owners.owner("hw.ipynb") is None
    assert owners.owner("zed/hw.ipynb") is None
    assert owners.flag("ann", "hw", declared, tag["ann"]) == ""
    assert "another student (bob)" in owners.flag("ann", "hw", declared, tag["bob"])
    assert "public variant" in owners.flag("ann", "hw", declared, declared.tag(PUBLIC))
    assert "no variant of this roster" in owners.flag("ann", "hw", declared, "")
    assert owners.flag("ann", "hw", Variants(), "") == ""  # nothing varies: nothing to carry


def test_a_code_literal_and_a_span_of_text_take_the_variants_values():
    cell = nbformat.v4.new_code_cell(
        "# VARIANT q1\nPUBLIC = {'rows': [[0, 1], [1, 0]], 'n': 2, 'text': '- one\\n- two'}\n"
        "def draw(rng):\n    n = int(rng.integers(3, 9))\n"
        "    return {'rows': [[n, 1]] * n, 'n': n, 'text': '\\n'.join(['- x'] * n)}\nVARIANT = PUBLIC\n"
    )
    cell.metadata["tags"] = ["variant"]
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        cell,
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 1"),
        # a number's marker before a span: each keeps its own text
        nbformat.v4.new_markdown_cell("$2$<!--v:n--> sentences:\n\n<!--v:text-->- one\n- two<!--/v-->\n\nCount them."),
        nbformat.v4.new_code_cell("rows = [  # v:rows\n    [0, 1],\n    [1, 0],\n]\nq1 = ...\n"),
    ]
    declared = declarations(nb)
    base = template(nb, nb, declared)
    assert personalise(base, declared, PUBLIC).cells[-1].source == "rows = [[0, 1], [1, 0]]\nq1 = ...\n"
    own = personalise(base, declared, 5)
    params = declared.params("q1", 5)
    assert own.cells[-2].source == f"${params['n']}$ sentences:\n\n{params['text']}\n\nCount them."
    assert own.cells[-1].source == f"rows = {params['rows']!r}\nq1 = ...\n"
    solution = "rows = [  # v:rows\n    [0, 1],\n    [1, 0],\n]\nq1 = len(rows)\n"
    space: dict = {}
    exec(answer_for("q1", solution, declared.of(5)["q1"]), space)  # noqa: S102 - the solution, on variant 5
    assert space["q1"] == len(params["rows"]) and space["VARIANT"] == params
    nb.cells[-1].source = nb.cells[-1].source.replace("[1, 0]", "[1, 1]")
    with pytest.raises(VariantError, match="the master must show variant 0"):
        template(nb, nb, declared)
    nb.cells[-1].source = "rows = len([0])  # v:rows\n"
    with pytest.raises(VariantError, match="something other than a literal"):
        template(nb, nb, declared)


FORMS_PROMPT = """**Question 2.** Which are true? The set of letters.

- (a) first statement, true
  <!--not: first statement,
  now false-->
- (b) second statement, false
  <!--not: second statement, now true-->
- (c) third statement, without a not-form

Graded as a whole."""


def forms_master() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q2\npoints: 1\noptions: shuffle"),
        nbformat.v4.new_markdown_cell(FORMS_PROMPT),
    ]
    return nb


def test_each_student_sees_one_form_of_each_statement_and_the_answer_is_read_back():
    nb = forms_master()
    declared = declarations(nb)
    assert declared.forms == {"q2": ["a", "b"]} and declared.flips("q2", PUBLIC) == []
    assert Variants.from_json(declared.to_json()).forms == declared.forms
    base = template(nb, nb, declared)
    assert "<!--" not in personalise(base, declared, PUBLIC).cells[-1].source
    seen_flips = set()
    for seed in range(1, 40):
        own = personalise(base, declared, seed)
        entry = declared.of(seed)["q2"]
        flips, order = entry["flips"], entry["options"]
        seen_flips.add(tuple(flips))
        text = own.cells[-1].source
        assert "<!--" not in text and text.endswith("Graded as a whole.")
        shown = {line[3]: line[6:] for line in text.splitlines() if line.startswith("- (")}
        for student, master_letter in order.items():
            if master_letter == "c":
                assert shown[student].startswith("third statement")
            elif master_letter in flips:
                assert shown[student].startswith(("first statement, now false", "second statement, now true"))
            else:
                assert shown[student] in ("first statement, true", "second statement, false")
        assert own.metadata.coursekit["flips"] == {"q2": flips}
        right = {s for s, m in order.items() if (m == "a") != (m in flips)}  # the true statements this student sees
        assert translate(right, order, flips) == {"a"}
        space: dict = {}
        exec(answer_for("q2", 'q2 = {"a"}\n', entry), space)  # noqa: S102 - the solution, made the student's
        assert space["q2"] == right
    assert seen_flips == {(), ("a",), ("b",), ("a", "b")}  # each form drawn, independently


@given(options, st.data())
def test_an_answer_in_the_students_letters_and_forms_is_read_in_the_masters(permutation, data):
    letters = sorted(permutation)
    order = dict(zip(letters, permutation, strict=True))
    flips = sorted(data.draw(st.sets(st.sampled_from(letters))))
    subset = data.draw(st.sets(st.sampled_from(letters)))
    truths = tuple(data.draw(st.lists(st.booleans(), min_size=len(letters), max_size=len(letters))))
    for master_answer in (subset, frozenset(subset), truths, list(truths)):
        source = answer_for("q9", f"q9 = {master_answer!r}\n", {"options": order, "flips": flips})
        space: dict = {}
        exec(source, space)  # noqa: S102 - the catalogue's answer, written for the master, made the student's
        assert translate(space["q9"], order, flips) == master_answer
    if flips:  # a statement seen in its not-form: the master's answer on it, unread, is wrong
        assert translate(subset, {x: x for x in letters}, flips) != subset


@pytest.mark.parametrize(
    ("prompt", "says"),
    [
        ("- (a) one <!--not: not one--> and more\n- (b) two", "must end its option"),
        ("- (a) one <!--not: -->\n- (b) two", "needs a statement"),
    ],
)
def test_a_not_form_that_cannot_be_shown_is_refused(prompt, says):
    nb = forms_master()
    nb.cells[1].source = prompt
    with pytest.raises(VariantError, match=says):
        declarations(nb)
    nb.cells[0].source = "# BEGIN QUESTION\nname: q2\npoints: 1"
    nb.cells[1].source = "- (a) one\n  <!--not: not one-->\n- (b) two"
    with pytest.raises(VariantError, match="needs options: shuffle"):
        declarations(nb)
