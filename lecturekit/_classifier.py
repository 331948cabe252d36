r"""Bayes' rule as scikit-learn's classifier methods, written once for every model that has a score.

Private. :class:`_ScoredClassifier` gives :class:`lecturekit.gda.GDA`,
:class:`lecturekit.shrinkage.RDA` and :class:`lecturekit.logistic.LogisticRegression` their
``predict``, ``predict_proba``, ``predict_log_proba`` and ``decision_function``;
:class:`_JointClassifier` adds ``predict_joint_log_proba`` for the generative ones. A model says
how it scores a checked X, and these methods turn that score into posteriors:

* ``_predict_input(X)``: X checked for prediction (the model is fitted, X has its columns, and,
  where the model checks it up front, no NaN or infinity);
* ``_log_odds(X, where)``, for two classes: :math:`a(x) = \log p(y = c_1 \mid x) - \log p(y = c_0
  \mid x)`, of shape (n_samples,) (by default the difference of the two columns of ``_joint``);
* ``_joint(X, where)``, for more classes: :math:`\log p(x, y = k)`, of shape (n_samples,
  n_classes); ``_posterior_scores(X, where)`` may give anything that differs from it by a
  per-row constant, when that is cheaper (by default it is ``_joint``).

``where`` is the name of the public method, for the model's error messages. The two-class
posteriors are logistic functions of :math:`a` (:math:`p(y = c_1 \mid x) = \sigma(a)`), each
column computed without cancellation; the K-class ones are the softmax of the scores.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import expit, log_expit, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin


class _ScoredClassifier(ClassifierMixin, BaseEstimator):
    """predict, predict_proba, predict_log_proba and decision_function from one score (module docstring)."""

    def _log_odds(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        joint = self._joint(X, where)
        return joint[:, 1] - joint[:, 0]

    def _posterior_scores(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        return self._joint(X, where)

    def predict_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Log posteriors :math:`\log p(y = k \mid x)`, exact for huge margins.

        For two classes :math:`(\log\sigma(-a), \log\sigma(a))` of the log-odds :math:`a`; for
        more, the joint log-likelihoods normalised by their log-sum-exp over the classes.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Points whose class posteriors are wanted, one per row.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        X = self._predict_input(X)
        if self.classes_.size == 2:
            # log-sum-exp of two terms: log p(y=1|x) = log sigmoid(a), log p(y=0|x) = log sigmoid(-a)
            a = self._log_odds(X, "predict_log_proba")
            return np.column_stack([log_expit(-a), log_expit(a)])
        scores = self._posterior_scores(X, "predict_log_proba")
        return scores - logsumexp(scores, axis=1, keepdims=True)

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Posterior class probabilities :math:`p(y = k \mid x)`.

        For two classes :math:`(\sigma(-a), \sigma(a))` of the log-odds :math:`a`, each computed
        without cancellation; for more, the softmax of the joint log-likelihoods.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Points to classify, one per row.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Each row sums to one; columns in the order of ``classes_``.
        """
        X = self._predict_input(X)
        if self.classes_.size == 2:
            a = self._log_odds(X, "predict_proba")
            proba = np.empty((a.size, 2))
            expit(-a, out=proba[:, 0])  # not 1 - p: that would round a tiny p(y=0|x) to zero
            expit(a, out=proba[:, 1])
            return proba
        # The softmax of the scores, normalised by the sum itself (rather than by exp(logsumexp))
        # so that each row sums to one to within rounding, however large the scores are.
        scores = self._posterior_scores(X, "predict_proba")
        proba = np.exp(scores - scores.max(axis=1, keepdims=True))
        proba /= proba.sum(axis=1, keepdims=True)
        return proba

    def predict(self, X: ArrayLike) -> NDArray[Any]:
        """The most probable class of each row (the Bayes decision rule).

        For two classes, ``classes_[1]`` where the log-odds are positive.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Points to label.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        X = self._predict_input(X)  # first: it raises NotFittedError before fit
        if self.classes_.size == 2:
            return self.classes_[(self._log_odds(X, "predict") > 0).astype(np.intp)]
        return self.classes_[np.argmax(self._posterior_scores(X, "predict"), axis=1)]

    def decision_function(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Log-odds for two classes; joint log-likelihoods for more.

        The shapes follow scikit-learn's discriminant analysis: with two classes, the log-odds
        :math:`a = \log p(y = c_1 \mid x) - \log p(y = c_0 \mid x)` (positive means
        ``classes_[1]``); with K > 2 classes, :math:`\log p(x, y = k)`, whose row-wise argmax is
        the prediction.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Points to score, in the columns seen by ``fit``.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        X = self._predict_input(X)
        if self.classes_.size == 2:
            return self._log_odds(X, "decision_function")
        return self._joint(X, "decision_function")


class _JointClassifier(_ScoredClassifier):
    """A generative classifier: also ``predict_joint_log_proba``, from ``_joint``."""

    def predict_joint_log_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Joint log-likelihoods :math:`\log p(x, y = k) = \log \pi_k + \log p(x \mid y = k)`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Points, in the columns seen by ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return self._joint(self._predict_input(X), "predict_joint_log_proba")
