"""Symbolic answers: parsed from data by an allowlist, compared by guarded evaluation."""

import itertools
import json
import signal
import time

import mpmath
import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coursekit.grading import plain_data
from coursekit.symbolic import SymbolicAnswerError, digest, equivalent, parse, random_points, to_data

a, b, N = sympy.symbols("a b N", positive=True)
POINTS = random_points({"a": (1, 5), "b": (1, 5), "N": (2, 20)})


@pytest.mark.parametrize("expression", [
    (a - 1) / (N + a + b - 2),
    sympy.gamma(a + b) / (sympy.gamma(a) * sympy.gamma(b)) * sympy.beta(a + N, b),
    sympy.log(a) - sympy.exp(-b / 2) + sympy.sqrt(N) * sympy.pi,
    sympy.Matrix([[a, sympy.Rational(1, 3)], [sympy.Float("0.25"), sympy.binomial(N, 2)]]),
    sympy.Tuple(a, -b, sympy.Max(a, b), sympy.Abs(a - b)),
])
def test_an_answer_crosses_as_data_and_comes_back_equal(expression):
    data = to_data(expression)
    assert set(data) == {"sympy"} and isinstance(data["sympy"], str)
    back = parse(data["sympy"])
    assert equivalent(back, expression, POINTS) == (True, "")


@pytest.mark.parametrize("text, complaint", [
    ("__import__('os')", "may not call '__import__'"),
    ("__import__('os').system('true')", "may only call SymPy's node names"),
    ("Symbol('x').__class__", "Attribute"),
    ("(lambda: 1)()", "may only call SymPy's node names"),
    ("[c for c in ()]", "ListComp"),
    ("Function('f')(Symbol('x'))", "undefined function"),
    ("Integer(10**100)", "integer literals"),
    (f"Integer({10 ** 40})", "more than 30 digits"),
    ("Symbol('x); import os #')", "short string"),
    ("Symbol('x', commutative=False)", "assumption 'commutative'"),
    ("Symbol('x', positive=True, negative=True)", "contradict"),
    ("Float('1e400000000', precision=100000)", "precision"),
    ("Rational(1, 0)", "denominator 0"),
    ("os", "may not name 'os'"),
    ("Add(" * 150 + "Integer(1)" + ")" * 150, "nested more than"),
    ("Add(" + ", ".join(["Integer(1)"] * 6000) + ")", "parts"),
    ("x" * 200_000, "at most"),
    ("Integer(1", "not the srepr"),
])
def test_anything_but_allowed_nodes_is_refused(text, complaint):
    with pytest.raises(SymbolicAnswerError, match=complaint):
        parse(text)


def test_parsing_does_no_arithmetic():
    # 10**(10**25) would take the grader's memory if it were evaluated while parsing.
    tower = parse("Pow(Integer(10), Pow(Integer(10), Integer(25)))")
    assert isinstance(tower, sympy.Pow) and tower.args[0] == 10


def test_an_exploding_answer_is_not_a_number_and_costs_nothing():
    # Written as the text a hostile worker could send (SymPy itself would hang printing the first).
    x = "Symbol('x', positive=True)"
    towers = ["Pow(Integer(10), Pow(Integer(10), Pow(Integer(10), Integer(9))))",
              f"exp(exp(exp(Mul(Integer(1000), {x}))))",
              f"factorial(Integer({10 ** 25}))",
              f"binomial(Mul(Integer({10 ** 20}), {x}), Integer({10 ** 19}))",
              "Mul(" + ", ".join([f"gamma(Integer({10 ** 29}))"] * 600) + ")"]
    started = time.process_time()
    for tower in towers:
        answer = parse(f"Add({tower}, {x})")
        ok, why = equivalent(answer, sympy.Symbol("x"), random_points({"x": (1, 2)}))
        assert not ok and "not a finite real number" in why
    assert time.process_time() - started < 60  # a hang, not a timing: each takes milliseconds


def test_equal_forms_pass_and_known_mistakes_fail_with_a_reason():
    mode = (a - 1) / (a + b - 2)
    assert equivalent(1 - (b - 1) / (a + b - 2), mode, POINTS)[0]
    assert equivalent(sympy.Symbol("a") / sympy.Symbol("a") - (b - 1) / (a + b - 2), mode, POINTS)[0]
    ok, why = equivalent(a / (a + b), mode, POINTS)
    assert not ok and "differs from the expected result at a = " in why
    ok, why = equivalent((a - 1) / (sympy.Symbol("n") + b - 2), mode, POINTS)
    assert not ok and why == "the answer uses n, which the question does not define"
    ok, why = equivalent(0.5, mode, POINTS)
    assert not ok and "not a SymPy expression" in why
    ok, why = equivalent(sympy.Tuple(a, b), sympy.Tuple(a, b, N), POINTS)
    assert not ok and "2 entries; 3 were asked for" in why
    ok, why = equivalent(sympy.Tuple(a, b + 1e-6), sympy.Tuple(a, b), POINTS)
    assert not ok and "(entry 1)" in why


def test_a_symbol_the_question_defines_may_cancel_out_of_the_answer():
    # d/d sigma_2 of a two-component mixture, as sympy.diff leaves it: pi cancels, the reference has none.
    x, pi, mu2, s2, r = sympy.symbols("x pi mu2 s2 r")
    points = random_points({"x": (-5, 5), "pi": (0.1, 0.9), "mu2": (-3, 3), "s2": (0.5, 3), "r": (0.05, 0.95)})
    answer = (r - 1) * (s2**2 * (pi - 1) - (mu2 - x) ** 2 * (pi - 1)) / (s2**3 * (pi - 1))
    assert equivalent(answer, (1 - r) * ((x - mu2) ** 2 / s2**3 - 1 / s2), points) == (True, "")
    ok, why = equivalent(answer + sympy.Symbol("n") - sympy.Symbol("n") * 2, (1 - r) * (x - mu2), points)
    assert not ok and why == "the answer uses n, which the question does not define"


def test_points_where_the_reference_is_undefined_are_skipped():
    x = sympy.Symbol("x")
    points = [{"x": "-1"}, {"x": "2"}, {"x": "3"}]
    assert equivalent(sympy.log(x**2) / 2, sympy.log(x), points) == (True, "")  # log(-1) is not real
    assert not equivalent(sympy.log(x), sympy.log(x**2) / 2, points)[0]
    with pytest.raises(ValueError, match="not a finite real number at any"):
        equivalent(x, sympy.log(-x**2 - 1), points)


def test_a_digest_recognises_a_slip_in_any_form_and_nothing_else():
    # numbers: equal to the given significant digits, however computed
    assert digest(2 / 3) == digest(0.6667) == digest(0.66699)
    assert digest(2 / 3) != digest(0.67) and digest(179, digits=12) != digest(180, digits=12)
    assert digest((1024, 3), digits=12) == digest([1024, 3], digits=12) != digest((1024, 4), digits=12)
    assert digest(float("nan")) == digest("text") == digest(None) == ""
    # expressions: values at the points, to 10 digits
    slip = digest(r_sigma := (a - 1) / (N + a + b - 2), POINTS, digits=10)
    assert digest(sympy.expand((a - 1) * 2) / (2 * (N + a + b - 2)), POINTS, digits=10) == slip
    assert digest(r_sigma + sympy.Rational(1, 10**9), POINTS, digits=10) != slip
    assert digest(sympy.Tuple(a, b), POINTS, digits=10) == digest((a, b), POINTS, digits=10)
    assert digest(sympy.log(-a), POINTS, digits=10) == digest(3.0, POINTS) == ""  # not real; not an expression
    assert len(slip) == 16 and int(slip, 16) >= 0


expressions = st.recursive(
    st.sampled_from([a, b, N, sympy.Integer(2), sympy.Rational(1, 3), sympy.pi]),
    lambda inner: st.one_of(
        st.tuples(inner, inner).map(lambda p: p[0] + p[1]),
        st.tuples(inner, inner).map(lambda p: p[0] * p[1]),
        st.tuples(inner, st.integers(-3, 3)).map(lambda p: p[0] ** p[1] if p[1] >= 0 else 1 / (1 + p[0] ** 2)),
        inner.map(sympy.exp), inner.map(lambda e: sympy.log(1 + e**2))),
    max_leaves=12)


@settings(max_examples=60, deadline=None)
@given(expressions)
def test_every_expression_equals_itself_after_crossing(expression):
    try:
        assert equivalent(parse(to_data(expression)["sympy"]), expression, POINTS[:4])[0]
    except ValueError:  # too large (exp(exp(N))) to be a real number of moderate size anywhere
        assume(False)


def test_answers_cross_the_grader_s_channel_as_text():
    answer = {"mode": (a - 1) / (N + a + b - 2), "both": sympy.Matrix([[a, b]])}
    data = json.loads(json.dumps(plain_data.encode(answer)))
    assert data["d"][0][1] == {"sy": sympy.srepr(answer["mode"])}
    back = plain_data.decode(data)
    assert equivalent(back["mode"], answer["mode"], POINTS)[0] and equivalent(back["both"], answer["both"], POINTS)[0]
    forged = plain_data.decode({"sy": "__import__('os').system('touch /tmp/owned')"})
    assert isinstance(forged, plain_data.Unrepresentable)
    ok, why = equivalent(forged, a, POINTS)
    assert not ok and "does not accept" in why and "may only call SymPy's node names" in why


# --------------------------------------------------------------------------- bounds of the evaluator

x = sympy.Symbol("x")


def at(expression, value: str):
    """``equivalent`` of ``expression`` at x = ``value`` with mpmath's own value there (30 digits)."""
    with mpmath.workdps(30):
        reference = sympy.lambdify(x, expression, "mpmath")(mpmath.mpf(value))
    return equivalent(expression, sympy.Float(mpmath.nstr(reference, 30), 30), [{"x": value}])


def unevaluated(function, *args):
    return function(*args, evaluate=False)


# (expression in x, an x at the edge of what the evaluator accepts, an x just outside it). At every
# outside point mpmath has a finite value of moderate size, so None there is the bound's doing.
BOUNDED = [
    (sympy.exp(x), "690", "690.001"), (sympy.exp(x), "-700", "-700.001"),
    (sympy.sinh(x), "-690", "-690.001"), (sympy.cosh(x), "690", "690.001"),
    (sympy.sin(x), "1e6", "1000001"), (sympy.cos(x), "-1e6", "-1000001"), (sympy.tan(x), "1e6", "1000001"),
    (sympy.gamma(x), "-169.5", "-170.5"), (sympy.factorial(x), "-169.5", "-170.5"),
    (sympy.beta(x, 2), "1e6", "1000001"), (sympy.beta(x, 2), "-999999.5", "-1000000.5"),
    (sympy.binomial(x, 2), "1e6", "1000001"), (sympy.binomial(x, 2), "-999999.5", "-1000000.5"),
    (unevaluated(sympy.polygamma, 10, x), "-99.5", "-100.5"), (unevaluated(sympy.polygamma, 1, x), "-99.5", "-100.5"),
    (unevaluated(sympy.Pow, 1 + x, 10_000), "0.0001", None), (unevaluated(sympy.Pow, 1 + x, 10_001), None, "0.0001"),
    (unevaluated(sympy.Pow, 1 + x, -10_000), "0.0001", None), (unevaluated(sympy.Pow, 1 + x, -10_001), None, "0.0001"),
    (unevaluated(sympy.Pow, 1.0001, x), "-1e4", "-10000.5"),
]
# Functions evaluated wherever the guard lets a value through (at most 1e300 in size): just past that,
# x itself is not a number.
EVERYWHERE = [
    (sympy.tanh(x), "1e300"), (sympy.log(x), "1e300"), (sympy.Abs(x), "-1e300"), (sympy.sign(x), "-1e300"),
    (sympy.loggamma(x), "1e297"), (sympy.digamma(x), "1e300"), (unevaluated(sympy.polygamma, 0, x), "-999999.5"),
    (unevaluated(sympy.polygamma, 3, x), "1e300"), (unevaluated(sympy.Max, x, 2), "1e300"),
    (unevaluated(sympy.Min, x, 2), "-1e300"),
]


def not_a_number(expression, value: str) -> bool:
    return digest(expression, [{"x": value}]) == ""


@pytest.mark.parametrize("expression, edge, outside", BOUNDED)
def test_every_function_evaluates_up_to_the_edge_of_its_domain_and_not_past_it(expression, edge, outside):
    if edge is not None:
        assert at(expression, edge) == (True, "")
    if outside is not None:
        with mpmath.workdps(30):
            there = sympy.lambdify(x, expression, "mpmath")(mpmath.mpf(outside))
        assert mpmath.isfinite(there) and abs(there) < 1e300  # a number, which the evaluator declines
        assert not_a_number(expression, outside)


@pytest.mark.parametrize("expression, edge", EVERYWHERE)
def test_functions_cheap_everywhere_evaluate_wherever_their_argument_is_a_number(expression, edge):
    assert at(expression, edge) == (True, "")
    assert not_a_number(expression, edge.replace("1e", "1.5e").replace("999999.5", "1.5e300"))


@pytest.mark.parametrize("expression, value, reason", [
    (sympy.gamma(x), "170", "gamma(170) passes 1e300: gamma's upper edge is where its values leave the range"),
    (sympy.exp(x), "690.8", "so does exp(690.8)"),
    (unevaluated(sympy.polygamma, 11, x), "2", "orders above 10 are refused"),
    (unevaluated(sympy.polygamma, sympy.Rational(5, 2), x), "2", "an order that is not whole is refused"),
    (unevaluated(sympy.polygamma, 10, x - 10**6), "0.5", "polygamma(10, -10**6 + 1/2) once took seconds to minutes"),
    (unevaluated(sympy.Pow, 10, unevaluated(sympy.Pow, x, 30_000)), "2", "2**30000 is past the largest exponent"),
])
def test_past_the_bounds_a_value_is_not_a_number(expression, value, reason):
    ok, why = equivalent(expression, sympy.Integer(1), [{"x": value}])
    assert not ok and "not a finite real number" in why, reason
    assert not_a_number(expression, value)


# Symbols, orders and the extremes of each function's domain (huge, tiny, negative, near a pole),
# written as a worker sends them: srepr text, which only parse turns into an expression (SymPy's
# own printer would evaluate some of these while ordering the terms of a sum).
LEAVES = ["Symbol('a', positive=True)", "Symbol('b', positive=True)", "Integer(3)", "Integer(10)",
          "Rational(-1999999, 2)", "Integer(1000000)", "Integer(-101)", "Integer(170)", "Float('1e300')",
          "Float('-1e300')", "Float('1e-300')", "Float('690.5')", "pi"]
ONE = ["exp", "log", "Abs", "sign", "sin", "cos", "tan", "sinh", "cosh", "tanh", "gamma", "loggamma", "digamma",
       "factorial"]
TWO = ["polygamma", "beta", "binomial", "Max", "Min", "Pow", "Add", "Mul"]
leaves = st.sampled_from(LEAVES)
any_text = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds("{}({})".format, st.sampled_from(ONE), leaves | inner),
        st.builds("{}({}, {})".format, st.sampled_from(TWO), leaves | inner, leaves | inner)),
    max_leaves=10)


# A bound on work, not a benchmark: one such expression once took minutes to evaluate (polygamma
# far below 0); now each of its evaluations takes at most about a millisecond, so an example that
# needs 2 s has found a function or an argument whose cost the evaluator does not bound.
@settings(max_examples=300, deadline=2000)
@given(any_text)
def test_any_expression_of_the_allowlist_is_compared_in_bounded_time(text):
    answer = parse(text)
    ok, why = equivalent(answer, a, POINTS)
    assert ok is False or why == ""
    assert isinstance(digest(answer, POINTS), str)


EXTREMES = [sympy.Integer(n) for n in (0, 1, 3, 10, -1, -101, 170, 10**6, -10**6)] + [
    sympy.Rational(-2 * 10**6 + 1, 2), sympy.Rational(-341, 2), sympy.Rational(5, 2)] + [
    sympy.Float(text, 15) for text in ("1e300", "-1e300", "1e-300", "-1e-300", "690.5", "-700.5")]


def test_every_function_at_every_extreme_argument_is_evaluated_or_declined_at_once():
    # A bound on work, not a benchmark: polygamma(10, -1e300) never finished and polygamma(10,
    # -10**6 + 1/2) took seconds to minutes; the whole grid takes about a second, and the alarm only turns a hang
    # into a failure.
    def hung(signum, frame):
        raise TimeoutError("an evaluation did not finish")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    try:
        for name, arity in [(name, 1) for name in ONE] + [(name, 2) for name in TWO]:
            for args in itertools.product(EXTREMES, repeat=arity):
                fingerprint = digest(unevaluated(getattr(sympy, name), *args), [{}])
                assert fingerprint == "" or len(fingerprint) == 16
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
