"""Tests of the weighting that lecturekit.naive_bayes.base gives every naive Bayes model: sample_weight in
fit and partial_fit, and alpha as an array of one pseudo-count per feature.

Each is checked against scikit-learn (fitted attributes and probabilities to 1e-8, dense, CSR and
CSC), against its meaning (an integer weight repeats a row, a zero weight drops it, batches
equal one fit, a constant alpha array equals the number), and for bad input (a ValueError that
names the problem and the fix). What the models share otherwise is in test_base.py.
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from sklearn import naive_bayes as reference

from lecturekit.estimation import add_k
from lecturekit.naive_bayes import BernoulliNB, GaussianNB, MultinomialNB

from . import nb_data
from .nb_data import SCIPY_FORMATS

FORMATS = SCIPY_FORMATS
DISCRETE_ATTRIBUTES = ("class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_")
GAUSSIAN_ATTRIBUTES = ("class_count_", "theta_", "var_", "class_prior_")


def counts(n: int = 120, d: int = 25, n_classes: int = 3, seed: int = 0):
    """The word counts of nb_data.py, smaller and without empty rows."""
    return nb_data.counts(n, d, n_classes, seed, empty=0)


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
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=rtol, atol=atol, err_msg=name)
    np.testing.assert_allclose(ours.predict_proba(X_test), theirs.predict_proba(X_test), rtol=1e-8, atol=1e-10)


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
@given(
    seed=st.integers(0, 2**32 - 1),
    fmt=st.sampled_from(list(FORMATS)),
    model=st.sampled_from([MultinomialNB(alpha=0.5), BernoulliNB(binarize=1.0)]),
)
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
    np.testing.assert_allclose(
        weighted.var_ - weighted.epsilon_, repeated.var_ - repeated.epsilon_, rtol=1e-9, atol=1e-12
    )


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_batches=st.integers(2, 6),
    model=st.sampled_from([MultinomialNB(alpha=0.2), BernoulliNB(), GaussianNB()]),
    sparse=st.booleans(),
)
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
@given(
    seed=st.integers(0, 2**32 - 1),
    model=st.sampled_from([MultinomialNB(alpha=0.7), BernoulliNB(), GaussianNB(var_smoothing=0.0)]),
)
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
    with pytest.raises(
        ValueError,
        match=f"sample_weight passed to {type(model).__name__}.{method} {message}.*Give one finite weight >= 0 per row",
    ):
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
@given(
    seed=st.integers(0, 2**32 - 1),
    value=st.sampled_from([0.01, 0.5, 1.0, 4.0]),
    model_class=st.sampled_from([MultinomialNB, BernoulliNB]),
    d=st.sampled_from([8, 200]),
)
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
        np.testing.assert_allclose(add_k(counts_, k, axis=1, log=True), np.log(add_k(counts_, k, axis=1)), rtol=1e-14)
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
        (
            np.r_[np.ones(3), -1.0, np.ones(21)],
            "one per feature\\) and must be a finite number >= 0; got -1.0 at index 3 of the array",
        ),
        (np.r_[np.nan, np.ones(24)], "must be a finite number >= 0.*got nan at index 0"),
        (np.r_[np.inf, np.ones(24)], "must be a finite number >= 0.*got inf at index 0"),
        (-0.5, "must be a finite number >= 0.*got -0.5\\."),
        (["a"] * 25, "must be a finite number >= 0"),
        ("1", "must be a finite number >= 0"),
    ],
)
def test_bad_alpha_gets_a_clear_error(model_class, alpha, message):
    X, y = counts()
    with pytest.raises(
        ValueError,
        match=f"alpha is the pseudo-count.*{message}.*one pseudo-count >= 0 "
        f"per feature \\(an array of length n_features = 25\\)",
    ):
        model_class(alpha=alpha).fit(X, y)
