"""Tests of what lecturekit.naive_bayes.base gives the naive Bayes models alike: agreement with
scikit-learn, partial_fit (streaming), scikit-learn's estimator checks (on every model of the
package), invariants (hypothesis), special inputs and bad input.

Each model is checked against scikit-learn (fitted attributes and probabilities to 1e-8, dense,
CSR and CSC), against what must hold whatever the data (probabilities are distributions, permuting
features permutes the estimates, batches equal one fit), and for bad input (a ValueError that
names the problem and the fix). sample_weight and alpha arrays are in test_base_weights.py.
"""

from __future__ import annotations

import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from scipy.special import softmax
from sklearn import naive_bayes as reference
from sklearn.datasets import load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.naive_bayes import (
    BernoulliNB,
    CategoricalNB,
    ComplementNB,
    GaussianNB,
    MultinomialNB,
    bernoulli,
    multinomial,
)

from .nb_data import FORMATS as ALL_FORMATS
from .nb_data import IRIS_X, IRIS_Y, MODELS, X_COUNTS, X_TEST, Y_COUNTS, NoDensify, bad_inputs
from .nb_data import counts as documents

# --------------------------------------------------------------------------- every model: scikit-learn agreement
#
# On the data of nb_data.py (its counts imported as documents and its FORMATS, which has csr_array
# too, as ALL_FORMATS, the names test_base_weights.py gives its own).

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
        np.testing.assert_allclose(
            ours.predict_joint_log_proba(data), theirs.predict_joint_log_proba(data), rtol=1e-10, atol=1e-8
        )
        np.testing.assert_array_equal(ours.predict(data), theirs.predict(data))


def test_tiny_alpha_is_clipped_with_a_warning_unless_forced():
    for ours_class, theirs_class in ((MultinomialNB, reference.MultinomialNB), (BernoulliNB, reference.BernoulliNB)):
        with pytest.warns(UserWarning, match="alpha too small.*force_alpha=True"):
            ours = ours_class(alpha=0.0, force_alpha=False).fit(X_COUNTS, Y_COUNTS)
        with pytest.warns(UserWarning, match="alpha too small"):
            theirs = theirs_class(alpha=0.0, force_alpha=False).fit(X_COUNTS, Y_COUNTS)
        np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=1e-12)
        proba = ours.predict_proba(X_TEST)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba, theirs.predict_proba(X_TEST), atol=1e-8)


def test_smoothed_estimates_come_from_add_k(monkeypatch):
    calls, original = [], multinomial.add_k

    def spy(counts, k=1.0, axis=-1, **options):
        calls.append((np.shape(counts), k, axis, options))
        return original(counts, k, axis, **options)

    monkeypatch.setattr(multinomial, "add_k", spy)
    monkeypatch.setattr(bernoulli, "add_k", spy)
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
    names = (
        ["theta_", "var_", "class_prior_", "class_log_prior_", "class_count_"]
        if isinstance(model, GaussianNB)
        else ["class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_"]
    )
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

# Every model of lecturekit.naive_bayes.__all__ (nb_data.MODELS) with its defaults, and some with
# other settings. One check skips itself: check_array_api_input only runs when SCIPY_ARRAY_API=1
# is set before SciPy is imported (this test suite does not set it); the models are written for
# NumPy and SciPy sparse input. A model that fails a check on purpose lists it here, with why.
#
# CategoricalNB: two checks fit on uniform random floats in [0, 1) whatever the estimator's tags
# say (the other checks give a categorical estimator rounded integers). scikit-learn's
# CategoricalNB truncates those floats to category 0; this one refuses non-integer categories
# with a ValueError.
EXPECTED_FAILURES = {
    "CategoricalNB": {
        "check_sample_weight_equivalence_on_dense_data": "fits on random floats: refused as non-integer categories",
        "check_classifiers_one_label_sample_weights": "fits on random floats: refused as non-integer categories",
    },
}


@parametrize_with_checks(
    [model() for model in MODELS]
    + [
        MultinomialNB(alpha=0.1),
        BernoulliNB(binarize=0.5),
        ComplementNB(alpha=0.1, norm=True),
        CategoricalNB(alpha=0.1, min_categories=3),
    ],
    expected_failed_checks=lambda estimator: EXPECTED_FAILURES.get(type(estimator).__name__, {}),
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_the_expected_failures_fail_for_the_stated_reason_only():
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="not a category code"):
        CategoricalNB().fit(rng.random((10, 3)), np.arange(10) % 2)
    rounded = np.floor(rng.random((10, 3)) * 3)  # the same data as categories: accepted
    CategoricalNB().fit(rounded, np.arange(10) % 2, sample_weight=np.arange(10.0))
    assert set(EXPECTED_FAILURES) <= {model.__name__ for model in MODELS}


# --------------------------------------------------------------------------- invariants (hypothesis)


def random_sparse(rng: np.random.Generator, n: int, d: int, density: float) -> sp.csr_matrix:
    nnz = max(1, int(n * d * density))
    rows, cols = rng.integers(0, n, nnz), rng.integers(0, d, nnz)
    return sp.csr_matrix((rng.integers(1, 5, nnz).astype(float), (rows, cols)), shape=(n, d))


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    alpha=st.sampled_from([1e-10, 0.01, 1.0, 3.0]),
    n_classes=st.integers(2, 4),
    model_class=st.sampled_from([MultinomialNB, BernoulliNB]),
)
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
@given(
    seed=st.integers(0, 2**32 - 1),
    model_class=st.sampled_from([MultinomialNB, BernoulliNB, GaussianNB]),
    sparse=st.booleans(),
)
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
    np.testing.assert_allclose(permuted.predict_proba(X[:, permutation]), model.predict_proba(X), rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(permuted.predict(X[:, permutation]), model.predict(X))


@settings(max_examples=25, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    alpha=st.sampled_from([0.01, 0.5, 1.0, 2.0]),
    model_class=st.sampled_from([MultinomialNB, BernoulliNB]),
)
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
        mle, mle_doubled = (
            model_class(alpha=0.0).fit(data, labels) for data, labels in ((X, y), (doubled_X, doubled_y))
        )
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
    np.testing.assert_allclose(
        model.predict_proba(sp.csr_matrix(empty))[0], softmax(model.class_log_prior_ + absent), rtol=1e-10
    )


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
NEGATIVE, WITH_NAN = bad_inputs(X_COUNTS)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: MultinomialNB().fit(NEGATIVE, Y_COUNTS),
            "Negative values in data passed to MultinomialNB.*counts must be >= 0",
        ),
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
        (
            lambda: FITTED_M.predict(X_COUNTS[:, :5]),
            "X has 5 features, but MultinomialNB is expecting 30.*same columns",
        ),
        (lambda: FITTED_B.predict_proba(sp.csr_matrix(X_COUNTS[:, :5])), "expecting 30 features"),
        (lambda: FITTED_G.predict_proba(IRIS_X[:, :3]), "expecting 4 features"),
        (
            lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS[:, :5], Y_COUNTS),
            "X has 5 features, but MultinomialNB is expecting 30",
        ),
        (lambda: GaussianNB().fit(IRIS_X, IRIS_Y).partial_fit(IRIS_X[:, :3], IRIS_Y), "expecting 4 features"),
        (
            lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS[:2], [0, 9]),
            "label\\(s\\) \\[9\\] that are not among the classes \\[0, 1, 2, 3\\].*classes=",
        ),
        (lambda: GaussianNB().partial_fit(IRIS_X, IRIS_Y, classes=[0, 1]), "\\[2\\] that are not among"),
        (lambda: MultinomialNB().partial_fit(X_COUNTS, Y_COUNTS), "classes must be passed on the first call"),
        (
            lambda: MultinomialNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS, Y_COUNTS, classes=[0, 1]),
            "differs from classes_",
        ),
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
