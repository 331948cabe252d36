"""Tests of what lecturekit.nb_base gives every naive Bayes model: sample_weight and alpha arrays;
then what the three models share (scikit-learn agreement, streaming, invariants, bad input).

Each is checked against scikit-learn (fitted attributes and probabilities to 1e-8, dense, CSR and
CSC), against its meaning (an integer weight repeats a row, a zero weight drops it, batches
equal one fit), and for bad input (a ValueError that names the problem and the fix).
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from nb_data import FORMATS as ALL_FORMATS  # tests/nb_data.py
from nb_data import IRIS_X, IRIS_Y, X_COUNTS, X_TEST, Y_COUNTS, NoDensify
from nb_data import counts as documents
from scipy.special import softmax
from sklearn import naive_bayes as reference
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit import bernoulli_nb, multinomial_nb
from lecturekit.estimation import add_k
from lecturekit.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

FORMATS = {"dense": np.asarray, "csr": sp.csr_matrix, "csc": sp.csc_matrix}
DISCRETE_ATTRIBUTES = ("class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_")
GAUSSIAN_ATTRIBUTES = ("class_count_", "theta_", "var_", "class_prior_")


def counts(n: int = 120, d: int = 25, n_classes: int = 3, seed: int = 0):
    """Word counts whose rates depend on the class; every class present."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    X = rng.poisson(rng.gamma(0.5, 1.0, size=(n_classes, d))[y])
    return X, y


def points(n: int = 90, d: int = 4, n_classes: int = 3, seed: int = 0):
    """Gaussian points with class-dependent means and scales; every class present."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes
    return rng.normal(size=(n, d)) * rng.uniform(0.5, 3, d) + 2.0 * y[:, None], y


def weights(n: int, seed: int = 0, integer: bool = False):
    """Positive weights, some zero (fractional unless ``integer``)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 4, n).astype(float) if integer else rng.gamma(1.0, 1.0, n)
    w[rng.permutation(n)[: n // 10]] = 0.0
    w[:3] = 1.0  # the first row of every class keeps some weight
    return w


def assert_same_model(ours, theirs, names, X_test, rtol=1e-8, atol=1e-10):
    for name in names:
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=rtol, atol=atol,
                                   err_msg=name)
    np.testing.assert_allclose(ours.predict_proba(X_test), theirs.predict_proba(X_test), rtol=1e-8,
                               atol=1e-10)


# --------------------------------------------------------------------------- sample_weight


DISCRETE = [
    (MultinomialNB, reference.MultinomialNB, {}),
    (MultinomialNB, reference.MultinomialNB, {"alpha": 0.1, "fit_prior": False}),
    (BernoulliNB, reference.BernoulliNB, {}),
    (BernoulliNB, reference.BernoulliNB, {"alpha": 0.5, "binarize": 1.5}),
]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("integer", [False, True])
@pytest.mark.parametrize("ours_class, theirs_class, params", DISCRETE)
def test_weighted_discrete_fit_equals_scikit_learn(ours_class, theirs_class, params, integer, fmt):
    X, y = counts()
    w = weights(len(y), integer=integer)
    ours = ours_class(**params).fit(FORMATS[fmt](X), y, sample_weight=w)
    theirs = theirs_class(**params).fit(X, y, sample_weight=w)
    assert_same_model(ours, theirs, DISCRETE_ATTRIBUTES, FORMATS[fmt](counts(seed=1)[0]))


@pytest.mark.parametrize("fmt", FORMATS)
def test_weighted_bernoulli_with_more_features_than_documents_equals_scikit_learn(fmt):
    # Few documents, many words: BernoulliNB looks its estimates up in a table of the possible
    # whole counts, which fractional weights do not give; integer weights still may.
    X, y = counts(n=30, d=400)
    for w in (weights(30), weights(30, integer=True)):
        ours = BernoulliNB(alpha=0.3).fit(FORMATS[fmt](X), y, sample_weight=w)
        theirs = reference.BernoulliNB(alpha=0.3).fit(X, y, sample_weight=w)
        assert_same_model(ours, theirs, DISCRETE_ATTRIBUTES, FORMATS[fmt](counts(n=20, d=400, seed=1)[0]))


@pytest.mark.parametrize("params", [{}, {"var_smoothing": 1e-2}, {"priors": [0.2, 0.3, 0.5]}])
def test_weighted_gaussian_fit_equals_scikit_learn(params):
    X, y = points()
    w = weights(len(y))
    ours = GaussianNB(**params).fit(X, y, sample_weight=w)
    theirs = reference.GaussianNB(**params).fit(X, y, sample_weight=w)
    assert_same_model(ours, theirs, GAUSSIAN_ATTRIBUTES, points(seed=1)[0])
    assert ours.epsilon_ == pytest.approx(theirs.epsilon_, rel=1e-12)  # unweighted, as theirs


def test_weighted_gaussian_partial_fit_equals_scikit_learn():
    # scikit-learn takes epsilon_ from the latest batch, lecturekit from all data: compare without it.
    X, y = points(n=150)
    w = weights(len(y))
    ours, theirs = GaussianNB(), reference.GaussianNB()
    for batch in np.array_split(np.arange(len(y)), 5):
        ours.partial_fit(X[batch], y[batch], classes=[0, 1, 2], sample_weight=w[batch])
        theirs.partial_fit(X[batch], y[batch], classes=[0, 1, 2], sample_weight=w[batch])
    np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-8)
    np.testing.assert_allclose(ours.var_ - ours.epsilon_, theirs.var_ - theirs.epsilon_, rtol=1e-8)
    np.testing.assert_allclose(ours.class_count_, theirs.class_count_, rtol=1e-12)


@pytest.mark.parametrize("model", [MultinomialNB(), BernoulliNB(), GaussianNB()])
def test_a_single_number_weighs_every_row_as_in_scikit_learn(model):
    X, y = points() if isinstance(model, GaussianNB) else counts()
    ours = type(model)().fit(X, y, sample_weight=2.5)
    theirs = getattr(reference, type(model).__name__)().fit(X, y, sample_weight=2.5)
    np.testing.assert_allclose(ours.class_count_, theirs.class_count_)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=1e-8)


def fit_both(model, X, y, w):
    """(fit with weights w, fit on the rows repeated w times)."""
    weighted = type(model)(**model.get_params()).fit(X, y, sample_weight=w)
    repeat = np.repeat(np.arange(len(y)), w.astype(int))
    rows = X[repeat] if not sp.issparse(X) else X.tocsr()[repeat].asformat(X.format)
    return weighted, type(model)(**model.get_params()).fit(rows, y[repeat])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), fmt=st.sampled_from(list(FORMATS)),
       model=st.sampled_from([MultinomialNB(alpha=0.5), BernoulliNB(binarize=1.0)]))
def test_an_integer_weight_equals_repeating_the_row(seed, fmt, model):
    X, y = counts(n=40, d=12, seed=seed % 1000)
    w = weights(40, seed=seed, integer=True)
    weighted, repeated = fit_both(model, FORMATS[fmt](X), y, w)
    for name in DISCRETE_ATTRIBUTES:
        np.testing.assert_allclose(getattr(weighted, name), getattr(repeated, name), rtol=1e-12, err_msg=name)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_an_integer_weight_equals_repeating_the_row_for_gaussians(seed):
    # epsilon_ is the unweighted variance of X (as in scikit-learn), so it may differ; the rest not.
    X, y = points(n=30, seed=seed % 1000)
    weighted, repeated = fit_both(GaussianNB(), X, y, weights(30, seed=seed, integer=True))
    np.testing.assert_allclose(weighted.class_count_, repeated.class_count_, rtol=1e-12)
    np.testing.assert_allclose(weighted.theta_, repeated.theta_, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(weighted.var_ - weighted.epsilon_, repeated.var_ - repeated.epsilon_,
                               rtol=1e-9, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_batches=st.integers(2, 6),
       model=st.sampled_from([MultinomialNB(alpha=0.2), BernoulliNB(), GaussianNB()]),
       sparse=st.booleans())
def test_weighted_partial_fit_in_batches_equals_fit(seed, n_batches, model, sparse):
    gaussian = isinstance(model, GaussianNB)
    X, y = points(n=60, seed=seed % 1000) if gaussian else counts(n=60, d=15, seed=seed % 1000)
    X = sp.csr_matrix(X) if sparse and not gaussian else X
    w = weights(60, seed=seed)
    # batches of two rows or more (GaussianNB refuses a first batch of one row: zero variance)
    cuts = 2 * np.sort(np.random.default_rng(seed).choice(np.arange(1, 30), n_batches - 1, replace=False))
    batches = np.split(np.arange(60), cuts)
    w[[batch[0] for batch in batches]] = 0.5  # a batch of zero weights only is refused
    whole = type(model)(**model.get_params()).fit(X, y, sample_weight=w)
    streamed = type(model)(**model.get_params())
    for batch in batches:
        streamed.partial_fit(X[batch], y[batch], classes=[0, 1, 2], sample_weight=w[batch])
    names = GAUSSIAN_ATTRIBUTES if gaussian else DISCRETE_ATTRIBUTES
    assert_same_model(streamed, whole, names, X, rtol=1e-9, atol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1),
       model=st.sampled_from([MultinomialNB(alpha=0.7), BernoulliNB(), GaussianNB(var_smoothing=0.0)]))
def test_a_zero_weight_drops_the_row_and_scaling_the_weights_of_a_gaussian_changes_nothing(seed, model):
    gaussian = isinstance(model, GaussianNB)
    X, y = points(n=45, seed=seed % 1000) if gaussian else counts(n=45, d=10, seed=seed % 1000)
    w = weights(45, seed=seed)
    kept = w > 0
    weighted = type(model)(**model.get_params()).fit(X, y, sample_weight=w)
    dropped = type(model)(**model.get_params()).fit(X[kept], y[kept], sample_weight=w[kept])
    names = ("class_count_", "theta_", "var_") if gaussian else DISCRETE_ATTRIBUTES
    for name in names:
        np.testing.assert_allclose(getattr(weighted, name), getattr(dropped, name), rtol=1e-9, atol=1e-12)
    if gaussian:  # means and variances are ratios of weighted sums
        scaled = GaussianNB(var_smoothing=0.0).fit(X, y, sample_weight=7.0 * w)
        for name in ("theta_", "var_", "class_prior_"):
            np.testing.assert_allclose(getattr(scaled, name), getattr(weighted, name), rtol=1e-9, atol=1e-12)


def test_sample_weight_is_not_modified_and_sparse_input_stays_sparse(monkeypatch):
    X, y = counts()
    w = weights(len(y))
    before = w.copy()
    monkeypatch.setattr(sp.csr_matrix, "toarray", lambda *a, **k: pytest.fail("densified"))
    for model in (MultinomialNB(), BernoulliNB()):
        model.fit(sp.csr_matrix(X), y, sample_weight=w)
        model.partial_fit(sp.csr_matrix(X), y, sample_weight=w)
    np.testing.assert_array_equal(w, before)


X_BAD, Y_BAD = counts(n=10, d=4)


@pytest.mark.parametrize("model", [MultinomialNB(), BernoulliNB(), GaussianNB()])
@pytest.mark.parametrize(
    "sample_weight, message",
    [
        (np.ones(9), "has 9 weights but X has 10 rows"),
        (np.ones((10, 1)), "has shape \\(10, 1\\); it must be 1-D"),
        (np.r_[np.nan, np.ones(9)], "contains NaN or infinite values"),
        (np.r_[np.inf, np.ones(9)], "contains NaN or infinite values"),
        (np.r_[-1.0, np.ones(9)], "contains negative weights"),
        (np.zeros(10), "is zero for every row, so there is nothing to learn"),
        (["a"] * 10, "is not numeric"),
        (sp.csr_matrix(np.ones((1, 10))), "is a sparse matrix; pass a 1-D array"),
    ],
)
@pytest.mark.parametrize("method", ["fit", "partial_fit"])
def test_bad_sample_weight_gets_a_clear_error(model, sample_weight, message, method):
    fit = getattr(type(model)(), method)
    extra = {"classes": [0, 1, 2]} if method == "partial_fit" else {}
    with pytest.raises(ValueError, match=f"sample_weight passed to {type(model).__name__}.{method} "
                                         f"{message}.*Give one finite weight >= 0 per row"):
        fit(X_BAD, Y_BAD, sample_weight=sample_weight, **extra)


# --------------------------------------------------------------------------- alpha: one per feature


def alphas(d: int, seed: int = 0, zeros: int = 0):
    """Pseudo-counts in [0.01, 3), the first ``zeros`` of them 0."""
    alpha = np.random.default_rng(seed).uniform(0.01, 3.0, d)
    alpha[:zeros] = 0.0
    return alpha


def bernoulli_log_prob(model, alpha):
    """log p_cj = log((N_cj + alpha_j) / (N_c + 2 alpha_j)), from the model's counts."""
    return np.log(model.feature_count_ + alpha) - np.log(model.class_count_[:, None] + 2 * alpha)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("force_alpha", [True, False])
def test_multinomial_alpha_array_equals_scikit_learn(fmt, force_alpha):
    X, y = counts()
    alpha = alphas(X.shape[1], zeros=0 if force_alpha else 3)
    with pytest.warns(UserWarning, match="alpha too small") if not force_alpha else nullcontext():
        ours = MultinomialNB(alpha=alpha, force_alpha=force_alpha).fit(FORMATS[fmt](X), y)
    with pytest.warns(UserWarning, match="alpha too small") if not force_alpha else nullcontext():
        theirs = reference.MultinomialNB(alpha=alpha, force_alpha=force_alpha).fit(X, y)
    assert_same_model(ours, theirs, DISCRETE_ATTRIBUTES, FORMATS[fmt](counts(seed=1)[0]))
    with pytest.warns(UserWarning, match="alpha too small") if not force_alpha else nullcontext():
        np.testing.assert_array_equal(ours._check_alpha(), np.maximum(alpha, 0 if force_alpha else 1e-10))


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", [(120, 25), (30, 400)])  # estimates per feature, or from a table
def test_bernoulli_alpha_array_equals_the_formula_and_scikit_learns_scores(fmt, shape):
    # scikit-learn 1.9.1's BernoulliNB adds 2 * alpha (one per feature) to the class counts (one
    # per class), which fails unless n_classes == n_features. The estimate it documents is
    # (N_cj + alpha_j) / (N_c + 2 alpha_j); with those log probabilities put into a fitted
    # scikit-learn model, its probabilities must equal ours.
    X, y = counts(*shape)
    alpha = alphas(X.shape[1])
    ours = BernoulliNB(alpha=alpha, binarize=0.5).fit(FORMATS[fmt](X), y, sample_weight=weights(len(y)))
    theirs = reference.BernoulliNB(binarize=0.5).fit(X, y, sample_weight=weights(len(y)))
    np.testing.assert_allclose(ours.feature_count_, theirs.feature_count_, rtol=1e-12)
    theirs.feature_log_prob_ = bernoulli_log_prob(theirs, alpha)
    assert_same_model(ours, theirs, DISCRETE_ATTRIBUTES, FORMATS[fmt](counts(*shape, seed=1)[0]))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), value=st.sampled_from([0.01, 0.5, 1.0, 4.0]),
       model_class=st.sampled_from([MultinomialNB, BernoulliNB]), d=st.sampled_from([8, 200]))
def test_a_constant_alpha_array_equals_the_number(seed, value, model_class, d):
    X, y = counts(n=40, d=d, seed=seed % 1000)
    X = sp.csr_matrix(X)
    number = model_class(alpha=value).fit(X, y)
    array = model_class(alpha=np.full(d, value)).fit(X, y)
    for name in DISCRETE_ATTRIBUTES:
        np.testing.assert_allclose(getattr(array, name), getattr(number, name), rtol=1e-12, err_msg=name)
    np.testing.assert_allclose(array.predict_proba(X), number.predict_proba(X), rtol=1e-10, atol=1e-14)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), model_class=st.sampled_from([MultinomialNB, BernoulliNB]))
def test_alpha_arrays_give_distributions_and_batches_equal_fit(seed, model_class):
    X, y = counts(n=40, d=15, seed=seed % 1000)
    alpha = alphas(15, seed=seed)
    model = model_class(alpha=alpha).fit(X, y)
    probability = np.exp(model.feature_log_prob_)
    if model_class is MultinomialNB:  # one distribution over the words per class
        np.testing.assert_allclose(probability.sum(axis=1), 1.0, rtol=1e-12)
    else:  # a probability strictly inside (0, 1) per word and class, the formula's
        assert np.all((probability > 0) & (probability < 1))
        np.testing.assert_allclose(model.feature_log_prob_, bernoulli_log_prob(model, alpha), rtol=1e-12)
    streamed = model_class(alpha=alpha)
    for batch in np.array_split(np.arange(40), 3):
        streamed.partial_fit(X[batch], y[batch], classes=[0, 1, 2])
    assert_same_model(streamed, model, DISCRETE_ATTRIBUTES, X, rtol=1e-12, atol=1e-14)


def test_add_k_takes_one_pseudo_count_per_entry():
    counts_ = np.array([[3.0, 0.0, 1.0], [0.0, 2.0, 2.0]])
    k = np.array([1.0, 0.5, 0.0])
    totals = counts_.sum(axis=1, keepdims=True) + k.sum()
    np.testing.assert_allclose(add_k(counts_, k, axis=1), (counts_ + k) / totals)
    stacked = np.stack([counts_, 4.0 - counts_])  # (present, absent) along axis 0
    np.testing.assert_allclose(add_k(stacked, k, axis=0)[0], (counts_ + k) / (4.0 + 2 * k))
    np.testing.assert_array_equal(add_k(counts_, np.full(3, 0.5), axis=1), add_k(counts_, 0.5, axis=1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # log 0 = -inf quietly
        np.testing.assert_allclose(add_k(counts_, k, axis=1, log=True), np.log(add_k(counts_, k, axis=1)),
                                   rtol=1e-14)
    with pytest.raises(ValueError, match="k of shape \\(2,\\) does not broadcast against counts of shape"):
        add_k(counts_, [1.0, 2.0], axis=1)
    with pytest.raises(ValueError, match="k is a pseudo-count and must be a finite number >= 0"):
        add_k(counts_, [1.0, -1.0, 0.0], axis=1)
    with pytest.raises(ValueError, match="no observations"):
        add_k(np.zeros((1, 3)), np.zeros(3), axis=1)


@pytest.mark.parametrize("model_class", [MultinomialNB, BernoulliNB])
@pytest.mark.parametrize(
    "alpha, message",
    [
        (np.ones(24), "one per feature, but got an array of shape \\(24,\\) for X with 25 features"),
        (np.ones((1, 25)), "an array of shape \\(1, 25\\) for X with 25 features"),
        (np.r_[np.ones(3), -1.0, np.ones(21)], "one per feature\\) and must be a finite number >= 0; "
                                               "got -1.0 at index 3 of the array"),
        (np.r_[np.nan, np.ones(24)], "must be a finite number >= 0.*got nan at index 0"),
        (np.r_[np.inf, np.ones(24)], "must be a finite number >= 0.*got inf at index 0"),
        (-0.5, "must be a finite number >= 0.*got -0.5\\."),
        (["a"] * 25, "must be a finite number >= 0"),
        ("1", "must be a finite number >= 0"),
    ],
)
def test_bad_alpha_gets_a_clear_error(model_class, alpha, message):
    X, y = counts()
    with pytest.raises(ValueError, match=f"alpha is the pseudo-count.*{message}.*one pseudo-count >= 0 "
                                         f"per feature \\(an array of length n_features = 25\\)"):
        model_class(alpha=alpha).fit(X, y)


# --------------------------------------------------------------------------- every model: scikit-learn agreement
#
# Moved from test_naive_bayes.py: what the three models share, on the data of tests/nb_data.py
# (imported as documents and ALL_FORMATS, since counts and ALL_FORMATS above are this file's own).

DISCRETE_SETTINGS = [
    (MultinomialNB, reference.MultinomialNB, {}),
    (MultinomialNB, reference.MultinomialNB, {"alpha": 0.5}),
    (MultinomialNB, reference.MultinomialNB, {"alpha": 0.01, "fit_prior": False}),
    (MultinomialNB, reference.MultinomialNB, {"alpha": 1.0, "class_prior": [0.1, 0.2, 0.3, 0.4]}),
    (BernoulliNB, reference.BernoulliNB, {}),
    (BernoulliNB, reference.BernoulliNB, {"alpha": 0.5, "binarize": 1.5}),
    (BernoulliNB, reference.BernoulliNB, {"alpha": 0.01, "fit_prior": False}),
    (BernoulliNB, reference.BernoulliNB, {"alpha": 1.0, "class_prior": [0.1, 0.2, 0.3, 0.4]}),
]


@pytest.mark.parametrize("fmt", ALL_FORMATS)
@pytest.mark.parametrize("ours_class, theirs_class, params", DISCRETE_SETTINGS)
def test_discrete_models_equal_scikit_learn(ours_class, theirs_class, params, fmt):
    X, X_test = ALL_FORMATS[fmt](X_COUNTS), ALL_FORMATS[fmt](X_TEST)
    labels = np.array(["ant", "bee", "cat", "dog"])[Y_COUNTS]
    ours = ours_class(**params).fit(X, labels)
    theirs = theirs_class(**params).fit(X, labels)
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    np.testing.assert_array_equal(ours.class_count_, theirs.class_count_)
    np.testing.assert_array_equal(ours.feature_count_, theirs.feature_count_)
    for name in ("feature_log_prob_", "class_log_prior_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=0, atol=1e-8)
    for data in (X, X_test):
        np.testing.assert_allclose(ours.predict_proba(data), theirs.predict_proba(data), rtol=0, atol=1e-8)
        np.testing.assert_allclose(ours.predict_joint_log_proba(data), theirs.predict_joint_log_proba(data),
                                   rtol=1e-10, atol=1e-8)
        np.testing.assert_array_equal(ours.predict(data), theirs.predict(data))


def test_tiny_alpha_is_clipped_with_a_warning_unless_forced():
    for ours_class, theirs_class in ((MultinomialNB, reference.MultinomialNB),
                                     (BernoulliNB, reference.BernoulliNB)):
        with pytest.warns(UserWarning, match="alpha too small.*force_alpha=True"):
            ours = ours_class(alpha=0.0, force_alpha=False).fit(X_COUNTS, Y_COUNTS)
        with pytest.warns(UserWarning, match="alpha too small"):
            theirs = theirs_class(alpha=0.0, force_alpha=False).fit(X_COUNTS, Y_COUNTS)
        np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
        proba = ours.predict_proba(X_TEST)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba, theirs.predict_proba(X_TEST), atol=1e-8)


def test_smoothed_estimates_come_from_add_k(monkeypatch):
    calls, original = [], multinomial_nb.add_k

    def spy(counts, k=1.0, axis=-1, **options):
        calls.append((np.shape(counts), k, axis, options))
        return original(counts, k, axis, **options)

    monkeypatch.setattr(multinomial_nb, "add_k", spy)
    monkeypatch.setattr(bernoulli_nb, "add_k", spy)
    MultinomialNB(alpha=0.5).fit(X_COUNTS, Y_COUNTS)
    BernoulliNB(alpha=0.5).fit(X_COUNTS, Y_COUNTS)
    assert calls == [((4, 30), 0.5, 1, {"log": True}), ((2, 4, 30), 0.5, 0, {"log": True})]


# --------------------------------------------------------------------------- partial_fit


@pytest.mark.parametrize(
    "model, fmt",
    [(model, fmt) for model in (MultinomialNB(alpha=0.3), BernoulliNB(binarize=1.0)) for fmt in ("dense", "csr", "csc")]
    + [(GaussianNB(), "dense"), (GaussianNB(var_smoothing=1e-2), "dense")],  # GaussianNB: dense input only
)
def test_partial_fit_in_batches_equals_fit(model, fmt):
    if isinstance(model, GaussianNB):
        X, y = load_wine(return_X_y=True)
        order = np.random.default_rng(0).permutation(len(y))
        X, y = X[order], y[order]
    else:
        X, y = ALL_FORMATS[fmt](X_COUNTS), Y_COUNTS
    whole = type(model)(**model.get_params()).fit(X, y)
    streamed = type(model)(**model.get_params())
    # The first batch lacks class 3 (or 2): partial_fit must take the classes up front.
    first = np.flatnonzero(y != y.max())[:20]
    rest = np.setdiff1d(np.arange(len(y)), first)
    streamed.partial_fit(X[first], y[first], classes=np.unique(y))
    for batch in np.array_split(rest, 4):
        streamed.partial_fit(X[batch], y[batch])
    names = (["theta_", "var_", "class_prior_", "class_log_prior_", "class_count_"]
             if isinstance(model, GaussianNB)
             else ["class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_"])
    for name in names:
        np.testing.assert_allclose(getattr(streamed, name), getattr(whole, name), rtol=1e-10, atol=1e-12)
    if isinstance(model, GaussianNB):
        assert streamed.epsilon_ == pytest.approx(whole.epsilon_, rel=1e-12)
    np.testing.assert_allclose(streamed.predict_proba(X), whole.predict_proba(X), atol=1e-10)


def test_partial_fit_before_every_class_is_seen_predicts_finite_probabilities():
    for model in (MultinomialNB(), BernoulliNB(), GaussianNB()):
        model.partial_fit(X_COUNTS[Y_COUNTS < 2], Y_COUNTS[Y_COUNTS < 2], classes=[0, 1, 2, 3])
        proba = model.predict_proba(X_TEST)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(proba[:, 2:], 0.0)


def test_fit_forgets_earlier_partial_fits():
    model = MultinomialNB().partial_fit(X_COUNTS, Y_COUNTS, classes=[0, 1, 2, 3])
    model.fit(X_COUNTS, Y_COUNTS)
    np.testing.assert_array_equal(model.feature_count_, MultinomialNB().fit(X_COUNTS, Y_COUNTS).feature_count_)


# --------------------------------------------------------------------------- the estimator protocol

# Every check passes. One check skips itself: check_array_api_input only runs when
# SCIPY_ARRAY_API=1 is set before SciPy is imported (this test suite does not set it); the models
# are written for NumPy and SciPy sparse input, so no expected failures are listed.


@parametrize_with_checks([MultinomialNB(), MultinomialNB(alpha=0.1), BernoulliNB(), BernoulliNB(binarize=0.5),
                          GaussianNB()])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- invariants (hypothesis)


def random_sparse(rng: np.random.Generator, n: int, d: int, density: float) -> sp.csr_matrix:
    nnz = max(1, int(n * d * density))
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    return sp.csr_matrix((rng.integers(1, 5, nnz).astype(float), (rows, cols)), shape=(n, d))


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([1e-10, 0.01, 1.0, 3.0]),
       n_classes=st.integers(2, 4), model_class=st.sampled_from([MultinomialNB, BernoulliNB]))
def test_probabilities_are_distributions_with_100000_features(seed, alpha, n_classes, model_class):
    rng = np.random.default_rng(seed)
    d = 100_000
    X = random_sparse(rng, 30, d, 2e-4)
    y = np.arange(30) % n_classes
    model = model_class(alpha=alpha).fit(X, y)
    X_new = random_sparse(rng, 10, d, 1e-3)
    X_new = X_new.tolil()
    X_new[0, :50] = 1e3  # a long document: very peaked posteriors
    X_new = X_new.tocsr()
    for data in (X, X_new):
        proba = model.predict_proba(data)
        assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        assert np.all(np.isfinite(model.predict_log_proba(data)))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), model_class=st.sampled_from([MultinomialNB, BernoulliNB, GaussianNB]),
       sparse=st.booleans())
def test_permuting_features_permutes_estimates_and_keeps_predictions(seed, model_class, sparse):
    X, y = documents(n=60, d=12, n_classes=3, seed=seed % 1000)
    X = X.astype(float) + (np.random.default_rng(seed).normal(size=X.shape) if model_class is GaussianNB else 0)
    if sparse and model_class is not GaussianNB:
        X = sp.csr_matrix(X)
    permutation = np.random.default_rng(seed).permutation(X.shape[1])
    model, permuted = model_class().fit(X, y), model_class().fit(X[:, permutation], y)
    names = ["theta_", "var_"] if model_class is GaussianNB else ["feature_log_prob_", "feature_count_"]
    for name in names:
        np.testing.assert_allclose(getattr(permuted, name), getattr(model, name)[:, permutation], rtol=1e-12)
    np.testing.assert_allclose(permuted.predict_proba(X[:, permutation]), model.predict_proba(X),
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(permuted.predict(X[:, permutation]), model.predict(X))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.01, 0.5, 1.0, 2.0]),
       model_class=st.sampled_from([MultinomialNB, BernoulliNB]))
def test_duplicating_the_training_set(seed, alpha, model_class):
    # Duplicating doubles every count. The MLE (alpha = 0) is a ratio of counts, so it does not
    # change; an add-alpha estimate does, because the pseudo-counts now weigh half as much:
    # (2N + a) / (2M + a K) = (N + a/2) / (M + a K / 2). So fitting the doubled set with alpha
    # equals fitting the original with alpha / 2, exactly.
    X, y = documents(n=40, d=10, n_classes=3, seed=seed % 1000)
    X = sp.csr_matrix(X)
    doubled_X, doubled_y = sp.vstack([X, X]).tocsr(), np.concatenate([y, y])
    model = model_class(alpha=alpha).fit(X, y)
    doubled = model_class(alpha=alpha).fit(doubled_X, doubled_y)
    np.testing.assert_array_equal(doubled.feature_count_, 2 * model.feature_count_)
    np.testing.assert_array_equal(doubled.class_count_, 2 * model.class_count_)
    np.testing.assert_allclose(doubled.class_log_prior_, model.class_log_prior_, rtol=1e-12)
    half = model_class(alpha=alpha / 2).fit(X, y)
    np.testing.assert_allclose(doubled.feature_log_prob_, half.feature_log_prob_, rtol=1e-12)
    # The MLE itself (alpha = 0, force_alpha=True keeps it at 0) does not move. -inf (a word
    # never seen in a class) stays -inf.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mle, mle_doubled = (model_class(alpha=0.0).fit(data, labels)
                            for data, labels in ((X, y), (doubled_X, doubled_y)))
    assume_words = mle.feature_count_.sum(axis=1) > 0
    assert np.all(assume_words)  # every class has at least one word in documents()
    np.testing.assert_allclose(mle_doubled.feature_log_prob_, mle.feature_log_prob_, rtol=1e-12)


# --------------------------------------------------------------------------- special inputs


def test_an_empty_document_is_classified_by_the_prior_alone():
    empty = np.zeros((1, X_COUNTS.shape[1]))
    for prior in (None, [0.7, 0.1, 0.1, 0.1]):
        model = MultinomialNB(class_prior=prior).fit(X_COUNTS, Y_COUNTS)
        for data in (empty, sp.csr_matrix(empty)):
            np.testing.assert_allclose(model.predict_joint_log_proba(data)[0], model.class_log_prior_, rtol=1e-12)
            np.testing.assert_allclose(model.predict_proba(data)[0], softmax(model.class_log_prior_), rtol=1e-12)
    # Under the Bernoulli model an empty document is evidence: every word is absent.
    model = BernoulliNB().fit(X_COUNTS, Y_COUNTS)
    absent = np.log1p(-np.exp(model.feature_log_prob_)).sum(axis=1)
    np.testing.assert_allclose(model.predict_proba(sp.csr_matrix(empty))[0],
                               softmax(model.class_log_prior_ + absent), rtol=1e-10)


def test_alpha_zero_with_unseen_words_gives_no_nan():
    X = np.array([[2, 0, 0], [1, 0, 0], [0, 3, 0], [0, 1, 0]])
    y = [0, 0, 1, 1]
    for model_class in (MultinomialNB, BernoulliNB):
        model = model_class(alpha=0.0, force_alpha=True).fit(X, y)
        assert np.isneginf(model.feature_log_prob_).any()
        for data in (np.array([[1, 0, 0], [0, 2, 0]]), sp.csr_matrix([[1, 0, 0], [0, 2, 0]])):
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # seen words only: no warning
                proba = model.predict_proba(data)
            np.testing.assert_array_equal(proba, [[1.0, 0.0], [0.0, 1.0]])
        # Word 2 was never seen, and a document with words of both classes is impossible under
        # each: probability zero everywhere, so the prior decides, with a warning.
        for data in (np.array([[0, 0, 1], [1, 1, 0]]), sp.csr_matrix([[0, 0, 1], [1, 1, 0]])):
            with pytest.warns(RuntimeWarning, match="probability zero under every class.*alpha > 0"):
                proba = model.predict_proba(data)
            np.testing.assert_allclose(proba, [[0.5, 0.5], [0.5, 0.5]])


def test_sparse_input_is_never_densified():
    X, X_test = NoDensify(sp.csr_matrix(X_COUNTS)), NoDensify(sp.csr_matrix(X_TEST))
    with pytest.raises(AssertionError, match="densified"):
        X.toarray()
    for model in (MultinomialNB(), BernoulliNB(), BernoulliNB(binarize=2.0), MultinomialNB(alpha=0.0)):
        model.fit(X, Y_COUNTS).partial_fit(X, Y_COUNTS)
        # alpha=0: X_TEST holds words never seen in any class; the training documents do not.
        data = X if model.alpha == 0 else X_test
        assert np.all(np.isfinite(model.predict_proba(data)))
        model.predict(data)
        model.predict_log_proba(data)
    with pytest.warns(RuntimeWarning, match="probability zero under every class"):
        assert np.all(np.isfinite(MultinomialNB(alpha=0.0).fit(X, Y_COUNTS).predict_proba(X_test)))


# --------------------------------------------------------------------------- bad input

FITTED_M = MultinomialNB().fit(X_COUNTS, Y_COUNTS)
FITTED_B = BernoulliNB().fit(X_COUNTS, Y_COUNTS)
FITTED_G = GaussianNB().fit(*load_iris(return_X_y=True))
NEGATIVE = X_COUNTS - 1
WITH_NAN = np.where(np.arange(X_COUNTS.size).reshape(X_COUNTS.shape) == 7, np.nan, X_COUNTS)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: MultinomialNB().fit(NEGATIVE, Y_COUNTS), "Negative values in data passed to MultinomialNB"
                                                           ".*counts must be >= 0"),
        (lambda: MultinomialNB().fit(sp.csr_matrix(NEGATIVE), Y_COUNTS), "counts must be >= 0"),
        (lambda: FITTED_M.partial_fit(NEGATIVE, Y_COUNTS), "counts must be >= 0"),
        (lambda: MultinomialNB().fit(WITH_NAN, Y_COUNTS), "contains NaN or infinite values.*impute"),
        (lambda: BernoulliNB().fit(sp.csr_matrix(WITH_NAN), Y_COUNTS), "NaN or infinite.*impute"),
        (lambda: FITTED_M.predict_proba(np.full((1, 30), np.inf)), "MultinomialNB.predict contains NaN or inf"),
        (lambda: FITTED_G.predict([[1.0, np.nan, 2.0, 3.0]]), "GaussianNB.predict contains NaN"),
        (lambda: GaussianNB().fit(np.where(IRIS_X > 7, np.inf, IRIS_X), IRIS_Y), "NaN or infinite"),
        (lambda: MultinomialNB().fit(X_COUNTS, np.zeros(150)), "at least two classes.*only one class \\(0.0\\)"),
        (lambda: GaussianNB().fit(IRIS_X, ["a"] * 150), "at least two classes.*'a'.*Add examples"),
        (lambda: BernoulliNB().partial_fit(X_COUNTS, Y_COUNTS * 0, classes=[0]), "at least two classes"),
        (lambda: FITTED_M.predict(X_COUNTS[:, :5]), "X has 5 features, but MultinomialNB is expecting 30"
                                                    ".*same columns"),
        (lambda: FITTED_B.predict_proba(sp.csr_matrix(X_COUNTS[:, :5])), "expecting 30 features"),
        (lambda: FITTED_G.predict_proba(IRIS_X[:, :3]), "expecting 4 features"),
        (lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS[:, :5], Y_COUNTS),
         "X has 5 features, but MultinomialNB is expecting 30"),
        (lambda: GaussianNB().fit(IRIS_X, IRIS_Y).partial_fit(IRIS_X[:, :3], IRIS_Y), "expecting 4 features"),
        (lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS[:2], [0, 9]),
         "label\\(s\\) \\[9\\] that are not among the classes \\[0, 1, 2, 3\\].*classes="),
        (lambda: GaussianNB().partial_fit(IRIS_X, IRIS_Y, classes=[0, 1]), "\\[2\\] that are not among"),
        (lambda: MultinomialNB().partial_fit(X_COUNTS, Y_COUNTS), "classes must be passed on the first call"),
        (lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS, Y_COUNTS, classes=[0, 1]),
         "differs from classes_"),
        (lambda: MultinomialNB(alpha=-1.0).fit(X_COUNTS, Y_COUNTS), "alpha .* must be a finite number >= 0"),
        (lambda: BernoulliNB(alpha=-0.5).fit(X_COUNTS, Y_COUNTS), "alpha .* >= 0; got -0.5"),
        (lambda: MultinomialNB(alpha="1").fit(X_COUNTS, Y_COUNTS), "alpha .* must be a finite number"),
        (lambda: MultinomialNB(alpha=np.ones(29)).fit(X_COUNTS, Y_COUNTS), "one per feature.*for X with 30 features"),
        (lambda: MultinomialNB(class_prior=[0.5, 0.5]).fit(X_COUNTS, Y_COUNTS), "class_prior has shape \\(2,\\)"),
        (lambda: MultinomialNB(class_prior=[0.5, 0.5, 0.5, 0.5]).fit(X_COUNTS, Y_COUNTS), "sum to one"),
        (lambda: GaussianNB(priors=[1.0, 0.0]).fit(IRIS_X, IRIS_Y), "priors has shape \\(2,\\)"),
        (lambda: GaussianNB(priors=[-0.5, 1.0, 0.5]).fit(IRIS_X, IRIS_Y), "non-negative"),
        (lambda: GaussianNB(var_smoothing=-1).fit(IRIS_X, IRIS_Y), "var_smoothing must be a finite number >= 0"),
        (lambda: GaussianNB(var_smoothing=0.0).fit(np.ones((4, 2)), [0, 0, 1, 1]), "variance is 0.*var_smoothing"),
        (lambda: BernoulliNB(binarize=None).fit(X_COUNTS, Y_COUNTS), "binarize=None needs X of 0/1.*binarize=0.0"),
        (lambda: BernoulliNB(binarize=-1.0).fit(sp.csr_matrix(X_COUNTS), Y_COUNTS), "dense matrix.*binarize >= 0"),
        (lambda: BernoulliNB(binarize="yes").fit(X_COUNTS, Y_COUNTS), "binarize must be a number or None"),
        (lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS[:-1]), "inconsistent numbers of samples"),
        (lambda: MultinomialNB().fit(X_COUNTS, None), "requires y to be passed"),
        (lambda: MultinomialNB().fit(X_COUNTS[:2], np.array(["a", 1], dtype=object)), "same type"),
        (lambda: FITTED_M.sample(3, y=[0, 1]), "y has 2 labels but n_samples=3"),
        (lambda: FITTED_M.sample(2, y=[0, 7]), "\\[7\\] that are not among the classes"),
        (lambda: FITTED_M.sample(2, n_words=-1), "n_words must hold integers >= 0"),
        (lambda: FITTED_B.sample(-1), "n_samples must be an integer >= 0"),
        (lambda: FITTED_G.sample(2.5), "n_samples must be an integer >= 0"),
        (lambda: FITTED_G.predict_proba([[1e300, -1e300, 1e300, 1e300]]), "overflows.*rescale"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_predict_and_sample_before_fit():
    for model in (MultinomialNB(), BernoulliNB(), GaussianNB()):
        with pytest.raises(NotFittedError):
            model.predict(X_COUNTS)
        with pytest.raises(NotFittedError):
            model.sample(3)
