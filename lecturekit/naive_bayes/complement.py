r"""Complement naive Bayes: score each class by how badly the *other* classes explain a document.

Rennie, Shih, Teevan and Karger (2003), "Tackling the poor assumptions of naive Bayes text
classifiers", ICML: the multinomial event model of notebooks/03.02-The-Multinomial-Event-Model.ipynb,
estimated from the complement of each class.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lecturekit.naive_bayes._counting import _word_counts
from lecturekit.naive_bayes.base import _DiscreteNB


class ComplementNB(_DiscreteNB):
    r"""Complement naive Bayes (Rennie et al., 2003), as scikit-learn implements it.

    **What it fixes.** Multinomial naive Bayes estimates class :math:`k`'s word distribution
    from the documents of class :math:`k` alone,
    :math:`\phi_{j \mid y=k} = (N_{kj} + \alpha) / (N_k + \alpha V)` with :math:`N_k = \sum_j N_{kj}`
    and :math:`V` words. When the classes are unbalanced, a small class has few words, so its
    :math:`\phi_{\cdot \mid y=k}` is both noisier and pulled harder towards the uniform
    :math:`1/V` by the pseudo-counts than a large class's. The weights
    :math:`\log \phi_{j \mid y=k}` of the classes are then on different scales for reasons that
    have nothing to do with the documents, and the decision
    :math:`\arg\max_k \sum_j x_j \log \phi_{j \mid y=k}` leans towards some classes whatever the prior
    says (Rennie et al.'s "skewed data bias").

    **The complement.** Estimate instead, for every class, the word distribution of all the
    *other* classes:

    .. math::

        \tilde N_{kj} = \sum_{l \ne k} N_{lj}, \qquad
        \tilde\phi_{j \mid k} = \frac{\tilde N_{kj} + \alpha_j}{\sum_{j'} (\tilde N_{kj'} + \alpha_{j'})}.

    With :math:`K` classes each complement pools :math:`K - 1` of them, so every
    :math:`\tilde\phi_{\cdot \mid k}` rests on most of the training words and the estimates of small and
    large classes are about equally reliable: the skew is gone. A document that the complement
    of :math:`k` explains *badly* is likely to belong to :math:`k`, so the decision is

    .. math::

        \hat y = \arg\min_k \sum_j x_j \log \tilde\phi_{j \mid k}
               = \arg\max_k \sum_j x_j w_{kj}, \qquad w_{kj} = -\log \tilde\phi_{j \mid k},

    the multinomial log-likelihood of the complement with its sign flipped. The class prior is
    dropped, as in Rennie et al. (its effect is small next to the words of a document) and in
    scikit-learn: ``class_log_prior_`` is computed (``fit_prior``, ``class_prior``) but does not
    enter the scores, which scikit-learn only adds in the single-class case that this course
    refuses (one class leaves nothing to classify).

    **norm=True** (step 8 of Rennie et al.'s Table 9) rescales each class's weights to sum to
    one: ``feature_log_prob_`` is :math:`\log \tilde\phi_{j \mid k} / \sum_{j'} \log \tilde\phi_{j' \mid k}`,
    so that a class whose complement puts mass on fewer words does not get larger weights just
    for that. The default ``norm=False`` is what Mahout and Weka do.

    The scores :math:`\sum_j x_j w_{kj}` are returned by :meth:`predict_joint_log_proba`, and
    :meth:`predict_proba` normalises them by the log-sum-exp over the classes, exactly as
    scikit-learn does; they are *not* the log-probability of a generative model of the document,
    so the "probabilities" rank the classes but are not calibrated.

    Parameters
    ----------
    alpha : float or array_like of shape (n_features,), default 1.0
        Pseudo-count added to every complement count, one for all words or one per word.
    force_alpha : bool, default True
        As in scikit-learn: if False and ``alpha < 1e-10`` (any entry), it is raised to 1e-10
        with a warning; if True alpha is kept as given.
    fit_prior : bool, default True
        Learn ``class_log_prior_`` from the class frequencies (not used in the scores).
    class_prior : array_like of shape (n_classes,), optional
        Fixed class prior stored in ``class_log_prior_`` (not used in the scores).
    norm : bool, default False
        Normalise each class's weights (see above).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        Number of training documents of each class (weighted by ``sample_weight``).
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior; not used in the scores.
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`N_{kj}`: the summed (weighted) counts of each word in each class.
    feature_all_ : ndarray of shape (n_features,)
        :math:`\sum_k N_{kj}`: the count of each word over all classes, so that
        :math:`\tilde N_{kj}` is ``feature_all_ - feature_count_[k - 1]``.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        The weights :math:`w_{kj} = -\log \tilde\phi_{j \mid k}` (with ``norm=True``,
        :math:`\log \tilde\phi_{j \mid k} / \sum_{j'} \log \tilde\phi_{j' \mid k}`).
    n_features_in_ : int
        Number of features (the vocabulary size).
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    With ``alpha = 0`` (``force_alpha=True``) a word seen in class :math:`k` only has
    :math:`\tilde\phi_{j \mid k} = 0` and an infinite weight, where scikit-learn returns NaN
    probabilities. Here the scores follow the limit :math:`\alpha \to 0^+`: a document that
    contains such words goes to the class(es) with the most occurrences of them, the finite
    weights deciding between those; with ``norm=True`` the weights of a class with :math:`r`
    such words tend to :math:`1/r` on them and to 0 elsewhere; a class with no word outside it
    has a uniform complement :math:`\tilde\phi_{j \mid k} = 1/V` (the limit of
    :math:`\alpha / (V\alpha)`). With a single feature every :math:`\tilde\phi_{1 \mid k} = 1`, so
    with ``norm=True`` the weights are :math:`0/0`: here 0 (no evidence, the classes tie), in
    scikit-learn NaN. Otherwise, with ``alpha > 0``, every number equals scikit-learn's.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3, 0, 1], [2, 0, 0], [0, 2, 1], [0, 3, 0], [1, 2, 0]])
    >>> model = ComplementNB().fit(X, ["ham", "ham", "spam", "spam", "spam"])
    >>> model.feature_all_
    array([6., 7., 2.])
    >>> np.exp(-model.feature_log_prob_[0]).round(3)   # ham's complement: (1+1, 7+1, 1+1) / 12
    array([0.167, 0.667, 0.167])
    >>> model.predict([[1, 0, 0], [0, 1, 1]])
    array(['ham', 'spam'], dtype='<U4')

    References
    ----------
    Rennie, J. D. M., Shih, L., Teevan, J. and Karger, D. R. (2003). Tackling the poor
    assumptions of naive Bayes text classifiers. In *Proceedings of ICML 2003*, 616-623.
    """

    def __init__(
        self,
        alpha: float | ArrayLike = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        norm: bool = False,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.norm = norm

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _data(self, X: Any) -> NDArray[Any]:
        return _word_counts(X, type(self).__name__)  # refuse negative counts, keep the rest as they are

    def _estimate(self, alpha: float | NDArray[np.float64]) -> None:
        self.feature_all_ = self.feature_count_.sum(axis=0)
        complement = self.feature_all_ + alpha - self.feature_count_  # N~_cj + alpha_j
        total = complement.sum(axis=1, keepdims=True)
        empty = total[:, 0] == 0  # alpha = 0 and no word outside class c: the limit is uniform
        complement[empty], total[empty] = 1.0, complement.shape[1]
        with np.errstate(divide="ignore"):  # alpha = 0: a word seen in class c only has theta~ = 0
            logged = np.log(complement / total)
        zero = np.isneginf(logged)
        if self.norm:
            summed = logged.sum(axis=1, keepdims=True)  # 0 only with one feature (theta~ = 1)
            with np.errstate(invalid="ignore"):  # -inf / -inf in the rows that have zeros
                weights = logged / np.where(summed == 0, 1.0, summed)
            many = zero.sum(axis=1, keepdims=True)  # the limit alpha -> 0: 1/m on the zeros
            self.feature_log_prob_ = np.where(many > 0, zero / np.maximum(many, 1), weights)
        else:
            self.feature_log_prob_ = -logged

    def _joint(self, X: Any, where: str) -> NDArray[np.float64]:
        weights = self.feature_log_prob_
        infinite = np.isposinf(weights)  # only with alpha = 0 and norm=False
        if not infinite.any():
            return np.asarray(X @ weights.T, dtype=np.float64)
        # alpha = 0: infinite weights. Zero entries of X must contribute 0 (not 0 * inf = NaN);
        # a row with words of infinite weight goes to the classes with the most such words.
        joint = np.asarray(X @ np.where(infinite, 0.0, weights).T, dtype=np.float64)
        hits = np.asarray(X @ infinite.T.astype(np.float64))
        joint[hits < hits.max(axis=1, keepdims=True)] = -np.inf
        return joint
