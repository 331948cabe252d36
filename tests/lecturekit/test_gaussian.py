"""Tests of lecturekit.gaussian (chapter 02.01: the multivariate Gaussian)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.stats import multivariate_normal, norm, ortho_group

from lecturekit.gaussian import cholesky, log_density, mahalanobis_sq, sample

EPS = np.finfo(float).eps


def random_covariance(d: int, condition: float, seed: int) -> np.ndarray:
    """A random rotation of a diagonal matrix whose eigenvalues span ``condition`` (kappa)."""
    rotation = ortho_group.rvs(d, random_state=seed) if d > 1 else np.ones((1, 1))
    eigenvalues = np.logspace(0, -np.log10(condition), d)
    cov = (rotation * eigenvalues) @ rotation.T
    return (cov + cov.T) / 2


def exact_log_density(x: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> float:
    """log N(x; mean, cov) with the determinant and the solve in exact rational arithmetic."""
    d = mean.size
    rows = [
        [Fraction(float(v)) for v in row] + [Fraction(float(a)) - Fraction(float(b))]
        for row, a, b in zip(cov, x, mean, strict=True)
    ]
    det = Fraction(1)
    for c in range(d):  # Gaussian elimination (cov is positive definite: no pivoting needed)
        det *= rows[c][c]
        for r in range(c + 1, d):
            factor = rows[r][c] / rows[c][c]
            rows[r] = [a - factor * b for a, b in zip(rows[r], rows[c], strict=True)]
    z = [Fraction(0)] * d
    for r in reversed(range(d)):
        z[r] = (rows[r][d] - sum(rows[r][k] * z[k] for k in range(r + 1, d))) / rows[r][r]
    residual = [Fraction(float(a)) - Fraction(float(b)) for a, b in zip(x, mean, strict=True)]
    quadratic = sum(r * zr for r, zr in zip(residual, z, strict=True))
    return -0.5 * (d * math.log(2 * math.pi) + math.log(det) + float(quadratic))


# --------------------------------------------------------------------------- against scipy


@pytest.mark.parametrize("d", [1, 2, 5, 50])
def test_log_density_matches_scipy(d):
    rng = np.random.default_rng(d)
    cov = random_covariance(d, condition=100.0, seed=d) * rng.uniform(0.1, 10)
    mean = rng.normal(size=d)
    X = mean + rng.normal(size=(200, d)) * 2
    np.testing.assert_allclose(
        log_density(X, mean, cov), multivariate_normal.logpdf(X, mean, cov), rtol=1e-10, atol=1e-10
    )
    # a single point gives a float
    single = log_density(X[0], mean, cov)
    assert isinstance(single, float)
    assert single == pytest.approx(multivariate_normal.logpdf(X[0], mean, cov), rel=1e-10)


def test_log_density_matches_scipy_for_an_ill_conditioned_covariance():
    # kappa = 1e6: both computations lose about log10(kappa) digits, and still agree to 1e-10.
    d = 10
    cov = random_covariance(d, condition=1e6, seed=3)
    rng = np.random.default_rng(3)
    mean = rng.normal(size=d)
    X = sample(mean, cov, size=100, random_state=rng)
    np.testing.assert_allclose(log_density(X, mean, cov), multivariate_normal.logpdf(X, mean, cov), rtol=1e-10)


def test_log_density_is_accurate_where_scipy_gives_up():
    # kappa = 1e10 is beyond scipy's cut-off (eigenvalues below ~2e-10 of the largest count as
    # zero), but the Cholesky factor still exists. Exact rational arithmetic is the reference;
    # a backward-stable solve guarantees a relative error of order kappa * eps.
    d, kappa = 6, 1e10
    cov = random_covariance(d, condition=kappa, seed=2)
    rng = np.random.default_rng(0)
    mean = rng.normal(size=d)
    X = mean + rng.normal(size=(10, d))
    exact = np.array([exact_log_density(x, mean, cov) for x in X])
    np.testing.assert_allclose(log_density(X, mean, cov), exact, rtol=kappa * EPS)


def test_cholesky_and_mahalanobis_against_direct_formulas():
    rng = np.random.default_rng(5)
    d = 4
    cov = random_covariance(d, condition=50.0, seed=5)
    L = cholesky(cov)
    np.testing.assert_allclose(L, np.linalg.cholesky(cov), rtol=1e-12, atol=1e-14)
    assert np.all(np.triu(L, 1) == 0)
    X, mean = rng.normal(size=(30, d)), rng.normal(size=d)
    direct = np.einsum("ij,ij->i", X - mean, np.linalg.solve(cov, (X - mean).T).T)
    np.testing.assert_allclose(mahalanobis_sq(X, mean, L), direct, rtol=1e-10)
    assert isinstance(mahalanobis_sq(X[0], mean, L), float)


# --------------------------------------------------------------------------- sampling


def test_sample_moments_converge():
    n = 200_000
    mean = np.array([1.0, -2.0, 0.5])
    cov = np.array([[2.0, 0.6, -0.3], [0.6, 1.0, 0.2], [-0.3, 0.2, 0.5]])
    X = sample(mean, cov, size=n, random_state=0)
    assert X.shape == (n, 3)
    # Standard errors: sqrt(cov_jj / n) for a mean; for a Gaussian sample covariance entry,
    # sqrt((cov_ij**2 + cov_ii * cov_jj) / n). Five of them: a false alarm has probability ~1e-6.
    se_mean = np.sqrt(np.diag(cov) / n)
    assert np.all(np.abs(X.mean(axis=0) - mean) < 5 * se_mean)
    se_cov = np.sqrt((cov**2 + np.outer(np.diag(cov), np.diag(cov))) / n)
    assert np.all(np.abs(np.cov(X.T) - cov) < 5 * se_cov)


def test_sample_random_state():
    mean, cov = [0.0, 0.0], np.eye(2)
    np.testing.assert_array_equal(sample(mean, cov, 5, random_state=1), sample(mean, cov, 5, random_state=1))
    generator = np.random.default_rng(1)
    first, second = sample(mean, cov, 5, random_state=generator), sample(mean, cov, 5, random_state=generator)
    assert not np.array_equal(first, second)  # the generator advanced
    np.testing.assert_array_equal(first, sample(mean, cov, 5, random_state=1))
    assert sample(mean, cov, 0).shape == (0, 2)


# --------------------------------------------------------------------------- invariants


@st.composite
def gaussians(draw, max_d=5):
    d = draw(st.integers(1, max_d))
    floats = st.floats(-3, 3, allow_nan=False, allow_infinity=False)
    A = draw(hnp.arrays(np.float64, (d, d), elements=floats))
    cov = A @ A.T + 0.1 * np.eye(d)
    mean = draw(hnp.arrays(np.float64, d, elements=st.floats(-10, 10)))
    X = draw(hnp.arrays(np.float64, (draw(st.integers(1, 5)), d), elements=st.floats(-10, 10)))
    return X, mean, cov


@settings(max_examples=100, deadline=None)
@given(data=gaussians(), permutation=st.randoms(use_true_random=False))
def test_log_density_is_invariant_to_relabelling_the_features(data, permutation):
    X, mean, cov = data
    order = np.array(permutation.sample(range(mean.size), mean.size))
    np.testing.assert_allclose(
        log_density(X[:, order], mean[order], cov[np.ix_(order, order)]),
        log_density(X, mean, cov),
        rtol=1e-9,
        atol=1e-9,
    )


@settings(max_examples=100, deadline=None)
@given(
    variances=hnp.arrays(np.float64, st.integers(1, 8), elements=st.floats(1e-3, 1e3)),
    data=st.data(),
)
def test_diagonal_covariance_is_a_sum_of_one_dimensional_densities(variances, data):
    d = variances.size
    mean = data.draw(hnp.arrays(np.float64, d, elements=st.floats(-100, 100)))
    x = data.draw(hnp.arrays(np.float64, d, elements=st.floats(-100, 100)))
    expected = norm.logpdf(x, loc=mean, scale=np.sqrt(variances)).sum()
    assert log_density(x, mean, np.diag(variances)) == pytest.approx(expected, rel=1e-12, abs=1e-12)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: log_density([[0.0, 0.0, 0.0]], [0.0, 0.0], np.eye(2)), "X has shape \\(1, 3\\) but mean has length 2"),
        (lambda: log_density([0.0, 0.0], [0.0, 0.0], np.eye(3)), "cov has shape \\(3, 3\\) but mean has length 2"),
        (lambda: log_density([0.0, np.nan], [0.0, 0.0], np.eye(2)), "X contains NaN or infinite"),
        (lambda: log_density([0.0, 0.0], [0.0, np.inf], np.eye(2)), "mean contains NaN or infinite"),
        (lambda: log_density([0.0, 0.0], [0.0, 0.0], [[1.0, np.inf], [0.0, 1.0]]), "cov contains NaN or infinite"),
        (lambda: log_density([0.0], [[0.0]], [[1.0]]), "mean must be a non-empty one-dimensional"),
        (lambda: log_density([0.0, 0.0], [0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]]), "not symmetric"),
        (
            lambda: log_density([0.0, 0.0], [0.0, 0.0], [[1.0, 2.0], [2.0, 1.0]]),
            "singular or not positive definite.*reg_covar",
        ),
        (lambda: log_density([0.0, 0.0], [0.0, 0.0], [[-1.0, 0.0], [0.0, 1.0]]), "feature 0 has variance"),
        (
            lambda: cholesky([[1.0, 1.0, 2.0], [1.0, 1.0, 2.0], [2.0, 2.0, 4.0]]),
            "singular or not positive definite.*feature 1.*np.eye\\(3\\)",
        ),
        (lambda: cholesky(np.ones((2, 3))), "must be a square"),
        (lambda: mahalanobis_sq([0.0, 0.0], [0.0, 0.0], [[1.0, 0.5], [0.0, 1.0]]), "lower triangular"),
        (lambda: mahalanobis_sq([0.0, 0.0], [0.0, 0.0], np.eye(3)), "chol has shape"),
        (lambda: sample([0.0], [[1.0]], size=-1), "size must be an integer >= 0"),
        (lambda: sample([0.0], [[1.0]], size=2.5), "size must be an integer >= 0"),
        (lambda: sample([0.0, 0.0], [[1.0, 1.0], [1.0, 1.0]], size=2), "singular or not positive definite"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_numerically_singular_covariance_is_refused():
    # Three features, the third the sum of the first two: in floating point the Cholesky
    # factorisation may fail outright or leave a pivot of rounding size; both are refused.
    rng = np.random.default_rng(0)
    for _ in range(20):
        Z = rng.normal(size=(100, 2)) * rng.uniform(0.01, 100, size=2)
        X = np.column_stack([Z, Z[:, 0] + Z[:, 1]])
        with pytest.raises(ValueError, match="feature 2"):
            cholesky(np.cov(X.T, bias=True))
        cholesky(np.cov(X.T, bias=True) + 1e-6 * np.eye(3))  # what reg_covar does: fine


@pytest.mark.parametrize("nudge", [-1e-15, 0.0, 1e-15])
def test_the_dependent_feature_is_named_whichever_way_rounding_goes(nudge):
    # Feature 2 is the sum of features 0 and 1, so its residual variance is exactly 0; rounding makes
    # the computed pivot a tiny positive number on one CPU's BLAS (the factorisation goes on) and a
    # tiny negative one on another (it stops). Nudging the diagonal by a relative 1e-15 plays both
    # machines here: the message, and so any notebook that prints it, must not change.
    Z = np.array([[1.0, 0.2], [0.3, 2.0], [-1.1, 0.4], [0.5, -0.7]])
    X = np.column_stack([Z, Z.sum(axis=1), Z[:, 0] - Z[:, 1]])
    cov = X.T @ X
    cov[2, 2] *= 1.0 + nudge
    with pytest.raises(
        ValueError,
        match=r"feature 2 keeps less than a fraction 1e-12 of its variance "
        r"once features 0..1 are known",
    ):
        cholesky(cov)


def test_a_negative_eigenvalue_is_not_called_a_dependent_feature():
    cov = np.array([[1.0, 0.9], [0.9, 0.5]])  # determinant -0.31: the residual of feature 1 is -0.31
    with pytest.raises(ValueError, match="breaks down at feature 1.*negative eigenvalue"):
        cholesky(cov)


@pytest.mark.parametrize("m, d", [(5, 8), (20, 30), (12, 12)])
def test_few_points_name_the_first_feature_past_their_rank(m, d):
    # m centred points span m - 1 dimensions: in exact arithmetic features 0..m-2 are independent and
    # feature m - 1 is the first that depends on them, on every machine.
    rng = np.random.default_rng(m)
    X = rng.normal(size=(m, d)) * rng.uniform(0.1, 10, size=d)
    with pytest.raises(ValueError, match=f"feature {m - 1} keeps less than"):
        cholesky(np.cov(X.T))
