"""Symbolic answers: a derived formula entered as a SymPy expression and checked for equivalence.

A derive question asks for the *result* of a derivation, in symbols the prompt names; the student
enters it as a SymPy expression, and the check accepts any expression equal to the reference,
however it is written (as PrairieLearn's symbolic inputs do). Two rules keep this safe:

- **It crosses as data.** In the student's process the expression becomes its ``srepr`` text
  (:func:`to_data`); on the grader's side :func:`parse` rebuilds it from a parse tree that may hold
  nothing but calls of an allowlist of SymPy node names, numbers, strings for symbol names and
  lists (:data:`ACCEPTED`; :data:`REFUSED` names what the grader cannot evaluate, such as an
  unevaluated ``Sum``, and what to write instead). Nothing is imported, looked up or evaluated by
  name, and every node is built with ``evaluate=False``, so no arithmetic happens while parsing.
- **It is compared by evaluation, never by simplification.** :func:`equivalent` evaluates the
  answer and the reference at points the question chooses, in 30-digit arithmetic (mpmath), with a
  guard on the size of every intermediate value: an expression built to explode (``10**10**10**9``)
  is "not a number there", in microseconds. Each function is evaluated only where its arguments lie
  in an interval measured to keep one evaluation under about a millisecond (mpmath's
  ``polygamma(10, x)`` takes seconds at ``x = -10**6`` and longer in proportion below it); elsewhere
  it too is "not a number there", and no course question needs an argument near an edge. Two
  expressions that agree at a dozen random points of a domain agree everywhere on it, except with
  probability zero (a nonzero analytic function does not vanish on a set of positive measure).

:func:`digest` fingerprints an answer (a number rounded, or an expression's values at fixed points),
so that a public check can recognise a known slip and name it without showing its value or formula.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
from collections.abc import Iterable, Mapping
from typing import Any

import mpmath
import sympy
from sympy.functions.elementary.piecewise import ExprCondPair
from sympy.functions.special.hyper import TupleArg

from coursekit import evaluator
from coursekit.evaluator import DIGITS, LOGIC, RELATIONS, evaluate

__all__ = [
    "ACCEPTED",
    "REFUSED",
    "SymbolicAnswerError",
    "digest",
    "equivalent",
    "evaluate",
    "parse",
    "random_points",
    "to_data",
]

MAX_TEXT = 100_000
MAX_NODES = 5_000
MAX_DEPTH = 100
MAX_DIGITS = 30  # integer literals

_CONSTANTS = {
    "pi": sympy.pi,
    "E": sympy.E,
    "oo": sympy.oo,
    "zoo": sympy.zoo,
    "nan": sympy.nan,
    "I": sympy.I,
    "true": sympy.true,
    "false": sympy.false,
    "EulerGamma": sympy.EulerGamma,
}
_OPERATIONS = {"Add": sympy.Add, "Mul": sympy.Mul, "Pow": sympy.Pow}
_FUNCTIONS = {
    name: getattr(sympy, name)
    for name in (
        "exp",
        "log",
        "Abs",
        "sign",
        "sin",
        "cos",
        "tan",
        "asin",
        "acos",
        "atan",
        "atan2",
        "sinh",
        "cosh",
        "tanh",
        "asinh",
        "acosh",
        "atanh",
        "gamma",
        "loggamma",
        "digamma",
        "polygamma",
        "beta",
        "binomial",
        "factorial",
        "RisingFactorial",
        "FallingFactorial",
        "erf",
        "erfc",
        "floor",
        "ceiling",
        "Mod",
        "Heaviside",
        "Max",
        "Min",
    )
}
# Conditions of a Piecewise and the nodes SymPy's hyper is made of: built as they are written
# (Basic.__new__), since their constructors compare, order or unpolarify their arguments, which is
# arithmetic on whatever the answer holds (hyper((10**10**25,), (), x) never returns).
_AS_WRITTEN = {cls.__name__: cls for cls in [*RELATIONS, *LOGIC, sympy.Piecewise, ExprCondPair, sympy.hyper, TupleArg]}
_CONTAINERS = {"Tuple", "ImmutableDenseMatrix", "MutableDenseMatrix", "ImmutableMatrix", "Matrix"}
_ASSUMPTIONS = {
    "positive",
    "negative",
    "nonnegative",
    "nonpositive",
    "real",
    "integer",
    "finite",
    "nonzero",
    "zero",
    "rational",
    "odd",
    "even",
    "prime",
    "extended_real",
    "complex",
}
_SYMBOL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_{}^\\,']{0,40}")

#: Every node name :func:`parse` accepts (with the constants ``pi``, ``E``, ``EulerGamma``, ``I``,
#: ``oo``, ``true`` and ``false``): what a prompt or a public check may tell a student to use.
ACCEPTED = ("Symbol", "Integer", "Rational", "Float", *_OPERATIONS, *_FUNCTIONS, *_AS_WRITTEN, *sorted(_CONTAINERS))
_CLOSED_FORM = "the grader cannot evaluate it: write it in closed form"
_INCOMPLETE = "the grader cannot evaluate incomplete gamma functions in bounded time: write the answer without them"
_POLAR = "a branch marker of SymPy's integrate: apply sympy.unpolarify to the answer, or declare the symbols positive"
#: Node names :func:`parse` refuses with advice, each the output of a SymPy call that did not finish
#: the work (an unevaluated sum or integral) or a function the grader cannot evaluate cheaply.
REFUSED = {
    "Sum": f"{_CLOSED_FORM} (a sum over an index has no value at a point until it is summed)",
    "Product": f"{_CLOSED_FORM} (with factorial, gamma or RisingFactorial)",
    "Integral": f"{_CLOSED_FORM} (sympy.integrate returned it unevaluated)",
    "Limit": f"{_CLOSED_FORM} (the limit's value, from sympy.limit)",
    "Derivative": f"{_CLOSED_FORM} (carry the derivative out: sympy.diff or .doit())",
    "Subs": f"{_CLOSED_FORM} (carry the substitution out: .doit())",
    "Function": "an undefined function (sympy.Function('f')) has no value: write the expression it stands for",
    "Lambda": "the answer is an expression in the question's symbols, not a function of them",
    "Dummy": f"{_CLOSED_FORM} (a dummy variable is left by an unevaluated sum or integral)",
    "Order": "drop the O(...) term: the answer is exact",
    "meijerg": f"{_CLOSED_FORM} (SymPy's integrate left a Meijer G-function; try sympy.hyperexpand)",
    "exp_polar": _POLAR,
    "polar_lift": _POLAR,
    "periodic_argument": _POLAR,
    "lowergamma": _INCOMPLETE,
    "uppergamma": _INCOMPLETE,
}


class SymbolicAnswerError(ValueError):
    """The text is not a symbolic answer this module accepts (it says why)."""


def to_data(expression: Any) -> dict:
    """The crossing form of a SymPy expression: ``{"sympy": srepr}``.

    Parameters
    ----------
    expression : sympy.Basic or sympy matrix
        What the student's answer holds.

    Returns
    -------
    dict
        ``{"sympy": text}``; :func:`parse` rebuilds the expression from ``text``.
    """
    return {"sympy": sympy.srepr(expression)}


def parse(text: str) -> Any:
    """Rebuild a SymPy expression from its ``srepr`` text, accepting only an allowlist of nodes.

    Parameters
    ----------
    text : str
        ``sympy.srepr`` of an expression, a ``Tuple`` or a matrix of expressions.

    Returns
    -------
    sympy.Basic or sympy.ImmutableMatrix
        The expression, unevaluated (``evaluate=False`` throughout).

    Raises
    ------
    SymbolicAnswerError
        If the text is too long, too deep or too large, or holds anything but the SymPy nodes of
        :data:`ACCEPTED` (the constants among them), numbers, symbol names and lists; a node of
        :data:`REFUSED` is refused with what to write instead.

    Examples
    --------
    >>> a = sympy.Symbol("a", positive=True)
    >>> parse(sympy.srepr((a - 1) / (a + 2)))
    (a - 1)/(a + 2)
    >>> parse("__import__('os')")
    Traceback (most recent call last):
    ...
    coursekit.symbolic.SymbolicAnswerError: a symbolic answer may not call '__import__'
    """
    if not isinstance(text, str) or len(text) > MAX_TEXT:
        raise SymbolicAnswerError(f"a symbolic answer is SymPy's srepr text of at most {MAX_TEXT:,} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise SymbolicAnswerError(f"not the srepr of a SymPy expression ({type(error).__name__})") from None
    nodes = sum(1 for _ in ast.walk(tree))
    if nodes > MAX_NODES:
        raise SymbolicAnswerError(f"the expression has {nodes:,} parts; at most {MAX_NODES:,} are accepted")
    return _build(tree.body, 0)


def _build(node: ast.AST, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise SymbolicAnswerError(f"the expression is nested more than {MAX_DEPTH} levels deep")
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise SymbolicAnswerError(f"a symbolic answer may not name {node.id!r}")
    if isinstance(node, ast.List):
        return [_build(item, depth + 1) for item in node.elts]
    if not isinstance(node, ast.Call):
        raise SymbolicAnswerError(f"a symbolic answer may not contain {type(node).__name__} nodes")
    if not isinstance(node.func, ast.Name):
        if isinstance(node.func, ast.Call) and getattr(node.func.func, "id", None) == "Function":
            raise SymbolicAnswerError(f"Function: {REFUSED['Function']}")
        raise SymbolicAnswerError("a symbolic answer may only call SymPy's node names (Add, Symbol, ...)")
    name = node.func.id
    if name == "Symbol":
        return _symbol(node)
    if node.keywords and name != "Float":
        raise SymbolicAnswerError(f"{name} takes no keyword arguments in a symbolic answer")
    if name == "Integer":
        return sympy.Integer(_integer(_only(node, 1)[0]))
    if name == "Rational":
        p, q = (_integer(arg) for arg in _only(node, 2))
        if q == 0:
            raise SymbolicAnswerError("Rational with denominator 0")
        return sympy.Rational(p, q)
    if name == "Float":
        return _float(node)
    if name in REFUSED:
        raise SymbolicAnswerError(f"{name}: {REFUSED[name]}")
    if name not in ACCEPTED:
        raise SymbolicAnswerError(f"a symbolic answer may not call {name!r}")
    args = [_build(arg, depth + 1) for arg in node.args]
    if name in _AS_WRITTEN:
        return _as_written(_AS_WRITTEN[name], args)
    if name in _OPERATIONS or name in _FUNCTIONS:
        if not all(isinstance(arg, sympy.Expr) for arg in args):
            raise SymbolicAnswerError(f"{name} takes expressions (a condition only stands in a Piecewise)")
        try:
            return (_OPERATIONS.get(name) or _FUNCTIONS[name])(*args, evaluate=False)
        except (TypeError, ValueError) as error:
            raise SymbolicAnswerError(f"{name}: {error}") from None
    if name == "Tuple":
        return sympy.Tuple(*args)
    rows = _only(node, 1) and args[0]  # a matrix: one list of rows
    if not (isinstance(rows, list) and rows and all(isinstance(r, list) and len(r) == len(rows[0]) for r in rows)):
        raise SymbolicAnswerError("a matrix is a list of rows of equal length")
    return sympy.ImmutableMatrix(rows)


def _as_written(cls: type, args: list) -> Any:
    """A condition, Piecewise or hyper node of exactly these arguments, checked by kind, built unevaluated."""
    condition = (sympy.logic.boolalg.BooleanAtom, sympy.logic.boolalg.BooleanFunction, sympy.core.relational.Relational)
    expr, names = sympy.Expr, {condition: "condition", sympy.Expr: "expression"}
    fixed = {
        ExprCondPair: [expr, condition],
        sympy.Not: [condition],
        sympy.ITE: [condition] * 3,
        sympy.hyper: [TupleArg, TupleArg, expr],
        **{relation: [expr, expr] for relation in RELATIONS},
    }
    if cls in fixed:
        expected, shape = fixed[cls], ", ".join(names.get(kind) or kind.__name__ for kind in fixed[cls])
    else:  # And, Or, Piecewise, TupleArg: one or more
        kind = {sympy.Piecewise: ExprCondPair, TupleArg: expr}.get(cls, condition)
        expected, shape = [kind] * max(1, len(args)), f"one or more {names.get(kind) or kind.__name__}"
    if len(args) != len(expected) or not all(isinstance(a, k) for a, k in zip(args, expected, strict=True)):
        raise SymbolicAnswerError(f"{cls.__name__} takes {shape} in a symbolic answer")
    return sympy.Basic.__new__(cls, *args)


def _only(node: ast.Call, count: int) -> list[ast.AST]:
    if len(node.args) != count:
        raise SymbolicAnswerError(f"{node.func.id} takes {count} argument(s) in a symbolic answer")
    return node.args


def _integer(node: ast.AST) -> int:
    negative = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
    value = node.operand if negative else node
    if not (isinstance(value, ast.Constant) and type(value.value) is int):
        raise SymbolicAnswerError("Integer and Rational take integer literals")
    if len(str(value.value)) > MAX_DIGITS:
        raise SymbolicAnswerError(f"integers of more than {MAX_DIGITS} digits are not accepted")
    return -value.value if negative else value.value


def _float(node: ast.Call) -> sympy.Float:
    (value,) = _only(node, 1)
    precision = {k.arg: k.value for k in node.keywords}
    if set(precision) - {"precision"} or not isinstance(value, ast.Constant) or not isinstance(value.value, str):
        raise SymbolicAnswerError("Float takes a decimal string and an optional precision")
    bits = precision.get("precision", ast.Constant(53))
    if not (isinstance(bits, ast.Constant) and type(bits.value) is int and 1 <= bits.value <= 200):
        raise SymbolicAnswerError("a Float's precision is an integer number of bits up to 200")
    if len(value.value) > 60:
        raise SymbolicAnswerError("a Float is written with at most 60 characters")
    try:
        return sympy.Float(value.value, precision=bits.value)
    except (TypeError, ValueError):
        raise SymbolicAnswerError(f"not a decimal number: {value.value!r}") from None


def _symbol(node: ast.Call) -> sympy.Symbol:
    (name,) = _only(node, 1)
    if not (isinstance(name, ast.Constant) and isinstance(name.value, str) and _SYMBOL_NAME.fullmatch(name.value)):
        raise SymbolicAnswerError("a Symbol is named by a short string of letters, digits and _")
    assumptions = {}
    for keyword in node.keywords:
        if keyword.arg not in _ASSUMPTIONS or not (
            isinstance(keyword.value, ast.Constant) and isinstance(keyword.value.value, bool)
        ):
            raise SymbolicAnswerError(f"Symbol assumption {keyword.arg!r} is not accepted")
        assumptions[keyword.arg] = keyword.value.value
    try:
        return sympy.Symbol(name.value, **assumptions)
    except Exception:  # noqa: BLE001 - SymPy's own error for inconsistent assumptions (positive=True, negative=True)
        raise SymbolicAnswerError("the Symbol's assumptions contradict each other") from None


# --------------------------------------------------------------------------- comparison


def random_points(domains: Mapping[str, tuple[float, float]], count: int = 12, seed: int = 0) -> list[dict]:
    """``count`` points, each symbol drawn uniformly from its interval.

    Parameters
    ----------
    domains : mapping of str to (low, high)
        Each symbol's name and the interval its values are drawn from.
    count : int, default 12
        Number of points.
    seed : int, default 0
        Seed of the draw, so that a check is the same on every run.

    Returns
    -------
    list of dict
        ``[{name: value, ...}, ...]``, values as exact decimal strings of 12 digits.
    """
    draw = random.Random(seed)
    return [{name: f"{draw.uniform(low, high):.12g}" for name, (low, high) in domains.items()} for _ in range(count)]


def equivalent(
    answer: Any, expected: Any, points: Iterable[Mapping[str, Any]], *, rtol: float = 1e-9
) -> tuple[bool, str]:
    """Whether ``answer`` equals ``expected`` at every point, and if not, why.

    Both are evaluated at each point in 30-digit arithmetic; points where the reference is not a
    finite real number are skipped. Symbols are matched by name, so an answer whose symbols carry other
    assumptions than the reference's still compares.

    Parameters
    ----------
    answer : sympy expression, Tuple or matrix
        The student's answer (from :func:`parse`, or built directly).
    expected : sympy expression, Tuple or matrix
        The reference, of the same shape.
    points : iterable of mapping of str to number
        Values of the symbols (names as in the prompt), for instance from :func:`random_points`.
    rtol : float, default 1e-9
        Relative tolerance at each point (absolute where the reference is below 1 in size).

    Returns
    -------
    (bool, str)
        ``(True, "")`` if they agree everywhere, else ``(False, reason)``: not an expression,
        another shape, symbols the question does not define (neither in the reference nor at the points), or
        the first point where they differ.

    Examples
    --------
    >>> a, b = sympy.symbols("a b", positive=True)
    >>> points = random_points({"a": (1, 5), "b": (1, 5)})
    >>> equivalent((a - 1) / (a + b - 2), 1 - (b - 1) / (a + b - 2), points)
    (True, '')
    >>> equivalent(a / (a + b), (a - 1) / (a + b - 2), points)[0]
    False
    """
    answers, references = _cells(answer), _cells(expected)
    if type(answer).__name__ == "Unrepresentable":  # from plain_data: text that parse refused
        return False, f"the answer is {answer!r}"
    if answers is None:
        return False, f"the answer is a {type(answer).__name__}, not a SymPy expression"
    if len(answers) != len(references):
        return False, f"the answer has {len(answers)} entries; {len(references)} were asked for"
    points = list(points)
    # The question defines the symbols of its points, even those that cancel out of the reference
    # (an unsimplified answer may still carry them).
    allowed = {s.name for r in references for s in r.free_symbols} | {name for p in points for name in p}
    extra = sorted({s.name for a in answers for s in a.free_symbols} - allowed)
    if extra:
        return False, f"the answer uses {', '.join(extra)}, which the question does not define"
    compared = 0
    with mpmath.workdps(DIGITS):
        for point in points:
            values = {name: mpmath.mpf(value) for name, value in point.items()}
            for index, (mine, theirs) in enumerate(zip(answers, references, strict=True)):
                reference = evaluator.value_of(theirs, values)
                if reference is None:
                    continue
                compared += 1
                value = evaluator.value_of(mine, values)
                where = ", ".join(f"{k} = {v}" for k, v in point.items())
                entry = f" (entry {index})" if len(references) > 1 else ""
                if value is None:
                    return False, f"the answer{entry} is not a finite real number at {where}"
                if abs(value - reference) > rtol * max(1, abs(reference)):
                    return False, f"the answer{entry} differs from the expected result at {where}"
    if not compared:
        raise ValueError("the reference is not a finite real number at any of the points")
    return True, ""


def digest(value: Any, points: Iterable[Mapping[str, Any]] | None = None, digits: int = 3) -> str:
    """A short fingerprint of an answer, to recognise a known wrong one without showing it.

    A public check that names a known slip ("this is the posterior of state 2") must not show the
    slip's value or formula, from which the right answer often follows. It keeps the slip's digest
    and compares the answer's with it.

    Parameters
    ----------
    value : number, sequence of numbers, or SymPy expression, Tuple or matrix
        The answer.
    points : iterable of mapping of str to number, optional
        For an expression: where to evaluate it (30-digit arithmetic, as :func:`equivalent` does).
        Without points, ``value`` must be a number or a sequence of numbers.
    digits : int, default 3
        Significant digits each value is rounded to before hashing: a number that agrees with the
        slip to this many digits matches it.

    Returns
    -------
    str
        16 hexadecimal digits, or ``""`` where the answer is not a finite real number (so it
        matches no slip).

    Examples
    --------
    >>> digest(2 / 3) == digest(0.6667) != digest(0.67)
    True
    >>> a = sympy.Symbol("a", positive=True)
    >>> points = random_points({"a": (1, 5)})
    >>> digest((a**2 - 1) / (a - 1), points, digits=10) == digest(a + 1, points, digits=10)
    True
    """
    if points is None:
        numbers = list(value) if isinstance(value, (tuple, list)) else [value]
        try:
            floats = [float(v) for v in numbers]
        except (TypeError, ValueError, OverflowError):
            return ""
        if not all(mpmath.isfinite(v) for v in floats):
            return ""
        text = ",".join(f"{v:.{digits}g}" for v in floats)
    else:
        cells = _cells(value)
        if cells is None:
            return ""
        parts = []
        with mpmath.workdps(DIGITS):
            for point in points:
                values = {name: mpmath.mpf(v) for name, v in point.items()}
                for cell in cells:
                    result = evaluator.value_of(cell, values)
                    if result is None:
                        return ""
                    parts.append(mpmath.nstr(result, digits))
        text = ",".join(parts)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _cells(value: Any) -> list | None:
    if isinstance(value, sympy.MatrixBase):
        return list(value)
    if isinstance(value, (sympy.Tuple, tuple, list)):
        return [v for v in value] if all(isinstance(v, sympy.Expr) for v in value) else None
    if isinstance(value, sympy.Expr):
        return [value]
    return None
