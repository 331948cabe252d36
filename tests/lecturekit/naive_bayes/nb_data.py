"""Data shared by the tests of the naive Bayes models: test_base, test_base_weights and test_<model>.

``MODELS`` are the classes of ``lecturekit.naive_bayes.__all__``: the checks that every model must
pass run on each of them, so a model added to the package is checked with no change here.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_iris

from lecturekit import naive_bayes

MODELS = [getattr(naive_bayes, name) for name in naive_bayes.__all__ if isinstance(getattr(naive_bayes, name), type)]


def counts(
    n: int = 150,
    d: int = 30,
    n_classes: int = 4,
    seed: int = 0,
    *,
    empty: int = 3,
    class_weights: np.ndarray | None = None,
):
    """Word counts whose rates depend on the class, every class present, the first ``empty`` rows all zero.

    The labels beyond one per class are uniform (``rng.integers``), or drawn with probabilities
    proportional to ``class_weights`` (``rng.choice``, e.g. ``2.0 ** np.arange(n_classes)`` for
    unbalanced classes).
    """
    rng = np.random.default_rng(seed)
    if class_weights is None:
        rest = rng.integers(0, n_classes, n - n_classes)
    else:
        rest = rng.choice(n_classes, n - n_classes, p=class_weights / class_weights.sum())
    y = np.concatenate([np.arange(n_classes), rest])
    rates = rng.gamma(0.5, 1.0, size=(n_classes, d))
    X = rng.poisson(rates[y])
    X[:empty] = 0  # empty documents
    return X, y


def bad_inputs(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``X`` with every entry lowered by one (so some are negative), and ``X`` with one entry NaN: the
    bad inputs whose error messages every model's tests check."""
    return X - 1, np.where(np.arange(X.size).reshape(X.shape) == 7, np.nan, X)


FORMATS = {"dense": np.asarray, "csr": sp.csr_matrix, "csc": sp.csc_matrix, "csr_array": sp.csr_array}
SCIPY_FORMATS = {key: FORMATS[key] for key in ("dense", "csr", "csc")}  # without the sparse array
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
