"""How far the students' variants differ: which questions vary, by what, and how many students share an answer.

``python -m coursekit variety [NOTEBOOK ...] [--students 200]`` draws the variants of that many
students (seeds of a throwaway secret, as :func:`coursekit.variants.variant_seed` makes them), works out
each varying question's right answer in each (the master's solution cell, run on the variant with
:func:`coursekit.build.personal.answer_for`) and prints, per question, what varies and the share of
students whose answer is the most common one. A number is compared as the grader compares it: rounded
to the tolerance a question states (three decimals by default). A single-answer choice question, whose
options only shuffle, cannot go below one student in the number of its options; a true/false set whose
n statements each show one of two forms has 2^n right answers, each as likely as the others.

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

import argparse
import secrets
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import nbformat

from coursekit.build.personal import answer_for, declarations
from coursekit.exercises import Question, questions
from coursekit.grading.variant import seen
from coursekit.notebooks import master_notebooks
from coursekit.variants import variant_seed

__all__ = ["answer", "answered", "shares"]


def answer(source: str, name: str | Sequence[str], decimals: int = 3):
    """The value ``name`` that an answer cell's ``source`` leaves, as the grader compares it (numbers rounded);
    for several names (a question answered in several variables), the tuple of their values."""
    import numpy as np

    label = name if isinstance(name, str) else ", ".join(name)
    space = {"np": np, "__name__": "answer"}
    exec(compile(source, f"<answer {label}>", "exec"), space)  # noqa: S102 - the master's own solution
    if not isinstance(name, str):
        return tuple(_compared(space[n], decimals) for n in name)
    return _compared(space[name], decimals)


def answered(question: Question) -> str | list[str]:
    """The variable a question's answer is read from (``q4``), or the variables (``q4_log_likelihood``,
    ``q4_estimate``): its tests' parameters, or the question's own name."""
    names = question.answer_names
    return names[0] if len(names) == 1 else names or question.name


def _compared(value, decimals: int):
    if isinstance(value, float):
        return round(value, decimals)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(value))
    return value


def shares(master: Path, students: int = 200, secret: bytes | None = None) -> list[dict]:
    """Per varying question of ``master``: what varies, the distinct answers and the largest share of one.

    The students' seeds come from ``secret`` (default: a new random one, as a course's would be).
    """
    nb = nbformat.read(master, as_version=4)
    declared = declarations(nb)
    secret = secret or secrets.token_bytes(32)
    seeds = [variant_seed(secret, f"s{k:04d}", master.stem) for k in range(students)]
    rows = []
    for question in questions(nb):
        if question.name not in declared.sources and question.name not in declared.options:
            continue
        found = Counter()
        for seed in seeds:
            entry = declared.of(seed)[question.name]
            found[repr(answer(answer_for(question.name, question.solution, entry), answered(question)))] += 1
        varies = []
        if question.name in declared.sources:
            shown = seen(declared.params(question.name, 0))
            # a list shows as key[]; the public check's digests (of slips) follow from the rest
            keys = [
                k if isinstance(v, (int, float, str)) else f"{k}[]"
                for k, v in shown.items()
                if not k.endswith(("slips", "digests"))
            ]
            varies.append("setting (" + ", ".join(keys) + ")")
        if question.name in declared.options:
            varies.append(f"order of {len(declared.options[question.name])} options")
        if question.name in declared.forms:
            varies.append(f"form of {len(declared.forms[question.name])} statements")
        rows.append(
            {
                "notebook": master.stem,
                "question": question.name,
                "varies": " and ".join(varies),
                "answers": len(found),
                "share": found.most_common(1)[0][1] / students,
            }
        )
    return rows


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit variety [NOTEBOOK ...] [--students N]``."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", type=Path, nargs="*", help="default: every master")
    parser.add_argument("--students", type=int, default=200)
    args = parser.parse_args(argv)
    print(f"| notebook | question | varies | distinct answers in {args.students} | most shared |")
    print("| --- | --- | --- | ---: | ---: |")
    for master in args.notebooks or master_notebooks():
        for row in shares(master, args.students):
            print(
                f"| {row['notebook'][:5]} | {row['question']} | {row['varies']} | {row['answers']} | "
                f"{row['share']:.1%} |"
            )
