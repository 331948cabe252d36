"""The exercises are the heart of the course: every notebook a graded assignment with enough questions
of every kind, prose to the depth of a lecture, and hidden tests that reject typical mistakes.

The rules are checked on the masters (fast); the grading of every solution, blank and typical
wrong answer goes through the real autograder (``coursekit.grading.grader`` on the assignment's zip), like ``make
grade`` (coursekit/exercises.py).
"""

from __future__ import annotations

import re
from collections import defaultdict

import nbformat
import pytest

from conftest import ROOT
from coursekit import exercises
from coursekit.build.assign import question_rules
from coursekit.notebooks import is_assignment, master_notebooks

MASTERS = master_notebooks()
NB = {master: nbformat.read(master, as_version=4) for master in MASTERS}


def name(master) -> str:
    return master.stem[:5]


@pytest.mark.parametrize("master", MASTERS, ids=name)
def test_every_notebook_is_an_assignment_with_enough_questions(master):
    nb = NB[master]
    assert is_assignment(nb), f"{master.name} is not an otter assignment (no ASSIGNMENT CONFIG cell)"
    questions = exercises.questions(nb)
    assert len(questions) >= exercises.MIN_QUESTIONS, f"{master.name}: {len(questions)} questions"
    assert len({q.name for q in questions}) == len(questions), "question names repeat"
    for q in questions:
        assert q.kind in exercises.KINDS, f"{master.name} {q.name}: kind {q.kind!r} is not one of {exercises.KINDS}"
        assert q.solution.strip(), f"{master.name} {q.name}: no solution"
        assert q.public_tests, f"{master.name} {q.name}: no public test (students need feedback on the form)"
        assert q.hidden_tests, f"{master.name} {q.name}: no hidden test"
        assert q.prompt.strip(), f"{master.name} {q.name}: no prompt"
        if q.kind == "derive":
            assert "Derive" in q.prompt, f"{master.name} {q.name}: a derive question's prompt says *Derive*"


def test_every_chapter_mixes_the_three_kinds_and_the_course_has_enough_questions():
    kinds = defaultdict(set)
    total = 0
    for master in MASTERS:
        questions = exercises.questions(NB[master])
        kinds[master.stem[:2]].update(q.kind for q in questions)
        total += len(questions)
    assert total >= 60, f"the course has {total} graded questions"
    for chapter, found in kinds.items():
        assert found == set(exercises.KINDS), f"chapter {chapter} has only {sorted(found)}"


@pytest.mark.parametrize("master", MASTERS, ids=name)
def test_every_question_has_typical_wrong_answers(master):
    questions = {q.name: q for q in exercises.questions(NB[master])}
    wrong = exercises.wrong_answers(master)
    assert set(wrong) <= set(questions), f"wrong answers for unknown questions {set(wrong) - set(questions)}"
    for question in questions.values():
        entries = wrong.get(question.name) or []
        assert entries, f"{master.name} {question.name}: no typical wrong answer in {exercises.WRONG_ANSWERS.name}/"
        assert any("mistake" in entry for entry in entries), f"{master.name} {question.name}: no mistake catalogued"
        for entry in entries:
            if "correct" in entry:  # a right answer in another form: it must score full marks
                assert set(entry) == {"correct", "answer"} and entry["correct"].strip(), entry
            else:
                assert {"mistake", "answer"} <= set(entry) <= {"mistake", "answer", "feedback", "shortcut"}, entry
                assert entry["mistake"].strip(), entry
            assert entry["answer"].strip() != question.solution.strip(), f"{question.name}: the entry is the solution"


@pytest.mark.parametrize("master", MASTERS, ids=name)
def test_prose_is_deep_enough(master):
    words = exercises.prose_words(NB[master])
    assert words >= exercises.MIN_PROSE_WORDS, f"{master.name}: {words} words of prose"


EXERCISE = re.compile(r"^:::\{exercise\}\s*\n:label:\s*(\S+)", re.M)
SOLUTION = re.compile(r"^:::\{solution\}\s*(\S+)", re.M)


def test_check_your_understanding_and_pitfalls_in_every_notebook():
    labels = []
    for master in MASTERS:
        text = "\n".join(c.source for c in NB[master].cells if c.cell_type == "markdown")
        asked, answered = EXERCISE.findall(text), SOLUTION.findall(text)
        assert len(asked) >= 2, f"{master.name}: {len(asked)} check-your-understanding exercises"
        assert sorted(asked) == sorted(answered), f"{master.name}: exercises {asked}, solutions {answered}"
        assert re.search(r"^:::\{admonition\} Common pitfalls", text, re.M), f"{master.name}: no pitfalls box"
        labels += asked
    assert len(labels) == len(set(labels)), "exercise labels must be unique in the book"


def test_prose_words_count_runs_of_letters_and_digits_math_and_code_included():
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("Two words $x + y = z$ and `code here` then\n\n$$\na + b\n$$\n"),
        nbformat.v4.new_markdown_cell(":::{exercise}\n:label: cyu-x\n\nA [link](https://x.org/a-b).\n:::"),
        nbformat.v4.new_code_cell("not counted at all"),
    ]
    assert exercises.prose_words(nb) == 11 + 11  # every letter-digit run, the directive's and link's too


def test_grading_copy_keeps_imports_and_answers_only():
    student = nbformat.v4.new_notebook()
    answer = nbformat.v4.new_code_cell("def f():\n    ...")
    answer.metadata["tags"] = ["otter_answer_cell"]
    student.cells = [
        nbformat.v4.new_code_cell("# Initialize Otter\nimport otter"),
        nbformat.v4.new_code_cell("import numpy as np"),
        nbformat.v4.new_markdown_cell("lecture"),
        nbformat.v4.new_code_cell("slow_experiment()"),
        answer,
        nbformat.v4.new_code_cell('grader.check("q1")'),
    ]
    copy = exercises.grading_copy(student, {0: "def f():\n    return 1"})
    assert [c.source for c in copy.cells] == [
        "# Initialize Otter\nimport otter",
        "import numpy as np",
        "def f():\n    return 1",
        'grader.check("q1")',
    ]
    assert [c.source for c in exercises.grading_copy(student, {}).cells][-2] == "def f():\n    ..."


@pytest.fixture(scope="module")
def graded(release, tmp_path_factory, request):
    """Solutions, blanks and, of the catalogue, each question's first mistake and first shortcut
    (``exercises.sample``); every entry with ``--every-wrong-answer`` or ``python -m coursekit
    exercises check``, which an author runs after changing a question."""
    rows = exercises.grade_variants(
        MASTERS,
        release / "student",
        release / "autograder",
        tmp_path_factory.mktemp("exercise-submissions"),
        sampled=not request.config.getoption("--every-wrong-answer"),
    )
    by_notebook = defaultdict(list)
    for row in rows:
        by_notebook[row["notebook"]].append(row)
    return by_notebook


@pytest.mark.slow
@pytest.mark.parametrize("master", MASTERS, ids=name)
def test_solutions_score_full_blanks_zero_and_typical_mistakes_less(graded, master):
    rows = graded[master.stem]
    assert {r["variant"] for r in rows} >= {"solution", "blank", "wrong-1"}
    bad = [
        f"{r['variant']} {r['question']}: {r['score']:g} of {r['possible']:g}, wanted {r['wanted']}"
        f" {r['mistake']} {r['error']}"
        for r in rows
        if not r["ok"]
    ]
    assert not bad, "\n".join(bad)


def test_the_sample_holds_the_first_mistake_shortcut_and_right_answer_in_catalogue_order():
    mistakes = [{"mistake": f"m{i}"} for i in range(3)]
    shortcuts = [{"mistake": f"s{i}", "shortcut": "a library call"} for i in range(2)]
    assert exercises.sample([shortcuts[0], *mistakes, shortcuts[1]]) == [shortcuts[0], mistakes[0]]
    assert exercises.sample(mistakes) == [mistakes[0]]
    right = [{"correct": f"r{i}"} for i in range(2)]
    assert exercises.sample([right[0], *mistakes, right[1]]) == [right[0], mistakes[0]]
    assert exercises.sample([]) == []


@pytest.mark.parametrize(
    "check, shown",
    [
        ("assert not equivalent(q4_estimate, N / m, points)[0], 'N / m estimates 1 / theta'", True),
        ("assert not behaves_like(pi_hat, m1 / (m0 + m1)), 'the kept spam rate'", True),
        ("assert q3 != 180, 'priors sum to one'", True),
        ("assert int(q3) != 180, 'priors sum to one'", True),
        ("assert abs(q4 - 20 / 24) > 1e-3, 'the weekly reading'", True),
        ("for value, message in mistakes.items():\n    assert abs(q4 - value) > 5e-4, message", True),
        ("assert digest(q5) not in slips, slips.get(digest(q5))", False),
        ("assert 0 <= q5 <= 1, 'a probability'", False),
        ("assert round(float(q5), 6) != float(q5), 'rounded'", False),
    ],
)
def test_a_public_check_that_shows_a_slip_is_found(check, shown):
    assert bool(exercises._SHOWN_SLIP.search(check)) is shown


def test_wrong_answers_live_beside_the_masters_only():
    files = sorted(p.stem for p in exercises.WRONG_ANSWERS.glob("*.yml"))
    assert files == sorted(m.stem for m in MASTERS if is_assignment(NB[m])), files
    assert exercises.WRONG_ANSWERS.parent == ROOT / "notebooks"


# --------------------------------------------------------------------------- the rules of a fair grade


@pytest.mark.parametrize("master", MASTERS, ids=name)
def test_no_question_breaks_the_rules_of_a_fair_grade(master):
    # Every point from a hidden check, options without a length cue, derivations graded as mathematics
    # (or their shortcuts catalogued), stated bans enforced, feedback for every known mistake.
    assert exercises.violations(master) == []


def test_a_choice_question_that_does_not_vary_is_found(tmp_path):
    master = next(m for m in MASTERS if m.stem.startswith("02.04"))
    nb = nbformat.read(master, as_version=4)
    at = next(i for i, c in enumerate(nb.cells) if c.cell_type == "raw" and "name: q5" in c.source)
    nb.cells[at].source = nb.cells[at].source.replace("\noptions: shuffle", "")
    prompt = nb.cells[at + 1]
    prompt.source = re.sub(r"\s*<!--not:.*?-->", "", prompt.source, flags=re.S)  # a set without its not-forms
    nbformat.write(nb, tmp_path / master.name)
    found = exercises.violations(tmp_path / master.name)
    assert found == [
        "02.04 q5: a choice question shuffles its options per student (options: shuffle)",
        "02.04 q5: every statement of a true/false question has a not-form, <!--not: ...--> (missing: a, b, c, d, e, "
        "f, g)",
    ], found
    nb.cells[at].source += "\noptions: shuffle"
    solution = next(c for c in nb.cells[at:] if c.cell_type == "code" and c.source.startswith("q5 = "))
    solution.source = 'q5 = "b"  # SOLUTION\nq5'  # one letter of seven
    nbformat.write(nb, tmp_path / master.name)
    found = exercises.violations(tmp_path / master.name)
    assert found == [
        "02.04 q5: one letter of 7 options is shared by one student in 7, whatever their order: ask for the set "
        "of the right statements, each with a not-form"
    ], found


def test_every_autograder_zip_carries_the_bans_of_its_questions(release):
    import json
    import zipfile

    banned = 0
    for master in MASTERS:
        if not is_assignment(NB[master]):
            continue
        with zipfile.ZipFile(release / "autograder" / f"{master.stem}-autograder.zip") as zipped:
            shipped = json.loads(zipped.read("questions.json"))
        assert shipped == question_rules(NB[master]), master.stem
        banned += sum(bool(rule.get("forbids")) for rule in shipped.values())
    assert banned >= 10, "the masters' bans no longer reach the grader"
