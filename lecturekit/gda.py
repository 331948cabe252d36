r"""Gaussian discriminant analysis: a Gaussian per class, and Bayes' rule.

The generative story is :math:`y \sim \mathrm{Categorical}(\pi)` and
:math:`x \mid y = k \sim \mathcal N(\mu_k, \Sigma_k)`. Maximum likelihood gives closed forms: the
class frequencies, the class means, and the average outer product of the residuals
:math:`x^{(i)} - \mu_{y^{(i)}}` (divided by m, not m - 1). With one covariance shared by all classes
(:math:`\Sigma_k = \Sigma`, linear discriminant analysis) the posterior is a logistic function
of a linear score; with one covariance per class (quadratic discriminant analysis) the score is
quadratic.

Everything runs through Cholesky factors (:mod:`lecturekit.gaussian`): no covariance is inverted
and no determinant is formed.

Derived in ``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb`` (the model and its
estimates), ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb`` (the linear log-odds) and
``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb`` (one covariance per class).
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_solve, solve_triangular
from sklearn.utils.validation import check_is_fitted, validate_data

from lecturekit._checks import check_finite, class_codes, fitted_input, label
from lecturekit._classifier import _JointClassifier
from lecturekit.gaussian import cholesky

__all__ = ["GDA"]

_LOG_2PI = float(np.log(2.0 * np.pi))


def _check_finite(X: NDArray[np.float64], where: str) -> None:
    check_finite(
        X,
        f"X passed to GDA.{where} contains NaN or infinite values; a Gaussian cannot "
        f"score them. Remove those rows or impute the values first (e.g. "
        f"sklearn.impute.SimpleImputer).",
    )


class GDA(_JointClassifier):
    r"""Gaussian discriminant analysis with a shared (LDA) or per-class (QDA) covariance.

    Fitting computes the maximum-likelihood estimates

    .. math::

        \pi_k = \frac{m_k}{m}, \qquad
        \mu_k = \frac{1}{m_k} \sum_{i: y^{(i)} = k} x^{(i)}, \qquad
        \Sigma = \frac{1}{m} \sum_{i} (x^{(i)} - \mu_{y^{(i)}})(x^{(i)} - \mu_{y^{(i)}})^\top
        \quad\text{or}\quad
        \Sigma_k = \frac{1}{m_k} \sum_{i: y^{(i)} = k} (x^{(i)} - \mu_k)(x^{(i)} - \mu_k)^\top,

    with :math:`m_k` of the :math:`m` training examples in class :math:`k`, and prediction applies
    Bayes' rule to :math:`\log p(x, y = k) = \log \pi_k + \log \mathcal N(x; \mu_k, \Sigma_k)`.

    Parameters
    ----------
    shared_covariance : bool, default True
        True: one covariance for all classes (linear discriminant analysis, linear decision
        boundaries). False: one covariance per class (quadratic discriminant analysis).
    reg_covar : float, default 0.0
        Non-negative number added to the diagonal of every covariance (as in
        :class:`sklearn.mixture.GaussianMixture`), which keeps it positive definite when features
        are collinear or a class has no more points than there are features.
    priors : array_like of shape (n_classes,), optional
        Class priors :math:`\pi`, in the order of ``classes_`` (the sorted labels); they must be
        non-negative and sum to one. By default the class frequencies (the MLE). Changing them
        moves the decision boundary but not the means or covariances.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    priors_ : ndarray of shape (n_classes,)
        Class priors used for prediction.
    means_ : ndarray of shape (n_classes, n_features)
        Class means :math:`\mu_k`.
    covariance_ : ndarray of shape (n_features, n_features)
        Pooled covariance :math:`\Sigma` (plus ``reg_covar``); only when ``shared_covariance``.
    covariances_ : ndarray of shape (n_classes, n_features, n_features)
        Per-class covariances :math:`\Sigma_k` (plus ``reg_covar``); only without
        ``shared_covariance``.
    class_count_ : ndarray of shape (n_classes,)
        Number of training examples of each class.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The column names of ``X`` in :meth:`fit`, only when they were all strings.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0, 0.1], [1.0, 0.9], [0.2, 0.0], [3.0, 3.1], [4.0, 3.9], [3.2, 3.0]])
    >>> y = np.array(["cat", "cat", "cat", "dog", "dog", "dog"])
    >>> model = GDA().fit(X, y)
    >>> model.predict([[0.5, 0.5], [3.5, 3.5]])
    array(['cat', 'dog'], dtype='<U3')
    >>> model.means_
    array([[0.4       , 0.33333333],
           [3.4       , 3.33333333]])

    Derived in ``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb`` (the estimates, the joint
    log-likelihoods and Bayes' rule: ``predict_joint_log_proba``, ``predict_proba``, ``predict``);
    the log-odds of ``decision_function`` and :meth:`logistic_parameters` in
    ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``; the per-class covariance in
    ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
    """

    def __init__(self, shared_covariance: bool = True, reg_covar: float = 0.0, priors: ArrayLike | None = None):
        self.shared_covariance = shared_covariance
        self.reg_covar = reg_covar
        self.priors = priors

    # ----------------------------------------------------------------------- fitting

    def fit(self, X: ArrayLike, y: ArrayLike) -> GDA:
        """Maximum-likelihood estimates of the priors, class means and covariance(s).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training inputs (finite real numbers).
        y : array_like of shape (n_samples,)
            Class labels of any sortable type (integers, strings, ...); at least two classes.

        Returns
        -------
        self : GDA
            The fitted model.

        Raises
        ------
        ValueError
            For NaN or infinite values in ``X``, a ``y`` of another length, fewer than two
            classes, invalid parameters, or a singular covariance (the message says which one and
            suggests ``reg_covar``).

        Derived in ``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb``.
        """
        shared, reg_covar = self._check_params()
        X, y_codes, classes = self._check_training_data(X, y)
        n, d = X.shape
        n_classes = classes.size
        counts = np.bincount(y_codes, minlength=n_classes)
        priors = self._check_priors(counts, classes)

        if shared:
            # Class sums with one BLAS product against the (n, K) indicator matrix of y.
            indicator = np.zeros((n, n_classes))
            indicator[np.arange(n), y_codes] = 1.0
            means = (indicator.T @ X) / counts[:, np.newaxis]
            del indicator
            # Residuals x_i - mu_{y_i}, then the pooled scatter in one symmetric product (syrk).
            residuals = np.take(means, y_codes, axis=0)
            np.subtract(X, residuals, out=residuals)
            cov = residuals.T @ residuals / n
            del residuals
            cov = 0.5 * (cov + cov.T)
            cov.flat[:: d + 1] += reg_covar
            chol = cholesky(cov, name="the shared (pooled) covariance")
        else:
            means = np.empty((n_classes, d))
            cov = np.empty((n_classes, d, d))
            chol = np.empty((n_classes, d, d))
            for k in range(n_classes):
                X_k = X[y_codes == k]  # a copy, so centring it in place leaves X alone
                means[k] = X_k.mean(axis=0)
                X_k -= means[k]
                cov_k = X_k.T @ X_k / counts[k]
                cov[k] = 0.5 * (cov_k + cov_k.T)
                cov[k].flat[:: d + 1] += reg_covar
                try:
                    chol[k] = cholesky(cov[k], name=f"the covariance of class {label(classes[k])}")
                except ValueError as exc:
                    if counts[k] <= d:
                        raise ValueError(
                            f"{exc} Class {label(classes[k])} has {counts[k]} example(s) in {d} "
                            f"dimensions, and the covariance of m points in d dimensions is "
                            f"singular whenever m <= d; with shared_covariance=False every class "
                            f"needs more than {d} examples unless reg_covar > 0."
                        ) from exc
                    raise

        self.classes_ = classes
        self.class_count_ = counts
        self.priors_ = priors
        self.means_ = means
        if shared:
            self.covariance_ = cov
        else:
            self.covariances_ = cov
        self._set_prediction_constants(chol)
        return self

    def _check_params(self) -> tuple[bool, float]:
        if not isinstance(self.shared_covariance, (bool, np.bool_)):
            raise ValueError(f"shared_covariance must be True (LDA) or False (QDA); got {self.shared_covariance!r}.")
        reg = self.reg_covar
        if isinstance(reg, bool) or not isinstance(reg, Real) or not np.isfinite(reg) or reg < 0:
            raise ValueError(
                f"reg_covar is added to the diagonal of the covariance and must be a finite number "
                f">= 0; got {reg!r}. Use 0.0 for the plain MLE, or a small value such as 1e-6."
            )
        return bool(self.shared_covariance), float(reg)

    def _check_training_data(self, X: ArrayLike, y: ArrayLike | None):
        if y is None:
            raise ValueError(
                "GDA requires y to be passed, but the target y is None; call fit(X, y) with one "
                "class label per row of X."
            )
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False)
        _check_finite(X, "fit")
        classes, y_codes = class_codes(
            y,
            X.shape[0],
            "GDA.fit",
            "GDA needs at least two classes, "
            "but y holds only one class ({}): with one class there is "
            "nothing to discriminate. Add examples of another class.",
        )
        return X, y_codes, classes

    def _check_priors(self, counts: NDArray[np.intp], classes: NDArray[Any]) -> NDArray[np.float64]:
        if self.priors is None:
            return counts / counts.sum()
        try:
            priors = np.asarray(self.priors, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"priors must be numbers; got {self.priors!r}.") from exc
        if priors.ndim != 1 or priors.size != classes.size:
            raise ValueError(
                f"priors has shape {priors.shape} but y has {classes.size} classes "
                f"{classes.tolist()}; give one prior per class, in that (sorted) order."
            )
        if not np.all(np.isfinite(priors)) or np.any(priors < 0):
            raise ValueError(f"priors must be finite and non-negative; got {priors.tolist()}.")
        if abs(priors.sum() - 1.0) > 1e-9:
            raise ValueError(
                f"priors must sum to one; they sum to {priors.sum():.10g}. Divide them by their "
                f"sum if they are counts or weights."
            )
        return priors / priors.sum()

    def _set_prediction_constants(self, chol: NDArray[np.float64]) -> None:
        """Precompute what prediction needs from the factors (all O(K d^2), independent of n)."""
        d = self.means_.shape[1]
        with np.errstate(divide="ignore"):  # a zero prior is allowed: log 0 = -inf
            log_priors = np.log(self.priors_)
        self._chol = chol
        if chol.ndim == 2:
            # W = Sigma^{-1} mu_k^T, so x^T Sigma^{-1} mu_k = x . W_k: a single (n, d) @ (d, K)
            # product scores every class. The squared norm of the whitened mean L^{-1} mu_k is
            # mu_k . W_k.
            self._coef = cho_solve((chol, True), self.means_.T, check_finite=False)
            self._intercept = log_priors - 0.5 * np.einsum("kj,jk->k", self.means_, self._coef)
            self._log_normaliser = -0.5 * (d * _LOG_2PI + 2.0 * np.sum(np.log(np.diag(chol))))
            self._coef_covers_all = bool(np.all(np.any(self._coef != 0, axis=1)))
            if self.classes_.size == 2:
                # The log-odds theta . x + theta_0 of notebook 02.03 (see logistic_parameters).
                coef = self._coef[:, 1] - self._coef[:, 0]
                self._logistic = (coef, float(self._intercept[1] - self._intercept[0]))
                self._logistic_covers_all = bool(np.all(coef != 0))
        else:
            log_dets = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=1, axis2=2)), axis=1)
            self._intercept = log_priors - 0.5 * (d * _LOG_2PI + log_dets)

    # ----------------------------------------------------------------------- scores

    def _predict_input(self, X: ArrayLike) -> NDArray[np.float64]:
        """Shape and feature checks; finiteness is checked on the scores (see :meth:`_finite`)."""
        return fitted_input(self, X)

    @staticmethod
    def _finite(
        X: NDArray[np.float64], values: NDArray[np.float64], where: str, covers_all: bool = True
    ) -> NDArray[np.float64]:
        """Return ``values`` (computed from ``X``) once ``X`` is known to hold no NaN or infinity.

        A NaN or an infinity times a finite non-zero number is not finite, and neither is any sum
        that contains it. So when every feature enters ``values`` with a non-zero coefficient
        (``covers_all``), finite values prove that ``X`` is finite, and the (n, d) input needs no
        pass of its own; only otherwise, or when some value is not finite, is ``X`` examined.
        """
        if covers_all and np.all(np.isfinite(values)):
            return values
        _check_finite(X, where)
        if not np.all(np.isfinite(values)):
            raise ValueError(
                f"X passed to GDA.{where} holds values so large that the scores overflow; "
                f"rescale the features (e.g. with sklearn.preprocessing.StandardScaler) before "
                f"fitting and predicting."
            )
        return values

    def _linear_scores(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        """Shared covariance: ``log p(x, y=k)`` up to a term that is the same for every class."""
        products = self._finite(X, X @ self._coef, where, self._coef_covers_all)
        return products + self._intercept

    def _joint(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        if self._chol.ndim == 2:
            # -1/2 ||L^{-1}(x - mu_k)||^2 = -1/2 ||L^{-1}x||^2 + x.W_k - 1/2 mu_k.W_k: one
            # triangular solve whitens every point, whatever the number of classes.
            z = solve_triangular(self._chol, X.T, lower=True, check_finite=False)
            # L^{-1} is triangular with a non-zero diagonal, so every feature enters ||z||^2.
            whitened_sq = self._finite(X, np.einsum("ij,ij->j", z, z), where)
            common = self._log_normaliser - 0.5 * whitened_sq
            return self._finite(X, X @ self._coef, where) + self._intercept + common[:, np.newaxis]
        joint = np.empty((X.shape[0], self.classes_.size))
        for k, chol_k in enumerate(self._chol):
            # (X - mu_k).T is Fortran-ordered: the solve works in place on it.
            z = solve_triangular(chol_k, (X - self.means_[k]).T, lower=True, check_finite=False, overwrite_b=True)
            distances = self._finite(X, np.einsum("ij,ij->j", z, z), where)
            joint[:, k] = self._intercept[k] - 0.5 * distances
        return joint

    def _log_odds(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        """Binary only: ``log p(y=classes_[1] | x) - log p(y=classes_[0] | x)``."""
        if self._chol.ndim == 2:
            coef, intercept = self._logistic
            return self._finite(X, X @ coef, where, self._logistic_covers_all) + intercept
        return super()._log_odds(X, where)

    def _posterior_scores(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        """Anything that differs from ``log p(x, y=k)`` by a per-row constant."""
        return self._linear_scores(X, where) if self._chol.ndim == 2 else self._joint(X, where)

    # ----------------------------------------------------------------------- prediction
    # predict, predict_proba, predict_log_proba, decision_function and predict_joint_log_proba
    # come from _JointClassifier, by Bayes' rule on _log_odds (two classes) and _joint.

    def logistic_parameters(self) -> tuple[NDArray[np.float64], float]:
        r"""The posterior of a binary shared-covariance model as a logistic regression.

        With :math:`\pi = p(y = 1)` the log-odds are linear in :math:`x`:

        .. math::

            \log\frac{p(y = 1 \mid x)}{p(y = 0 \mid x)} = w^\top x + w_0, \quad
            w = \Sigma^{-1}(\mu_1 - \mu_0), \quad
            w_0 = -\tfrac12 \mu_1^\top\Sigma^{-1}\mu_1 + \tfrac12 \mu_0^\top\Sigma^{-1}\mu_0
                + \log\frac{\pi}{1 - \pi},

        so ``predict_proba(X)[:, 1] == expit(X @ coef + intercept)``.

        Returns
        -------
        coef : ndarray of shape (n_features,)
            :math:`w`.
        intercept : float
            :math:`w_0`.

        Raises
        ------
        ValueError
            If the model has more than two classes or one covariance per class.

        Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
        """
        check_is_fitted(self)
        if self.classes_.size != 2:
            raise ValueError(
                f"logistic_parameters needs a binary model; this one has {self.classes_.size} "
                f"classes. With K classes the posterior is a softmax of K linear scores: use "
                f"predict_log_proba, or fit on two classes."
            )
        if self._chol.ndim != 2:
            raise ValueError(
                "logistic_parameters needs a shared covariance; with one covariance per class "
                "(shared_covariance=False, QDA) the log-odds are quadratic in x, not linear. "
                "Refit with GDA(shared_covariance=True)."
            )
        coef, intercept = self._logistic
        return coef.copy(), intercept
