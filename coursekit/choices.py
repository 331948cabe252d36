"""A choice answer in the student's letters, read in the master's.

Where a student's variant shuffles a question's options (``options: shuffle``,
:mod:`coursekit.grading.variant`), the student answers in the letters of their own notebook; the
question's tests are the master's. :func:`translate` turns the one into the other, for the public check
in the student's notebook (:mod:`coursekit.check`) and for the grader (:mod:`coursekit.grading.checking`).

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["translate"]


def translate(answer: Any, order: Mapping[str, str]) -> Any:
    """A choice answer in the student's letters, in the master's (``order``: student letter -> master letter).

    A letter, a set (or list, or tuple) of letters, and a tuple or list of one truth value per option
    are translated; anything else (a wrong type, an unknown letter) is returned unchanged, for the
    question's own checks to refuse with their own words.
    """
    letters = list(order)
    if isinstance(answer, str):
        return order.get(answer, answer)
    if isinstance(answer, (set, frozenset)):
        if all(isinstance(a, str) for a in answer):
            return type(answer)(order.get(a, a) for a in answer)
        return answer
    if isinstance(answer, (tuple, list)):
        if len(answer) == len(letters) and all(isinstance(a, bool) for a in answer):
            by_master = {order[letter]: value for letter, value in zip(letters, answer, strict=True)}
            return type(answer)(by_master[letter] for letter in letters)
        if all(isinstance(a, str) for a in answer):
            return type(answer)(order.get(a, a) for a in answer)
    return answer
