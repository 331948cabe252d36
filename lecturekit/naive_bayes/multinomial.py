r"""Multinomial naive Bayes: a document is a bag of words drawn from its class's distribution.

Derived in notebooks/03.02-The-Multinomial-Event-Model.ipynb; smoothing in chapter 4.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from lecturekit.estimation import add_k
from lecturekit.naive_bayes._counting import _count_scores, _word_counts
from lecturekit.naive_bayes.base import _DiscreteNB


class MultinomialNB(_DiscreteNB):
    r"""Multinomial naive Bayes: a document is a bag of words drawn from its class's distribution.

    With :math:`N_{kj}` the number of times word :math:`j` occurs in the documents of class
    :math:`k`, :math:`N_k = \sum_{j'} N_{kj'}` and :math:`V` words (the notation of notation.md),
    the add-alpha estimate is
    :math:`\phi_{j \mid y=k} = (N_{kj} + \alpha) / (N_k + \alpha V)`, computed by
    ``add_k(feature_count_, alpha, axis=1, log=True)`` in log space, and a document scores
    :math:`\log \pi_k + \sum_j x_j \log \phi_{j \mid y=k}`, with :math:`x_j` its count of word
    :math:`j` (one sparse-times-dense product). An empty document (an all-zero row) scores
    :math:`\log \pi_k`: the prior alone decides.

    Parameters
    ----------
    alpha : float or array_like of shape (n_features,), default 1.0
        Pseudo-count added to every word count (1.0: Laplace smoothing; 0: no smoothing). In
        the Bayesian view it is the MAP estimate under a symmetric Dirichlet(a) prior with
        ``alpha = a - 1`` (see :func:`lecturekit.smoothing.dirichlet_map`).
        An array gives word j its own pseudo-count :math:`\alpha_j`, as in scikit-learn:
        :math:`\phi_{j \mid y=k} = (N_{kj} + \alpha_j) / (N_k + \sum_{j'} \alpha_{j'})`.
    force_alpha : bool, default True
        As in scikit-learn: if False and ``alpha < 1e-10`` (any entry), it is raised to 1e-10
        with a warning; if True alpha is kept as given (alpha=0 gives the raw MLE).
    fit_prior : bool, default True
        Learn the class prior from the class frequencies; if False use a uniform prior.
    class_prior : array_like of shape (n_classes,), optional
        Fixed class prior (non-negative, summing to one), in the order of ``classes_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        Number of training documents of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`N_{kj}`: the summed counts of each word in each class (class k in row k - 1).
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior :math:`\log \pi_k`.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log \phi_{j \mid y=k}`.
    n_features_in_ : int
        Number of features (the vocabulary size).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3, 0, 1], [2, 0, 0], [0, 2, 1], [0, 3, 0]])
    >>> model = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
    >>> model.predict([[1, 0, 0], [0, 1, 1]])
    array(['ham', 'spam'], dtype='<U4')
    >>> np.exp(model.feature_log_prob_[0]).round(3)   # (5+1, 0+1, 1+1) / (6 + 3)
    array([0.667, 0.111, 0.222])

    Derived in notebooks/03.02-The-Multinomial-Event-Model.ipynb.
    """

    def __init__(
        self,
        alpha: float | ArrayLike = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _data(self, X: Any) -> NDArray[Any]:
        return _word_counts(X, type(self).__name__)

    def _estimate(self, alpha: float | NDArray[np.float64]) -> None:
        # alpha = 0 (force_alpha): an unseen word has log 0 = -inf
        self.feature_log_prob_ = add_k(self.feature_count_, alpha, axis=1, log=True)

    def _joint(self, X: Any, where: str) -> NDArray[np.float64]:
        return _count_scores(X, self.feature_log_prob_, self.class_log_prior_)

    def sample(
        self,
        n_samples: int = 1,
        y: ArrayLike | None = None,
        *,
        n_words: int | ArrayLike = 100,
        random_state: Any = None,
    ) -> tuple[sp.csr_matrix, NDArray[Any]]:
        """Generate documents from the fitted generative story.

        For each document: a class from the prior (or the given ``y``), a length from
        ``n_words``, then word counts :math:`\\sim \\mathrm{Multinomial}(\\text{length}, \\phi_{\\cdot \\mid y=k})`
        (drawn as ``length`` word ids, then counted, so memory grows with the number of words,
        not with the vocabulary).

        Parameters
        ----------
        n_samples : int, default 1
            Number of documents.
        y : array_like of shape (n_samples,), optional
            Classes of the documents; drawn from the prior when omitted.
        n_words : int or array_like of shape (n_samples,), default 100
            Length of every document, or of each one.
        random_state : int, numpy.random.Generator or RandomState, optional
            Seed for reproducible samples.

        Returns
        -------
        X_sample : scipy.sparse.csr_matrix of shape (n_samples, n_features), int64
            Word counts; row i sums to its length.
        y_sample : ndarray of shape (n_samples,)
            The class of each document.
        """
        rng = self._sample_rng(random_state)
        codes, labels = self._sample_classes(n_samples, y, rng)
        lengths = np.broadcast_to(np.asarray(n_words), (n_samples,))
        if lengths.dtype.kind not in "iu" or np.any(lengths < 0):
            raise ValueError(f"n_words must hold integers >= 0 (document lengths); got {n_words!r}.")
        d = self.n_features_in_
        rows, words = [], []
        for c in range(self.classes_.size):
            docs = np.flatnonzero(codes == c)
            total = int(lengths[docs].sum())
            if total == 0:
                continue
            p = np.exp(self.feature_log_prob_[c])
            rows.append(np.repeat(docs, lengths[docs]))
            words.append(rng.choice(d, size=total, p=p / p.sum()))
        rows = np.concatenate(rows) if rows else np.zeros(0, np.intp)
        words = np.concatenate(words) if words else np.zeros(0, np.intp)
        X = sp.coo_matrix((np.ones(rows.size, np.int64), (rows, words)), shape=(n_samples, d)).tocsr()
        X.sum_duplicates()
        return X, labels
