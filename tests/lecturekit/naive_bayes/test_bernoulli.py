"""Tests of lecturekit.naive_bayes.bernoulli: scikit-learn agreement, the wide-data path, sampling, binarize.

What BernoulliNB shares with the other naive Bayes models is tested in test_base.py.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn import naive_bayes as reference

from lecturekit.naive_bayes import BernoulliNB

from .nb_data import FORMATS, X_COUNTS, Y_COUNTS, counts

# --------------------------------------------------------------------------- agreement with scikit-learn


def test_bernoulli_with_binary_input_and_no_threshold_equals_scikit_learn():
    X = (X_COUNTS > 0).astype(float)
    for fmt in ("dense", "csr"):
        ours = BernoulliNB(binarize=None, alpha=0.5).fit(FORMATS[fmt](X), Y_COUNTS)
        theirs = reference.BernoulliNB(binarize=None, alpha=0.5).fit(X, Y_COUNTS)
        np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours.predict_proba(FORMATS[fmt](X)), theirs.predict_proba(X), atol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 0.01])
def test_bernoulli_wide_data_equals_scikit_learn(alpha):
    # With fewer possible counts (0..N_c) than features BernoulliNB computes p once per count and
    # looks it up (the path taken for text); the data above, with more documents per class than
    # features, take the direct path.
    X, y = counts(n=60, d=500, n_classes=3, seed=4)
    for data in (X, sp.csr_matrix(X)):
        ours = BernoulliNB(alpha=alpha).fit(data, y)
        assert ours.class_count_.max() + 1 < X.shape[1]
        theirs = reference.BernoulliNB(alpha=alpha).fit(X, y)
        np.testing.assert_allclose(ours.feature_log_prob_, theirs.feature_log_prob_, rtol=0, atol=1e-12)
        np.testing.assert_allclose(ours.predict_proba(data), theirs.predict_proba(X), rtol=0, atol=1e-8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mle = BernoulliNB(alpha=0.0).fit(X, y)  # the MLE, N_cj / N_c, exactly (with log 0 = -inf)
    with np.errstate(divide="ignore"):
        expected = np.log(mle.feature_count_ / mle.class_count_[:, None])
    np.testing.assert_allclose(mle.feature_log_prob_, expected, rtol=1e-14, atol=0)  # -inf where N_cj = 0


# --------------------------------------------------------------------------- sample


def test_bernoulli_sample_follows_the_fitted_distribution():
    model = BernoulliNB().fit(X_COUNTS, Y_COUNTS)
    y_wanted = np.random.default_rng(5).permutation(np.repeat([0, 1, 2, 3], 2500))  # rows keep their y
    X, y = model.sample(10_000, y=y_wanted, random_state=0)
    assert sp.issparse(X) and X.shape == (10_000, 30) and set(np.unique(X.data)) <= {1}
    np.testing.assert_array_equal(y, y_wanted)
    for c in range(4):
        p = np.exp(model.feature_log_prob_[c])
        observed = np.asarray(X[y == c].mean(axis=0)).ravel()
        assert np.all(np.abs(observed - p) < 5 * np.sqrt(p * (1 - p) / 2500))


# --------------------------------------------------------------------------- bad input


def test_a_negative_binarize_threshold_works_on_dense_input():
    model = BernoulliNB(binarize=-1.0).fit(X_COUNTS, Y_COUNTS)  # every feature present everywhere
    np.testing.assert_allclose(model.feature_count_, model.class_count_[:, None].repeat(30, axis=1))
