"""Degenerate answers: empty, scalar and broadcasting answers, which no hidden test may pass.

A hidden test that compares values before it checks the shape lets answers through that carry no
understanding: ``np.allclose`` calls an array with a zero-length axis close to anything, and
``for got, want in zip(answer, expected)`` checks nothing of ``()``. Every hidden test checks the
shape, the length or the type of an answer before its values; :func:`sweep` holds the course to it.

For every question of a master it takes the solution's answers (the names the question's tests take)
and grades the question's hidden tests with each answer in turn made degenerate
(:func:`degenerate_forms`): an empty array, ``()``, ``[]``, a scalar, the right values with an axis
added in front or behind, and for a tuple each element so changed. A function answer is changed in
what it returns. The hidden tests that take the changed answer may give it nothing; where one element
of a tuple is changed, they may give what they give when that element is wrong in its right form (a
question that grades a tuple's elements one by one rightly gives the others their points).

The answers are had cheaply, in this process, as a grading copy holds them
(:func:`coursekit.exercises.grading_copy`): the master's imports cell and its solutions are run, and
every answer crosses to the tests as plain data, through JSON, as the grader's worker sends it
(:mod:`coursekit.grading.plain_data`). The tests are otter's test file for the question, written from
the master's test cells as ``otter assign`` writes it, and run with otter's own runner. The
solution itself must score full marks there, which keeps the shortcut honest.

Run ``python -m coursekit exercises degenerate [NOTEBOOK ...]`` after writing or changing a question.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import numpy as np

from coursekit.build.personal import declarations
from coursekit.exercises import Question, questions, solution_answers
from coursekit.grading.plain_data import decode, encode
from coursekit.grading.variant import PUBLIC

__all__ = ["Finding", "degenerate_forms", "otter_test_file", "solution_namespace", "sweep", "sweep_question"]


@dataclass(frozen=True)
class Finding:
    """A degenerate answer that a question's hidden tests gave points (or the solution, short of full)."""

    notebook: str
    question: str
    form: str  # which answer was made degenerate, and how: "merge_gda returns ()"
    score: float
    possible: float

    def __str__(self) -> str:
        return f"{self.notebook[:5]} {self.question}: {self.form} scores {self.score:g} of {self.possible:g}"


def _is_scalar(value: Any) -> bool:
    return not isinstance(value, (tuple, list, set, frozenset, dict)) and np.ndim(value) == 0


def _first(value: Any) -> Any:
    """The first scalar of a non-scalar value (its first element, all the way down); None if it is empty."""
    while not _is_scalar(value):
        if isinstance(value, np.ndarray):
            items = value.ravel()
        elif isinstance(value, (set, frozenset)):
            items = sorted(value, key=repr)
        else:
            items = list(value.values()) if isinstance(value, dict) else value
        if len(items) == 0:
            return None
        value = items[0]
    return value


def _empty(value: Any) -> np.ndarray:
    try:
        shape = np.shape(value)
    except ValueError:  # a tuple of arrays of different shapes
        shape = ()
    return np.empty((0, *shape))


def _axis(value: Any, where: str) -> Any:
    """``value`` with an axis of length one added in front or behind; a tuple's elements each so."""
    if isinstance(value, tuple):
        return tuple(_axis(element, where) for element in value)
    if isinstance(value, (int, float, complex, str, np.generic)):
        return np.array([value])
    if isinstance(value, (set, frozenset, dict)) or (_is_scalar(value) and not isinstance(value, np.ndarray)):
        out = np.empty(1, dtype=object)
        out[0] = value
        return out
    array = np.asarray(value)
    return array[np.newaxis] if where == "front" else array[..., np.newaxis]


# label -> how a value is made degenerate; None: this change does not apply to the value
FORMS: dict[str, Callable[[Any], Any]] = {
    "an empty array": _empty,
    "()": lambda value: (),
    "[]": lambda value: [],
    "a scalar": lambda value: None if _is_scalar(value) else _first(value),
    "an axis in front": lambda value: _axis(value, "front"),
    "an axis behind": lambda value: _axis(value, "behind"),
}


def _signature(value: Any) -> Any:
    """The type and shape of a value, element by element for a tuple or list."""
    if isinstance(value, (tuple, list)):
        return type(value).__name__, tuple(_signature(v) for v in value)
    if isinstance(value, (set, frozenset, dict)):
        return type(value).__name__, len(value)
    if isinstance(value, np.ndarray):
        return "ndarray", value.shape
    return type(value).__name__, ()


def degenerate_forms(value: Any) -> dict[str, Any]:
    """The degenerate versions of an answer's value, each of another type or shape than ``value``.

    Parameters
    ----------
    value : object
        A right answer, or what a right function returned.

    Returns
    -------
    dict
        Label (``"an empty array"``, ``"()"``, ``"[]"``, ``"a scalar"``, ``"an axis in front"``,
        ``"an axis behind"``, and for a tuple ``"element 2 as ..."``) to the degenerate value. A change that
        keeps the type and shape, or gives what another label gave, is left out.

    Examples
    --------
    >>> import numpy as np
    >>> sorted(degenerate_forms(np.zeros(3)))
    ['()', '[]', 'a scalar', 'an axis behind', 'an axis in front', 'an empty array']
    >>> degenerate_forms(2.5)["an axis in front"], "an axis behind" in degenerate_forms(2.5)
    (array([2.5]), False)
    """
    found, seen = {}, {_signature(value)}
    candidates = [(label, make(value)) for label, make in FORMS.items()]
    if isinstance(value, tuple):
        for i, element in enumerate(value):
            for label, make in FORMS.items():
                changed = make(element)
                if changed is not None:
                    candidates.append((f"element {i + 1} as {label}", (*value[:i], changed, *value[i + 1 :])))
    for label, changed in candidates:
        if changed is None or _signature(changed) in seen:
            continue
        seen.add(_signature(changed))
        found[label] = changed
    return found


def _plain(value: Any) -> Any:
    """``value`` as the grader's worker hands it over: plain data, through JSON."""
    return decode(json.loads(json.dumps(encode(value))))


def otter_test_file(question: Question) -> str:
    """The question's otter test file (``tests/qN.py`` of the autograder zip), from the master's test cells.

    As ``otter assign`` writes it: each cell's function definition, unparsed, under a ``test_case``
    decorator that says whether it is hidden, and the question's points.
    """
    from otter.assign.tests_manager import EXCEPTION_BASED_TEST_FILE_TEMPLATE
    from otter.nbmeta_config import OK_FORMAT_VARNAME
    from otter.test_files.abstract_test import TestCase

    cases = []
    for source in question.tests:
        lines = source.splitlines()
        hidden = bool(lines) and lines[0].lstrip().startswith("#") and "hidden" in lines[0].lower()
        tree = ast.parse("\n".join(lines[1:] if hidden else lines))
        if not tree.body or not isinstance(tree.body[0], ast.FunctionDef) or len(tree.body) > 2:
            raise ValueError(f"{question.name}: a test cell holds one function definition and a call to it")
        cases.append(TestCase("", ast.unparse(tree.body[0]), hidden, None, None, None))
    points = [int(p) if float(p).is_integer() else p for p in question.test_points] or question.points
    return EXCEPTION_BASED_TEST_FILE_TEMPLATE.render(
        name=question.name, points=points, all_or_nothing=False, test_cases=cases, OK_FORMAT_VARNAME=OK_FORMAT_VARNAME
    )


def solution_namespace(master: Path) -> dict[str, Any]:
    """The names a grading copy of the master's solutions defines: its imports cell, then every solution."""
    nb = nbformat.read(master, as_version=4)
    imports = next(c.source for c in nb.cells if c.cell_type == "code")
    namespace: dict[str, Any] = {"__name__": "__main__"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(imports, f"{master.stem}: imports", "exec"), namespace)  # noqa: S102 - the course's own cell
        # variant 0's answer cells: a solution with numbers of its own reads them from VARIANT
        for question, source in zip(questions(nb), solution_answers(master).values(), strict=True):
            exec(compile(source, f"{master.stem}: {question.name}", "exec"), namespace)  # noqa: S102
    return namespace


def _wrong(value: Any) -> Any:
    """A wrong value of the same type and shape as ``value`` (one added, a truth negated); None if there is none."""
    if isinstance(value, (bool, np.bool_)):
        return not value
    if isinstance(value, str):
        return value + "?"
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        return ~value if value.dtype.kind == "b" else value + 1
    if isinstance(value, (int, float, complex, np.number)) or type(value).__module__.startswith("sympy."):
        return value + 1
    return None


_ELEMENT = re.compile(r"^element (\d+) as ")


def _wrong_element(label: str) -> Callable[[Any], Any] | None:
    """For a label that changes one element of a tuple, what makes that element wrong in its right form."""
    match = _ELEMENT.match(label)
    if match is None:
        return None
    i = int(match.group(1)) - 1

    def change(value):
        wrong = _wrong(value[i]) if isinstance(value, tuple) and i < len(value) else None
        return None if wrong is None else (*value[:i], wrong, *value[i + 1 :])

    return change


class _Function:
    """A function answer as the grader calls it: its arguments and return values cross as plain data.

    What it returned for each set of arguments is kept, so that grading its degenerate versions does
    not run the solution again; :attr:`labels` collects the degenerate forms its return values have.
    """

    def __init__(self, function: Callable):
        self.function, self.returned, self.labels = function, {}, {}

    def returning(self, change: Callable[[Any], Any] | None = None) -> Callable:
        """The function, with every return value changed by ``change`` (where it gives None, unchanged)."""

        def call(*args, **kwargs):
            key = json.dumps(encode([list(args), dict(kwargs)]))
            if key not in self.returned:
                args, kwargs = decode(json.loads(key))
                self.returned[key] = _plain(self.function(*args, **kwargs))
                self.labels.update(dict.fromkeys(degenerate_forms(self.returned[key])))
            value = self.returned[key]
            changed = change(value) if change is not None else None
            return _plain(value if changed is None else changed)

        return call


def _parameters(case) -> set[str]:
    return set(inspect.signature(case.body.test_func).parameters)


def _score(tests, environment: dict[str, Any], name: str | None = None) -> tuple[float, float]:
    """The points that the hidden tests of ``tests`` (those that take ``name``, if given) give
    ``environment``, and the points they could give."""
    whole = tests.test_cases
    tests.test_cases = [case for case in whole if case.hidden and (name is None or {name, "env"} & _parameters(case))]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tests.run(environment)
        return tests.score, tests.possible
    finally:
        tests.test_cases = whole


def _form(label: str) -> Callable[[Any], Any]:
    """Makes a value degenerate as ``label`` says (None where that change does not apply)."""
    return lambda value: degenerate_forms(value).get(label)


def sweep_question(
    notebook: str, question: Question, namespace: dict[str, Any], params: dict | None = None
) -> list[Finding]:
    """The degenerate answers to one question that earn more than they may, and the solution if short of full.

    Each name the question's tests take is made degenerate in turn, the others kept right, and graded
    by the hidden tests that take that name: a test of another answer rightly gives its points. A
    degenerate answer may earn nothing, but where one element of a tuple is made degenerate, the
    tests may give what they give when that element is wrong in its right form (a question that
    grades a tuple's elements one by one gives the right ones their points). ``params``: the numbers of
    the master's variant of a question that has its own, its tests' ``VARIANT`` (as the grader binds it).
    """
    from otter.test_files.exception_test import ExceptionTestFile

    tests = ExceptionTestFile.from_string(otter_test_file(question), path=f"{question.name}.py")
    for case in tests.test_cases if params is not None else ():
        case.body.test_func.__globals__["VARIANT"] = dict(params)
    names = sorted(set().union(*map(_parameters, tests.test_cases)) - {"env"})
    functions = {n: _Function(namespace[n]) for n in names if callable(namespace.get(n))}

    def answers(**changed) -> dict[str, Any]:  # every answer as the grader hands it over, some changed
        return {
            n: changed[n] if n in changed else functions[n].returning() if n in functions else _plain(namespace.get(n))
            for n in names
        }

    def changed(name: str, change: Callable[[Any], Any]) -> Any:
        return functions[name].returning(change) if name in functions else _plain(change(_plain(namespace.get(name))))

    def wrong_everywhere(name: str, change: Callable[[Any], Any]) -> bool:  # for every value the answer took
        values = functions[name].returned.values() if name in functions else [_plain(namespace.get(name))]
        return all(change(value) is not None for value in values)

    score, possible = _score(tests, answers())
    if score < possible:
        return [Finding(notebook, question.name, "the solution", score, possible)]
    found = []
    for name in names:
        labels = functions[name].labels if name in functions else degenerate_forms(_plain(namespace.get(name)))
        for label in labels:
            score, possible = _score(tests, answers(**{name: changed(name, _form(label))}), name)
            allowed, wrong_element = 0.0, _wrong_element(label)
            if score > 0 and wrong_element is not None and wrong_everywhere(name, wrong_element):
                allowed, _ = _score(tests, answers(**{name: changed(name, wrong_element)}), name)
            if score > allowed:
                form = f"{name} {'returns' if name in functions else 'as'} {label}"
                found.append(Finding(notebook, question.name, form, score, possible))
    return found


def sweep(masters: list[Path]) -> list[Finding]:
    """Every degenerate answer that the masters' hidden tests give points (see the module docstring)."""
    found = []
    for master in masters:
        namespace = solution_namespace(master)
        nb = nbformat.read(master, as_version=4)
        variant = declarations(nb).of(PUBLIC)
        for question in questions(nb):
            found += sweep_question(master.stem, question, namespace, variant.get(question.name, {}).get("params"))
    return found


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit exercises degenerate [NOTEBOOK ...]``: the degenerate answers that score."""
    import argparse

    from coursekit.notebooks import master_notebooks

    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", type=Path, nargs="*", help="default: every master")
    masters = [path.resolve() for path in parser.parse_args(argv).notebooks] or master_notebooks()
    found = sweep(masters)
    print("\n".join(map(str, found)) or f"no degenerate answer scores in {len(masters)} notebooks")
    raise SystemExit(1 if found else 0)
