"""A class whose truth is known, for the instructor's report (coursekit.grading.report) to recover.

Each student has an ability and each question a difficulty, drawn (seeded) as a Rasch model has them:
a student answers a question right with probability ``1 / (1 + exp(difficulty - ability))``. A right
answer is the master's solution; a wrong one is one of the catalogue's wrong answers to that question
(``notebooks/wrong-answers/``) that earns nothing, or a blank: one mistake per question is *planted* as the one most
often made, and the others follow it in a random order with weights falling as ``1 / rank**2``
(wrong answers in a class are that lopsided), a blank taking :data:`BLANK_SHARE` of the wrong
answers. One student copies another's whole notebook, which holds the rarest named mistake of
:data:`COPIED_QUESTIONS` questions.

What each answer scores and why comes from ``outcomes``: ``(variant, question) -> (score, reason,
seconds)``, where a variant is ``"solution"``, ``"blank"`` or ``"wrong-K"`` (the K-th catalogue entry,
as :func:`coursekit.exercises.variants` numbers them). tests/coursekit/grading/test_report.py takes
them from the real grader; :func:`synthetic_outcomes` makes them up from the catalogue's words, for
the page's browser test and the benchmark, where what the grader says matters less than its shape.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

SEED = 2025
STUDENTS = 200
BLANK_SHARE = 0.05
COPIED_QUESTIONS = 4


@dataclass
class SimulatedClass:
    abilities: dict[str, float]  # student -> ability
    difficulties: dict[str, float]  # question -> difficulty
    planted: dict[str, int]  # question -> the catalogue index of the mistake made most often
    rarest: dict[str, int]  # question -> the catalogue index of its least likely named mistake
    answers: dict[str, dict[str, str]]  # student -> question -> variant
    copying: tuple[str, str]  # (the original, the copy)


def wrong_indices(entries: list[dict]) -> list[int]:
    """The catalogue indices of a question's wrong answers (its ``correct`` entries are right answers)."""
    return [i for i, e in enumerate(entries) if "mistake" in e]


def simulate(
    pool: dict[str, list[int]], named: dict[str, set[int]], students: int = STUDENTS, seed: int = SEED
) -> SimulatedClass:
    """The class's answers.

    Parameters
    ----------
    pool : dict
        Question -> the catalogue indices of the wrong answers students give, for every question of
        the assignment, in order. Each should earn nothing, so that a question is right or wrong as
        in the Rasch model (:func:`wrong_indices` gives them all).
    named : dict
        Question -> the indices in its pool that the grader's reason names (their feedback words).
        The planted mistake is one of them where there are any.
    """
    rng = np.random.default_rng(seed)
    questions = list(pool)
    names = [f"student-{i:03d}" for i in range(1, students + 1)]
    abilities = dict(zip(names, rng.normal(0.0, 1.0, students), strict=True))
    difficulties = dict(zip(questions, rng.normal(0.0, 1.2, len(questions)), strict=True))
    planted, rarest, weights = {}, {}, {}
    for q in questions:
        wrong = sorted(pool[q])
        first = int(rng.choice(sorted(named.get(q) or wrong)))
        rest = [i for i in rng.permutation(wrong) if i != first]
        order = [first, *map(int, rest)]
        share = 1.0 / np.arange(1, len(order) + 1) ** 2
        share = (1 - BLANK_SHARE) * share / share.sum()
        weights[q] = ([f"wrong-{i + 1}" for i in order] + ["blank"], np.append(share, BLANK_SHARE))
        planted[q] = first
        by_weight = [i for i in reversed(order) if i in (named.get(q) or ())]
        if by_weight and by_weight[0] != first:
            rarest[q] = by_weight[0]
    answers = {}
    for name in names:
        answers[name] = {}
        for q in questions:
            right = rng.random() < 1 / (1 + np.exp(difficulties[q] - abilities[name]))
            variants, p = weights[q]
            answers[name][q] = "solution" if right else str(rng.choice(variants, p=p))
    original, copy = (str(n) for n in rng.choice(names, 2, replace=False))
    for q in [q for q in questions if q in rarest][:COPIED_QUESTIONS]:
        answers[original][q] = f"wrong-{rarest[q] + 1}"
    answers[copy] = dict(answers[original])
    return SimulatedClass(abilities, difficulties, planted, rarest, answers, (original, copy))


def compose(
    simulated: SimulatedClass, outcomes: dict[tuple[str, str], tuple[float, str, float]], assignment: str
) -> list[dict]:
    """The rows of ``scores.csv`` the class's notebooks would get, question by question from ``outcomes``."""
    rows = []
    for name, answers in simulated.answers.items():
        row = {"submission": f"{name}/{assignment}.ipynb", "assignment": assignment}
        seconds = []
        for q, variant in answers.items():
            score, reason, took = outcomes[variant, q]
            row[q], row[f"{q} reason"] = score, reason
            seconds.append(took)
        possible = sum(outcomes["solution", q][0] for q in answers)
        row.update(
            total=sum(row[q] for q in answers),
            possible=possible,
            seconds=round(float(np.mean(seconds)), 1),
            isolated="yes",
            error="",
        )
        rows.append(row)
    return rows


def synthetic_outcomes(
    catalogue: dict[str, list[dict]], possible: dict[str, float], seed: int = SEED
) -> dict[tuple[str, str], tuple[float, str, float]]:
    """What the grader might say, made up: a named mistake's reason holds its feedback words, the
    others say how many tests failed; a wrong answer earns nothing, a blank nothing."""
    rng = np.random.default_rng(seed)
    outcomes = {}
    for q, entries in catalogue.items():
        outcomes["solution", q] = (possible[q], "", float(rng.uniform(1, 3)))
        outcomes["blank", q] = (0.0, "failed 2 of 2 tests; Assign your answer first.", float(rng.uniform(1, 3)))
        for i, entry in enumerate(entries):
            if "correct" in entry:
                outcome = (possible[q], "")
            elif entry.get("feedback"):
                outcome = (0.0, f"failed 2 of 2 tests; {entry['feedback']}.")
            else:
                outcome = (0.0, "failed 1 of 2 tests")
            outcomes[f"wrong-{i + 1}", q] = (*outcome, float(rng.uniform(1, 3)))
    return outcomes
