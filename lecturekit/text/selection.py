r"""Choosing a smaller vocabulary: words ranked by their mutual information with the class.

:func:`mutual_information` measures, for every word at once, how much knowing whether a
document contains the word tells about its class; :func:`select_by_mutual_information` keeps the
``k`` most informative words, as McCallum and Nigam (1998) do in their vocabulary-size
experiments. Both read a sparse document-term matrix (:class:`lecturekit.text.vocabulary.Vocabulary`)
in one pass over its non-zeros and never densify it. :mod:`lecturekit.text` gathers them with
the tokenizer and the vocabulary.

Used in notebooks/03.02-The-Multinomial-Event-Model.ipynb (choosing the vocabulary).
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlogy

from lecturekit._checks import unsortable

__all__ = ["mutual_information", "select_by_mutual_information"]


def _presence_and_classes(X: Any, y: ArrayLike) -> tuple[sp.csr_matrix, NDArray[np.intp], int]:
    """Word-presence indicators (CSR of int64) and integer class codes."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.ndim != 2:
            raise ValueError(f"X must be two-dimensional; got shape {X.shape}.")
        data = X.data
    else:
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"X must be a matrix of counts (a sparse matrix or a numeric array); got "
                f"{type(X).__name__}. Turn documents into counts with Vocabulary first."
            ) from exc
        if X.ndim != 2:
            raise ValueError(
                f"X must be two-dimensional (documents by words); got shape {X.shape}. Use "
                f"X.reshape(-1, 1) for a single word."
            )
        data = X
    if data.size and not np.all(np.isfinite(data)):
        raise ValueError("X contains NaN or infinite values; counts must be finite numbers >= 0.")
    if data.size and np.any(data < 0):
        raise ValueError("Negative values in X passed to mutual_information; counts must be >= 0.")
    if X.shape[0] == 0:
        raise ValueError("X has no rows (documents); pass at least one document.")
    presence = sp.csr_matrix(X != 0 if sp.issparse(X) else X > 0, dtype=np.int64)

    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(
            f"y must be one-dimensional (one class label per document); got shape {y.shape}. "
            f"Use y.ravel() for a column vector."
        )
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; pass exactly one label per row of X.")
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError as exc:
        raise unsortable(exc) from exc
    return presence, codes.ravel(), classes.size


def mutual_information(X: Any, y: ArrayLike) -> NDArray[np.float64]:
    r"""Mutual information (in nats) between each word's presence and the class label.

    For word :math:`j` let :math:`W_j \in \{0, 1\}` say whether a document contains it
    (:math:`X_{ij} > 0`) and :math:`C` be the document's class. With the empirical joint
    distribution over the :math:`m` documents,

    .. math::

        I(W_j; C) = \sum_{k} \sum_{w \in \{0, 1\}} \frac{N_{kw}}{m}
            \log \frac{m \, N_{kw}}{m_k \, N_{w}},

    where :math:`N_{k1}` counts documents of class :math:`k` that contain the word,
    :math:`N_{k0} = m_k - N_{k1}` those that do not (:math:`m_k` documents of class :math:`k`),
    and :math:`N_w = \sum_k N_{kw}`. Terms with :math:`N_{kw} = 0` are zero
    (:math:`0 \log 0 = 0`). All :math:`N_{k1}` come from one sparse
    product, :math:`Y^\top B`, of the one-hot class matrix :math:`Y` (documents by classes) with
    the presence matrix :math:`B` (documents by words), so the cost is one pass over the
    non-zeros of ``X``.

    This is the average mutual information with the class variable by which McCallum and Nigam
    (1998) choose vocabularies of a given size; it is zero exactly when the word's presence is
    independent of the class in the training data, and at most :math:`\log K` for :math:`K`
    classes.

    Parameters
    ----------
    X : sparse matrix or array_like, shape (n_documents, n_features)
        Word counts (or indicators), >= 0; only ``X > 0`` matters.
    y : array_like, shape (n_documents,)
        Class label of each document.

    Returns
    -------
    ndarray of float64, shape (n_features,)
        :math:`I(W_j; C)` for each word, >= 0 (rounding errors below zero are clipped to 0).

    Raises
    ------
    ValueError
        If ``X`` is not a two-dimensional matrix of finite counts >= 0, or ``y`` does not have one
        label per row.

    Examples
    --------
    A word found in every spam and no ham message carries all :math:`\log 2` nats of the class;
    a word found in half of each carries none.

    >>> import numpy as np
    >>> X = np.array([[1, 1], [2, 0], [0, 3], [0, 0]])
    >>> y = ["spam", "spam", "ham", "ham"]
    >>> mutual_information(X, y).round(4), round(float(np.log(2)), 4)
    (array([0.6931, 0.    ]), 0.6931)

    Used in notebooks/03.02-The-Multinomial-Event-Model.ipynb (choosing the vocabulary).
    """
    presence, codes, n_classes = _presence_and_classes(X, y)
    n = presence.shape[0]
    one_hot = sp.csr_matrix((np.ones(n, dtype=np.int64), (np.arange(n), codes)), shape=(n, n_classes))
    present = np.asarray((one_hot.T @ presence).toarray(), dtype=float)  # (K, n_features): n_c1
    class_sizes = np.bincount(codes, minlength=n_classes).astype(float)[:, None]  # n_c
    absent = class_sizes - present  # n_c0
    n_present = present.sum(axis=0)  # n_1 per word
    n_absent = n - n_present  # n_0 per word

    def term(joint: NDArray[np.float64], marginal: NDArray[np.float64]) -> NDArray[np.float64]:
        # n_cw / n * log(n n_cw / (n_c n_w)); where n_cw = 0 the ratio is set to 1 (0 log 0 = 0),
        # which also avoids 0/0 when a word occurs in every document or in none.
        denominator = class_sizes * marginal
        ratio = np.divide(n * joint, denominator, out=np.ones_like(joint), where=joint > 0)
        return xlogy(joint, ratio) / n

    mi = (term(present, n_present) + term(absent, n_absent)).sum(axis=0)
    return np.maximum(mi, 0.0)


def select_by_mutual_information(X: Any, y: ArrayLike, k: int) -> NDArray[np.intp]:
    """Column indices of the ``k`` words with the highest mutual information with the class.

    Parameters
    ----------
    X : sparse matrix or array_like, shape (n_documents, n_features)
        Word counts (or indicators), >= 0.
    y : array_like, shape (n_documents,)
        Class label of each document.
    k : int
        How many words to keep, 1 <= k <= n_features.

    Returns
    -------
    ndarray of intp, shape (k,)
        Column indices in order of decreasing mutual information; equal values are listed
        lower index first. The first ``k'`` of them are the selection for any ``k' < k``, and
        ``X[:, np.sort(indices)]`` keeps the columns in their original (alphabetical) order.

    Raises
    ------
    ValueError
        If ``k`` is not an int in [1, n_features], or as in :func:`mutual_information`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 1, 0], [2, 0, 1], [0, 3, 1], [0, 0, 0]])
    >>> select_by_mutual_information(X, ["spam", "spam", "ham", "ham"], k=2)
    array([0, 1])

    Used in notebooks/03.02-The-Multinomial-Event-Model.ipynb (choosing the vocabulary).
    """
    mi = mutual_information(X, y)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or not 1 <= k <= mi.size:
        raise ValueError(
            f"k must be an int between 1 and the number of features ({mi.size}); got {k!r}. "
            f"To keep every word, skip the selection."
        )
    return np.argsort(-mi, kind="stable")[:k].astype(np.intp)
