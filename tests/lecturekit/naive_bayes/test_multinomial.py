"""Tests of lecturekit.naive_bayes.multinomial: sampling documents from the fitted model.

What MultinomialNB shares with the other naive Bayes models (scikit-learn agreement, streaming,
invariants, bad input) is tested in test_base.py.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from lecturekit.naive_bayes import MultinomialNB

from .nb_data import X_COUNTS, Y_COUNTS

# --------------------------------------------------------------------------- sample


def test_multinomial_sample_follows_the_fitted_distribution():
    model = MultinomialNB(alpha=0.5).fit(X_COUNTS, Y_COUNTS)
    X, y = model.sample(5, n_words=[0, 1, 2, 3, 4], random_state=0)
    assert sp.issparse(X) and X.shape == (5, 30) and X.dtype == np.int64 and y.shape == (5,)
    np.testing.assert_array_equal(np.asarray(X.sum(axis=1)).ravel(), [0, 1, 2, 3, 4])
    X, y = model.sample(2000, y=np.full(2000, 2), n_words=50, random_state=np.random.default_rng(1))
    np.testing.assert_array_equal(y, 2)
    frequencies = np.asarray(X.sum(axis=0)).ravel() / X.sum()
    p = np.exp(model.feature_log_prob_[2])
    standard_error = np.sqrt(p * (1 - p) / X.sum())  # counts of one multinomial with X.sum() draws
    assert np.all(np.abs(frequencies - p) < 5 * standard_error + 1e-12)
    # without y, classes follow the prior
    _, y = model.sample(20_000, n_words=1, random_state=2)
    prior = np.exp(model.class_log_prior_)
    observed = np.bincount(y, minlength=4) / y.size
    assert np.all(np.abs(observed - prior) < 5 * np.sqrt(prior * (1 - prior) / y.size))
    # same seed, same sample
    first, second = model.sample(10, random_state=3), model.sample(10, random_state=3)
    assert (first[0] != second[0]).nnz == 0 and np.array_equal(first[1], second[1])
