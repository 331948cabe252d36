r"""Categorical naive Bayes: each feature takes one of a few values, drawn from its own distribution.

The categorical event model: given the class, feature :math:`j` is one draw from a categorical
distribution over its :math:`R_j` categories, coded :math:`0, \dots, R_j - 1`, independently of the other features
(notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb estimates one such distribution; chapter 4
smooths it).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from lecturekit.naive_bayes._counting import _class_feature_counts, _count_scores
from lecturekit.naive_bayes.base import _DiscreteNB


class CategoricalNB(_DiscreteNB):
    r"""Categorical naive Bayes: one categorical distribution per feature and class.

    Feature :math:`j` takes one of :math:`R_j` values, coded ``0, 1, ..., R_j - 1``
    (:math:`R_j` is ``n_categories_[j - 1]``). Given the class :math:`k`, it is one draw from a
    categorical distribution :math:`(\theta_{kjv})_v`, independently of the other features. With
    :math:`N_{kjv}` the number of training rows of class :math:`k` whose feature :math:`j` has
    value :math:`v` (``category_count_[j - 1][k - 1, v]``), the add-alpha estimate is

    .. math::

        \theta_{kjv} = \frac{N_{kjv} + \alpha}{m_k + \alpha R_j},

    where :math:`m_k = \sum_v N_{kjv}` is the number of rows of class :math:`k`: each feature is
    its own categorical distribution, smoothed with its own number of values. A row scores
    :math:`\log \pi_k + \sum_j \log \theta_{k j x_j}` (the notation of notation.md).

    This is multinomial naive Bayes on the one-hot encoding of X (one column per feature and
    category, exactly one 1 per feature), and it is computed that way: the one-hot matrix is
    built sparse (``n_samples * n_features`` stored ones) and counted and scored by the same code
    as :class:`~lecturekit.naive_bayes.multinomial.MultinomialNB`, never densified. The difference from
    the multinomial model lies in the normalisation: :math:`(\theta_{kjv})_v` sums to one over the
    values of feature :math:`j` alone, not over all columns.

    Categories must be coded as the integers ``0, 1, ..., R_j - 1`` (e.g. by
    ``sklearn.preprocessing.OrdinalEncoder``); integer-valued floats such as ``2.0`` are accepted.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count added to every category count (1.0: Laplace smoothing). One number, as in
        scikit-learn's CategoricalNB.
    force_alpha : bool, default True
        As in scikit-learn: if False and ``alpha < 1e-10``, alpha is set to 1e-10 with a
        warning; if True alpha is kept as given (alpha=0 gives the raw MLE).
    fit_prior : bool, default True
        Learn the class prior from the class frequencies; if False use a uniform prior.
    class_prior : array_like of shape (n_classes,), optional
        Fixed class prior (non-negative, summing to one), in the order of ``classes_``.
    min_categories : int or array_like of shape (n_features,), optional
        The smallest number of categories of every feature (or of each feature): a feature with
        ``min_categories`` :math:`c` has at least the categories ``0..c-1``, even when the
        training data lack some, which then get the smoothed probability
        :math:`\alpha / (m_k + \alpha R_j)`. None: ``max(X[:, j - 1]) + 1`` for feature j.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        :math:`m_k`, rows per class (weighted by ``sample_weight``).
    category_count_ : list of n_features ndarrays of shape (n_classes, n_categories_[j - 1])
        :math:`N_{kjv}`, (weighted) rows of class k whose feature j has value v.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior :math:`\log \pi_k`.
    feature_log_prob_ : list of n_features ndarrays of shape (n_classes, n_categories_[j - 1])
        :math:`\log \theta_{kjv}`.
    n_categories_ : ndarray of shape (n_features,), int64
        :math:`R_j`, the number of categories of each feature.
    n_features_in_ : int
        Number of features.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names, when X was a DataFrame with string column names.

    Notes
    -----
    Deliberate differences from scikit-learn 1.9.1, whose estimates these equal otherwise:

    - A non-integer category such as 1.5 raises a ValueError; scikit-learn silently truncates it
      to 1. Negative categories raise a ValueError in both.
    - A category at predict time beyond those known from fitting (``X[:, j] >= n_categories_[j]``)
      raises a ValueError that names the feature and the fix (``min_categories``);
      scikit-learn raises an IndexError from NumPy.
    - After :meth:`partial_fit`, ``n_categories_`` counts the categories of all batches so far
      (it equals the width of ``category_count_[j]``, so the model equals one :meth:`fit` on
      all the batches); scikit-learn keeps the count of the latest batch only.
    - With ``alpha = 0`` a class with no rows yet (:meth:`partial_fit`) gets
      :math:`\log \theta = -\infty` (it cannot produce any row until seen) rather than NaN.
    - ``min_categories`` must hold integers >= 1 (scikit-learn ignores entries below 1 of an
      array, and refuses unsigned integer arrays).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0, 2], [0, 1], [1, 0], [2, 0]])   # two features: 3 and 3 categories
    >>> model = CategoricalNB().fit(X, ["a", "a", "b", "b"])
    >>> model.n_categories_
    array([3, 3])
    >>> model.category_count_[0]   # feature 0: class a saw 0, 0; class b saw 1, 2
    array([[2., 0., 0.],
           [0., 1., 1.]])
    >>> np.exp(model.feature_log_prob_[0][0]).round(3)   # (2+1, 0+1, 0+1) / (2 + 3)
    array([0.6, 0.2, 0.2])
    >>> model.predict([[0, 2], [2, 0]])
    array(['a', 'b'], dtype='<U1')
    """

    _sparse = False  # as in scikit-learn: one categorical value per cell, no implicit zeros

    def __init__(
        self,
        alpha: float = 1.0,
        force_alpha: bool = True,
        fit_prior: bool = True,
        class_prior: ArrayLike | None = None,
        min_categories: int | ArrayLike | None = None,
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        tags.input_tags.positive_only = True
        return tags

    def _start(self, classes: NDArray[Any], n_features: int) -> None:
        self.classes_ = classes
        self.class_count_ = np.zeros(classes.size)
        self.category_count_ = [np.zeros((classes.size, 0)) for _ in range(n_features)]
        self.n_categories_ = np.zeros(n_features, dtype=np.int64)

    def _check_alpha(self) -> float:
        if np.ndim(self.alpha) != 0:
            raise ValueError(
                f"CategoricalNB takes one alpha for every category of every feature (as "
                f"scikit-learn's CategoricalNB does), not an array of shape {np.shape(self.alpha)}; "
                f"the features have different numbers of categories. Use a number such as alpha=1.0."
            )
        return super()._check_alpha()

    def _categories(self, X: NDArray[Any], where: str) -> NDArray[Any]:
        """X checked as category codes: no negative, non-integer or (in fit) huge values."""
        if X.dtype.kind == "f":
            fractional = np.argwhere(np.floor(X) != X)  # X is finite: checked before
            if fractional.size:
                row, feature = fractional[0]
                raise ValueError(
                    f"X passed to CategoricalNB.{where} holds {X[row, feature].item()!r} (row {row}, feature "
                    f"{feature}), which is not a category code: categories are the integers 0, 1, "
                    f"..., n - 1 of each feature. Encode them with sklearn.preprocessing.OrdinalEncoder."
                )
        if X.size and X.min() < 0:
            raise ValueError(
                "Negative values in data passed to CategoricalNB (input X): categories are the "
                "integers 0, 1, ..., n - 1 of each feature. Encode them with "
                "sklearn.preprocessing.OrdinalEncoder."
            )
        if where == "fit" and X.size and X.max() >= 2**31:  # a table column per code up to the largest
            raise ValueError(
                f"X passed to CategoricalNB.fit holds the category code {X.max()}: every feature gets "
                f"one table column per code 0..max, which would not fit in memory. Encode the "
                f"categories as 0, 1, ..., n - 1 with sklearn.preprocessing.OrdinalEncoder."
            )
        return X

    def _min_categories(self) -> NDArray[np.int64]:
        d, given = self.n_features_in_, self.min_categories
        if given is None:
            return np.zeros(d, dtype=np.int64)
        values = np.asarray(given)
        if (
            isinstance(given, bool)
            or values.dtype.kind not in "iu"
            or values.shape not in ((), (d,))
            or np.any(values < 1)
        ):
            shown = f"an array of shape {values.shape} and dtype {values.dtype}" if values.ndim else repr(given)
            raise ValueError(
                f"min_categories is the smallest number of categories of each feature: None, an "
                f"integer >= 1, or {d} integers >= 1 (one per feature); got {shown}."
            )
        return np.broadcast_to(values.astype(np.int64), (d,))

    def _one_hot(self, X: NDArray[np.intp]) -> sp.csr_matrix:
        """The sparse one-hot encoding: column ``offset_i + x_i`` for feature i, one 1 per feature."""
        n, d = X.shape
        offsets = np.concatenate([[0], np.cumsum(self.n_categories_)])
        columns = (X + offsets[:-1]).ravel()
        return sp.csr_matrix((np.ones(n * d), columns, np.arange(0, n * d + 1, d)), shape=(n, offsets[-1]))

    def _update(
        self, X: NDArray[Any], codes: NDArray[np.intp], sample_weight: NDArray[np.float64] | None = None
    ) -> None:
        alpha = self._check_alpha()
        X = self._categories(X, "fit").astype(np.intp, copy=False)
        n_categories = np.maximum(np.maximum(self.n_categories_, self._min_categories()), X.max(axis=0) + 1)
        self.category_count_ = [
            np.pad(count, [(0, 0), (0, n - count.shape[1])])
            for count, n in zip(self.category_count_, n_categories, strict=True)
        ]
        self.n_categories_ = n_categories.astype(np.int64)
        counts = _class_feature_counts(self._one_hot(X), codes, self.classes_.size, sample_weight=sample_weight)
        for count, block in zip(
            self.category_count_, np.split(counts, np.cumsum(n_categories)[:-1], axis=1), strict=True
        ):
            count += block
        self.class_count_ += np.bincount(codes, weights=sample_weight, minlength=self.classes_.size)
        self.feature_log_prob_ = []
        for count in self.category_count_:
            smoothed = count + alpha
            total = smoothed.sum(axis=1, keepdims=True)
            with np.errstate(divide="ignore", invalid="ignore"):  # alpha = 0: zero counts
                logs = np.log(smoothed) - np.log(total)  # scikit-learn's formula, to the last bit
            self.feature_log_prob_.append(np.where(total > 0, logs, -np.inf))
        self._log_prob = np.concatenate(self.feature_log_prob_, axis=1)
        self.class_log_prior_ = self._class_log_prior()

    def _joint(self, X: NDArray[Any], where: str) -> NDArray[np.float64]:
        X = self._categories(X, "predict")
        unseen = np.argwhere(self.n_categories_ <= X)  # before the cast: 1e20 stays large
        if unseen.size:
            row, feature = unseen[0]
            n = self.n_categories_[feature]
            raise ValueError(
                f"X passed to CategoricalNB.predict holds category {X[row, feature].item()!r} of feature "
                f"{feature} (row {row}), but the model knows only the categories 0..{n - 1} of that "
                f"feature (n_categories_[{feature}] = {n}). Refit with min_categories set to the "
                f"number of categories of each feature, so that unseen ones get the smoothed "
                f"probability alpha / (N_c + alpha * n)."
            )
        return _count_scores(self._one_hot(X.astype(np.intp, copy=False)), self._log_prob, self.class_log_prior_)
