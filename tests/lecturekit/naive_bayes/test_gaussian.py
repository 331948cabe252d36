"""Tests of lecturekit.naive_bayes.gaussian: scikit-learn agreement, duplication invariance, sampling, sparse input.

What GaussianNB shares with the other naive Bayes models is tested in test_base.py.
"""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from sklearn import naive_bayes as reference
from sklearn.datasets import load_iris, load_wine

from lecturekit.naive_bayes import GaussianNB

from .nb_data import IRIS_X, IRIS_Y

# --------------------------------------------------------------------------- agreement with scikit-learn


@pytest.mark.parametrize("loader", [load_iris, load_wine])
@pytest.mark.parametrize("params", [{}, {"var_smoothing": 1e-3}, {"priors": [0.5, 0.3, 0.2]}])
def test_gaussian_equals_scikit_learn(loader, params):
    X, y = loader(return_X_y=True)
    ours, theirs = GaussianNB(**params).fit(X, y), reference.GaussianNB(**params).fit(X, y)
    np.testing.assert_allclose(ours.theta_, theirs.theta_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, theirs.var_, rtol=1e-10)
    assert ours.epsilon_ == pytest.approx(theirs.epsilon_, rel=1e-12)
    np.testing.assert_allclose(ours.class_prior_, theirs.class_prior_, rtol=1e-12)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-8)
    np.testing.assert_allclose(ours.predict_joint_log_proba(X), theirs.predict_joint_log_proba(X), rtol=1e-10)
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


# --------------------------------------------------------------------------- invariants (hypothesis)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_duplicating_leaves_the_gaussian_estimates_unchanged(seed):
    rng = np.random.default_rng(seed)
    X, y = rng.normal(size=(30, 4)) * rng.uniform(0.1, 10, 4), np.arange(30) % 3
    model, doubled = GaussianNB().fit(X, y), GaussianNB().fit(np.vstack([X, X]), np.concatenate([y, y]))
    for name in ("theta_", "var_", "class_prior_"):
        np.testing.assert_allclose(getattr(doubled, name), getattr(model, name), rtol=1e-9, atol=1e-14)


# --------------------------------------------------------------------------- sample


def test_gaussian_sample_follows_the_fitted_distribution():
    X, y = load_iris(return_X_y=True)
    model = GaussianNB().fit(X, y)
    X_new, y_new = model.sample(30_000, random_state=0)
    assert X_new.shape == (30_000, 4) and X_new.dtype == np.float64 and y_new.shape == (30_000,)
    for c in range(3):
        rows = X_new[y_new == c]
        n = len(rows)
        assert np.all(np.abs(rows.mean(axis=0) - model.theta_[c]) < 5 * np.sqrt(model.var_[c] / n))
        assert np.all(np.abs(rows.var(axis=0) - model.var_[c]) < 5 * model.var_[c] * np.sqrt(2 / n))


# --------------------------------------------------------------------------- bad input


def test_gaussian_refuses_sparse_input_as_scikit_learn_does():
    # scikit-learn raises TypeError here (a wrong type, not a wrong value); the message says the fix.
    with pytest.raises(TypeError, match="Sparse data was passed.*dense data is required.*toarray"):
        GaussianNB().fit(sp.csr_matrix(IRIS_X), IRIS_Y)


def test_float32_data_gives_the_float64_estimates_stored_in_float32():
    # Estimates accumulate in float64 (fit or partial_fit in batches); theta_, var_ and class_prior_
    # are stored in X's type, as scikit-learn stores them.
    X32 = np.asarray(IRIS_X, dtype=np.float32)
    double = GaussianNB().fit(X32.astype(np.float64), IRIS_Y)
    batched = GaussianNB()
    for rows in np.array_split(np.random.default_rng(0).permutation(len(IRIS_Y)), 3):
        batched.partial_fit(X32[rows], IRIS_Y[rows], classes=np.unique(IRIS_Y))
    for single in (GaussianNB().fit(X32, IRIS_Y), batched):
        for name in ("theta_", "var_", "class_prior_"):
            assert getattr(single, name).dtype == np.float32, name
            np.testing.assert_allclose(getattr(single, name), getattr(double, name), rtol=1e-6)
        np.testing.assert_array_equal(single.predict(X32), double.predict(X32))
