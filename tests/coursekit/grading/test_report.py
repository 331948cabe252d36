"""The instructor's report (coursekit.grading.report) on a class whose truth is known.

Grading 200 whole notebooks would take the suite an hour, so the real grader (``make grade``'s
machinery, :func:`coursekit.grading.gradebook.grade`) grades only the distinct answers of one
assignment, 1.1's six questions, once: the solution, a blank and each catalogued wrong answer, as
whole notebooks (:func:`coursekit.exercises.variants`). Questions are graded independently: each
answer cell is checked by its own question's tests on the values it defined, so a question's score
and reason depend on its own answer alone. That is asserted on the graded variants (an answer scores
the same in every notebook that holds it) and on two notebooks that mix answers of different
variants, graded too. Each of the 200 simulated students' rows (tests/simulated_class.py: a Rasch
model, seeded) is then composed question by question from those outcomes, written by
:func:`coursekit.grading.gradebook.write_scores` and reported as ``make report`` does.
"""

from __future__ import annotations

import csv
import re

import nbformat
import pytest
import simulated_class
from scipy.stats import spearmanr

from coursekit import exercises
from coursekit.build.assign import assign_one
from coursekit.grading import gradebook, item_analysis, report
from coursekit.repository import MASTERS

STEM = "01.01-Bayes-Rule-and-Maximum-Likelihood"
MASTER = MASTERS / f"{STEM}.ipynb"
pytestmark = pytest.mark.slow
# Two notebooks of mixed answers: question -> the variant whose answer it takes.
MIXED = {
    "mixed-1": {"q1": "wrong-2", "q2": "solution", "q3": "wrong-1", "q4": "wrong-3", "q5": "blank", "q6": "wrong-4"},
    "mixed-2": {"q1": "blank", "q2": "wrong-4", "q3": "solution", "q4": "wrong-1", "q5": "wrong-6", "q6": "solution"},
}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Every distinct answer of 1.1 graded once; (variant, question) -> (score, reason, seconds)."""
    folder = tmp_path_factory.mktemp("report")
    dist = folder / "dist"
    assign_one(MASTER, dist, run_tests=False)
    student = nbformat.read(dist / "student" / MASTER.name, as_version=4)
    subs, _ = exercises.variants(MASTER, student, whole=True)
    questions = [q.name for q in exercises.questions(nbformat.read(MASTER, as_version=4))]
    sources = {name: [c.source for c in exercises.answer_cells(nb)] for name, nb in subs.items()}
    for name, takes in MIXED.items():
        subs[name] = exercises.whole_copy(student, {i: sources[takes[q]][i] for i, q in enumerate(questions)})
    for name, nb in subs.items():
        (folder / "variants" / name).mkdir(parents=True)
        nbformat.write(nb, folder / "variants" / name / MASTER.name)
    rows = gradebook.grade(folder / "variants", folder / "variants" / "scores.csv", dist / "autograder")
    assert all(not row.get("error") for row in rows), [row["error"] for row in rows]
    outcomes = {
        (row["submission"].split("/")[0], q): (float(row[q]), row.get(f"{q} reason", ""), row["seconds"])
        for row in rows
        for q in questions
    }
    return {
        "outcomes": outcomes,
        "questions": questions,
        "sources": sources,
        "dist": dist,
        "folder": folder,
        "catalogue": report.catalogue(STEM),
    }


def test_questions_are_graded_independently(graded):
    """An answer scores the same, with the same reason, in every notebook that holds it."""
    outcomes, sources, questions = graded["outcomes"], graded["sources"], graded["questions"]
    by_answer = {}
    for (variant, q), (score, reason, _) in outcomes.items():
        if variant in sources:
            by_answer.setdefault((q, sources[variant][questions.index(q)]), set()).add((score, reason))
    assert all(len(found) == 1 for found in by_answer.values()), [f for f in by_answer.values() if len(f) > 1]
    assert sum(len(v) for v in by_answer.values()) < sum(1 for v, _ in outcomes if v in sources), "no answer repeats"
    for name, takes in MIXED.items():
        for q, variant in takes.items():
            assert outcomes[name, q][:2] == outcomes[variant, q][:2], (name, q)


@pytest.fixture(scope="module")
def simulated(graded):
    """The simulated class, its scores.csv, its report and its statistics."""
    outcomes, catalogue = graded["outcomes"], graded["catalogue"]
    pool = {
        q: [i for i in simulated_class.wrong_indices(entries) if outcomes[f"wrong-{i + 1}", q][0] == 0]
        for q, entries in catalogue.items()
    }
    named = {
        q: {
            i
            for i in pool[q]
            if catalogue[q][i].get("feedback")
            and catalogue[q][i]["feedback"].casefold() in outcomes[f"wrong-{i + 1}", q][1].casefold()
        }
        for q in catalogue
    }
    truth = simulated_class.simulate(pool, named)
    folder = graded["folder"] / "class"
    gradebook.write_scores(simulated_class.compose(truth, outcomes, STEM), folder / "scores.csv")
    page = report.write(folder / "scores.csv", graded["dist"] / "autograder")
    rows = item_analysis.read_scores(folder / "scores.csv")
    summary = item_analysis.summarize(STEM, rows, report.points(STEM, graded["dist"] / "autograder"), catalogue)
    return {"truth": truth, "named": named, "page": page, "rows": rows, "summary": summary}


def test_facility_ranks_the_questions_as_their_true_difficulties(simulated):
    truth, summary = simulated["truth"], simulated["summary"]
    facility = [q.facility for q in summary.questions]
    rho = spearmanr(facility, [-truth.difficulties[q.name] for q in summary.questions]).statistic
    print(f"\nSpearman's rho of facility and true difficulty (negated): {rho:.3f}")
    assert rho >= 0.9, list(zip(facility, truth.difficulties.values(), strict=True))


def test_the_most_common_named_mistakes_are_the_planted_ones(simulated, graded):
    truth, summary, catalogue = simulated["truth"], simulated["summary"], graded["catalogue"]
    checked = 0
    for question in summary.questions:
        if simulated["named"][question.name]:
            top = next(m for m in question.mistakes if m.named)
            assert top.label == catalogue[question.name][truth.planted[question.name]]["mistake"], question.name
            assert top.count > sum(m.count for m in question.mistakes if m.named and m is not top) / 2
            checked += 1
        else:  # 1.1 q6 is a choice: its catalogue names no feedback, so nothing of it is named
            assert [m.named for m in question.mistakes] == [False]
    assert checked >= 4


def test_the_copying_pair_is_flagged_and_no_honest_pair(simulated):
    copying = sorted(f"{name}/{STEM}.ipynb" for name in simulated["truth"].copying)
    assert [[p.first, p.second] for p in simulated["summary"].pairs] == [copying]
    assert len(simulated["summary"].pairs[0].shared) >= item_analysis.MIN_SHARED


def test_the_page_is_self_contained_and_states_its_numbers(simulated):
    page = simulated["page"].read_text()
    assert not re.search(r"<(script|link)\b|(src|href)=\"(?!data:|#)", page), "the page loads something"
    (alt,) = re.findall(r'<img src="data:image/svg\+xml;base64,[^"]+" alt="([^"]+)"', page)
    totals = [row["total"] for row in simulated["rows"]]
    assert f"the {len(totals)} graded submissions" in alt and f"highest {max(totals):g}" in alt
    counts = [int(c) for c in re.findall(r": (\d+)(?=;|\.$)", alt)]
    assert sum(counts) == len(totals)
    summary = simulated["summary"]
    for question in summary.questions:
        assert f'<td class="n">{question.facility:.2f}</td>' in page
    assert all(name in page for name in simulated["truth"].copying)


def test_the_gradebook_has_each_students_total(simulated):
    with (simulated["page"].parent / "gradebook.csv").open() as handle:
        table = list(csv.DictReader(handle))
    assert list(table[0])[:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert len(table) == len(simulated["truth"].answers)
    totals = {row["submission"].split("/")[0]: row["total"] for row in simulated["rows"]}
    assert {row["SIS Login ID"]: float(row[STEM]) for row in table} == totals
