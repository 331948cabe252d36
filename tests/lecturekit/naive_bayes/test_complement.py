"""Tests of lecturekit.naive_bayes.complement: scikit-learn agreement, streaming, weights, invariants, bad input.

scikit-learn's estimator checks run on ComplementNB with the other models, in test_base.py.
"""

from __future__ import annotations

import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from sklearn import naive_bayes as reference
from sklearn.exceptions import NotFittedError

from lecturekit.naive_bayes import ComplementNB as ReExported
from lecturekit.naive_bayes import MultinomialNB
from lecturekit.naive_bayes.complement import ComplementNB

from . import nb_data
from .nb_agreement import assert_keeps_column_names, clear_winner
from .nb_data import FORMATS, NoDensify, bad_inputs


def counts(n: int = 150, d: int = 30, n_classes: int = 4, seed: int = 0, skew: bool = False):
    """The word counts of nb_data.py; ``skew=True``: class c about 2**c times as frequent as class 0."""
    return nb_data.counts(
        n, d, n_classes, seed, class_weights=2.0 ** np.arange(n_classes) if skew else np.ones(n_classes)
    )


X_COUNTS, Y_COUNTS = counts(skew=True)
X_TEST, _ = counts(n=40, seed=1)
LABELS = np.array(["ant", "bee", "cat", "dog"])
ALPHAS = np.linspace(0.05, 2.0, 30)  # one pseudo-count per feature

SETTINGS = [
    {},
    {"alpha": 0.5},
    {"alpha": 0.01, "fit_prior": False},
    {"alpha": 1.0, "class_prior": [0.1, 0.2, 0.3, 0.4]},
    {"norm": True},
    {"alpha": 0.05, "norm": True},
    {"alpha": ALPHAS},
    {"alpha": ALPHAS, "norm": True},
]


def assert_same_model(ours, theirs, data_sets, atol=1e-8):
    """Every fitted attribute and every prediction of ours equals scikit-learn's to ``atol``."""
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    assert ours.n_features_in_ == theirs.n_features_in_
    for name in ("class_count_", "feature_count_", "feature_all_", "feature_log_prob_", "class_log_prior_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-12, atol=atol, err_msg=name)
    for X, X_theirs in data_sets:
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X_theirs), rtol=0, atol=atol)
        np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X_theirs), rtol=1e-10, atol=atol)
        np.testing.assert_allclose(
            ours.predict_joint_log_proba(X), theirs.predict_joint_log_proba(X_theirs), rtol=1e-10, atol=atol
        )
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X_theirs))


# --------------------------------------------------------------------------- agreement with scikit-learn


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("params", SETTINGS, ids=range(len(SETTINGS)))
def test_equals_scikit_learn(params, fmt):
    X, X_test = FORMATS[fmt](X_COUNTS), FORMATS[fmt](X_TEST)
    labels = LABELS[Y_COUNTS]
    ours, theirs = ComplementNB(**params).fit(X, labels), reference.ComplementNB(**params).fit(X, labels)
    assert_same_model(ours, theirs, [(X, X), (X_test, X_test)])
    assert ours.score(X, labels) == theirs.score(X, labels)


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("params", [{}, {"norm": True, "alpha": 0.3}, {"alpha": ALPHAS}], ids=range(3))
def test_sample_weight_equals_scikit_learn(params, fmt):
    rng = np.random.default_rng(3)
    weights = rng.uniform(0, 3, len(Y_COUNTS))
    weights[:10] = 0.0  # rows that do not count at all
    X = FORMATS[fmt](X_COUNTS)
    ours = ComplementNB(**params).fit(X, Y_COUNTS, sample_weight=weights)
    theirs = reference.ComplementNB(**params).fit(X, Y_COUNTS, sample_weight=weights)
    assert_same_model(ours, theirs, [(X, X), (FORMATS[fmt](X_TEST), X_TEST)])
    assert ours.score(X, Y_COUNTS, sample_weight=weights) == pytest.approx(
        theirs.score(X, Y_COUNTS, sample_weight=weights), abs=1e-12
    )


def test_integer_weights_equal_repeated_rows():
    repeats = np.random.default_rng(4).integers(0, 4, len(Y_COUNTS))
    repeats[:4] = 1  # every class keeps a row
    weighted = ComplementNB(alpha=0.3).fit(sp.csr_matrix(X_COUNTS), Y_COUNTS, sample_weight=repeats)
    repeated = ComplementNB(alpha=0.3).fit(np.repeat(X_COUNTS, repeats, axis=0), np.repeat(Y_COUNTS, repeats))
    for name in ("class_count_", "feature_count_", "feature_all_", "feature_log_prob_", "class_log_prior_"):
        np.testing.assert_allclose(getattr(weighted, name), getattr(repeated, name), rtol=1e-12)


def test_tiny_alpha_is_clipped_with_a_warning_unless_forced():
    alphas = ALPHAS.copy()
    alphas[3] = 0.0
    for alpha in (1e-12, alphas):
        with pytest.warns(UserWarning, match="alpha too small.*force_alpha=True"):
            ours = ComplementNB(alpha=alpha, force_alpha=False).fit(X_COUNTS, Y_COUNTS)
        with pytest.warns(UserWarning, match="alpha too small"):
            theirs = reference.ComplementNB(alpha=alpha, force_alpha=False).fit(X_COUNTS, Y_COUNTS)
        assert_same_model(ours, theirs, [(X_TEST, X_TEST)])


def test_a_dataframe_keeps_its_column_names():
    assert_keeps_column_names(ComplementNB, reference.ComplementNB, X_COUNTS, Y_COUNTS)


def test_the_package_gives_the_class():
    assert ReExported is ComplementNB


def test_the_weights_are_those_of_the_complement():
    # Word j of class c: w_cj = -log((sum of word j outside c + alpha) / (all words outside c + alpha d)).
    X = np.array([[3, 0, 1], [2, 0, 0], [0, 2, 1], [0, 3, 0], [1, 2, 0]])
    model = ComplementNB(alpha=0.5).fit(X, [0, 0, 1, 1, 2])
    outside = np.array([[1, 7, 1], [6, 2, 1], [5, 5, 2]]) + 0.5
    np.testing.assert_allclose(
        model.feature_log_prob_, -np.log(outside / outside.sum(axis=1, keepdims=True)), rtol=1e-14
    )
    normed = ComplementNB(alpha=0.5, norm=True).fit(X, [0, 0, 1, 1, 2]).feature_log_prob_
    np.testing.assert_allclose(
        normed, model.feature_log_prob_ / model.feature_log_prob_.sum(axis=1, keepdims=True), rtol=1e-14
    )
    np.testing.assert_allclose(normed.sum(axis=1), 1.0, rtol=1e-14)


# --------------------------------------------------------------------------- partial_fit


@pytest.mark.parametrize("fmt", ["dense", "csr", "csc"])
@pytest.mark.parametrize("params", [{"alpha": 0.3}, {"norm": True}, {"alpha": ALPHAS}], ids=range(3))
def test_partial_fit_in_batches_equals_fit(params, fmt):
    X = FORMATS[fmt](X_COUNTS)
    weights = np.random.default_rng(5).uniform(0.5, 2.0, len(Y_COUNTS))
    whole = ComplementNB(**params).fit(X, Y_COUNTS, sample_weight=weights)
    streamed, theirs = ComplementNB(**params), reference.ComplementNB(**params)
    first = np.flatnonzero(Y_COUNTS != 3)[:20]  # the first batch lacks class 3
    batches = [first] + np.array_split(np.setdiff1d(np.arange(len(Y_COUNTS)), first), 4)
    for i, batch in enumerate(batches):
        classes = np.arange(4) if i == 0 else None
        streamed.partial_fit(X[batch], Y_COUNTS[batch], classes=classes, sample_weight=weights[batch])
        theirs.partial_fit(X_COUNTS[batch], Y_COUNTS[batch], classes=classes, sample_weight=weights[batch])
        assert_same_model(streamed, theirs, [(X_TEST, X_TEST)])  # after every batch
    for name in ("class_count_", "feature_count_", "feature_all_", "feature_log_prob_", "class_log_prior_"):
        np.testing.assert_allclose(getattr(streamed, name), getattr(whole, name), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(streamed.predict_proba(X), whole.predict_proba(X), atol=1e-10)


def test_fit_forgets_earlier_partial_fits():
    model = ComplementNB().partial_fit(X_COUNTS, Y_COUNTS, classes=[0, 1, 2, 3])
    model.fit(X_TEST, np.arange(40) % 4)
    np.testing.assert_array_equal(model.feature_count_, ComplementNB().fit(X_TEST, np.arange(40) % 4).feature_count_)


# --------------------------------------------------------------------------- invariants (hypothesis)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    alpha=st.sampled_from([1e-10, 0.01, 1.0, 3.0]),
    n_classes=st.integers(2, 5),
    norm=st.booleans(),
    sparse=st.booleans(),
)
def test_probabilities_are_distributions(seed, alpha, n_classes, norm, sparse):
    X, y = counts(n=50, d=200, n_classes=n_classes, seed=seed % 1000, skew=True)
    X_new = np.random.default_rng(seed).poisson(0.5, (10, 200))
    X_new[0, :20] = 1000  # a long document: very peaked scores
    convert = sp.csr_matrix if sparse else np.asarray
    model = ComplementNB(alpha=alpha, norm=norm).fit(convert(X), y)
    for data in (convert(X), convert(X_new)):
        proba = model.predict_proba(data)
        assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(np.exp(model.predict_log_proba(data)), proba, rtol=1e-9, atol=1e-300)
        np.testing.assert_array_equal(model.predict(data), model.classes_[proba.argmax(axis=1)])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), norm=st.booleans())
def test_renaming_the_classes_permutes_the_columns(seed, norm):
    # Labels renamed so that their sorted order changes: every per-class quantity is permuted
    # the same way, and the predicted labels are the renamed ones.
    X, y = counts(n=60, d=15, n_classes=4, seed=seed % 1000, skew=True)
    rng = np.random.default_rng(seed)
    names = rng.permutation(np.array(["w", "x", "y", "z"]))  # class c is called names[c]
    model, renamed = ComplementNB(norm=norm).fit(X, y), ComplementNB(norm=norm).fit(X, names[y])
    order = np.argsort(names)  # renamed.classes_[k] = names[order[k]]: original class order[k]
    np.testing.assert_array_equal(renamed.classes_, names[order])
    for name in ("class_count_", "feature_count_", "feature_log_prob_", "class_log_prior_"):
        np.testing.assert_allclose(getattr(renamed, name), getattr(model, name)[order], rtol=1e-12)
    np.testing.assert_allclose(renamed.predict_proba(X), model.predict_proba(X)[:, order], rtol=1e-10, atol=1e-15)
    # Rows with a tie (empty documents, at least rows 0-2) go to the first of the tied labels
    # in sorted order, which the renaming changes; every other row keeps its class.
    clear = clear_winner(model.predict_proba(X))
    assert not clear[:3].any() and clear.sum() > 30
    np.testing.assert_array_equal(renamed.predict(X[clear]), names[model.predict(X[clear])])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), sparse=st.booleans())
def test_permuting_features_permutes_weights_and_keeps_predictions(seed, sparse):
    X, y = counts(n=60, d=12, n_classes=3, seed=seed % 1000)
    X = sp.csr_matrix(X) if sparse else X
    permutation = np.random.default_rng(seed).permutation(12)
    model, permuted = ComplementNB().fit(X, y), ComplementNB().fit(X[:, permutation], y)
    np.testing.assert_allclose(permuted.feature_log_prob_, model.feature_log_prob_[:, permutation], rtol=1e-12)
    np.testing.assert_allclose(permuted.predict_proba(X[:, permutation]), model.predict_proba(X), rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.01, 0.5, 1.0, 2.0]))
def test_with_two_classes_it_is_multinomial_nb_with_a_uniform_prior(seed, alpha):
    # With two classes the complement of one class is the other: w_0j = -log theta_1j, and the
    # softmax of (-x.log theta_1, -x.log theta_0) is that of (x.log theta_0, x.log theta_1).
    X, y = counts(n=40, d=20, n_classes=2, seed=seed % 1000, skew=True)
    complement = ComplementNB(alpha=alpha).fit(X, y)
    multinomial = MultinomialNB(alpha=alpha, fit_prior=False).fit(X, y)
    np.testing.assert_allclose(complement.feature_log_prob_, -multinomial.feature_log_prob_[::-1], rtol=1e-12)
    X_new = np.random.default_rng(seed).poisson(1.0, (15, 20))
    np.testing.assert_allclose(complement.predict_proba(X_new), multinomial.predict_proba(X_new), rtol=1e-9, atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.01, 0.5, 2.0]), norm=st.booleans())
def test_doubling_the_weights_equals_halving_alpha(seed, alpha, norm):
    # (2 N~ + a) / (2 S + a d) = (N~ + a/2) / (S + a d / 2): the complement estimate with doubled
    # counts is that with half the pseudo-count; duplicating the rows doubles the counts as well.
    X, y = counts(n=40, d=10, n_classes=3, seed=seed % 1000)
    doubled = ComplementNB(alpha=alpha, norm=norm).fit(X, y, sample_weight=np.full(40, 2.0))
    duplicated = ComplementNB(alpha=alpha, norm=norm).fit(np.vstack([X, X]), np.concatenate([y, y]))
    half = ComplementNB(alpha=alpha / 2, norm=norm).fit(X, y)
    np.testing.assert_allclose(doubled.feature_count_, 2 * half.feature_count_, rtol=1e-12)
    for other in (duplicated, half):
        np.testing.assert_allclose(doubled.feature_log_prob_, other.feature_log_prob_, rtol=1e-12)
        np.testing.assert_allclose(doubled.class_log_prior_, other.class_log_prior_, rtol=1e-12)


# --------------------------------------------------------------------------- special inputs


def test_an_empty_document_is_a_tie():
    # No words, no evidence: every score is 0 (the prior is not used), so the classes tie.
    model = ComplementNB(class_prior=[0.7, 0.1, 0.1, 0.1]).fit(X_COUNTS, Y_COUNTS)
    for data in (np.zeros((1, 30)), sp.csr_matrix((1, 30))):
        np.testing.assert_array_equal(model.predict_joint_log_proba(data), 0.0)
        np.testing.assert_allclose(model.predict_proba(data), 0.25, rtol=1e-15)


def test_alpha_zero_follows_the_limit_of_small_alpha_without_nan():
    # Word 0 only in class 0, words 1 and 2 only in class 1: with alpha = 0 their complement
    # probability is 0 and their weight infinite. scikit-learn gives NaN here; we give the limit.
    X = np.array([[2, 0, 0, 1], [1, 0, 0, 1], [0, 3, 0, 1], [0, 1, 1, 1]])
    y = [0, 0, 1, 1]
    X_new = np.array([[1, 0, 0, 0], [0, 1, 0, 5], [1, 1, 0, 0], [2, 1, 0, 0], [1, 1, 1, 0], [0, 0, 0, 3], [0, 0, 0, 0]])
    for norm in (False, True):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exact = ComplementNB(alpha=0.0, norm=norm).fit(X, y)
            proba = {fmt: exact.predict_proba(FORMATS[fmt](X_new)) for fmt in ("dense", "csr")}
        np.testing.assert_array_equal(proba["dense"], proba["csr"])
        assert np.all(np.isfinite(proba["dense"]))
        np.testing.assert_allclose(proba["dense"].sum(axis=1), 1.0)
        tiny = ComplementNB(alpha=1e-30, norm=norm).fit(X, y)
        np.testing.assert_array_equal(exact.predict(X_new), tiny.predict(X_new))
        if not norm:
            assert np.isposinf(exact.feature_log_prob_).sum() == 3
            # the rows with infinite evidence for one class only are certain
            np.testing.assert_array_equal(proba["dense"][[0, 1, 3, 4]], [[1, 0], [0, 1], [1, 0], [0, 1]])
            np.testing.assert_allclose(
                proba["dense"][[0, 1, 3, 4]], tiny.predict_proba(X_new)[[0, 1, 3, 4]], atol=1e-12
            )
        else:
            np.testing.assert_allclose(exact.feature_log_prob_, tiny.feature_log_prob_, atol=0.05)
            np.testing.assert_allclose(proba["dense"], tiny.predict_proba(X_new), atol=0.05)


def test_alpha_zero_with_no_word_outside_a_class_takes_the_uniform_limit():
    # Class 1 has words, classes 0 and 2 none: class 0's complement holds words only from
    # class 1 and class 1's complement is empty, whose alpha -> 0 limit is uniform.
    X = np.array([[0, 0, 0], [2, 1, 0], [0, 0, 0]])
    model = ComplementNB(alpha=0.0).fit(X, [0, 1, 2])
    np.testing.assert_allclose(model.feature_log_prob_[1], np.log(3), rtol=1e-15)
    tiny = ComplementNB(alpha=1e-12).fit(X, [0, 1, 2])  # (2 + 1e-12) - 2 keeps 3 or 4 digits of 1e-12
    np.testing.assert_allclose(tiny.feature_log_prob_[1], np.log(3), rtol=1e-3)
    assert np.all(np.isfinite(model.predict_proba([[1, 1, 1], [0, 0, 2]])))


def test_one_feature_carries_no_evidence():
    # With one word every complement puts probability 1 on it: all weights are 0 (with norm=True
    # scikit-learn divides 0 by 0 and returns NaN), and the classes tie.
    X, y = np.array([[1], [4], [2], [0]]), [0, 0, 1, 1]
    for norm in (False, True):
        model = ComplementNB(norm=norm).fit(X, y)
        np.testing.assert_array_equal(model.feature_log_prob_, 0.0)
        np.testing.assert_array_equal(model.predict_proba([[3], [0]]), 0.5)


def test_sparse_input_is_never_densified():
    X, X_test = NoDensify(sp.csr_matrix(X_COUNTS)), NoDensify(sp.csr_matrix(X_TEST))
    with pytest.raises(AssertionError, match="densified"):
        X.toarray()
    for model in (ComplementNB(), ComplementNB(norm=True, alpha=ALPHAS), ComplementNB(alpha=0.0)):
        model.fit(X, Y_COUNTS, sample_weight=np.ones(150)).partial_fit(X, Y_COUNTS)
        for data in (X, X_test):
            assert np.all(np.isfinite(model.predict_proba(data)))
            model.predict(data)
            model.predict_log_proba(data)


# --------------------------------------------------------------------------- bad input

FITTED = ComplementNB().fit(X_COUNTS, Y_COUNTS)
NEGATIVE, WITH_NAN = bad_inputs(X_COUNTS)


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: ComplementNB().fit(NEGATIVE, Y_COUNTS),
            "Negative values in data passed to ComplementNB.*counts must be >= 0.*CountVectorizer",
        ),
        (lambda: ComplementNB().fit(sp.csr_matrix(NEGATIVE), Y_COUNTS), "counts must be >= 0"),
        (lambda: FITTED.partial_fit(NEGATIVE, Y_COUNTS), "counts must be >= 0"),
        (lambda: ComplementNB().fit(WITH_NAN, Y_COUNTS), "contains NaN or infinite values.*impute"),
        (lambda: FITTED.predict_proba(np.full((1, 30), np.inf)), "ComplementNB.predict contains NaN or inf"),
        (lambda: ComplementNB().fit(X_COUNTS, np.zeros(150)), "at least two classes.*only one class"),
        (lambda: FITTED.predict(X_COUNTS[:, :5]), "X has 5 features, but ComplementNB is expecting 30.*same columns"),
        (lambda: FITTED.predict_proba(sp.csr_matrix(X_COUNTS[:, :5])), "expecting 30 features"),
        (
            lambda: ComplementNB().fit(X_COUNTS, Y_COUNTS).partial_fit(X_COUNTS[:2], [0, 9]),
            "label\\(s\\) \\[9\\] that are not among the classes \\[0, 1, 2, 3\\].*classes=",
        ),
        (lambda: ComplementNB().partial_fit(X_COUNTS, Y_COUNTS), "classes must be passed on the first call"),
        (lambda: ComplementNB(alpha=-1.0).fit(X_COUNTS, Y_COUNTS), "alpha .* a finite number >= 0; got -1.0"),
        (lambda: ComplementNB(alpha="1").fit(X_COUNTS, Y_COUNTS), "alpha .* a finite number >= 0.*got '1'"),
        (lambda: ComplementNB(alpha=True).fit(X_COUNTS, Y_COUNTS), "alpha .*got True"),
        (lambda: ComplementNB(alpha=np.nan).fit(X_COUNTS, Y_COUNTS), "alpha .* a finite number"),
        (
            lambda: ComplementNB(alpha=np.ones(29)).fit(X_COUNTS, Y_COUNTS),
            "one per feature, but got an array of shape \\(29,\\) for X with 30 features",
        ),
        (lambda: ComplementNB(alpha=np.ones((1, 30))).fit(X_COUNTS, Y_COUNTS), "got an array of shape \\(1, 30\\)"),
        (
            lambda: ComplementNB(alpha=-ALPHAS).fit(X_COUNTS, Y_COUNTS),
            "finite number >= 0; got -0.05 at index 0 of the array",
        ),
        (lambda: ComplementNB(alpha=["a"] * 30).fit(X_COUNTS, Y_COUNTS), "alpha is the pseudo-count"),
        (lambda: ComplementNB(class_prior=[0.5, 0.5]).fit(X_COUNTS, Y_COUNTS), "class_prior has shape \\(2,\\)"),
        (lambda: ComplementNB(class_prior=[0.5] * 4).fit(X_COUNTS, Y_COUNTS), "sum to one"),
        (
            lambda: ComplementNB().fit(X_COUNTS, Y_COUNTS, sample_weight=np.ones(3)),
            "sample_weight passed to ComplementNB.fit has 3 weights but X has 150 rows",
        ),
        (lambda: ComplementNB().fit(X_COUNTS, Y_COUNTS, sample_weight=-np.ones(150)), "negative weights"),
        (lambda: FITTED.partial_fit(X_COUNTS, Y_COUNTS, sample_weight=np.full(150, np.nan)), "NaN"),
        (lambda: ComplementNB().fit(X_COUNTS, Y_COUNTS[:-1]), "inconsistent numbers of samples"),
        (lambda: ComplementNB().fit(X_COUNTS, None), "requires y to be passed"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        ComplementNB().predict(X_COUNTS)
