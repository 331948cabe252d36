"""A choice answer in the student's letters and forms, read in the master's.

Where a student's variant shuffles a question's options (``options: shuffle``,
:mod:`coursekit.grading.variant`), the student answers in the letters of their own notebook, and
where it shows a statement in its not-form (the statement with the opposite truth), a right answer
says the opposite of the master's about it; the question's tests are the master's. :func:`translate`
turns the one into the other, for the public check in the student's notebook
(:mod:`coursekit.check`) and for the grader (:mod:`coursekit.grading.checking`).

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

__all__ = ["translate"]


def translate(answer: Any, order: Mapping[str, str], flips: Collection[str] = ()) -> Any:
    """A choice answer in the student's letters, in the master's (``order``: student letter -> master letter).

    A letter, a set (or list, or tuple) of letters, and a tuple or list of one truth value per option
    are translated; anything else (a wrong type, an unknown letter) is returned unchanged, for the
    question's own checks to refuse with their own words. ``flips`` are the master's letters whose
    statements the student saw in their not-form: each is toggled in a set of letters and its verdict
    negated in a tuple of truth values (a single letter has no not-forms to undo).
    """
    letters = list(order)
    flipped = set(flips)
    if isinstance(answer, str):
        return order.get(answer, answer)
    if isinstance(answer, (set, frozenset)):
        if all(isinstance(a, str) for a in answer):
            return type(answer)({order.get(a, a) for a in answer} ^ flipped)
        return answer
    if isinstance(answer, (tuple, list)):
        if len(answer) == len(letters) and all(isinstance(a, bool) for a in answer):
            by_master = {order[letter]: value for letter, value in zip(letters, answer, strict=True)}
            return type(answer)(by_master[letter] != (letter in flipped) for letter in letters)
        if all(isinstance(a, str) for a in answer):
            read = [order.get(a, a) for a in answer]
            if flipped:
                read = sorted(set(read) ^ flipped)
            return type(answer)(read)
    return answer
