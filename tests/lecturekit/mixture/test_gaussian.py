"""Tests of lecturekit.mixture.gaussian and lecturekit.mixture.steps (chapter 5: Gaussian mixtures and the EM
algorithm), and through the Gaussian mixture of the EM loop, lecturekit.mixture.loop (its verbose output and
parameter checks)."""

import re
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.stats import multivariate_normal
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.mixture import GaussianMixture as SklearnGaussianMixture
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.mixture.gaussian import INIT_PARAMS, GaussianMixture
from lecturekit.mixture.steps import COVARIANCE_TYPES, _m_step


def blobs(n=600, d=3, k=3, seed=0, spread=3.0):
    """A mixture of k correlated Gaussians with different weights."""
    rng = np.random.default_rng(seed)
    z = rng.choice(k, size=n, p=np.arange(1, k + 1) / (k * (k + 1) / 2))
    mixing = rng.normal(size=(k, d, d)) / np.sqrt(d) + np.eye(d)
    return np.einsum("ni,nji->nj", rng.normal(size=(n, d)), mixing[z]) + spread * rng.normal(size=(k, d))[z]


def initial_parameters(X, k, covariance_type, seed=1):
    """Rough starting values in scikit-learn's format: weights, means and precisions."""
    rng = np.random.default_rng(seed)
    weights = rng.dirichlet(np.full(k, 5.0))
    means = X[rng.choice(len(X), size=k, replace=False)]
    variance = X.var(axis=0)
    precisions = {
        "full": np.array([np.diag(1.0 / variance)] * k),
        "tied": np.diag(1.0 / variance),
        "diag": np.array([1.0 / variance] * k),
        "spherical": np.full(k, 1.0 / variance.mean()),
    }[covariance_type]
    return dict(weights_init=weights, means_init=means, precisions_init=precisions)


def with_parameters(fitted, n_features):
    """A GaussianMixture holding another fitted mixture's weights, means and covariances."""
    model = GaussianMixture(fitted.n_components, covariance_type=fitted.covariance_type)
    model.weights_, model.means_, model.covariances_ = fitted.weights_, fitted.means_, fitted.covariances_
    model.n_features_in_ = n_features
    return model


def assert_same_fit(ours, theirs, rtol):
    np.testing.assert_allclose(ours.weights_, theirs.weights_, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours.means_, theirs.means_, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(ours.covariances_, theirs.covariances_, rtol=rtol, atol=rtol)
    assert ours.lower_bound_ == pytest.approx(theirs.lower_bound_, rel=rtol)
    np.testing.assert_allclose(ours.history_, theirs.lower_bounds_, rtol=rtol)
    assert (ours.n_iter_, ours.converged_) == (theirs.n_iter_, theirs.converged_)


# --------------------------------------------------------------------------- against scikit-learn


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_fit_from_the_same_parameters_matches_sklearn(covariance_type):
    X = blobs(seed=1)
    settings_ = dict(
        n_components=3,
        covariance_type=covariance_type,
        tol=1e-6,
        max_iter=500,
        reg_covar=1e-4,
        **initial_parameters(X, 3, covariance_type),
    )
    ours = GaussianMixture(**settings_).fit(X)
    theirs = SklearnGaussianMixture(**settings_).fit(X)
    assert ours.converged_ and ours.n_iter_ > 5  # a real run of EM, not one step
    assert_same_fit(ours, theirs, rtol=1e-6)
    assert ours.score(X) == pytest.approx(theirs.score(X), rel=1e-6)


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_the_same_seed_gives_sklearns_kmeans_initialisation(covariance_type):
    # Both draw the k-means labels from check_random_state(random_state), in the same order.
    X = blobs(seed=2)
    ours = GaussianMixture(3, covariance_type=covariance_type, random_state=0, n_init=2).fit(X)
    theirs = SklearnGaussianMixture(3, covariance_type=covariance_type, random_state=0, n_init=2).fit(X)
    assert_same_fit(ours, theirs, rtol=1e-6)


def test_sklearn_leaves_the_first_weights_of_a_seeded_start_unnormalised():
    # A surprise: with init_params="k-means++" or "random_from_data" the initial responsibilities
    # are one-hot on K seed points, and scikit-learn's initial weights are n_k / n_samples, which
    # sum to K / n rather than one. The responsibilities do not change (the factor cancels), but
    # its first lower bound is off by log(K / n); from the second iteration on the fits agree.
    X = blobs(n=600, seed=3)
    ours = GaussianMixture(3, init_params="k-means++", random_state=0).fit(X)
    theirs = SklearnGaussianMixture(3, init_params="k-means++", random_state=0).fit(X)
    assert ours.history_[0] - theirs.lower_bounds_[0] == pytest.approx(-np.log(3 / 600), rel=1e-9)
    np.testing.assert_allclose(ours.history_[1:], theirs.lower_bounds_[1:], rtol=1e-9)
    np.testing.assert_allclose(ours.means_, theirs.means_, rtol=1e-9)


def test_the_public_api_is_sklearns():
    # The same parameters with the same defaults, and every public name of a fitted scikit-learn
    # model (methods and attributes) on ours; history_ is the one extra (the course's name).
    assert GaussianMixture().get_params() == SklearnGaussianMixture().get_params()
    X = blobs(n=100, seed=14)
    ours, theirs = GaussianMixture(2, random_state=0).fit(X), SklearnGaussianMixture(2, random_state=0).fit(X)
    public = {name for name in dir(theirs) if not name.startswith("_")}
    assert public <= set(dir(ours))
    assert {name for name in dir(ours) if not name.startswith("_")} - public == {"history_"}


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_scores_match_sklearn_for_the_same_parameters(covariance_type):
    X = blobs(seed=4)
    theirs = SklearnGaussianMixture(3, covariance_type=covariance_type, random_state=0).fit(X)
    ours = with_parameters(theirs, X.shape[1])
    X_test = np.vstack([X, blobs(n=50, seed=5) * 2])
    np.testing.assert_allclose(ours.score_samples(X_test), theirs.score_samples(X_test), rtol=1e-8, atol=1e-8)
    assert ours.score(X_test) == pytest.approx(theirs.score(X_test), rel=1e-8)
    proba = ours.predict_proba(X_test)
    np.testing.assert_allclose(proba, theirs.predict_proba(X_test), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(ours.predict(X_test), theirs.predict(X_test))
    assert ours.bic(X) == pytest.approx(theirs.bic(X), rel=1e-8)
    assert ours.aic(X) == pytest.approx(theirs.aic(X), rel=1e-8)


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
@pytest.mark.parametrize("max_iter", [1, 5, 100])
def test_fitted_attributes_match_sklearn_from_the_same_start(covariance_type, max_iter):
    # precisions_, precisions_cholesky_, lower_bounds_, lower_bound_, n_iter_, converged_ and the
    # labels of fit_predict, after 1 and 5 iterations (not converged) and at convergence.
    X = blobs(seed=1)
    settings_ = dict(
        n_components=3,
        covariance_type=covariance_type,
        reg_covar=1e-4,
        max_iter=max_iter,
        **initial_parameters(X, 3, covariance_type),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours, theirs = GaussianMixture(**settings_), SklearnGaussianMixture(**settings_)
        labels, their_labels = ours.fit_predict(X), theirs.fit_predict(X)
    assert (ours.n_iter_, ours.converged_) == (theirs.n_iter_, theirs.converged_)
    assert ours.converged_ == (max_iter == 100) and ours.n_iter_ == min(max_iter, theirs.n_iter_)
    assert ours.lower_bound_ == pytest.approx(theirs.lower_bound_, rel=1e-8)
    assert ours.lower_bounds_.shape == (theirs.n_iter_,)
    np.testing.assert_allclose(ours.lower_bounds_, theirs.lower_bounds_, rtol=1e-8)
    np.testing.assert_array_equal(ours.history_, ours.lower_bounds_)
    assert ours.precisions_.shape == theirs.precisions_.shape == theirs.covariances_.shape
    np.testing.assert_allclose(ours.precisions_, theirs.precisions_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(ours.precisions_cholesky_, theirs.precisions_cholesky_, rtol=1e-8, atol=1e-12)
    np.testing.assert_array_equal(labels, their_labels)


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_precisions_are_sklearns_for_the_same_covariances(covariance_type):
    X = blobs(seed=4)
    theirs = SklearnGaussianMixture(3, covariance_type=covariance_type, random_state=0).fit(X)
    ours = with_parameters(theirs, X.shape[1])
    np.testing.assert_allclose(ours.precisions_cholesky_, theirs.precisions_cholesky_, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(ours.precisions_, theirs.precisions_, rtol=1e-8, atol=1e-12)
    if covariance_type in ("full", "tied"):  # upper triangular U with U U^T the inverse covariance
        U = ours.precisions_cholesky_
        np.testing.assert_array_equal(U, np.triu(U))  # np.triu works on the last two axes
        eye = np.broadcast_to(np.eye(X.shape[1]), U.shape)
        np.testing.assert_allclose(ours.precisions_ @ ours.covariances_, eye, atol=1e-10)
    else:
        np.testing.assert_allclose(ours.precisions_ * ours.covariances_, 1.0, rtol=1e-12)


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_max_iter_zero_keeps_precisions_init(covariance_type):
    # scikit-learn 1.9.1 cannot do this one (with every initial value given and max_iter=0 it has no
    # covariances_ and fit raises AttributeError); its factor of the given precisions is the reference.
    from sklearn.mixture._gaussian_mixture import _compute_precision_cholesky_from_precisions

    X = blobs(seed=2)
    start = initial_parameters(X, 3, covariance_type)
    model = GaussianMixture(3, covariance_type=covariance_type, max_iter=0, **start).fit(X)
    assert model.n_iter_ == 0 and not model.converged_ and model.lower_bounds_.size == 0
    np.testing.assert_allclose(model.precisions_, start["precisions_init"], rtol=1e-10)
    np.testing.assert_allclose(
        model.precisions_cholesky_,
        _compute_precision_cholesky_from_precisions(start["precisions_init"], covariance_type, xp=np),
        rtol=1e-10,
        atol=1e-14,
    )
    np.testing.assert_array_equal(model.weights_, start["weights_init"])
    np.testing.assert_array_equal(model.means_, start["means_init"])


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
@pytest.mark.parametrize("init_params", INIT_PARAMS)
def test_fit_predict_is_fit_then_predict(covariance_type, init_params):
    # max_iter=3 stops before convergence: the labels come from a last E-step after the last M-step.
    X = blobs(n=200, seed=9)
    settings_ = dict(
        n_components=3, covariance_type=covariance_type, init_params=init_params, max_iter=3, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = GaussianMixture(**settings_).fit_predict(X)
        model = GaussianMixture(**settings_).fit(X)
        their_labels = SklearnGaussianMixture(**settings_).fit_predict(X)
    np.testing.assert_array_equal(labels, model.predict(X))
    assert set(labels) <= {0, 1, 2} and labels.shape == (200,)
    if init_params in ("kmeans", "random"):  # the other two start one lower bound apart (see above)
        np.testing.assert_array_equal(labels, their_labels)


# --------------------------------------------------------------------------- warm start and verbose


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_warm_start_continues_where_the_last_fit_stopped(covariance_type):
    X = blobs(seed=10)
    settings_ = dict(n_components=3, covariance_type=covariance_type, tol=0.0, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        once = GaussianMixture(max_iter=10, **settings_).fit(X)
        twice = GaussianMixture(max_iter=5, warm_start=True, **settings_).fit(X).fit(X)
        theirs = SklearnGaussianMixture(max_iter=5, warm_start=True, **settings_).fit(X).fit(X)
    for name in ("weights_", "means_", "covariances_", "precisions_"):
        np.testing.assert_allclose(getattr(twice, name), getattr(once, name), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(getattr(twice, name), getattr(theirs, name), rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(twice.lower_bounds_, once.lower_bounds_[5:], rtol=1e-12)
    np.testing.assert_allclose(twice.lower_bounds_, theirs.lower_bounds_, rtol=1e-8)
    assert twice.n_iter_ == theirs.n_iter_ == 5 and not twice.converged_


def test_warm_start_ignores_n_init_and_measures_the_first_change_from_the_last_bound():
    X = blobs(seed=11)
    settings_ = dict(n_components=3, n_init=4, tol=1e-3, random_state=0, warm_start=True)
    ours, theirs = GaussianMixture(**settings_).fit(X), SklearnGaussianMixture(**settings_).fit(X)
    assert ours.converged_
    # Refitted from a converged start: the first iteration changes the bound by less than tol.
    ours.fit(X), theirs.fit(X)
    assert ours.n_iter_ == theirs.n_iter_ == 1 and ours.converged_ and theirs.converged_
    assert ours.lower_bound_ == pytest.approx(theirs.lower_bound_, rel=1e-8)
    # warm_start=False starts again from k-means.
    ours.set_params(warm_start=False).fit(X)
    assert ours.n_iter_ > 1


def test_verbose_prints_what_sklearn_prints(capsys):
    X = blobs(seed=12)
    settings_ = dict(n_components=3, n_init=2, random_state=0, verbose_interval=2, verbose=1)
    GaussianMixture(**settings_).fit(X)
    ours = capsys.readouterr().out
    SklearnGaussianMixture(**settings_).fit(X)
    assert ours == capsys.readouterr().out
    assert ours.startswith("Initialization 0\n  Iteration 2\n") and "Initialization converged.\n" in ours
    GaussianMixture(**{**settings_, "verbose": 2}).fit(X)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Initialization 0"
    assert all(
        re.fullmatch(r"  Iteration \d*[02468]\t time lapse \d+\.\d{5}s\t ll change -?\d+\.\d{5}", line)
        for line in lines
        if line.startswith("  ")
    )
    assert re.fullmatch(r"Initialization converged\. time lapse \d+\.\d{5}s\t lower bound -?\d+\.\d{5}\.", lines[-1])
    GaussianMixture(3, random_state=0).fit(X)
    assert capsys.readouterr().out == ""


# --------------------------------------------------------------------------- the derivation


def test_score_samples_is_the_mixture_density():
    X = blobs(seed=6)
    model = GaussianMixture(3, random_state=0).fit(X)
    density = sum(
        w * multivariate_normal.pdf(X, m, c)
        for w, m, c in zip(model.weights_, model.means_, model.covariances_, strict=True)
    )
    np.testing.assert_allclose(model.score_samples(X), np.log(density), rtol=1e-10)
    joint = np.column_stack(
        [
            w * multivariate_normal.pdf(X, m, c)
            for w, m, c in zip(model.weights_, model.means_, model.covariances_, strict=True)
        ]
    )
    np.testing.assert_allclose(model.predict_proba(X), joint / density[:, None], rtol=1e-8, atol=1e-12)


def test_a_fixed_point_of_em_is_a_fixed_point_of_the_m_step():
    # At convergence the M-step formulas, applied to the final responsibilities, return the
    # parameters (to the tolerance): weights = mean responsibility, means = weighted means.
    X = blobs(seed=7)
    model = GaussianMixture(3, tol=1e-12, max_iter=2000, reg_covar=0.0, random_state=0).fit(X)
    resp = model.predict_proba(X)
    nk = resp.sum(axis=0)
    np.testing.assert_allclose(model.weights_, nk / len(X), rtol=1e-6)
    np.testing.assert_allclose(model.means_, resp.T @ X / nk[:, None], rtol=1e-6, atol=1e-6)
    for k in range(3):
        diff = X - model.means_[k]
        np.testing.assert_allclose(model.covariances_[k], (resp[:, k] * diff.T) @ diff / nk[k], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("covariance_type", ["diag", "spherical"])
@pytest.mark.parametrize("soft", [0.05, 0.0])
def test_diagonal_variances_keep_their_digits_far_from_the_origin(covariance_type, soft):
    # Two tight clusters (spread 1e-3) a thousand apart, a million from the origin, plus one
    # component on a single point. The variances come from one matrix product about the points'
    # mean (soft responsibilities: the variances are large) or, where that would cancel digits,
    # from the centred points (hard ones: variances of 1e-6 next to squares of 1e5). Either way
    # they must equal the centred sums computed here in extended precision, and the single
    # point's must be 0.
    rng = np.random.default_rng(8)
    X = np.vstack(
        [1e6 + 1e-3 * rng.normal(size=(300, 3)), 1e6 + 1e3 + 1e-3 * rng.normal(size=(200, 3)), np.full((1, 3), 2e6)]
    )
    resp = np.zeros((len(X), 3))
    resp[:300, 0] = resp[300:500, 1] = resp[500, 2] = 1.0
    resp[:500, :2] = (1 - 2 * soft) * resp[:500, :2] + soft
    resp[:500, 2] = 1.0 - resp[:500, :2].sum(axis=1)
    _, means, variances = _m_step(X, resp, 0.0, covariance_type)
    Xl, rl = X.astype(np.longdouble), resp.astype(np.longdouble)
    nk = rl.sum(axis=0)
    mu = (rl.T @ Xl) / nk[:, None]
    exact = np.stack([rl[:, k] @ np.square(Xl - mu[k]) / nk[k] for k in range(3)]).astype(float)
    np.testing.assert_allclose(variances, exact.mean(axis=1) if covariance_type == "spherical" else exact, rtol=1e-11)
    assert np.all(variances.reshape(3, -1)[2] == 0.0)
    # scikit-learn's expansion about the origin, E[x^2] - mu^2, subtracts two doubles between 2^39 and
    # 2^40, so on any machine it is a multiple of their spacing 2^-13 = 1.2e-4, or 0: it cannot come
    # within half of the tight variances (1e-6) that the centred sums above get to 11 digits.
    expanded = (resp.T @ np.square(X)) / resp.sum(axis=0)[:, None] - np.square(means)
    assert np.all(np.square(X[:500]) >= 2.0**39) and np.all(np.square(X[:500]) < 2.0**40)
    assert soft or np.all(np.abs(expanded[:2] - exact[:2]) > 0.5 * exact[:2])


def covariance_floor_cost(model):
    """How much mean log-likelihood adding reg_covar may cost the M-step that just ran.

    EM never decreases the log-likelihood because the M-step maximises the expected complete-data
    log-likelihood Q. With reg_covar = r the covariance is S + rI instead of the maximiser S, which
    costs Q, per eigenvalue lambda of S and per unit of weight, (log(1 + r/lambda) - r/(lambda + r)) / 2
    <= (r/lambda)^2 / 4. So the log-likelihood may fall by at most the sum of these (0 when r = 0).
    """
    r, kind = model.reg_covar, model.covariance_type
    cov, weights = model.covariances_, model.weights_
    if kind == "full":
        eigenvalues = np.linalg.eigvalsh(cov - r * np.eye(cov.shape[1]))
    elif kind == "tied":
        eigenvalues, weights = np.linalg.eigvalsh(cov - r * np.eye(cov.shape[0]))[None], np.ones(1)
    elif kind == "diag":
        eigenvalues = cov - r
    else:
        eigenvalues = np.repeat((cov - r)[:, None], model.means_.shape[1], axis=1)
    if r == 0:
        return 0.0
    if np.any(eigenvalues <= 0):  # a collapsed component: S is singular, Q's maximum infinite
        return np.inf
    x = r / eigenvalues
    return float(np.sum(weights[:, None] * (np.log1p(x) - x / (1 + x))) / 2)


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(5, 60),
    d=st.integers(1, 3),
    k=st.integers(1, 4),
    spread=st.floats(0.0, 5.0),
    covariance_type=st.sampled_from(COVARIANCE_TYPES),
    init_params=st.sampled_from(INIT_PARAMS),
    reg_covar=st.sampled_from([0.0, 1e-6, 1e-2]),
    seed=st.integers(0, 2**32 - 1),
    duplicates=st.booleans(),
)
def test_log_likelihood_never_decreases(n, d, k, spread, covariance_type, init_params, reg_covar, seed, duplicates):
    X = blobs(n=n, d=d, k=min(k, 3), seed=seed, spread=spread)
    if duplicates and reg_covar > 0:  # points that coincide invite a component to collapse onto them
        X[: n // 2] = X[0]
    settings_ = dict(
        n_components=k,
        covariance_type=covariance_type,
        init_params=init_params,
        reg_covar=reg_covar,
        tol=0.0,
        random_state=seed % 1000,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)  # the collapse warning, tested below
        try:
            fitted = GaussianMixture(max_iter=30, **settings_).fit(X)
        except ValueError as exc:  # without the floor a component may collapse onto a point, in
            # any M-step including the last (which once let fit succeed and score(X) below raise)
            assert reg_covar == 0 and "singular" in str(exc)
            assume(False)
        # The same iterations one at a time, to know what the floor may cost each M-step.
        model = GaussianMixture(max_iter=0, **settings_).fit(X)
    history, allowed = [], []
    for _ in range(fitted.n_iter_):
        bound, log_resp = model._e_step(X)
        model._m_step(X, log_resp)
        history.append(bound)
        allowed.append(covariance_floor_cost(model))
    np.testing.assert_array_equal(history, fitted.lower_bounds_)
    history.append(model.score(X))  # the last M-step must not lose either
    history = np.array(history)
    assert np.all(np.isfinite(history))
    assert np.all(np.diff(history) >= -np.array(allowed) - 1e-10 * np.abs(history[:-1]))


def test_the_covariance_floor_can_cost_a_little_likelihood():
    # Found by the property test above: five points in one dimension, whose two components end
    # with variances of 7e-3 and 2e-3. With reg_covar=1e-6 the log-likelihood falls by 7e-10 (8e-10
    # relative) near convergence; with reg_covar=0 (plain EM) it never falls.
    X = blobs(n=5, d=1, k=2, seed=1, spread=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        floored = GaussianMixture(2, tol=0.0, max_iter=30, random_state=1).fit(X)
        plain = GaussianMixture(2, tol=0.0, max_iter=30, random_state=1, reg_covar=0.0).fit(X)
    assert np.diff(floored.history_).min() < -5e-10
    assert np.diff(plain.history_).min() >= -1e-15


# --------------------------------------------------------------------------- degenerate fits

X3 = blobs(n=60, d=3, k=2, seed=8)
FITTED = GaussianMixture(2, random_state=0).fit(X3)


def test_a_component_that_loses_its_points_warns_instead_of_crashing():
    far = np.vstack([X3.mean(axis=0), X3.mean(axis=0) + 1e3])  # nothing near the second mean
    model = GaussianMixture(2, means_init=far, random_state=0)
    collapsed = r"Component\(s\) \[1\] of GaussianMixture collapsed.*fewer components"
    with pytest.warns(UserWarning, match=collapsed):
        model.fit(X3)
    assert model.weights_[1] < 1e-12
    assert np.all(np.isfinite(model.score_samples(X3)))
    # The collapsed component keeps reg_covar on its diagonal, so it stays positive definite.
    np.testing.assert_allclose(model.covariances_[1], 1e-6 * np.eye(3), rtol=1e-9, atol=1e-15)


def test_reg_covar_keeps_a_component_on_a_single_point_positive_definite():
    X = np.vstack([X3, np.repeat([[20.0, 20.0, 20.0]], 5, axis=0)])
    # Every initial value given, so that no random k-means start can put component 0 on one point.
    start = dict(
        means_init=np.vstack([X3.mean(axis=0), [20.0, 20.0, 20.0]]),
        weights_init=[0.5, 0.5],
        precisions_init=np.array([np.eye(3)] * 2),
    )
    model = GaussianMixture(2, **start).fit(X)
    np.testing.assert_allclose(model.covariances_[1], 1e-6 * np.eye(3), rtol=1e-6, atol=1e-15)
    assert model.weights_[1] == pytest.approx(5 / 65)
    with pytest.raises(ValueError, match="covariance of component 1 is singular.*reg_covar > 0"):
        GaussianMixture(2, reg_covar=0.0, **start).fit(X)


def test_a_collapse_in_the_last_m_step_raises_like_one_mid_run():
    # Four of twelve points coincide; from this start, with reg_covar=0, component 0 ends on them
    # alone in the fifth M-step. A fit with max_iter=5 used to end there without an error (and
    # score(X) then raised); now it raises what a fit that goes on raises.
    X = blobs(n=12, d=2, k=2, seed=0, spread=3.0)
    X[:4] = X[0]
    settings_ = dict(
        n_components=3, covariance_type="diag", reg_covar=0.0, tol=0.0, init_params="random", random_state=0
    )
    message = "covariance of component 0 is singular: feature 0 has variance 0 <= 0.*use reg_covar > 0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)  # component 2 loses its points first
        before = GaussianMixture(max_iter=4, **settings_).fit(X)
        assert before.n_iter_ == 4 and np.isfinite(before.score(X))
        for max_iter in (5, 8):  # the collapse in the last M-step, and mid-run
            with pytest.raises(ValueError, match=message):
                GaussianMixture(max_iter=max_iter, **settings_).fit(X)
        with pytest.raises(ValueError, match=message):
            GaussianMixture(max_iter=5, **settings_).fit_predict(X)
    _, log_resp = before._e_step(X)  # the fifth iteration by hand
    with pytest.raises(ValueError, match=message):
        before._m_step(X, log_resp)


def test_a_collapsed_start_raises_unless_precisions_init_replaces_it():
    # k-means++ puts each component on one point: with reg_covar=0 its covariance is 0, and the
    # fit stops before any iteration (max_iter=0 included), unless precisions_init is given.
    settings_ = dict(n_components=2, init_params="k-means++", reg_covar=0.0, max_iter=0, random_state=0)
    with pytest.raises(ValueError, match="covariance of component 0 is singular.*reg_covar > 0"):
        GaussianMixture(**settings_).fit(X3)
    model = GaussianMixture(precisions_init=np.array([np.eye(3)] * 2), **settings_).fit(X3)
    np.testing.assert_allclose(model.covariances_, np.array([np.eye(3)] * 2))


def test_weights_init_accepts_sklearns_rounding():
    # scikit-learn accepts weights that sum to one within 1e-8, and uses them as given.
    X = blobs(seed=13)
    start = initial_parameters(X, 3, "full")
    start["weights_init"] = start["weights_init"] + np.array([5e-9, 0.0, 0.0])
    model = GaussianMixture(3, max_iter=0, **start).fit(X)
    np.testing.assert_array_equal(model.weights_, start["weights_init"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        SklearnGaussianMixture(3, max_iter=1, **start).fit(X)  # the same values are valid there


def test_convergence_warning_and_max_iter_zero():
    with pytest.warns(ConvergenceWarning, match="max_iter=1.*Increase max_iter"):
        model = GaussianMixture(2, max_iter=1, random_state=0).fit(X3)
    assert model.n_iter_ == 1 and not model.converged_
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        start = GaussianMixture(2, max_iter=0, random_state=0).fit(X3)
    assert start.n_iter_ == 0 and start.lower_bound_ == -np.inf and start.history_.size == 0


@pytest.mark.parametrize("covariance_type", COVARIANCE_TYPES)
def test_float32_data_gives_the_float64_fit_stored_in_float32(covariance_type):
    # EM runs in float64 either way; only the stored parameters and the scores take X's type.
    X32 = blobs(seed=9).astype(np.float32)
    single = GaussianMixture(3, covariance_type=covariance_type, random_state=0).fit(X32)
    double = GaussianMixture(3, covariance_type=covariance_type, random_state=0).fit(X32.astype(np.float64))
    for name in ("weights_", "means_", "covariances_"):
        assert getattr(single, name).dtype == np.float32, name
        np.testing.assert_array_equal(getattr(single, name), getattr(double, name).astype(np.float32))
    for name in ("precisions_", "precisions_cholesky_"):  # from the stored float32 covariances
        assert getattr(single, name).dtype == np.float32, name
        np.testing.assert_allclose(getattr(single, name), getattr(double, name), rtol=1e-4)
    assert single.score_samples(X32).dtype == single.predict_proba(X32).dtype == np.float32
    assert double.score_samples(X32).dtype == np.float64
    np.testing.assert_array_equal(single.fit_predict(X32), single.predict(X32))


def test_sample():
    X, labels = FITTED.sample(20_000)
    assert X.shape == (20_000, 3) and labels.shape == (20_000,)
    np.testing.assert_allclose(np.bincount(labels) / 20_000, FITTED.weights_, atol=0.02)
    for k in range(2):
        np.testing.assert_allclose(X[labels == k].mean(axis=0), FITTED.means_[k], atol=0.1)
        np.testing.assert_allclose(np.cov(X[labels == k].T), FITTED.covariances_[k], atol=0.15)
    np.testing.assert_array_equal(FITTED.sample(5, random_state=1)[0], FITTED.sample(5, random_state=1)[0])
    for covariance_type in ("tied", "diag", "spherical"):
        draws, _ = GaussianMixture(2, covariance_type=covariance_type, random_state=0).fit(X3).sample(7)
        assert draws.shape == (7, 3)


# --------------------------------------------------------------------------- bad input

WITH_NAN = np.where(np.arange(X3.size).reshape(X3.shape) == 7, np.nan, X3)


def warm_refit(X=X3, **changes):
    """A second fit with warm_start=True after changing the given parameters."""
    model = GaussianMixture(2, warm_start=True, random_state=0).fit(X3)
    return model.set_params(**changes).fit(X)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: GaussianMixture(5).fit(X3[:3]),
            r"n_components=5\) needs at least 5 points, but X has 3; use n_components <= 3",
        ),
        (lambda: GaussianMixture(2).fit(WITH_NAN), "GaussianMixture.fit contains NaN or infinite.*impute"),
        (lambda: GaussianMixture(2).fit(np.where(np.isnan(WITH_NAN), np.inf, X3)), "NaN or infinite"),
        (lambda: GaussianMixture(2).fit(X3[:, 0]), "(?s)Expected 2D array.*reshape\\(-1, 1\\)"),
        (lambda: FITTED.predict(X3[:, :2]), "X has 2 features, but GaussianMixture is expecting 3.*same columns"),
        (lambda: FITTED.score_samples([[0.0, np.nan, 0.0]]), "score_samples contains NaN or infinite"),
        (
            lambda: GaussianMixture(2, covariance_type="ful").fit(X3),
            "covariance_type must be one of 'full', 'tied', 'diag', 'spherical'; got 'ful'",
        ),
        (lambda: GaussianMixture(2, init_params="kmean").fit(X3), "init_params must be one of 'kmeans'"),
        (lambda: GaussianMixture(0).fit(X3), "n_components must be an integer >= 1"),
        (lambda: GaussianMixture(2, reg_covar=-1.0).fit(X3), "reg_covar must be a finite number >= 0"),
        (lambda: GaussianMixture(2, tol=np.nan).fit(X3), "tol must be a finite number >= 0"),
        (lambda: GaussianMixture(2, max_iter=1.5).fit(X3), "max_iter must be an integer >= 0"),
        (lambda: GaussianMixture(2, weights_init=[0.3, 0.3]).fit(X3), "weights_init must be non-negative and sum"),
        (
            lambda: GaussianMixture(2, means_init=np.zeros((3, 3))).fit(X3),
            r"means_init has shape \(3, 3\), but n_components=2, 3 features .* need shape \(2, 3\)",
        ),
        (
            lambda: GaussianMixture(2, covariance_type="diag", precisions_init=np.ones((2, 3, 3))).fit(X3),
            r"precisions_init has shape \(2, 3, 3\).*'diag' need shape \(2, 3\)",
        ),
        (lambda: GaussianMixture(2, precisions_init=np.zeros((2, 3, 3))).fit(X3), r"precisions_init\[0\] is singular"),
        (lambda: FITTED.sample(0), "n_samples must be an integer >= 1"),
        (lambda: GaussianMixture(2).fit_predict(WITH_NAN), "GaussianMixture.fit contains NaN"),
        (lambda: GaussianMixture(2, warm_start="yes").fit(X3), "warm_start must be True or False; got 'yes'"),
        (lambda: GaussianMixture(2, verbose=-1).fit(X3), "verbose must be an integer >= 0"),
        (lambda: GaussianMixture(2, verbose=0.5).fit(X3), "verbose must be an integer >= 0"),
        (lambda: GaussianMixture(2, verbose_interval=0).fit(X3), "verbose_interval must be an integer >= 1"),
        (
            lambda: GaussianMixture(2, weights_init=[0.5, 0.5 + 1e-7]).fit(X3),
            r"weights_init must be non-negative and sum to one.*sum 1.0000001\)",
        ),
        (lambda: GaussianMixture(2, weights_init=[1.5, -0.5]).fit(X3), "weights_init must be non-negative"),
        (
            lambda: GaussianMixture(2, precisions_init=np.array([[[1.0, 0.5, 0], [0, 1, 0], [0, 0, 1]]] * 2)).fit(X3),
            r"precisions_init must be symmetric.*\(P \+ P.T\) / 2",
        ),
        (
            lambda: GaussianMixture(2, covariance_type="tied", precisions_init=-np.eye(3)).fit(X3),
            "precisions_init is singular or not positive definite",
        ),
        (
            lambda: GaussianMixture(2, covariance_type="diag", precisions_init=np.zeros((2, 3))).fit(X3),
            "precisions_init must be positive",
        ),
        (
            lambda: GaussianMixture(2, covariance_type="spherical", precisions_init=[1.0, np.nan]).fit(X3),
            "precisions_init contains NaN",
        ),
        (
            lambda: warm_refit(n_components=3),
            "warm_start=True continues the previous fit, which had n_components=2 and covariance_type='full', "
            "but the model now has n_components=3.*Set warm_start=False",
        ),
        (lambda: warm_refit(covariance_type="diag"), "which had n_components=2 and covariance_type='full'"),
        (lambda: warm_refit(X=X3[:, :2]), "X has 2 features, but GaussianMixture is expecting 3"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        GaussianMixture().predict(X3)


# --------------------------------------------------------------------------- the estimator protocol


@parametrize_with_checks(
    [
        GaussianMixture(),
        GaussianMixture(2, covariance_type="diag", random_state=0),
        GaussianMixture(2, covariance_type="tied", init_params="random", random_state=0),
    ]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- Old Faithful


@pytest.mark.parametrize("init_params", ["kmeans", "k-means++", "random"])
@pytest.mark.parametrize("n_components, covariance_type", [(2, "full"), (3, "full"), (3, "diag"), (4, "tied")])
def test_old_faithful_best_of_restarts_is_no_worse_than_sklearn(n_components, covariance_type, init_params):
    """Ten restarts each from the same seed: our kept fit's log-likelihood is at least scikit-learn's."""
    from lecturekit.datasets import load_old_faithful

    X = load_old_faithful()
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    settings_ = dict(
        n_components=n_components,
        covariance_type=covariance_type,
        init_params=init_params,
        n_init=10,
        tol=1e-6,
        max_iter=1000,
        random_state=0,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        ours = GaussianMixture(**settings_).fit(X)
        theirs = SklearnGaussianMixture(**settings_).fit(X)
    assert ours.converged_ and theirs.converged_
    assert ours.lower_bound_ >= theirs.lower_bound_ - 1e-9
    assert ours.score(X) >= theirs.score(X) - 1e-9
