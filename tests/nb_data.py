"""Data shared by the tests of the naive Bayes models (test_nb_base and one file per model)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_iris


def counts(n: int = 150, d: int = 30, n_classes: int = 4, seed: int = 0):
    """Word counts whose rates depend on the class, every class present, some all-zero rows."""
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    rates = rng.gamma(0.5, 1.0, size=(n_classes, d))
    X = rng.poisson(rates[y])
    X[:3] = 0  # empty documents
    return X, y


FORMATS = {"dense": np.asarray, "csr": sp.csr_matrix, "csc": sp.csc_matrix, "csr_array": sp.csr_array}
X_COUNTS, Y_COUNTS = counts()
X_TEST, _ = counts(n=40, seed=1)
IRIS_X, IRIS_Y = load_iris(return_X_y=True)


class NoDensify(sp.csr_matrix):
    """A CSR matrix that fails the test if anything turns it into a dense array."""

    def toarray(self, *args, **kwargs):
        raise AssertionError("X was densified (toarray)")

    def todense(self, *args, **kwargs):
        raise AssertionError("X was densified (todense)")

    def __array__(self, *args, **kwargs):
        raise AssertionError("X was densified (__array__)")
