"""Tests of lecturekit.mixture.bernoulli.SemiSupervisedBernoulliNB: Bernoulli naive Bayes fitted by EM (5.3)."""

import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.naive_bayes import BernoulliNB as SklearnBernoulliNB

from lecturekit.mixture.bernoulli import SemiSupervisedBernoulliNB


def documents(n_labeled=20, n_unlabeled=150, n_features=15, n_classes=3, seed=0):
    """Binary features drawn from a known Bernoulli naive Bayes model: (X_l, y_l, X_u, y_u)."""
    rng = np.random.default_rng(seed)
    theta = rng.beta(0.5, 0.5, size=(n_classes, n_features))
    n = n_labeled + n_unlabeled
    y = rng.integers(n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)  # every class labelled at least once
    X = (rng.random((n, n_features)) < theta[y]).astype(float)
    return X[:n_labeled], y[:n_labeled], X[n_labeled:], y[n_labeled:]


def brute_force_log_joint(X, log_prior, theta):
    """log p(x_i, c) by an explicit product over the features, one document and class at a time."""
    n, K = len(X), len(log_prior)
    out = np.empty((n, K))
    for i, c in itertools.product(range(n), range(K)):
        probability = np.exp(log_prior[c])
        for j, value in enumerate(X[i]):
            probability *= theta[c, j] if value else 1.0 - theta[c, j]
        out[i, c] = np.log(probability)
    return out


def objective(model, X_l, y_l, X_u, weight, alpha):
    """J per weighted document, by brute force: log p(x, y) on L, log sum_c p(x, c) on U, Beta prior."""
    theta = np.exp(model.feature_log_prob_)
    codes = np.searchsorted(model.classes_, y_l)
    labeled = brute_force_log_joint(X_l, model.class_log_prior_, theta)[np.arange(len(y_l)), codes].sum()
    unlabeled = np.log(np.exp(brute_force_log_joint(X_u, model.class_log_prior_, theta)).sum(axis=1)).sum()
    prior = alpha * (np.log(theta).sum() + np.log1p(-theta).sum())
    return (labeled + weight * unlabeled + prior) / (len(X_l) + weight * len(X_u))


X_L, Y_L, X_U, Y_U = documents()


# --------------------------------------------------------------------------- no unlabelled data


@pytest.mark.parametrize("alpha", [1.0, 0.3, 2.5])
@pytest.mark.parametrize("sparse", [False, True])
def test_without_unlabeled_documents_it_is_bernoulli_nb(alpha, sparse):
    X = sp.csr_matrix(X_L) if sparse else X_L
    ours = SemiSupervisedBernoulliNB(alpha=alpha).fit(X, Y_L)
    theirs = SklearnBernoulliNB(alpha=alpha).fit(X_L, Y_L)
    assert np.allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=0, atol=1e-10)
    assert np.allclose(ours.class_log_prior_, theirs.class_log_prior_, rtol=0, atol=1e-10)
    assert np.allclose(ours.predict_proba(X_U), theirs.predict_proba(X_U), rtol=0, atol=1e-10)
    assert np.array_equal(ours.predict(X_U), theirs.predict(X_U))
    assert ours.n_iter_ == 0 and ours.converged_ and ours.history_.size == 0


def test_zero_weight_or_empty_unlabeled_set_changes_nothing():
    plain = SemiSupervisedBernoulliNB(alpha=0.5).fit(X_L, Y_L)
    for model in (
        SemiSupervisedBernoulliNB(alpha=0.5, unlabeled_weight=0.0).fit(X_L, Y_L, X_U),
        SemiSupervisedBernoulliNB(alpha=0.5).fit(X_L, Y_L, X_U[:0]),
    ):
        assert np.array_equal(model.feature_log_prob_, plain.feature_log_prob_)
        assert model.n_iter_ == 0


def test_binarize_as_in_scikit_learn():
    counts = np.random.default_rng(3).poisson(0.7, size=(30, 8))
    y = np.arange(30) % 2
    for threshold in (0.0, 1.0):
        ours = SemiSupervisedBernoulliNB(binarize=threshold).fit(sp.csr_matrix(counts), y)
        theirs = SklearnBernoulliNB(binarize=threshold).fit(counts, y)
        assert np.allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=0, atol=1e-10)
        assert np.allclose(ours.predict_log_proba(counts), theirs.predict_log_proba(counts), rtol=0, atol=1e-10)


# --------------------------------------------------------------------------- the E-step and the M-step


def test_posteriors_equal_a_brute_force_sum_over_the_labels():
    X_l, y_l, X_u, _ = documents(n_labeled=6, n_unlabeled=5, n_features=4, n_classes=3, seed=7)
    model = SemiSupervisedBernoulliNB(alpha=0.7).fit(X_l, y_l, X_u)
    joint = brute_force_log_joint(X_u, model.class_log_prior_, np.exp(model.feature_log_prob_))
    evidence = np.log(np.exp(joint).sum(axis=1))  # p(x) = sum over the three labels
    assert np.allclose(model.predict_joint_log_proba(X_u), joint, rtol=0, atol=1e-12)
    assert np.allclose(model.predict_proba(X_u), np.exp(joint - evidence[:, None]), rtol=0, atol=1e-12)


def test_history_is_the_objective_computed_by_brute_force():
    X_l, y_l, X_u, _ = documents(n_labeled=6, n_unlabeled=8, n_features=5, n_classes=2, seed=11)
    for weight, alpha in ((1.0, 1.0), (0.3, 0.2)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for steps in (1, 2, 3):
                model = SemiSupervisedBernoulliNB(alpha=alpha, unlabeled_weight=weight, max_iter=steps, tol=0.0).fit(
                    X_l, y_l, X_u
                )
                # history_[t] is J at theta_t; theta_{steps} is the fitted model: compare the one before
                previous = SemiSupervisedBernoulliNB(
                    alpha=alpha, unlabeled_weight=weight, max_iter=steps - 1, tol=0.0
                ).fit(X_l, y_l, X_u)
                assert np.isclose(
                    model.history_[-1], objective(previous, X_l, y_l, X_u, weight, alpha), rtol=1e-12, atol=1e-12
                )


def test_one_m_step_is_bernoulli_nb_with_sample_weights():
    weight, alpha = 0.6, 0.4
    start = SemiSupervisedBernoulliNB(alpha=alpha).fit(X_L, Y_L)
    Q = start.predict_proba(X_U)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = SemiSupervisedBernoulliNB(alpha=alpha, unlabeled_weight=weight, max_iter=1, tol=0.0).fit(X_L, Y_L, X_U)
    K = Q.shape[1]
    X = np.vstack([X_L] + [X_U] * K)
    y = np.concatenate([Y_L] + [np.full(len(X_U), c) for c in range(K)])
    w = np.concatenate([np.ones(len(X_L))] + [weight * Q[:, c] for c in range(K)])
    reference = SklearnBernoulliNB(alpha=alpha).fit(X, y, sample_weight=w)
    assert np.allclose(one.feature_log_prob_, reference.feature_log_prob_, rtol=0, atol=1e-10)
    assert np.allclose(one.class_log_prior_, reference.class_log_prior_, rtol=0, atol=1e-10)


def test_sparse_and_dense_give_the_same_fit():
    dense = SemiSupervisedBernoulliNB(alpha=0.5).fit(X_L, Y_L, X_U)
    sparse = SemiSupervisedBernoulliNB(alpha=0.5).fit(sp.csr_matrix(X_L), Y_L, sp.csc_matrix(X_U))
    assert np.allclose(dense.history_, sparse.history_, rtol=1e-12, atol=0)
    assert np.allclose(dense.feature_log_prob_, sparse.feature_log_prob_, rtol=0, atol=1e-12)
    assert np.allclose(dense.predict_proba(X_U), sparse.predict_proba(sp.csr_matrix(X_U)), rtol=0, atol=1e-12)


def test_unlabeled_documents_help_when_the_model_is_right():
    X_l, y_l, X_u, y_u = documents(n_labeled=6, n_unlabeled=600, n_features=30, n_classes=3, seed=5)
    X_test, y_test = documents(n_labeled=0, n_unlabeled=600, n_features=30, n_classes=3, seed=5)[2:]
    labelled_only = SemiSupervisedBernoulliNB(alpha=1.0).fit(X_l, y_l)
    em = SemiSupervisedBernoulliNB(alpha=1.0).fit(X_l, y_l, X_u)
    assert em.converged_
    assert em.score(X_test, y_test) > labelled_only.score(X_test, y_test)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n_labeled=st.integers(2, 25),
    n_unlabeled=st.integers(1, 80),
    n_features=st.integers(1, 12),
    n_classes=st.integers(2, 4),
    alpha=st.floats(0.01, 5.0),
    weight=st.floats(0.0, 3.0),
)
def test_the_objective_never_decreases(seed, n_labeled, n_unlabeled, n_features, n_classes, alpha, weight):
    n_labeled = max(n_labeled, n_classes)
    X_l, y_l, X_u, _ = documents(n_labeled, n_unlabeled, n_features, n_classes, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SemiSupervisedBernoulliNB(alpha=alpha, unlabeled_weight=weight, max_iter=30, tol=0.0).fit(X_l, y_l, X_u)
    steps = np.diff(model.history_)
    assert np.all(steps >= -1e-12 * (1 + np.abs(model.history_[:-1])))
    assert np.allclose(model.predict_proba(X_u).sum(axis=1), 1.0, rtol=0, atol=1e-12)


def test_long_documents_stay_finite():
    rng = np.random.default_rng(2)
    X = sp.random(40, 20_000, density=0.3, format="csr", random_state=3)
    y = np.arange(40) % 2
    model = SemiSupervisedBernoulliNB(alpha=0.1).fit(X[:10], y[:10], X[10:])
    proba = model.predict_proba(X)
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    assert model.predict_joint_log_proba(X).max() < -1e3  # exp() of these would be 0
    assert rng is not None


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(alpha=0.0), "alpha must be a finite number > 0"),
        (dict(alpha=-1.0), "alpha must be a finite number > 0"),
        (dict(unlabeled_weight=-0.5), "unlabeled_weight must be a finite number >= 0"),
        (dict(tol=-1.0), "tol must be a finite number >= 0"),
        (dict(max_iter=2.5), "max_iter must be an integer >= 0"),
        (dict(binarize="yes"), "binarize must be a number or None"),
    ],
)
def test_bad_parameters_raise_clear_errors(params, match):
    with pytest.raises(ValueError, match=match):
        SemiSupervisedBernoulliNB(**params).fit(X_L, Y_L, X_U)


def test_bad_data_raise_clear_errors():
    model = SemiSupervisedBernoulliNB()
    with pytest.raises(ValueError, match="at least two classes"):
        model.fit(X_L, np.zeros(len(X_L)), X_U)
    with pytest.raises(ValueError, match="X_unlabeled"):
        model.fit(X_L, Y_L, X_U[:, :-1])
    bad = X_U.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        model.fit(X_L, Y_L, bad)
    with pytest.raises(ValueError, match="values other than 0 and 1"):
        SemiSupervisedBernoulliNB(binarize=None).fit(2 * X_L, Y_L)
    with pytest.raises(ValueError, match="binarize=-1"):
        SemiSupervisedBernoulliNB(binarize=-1).fit(sp.csr_matrix(X_L), Y_L)
    with pytest.raises(ValueError):
        model.fit(X_L, Y_L[:-1])
    with pytest.raises(NotFittedError):
        SemiSupervisedBernoulliNB().predict(X_U)
    fitted = SemiSupervisedBernoulliNB().fit(X_L, Y_L)
    with pytest.raises(ValueError, match="same columns"):
        fitted.predict(X_U[:, :-1])


def test_max_iter_reached_warns():
    with pytest.warns(ConvergenceWarning, match="EM did not converge"):
        SemiSupervisedBernoulliNB(max_iter=1, tol=0.0).fit(X_L, Y_L, X_U)
