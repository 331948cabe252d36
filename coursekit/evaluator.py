"""The grader's evaluator: the value of a SymPy expression at a point, in bounded time.

:func:`value_of` computes an expression that :func:`coursekit.symbolic.parse` rebuilt (or one built
directly) at given values of its symbols, in mpmath's 30-digit arithmetic, node by node, each
intermediate value guarded: a value that is not a real number of moderate size (at most
:data:`HUGE`) is "not a number here" (None), and each function is computed only where its arguments
lie in an interval measured to keep one evaluation under about a millisecond. The logarithm of a
product past :data:`HUGE` is computed as the sum of its factors' logarithms. :func:`evaluate` is the
same at a point given by name, as the public checks (:mod:`coursekit.check`) and the grader call it.
:mod:`coursekit.symbolic` compares and fingerprints answers with it.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Mapping
from typing import Any

import mpmath
import sympy

__all__ = ["DIGITS", "HUGE", "LOGIC", "RELATIONS", "evaluate", "value_of"]

DIGITS = 30  # working precision of the comparison
HUGE = mpmath.mpf(10) ** 300  # larger intermediate values count as "not a number here"
RELATIONS = {
    sympy.StrictLessThan: operator.lt,
    sympy.LessThan: operator.le,
    sympy.StrictGreaterThan: operator.gt,
    sympy.GreaterThan: operator.ge,
    sympy.Equality: operator.eq,
    sympy.Unequality: operator.ne,
}
LOGIC = {
    sympy.And: all,
    sympy.Or: any,
    sympy.Not: lambda truths: not truths[0],
    sympy.ITE: lambda truths: truths[1] if truths[0] else truths[2],
}  # ITE: a Piecewise in a condition


def evaluate(expression: Any, point: Mapping[str, Any]) -> mpmath.mpf | None:
    """The value of ``expression`` at ``point`` as the grader computes it, or None where it has none.

    The grader's evaluator (30-digit arithmetic, every intermediate value guarded, each function only
    where it is cheap to compute): None means "not a finite real number there", for the grader too.

    Parameters
    ----------
    expression : sympy expression
        One expression (from :func:`parse`, or built directly).
    point : mapping of str to number
        Values of its symbols, by name.

    Returns
    -------
    mpmath.mpf or None

    Examples
    --------
    >>> a = sympy.Symbol("a", positive=True)
    >>> float(evaluate(sympy.log(a) + 1, {"a": "1"}))
    1.0
    >>> evaluate(sympy.log(a - 2), {"a": "1"}) is None
    True
    """
    with mpmath.workdps(DIGITS):
        return value_of(expression, {name: mpmath.mpf(value) for name, value in point.items()})


def _guard(value):
    """``value`` if it is a real number of moderate size, else None (the course's answers are real)."""
    if isinstance(value, mpmath.mpc):
        if value.imag != 0:
            return None
        value = value.real
    if not isinstance(value, mpmath.mpf):
        return None
    return value if abs(value) <= HUGE else None  # False for an infinity and for nan


def _number(expression: Any):
    """A SymPy number (or pi, E, ...) as an mpmath number. A small one (most leaves of an answer) is converted
    once, not at every point the answer is evaluated at; a large one is not kept, so that the cache stays
    small whatever an answer holds."""
    small = (
        expression.p.bit_length() <= 256 and expression.q.bit_length() <= 256
        if expression.is_Rational
        else expression._prec <= 256
        if expression.is_Float
        else True
    )
    return _small_number(expression, mpmath.mp.prec) if small else _converted(expression)


@functools.lru_cache(maxsize=4096)
def _small_number(expression: Any, precision: int):  # precision: mpmath's, part of the key
    return _converted(expression)


def _converted(expression: Any):
    try:
        return _guard(mpmath.mpmathify(expression.evalf(DIGITS)))
    except (TypeError, ValueError):
        return None


def _mod(p, q):
    """SymPy's ``Mod``, ``p - q floor(p / q)``, where ``p / q`` keeps 15 digits below the point."""
    return None if q == 0 or abs(p / q) > 1e15 else p - q * mpmath.floor(p / q)


# The functions the evaluator computes, each with the interval that every one of its arguments
# must lie in; outside it the value is "not a number there", and mpmath is not called. Measured at
# 30 digits (mpmath 1.3, one core): inside these intervals no evaluation takes more than about a
# millisecond, and no argument of a course question comes near an edge (its values are counts,
# probabilities and parameters below 10**4). Beyond them some take far longer: exp, sinh and cosh
# 15 ms at 10**300, gamma and factorial 35 ms, beta and binomial 30 ms, erfc 130 ms at 10**100
# (0.2 ms at 10**6 and 10**10). sin, cos and tan are cheap everywhere, but past 10**6 the argument's
# own rounding is no longer small against their period. RisingFactorial and FallingFactorial take
# at most 0.2 ms anywhere, but past 10**6 mpmath's value is wrong (rf(10**300, 3.5) comes out 1.0;
# within 10**6 it agrees with a 80-digit value to 1e-28). The upper edges of exp, gamma and factorial
# and both edges of sinh and cosh are where their values pass HUGE anyway. Where the interval is
# every value the guard lets through, the cost is flat across it (under 0.1 ms at 10**300 and at
# 2**-(10**450); floor, ceiling, erf, the inverse trigonometric and hyperbolic functions and atan2
# under 0.1 ms at +-10**300, 10**-300 and +-1). asin, acos, acosh and atanh outside their real
# domain are complex there, which the guard refuses. Mod keeps p / q within 10**15 (_mod).
# polygamma, Pow, hyper, Heaviside and Piecewise have rules of their own (MAX_ORDER,
# MIN_POLYGAMMA, MAX_EXPONENT, _hyper, _evaluate).
_ANYWHERE = (-HUGE, HUGE)
_MILLION = (-1e6, 1e6)
_NUMERIC = {
    sympy.exp: (mpmath.exp, (-700, 690)),
    sympy.sinh: (mpmath.sinh, (-690, 690)),
    sympy.cosh: (mpmath.cosh, (-690, 690)),
    sympy.tanh: (mpmath.tanh, _ANYWHERE),
    sympy.sin: (mpmath.sin, _MILLION),
    sympy.cos: (mpmath.cos, _MILLION),
    sympy.tan: (mpmath.tan, _MILLION),
    sympy.log: (mpmath.log, _ANYWHERE),
    sympy.Abs: (abs, _ANYWHERE),
    sympy.sign: (mpmath.sign, _ANYWHERE),
    sympy.gamma: (mpmath.gamma, (-170, 170)),
    sympy.factorial: (mpmath.factorial, (-170, 170)),
    sympy.loggamma: (mpmath.loggamma, _ANYWHERE),
    sympy.digamma: (mpmath.digamma, _ANYWHERE),
    sympy.beta: (mpmath.beta, _MILLION),
    sympy.binomial: (mpmath.binomial, _MILLION),
    sympy.RisingFactorial: (mpmath.rf, _MILLION),
    sympy.FallingFactorial: (mpmath.ff, _MILLION),
    **{
        getattr(sympy, name): (getattr(mpmath, name), _ANYWHERE)
        for name in ("asin", "acos", "atan", "asinh", "acosh", "atanh", "erf", "floor")
    },
    sympy.atan2: (lambda y, x: mpmath.atan2(y, x) if y or x else None, _ANYWHERE),
    sympy.erfc: (mpmath.erfc, (-HUGE, 1e6)),
    sympy.ceiling: (mpmath.ceil, _ANYWHERE),
    sympy.Mod: (_mod, _ANYWHERE),
}
# polygamma(m, x): mpmath reaches a negative x by recurrence, one step per unit of |x|, so its cost
# grows with |x| there (for m = 10: 0.6 ms at x = -100, 3 ms at -1000, 3 s at -10**6); digamma
# (m = 0) uses the reflection formula instead and is cheap everywhere.
MAX_ORDER = 10
MIN_POLYGAMMA = -100
MAX_EXPONENT = 10_000  # of Pow: a larger one either explodes or vanishes, and 10**(2**30000) must not be tried
# hyper: only 2F1, the one SymPy's integrate writes for a Beta-type integral, and only where its series
# converges. At z = 1 mpmath sums it in closed form (Gauss), 0.3 ms at most with parameters within
# 10**6. Inside the unit disc its cost grows with the parameters and with |z| (a parameter of 1000
# takes 2 ms at z = 0.5, of 10**4 70 ms, of 10**6 0.5 s; at z = 0.9 a parameter of 10 can take 20 ms),
# and mpmath may raise its working precision without end where the series' terms cancel (up to
# 90 ms before it gives up); with parameters within 30, |z| <= 1/2 and its precision capped at 400
# bits and 2000 terms, no evaluation takes more than 0.6 ms (every combination of parameters
# +-30, +-30.5, 10, +-0.5, 2.5, 10**-6 and z = +-0.5, +-0.25).
HYPER_PARAMETER, HYPER_RADIUS, HYPER_AT_ONE = 30, 0.5, 1e6


def _hyper(expression: Any, values: Mapping[str, Any]):
    """2F1(a, b; c; z) where its series converges and its cost is bounded (see HYPER_PARAMETER), else None."""
    (upper, lower, z) = expression.args
    if (len(upper), len(lower)) != (2, 1):
        return None
    a, b, c, z = args = [value_of(arg, values) for arg in (*upper, *lower, z)]
    if any(arg is None for arg in args):
        return None
    if z == 1 and c - a - b > 0 and max(abs(a), abs(b), abs(c)) <= HYPER_AT_ONE:
        return _guard(mpmath.hyp2f1(a, b, c, z))
    if abs(z) <= HYPER_RADIUS and max(abs(a), abs(b), abs(c)) <= HYPER_PARAMETER:
        return _guard(mpmath.hyp2f1(a, b, c, z, maxprec=400, maxterms=2000))
    return None


def _truth(condition: Any, values: Mapping[str, Any]) -> bool | None:
    """Whether a Piecewise's condition holds at ``values``; None where a side of it has no value."""
    if condition in (sympy.true, sympy.false):
        return bool(condition)
    if condition.func in LOGIC:
        truths = [_truth(arg, values) for arg in condition.args]
        return None if None in truths else LOGIC[condition.func](truths)
    lhs, rhs = (value_of(side, values) for side in condition.args)
    return None if lhs is None or rhs is None else RELATIONS[condition.func](lhs, rhs)


def _log_of(expression: Any, values: Mapping[str, Any]):
    """``log(expression)`` as the sum of its factors' logarithms (each factor positive), or None.

    A log-likelihood written as the logarithm of a product, ``log((N - 1 + a)**N * ...)``, passes
    HUGE inside the logarithm for counts in the hundreds although its value is moderate.
    """
    if expression.func is sympy.Mul:
        parts = [_log_of(arg, values) for arg in expression.args]
        return None if None in parts else _guard(mpmath.fsum(parts))
    if expression.func is sympy.Pow:
        exponent, inner = value_of(expression.args[1], values), _log_of(expression.args[0], values)
        return None if exponent is None or inner is None else _guard(exponent * inner)
    if expression.func is sympy.exp:
        return value_of(expression.args[0], values)
    value = value_of(expression, values)
    return None if value is None or value <= 0 else _guard(mpmath.log(value))


def value_of(expression: Any, values: Mapping[str, Any]):
    """The value of ``expression`` at ``values`` as an mpmath number, or None where it is not a
    finite number of moderate size (every intermediate value is checked, so nothing explodes)."""
    if isinstance(expression, sympy.Symbol):
        return _guard(values.get(expression.name))
    if expression.is_Number or expression in (sympy.pi, sympy.E, sympy.EulerGamma, sympy.I):
        return _number(expression)
    function = expression.func
    try:
        if function is sympy.Piecewise:  # the first piece whose condition holds; only its value is computed
            for piece, condition in expression.args:
                truth = _truth(condition, values)
                if truth is None or truth:
                    return truth and value_of(piece, values)
            return None
        if function is sympy.hyper:
            return _hyper(expression, values)
        if function is sympy.log and len(expression.args) == 1:
            inside = value_of(expression.args[0], values)
            if inside is None:  # perhaps a product past HUGE whose logarithm is moderate
                return _log_of(expression.args[0], values)
            return _guard(mpmath.log(inside))
        if function is sympy.Heaviside:  # H(x, H0): H0 only at x = 0 (SymPy's default H0 is 1/2)
            x = value_of(expression.args[0], values)
            if x is None or x != 0:
                return None if x is None else mpmath.mpf(x > 0)
            return value_of(expression.args[1], values) if len(expression.args) > 1 else mpmath.mpf(0.5)
        args = [value_of(arg, values) for arg in expression.args]
        if any(arg is None for arg in args):
            return None
        if function is sympy.Add:
            return _guard(mpmath.fsum(args))
        if function is sympy.Mul:
            result = mpmath.mpf(1)
            for arg in args:
                result = _guard(result * arg)
                if result is None:
                    return None
            return result
        if function is sympy.Pow:
            base, exponent = args
            if abs(exponent) > MAX_EXPONENT or (base == 0 and exponent <= 0):
                return None
            return _guard(mpmath.power(base, exponent))
        if function in (sympy.Max, sympy.Min):
            return max(args) if function is sympy.Max else min(args)
        if function is sympy.polygamma:
            order, x = args
            if order != int(order) or not 0 <= order <= MAX_ORDER or (order > 0 and x < MIN_POLYGAMMA):
                return None
            return _guard(mpmath.polygamma(int(order), x))
        numeric, (low, high) = _NUMERIC.get(function, (None, (0, 0)))
        if numeric is None or not all(low <= arg <= high for arg in args):
            return None
        return _guard(numeric(*args))
    except (ValueError, ZeroDivisionError, TypeError, OverflowError, ArithmeticError, mpmath.libmp.NoConvergence):
        return None
