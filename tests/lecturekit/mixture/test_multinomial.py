"""Tests of lecturekit.mixture.multinomial: SemiSupervisedNB and MultinomialMixture, naive Bayes fitted by EM (5.3)."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln, logsumexp
from scipy.stats import multinomial
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.metrics import adjusted_rand_score
from sklearn.naive_bayes import MultinomialNB as SklearnMultinomialNB
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.mixture.multinomial import MultinomialMixture, SemiSupervisedNB
from lecturekit.naive_bayes import MultinomialNB


def documents(n_labeled=30, n_unlabeled=200, n_features=40, n_classes=3, seed=0, length=30, concentration=0.3):
    """Word counts drawn from a known mixture of multinomials: (X_l, y_l, X_u, y_u)."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(n_features, concentration), size=n_classes)
    n = n_labeled + n_unlabeled
    y = rng.integers(n_classes, size=n)
    y[:n_classes] = np.arange(n_classes)[:n]  # every class labelled at least once
    lengths = rng.integers(1, 2 * length, size=n)
    X = np.array([rng.multinomial(m, theta[c]) for m, c in zip(lengths, y, strict=True)])
    return X[:n_labeled], y[:n_labeled], X[n_labeled:], y[n_labeled:]


X_L, Y_L, X_U, Y_U = documents()


def soft_label_reference(X_l, y_l, X_u, resp, weight, alpha):
    """One M-step done by scikit-learn: each unlabelled row copied once per class, weighted lambda * Q."""
    K = resp.shape[1]
    X = np.vstack([X_l] + [X_u] * K)
    y = np.concatenate([y_l] + [np.full(len(X_u), c) for c in range(K)])
    w = np.concatenate([np.ones(len(X_l))] + [weight * resp[:, c] for c in range(K)])
    return SklearnMultinomialNB(alpha=alpha).fit(X, y, sample_weight=w)


def objective(model, X_l, y_l, X_u, weight, alpha):
    """The objective EM increases, computed from scikit-learn's joint log-probabilities."""
    reference = SklearnMultinomialNB(alpha=alpha)
    reference.classes_ = model.classes_
    reference.class_log_prior_ = model.class_log_prior_
    reference.feature_log_prob_ = model.feature_log_prob_
    reference.n_features_in_ = model.n_features_in_
    labeled = reference.predict_joint_log_proba(X_l)[np.arange(len(y_l)), np.searchsorted(model.classes_, y_l)]
    unlabeled = logsumexp(reference.predict_joint_log_proba(X_u), axis=1)
    total = labeled.sum() + weight * unlabeled.sum() + alpha * model.feature_log_prob_.sum()
    return total / (len(X_l) + weight * len(X_u))


# --------------------------------------------------------------------------- SemiSupervisedNB


@pytest.mark.parametrize("alpha", [1.0, 0.1, 1e-3])
@pytest.mark.parametrize("unlabeled", ["none", "empty", "zero weight"])
@pytest.mark.parametrize("sparse", [False, True])
def test_without_unlabelled_documents_it_is_multinomial_nb_exactly(alpha, unlabeled, sparse):
    X_l = sp.csr_matrix(X_L) if sparse else X_L
    X_u = {"none": None, "empty": X_U[:0], "zero weight": X_U}[unlabeled]
    model = SemiSupervisedNB(alpha=alpha, unlabeled_weight=0.0 if unlabeled == "zero weight" else 1.0)
    model.fit(X_l, Y_L, X_u)
    ours = MultinomialNB(alpha=alpha).fit(X_l, Y_L)
    for name in ("classes_", "class_count_", "feature_count_", "class_log_prior_", "feature_log_prob_"):
        np.testing.assert_array_equal(getattr(model, name), getattr(ours, name), err_msg=name)
    np.testing.assert_array_equal(model.predict_proba(X_U), ours.predict_proba(X_U))
    assert (model.n_iter_, model.converged_, model.history_.size) == (0, True, 0)
    theirs = SklearnMultinomialNB(alpha=alpha).fit(X_L, Y_L)
    np.testing.assert_allclose(model.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
    np.testing.assert_allclose(model.predict_proba(X_U), theirs.predict_proba(X_U), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("weight", [1.0, 0.1, 3.0])
@pytest.mark.parametrize("alpha", [1.0, 0.05])
def test_each_em_iteration_is_a_weighted_multinomial_nb_fit(weight, alpha):
    """The M-step on soft labels equals scikit-learn's MultinomialNB fitted with sample weights."""
    start = MultinomialNB(alpha=alpha).fit(X_L, Y_L)
    resp = start.predict_proba(X_U)
    for iterations in (1, 2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = SemiSupervisedNB(alpha=alpha, unlabeled_weight=weight, max_iter=iterations, tol=0.0)
            model.fit(sp.csr_matrix(X_L), Y_L, sp.csr_matrix(X_U))
        reference = soft_label_reference(X_L, Y_L, X_U, resp, weight, alpha)
        np.testing.assert_allclose(model.feature_log_prob_, reference.feature_log_prob_, rtol=1e-10)
        np.testing.assert_allclose(model.class_log_prior_, reference.class_log_prior_, rtol=1e-10)
        np.testing.assert_allclose(model.feature_count_, reference.feature_count_, rtol=1e-10)
        resp = reference.predict_proba(X_U)  # the next E-step


def test_history_is_the_map_objective_at_each_iterations_parameters():
    weight, alpha = 0.5, 0.3
    model = SemiSupervisedNB(alpha=alpha, unlabeled_weight=weight, max_iter=200, tol=1e-10).fit(X_L, Y_L, X_U)
    start = MultinomialNB(alpha=alpha).fit(X_L, Y_L)
    assert model.history_[0] == pytest.approx(objective(start, X_L, Y_L, X_U, weight, alpha), rel=1e-12)
    # After convergence the objective at the final parameters is the last one recorded (to tol).
    final = objective(model, X_L, Y_L, X_U, weight, alpha)
    assert model.converged_ and final >= model.lower_bound_ - 1e-12
    assert final - model.lower_bound_ < 1e-9
    assert model.history_[-1] > model.history_[0] + 1.0  # EM did move the parameters


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n_labeled=st.integers(3, 30),
    n_unlabeled=st.integers(1, 100),
    n_classes=st.integers(2, 4),
    alpha=st.sampled_from([1e-3, 0.1, 1.0, 5.0]),
    weight=st.sampled_from([0.01, 0.3, 1.0, 4.0]),
    sparse=st.booleans(),
)
def test_semi_supervised_objective_never_decreases(seed, n_labeled, n_unlabeled, n_classes, alpha, weight, sparse):
    X_l, y_l, X_u, _ = documents(
        n_labeled=max(n_labeled, n_classes), n_unlabeled=n_unlabeled, n_features=15, n_classes=n_classes, seed=seed
    )
    if sparse:
        X_l, X_u = sp.csr_matrix(X_l), sp.csc_matrix(X_u)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = SemiSupervisedNB(alpha=alpha, unlabeled_weight=weight, max_iter=25, tol=0.0).fit(X_l, y_l, X_u)
    history = model.history_
    assert history.size == 25 and np.all(np.isfinite(history))
    assert np.all(np.diff(history) >= -1e-12 * np.abs(history[:-1]))
    probabilities = model.predict_proba(X_u)
    np.testing.assert_allclose(probabilities.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_).sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(np.exp(model.class_log_prior_).sum(), 1.0, rtol=1e-12)


def test_unlabelled_documents_help_when_labels_are_scarce():
    X_l, y_l, X_u, y_u = documents(
        n_labeled=3, n_unlabeled=600, n_features=60, n_classes=3, seed=3, length=10, concentration=1.0
    )
    supervised = np.mean(MultinomialNB().fit(X_l, y_l).predict(X_u) == y_u)
    semi = np.mean(SemiSupervisedNB().fit(X_l, y_l, X_u).predict(X_u) == y_u)
    assert semi > supervised + 0.25 and semi > 0.85, (supervised, semi)  # 0.50 and 0.89


def test_string_labels_and_predictions():
    labels = np.array(["ham", "spam", "eggs"])[Y_L]
    model = SemiSupervisedNB(max_iter=5, tol=0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X_L, labels, X_U)
    assert set(model.predict(X_U)) <= {"ham", "spam", "eggs"}
    assert model.classes_.tolist() == ["eggs", "ham", "spam"]


def test_no_partial_fit():
    """Adding labelled batches would skip EM, so SemiSupervisedNB does not offer it."""
    assert not hasattr(SemiSupervisedNB(), "partial_fit")
    assert hasattr(MultinomialNB(), "partial_fit")


def test_not_converging_warns():
    with pytest.warns(ConvergenceWarning, match="max_iter=1 iterations.*objective per document"):
        SemiSupervisedNB(max_iter=1, tol=0.0).fit(X_L, Y_L, X_U)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: SemiSupervisedNB(alpha=0.0).fit(X_L, Y_L, X_U), "alpha must be a finite number > 0"),
        (lambda: SemiSupervisedNB(alpha=-1).fit(X_L, Y_L), "alpha must be a finite number > 0"),
        (
            lambda: SemiSupervisedNB(unlabeled_weight=-0.5).fit(X_L, Y_L, X_U),
            "unlabeled_weight must be a finite number >= 0",
        ),
        (lambda: SemiSupervisedNB(unlabeled_weight=np.nan).fit(X_L, Y_L, X_U), "unlabeled_weight must be"),
        (lambda: SemiSupervisedNB(max_iter=-1).fit(X_L, Y_L, X_U), "max_iter must be an integer >= 0"),
        (lambda: SemiSupervisedNB(tol=-1.0).fit(X_L, Y_L, X_U), "tol must be a finite number >= 0"),
        (
            lambda: SemiSupervisedNB().fit(X_L, Y_L, X_U[:, :-1]),
            r"X_unlabeled: X has 39 features, but SemiSupervisedNB is expecting 40.*same columns",
        ),
        (lambda: SemiSupervisedNB().fit(X_L, Y_L, np.where(X_U > 3, np.nan, X_U)), "X_unlabeled: X passed to .*NaN"),
        (
            lambda: SemiSupervisedNB().fit(X_L, Y_L, -X_U),
            "X_unlabeled: Negative values in data passed to SemiSupervisedNB",
        ),
        (lambda: SemiSupervisedNB().fit(-X_L, Y_L, X_U), "Negative values in data passed to SemiSupervisedNB"),
        (lambda: SemiSupervisedNB().fit(X_L, np.zeros(len(X_L)), X_U), "needs at least two classes"),
        (lambda: SemiSupervisedNB().fit(X_L, Y_L[:-1], X_U), "inconsistent numbers of samples"),
    ],
)
def test_semi_supervised_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --------------------------------------------------------------------------- MultinomialMixture


def test_mixture_finds_well_separated_clusters():
    X_l, y_l, X_u, y_u = documents(n_labeled=0, n_unlabeled=300, n_features=50, n_classes=3, seed=1)
    model = MultinomialMixture(3, n_init=5, random_state=0).fit(sp.csr_matrix(X_u))
    assert adjusted_rand_score(y_u, model.predict(X_u)) > 0.95
    assert model.converged_ and np.all(np.diff(model.history_) >= -1e-12 * np.abs(model.history_[:-1]))


@pytest.mark.parametrize("init_params", ["random", "random_from_data"])
def test_mixture_m_step_is_a_weighted_multinomial_nb_fit(init_params):
    """After one iteration the parameters equal scikit-learn's fit with the E-step's weights."""
    X = X_U
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        start = MultinomialMixture(3, alpha=0.5, max_iter=0, init_params=init_params, random_state=4).fit(X)
        one = MultinomialMixture(3, alpha=0.5, max_iter=1, tol=0.0, init_params=init_params, random_state=4).fit(X)
    resp = start.predict_proba(X)
    reference = soft_label_reference(X[:0], np.zeros(0, int), X, resp, 1.0, 0.5)
    np.testing.assert_allclose(one.feature_log_prob_, reference.feature_log_prob_, rtol=1e-10)
    np.testing.assert_allclose(np.log(one.weights_), reference.class_log_prior_, rtol=1e-10)


def test_mixture_score_samples_is_the_multinomial_log_pmf_without_the_coefficient():
    model = MultinomialMixture(3, random_state=0).fit(X_U)
    n = X_U.sum(axis=1)
    theta = np.exp(model.feature_log_prob_)
    pmf = sum(w * multinomial.pmf(X_U, n, t / t.sum()) for w, t in zip(model.weights_, theta, strict=True))
    coefficient = gammaln(n + 1) - gammaln(X_U + 1).sum(axis=1)
    np.testing.assert_allclose(model.score_samples(X_U), np.log(pmf) - coefficient, rtol=1e-10)
    assert model.score(X_U) == pytest.approx(np.mean(np.log(pmf) - coefficient), rel=1e-10)
    np.testing.assert_allclose(model.predict_proba(sp.csr_matrix(X_U)).sum(axis=1), 1.0, rtol=1e-12)


@settings(max_examples=50, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    n=st.integers(2, 80),
    k=st.integers(1, 4),
    alpha=st.sampled_from([1e-3, 0.1, 1.0]),
    init_params=st.sampled_from(["random", "random_from_data"]),
)
def test_mixture_objective_never_decreases(seed, n, k, alpha, init_params):
    _, _, X, _ = documents(n_labeled=0, n_unlabeled=max(n, k), n_features=12, n_classes=3, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = MultinomialMixture(
            k, alpha=alpha, max_iter=25, tol=0.0, init_params=init_params, random_state=seed % 1000
        ).fit(X)
    history = model.history_
    assert np.all(np.isfinite(history))
    assert np.all(np.diff(history) >= -1e-12 * np.abs(history[:-1]))
    np.testing.assert_allclose(model.weights_.sum(), 1.0, rtol=1e-12)


def test_more_restarts_never_end_lower():
    single = MultinomialMixture(4, random_state=7, tol=1e-8).fit(X_U)
    several = MultinomialMixture(4, n_init=6, random_state=7, tol=1e-8).fit(X_U)
    assert several.lower_bound_ >= single.lower_bound_  # the first restart is the single fit


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: MultinomialMixture(300).fit(X_U), "needs at least 300 documents, but X has 200"),
        (lambda: MultinomialMixture(0).fit(X_U), "n_components must be an integer >= 1"),
        (lambda: MultinomialMixture(2, alpha=0).fit(X_U), "alpha must be a finite number > 0"),
        (lambda: MultinomialMixture(2, init_params="kmeans").fit(X_U), "init_params must be 'random' or"),
        (lambda: MultinomialMixture(2, n_init=0).fit(X_U), "n_init must be an integer >= 1"),
        (lambda: MultinomialMixture(2).fit(np.where(X_U > 3, np.nan, X_U)), "contains NaN or infinite values"),
        (lambda: MultinomialMixture(2).fit(-X_U), "Negative values in data passed to MultinomialMixture.fit"),
        (
            lambda: MultinomialMixture(2).fit(X_U).predict(X_U[:, 1:]),
            "X has 39 features, but MultinomialMixture is expecting 40",
        ),
    ],
)
def test_mixture_bad_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_mixture_predict_before_fit():
    with pytest.raises(NotFittedError):
        MultinomialMixture().predict(X_U)


def expected_failed_checks(estimator):
    if isinstance(estimator, SemiSupervisedNB):
        return {
            "check_non_transformer_estimators_n_iter": "fit(X, y) without unlabelled documents runs no EM iteration, "
            "so n_iter_ is 0"
        }
    # scikit-learn's sparse checks read classifier tags from any estimator with predict_proba;
    # MultinomialMixture is a density model (sparse input is tested above).
    return {
        "check_estimator_sparse_array": "reads classifier tags of a density model",
        "check_estimator_sparse_matrix": "reads classifier tags of a density model",
    }


@parametrize_with_checks(
    [
        SemiSupervisedNB(),
        SemiSupervisedNB(alpha=0.1, unlabeled_weight=0.5),
        MultinomialMixture(random_state=0),
        MultinomialMixture(3, init_params="random_from_data", random_state=0),
    ],
    expected_failed_checks=expected_failed_checks,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
