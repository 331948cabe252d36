r"""Gaussian naive Bayes: each feature is normal within a class, independently.

Derived in notebooks/03.03-Gaussian-and-Multiclass-Naive-Bayes.ipynb.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lecturekit.naive_bayes.base import (
    _BaseNB,
    _checked_prior,
)


class GaussianNB(_BaseNB):
    r"""Gaussian naive Bayes: each feature is normal within a class, independently.

    The estimates are the class means :math:`\mu_{kj}` (``theta_``) and the maximum-likelihood
    variances :math:`\sigma^2_{kj}` (divided by :math:`m_k`, not :math:`m_k - 1`) plus
    ``epsilon_ = var_smoothing * max_j Var(x_j)``, the largest variance of any feature over *all*
    training data, as in scikit-learn (with ``sample_weight`` the class means and variances are
    weighted, ``epsilon_`` is not, as in scikit-learn). :meth:`partial_fit` merges batches with
    the pairwise update of Chan, Golub and LeVeque (1979), weighted as scikit-learn's
    ``_update_mean_variance``, and keeps running totals of the overall variance as well,
    so that ``epsilon_`` (and hence ``var_``) is the same as after one :meth:`fit` on all the data.
    (scikit-learn recomputes ``epsilon_`` from the latest batch alone.)

    Parameters
    ----------
    priors : array_like of shape (n_classes,), optional
        Fixed class prior (non-negative, summing to one); by default the class frequencies.
    var_smoothing : float, default 1e-9
        Fraction of the largest feature variance added to every variance, for stability.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Number (with ``sample_weight``, total weight) of training points of each class.
    class_prior_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    theta_ : ndarray of shape (n_classes, n_features)
        Class means. Estimated in float64 and stored, like ``var_`` and ``class_prior_``, in the
        float type of the last X (float32 for float32 data, as in scikit-learn).
    var_ : ndarray of shape (n_classes, n_features)
        Class variances (MLE) plus ``epsilon_``.
    epsilon_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0], [12.0]])
    >>> model = GaussianNB(var_smoothing=0.0).fit(X, [0, 0, 1, 1])
    >>> model.theta_.ravel(), model.var_.ravel()
    (array([ 1., 11.]), array([1., 1.]))
    >>> model.predict([[4.0], [8.0]])
    array([0, 1])

    Derived in notebooks/03.03-Gaussian-and-Multiclass-Naive-Bayes.ipynb.
    """

    _sparse = False

    def __init__(self, priors: ArrayLike | None = None, var_smoothing: float = 1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _start(self, classes: NDArray[Any], n_features: int) -> None:
        self.classes_ = classes
        self.class_count_ = np.zeros(classes.size)
        self._mean = np.zeros((classes.size, n_features))  # float64 whatever X is, as _mle_var
        self._mle_var = np.zeros((classes.size, n_features))
        self._total = (0.0, np.zeros(n_features), np.zeros(n_features))  # n, mean, variance

    @staticmethod
    def _merge(n_a, mean_a, var_a, n_b, mean_b, var_b):
        """Chan et al.: mean and (MLE) variance of two groups from their own means and variances."""
        n = n_a + n_b
        if n_a == 0:
            return n_b, mean_b, var_b
        delta = mean_b - mean_a
        mean = mean_a + delta * (n_b / n)
        var = (n_a * var_a + n_b * var_b + delta**2 * (n_a * n_b / n)) / n
        return n, mean, var

    def _update(
        self, X: NDArray[Any], codes: NDArray[np.intp], sample_weight: NDArray[np.float64] | None = None
    ) -> None:
        smoothing = self.var_smoothing
        if (
            isinstance(smoothing, bool)
            or not isinstance(smoothing, Real)
            or not np.isfinite(smoothing)
            or smoothing < 0
        ):
            raise ValueError(f"var_smoothing must be a finite number >= 0; got {smoothing!r}. The default is 1e-9.")
        # Estimates accumulate in float64; theta_, var_ and class_prior_ are stored in X's float
        # type, as scikit-learn stores them (float32 data, float32 estimates).
        dtype = np.float32 if np.asarray(X).dtype == np.float32 else np.float64
        X = np.asarray(X, dtype=np.float64)
        for c in np.unique(codes):
            rows = codes == c
            X_c = X[rows]
            if sample_weight is None:
                batch = X_c.shape[0], X_c.mean(axis=0), X_c.var(axis=0)
            else:  # weighted mean and (MLE) variance, as scikit-learn's _update_mean_variance
                w_c = sample_weight[rows]
                n_c = float(w_c.sum())
                if np.isclose(n_c, 0.0):  # rows of weight ~0 leave the estimates unchanged
                    self.class_count_[c] += n_c
                    continue
                mean = np.average(X_c, axis=0, weights=w_c)
                batch = n_c, mean, np.average((X_c - mean) ** 2, axis=0, weights=w_c)
            self.class_count_[c], self._mean[c], self._mle_var[c] = self._merge(
                self.class_count_[c], self._mean[c], self._mle_var[c], *batch
            )
        # epsilon_ comes from the unweighted variance of X, as in scikit-learn
        self._total = self._merge(*self._total, X.shape[0], X.mean(axis=0), X.var(axis=0))
        self.epsilon_ = float(smoothing * np.max(self._total[2]))
        variances = self._mle_var + self.epsilon_
        if self.priors is None:
            prior = self.class_count_ / self.class_count_.sum()
        else:
            prior = _checked_prior(self.priors, "priors", self.classes_)
        with np.errstate(divide="ignore"):
            self.class_log_prior_ = np.log(prior)
        self.theta_, self.var_, self.class_prior_ = (
            self._mean.astype(dtype),
            variances.astype(dtype),
            prior.astype(dtype),
        )
        if np.any(variances[self.class_count_ > 0] <= 0):
            raise ValueError(
                "A feature is constant within a class and var_smoothing is 0 (or every feature is "
                "constant), so its variance is 0 and the Gaussian density is undefined; use "
                "var_smoothing > 0 (the default 1e-9), or drop constant features."
            )

    def _joint(self, X: NDArray[Any], where: str) -> NDArray[np.float64]:
        X = np.asarray(X, dtype=np.float64)
        theta, var = np.asarray(self.theta_, dtype=np.float64), np.asarray(self.var_, dtype=np.float64)
        joint = np.empty((X.shape[0], self.classes_.size))
        # divide/invalid: a class not seen yet (partial_fit); over: huge X, refused in _normalise
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for c in range(self.classes_.size):
                normaliser = -0.5 * np.sum(np.log(2.0 * np.pi * var[c]))
                joint[:, c] = self.class_log_prior_[c] + normaliser - 0.5 * np.sum((X - theta[c]) ** 2 / var[c], axis=1)
        joint[:, self.class_count_ == 0] = -np.inf
        return joint

    def sample(
        self, n_samples: int = 1, y: ArrayLike | None = None, *, random_state: Any = None
    ) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """Generate points: a class from the prior (or ``y``), then ``N(theta_[c], var_[c])``.

        Parameters
        ----------
        n_samples : int, default 1
        y : array_like of shape (n_samples,), optional
        random_state : int, numpy.random.Generator or RandomState, optional

        Returns
        -------
        X_sample : ndarray of shape (n_samples, n_features)
        y_sample : ndarray of shape (n_samples,)
        """
        rng = self._sample_rng(random_state)
        codes, labels = self._sample_classes(n_samples, y, rng)
        return rng.normal(self.theta_[codes], np.sqrt(self.var_[codes])), labels
