"""Tests of lecturekit.gda (chapters 02.02-02.04: Gaussian discriminant analysis, LDA and QDA)."""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.linalg import cho_solve
from scipy.special import expit, softmax
from scipy.stats import multivariate_normal
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.gaussian import cholesky, log_density
from lecturekit.gda import GDA

DATASETS = {"breast_cancer": load_breast_cancer, "iris": load_iris, "wine": load_wine}


def load(name):
    return DATASETS[name](return_X_y=True)


def class_covariances(X, y, classes):
    """Per-class maximum-likelihood covariances (divided by n_k), the textbook way."""
    return np.array([np.cov(X[y == c].T, bias=True) for c in classes])


def bayes_posterior(X, priors, means, covariances):
    """p(y | x) by Bayes' rule from log_density: independent of GDA's prediction code."""
    joint = np.column_stack(
        [np.log(p) + log_density(X, m, c) for p, m, c in zip(priors, means, covariances, strict=True)]
    )
    return softmax(joint, axis=1)


def blobs(n=400, d=3, n_classes=3, seed=0):
    """Gaussian classes with different means and covariances."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, size=n)
    mixing = rng.normal(size=(n_classes, d, d)) / np.sqrt(d) + np.eye(d)
    X = np.einsum("ni,nji->nj", rng.normal(size=(n, d)), mixing[y]) + 1.5 * rng.normal(size=(n_classes, d))[y]
    return X, y


# --------------------------------------------------------------------------- against scikit-learn


@pytest.mark.parametrize("name", DATASETS)
def test_shared_covariance_matches_sklearn_lda(name):
    # LinearDiscriminantAnalysis(solver="lsqr") with shrinkage=None estimates covariance_ as
    # sum_k priors_k * S_k with S_k the per-class covariance divided by n_k; with the default
    # priors (class frequencies n_k / n) that is (1/n) sum_i (x_i - mu_{y_i})(x_i - mu_{y_i})^T,
    # our pooled MLE. Its posteriors come from lstsq on the raw covariance; on breast_cancer that
    # matrix has condition number ~3e11 (features range from 1e-3 to 1e3), which is why the
    # probabilities there agree to ~1e-9 rather than to ~1e-14 as on iris and wine.
    X, y = load(name)
    ours = GDA().fit(X, y)
    lda = LinearDiscriminantAnalysis(solver="lsqr", store_covariance=True).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, lda.classes_)
    np.testing.assert_allclose(ours.priors_, lda.priors_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.means_, lda.means_, rtol=1e-8, atol=0)
    np.testing.assert_allclose(ours.covariance_, lda.covariance_, rtol=1e-8, atol=1e-8 * np.abs(lda.covariance_).max())
    np.testing.assert_allclose(ours.predict_proba(X), lda.predict_proba(X), rtol=0, atol=1e-8)
    np.testing.assert_array_equal(ours.predict(X), lda.predict(X))


def test_lda_weights_its_covariance_by_the_given_priors():
    # A surprise: with priors other than the class frequencies, LDA's covariance_ is
    # sum_k priors_k S_k, no longer the MLE. GDA estimates the covariance from the data alone;
    # the priors only enter Bayes' rule.
    X, y = load("breast_cancer")
    priors = [0.5, 0.5]
    ours = GDA(priors=priors).fit(X, y)
    lda = LinearDiscriminantAnalysis(solver="lsqr", priors=priors).fit(X, y)
    per_class = class_covariances(X, y, [0, 1])
    counts = np.bincount(y)
    pooled = np.tensordot(counts / counts.sum(), per_class, 1)
    np.testing.assert_allclose(ours.covariance_, pooled, rtol=1e-10)
    np.testing.assert_allclose(lda.covariance_, np.tensordot(priors, per_class, 1), rtol=1e-10)
    assert not np.allclose(ours.covariance_, lda.covariance_, rtol=1e-3)
    np.testing.assert_array_equal(ours.priors_, priors)


@pytest.mark.parametrize("name", ["iris", "wine"])
def test_per_class_covariance_matches_a_direct_computation(name):
    X, y = load(name)
    ours = GDA(shared_covariance=False).fit(X, y)
    counts = np.bincount(y)
    covariances = class_covariances(X, y, ours.classes_)
    np.testing.assert_allclose(ours.covariances_, covariances, rtol=1e-10, atol=1e-14)
    joint = np.column_stack(
        [
            np.log(counts[k] / counts.sum()) + multivariate_normal.logpdf(X, X[y == k].mean(axis=0), covariances[k])
            for k in range(counts.size)
        ]
    )
    np.testing.assert_allclose(ours.predict_joint_log_proba(X), joint, rtol=1e-10)
    np.testing.assert_allclose(ours.decision_function(X), joint, rtol=1e-10)
    np.testing.assert_allclose(ours.predict_proba(X), softmax(joint, axis=1), rtol=0, atol=1e-10)
    assert not hasattr(ours, "covariance_")


@pytest.mark.parametrize("name", DATASETS)
def test_sklearn_qda_divides_by_n_k(name):
    # The brief expected QuadraticDiscriminantAnalysis to divide by n_k - 1 (as its SVD solver
    # did before scikit-learn 1.9, issue #16246). Since PR #33626 (scikit-learn 1.9) it computes
    # scalings_ = S**2 / n_k, the MLE, so its covariance_ is ours. tol=0.0: QDA's tol is an
    # absolute threshold on the eigenvalues of each class covariance in raw units, and with the
    # default 1e-4 it refuses wine and breast_cancer as "not full rank"; reg_param=0.0 (default):
    # see test_sklearn_qda_reg_param_is_a_shrinkage_not_reg_covar.
    X, y = load(name)
    ours = GDA(shared_covariance=False).fit(X, y)
    qda = QuadraticDiscriminantAnalysis(store_covariance=True, reg_param=0.0, tol=0.0).fit(X, y)
    for mine, theirs in zip(ours.covariances_, qda.covariance_, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-8, atol=1e-8 * np.abs(theirs).max())
    np.testing.assert_allclose(ours.means_, qda.means_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), qda.predict_proba(X), rtol=0, atol=1e-8)

    # The comparison can fail: the unbiased covariances (n_k / (n_k - 1) times ours) move the
    # posteriors visibly, most of all for the smallest class.
    counts = np.bincount(y)
    unbiased = ours.covariances_ * (counts / (counts - 1))[:, None, None]
    shifted = bayes_posterior(X, ours.priors_, ours.means_, unbiased)
    assert np.abs(shifted - ours.predict_proba(X)).max() > 1e-4


def test_sklearn_qda_reg_param_is_a_shrinkage_not_reg_covar():
    # QDA's reg_param r rescales the eigenvalues s of each class covariance to (1 - r) s + r,
    # i.e. Sigma_k -> (1 - r) Sigma_k + r I: a shrinkage towards the identity. GDA's reg_covar
    # (as GaussianMixture's) only adds to the diagonal: Sigma_k -> Sigma_k + reg_covar I.
    X, y = load("iris")
    r = 0.3
    qda = QuadraticDiscriminantAnalysis(store_covariance=True, reg_param=r).fit(X, y)
    ours = GDA(shared_covariance=False).fit(X, y)
    shrunk = (1 - r) * ours.covariances_ + r * np.eye(X.shape[1])
    np.testing.assert_allclose(np.array(qda.covariance_), shrunk, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(
        qda.predict_proba(X), bayes_posterior(X, ours.priors_, ours.means_, shrunk), rtol=0, atol=1e-8
    )
    added = GDA(shared_covariance=False, reg_covar=r).fit(X, y)
    np.testing.assert_allclose(added.covariances_, ours.covariances_ + r * np.eye(X.shape[1]), rtol=1e-12)
    assert np.abs(added.predict_proba(X) - qda.predict_proba(X)).max() > 1e-3


# --------------------------------------------------------------------------- the derivation


def log_likelihood(X, codes, priors, means, covariances):
    """sum_i log p(x_i, y_i) for per-class parameters (covariances: (K, d, d))."""
    return sum(
        np.sum(codes == k) * np.log(priors[k]) + log_density(X[codes == k], means[k], covariances[k]).sum()
        for k in range(len(priors))
    )


@pytest.mark.parametrize("shared", [True, False])
def test_mle_maximises_the_joint_likelihood(shared):
    X, y = blobs(seed=1)
    model = GDA(shared_covariance=shared).fit(X, y)
    K, d = model.means_.shape
    covariances = np.repeat(model.covariance_[None], K, axis=0) if shared else model.covariances_
    best = log_likelihood(X, y, model.priors_, model.means_, covariances)
    # GDA's joint log-likelihoods are the same function:
    assert model.predict_joint_log_proba(X)[np.arange(len(y)), y].sum() == pytest.approx(best, rel=1e-12)

    rng = np.random.default_rng(0)
    for eps in (1e-3, 1e-1):
        for sign in (1, -1):
            means = model.means_ + sign * eps * rng.normal(size=(K, d))
            assert log_likelihood(X, y, model.priors_, means, covariances) < best
            direction = rng.normal(size=(d, d))
            direction = (direction + direction.T) / 2
            if shared:
                perturbed = np.repeat((model.covariance_ + sign * eps * direction)[None], K, axis=0)
            else:
                perturbed = covariances + sign * eps * direction
            assert log_likelihood(X, y, model.priors_, model.means_, perturbed) < best
            priors = model.priors_ + sign * eps * np.array([1, -1, 0]) * model.priors_.min()
            assert log_likelihood(X, y, priors, model.means_, covariances) < best


def covariance_gradient(precision, n_k, scatter):
    """d/d Sigma_k of class k's log-likelihood, at Sigma_k^{-1} = precision (S_k = scatter)."""
    return -0.5 * n_k * precision + 0.5 * precision @ scatter @ precision


@pytest.mark.parametrize("shared", [True, False])
def test_gradients_vanish_at_the_mle(shared):
    # d/d mu_k = Sigma_k^{-1} sum_{i: y_i = k} (x_i - mu_k) and, for a per-class covariance,
    # d/d Sigma_k = -1/2 n_k Sigma_k^{-1} + 1/2 Sigma_k^{-1} S_k Sigma_k^{-1} (S_k the scatter):
    # both zero only at mu_k = mean and Sigma_k = S_k / n_k (not / (n_k - 1)).
    X, y = blobs(seed=2)
    model = GDA(shared_covariance=shared).fit(X, y)
    for k in range(model.classes_.size):
        residuals = X[y == k] - model.means_[k]
        cov = model.covariance_ if shared else model.covariances_[k]
        factor = (cholesky(cov), True)
        gradient = cho_solve(factor, residuals.sum(axis=0))
        scale = np.abs(cho_solve(factor, residuals.T)).sum()
        assert np.abs(gradient).max() < 1e-12 * scale
        if not shared:
            n_k, scatter = len(residuals), residuals.T @ residuals
            precision = cho_solve(factor, np.eye(cov.shape[0]))
            assert np.abs(covariance_gradient(precision, n_k, scatter)).max() < 1e-10 * n_k * np.abs(precision).max()
            # ... and it does not vanish at the unbiased estimate scatter / (n_k - 1):
            precision = np.linalg.inv(scatter / (n_k - 1))
            assert np.abs(covariance_gradient(precision, n_k, scatter)).max() > 1e-3 * n_k * np.abs(precision).max()


def test_logistic_parameters_give_the_posterior():
    X, y = blobs(n=600, d=4, n_classes=2, seed=3)
    model = GDA().fit(X, y)
    coef, intercept = model.logistic_parameters()
    cov, (mu0, mu1), phi = model.covariance_, model.means_, model.priors_[1]
    # The formula of notebook 02.03, term by term:
    np.testing.assert_allclose(coef, np.linalg.solve(cov, mu1 - mu0), rtol=1e-10)
    expected_intercept = (
        -0.5 * mu1 @ np.linalg.solve(cov, mu1) + 0.5 * mu0 @ np.linalg.solve(cov, mu0) + np.log(phi / (1 - phi))
    )
    assert intercept == pytest.approx(expected_intercept, rel=1e-10)
    # ... and the sigmoid of the linear score is Bayes' rule with two Gaussian densities:
    posterior = bayes_posterior(X, model.priors_, model.means_, [cov, cov])[:, 1]
    inside = (posterior > 1e-6) & (posterior < 1 - 1e-6)
    assert inside.sum() > 100
    np.testing.assert_allclose(expit(X @ coef + intercept)[inside], posterior[inside], rtol=1e-12)
    np.testing.assert_allclose(model.predict_proba(X)[inside, 1], posterior[inside], rtol=1e-12)


def test_logistic_log_odds_on_breast_cancer():
    X, y = load("breast_cancer")
    model = GDA().fit(X, y)
    coef, intercept = model.logistic_parameters()
    log_odds = (
        np.log(model.priors_[1])
        + log_density(X, model.means_[1], model.covariance_)
        - np.log(model.priors_[0])
        - log_density(X, model.means_[0], model.covariance_)
    )
    np.testing.assert_allclose(X @ coef + intercept, log_odds, rtol=0, atol=1e-10)
    np.testing.assert_allclose(model.decision_function(X), log_odds, rtol=0, atol=1e-10)


def test_prediction_methods_agree():
    for n_classes in (2, 4):
        X, y = blobs(n_classes=n_classes, seed=n_classes)
        labels = np.array(["ant", "bee", "cat", "dog"])[y]
        for shared in (True, False):
            model = GDA(shared_covariance=shared).fit(X, labels)
            np.testing.assert_array_equal(model.classes_, np.unique(labels))
            proba = model.predict_proba(X)
            np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba, rtol=1e-12, atol=1e-300)
            np.testing.assert_array_equal(model.predict(X), model.classes_[proba.argmax(axis=1)])
            joint = model.predict_joint_log_proba(X)
            np.testing.assert_allclose(proba, softmax(joint, axis=1), rtol=1e-9, atol=1e-12)
            decision = model.decision_function(X)
            if n_classes == 2:
                np.testing.assert_allclose(decision, joint[:, 1] - joint[:, 0], rtol=1e-9, atol=1e-9)
            else:
                np.testing.assert_allclose(decision, joint, rtol=1e-12)
            covs = np.repeat(model.covariance_[None], n_classes, 0) if shared else model.covariances_
            np.testing.assert_allclose(proba, bayes_posterior(X, model.priors_, model.means_, covs), rtol=0, atol=1e-10)


def test_far_away_points_keep_their_small_probabilities():
    # Along the line through the two means the losing class's posterior falls far below the
    # float spacing near 1; it must come from expit(-a) or log_expit(-a), not from 1 - p.
    X, y = blobs(n_classes=2, seed=4)
    for shared in (True, False):
        model = GDA(shared_covariance=shared).fit(X, y)
        line = model.means_[1] + np.linspace(-30, 30, 61)[:, None] * (model.means_[1] - model.means_[0])
        log_proba = model.predict_log_proba(line)
        proba = model.predict_proba(line)
        assert np.all(np.isfinite(log_proba))
        representable = log_proba > -700
        assert np.any(representable & (log_proba < -50))
        np.testing.assert_allclose(proba[representable], np.exp(log_proba[representable]), rtol=1e-12)


def test_given_priors_shift_the_posterior_but_not_the_estimates():
    X, y = blobs(seed=5)
    plain, tilted = GDA().fit(X, y), GDA(priors=[0.7, 0.2, 0.1]).fit(X, y)
    np.testing.assert_allclose(tilted.means_, plain.means_)
    np.testing.assert_allclose(tilted.covariance_, plain.covariance_)
    shift = np.log([0.7, 0.2, 0.1]) - np.log(plain.priors_)
    np.testing.assert_allclose(tilted.predict_joint_log_proba(X), plain.predict_joint_log_proba(X) + shift, rtol=1e-12)
    # a zero prior rules a class out, without warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for shared in (True, False):
            model = GDA(shared_covariance=shared, priors=[0.0, 0.5, 0.5]).fit(X, y)
            assert not np.any(model.predict(X) == 0)
            np.testing.assert_array_equal(model.predict_proba(X)[:, 0], 0.0)
            binary = GDA(shared_covariance=shared, priors=[0.0, 1.0]).fit(X, y == 1)
            assert np.all(binary.predict(X))


def test_reg_covar_is_added_to_every_diagonal():
    X, y = blobs(seed=6)
    for shared, attribute in ((True, "covariance_"), (False, "covariances_")):
        plain = getattr(GDA(shared_covariance=shared).fit(X, y), attribute)
        regularised = getattr(GDA(shared_covariance=shared, reg_covar=0.5).fit(X, y), attribute)
        added = np.broadcast_to(0.5 * np.eye(3), plain.shape)
        np.testing.assert_allclose(regularised - plain, added, atol=1e-12)


# --------------------------------------------------------------------------- the estimator protocol

# Every check passes with the default reg_covar=0.0. One check skips itself: check_array_api_input
# only runs when SCIPY_ARRAY_API=1 is set before SciPy is imported (this test suite does not set
# it). Run with it, the check fits on make_classification data, two of whose ten features are
# exact linear combinations of two others, so with reg_covar=0.0 GDA refuses the singular
# covariance, by design; with reg_covar=1e-6 the check passes. Hence both settings below, and the
# expected failure only for reg_covar=0.0.
SINGULAR_DATA = {
    "check_array_api_input": "with SCIPY_ARRAY_API=1 it fits on collinear features, a singular "
    "covariance that GDA refuses unless reg_covar > 0",
}


@parametrize_with_checks(
    [GDA(), GDA(shared_covariance=False), GDA(reg_covar=1e-6), GDA(shared_covariance=False, reg_covar=1e-6)],
    expected_failed_checks=lambda estimator: SINGULAR_DATA if estimator.reg_covar == 0 else {},
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- invariants


@st.composite
def training_sets(draw):
    n_classes = draw(st.integers(2, 3))
    d = draw(st.integers(1, 3))
    n = draw(st.integers(2 * n_classes, 30))
    X = draw(hnp.arrays(np.float64, (n, d), elements=st.floats(-10, 10, allow_subnormal=False)))
    y = draw(hnp.arrays(np.int64, n, elements=st.integers(0, n_classes - 1)))
    assume(np.unique(y).size >= 2)
    return X, y


@settings(max_examples=60, deadline=None)
@given(data=training_sets(), shared=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_posteriors_are_distributions_and_ignore_row_order_and_duplication(data, shared, seed):
    X, y = data
    # reg_covar: hypothesis readily makes constant features and classes of one point
    model = GDA(shared_covariance=shared, reg_covar=1e-3).fit(X, y)
    X_test = np.vstack([X, X * 3 + 7])
    proba = model.predict_proba(X_test)
    assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)

    order = np.random.default_rng(seed).permutation(len(y))
    shuffled = GDA(shared_covariance=shared, reg_covar=1e-3).fit(X[order], y[order])
    np.testing.assert_allclose(shuffled.predict_proba(X_test), proba, rtol=1e-7, atol=1e-9)

    doubled = GDA(shared_covariance=shared, reg_covar=1e-3).fit(np.vstack([X, X]), np.concatenate([y, y]))
    attribute = "covariance_" if shared else "covariances_"
    for name in ("priors_", "means_", attribute):
        np.testing.assert_allclose(getattr(doubled, name), getattr(model, name), rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- bad input

X3, Y3 = blobs(n=60, d=3, n_classes=2, seed=7)
FITTED = GDA().fit(X3, Y3)
FITTED_QDA = GDA(shared_covariance=False).fit(X3, Y3)
FITTED_THREE = GDA().fit(*blobs(n=60, d=3, n_classes=3, seed=8))
COLLINEAR = np.column_stack([X3, X3[:, 0] - 2 * X3[:, 1]])
WITH_NAN = np.where(np.arange(X3.size).reshape(X3.shape) == 7, np.nan, X3)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: GDA().fit(WITH_NAN, Y3), "X passed to GDA.fit contains NaN or infinite values.*impute"),
        (lambda: FITTED.predict_proba([[0.0, np.inf, 0.0]]), "GDA.predict_proba contains NaN or infinite"),
        (lambda: FITTED_QDA.predict([[np.nan, 0.0, 0.0]]), "GDA.predict contains NaN or infinite"),
        (lambda: FITTED_THREE.decision_function([[0.0, 0.0, -np.inf]]), "NaN or infinite"),
        (lambda: GDA().fit(X3, np.zeros(60)), "GDA needs at least two classes.*one class"),
        (lambda: GDA().fit(X3, Y3[:-1]), "X has 60 rows but y has 59 labels; pass exactly one label"),
        (lambda: GDA().fit(X3, None), "requires y to be passed"),
        (lambda: GDA().fit(X3[:2], np.array(["a", 1], dtype=object)), "same type"),
        (lambda: FITTED.predict(X3[:, :2]), "X has 2 features, but GDA is expecting 3 features.*same columns"),
        (lambda: GDA().fit(COLLINEAR, Y3), "shared \\(pooled\\) covariance is singular.*feature 3.*reg_covar=1e-6"),
        (
            lambda: GDA(shared_covariance=False).fit(COLLINEAR, Y3),
            "covariance of class 0 is singular.*feature 3.*reg_covar",
        ),
        (
            lambda: GDA(shared_covariance=False).fit(X3[:8], ["a", "a", "a", "b", "b", "b", "b", "b"]),
            "covariance of class 'a' is singular.*reg_covar.*3 example\\(s\\) in 3 dimensions",
        ),
        (lambda: GDA(reg_covar=-1.0).fit(X3, Y3), "reg_covar .* must be a finite number >= 0"),
        (lambda: GDA(shared_covariance="yes").fit(X3, Y3), "shared_covariance must be True"),
        (lambda: GDA(priors=[0.5, 0.3, 0.2]).fit(X3, Y3), "priors has shape \\(3,\\) but y has 2 classes"),
        (lambda: GDA(priors=[1.5, -0.5]).fit(X3, Y3), "non-negative"),
        (lambda: GDA(priors=[0.5, 0.6]).fit(X3, Y3), "priors must sum to one"),
        (lambda: FITTED_THREE.logistic_parameters(), "needs a binary model"),
        (lambda: FITTED_QDA.logistic_parameters(), "needs a shared covariance"),
        (lambda: FITTED_QDA.predict_proba([[1e300, -1e300, 1e300]]), "overflow.*rescale"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_reg_covar_makes_the_singular_cases_fit():
    for shared in (True, False):
        model = GDA(shared_covariance=shared, reg_covar=1e-6).fit(COLLINEAR, Y3)
        assert np.all(np.isfinite(model.predict_proba(COLLINEAR)))
    tiny = GDA(shared_covariance=False, reg_covar=1e-6).fit(X3[:8], ["a", "a", "a", "b", "b", "b", "b", "b"])
    assert np.all(np.isfinite(tiny.predict_log_proba(X3)))


def test_nan_is_caught_in_a_feature_that_the_scores_ignore():
    # Prediction checks finiteness on the scores, not on X (one pass over X fewer): a NaN or an
    # infinity in X spoils every score it enters with a non-zero coefficient. A constant feature
    # gets a coefficient of exactly zero, and IEEE gives NaN * 0 = NaN, but a BLAS may skip zero
    # multipliers; so for such a feature GDA examines X itself.
    X = np.column_stack([X3, np.ones(len(X3))])
    model = GDA(reg_covar=1e-6).fit(X, Y3)
    coef, _ = model.logistic_parameters()
    assert coef[-1] == 0.0
    with pytest.raises(ValueError, match="NaN or infinite"):
        model.predict_proba(np.column_stack([X3, np.full(len(X3), np.nan)]))
    # The guard itself, as if the product had skipped the zero coefficient:
    bad, finite_scores = np.array([[0.0, np.nan]]), np.array([1.0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        GDA._finite(bad, finite_scores, "predict", covers_all=False)
    assert GDA._finite(np.array([[0.0, 1.0]]), finite_scores, "predict", covers_all=False) is finite_scores


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        GDA().predict(X3)
