"""Item analysis of a graded class: the numbers of the instructor's report, without the page.

From the rows of ``scores.csv`` (:mod:`coursekit.grading.gradebook`), per assignment:

* each question's mean score, **facility** (mean score over the points possible, in [0, 1]) and
  **discrimination**, the corrected item–total correlation (the question's score against the total
  of the assignment's *other* questions, in [-1, 1]; ``None`` where either is the same for every
  submission, or fewer than three were graded, since a correlation is then undefined);
* the shares of answers that timed out, crashed or ran out of memory (:func:`fault`, as
  ``summary.csv`` counts them);
* the mistakes most often made: each reason for lost points matched against the catalogue of named
  mistakes of that question (``notebooks/wrong-answers/NAME.yml``: the ``feedback`` words the
  grader's reason contains, or the mistake's own words), the rest grouped as not named;
* questions to review: discrimination below :data:`MIN_DISCRIMINATION`, facility below
  :data:`MIN_FACILITY` or above :data:`MAX_FACILITY`;
* pairs of submissions that share unusual wrong answers on several questions
  (:func:`shared_unusual`, a hint at copying to be judged by reading the two notebooks).

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import csv
import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path

import numpy as np

QUESTION = re.compile(r"q\d+\w*")
MIN_DISCRIMINATION = 0.1  # below: the question does not tell the stronger submissions from the weaker
MIN_FACILITY = 0.2  # below: too hard, or wrongly graded
MAX_FACILITY = 0.95  # above: too easy to tell anything
RARE_SHARE = 0.05  # a wrong answer given by at most this share of the class is unusual ...
MIN_SHARED = 3  # ... and a pair that shares unusual wrong answers on this many questions is shown
# What the grader's reason says of an answer that never got to be checked (grader._reason), as
# summary.csv counts them.
FAULTS = {"timed out": "timed out", "crashed": "process died", "out of memory": "GiB"}
NOT_NAMED = "not named by the catalogue"


def fault(reason: str) -> str | None:
    """Which fault a reason for lost points reports: ``"timed out"``, ``"crashed"``, ``"out of memory"`` or None.

    >>> fault("timed out after 20 s of CPU time in this cell"), fault("failed 1 of 2 tests")
    ('timed out', None)
    """
    return next((name for name, words in FAULTS.items() if words in reason), None)


def question_order(key: str) -> list:
    """Sort key of question names: ``q2`` before ``q10``."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", key)]


def read_scores(path: Path) -> list[dict]:
    """The rows of a ``scores.csv``, scores and seconds as numbers (a question not graded is absent)."""
    if not path.is_file():
        raise SystemExit(f"{path} does not exist: grade the folder first (make grade SUBMISSIONS=...)")
    rows = []
    with path.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            clean = {}
            for key, value in row.items():
                if QUESTION.fullmatch(key) or key in ("total", "possible", "seconds"):
                    if value not in ("", None):
                        clean[key] = float(value)
                else:
                    clean[key] = value or ""
            rows.append(clean)
    return rows


def graded_by_assignment(rows: list[dict]) -> dict[str, list[dict]]:
    """The graded rows (no ``error``), per assignment, in the order they come."""
    found: dict[str, list[dict]] = defaultdict(list)
    for row in rows:
        if not row.get("error") and row.get("assignment"):
            found[row["assignment"]].append(row)
    return dict(sorted(found.items()))


def questions_of(rows: list[dict]) -> list[str]:
    """The questions graded in these rows, in order."""
    return sorted({k for row in rows for k in row if QUESTION.fullmatch(k)}, key=question_order)


def facility(scores: list[float], possible: float) -> float:
    """Mean score over the points possible: 0 when no one scored, 1 when everyone scored full.

    Raises
    ------
    ValueError
        No score, or no points possible.
    """
    if not len(scores) or possible <= 0:
        raise ValueError(f"facility needs scores and points possible > 0 (got {len(scores)} scores, {possible})")
    return float(min(1.0, max(0.0, np.mean(scores) / possible)))


def discrimination(scores: np.ndarray, column: int) -> float | None:
    """Corrected item–total correlation of one question: its scores against the sum of the other columns.

    Parameters
    ----------
    scores : ndarray of shape (submissions, questions)
        Every question's score, one row per submission.
    column : int
        The question.

    Returns
    -------
    float or None
        Pearson's correlation, in [-1, 1]; None where it is undefined: fewer than three
        submissions, or the question's scores or the rest's totals the same for every submission.
    """
    scores = np.asarray(scores, dtype=float)
    item = scores[:, column]
    rest = scores.sum(axis=1) - item
    if len(item) < 3 or np.ptp(item) == 0 or np.ptp(rest) == 0:
        return None
    item, rest = item - item.mean(), rest - rest.mean()
    denominator = math.sqrt(float(item @ item) * float(rest @ rest))
    if denominator == 0:
        return None
    return float(np.clip(item @ rest / denominator, -1.0, 1.0))


def review(facility_: float, discrimination_: float | None) -> list[str]:
    """Why a question deserves a second look (empty: no reason).

    >>> review(0.97, 0.3), review(0.5, 0.05)
    (['facility 0.97 above 0.95'], ['discrimination 0.05 below 0.1'])
    """
    why = []
    if discrimination_ is not None and discrimination_ < MIN_DISCRIMINATION:
        why.append(f"discrimination {discrimination_:.2f} below {MIN_DISCRIMINATION:g}")
    if facility_ < MIN_FACILITY:
        why.append(f"facility {facility_:.2f} below {MIN_FACILITY:g}")
    if facility_ > MAX_FACILITY:
        why.append(f"facility {facility_:.2f} above {MAX_FACILITY:g}")
    return why


def named(reason: str, entries: list[dict]) -> str | None:
    """The catalogued mistake a reason for lost points names, or None.

    An entry is named when its ``feedback`` words are in the reason (the longest such words win, then
    catalogue order), else when its ``mistake`` words are; case is ignored. Entries that are right
    answers (``correct``) name nothing.

    >>> named("failed 2 of 2 tests; The prevalence is missing.", [{"mistake": "forgets the prior",
    ...       "feedback": "the prevalence is missing"}])
    'forgets the prior'
    """
    said = reason.casefold()
    wrong = [e for e in entries if e.get("mistake")]
    by_feedback = [e for e in wrong if e.get("feedback") and str(e["feedback"]).casefold() in said]
    if by_feedback:
        return str(max(by_feedback, key=lambda e: len(str(e["feedback"])))["mistake"])
    return next((str(e["mistake"]) for e in wrong if str(e["mistake"]).casefold() in said), None)


@dataclass
class Mistake:
    """A wrong answer as the report counts it: a named mistake, or the group of answers not named."""

    label: str
    count: int
    named: bool
    reasons: list[tuple[str, int]] = field(default_factory=list)  # the unnamed group's reasons, most frequent first


def mistakes(reasons: list[str], entries: list[dict]) -> list[Mistake]:
    """The mistakes made in a question, most frequent first, the answers not named in one group, last.

    Parameters
    ----------
    reasons : list of str
        The reasons of every answer that lost points.
    entries : list of dict
        The catalogue's entries for the question.
    """
    names, unnamed = Counter(), Counter()
    for reason in reasons:
        label = named(reason, entries)
        if label is None:
            unnamed[reason or "(no reason given)"] += 1
        else:
            names[label] += 1
    found = [Mistake(label, count, True) for label, count in sorted(names.items(), key=lambda kv: (-kv[1], kv[0]))]
    if unnamed:
        found.append(Mistake(NOT_NAMED, sum(unnamed.values()), False, unnamed.most_common()))
    return found


@dataclass
class Pair:
    """Two submissions that share unusual wrong answers: on which questions, and what they are."""

    first: str
    second: str
    shared: dict[str, str]  # question -> the wrong answer (a named mistake or the grader's reason)


def unusual_limit(submissions: int) -> int:
    """The most submissions that may give a wrong answer for it to be unusual: :data:`RARE_SHARE` of
    them, rounded down, and never fewer than 2 (the pair itself)."""
    return max(2, math.floor(RARE_SHARE * submissions))


def shared_unusual(answers: dict[str, dict[str, str]], submissions: int) -> list[Pair]:
    """Pairs of submissions that give the same unusual wrong answer on :data:`MIN_SHARED` questions or more.

    Parameters
    ----------
    answers : dict
        Per submission, per question where it lost points, its wrong answer: the named mistake, or
        else the grader's exact reason.
    submissions : int
        The graded submissions of the assignment (the class the shares are taken of).

    Returns
    -------
    list of Pair
        Most shared questions first. A wrong answer is unusual on a question when at most
        :func:`unusual_limit` submissions gave it.
    """
    holders: dict[tuple[str, str], list[str]] = defaultdict(list)
    for name, wrong in answers.items():
        for question, answer in wrong.items():
            holders[question, answer].append(name)
    limit = unusual_limit(submissions)
    together: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
    for (question, answer), names in holders.items():
        if 2 <= len(names) <= limit:
            for pair in combinations(sorted(names), 2):
                together[pair][question] = answer
    pairs = [
        Pair(a, b, dict(sorted(shared.items(), key=lambda kv: question_order(kv[0]))))
        for (a, b), shared in together.items()
        if len(shared) >= MIN_SHARED
    ]
    return sorted(pairs, key=lambda p: (-len(p.shared), p.first, p.second))


@dataclass
class Question:
    """One question of an assignment, over the class."""

    name: str
    possible: float
    graded: int
    mean: float
    facility: float
    discrimination: float | None
    faults: dict[str, float]  # "timed out", "crashed", "out of memory" -> share of the graded answers
    mistakes: list[Mistake]
    review: list[str]


@dataclass
class Assignment:
    """One assignment over the class: its totals, its questions, the pairs to look at."""

    name: str
    submissions: list[str]
    totals: list[float]
    possible: float
    questions: list[Question]
    pairs: list[Pair]
    seconds: list[float]
    unconfined: list[str]  # submissions graded without bubblewrap's confinement (isolated: no)


def summarize(name: str, rows: list[dict], possible: dict[str, float], catalogue: dict[str, list[dict]]) -> Assignment:
    """The statistics of one assignment.

    Parameters
    ----------
    name : str
        The assignment.
    rows : list of dict
        Its graded rows of ``scores.csv`` (:func:`read_scores`, :func:`graded_by_assignment`); a
        question missing from a row scores 0.
    possible : dict
        Each question's points possible (from the autograder zip).
    catalogue : dict
        The assignment's catalogue of wrong answers, question -> entries (may be empty).

    Raises
    ------
    ValueError
        No rows, or a graded question whose points possible are not given.
    """
    if not rows:
        raise ValueError(f"{name}: no graded submission to summarize")
    names = questions_of(rows)
    missing = [q for q in names if possible.get(q, 0) <= 0]
    if missing:
        raise ValueError(
            f"{name}: the points possible of {', '.join(missing)} are not known "
            f"(the autograder zip of this assignment does not match its scores)"
        )
    scores = np.array([[float(row.get(q, 0.0)) for q in names] for row in rows]).reshape(len(rows), len(names))
    questions, answers = [], defaultdict(dict)
    for j, question in enumerate(names):
        lost = [
            (row["submission"], row.get(f"{question} reason", "") or "")
            for row, s in zip(rows, scores[:, j], strict=True)
            if s < possible[question] - 1e-9
        ]
        entries = catalogue.get(question) or []
        for submission, reason in lost:
            answers[submission][question] = named(reason, entries) or reason
        reasons = [reason for _, reason in lost]
        found = Counter(fault(reason) for reason in reasons)
        shares = {kind: found[kind] / len(rows) for kind in FAULTS}
        ease = facility(scores[:, j], possible[question])
        power = discrimination(scores, j) if len(names) > 1 else None
        questions.append(
            Question(
                question,
                possible[question],
                len(rows),
                float(scores[:, j].mean()),
                ease,
                power,
                shares,
                mistakes(reasons, entries),
                review(ease, power),
            )
        )
    return Assignment(
        name,
        [row["submission"] for row in rows],
        [float(t) for t in scores.sum(axis=1)],
        float(sum(possible[q] for q in names)),
        questions,
        shared_unusual(dict(answers), len(rows)),
        [float(row["seconds"]) for row in rows if "seconds" in row],
        [row["submission"] for row in rows if row.get("isolated") == "no"],
    )
