"""Tests of lecturekit.smoothing (chapter 4: smoothing and MAP estimation)."""

from itertools import pairwise

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.integrate import quad
from scipy.optimize import minimize, minimize_scalar
from scipy.special import logsumexp, softmax, xlog1py, xlogy
from scipy.stats import dirichlet
from test_estimation import counts_arrays

from lecturekit import estimation
from lecturekit.naive_bayes import BernoulliNB, MultinomialNB
from lecturekit.smoothing import (
    add_k,
    beta_map,
    beta_posterior_mean,
    dirichlet_map,
    dirichlet_posterior_mean,
    interpolate,
    interpolated_estimate,
)

# counts_arrays: chapter 1's count tables (tests/lecturekit/test_estimation.py), shared rather than copied
tables = hnp.arrays(
    dtype=np.int64,
    shape=hnp.array_shapes(min_dims=2, max_dims=2, min_side=1, max_side=6),
    elements=st.integers(0, 50),
)
alphas = st.floats(0.0, 1e3)
lams = st.floats(0.0, 1.0)


@st.composite
def binomial_data(draw):
    trials = draw(st.integers(0, 500))
    return draw(st.integers(0, trials)), trials


def assert_distributions(p, axis=-1):
    assert np.all(np.isfinite(p))
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=0, atol=1e-12)


# --------------------------------------------------------------------------- add_k: one copy


def test_add_k_is_estimations_own_function():
    """smoothing re-exports add_k; the formula lives only in estimation (and naive Bayes uses it)."""
    from lecturekit.naive_bayes import bernoulli, multinomial

    assert add_k is estimation.add_k is multinomial.add_k is bernoulli.add_k


@settings(max_examples=100, deadline=None)
@given(counts=counts_arrays)
def test_add_k_tends_to_uniform_as_k_grows(counts):
    uniform = 1.0 / counts.shape[-1]
    ks = [0.5, 1.0, 10.0, 1e3, 1e6, 1e12]
    distances = [np.abs(add_k(counts, k=k) - uniform).max() for k in ks]
    assert all(a >= b - 1e-12 for a, b in pairwise(distances))
    assert distances[-1] < 1e-8
    # the same limit in the Bayesian view: a stronger symmetric prior pulls harder
    assert np.abs(dirichlet_posterior_mean(counts, 1e12) - uniform).max() < 1e-8
    assert np.abs(dirichlet_map(counts, 1e12) - uniform).max() < 1e-8


# --------------------------------------------------------------------------- closed forms = argmax


def neg_beta_log_posterior(theta, n1, n, a, b):
    return -(xlogy(n1 + a - 1, theta) + xlog1py(n - n1 + b - 1, -theta))


BETA_CASES = [
    (n1, n, a, b)
    for n, n1 in [(0, 0), (1, 0), (1, 1), (3, 2), (10, 0), (10, 10), (25, 7), (400, 123)]
    for a, b in [(1, 1), (2, 2), (1, 3), (5, 1), (1.5, 4.25), (30, 2)]
    if n + a + b > 2
]  # (no data, flat prior) has no unique mode: an error, tested below


@pytest.mark.parametrize("n1, n, a, b", BETA_CASES)
def test_beta_map_maximises_the_log_posterior(n1, n, a, b):
    result = minimize_scalar(
        neg_beta_log_posterior, bounds=(0.0, 1.0), args=(n1, n, a, b), method="bounded", options={"xatol": 1e-12}
    )
    assert beta_map(n1, n, a, b) == pytest.approx(result.x, abs=1e-6)


@pytest.mark.parametrize("n1, n, a, b", BETA_CASES)
def test_beta_posterior_mean_integrates_the_posterior(n1, n, a, b):
    shift = neg_beta_log_posterior(beta_map(n1, n, a, b), n1, n, a, b)  # keep exp() near 1

    def density(t):
        return np.exp(shift - neg_beta_log_posterior(t, n1, n, a, b))

    mass = quad(density, 0, 1, epsabs=0, epsrel=1e-12, limit=200)[0]
    mean = quad(lambda t: t * density(t), 0, 1, epsabs=0, epsrel=1e-12, limit=200)[0] / mass
    assert beta_posterior_mean(n1, n, a, b) == pytest.approx(mean, abs=1e-6)


def dirichlet_cases():
    rng = np.random.default_rng(0)
    for _ in range(60):
        k = int(rng.integers(2, 7))
        counts = rng.integers(0, 20, size=k) * rng.integers(0, 2, size=k)  # many zero counts
        beta = 1.0 + rng.integers(0, 3, size=k) * rng.random(k)  # many betas of exactly 1
        if counts.sum() + (beta - 1).sum() > 0:
            yield counts, beta


@pytest.mark.parametrize("counts, beta", list(dirichlet_cases()))
def test_dirichlet_map_maximises_the_log_posterior(counts, beta):
    """Maximise sum_k (N_k + beta_k - 1) log phi_k over the simplex, phi = softmax(z)."""
    w = counts + beta - 1

    def negative(z):
        log_phi = z - logsumexp(z)
        return -(w @ log_phi), -(w - w.sum() * softmax(z))

    result = minimize(
        negative, np.zeros(counts.size), jac=True, method="BFGS", options={"gtol": 1e-12, "maxiter": 10_000}
    )
    np.testing.assert_allclose(dirichlet_map(counts, beta), softmax(result.x), rtol=0, atol=1e-6)


@pytest.mark.parametrize("counts, beta", list(dirichlet_cases()))
def test_dirichlet_posterior_mean_is_the_posterior_dirichlets_mean(counts, beta):
    np.testing.assert_allclose(
        dirichlet_posterior_mean(counts, beta), dirichlet(counts + beta).mean(), rtol=0, atol=1e-12
    )


def test_laplace_is_the_map_under_beta_2_2_and_the_mean_under_the_flat_prior():
    # heads, heads, tails
    assert beta_map(2, 3, 2, 2) == pytest.approx(3 / 5, abs=1e-15) == add_k([2, 1], 1)[0]
    assert beta_posterior_mean(2, 3, 1, 1) == pytest.approx(3 / 5, abs=1e-15)
    assert beta_map(2, 3, 1, 1) == pytest.approx(2 / 3, abs=1e-15)  # flat prior: the MLE


# --------------------------------------------------------------------------- the alpha mapping


@settings(max_examples=200, deadline=None)
@given(data=binomial_data(), alpha=alphas)
def test_beta_map_under_beta_alpha_plus_one_is_add_alpha(data, alpha):
    n1, n = data
    assume(n > 0 or alpha + 1 > 1)  # alpha + 1 rounds to 1 for alpha < 1e-16: the flat prior
    expected = add_k([n1, n - n1], alpha)[0]
    assert beta_map(n1, n, alpha + 1, alpha + 1) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(data=binomial_data(), alpha=alphas)
def test_beta_posterior_mean_under_beta_alpha_is_add_alpha(data, alpha):
    n1, n = data
    assume(n > 0 or alpha > 0)
    expected = add_k([n1, n - n1], alpha)[0]
    assert beta_posterior_mean(n1, n, alpha, alpha) == pytest.approx(expected, rel=1e-12, abs=1e-15)


@settings(max_examples=200, deadline=None)
@given(counts=counts_arrays, alpha=st.floats(1e-3, 1e3))
def test_dirichlet_estimates_with_symmetric_priors_are_add_alpha(counts, alpha):
    expected = add_k(counts, alpha)
    np.testing.assert_allclose(dirichlet_map(counts, alpha + 1), expected, rtol=1e-12)
    np.testing.assert_allclose(dirichlet_posterior_mean(counts, alpha), expected, rtol=1e-12)
    for axis in range(counts.ndim):  # the same along any category axis
        np.testing.assert_allclose(
            dirichlet_map(counts, alpha + 1, axis=axis), add_k(counts, alpha, axis=axis), rtol=1e-12
        )


@pytest.mark.parametrize("alpha", [1.0, 0.5, 0.01])
def test_naive_bayes_alpha_is_the_map_under_a_prior_alpha_plus_one(alpha):
    """The documented mapping alpha = a - 1, on the fitted naive Bayes estimates."""
    rng = np.random.default_rng(0)
    X = sp.random(60, 30, density=0.2, format="csr", random_state=1, data_rvs=lambda n: rng.integers(1, 5, n))
    y = rng.integers(0, 3, size=60)
    multinomial = MultinomialNB(alpha=alpha).fit(X, y)
    np.testing.assert_allclose(
        multinomial.feature_log_prob_,
        np.log(dirichlet_map(multinomial.feature_count_, alpha + 1, axis=1)),
        rtol=0,
        atol=1e-12,
    )
    bernoulli = BernoulliNB(alpha=alpha).fit(X, y)
    np.testing.assert_allclose(
        bernoulli.feature_log_prob_,
        np.log(beta_map(bernoulli.feature_count_, bernoulli.class_count_[:, None], alpha + 1, alpha + 1)),
        rtol=0,
        atol=1e-12,
    )


# --------------------------------------------------------------------------- invariants


@settings(max_examples=200, deadline=None)
@given(data=binomial_data(), a=st.floats(1.0, 100.0), b=st.floats(1.0, 100.0))
def test_beta_estimates_are_probabilities_between_the_mle_and_the_prior(data, a, b):
    n1, n = data
    assume(n + a + b > 2.0 + 1e-9)
    mode, mean = beta_map(n1, n, a, b), beta_posterior_mean(n1, n, a, b)
    for value in (mode, mean):
        assert isinstance(value, float) and 0.0 <= value <= 1.0
    if n > 0:  # shrinkage: the posterior mean lies between the MLE and the prior mean
        low, high = sorted([n1 / n, a / (a + b)])
        assert low - 1e-12 <= mean <= high + 1e-12


@settings(max_examples=200, deadline=None)
@given(counts=counts_arrays, data=st.data())
def test_dirichlet_estimates_are_distributions(counts, data):
    k = counts.shape[-1]
    beta = data.draw(hnp.arrays(np.float64, k, elements=st.floats(1.0, 1e3)))
    assume(np.all(counts.sum(axis=-1) + (beta - 1).sum() > 0))
    assert_distributions(dirichlet_map(counts, beta))
    assert_distributions(dirichlet_posterior_mean(counts, beta))


@settings(max_examples=200, deadline=None)
@given(table=tables, lam=lams, data=st.data())
def test_interpolation_gives_distributions_and_its_endpoints(table, lam, data):
    conditional = add_k(table, 1.0, axis=1)
    marginal = add_k(table.sum(axis=0), data.draw(st.floats(0.01, 10.0)))
    mixed = interpolate(conditional, marginal, lam)
    assert mixed.shape == conditional.shape
    assert_distributions(mixed)
    np.testing.assert_array_equal(interpolate(conditional, marginal, 1.0), conditional)
    np.testing.assert_array_equal(interpolate(conditional, marginal, 0.0), np.broadcast_to(marginal, conditional.shape))


@settings(max_examples=200, deadline=None)
@given(table=tables.filter(lambda t: t.sum(axis=1).min() > 0), lam=lams)
def test_interpolated_estimate_from_counts(table, lam):
    estimate = interpolated_estimate(table, lam)
    assert_distributions(estimate)
    expected = lam * table / table.sum(axis=1, keepdims=True) + (1 - lam) * table.sum(axis=0) / table.sum()
    np.testing.assert_allclose(estimate, expected, rtol=1e-12, atol=1e-15)
    if lam < 1:  # a value seen in any class has non-zero probability in every class
        seen = table.sum(axis=0) > 0
        assert np.all(estimate[:, seen] > 0)


def test_interpolation_shares_mass_by_overall_frequency():
    # class 0 never saw values 1 and 2; value 2 is four times as common overall as value 1
    table = np.array([[5, 0, 0], [0, 1, 4]])
    estimate = interpolated_estimate(table, lam=0.9)
    assert estimate[0, 2] == pytest.approx(4 * estimate[0, 1])
    np.testing.assert_allclose(interpolated_estimate([[0, 0], [1, 3]], lam=0.0), [[0.25, 0.75]] * 2)


def test_flat_prior_map_is_the_mle_and_an_unseen_value_can_stay_at_zero():
    np.testing.assert_array_equal(dirichlet_map([3, 0, 1], 1.0), estimation.mle([3, 0, 1]))
    assert beta_map(0, 5, 1, 3) == 0.0  # mode on the boundary: the closed form holds there too


def test_broadcasting_and_scalars():
    assert isinstance(beta_map(2, 3), float)
    np.testing.assert_allclose(beta_map([0, 1, 2], 2, a=2, b=2), [0.25, 0.5, 0.75])
    np.testing.assert_allclose(beta_posterior_mean(1, 2, a=[1, 2, 3], b=1), [2 / 4, 3 / 5, 4 / 6])
    grid = beta_map(np.array([[1], [2]]), 4, a=[2, 3], b=2)
    assert grid.shape == (2, 2)
    # one concentration per category applies along the chosen axis
    counts = np.array([[3, 0], [1, 2], [0, 0]])
    np.testing.assert_allclose(
        dirichlet_posterior_mean(counts, [1, 2, 3], axis=0), dirichlet_posterior_mean(counts.T, [1, 2, 3]).T
    )


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: dirichlet_map([2, -1]), "Negative values in counts"),
        (lambda: dirichlet_map([np.nan, 1]), "NaN or infinite"),
        (lambda: dirichlet_posterior_mean([np.inf, 1]), "NaN or infinite"),
        (lambda: dirichlet_map(np.zeros((3, 0))), "empty vocabulary"),
        (lambda: dirichlet_posterior_mean(np.zeros((3, 0))), "empty vocabulary"),
        (lambda: dirichlet_map([[1, 2], [0, 0]], 1.0), "every distribution is a mode"),
        (lambda: dirichlet_posterior_mean([[1, 2], [0, 0]], 0.0), "0/0"),
        (lambda: dirichlet_map([1, 2], 0.5), "concentration must be >= 1"),
        (lambda: dirichlet_posterior_mean([1, 2], -1), "concentration must be >= 0"),
        (lambda: dirichlet_map([1, 2], [2, 2, 2]), "does not broadcast"),
        (lambda: dirichlet_map([1, 2], [[2, 2], [3, 3]]), "would change the shape"),
        (lambda: dirichlet_map([1, 2], np.nan), "concentration contains NaN"),
        (lambda: dirichlet_map([1, 2], axis=1), "axis 1 is out of range"),
        (lambda: beta_map(0, 0, 1, 1), "posterior is flat"),
        (lambda: beta_map(1, 3, 0.5, 2), "a must be >= 1"),
        (lambda: beta_map(1, 3, 2, 0.9), "b must be >= 1"),
        (lambda: beta_map(4, 3), "successes exceeds trials"),
        (lambda: beta_map(-1, 3), "Negative values in successes"),
        (lambda: beta_map([1, 2], [3, 4, 5]), "do not broadcast"),
        (lambda: beta_map([1, 2], 3, a=[2, 2, 2]), "do not broadcast"),
        (lambda: beta_posterior_mean(0, 0, 0, 0), "0/0"),
        (lambda: beta_posterior_mean(1, np.nan), "NaN or infinite"),
        (lambda: interpolate([0.5, 0.5], [0.5, 0.5], 1.5), "lam is the weight"),
        (lambda: interpolate([0.5, 0.5], [0.5, 0.5], np.nan), "lam is the weight"),
        (lambda: interpolate([0.5, 0.5], [0.5, 0.5], True), "lam is the weight"),
        (lambda: interpolate([0.5, 0.6], [0.5, 0.5], 0.5), "conditional must sum to one"),
        (lambda: interpolate([0.5, 0.5], [3, 1], 0.5), "marginal holds probabilities"),
        (lambda: interpolate([0.5, 0.5], [0.2, 0.3, 0.5], 0.5), "same values"),
        (lambda: interpolate(np.full((3, 2), 0.5), np.full((2, 2), 0.5), 0.5), "do not broadcast"),
        (lambda: interpolate(np.zeros((2, 0)), np.zeros(0), 0.5), "empty vocabulary"),
        (lambda: interpolated_estimate([[1, 2], [0, 0]], 0.5), r"Class row\(s\) \[1\]"),
        (lambda: interpolated_estimate([[0, 0], [0, 0]], 0.0), "no observations at all"),
        (lambda: interpolated_estimate(np.zeros((2, 0)), 0.5), "empty vocabulary"),
        (lambda: interpolated_estimate([1, 2], 0.5), r"\(classes, values\) table"),
        (lambda: interpolated_estimate([[1, 2]], -0.1), "lam is the weight"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()
