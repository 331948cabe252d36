"""Cues in true/false questions: what a student could guess from the statements' form alone.

A multiple-select question (``q4 = {"a", "d"}``) or a tuple of verdicts (``q4 = (True, False, ...)``)
is a set of statements, each true or false. A student who knows nothing can still score if the form
gives the verdicts away: writers qualify true statements until they are safe, so true statements grow
longer and carry hedges ("can", "usually"), and false ones are made false with absolutes ("always",
"never"). The course keeps these rules, over all its true/false questions:

- true statements are not longer than false ones: the mean over questions of (mean visible length of
  the true statements) / (mean of the false ones) is at most :data:`MAX_RATIO`, and the true ones
  are longer on average in at most :data:`MAX_LONGER_SHARE` of the questions;
- no question's true statements are exactly its k longest (k true ones, 0 < k < n);
- hedges and absolutes mark neither kind: the share of true statements with a hedge and the share
  of false ones differ by at most :data:`MAX_WORD_GAP`, and likewise for absolutes; and in no question
  are two or more hedged statements all true, or two or more absolute ones all false.

A statement's not-form (``<!--not: ...-->``, the statement with the opposite truth, which some students
see in its place) counts as a statement of its own, with the opposite verdict.

``python -m coursekit exercises rules`` reports what breaks them (:func:`problems`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import nbformat

from coursekit.exercises import Question, not_forms, options, questions, visible_length

__all__ = [
    "ABSOLUTES",
    "HEDGES",
    "Statement",
    "longest_are_true",
    "marked_by_words",
    "problems",
    "statements",
    "summary",
]

MAX_RATIO = 1.1
MAX_LONGER_SHARE = 0.6
MAX_WORD_GAP = 0.2
HEDGES = (
    "can",
    "may",
    "might",
    "usually",
    "often",
    "typically",
    "generally",
    "tends",
    "tend",
    "need not",
    "sometimes",
    "in general",
    "can be",
    "could",
    "at some cost",
    "a little",
    "partly",
    "somewhat",
    "largely",
    "mostly",
)
ABSOLUTES = (
    "always",
    "never",
    "only",
    "must",
    "every",
    "all",
    "none",
    "cannot",
    "any",
    "no",
    "completely",
    "entirely",
    "guarantees",
    "guaranteed",
    "impossible",
    "whatever",
    "nothing",
    "alone",
    "hardly ever",
    "at all",
)
_ANSWER = re.compile(r"^\s*q\d+\s*=\s*(.+?)\s*(#.*)?$", re.M)


@dataclass
class Statement:
    letter: str
    text: str
    true: bool

    @property
    def length(self) -> int:
        return visible_length(self.text)


def statements(question: Question) -> list[Statement]:
    """The statements of a true/false question with their verdicts, its not-forms (letter ``a'``) with the
    opposite ones; empty for any other question."""
    texts = options(question)
    match = _ANSWER.search(question.solution)
    if not texts or not match:
        return []
    try:
        value = set() if match.group(1) == "set()" else ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError):
        return []
    if isinstance(value, (set, frozenset)) and all(isinstance(v, str) for v in value):
        found = [Statement(k, t, k in value) for k, t in texts.items()]
    elif isinstance(value, tuple) and len(value) == len(texts) and all(isinstance(v, bool) for v in value):
        found = [Statement(k, t, v) for (k, t), v in zip(texts.items(), value, strict=True)]
    else:
        return []
    truth = {s.letter: s.true for s in found}
    return found + [Statement(f"{k}'", t, not truth[k]) for k, t in not_forms(question).items() if k in truth]


def ratio(found: list[Statement]) -> float | None:
    """Mean visible length of the true statements over that of the false ones (None without both)."""
    true = [s.length for s in found if s.true]
    false = [s.length for s in found if not s.true]
    if not true or not false:
        return None
    return (sum(true) / len(true)) / (sum(false) / len(false))


def longest_are_true(found: list[Statement]) -> bool:
    """Whether the true statements are exactly the k longest (strictly longer than every false one)."""
    true = [s.length for s in found if s.true]
    false = [s.length for s in found if not s.true]
    return bool(true) and bool(false) and min(true) > max(false)


def _has(text: str, words: tuple[str, ...]) -> bool:
    plain = re.sub(r"\$[^$]*\$|`[^`]*`", " ", text.lower())
    return any(re.search(rf"\b{re.escape(w)}\b", plain) for w in words)


def word_gap(found: list[Statement], words: tuple[str, ...]) -> float:
    """Share of true statements that use one of ``words`` minus the share of false ones."""
    true = [s for s in found if s.true]
    false = [s for s in found if not s.true]
    if not true or not false:
        return 0.0
    return sum(_has(s.text, words) for s in true) / len(true) - sum(_has(s.text, words) for s in false) / len(false)


def marked_by_words(found: list[Statement]) -> list[str]:
    """``"hedges"`` if two or more statements hedge and all are true, ``"absolutes"`` if two or more
    use an absolute and all are false."""
    hedged = [s.true for s in found if _has(s.text, HEDGES)]
    absolute = [s.true for s in found if _has(s.text, ABSOLUTES)]
    return (["hedges"] if len(hedged) >= 2 and all(hedged) else []) + (
        ["absolutes"] if len(absolute) >= 2 and not any(absolute) else []
    )


def course_statements(masters: list[Path]) -> dict[str, list[Statement]]:
    """Every true/false question of ``masters``, as "notebook question" -> its statements."""
    found = {}
    for master in masters:
        for q in questions(nbformat.read(master, as_version=4)):
            listed = statements(q)
            if listed:
                found[f"{master.stem[:5]} {q.name}"] = listed
    return found


def summary(masters: list[Path]) -> dict[str, float]:
    """The course-wide measures the rules bound."""
    found = course_statements(masters)
    ratios = [r for r in map(ratio, found.values()) if r is not None]
    every = [s for listed in found.values() for s in listed]
    return {
        "questions": len(found),
        "mean_ratio": sum(ratios) / max(1, len(ratios)),
        "longer_share": sum(r > 1 for r in ratios) / max(1, len(ratios)),
        "hedge_gap": word_gap(every, HEDGES),
        "absolute_gap": word_gap(every, ABSOLUTES),
    }


def problems(masters: list[Path]) -> list[str]:
    """What the true/false questions of ``masters`` break of the rules in the module docstring."""
    found = [
        f"{where}: the true statements are exactly the {sum(s.true for s in listed)} longest"
        for where, listed in course_statements(masters).items()
        if longest_are_true(listed)
    ]
    found += [
        f"{where}: {kind} mark the {'true' if kind == 'hedges' else 'false'} statements (every one that "
        f"uses them is {'true' if kind == 'hedges' else 'false'})"
        for where, listed in course_statements(masters).items()
        for kind in marked_by_words(listed)
    ]
    measures = summary(masters)
    if measures["mean_ratio"] > MAX_RATIO:
        found.append(
            f"course: true statements are {measures['mean_ratio']:.2f} times as long as false ones "
            f"on average (at most {MAX_RATIO})"
        )
    if measures["longer_share"] > MAX_LONGER_SHARE:
        found.append(
            f"course: true statements are longer in {measures['longer_share']:.0%} of the questions "
            f"(at most {MAX_LONGER_SHARE:.0%})"
        )
    for kind, key in (("hedges", "hedge_gap"), ("absolutes", "absolute_gap")):
        if abs(measures[key]) > MAX_WORD_GAP:
            side = "true" if measures[key] > 0 else "false"
            found.append(
                f"course: {kind} mark the {side} statements (shares differ by {abs(measures[key]):.2f}; "
                f"at most {MAX_WORD_GAP})"
            )
    return found
