"""Tests of lecturekit.estimation (chapter 01.01: Bayes' rule and maximum likelihood)."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import minimize_scalar
from sklearn.naive_bayes import CategoricalNB

from lecturekit.estimation import (
    add_k,
    bernoulli_log_likelihood,
    bernoulli_mle,
    conditional_probabilities,
    count_values,
    joint_counts,
    log_posterior,
    mle,
    parameter_count,
    posterior,
)

counts_arrays = hnp.arrays(
    dtype=np.int64,
    shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6),
    elements=st.integers(0, 1000),
)


# --------------------------------------------------------------------------- the chapter's numbers


def test_coin_hht_mle_is_two_thirds():
    assert bernoulli_mle([1, 1, 0]) == pytest.approx(2 / 3, abs=1e-15)
    assert mle([2, 1]) == pytest.approx([2 / 3, 1 / 3], abs=1e-15)


@pytest.mark.parametrize("k, expected", [(0, Fraction(2, 3)), (1, Fraction(3, 5)), (100, Fraction(102, 203))])
def test_coin_hht_add_k(k, expected):
    assert add_k([2, 1], k=k)[0] == pytest.approx(float(expected), abs=1e-15)


def test_medical_test_posterior():
    # prevalence 1%, sensitivity 90%, false-positive rate 5%: P(ill | +) = 0.009 / (0.009 + 0.0495)
    post = posterior([0.99, 0.01], [0.05, 0.90])
    assert post[1] == pytest.approx(0.009 / 0.0585, rel=1e-12)


def test_mle_maximises_the_bernoulli_log_likelihood():
    rng = np.random.default_rng(1)
    for n in (1, 5, 50):
        x = rng.integers(0, 2, size=n)
        if x.min() == x.max():  # all equal: the maximiser sits on the boundary, checked below
            continue
        result = minimize_scalar(
            lambda t, x: -bernoulli_log_likelihood(t, x),
            args=(x,),
            bounds=(1e-9, 1 - 1e-9),
            method="bounded",
            options={"xatol": 1e-12},
        )
        assert result.x == pytest.approx(bernoulli_mle(x), abs=1e-6)


def test_boundary_mle_and_zero_log_zero():
    assert bernoulli_mle([1, 1, 1]) == 1.0
    assert bernoulli_log_likelihood(1.0, [1, 1, 1]) == 0.0
    assert bernoulli_log_likelihood(0.0, [1, 0]) == -np.inf


def test_parameter_counts():
    assert [parameter_count(n) for n in (1, 2, 10)] == [2, 6, 2 * 1023]
    assert [parameter_count(n, naive=True) for n in (1, 2, 10)] == [2, 4, 20]
    assert parameter_count(100) == 2 * (2**100 - 1)  # exact, beyond 64-bit integers
    assert parameter_count(3, n_classes=4, n_values=5, naive=True) == 4 * 3 * 4
    # With one feature the naive assumption is no assumption at all.
    for c in (2, 3):
        for v in (2, 4):
            assert parameter_count(1, c, v) == parameter_count(1, c, v, naive=True)


# --------------------------------------------------------------------------- against scikit-learn


def test_conditional_tables_match_sklearn_categorical_nb():
    """Add-k class-conditional tables are CategoricalNB's feature_log_prob_, to 1e-8."""
    rng = np.random.default_rng(0)
    n, d = 500, 4
    n_values = [2, 3, 5, 7]
    y = rng.integers(0, 3, size=n)
    X = np.column_stack([rng.integers(0, v, size=n) for v in n_values])
    for k in (1.0, 0.5, 3.0):
        reference = CategoricalNB(alpha=k, force_alpha=True, min_categories=n_values).fit(X, y)
        for j in range(d):
            _, _, table = conditional_probabilities(X[:, j], y, k=k, x_categories=np.arange(n_values[j]))
            np.testing.assert_allclose(np.log(table), reference.feature_log_prob_[j], rtol=0, atol=1e-8)
        _, class_counts = count_values(y)
        np.testing.assert_allclose(np.log(mle(class_counts)), reference.class_log_prior_, atol=1e-8)


# --------------------------------------------------------------------------- invariants


@settings(max_examples=200, deadline=None)
@given(counts=counts_arrays, k=st.floats(0.01, 1e4))
def test_add_k_is_a_distribution(counts, k):
    p = add_k(counts, k=k)
    assert np.all(np.isfinite(p))
    assert np.all((p > 0) & (p <= 1))
    np.testing.assert_allclose(p.sum(axis=-1), 1.0, rtol=1e-12)


@settings(max_examples=100, deadline=None)
@given(counts=counts_arrays)
def test_add_k_moves_from_mle_towards_uniform(counts):
    counts = counts + 1  # keep the MLE defined
    uniform = 1.0 / counts.shape[-1]
    distances = [np.abs(add_k(counts, k=k) - uniform).max() for k in (0.0, 1.0, 10.0, 1e3, 1e9)]
    assert all(a >= b - 1e-12 for a, b in zip(distances, distances[1:], strict=False))
    assert distances[-1] < 1e-5
    np.testing.assert_allclose(add_k(counts, k=0.0), counts / counts.sum(axis=-1, keepdims=True))


@settings(max_examples=100, deadline=None)
@given(counts=counts_arrays.filter(lambda c: c.sum(axis=-1).min() > 0), reps=st.integers(2, 5))
def test_duplicating_the_data_leaves_the_mle_unchanged(counts, reps):
    np.testing.assert_allclose(mle(counts * reps), mle(counts), rtol=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    log_prior=hnp.arrays(np.float64, 4, elements=st.floats(-50, 0)),
    log_lik=hnp.arrays(np.float64, (3, 4), elements=st.floats(-2000, 0)),
)
def test_log_posterior_rows_sum_to_one_even_when_likelihoods_underflow(log_prior, log_lik):
    post = np.exp(log_posterior(log_prior, log_lik))
    assert np.all(np.isfinite(post))
    np.testing.assert_allclose(post.sum(axis=-1), 1.0, rtol=1e-12)


def test_joint_counts_single_pass_agrees_with_a_loop():
    rng = np.random.default_rng(3)
    x = rng.choice(np.array(["red", "green", "blue"]), size=200)
    y = rng.integers(0, 4, size=200)
    classes, values, table = joint_counts(x, y)
    for c, label in enumerate(classes):
        for j, value in enumerate(values):
            assert table[c, j] == np.sum((y == label) & (x == value))
    assert table.sum() == 200


def test_declared_categories_give_zero_counts():
    values, counts = count_values(["h", "h"], categories=["h", "t"])
    assert values.tolist() == ["h", "t"] and counts.tolist() == [2, 0]
    # integer categories 0..K-1 take a fast path that must count the same way
    assert count_values([2, 0, 2], categories=np.arange(4))[1].tolist() == [1, 0, 2, 0]
    assert count_values([2, 0, 2], categories=[2, 0, 1, 3])[1].tolist() == [2, 1, 0, 0]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mle([2, -1]), "Negative values in counts"),
        (lambda: mle([np.nan, 1]), "NaN or infinite"),
        (lambda: mle([0, 0]), "no observations"),
        (lambda: add_k([1, 2], k=-1), "k is a pseudo-count"),
        (lambda: add_k(3, k=1), "at least 1 dimension"),
        (lambda: bernoulli_mle([]), "at least one observation"),
        (lambda: bernoulli_mle([0, 2]), "binary outcomes"),
        (lambda: bernoulli_log_likelihood(1.5, [1]), "must lie in \\[0, 1\\]"),
        (lambda: joint_counts([1, 2, 3], [0, 1]), "same length"),
        (lambda: joint_counts([1.0, np.nan], [0, 1]), "NaN"),
        (lambda: count_values(["h", "x"], categories=["h", "t"]), "not among the given categories"),
        (lambda: count_values(["h"], categories=["h", "h"]), "duplicates"),
        (lambda: count_values([0, 5], categories=np.arange(3)), "not among the given categories"),
        (lambda: count_values([-1, 0], categories=np.arange(3)), "not among the given categories"),
        (lambda: conditional_probabilities([1, 2], [0, 0], y_categories=[0, 1]), "no observations"),
        (lambda: posterior([0.5, 0.6], [0.1, 0.2]), "sum to one"),
        (lambda: posterior([0.5, 0.5], [0.1, 0.2, 0.3]), "last axis must have length 2"),
        (lambda: posterior([0.5, 0.5], [0.0, 0.0]), "probability zero under every hypothesis"),
        (lambda: log_posterior([0.0], [[np.nan]]), "NaN"),
        (lambda: parameter_count(0), "n_features must be an integer >= 1"),
        (lambda: parameter_count(3, n_classes=1), "n_classes must be an integer >= 2"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_unseen_class_is_fine_with_smoothing():
    _, _, table = conditional_probabilities([1, 2], [0, 0], k=1, y_categories=[0, 1])
    np.testing.assert_allclose(table[1], [0.5, 0.5])
