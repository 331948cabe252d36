"""Whether a question's hidden tests reach the edges of the domain its prompt states.

A hidden test that only tries small, friendly inputs passes answers that fail at the edges the prompt
allows (weights floored where the prompt allows scores of 15, a category value no document shows).
So every question answered by a function declares, in its ``# BEGIN QUESTION`` configuration, the
edges of its stated domain, one Python expression each over the function's parameter names and
``np``::

    reaches:
      working_response:
        - "np.abs(np.asarray(X, float) @ np.asarray(theta, float)).max() >= 14.5"  # |x^T theta| <= 15
        - "np.asarray(X).shape[0] == 1"                                             # one example

:func:`reached` grades the master's solution with the question's hidden tests, in this process,
with each answer function replaced by a recorder that evaluates every expression on each call
(arguments bound to the parameter names, defaults applied, before the function sees them). An
expression is reached when it is true for at least one call; one that raises is false for that call.

Run ``python -m coursekit exercises reach [NOTEBOOK ...]`` for the table, question by question.
"""

from __future__ import annotations

import ast
import copy
import functools
import inspect
import warnings
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from coursekit.exercises import Question, questions

__all__ = ["Edge", "answer_functions", "reached", "table", "undeclared", "unreached"]

KEY = "reaches"


@dataclass
class Edge:
    """One declared edge of a question's domain and whether its hidden tests reach it."""

    question: str
    function: str
    expression: str
    reached: bool = False
    calls: int = 0  # calls of the function the hidden tests made


def answer_functions(question: Question) -> list[str]:
    """The functions a question's answer defines that its hidden tests are handed (by name)."""
    try:
        defined = [n.name for n in ast.parse(question.solution).body if isinstance(n, ast.FunctionDef)]
    except SyntaxError:
        return []
    names = set()
    for test in question.hidden_tests:
        names |= {n.id for n in ast.walk(ast.parse(test)) if isinstance(n, ast.Name)}
    return [name for name in defined if name in names]


def _recorder(function, edges: list[Edge], names: dict[str, object]):
    signature = inspect.signature(function)

    @functools.wraps(function)
    def record(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            arguments = copy.deepcopy(dict(bound.arguments))
        except (TypeError, copy.Error):
            arguments = None
        for edge in edges:
            edge.calls += 1
            if arguments is not None and not edge.reached:
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        # The expression is the master's own (its question's `reaches`), not a student's.
                        edge.reached = bool(eval(edge.expression, dict(names), dict(arguments)))  # noqa: S307
                except Exception:  # noqa: BLE001 - an expression that does not apply to this call is false there
                    pass
        return function(*args, **kwargs)

    return record


def reached(master: Path) -> list[Edge]:
    """Every declared edge of ``master``'s questions, graded with the solution and the hidden tests.

    The notebook's first code cell (its imports) and each question's solution run in this process,
    as trusted code; each hidden test then runs in a copy of that namespace with the answer
    functions replaced by recorders. A hidden test that fails with the master's solution raises.
    """
    nb = nbformat.read(master, as_version=4)
    first = next(c.source for c in nb.cells if c.cell_type == "code")
    edges = []
    base: dict[str, object] = {"__name__": "__reach__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(first, f"{master.name}: first cell", "exec"), base)  # noqa: S102
        for question in questions(nb):
            wanted = question.reaches
            if not wanted:
                continue
            namespace = dict(base)
            exec(compile(question.solution, f"{question.name}'s solution", "exec"), namespace)  # noqa: S102
            for function, expressions in wanted.items():
                if not callable(namespace.get(function)):
                    raise ValueError(
                        f"{master.name} {question.name}: `reaches` names {function!r}, "
                        "which the solution does not define as a function"
                    )
                mine = [Edge(question.name, function, text) for text in expressions]
                edges += mine
                namespace[function] = _recorder(namespace[function], mine, {"np": np})
            for test in question.hidden_tests:
                exec(compile(test, f"{question.name}'s hidden test", "exec"), dict(namespace))  # noqa: S102
    return edges


def undeclared(masters: list[Path]) -> list[str]:
    """Each answer function of ``masters`` that declares no edges of its domain (read, not run)."""
    return [
        f"{master.stem[:5]} {question.name}: {function} declares no edges of its domain "
        f"({KEY}: in the question's configuration)"
        for master in masters
        for question in questions(nbformat.read(master, as_version=4))
        for function in answer_functions(question)
        if not question.reaches.get(function)
    ]


def unreached(masters: list[Path]) -> list[str]:
    """What the rule asks of ``masters``: every answer function declares its edges, and each is reached."""
    found = undeclared(masters)
    for master in masters:
        found += [
            f"{master.stem[:5]} {e.question}: the hidden tests never reach {e.expression!r} "
            f"({e.calls} calls of {e.function})"
            for e in reached(master)
            if not e.reached
        ]
    return found


def table(masters: list[Path]) -> str:
    """Each declared edge, reached or not, notebook by notebook."""
    lines = []
    for master in masters:
        for edge in reached(master):
            flag = "ok " if edge.reached else "NOT"
            lines.append(f"{flag} {master.stem[:5]} {edge.question} {edge.function}: {edge.expression}")
    return "\n".join(lines)
