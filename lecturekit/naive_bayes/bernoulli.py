r"""Bernoulli naive Bayes: each word of the vocabulary is present or absent, independently.

Derived in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb; smoothing in chapter 4.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from lecturekit.estimation import add_k
from lecturekit.naive_bayes._counting import _count_scores, _values
from lecturekit.naive_bayes.base import _DiscreteNB


def _threshold(binarize: Any, X: Any) -> float:
    """``binarize`` (not None) checked: a number, and >= 0 for a sparse X."""
    if isinstance(binarize, bool) or not isinstance(binarize, Real) or np.isnan(binarize):
        raise ValueError(f"binarize must be a number or None; got {binarize!r}.")
    if sp.issparse(X) and binarize < 0:
        raise ValueError(
            f"binarize={binarize} < 0 would turn every zero of the sparse X into a one (a "
            f"dense matrix); use binarize >= 0 or pass a dense X."
        )
    return binarize


class BernoulliNB(_DiscreteNB):
    r"""Bernoulli naive Bayes: each word of the vocabulary is present or absent, independently.

    Each feature is a two-outcome variable, so its add-alpha estimate is
    :math:`\phi_{j \mid y=k} = (N_{kj} + \alpha) / (m_k + 2\alpha)`, where :math:`N_{kj}` counts
    the documents of class :math:`k` that contain word :math:`j` and :math:`m_k` all documents of
    class :math:`k` (the notation of the course, notation.md). It is computed by ``add_k`` on the
    stacked (present, absent) counts :math:`(N_{kj}, m_k - N_{kj})`, which also gives
    :math:`\log(1 - \phi_{j \mid y=k})` directly (when there are fewer possible counts 0..m_k than
    features, once per possible count, then looked up: the same numbers, several times faster on
    text). A document scores
    :math:`\log \pi_k + \sum_j [x_j \log \phi_{j \mid y=k} + (1 - x_j) \log (1 - \phi_{j \mid y=k})]`,
    that is :math:`\log \pi_k + \sum_j x_j \log \frac{\phi_{j \mid y=k}}{1 - \phi_{j \mid y=k}} +
    \sum_j \log(1 - \phi_{j \mid y=k})`, one sparse product. Unlike the multinomial model, an
    empty document carries evidence: every word absent.

    Parameters
    ----------
    alpha : float or array_like of shape (n_features,), default 1.0
        Pseudo-count added to both outcomes of every feature: the MAP estimate under a
        Beta(a, a) prior with ``alpha = a - 1`` (see :func:`lecturekit.smoothing.beta_map`).
        An array gives feature j its own pseudo-count :math:`\alpha_j`:
        :math:`\phi_{j \mid y=k} = (N_{kj} + \alpha_j) / (m_k + 2\alpha_j)` (scikit-learn 1.9 documents
        this but its BernoulliNB fails on such an array unless n_classes = n_features).
    force_alpha : bool, default True
        As in scikit-learn: if False and ``alpha < 1e-10`` (any entry), it is raised to 1e-10
        with a warning.
    binarize : float or None, default 0.0
        Threshold: a value above it counts as present. None: X already holds 0/1 values.
        Sparse X needs ``binarize >= 0`` (a negative threshold would make every zero a one).
    fit_prior : bool, default True
        True: the class prior is the class frequencies; False: uniform over the classes.
    class_prior : array_like of shape (n_classes,), optional
        A fixed class prior instead (probabilities >= 0 summing to one), one per entry of
        ``classes_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        :math:`m_k`, documents per class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`N_{kj}`, documents of class k that contain word j.
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log \phi_{j \mid y=k}`, class k in row k - 1.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0, 1], [1, 0, 0], [0, 1, 1], [0, 1, 0]])
    >>> model = BernoulliNB().fit(X, [0, 0, 1, 1])
    >>> np.exp(model.feature_log_prob_[0])   # (2+1, 0+1, 1+1) / (2 + 2)
    array([0.75, 0.25, 0.5 ])
    >>> model.predict([[1, 0, 0], [0, 1, 1]])
    array([0, 1])

    Derived in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb.
    """

    def __init__(
        self,
        alpha: float | ArrayLike = 1.0,
        force_alpha: bool = True,
        binarize: float | None = 0.0,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _data(self, X: Any) -> NDArray[Any]:
        values = _values(X)
        if self.binarize is None:
            if values.size and np.any((values != 0) & (values != 1)):
                raise ValueError(
                    "BernoulliNB with binarize=None needs X of 0/1 values (present/absent); X "
                    "holds other values. Set binarize=0.0 to count any positive value as present."
                )
            return values
        threshold = _threshold(self.binarize, X)
        # 1.0 where present, 0.0 where absent: one pass, straight into the float64 that the
        # counting (np.bincount weights) and the scoring (a sparse product) use
        return np.greater(values, threshold, out=np.empty(values.shape))

    def _estimate(self, alpha: float | NDArray[np.float64]) -> None:
        # p_cj depends on N_cj only through the whole number N_cj in 0..N_c (unless a sample_weight
        # was fractional or alpha varies by feature). With fewer possible counts than features (the
        # usual case for text) the estimate is computed once per possible count, in a table of
        # shape (n_classes, N_max + 1), and looked up with one gather; otherwise once per feature.
        # Either way, the two outcomes (present, absent) lie along the first axis of the counts
        # given to add_k.
        counts, n_classes = self.feature_count_, self.classes_.size
        n_max = int(self.class_count_.max())
        if np.ndim(alpha) == 0 and self._whole_counts and n_max + 1 < counts.shape[1]:
            present = np.broadcast_to(np.arange(n_max + 1.0), (n_classes, n_max + 1))
            # absent = N_c - n; clipped at 0 for n > N_c, entries that no feature can look up
            absent = np.maximum(self.class_count_[:, np.newaxis] - present, 0.0)
            # alpha = 0 (force_alpha): p may be 0 or 1, a log -inf
            table = add_k(np.stack([present, absent]), alpha, axis=0, log=True)
            index = counts.astype(np.intp)  # row c of the table starts at c * (N_max + 1)
            index += np.arange(0, n_classes * (n_max + 1), n_max + 1)[:, np.newaxis]
            logs = table[0].ravel()[index], table[1].ravel()[index]
        else:
            stacked = np.stack([counts, self.class_count_[:, np.newaxis] - counts])
            np.maximum(stacked[1], 0.0, out=stacked[1])  # rounding of weighted sums: not below 0
            logs = add_k(stacked, alpha, axis=0, log=True)
        self.feature_log_prob_, self._log_absent = logs[0], logs[1]

    def _joint(self, X: Any, where: str) -> NDArray[np.float64]:
        X = self._with_data(X, self._data(X).astype(np.float64, copy=False))
        return _count_scores(X, self.feature_log_prob_, self.class_log_prior_, self._log_absent)

    def sample(
        self, n_samples: int = 1, y: ArrayLike | None = None, *, random_state: Any = None
    ) -> tuple[sp.csr_matrix, NDArray[Any]]:
        """Generate binary documents: a class k, then each word j present with probability phi_j|y=k.

        Parameters
        ----------
        n_samples : int, default 1
            How many documents to draw.
        y : array_like of shape (n_samples,), optional
            Their classes; drawn from the class prior when omitted.
        random_state : int, numpy.random.Generator or RandomState, optional
            Seed for reproducible samples.

        Returns
        -------
        X_sample : scipy.sparse.csr_matrix of shape (n_samples, n_features), int64
            0/1 entries (the draws are made one class at a time, m_k by n_features uniforms).
        y_sample : ndarray of shape (n_samples,)
        """
        rng = self._sample_rng(random_state)
        codes, labels = self._sample_classes(n_samples, y, rng)
        blocks, order = [], []
        for c in range(self.classes_.size):
            docs = np.flatnonzero(codes == c)
            if docs.size:
                present = rng.random((docs.size, self.n_features_in_)) < np.exp(self.feature_log_prob_[c])
                blocks.append(sp.csr_matrix(present.astype(np.int64)))
                order.append(docs)
        if not blocks:
            return sp.csr_matrix((n_samples, self.n_features_in_), dtype=np.int64), labels
        X = sp.vstack(blocks, format="csr")
        inverse = np.empty(n_samples, np.intp)
        inverse[np.concatenate(order)] = np.arange(n_samples)
        return X[inverse], labels
