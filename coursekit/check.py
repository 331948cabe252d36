"""The student's check: what ``grader.check("q1")`` says in a student notebook, and what the grader reads.

A student notebook's public tests run in the student's own kernel, but they earn no points: they
check an answer's form and recognise known mistakes, and the hidden tests, run by the grader
(:mod:`coursekit.grading.grader`) on the answers sent as plain data, decide the grade. Otter's
``grader.check`` says "All test cases passed!" whenever the public tests pass, which a student
reads as "right". Two pieces here keep the check honest:

- :class:`Notebook`, otter's ``Notebook`` whose :meth:`~Notebook.check` returns a
  :class:`CheckResult`: when the public tests pass it says that they found no problem and that the
  hidden tests decide the grade (:data:`NO_PROBLEM`); when they fail it shows otter's report, the
  failed test's message included. The student notebooks' ``# Initialize Otter`` cell makes one
  (:func:`coursekit.build.assign.use_honest_check`).
- :func:`as_graded`, which a symbolic question's public test calls on the answer: it reads the
  answer as the grader does (its ``srepr`` text rebuilt by :func:`coursekit.symbolic.parse`) and
  evaluates it with the grader's evaluator (:func:`coursekit.symbolic.evaluate`) at the question's
  points, so that an answer the grader refuses or cannot evaluate fails the public check, with the
  grader's own words. The check then shows the answer as the grader read it, typeset, as
  PrairieLearn echoes a parsed formula: ``N1 + a`` where ``(N1 + a)/N`` was meant shows at once.
"""

from __future__ import annotations

import html
import inspect
import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import otter
import sympy

from coursekit.choices import translate
from coursekit.symbolic import SymbolicAnswerError, evaluate, parse, to_data

__all__ = ["NO_PROBLEM", "CheckResult", "Notebook", "as_graded"]

# What a check says when every public test passed: true of every question, whatever its tests check.
NO_PROBLEM = (
    "{name}: the public tests found no problem. They check the answer's form and rule out known "
    "mistakes; they do not show that it is right: the hidden tests decide the grade."
)
MAX_DEPTH = 32  # of nested lists and tuples, as the grader's plain data goes
# plain_data's placeholder for SymPy text that parse refused, as a check in the grader receives it
_REFUSED = re.compile(r"SymPy expression that the grader does not accept \((?P<reason>.*)\)", re.S)
# What as_graded read during the check that runs now: (name, answer as the grader reads it).
_read: list[tuple[str, Any]] = []


def as_graded(answer: Any, points: Iterable[Mapping[str, Any]], *, name: str) -> Any:
    """``answer`` as the grader reads it, checked to have a value at every one of ``points``.

    A symbolic answer crosses to the grader as its ``srepr`` text (:func:`coursekit.symbolic.to_data`),
    which :func:`coursekit.symbolic.parse` rebuilds from an allowlist of SymPy nodes; each
    expression is then evaluated by :func:`coursekit.symbolic.evaluate`, which has no value where the
    answer is not a finite real number (a logarithm of a negative number, a division by zero, a
    function outside the interval where the grader computes it). Every SymPy object in ``answer``
    (an expression, a ``Tuple``, a matrix; alone or in lists and tuples, as the grader's plain data
    carries them) is read so; anything else is returned as it is, for the question's own checks.
    What was read is shown by the check that runs (:class:`CheckResult`).

    Parameters
    ----------
    answer : object
        The student's answer: a SymPy expression, ``Tuple`` or matrix, or a list or tuple of them.
        In the grader, the answer as it arrived (a refused expression is a placeholder that says why).
    points : iterable of mapping of str to number
        Values of the question's symbols, by name (for instance from
        :func:`coursekit.symbolic.random_points` on the question's domain).
    name : str
        The answer's name in the notebook, for the messages.

    Returns
    -------
    object
        The answer rebuilt as the grader rebuilds it: unevaluated expressions, matrices immutable.

    Raises
    ------
    AssertionError
        If the grader refuses an expression (with the parser's reason), if an expression uses a
        symbol the points do not define, or if it is not a finite real number at one of the points.

    Examples
    --------
    >>> N1, a, N = sympy.symbols("N1 a N", positive=True)
    >>> as_graded(N1 + a / N, [{"N1": "3", "a": "1", "N": "2"}], name="q1")
    N1 + a/N
    >>> as_graded(sympy.log(N1 - a), [{"N1": "1", "a": "2"}], name="q1")
    Traceback (most recent call last):
    ...
    AssertionError: the grader computes no value for q1 at N1 = 1, a = 2: it is not a finite real number there
    """
    points = [dict(point) for point in points]
    graded = _read_answer(answer, name, 0)
    _read.append((name, graded))
    defined = {symbol for point in points for symbol in point}
    for label, expression in _expressions(graded, name):
        extra = sorted({s.name for s in expression.free_symbols} - defined)
        if extra:
            raise AssertionError(
                f"{label} uses {', '.join(extra)}, which the question does not define "
                f"(its symbols: {', '.join(sorted(defined))})"
            )
        used = {s.name for s in expression.free_symbols}
        for point in points:
            if evaluate(expression, point) is None:
                where = ", ".join(f"{k} = {v}" for k, v in point.items() if k in used) or "every point"
                raise AssertionError(
                    f"the grader computes no value for {label} at {where}: it is not a finite real number there"
                )
    return graded


def _read_answer(value: Any, name: str, depth: int) -> Any:
    """``value`` with every SymPy object rebuilt from its ``srepr`` text, as the grader rebuilds it."""
    if depth > MAX_DEPTH:
        raise AssertionError(f"{name} is nested more than {MAX_DEPTH} levels deep; the grader does not read it")
    if type(value) in (list, tuple):
        return type(value)(_read_answer(item, name, depth + 1) for item in value)
    if type(value).__name__ == "Unrepresentable":  # in the grader: what plain data made of it
        refused = _REFUSED.fullmatch(getattr(value, "type_name", ""))
        if refused:
            raise AssertionError(f"the grader does not accept {name}: {refused['reason']}")
        return value
    if type(value).__module__.startswith("sympy.") and hasattr(value, "free_symbols"):
        try:
            return parse(to_data(value)["sympy"])
        except SymbolicAnswerError as error:
            raise AssertionError(f"the grader does not accept {name}: {error}") from None
    return value


def _expressions(value: Any, name: str) -> list[tuple[str, sympy.Expr]]:
    """The expressions in ``value`` (read by :func:`_read_answer`), each with its name in messages."""
    if isinstance(value, sympy.MatrixBase):  # first: an immutable matrix is an Expr too
        return [(f"{name}[{i}, {j}]", value[i, j]) for i in range(value.rows) for j in range(value.cols)]
    if isinstance(value, sympy.Expr):
        return [(name, value)]
    if isinstance(value, (list, tuple, sympy.Tuple)):
        return [found for index, item in enumerate(value) for found in _expressions(item, f"{name}[{index}]")]
    return []


class CheckResult:
    """What ``grader.check`` returns in a student notebook: otter's result, told honestly.

    Every attribute of otter's result (``passed_all``, ``score``, ``test_case_results``, ...) is
    read through; only what it says is changed. Shown in text (``repr``) and HTML: :data:`NO_PROBLEM`
    when every public test passed, otter's report (the failed test's message) when one failed;
    then, for each answer that :func:`as_graded` read during the check, the answer as the grader
    read it (SymPy's text in text, typeset LaTeX in HTML).

    Parameters
    ----------
    result : otter.test_files.abstract_test.TestFile
        What otter's ``Notebook.check`` returned.
    read : list of (str, object)
        The answers :func:`as_graded` read during the check, by name.
    """

    def __init__(self, result: Any, read: list[tuple[str, Any]] | None = None):
        self.result = result
        self.read = list(read or [])

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "result":  # not yet set (copying, unpickling): no recursion
            raise AttributeError(attribute)
        return getattr(self.result, attribute)

    def summary(self, public_only: bool = False) -> str:
        """The check's report in text (what otter's ``summary`` gives, told honestly).

        Parameters
        ----------
        public_only : bool, default False
            Report on the public tests only (as otter's ``summary``).

        Returns
        -------
        str
        """
        passed = self.result.passed_all_public if public_only else self.result.passed_all
        if not passed:
            report = self.result.summary(public_only=public_only)
        else:
            report = NO_PROBLEM.format(name=self.result.name)
            report += "".join(f"\n{name} message: {message}" for name, message in self._messages())
        echo = "".join(f"\nThe grader reads {name} as: {sympy.sstr(value)}" for name, value in self.read)
        return report + echo

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        if not self.result.passed_all:
            report = self.result._repr_html_()
        else:
            words = html.escape(NO_PROBLEM.format(name=self.result.name))
            report = f"<p><strong>{words}</strong></p>"
            for name, message in self._messages():
                report += f"<p><strong><code>{html.escape(name)}</code> message:</strong> {html.escape(message)}</p>"
        for name, value in self.read:
            report += (
                f"<p>The grader reads <code>{html.escape(name)}</code> as "
                f"$\\displaystyle {html.escape(sympy.latex(value))}$</p>"
            )
        return report

    def _messages(self) -> list[tuple[str, str]]:
        return [
            (r.test_case.name, r.test_case.success_message)
            for r in self.result.test_case_results
            if r.test_case.success_message is not None
        ]


class Notebook(otter.Notebook):
    """Otter's ``Notebook`` whose :meth:`check` never says "passed" (see :class:`CheckResult`).

    Everything else (``export``, ``check_all``, ``to_pdf``, ...) is otter's. A student notebook's
    ``# Initialize Otter`` cell makes one: ``grader = Notebook("NAME.ipynb")``. Where the student's
    variant shuffles a question's options or shows a statement in its not-form, the check reads the
    order and the forms from the notebook's metadata (``coursekit.options`` and ``coursekit.flips``,
    :mod:`coursekit.build.personal`) and gives the tests the answer in the master's letters and
    forms, as the grader does.
    """

    def _option_order(self, question: str) -> tuple[dict[str, str], list[str]]:
        try:
            with open(self._notebook, encoding="utf-8") as handle:
                metadata = json.load(handle).get("metadata", {})
        except (OSError, TypeError, ValueError):
            return {}, []
        ours = metadata.get("coursekit") or {}
        order = ours.get("options", {}).get(question)
        flips = ours.get("flips", {}).get(question)
        return (order if isinstance(order, dict) else {}), (flips if isinstance(flips, list) else [])

    def check(self, question: str, global_env: dict[str, Any] | None = None) -> CheckResult:
        """Run ``question``'s public tests on the notebook's answers, as otter does, and say honestly what came out.

        Parameters
        ----------
        question : str
            The question's name (``"q1"``).
        global_env : dict, optional
            Where the answers are; by default the caller's globals (the notebook's).

        Returns
        -------
        CheckResult
        """
        if global_env is None:
            global_env = inspect.currentframe().f_back.f_globals
        order, flips = self._option_order(question)
        if order and question in global_env:  # the student's letters and forms, as the master's tests read them
            global_env = {**global_env, question: translate(global_env[question], order, flips)}
        _read.clear()
        try:
            result = super().check(question, global_env)
            return CheckResult(result, _read)
        finally:
            _read.clear()
