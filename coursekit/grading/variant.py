"""A student's variant of an assignment: the numbers and the option order of each question, drawn from a seed.

A question **with numbers of its own** declares them in its master, in a code cell tagged ``variant``
before its ``# BEGIN QUESTION`` cell::

    # VARIANT q4
    PUBLIC = {"heads": 2, "mean": "0.6", "_a": 4}    # variant 0: what the master's own text shows


    def draw(rng):                                   # another variant, from a numpy Generator
        ...
        return {"heads": ..., "mean": ..., "_a": ...}


    def valid(v):                                    # the question's invariants, asserted for every draw
        ...


    VARIANT = PUBLIC                                 # the master's tests and solution run on variant 0

The cell runs on its own where the grader draws a variant (not after the notebook's imports): it imports
what it uses. The tests (public and hidden) and the solution read the question's numbers from ``VARIANT``, a
dictionary: a key that starts with ``_`` is the grader's alone (an answer, an unknown the student
works out); the others are the student's, shown in the prompt through markers
(:mod:`coursekit.build.personal`) and given to the public check. A question **whose options are
shuffled** says ``options: shuffle`` in its ``# BEGIN QUESTION`` cell: each student sees the options
(``- (a) ...`` lines of the prompt) in an order of their own under the same letters, and an answer in
the student's letters (a letter, a set of letters, a tuple of one truth value per statement) is
translated back to the master's (:func:`coursekit.choices.translate`) before the unchanged tests run.
A statement of such a question may also have a **not-form**, the statement with the opposite truth,
in a comment at the end of its option (``- (c) ... always independent.<!--not: ... not always
independent.-->``): each student sees one of the two forms, drawn from the seed, and an answer on a
statement shown in its not-form is turned back (its letter toggled in a set, its verdict negated)
before the master's tests read it.

:class:`Variants` holds a notebook's declarations (the autograder zip carries them as
``variants.json``); :meth:`Variants.of` gives the variant of a seed (0 is :data:`PUBLIC`, what the
masters, the website and the public student notebooks show), :meth:`Variants.tag` a digest of what
the student sees of it, which the student notebook records and the grader compares with its owner's.

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import zlib
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PUBLIC", "VARIANT_TAG", "VariantError", "Variants", "parse_cell", "private", "seen"]

PUBLIC = 0
VARIANT_TAG = "variant"
_HEADER = re.compile(r"\A#\s*VARIANT\s+(?P<question>q\d+\w*)\s*$", re.M)
_DRAWS = 1000  # draws before a question whose `valid` refuses them all is reported


class VariantError(ValueError):
    """A question's variant declaration cannot be used; the message names the question and what to change."""


def parse_cell(source: str) -> str | None:
    """The question a ``variant`` cell declares (its first line, ``# VARIANT q4``), or None."""
    match = _HEADER.match(source.lstrip())
    return match["question"] if match else None


def private(key: str) -> bool:
    """Whether a key of a variant is the grader's alone (it starts with ``_``)."""
    return key.startswith("_")


def seen(params: dict) -> dict:
    """What the student sees of a question's numbers: its keys that are not :func:`private`."""
    return {k: v for k, v in params.items() if not private(k)}


def _stream(seed: int, question: str, purpose: int):
    import numpy as np

    return np.random.default_rng([seed, zlib.crc32(question.encode()), purpose])


def _literal(question: str, params: dict) -> dict:
    """``params``, checked to be what a student notebook can write down: its repr reads back as itself."""
    import ast

    shown = seen(params)
    try:
        same = ast.literal_eval(repr(shown)) == shown
    except (ValueError, SyntaxError):
        same = False
    if not same:
        raise VariantError(
            f"{question}: the variant's public values {shown!r} are not plain literals (numbers, strings, lists, "
            "dicts; no nan or inf): the student's notebook writes them down"
        )
    return params


@dataclass
class Variants:
    """A notebook's variant declarations: each question's ``variant`` cell, the questions whose options shuffle
    and their statements with a not-form."""

    sources: dict[str, str] = field(default_factory=dict)  # question -> its variant cell's source
    options: dict[str, list[str]] = field(default_factory=dict)  # question -> its option letters, in order
    forms: dict[str, list[str]] = field(default_factory=dict)  # question -> the letters with a not-form
    _spaces: dict = field(default_factory=dict, repr=False, compare=False)
    _drawn: dict = field(default_factory=dict, repr=False, compare=False)  # (question, seed) -> its numbers

    def __bool__(self) -> bool:
        return bool(self.sources or self.options or self.forms)

    def space(self, question: str) -> dict:
        """The namespace of ``question``'s variant cell, run once."""
        if question not in self._spaces:
            space: dict[str, Any] = {"__name__": f"variant_{question}"}
            try:
                exec(compile(self.sources[question], f"<variant {question}>", "exec"), space)  # noqa: S102 - the master's own code
            except Exception as error:  # noqa: BLE001 - reported with the question's name
                raise VariantError(f"{question}: its variant cell fails: {type(error).__name__}: {error}") from None
            for name in ("PUBLIC", "draw"):
                if name not in space:
                    raise VariantError(f"{question}: its variant cell defines no {name}")
            if not isinstance(space["PUBLIC"], dict) or not space["PUBLIC"]:
                raise VariantError(f"{question}: PUBLIC must be a non-empty dict of the question's numbers")
            self._spaces[question] = space
        return self._spaces[question]

    def params(self, question: str, seed: int) -> dict:
        """``question``'s numbers in the variant of ``seed`` (its ``PUBLIC`` for seed 0).

        A draw that the cell's ``valid`` refuses (it returns False or raises AssertionError) is drawn
        again from the same stream, so that the variant of a seed never changes.
        """
        if (question, seed) not in self._drawn:  # a draw may take a while (digests of slips): drawn once
            self._drawn[question, seed] = self._draw(question, seed)
        return copy.deepcopy(self._drawn[question, seed])

    def _draw(self, question: str, seed: int) -> dict:
        space = self.space(question)
        if seed == PUBLIC:
            return _literal(question, dict(space["PUBLIC"]))
        rng, valid = _stream(seed, question, 0), space.get("valid")
        for _ in range(_DRAWS):
            drawn = space["draw"](rng)
            if set(drawn) != set(space["PUBLIC"]):
                raise VariantError(
                    f"{question}: draw returns the keys {sorted(drawn)}, PUBLIC has {sorted(space['PUBLIC'])}"
                )
            try:
                if valid is None or valid(drawn) is not False:
                    return _literal(question, drawn)
            except AssertionError:
                pass
        raise VariantError(f"{question}: valid refused {_DRAWS} draws in a row: draw from a narrower range")

    def check(self, count: int = 200) -> None:
        """Draw ``count`` variants of every question (seeds 1 to ``count``): a declaration that fails, draws
        other keys than ``PUBLIC``'s, or whose ``valid`` refuses draws in a row raises :class:`VariantError`
        now, at ``assign``, not when a student's notebook is made or graded."""
        for seed in range(1, count + 1):
            try:
                self.of(seed)
            except VariantError:
                raise
            except Exception as error:  # noqa: BLE001 - the declaration's own failure, with its seed
                raise VariantError(
                    f"drawing the variant of seed {seed} fails: {type(error).__name__}: {error}"
                ) from None

    def order(self, question: str, seed: int) -> dict[str, str]:
        """The student's letter -> the master's letter, for a question whose options shuffle."""
        letters = self.options[question]
        if seed == PUBLIC:
            return {letter: letter for letter in letters}
        permutation = _stream(seed, question, 1).permutation(len(letters))
        return {letter: letters[int(j)] for letter, j in zip(letters, permutation, strict=True)}

    def flips(self, question: str, seed: int) -> list[str]:
        """The master's letters whose statements the student sees in their not-form (none for seed 0).

        Each statement with a not-form is shown in it with probability 1/2, independently: a set of
        statements has as many right answers as subsets, each as likely as the others.
        """
        letters = self.forms.get(question, [])
        if seed == PUBLIC or not letters:
            return []
        coins = _stream(seed, question, 2).integers(0, 2, len(letters))
        return [letter for letter, coin in zip(letters, coins, strict=True) if coin]

    def of(self, seed: int) -> dict[str, dict]:
        """Every varying question's variant: ``{question: {"params": dict, "options": dict, "flips": list}}``."""
        found: dict[str, dict] = {}
        for question in sorted({*self.sources, *self.options}):
            entry = {}
            if question in self.sources:
                entry["params"] = self.params(question, seed)
            if question in self.options:
                entry["options"] = self.order(question, seed)
            if question in self.forms:
                entry["flips"] = self.flips(question, seed)
            found[question] = entry
        return found

    def shown(self, seed: int) -> dict[str, dict]:
        """What the student sees of the variant of ``seed``: its keys without ``_``, the option order and forms."""
        shown = {}
        for question, entry in self.of(seed).items():
            entry = dict(entry)
            if "params" in entry:
                entry["params"] = seen(entry["params"])
            shown[question] = entry
        return shown

    def tag(self, seed: int) -> str:
        """A digest of what the student sees of the variant of ``seed``: equal tags, the same notebook."""
        text = json.dumps(self.shown(seed), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_json(self) -> str:
        return json.dumps(
            {"sources": self.sources, "options": self.options, "forms": self.forms}, indent=1, sort_keys=True
        )

    @classmethod
    def from_json(cls, text: str) -> Variants:
        data = json.loads(text)
        return cls(
            dict(data.get("sources", {})),
            {q: list(v) for q, v in data.get("options", {}).items()},
            {q: list(v) for q, v in data.get("forms", {}).items()},
        )
