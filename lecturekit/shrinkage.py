r"""Covariance shrinkage for discriminant analysis: Ledoit-Wolf, and Friedman's RDA.

A sample covariance from :math:`m` points in :math:`d` dimensions has rank at most
:math:`m - 1` (or :math:`m` when the mean is known), so it is singular for :math:`m \le d` and badly
conditioned while :math:`m` is not much larger than :math:`d`: its small eigenvalues are too small
and its large ones too large. Shrinking it towards a simpler matrix trades a little bias for a
large cut in variance. This module holds two such estimators.

**Ledoit-Wolf (2004).** :math:`(1 - \delta) \hat\Sigma + \delta\, \nu I` with
:math:`\nu = \operatorname{tr} \hat\Sigma / d`, where the intensity :math:`\delta` is estimated from
the data so as to minimise the expected squared Frobenius error (:func:`ledoit_wolf`,
:func:`ledoit_wolf_shrinkage`; the same numbers as :func:`sklearn.covariance.ledoit_wolf`).

**Regularised discriminant analysis (Friedman, 1989).** Each class covariance is first shrunk
towards the pooled covariance, then towards a multiple of the identity with the same trace. By
default (``weighting="covariance"``) the first step has the form of Hastie, Tibshirani and
Friedman (2009, section 4.3.1), one weight for every class; the second step is Friedman's:

.. math::

    \Sigma_k(\alpha) = \alpha \Sigma_k + (1 - \alpha) \Sigma, \qquad
    \Sigma_k(\alpha, \gamma) = (1 - \gamma) \Sigma_k(\alpha)
        + \gamma \frac{\operatorname{tr} \Sigma_k(\alpha)}{d} I.

:math:`\alpha = 1, \gamma = 0` is QDA and :math:`\alpha = 0, \gamma = 0` is LDA. Friedman's own
first step blends the scatter matrices :math:`S_k = m_k \Sigma_k` and :math:`S = \sum_k S_k =
m\Sigma` instead, with :math:`\lambda = 1 - \alpha`:
:math:`\Sigma_k(\lambda) = ((1 - \lambda) S_k + \lambda S) / ((1 - \lambda) m_k + \lambda m)`,
which is the first form with a class-dependent
:math:`\alpha_k = (1 - \lambda) m_k / ((1 - \lambda) m_k + \lambda m)`
(``weighting="scatter"`` in :func:`rda_covariances` and :class:`RDA`). All covariances are
maximum-likelihood ones (divided by :math:`m_k` and :math:`m`).

Derived in ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
"""

from __future__ import annotations

from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.utils.validation import validate_data

from lecturekit._checks import check_finite, class_codes, fitted_input, label
from lecturekit._classifier import _JointClassifier
from lecturekit.gaussian import cholesky, mahalanobis_sq

__all__ = ["RDA", "ledoit_wolf", "ledoit_wolf_shrinkage", "rda_covariances"]

_LOG_2PI = float(np.log(2.0 * np.pi))
_WEIGHTINGS = ("covariance", "scatter")


# --------------------------------------------------------------------------- validation helpers


def _as_data(X: ArrayLike, where: str) -> NDArray[np.float64]:
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X passed to {where} must be numeric; got {X!r}.") from exc
    if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(
            f"X passed to {where} must be a two-dimensional array of shape (n_samples, "
            f"n_features) with at least one row and one column; got shape {X.shape}. For a "
            f"single feature use X.reshape(-1, 1)."
        )
    check_finite(X, f"X passed to {where} contains NaN or infinite values; remove or impute them first.")
    return X


def _fraction(value: Any, name: str) -> float:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, Real) or not 0 <= value <= 1:
        raise ValueError(f"{name} must be a number between 0 and 1 (inclusive); got {value!r}.")
    return float(value)


def _weighting(value: Any) -> str:
    if value not in _WEIGHTINGS:
        raise ValueError(
            f"weighting must be 'covariance' (blend the class and pooled covariances) or "
            f"'scatter' (Friedman's blend of scatter matrices); got {value!r}."
        )
    return value


def _labels(X: NDArray[np.float64], y: ArrayLike, where: str):
    return class_codes(
        y,
        X.shape[0],
        where,
        f"{where} needs at least two classes (the pooled "
        f"covariance pools them), but y holds only one class, {{}}; add examples "
        f"of another class.",
    )


def _shrink_to_scaled_identity(cov: NDArray[np.float64], gamma: ArrayLike) -> NDArray[np.float64]:
    """``(1 - gamma) cov + gamma (tr cov / d) I`` for one (d, d) matrix or a (K, d, d) stack."""
    d = cov.shape[-1]
    gamma = np.asarray(gamma, dtype=float)[..., np.newaxis, np.newaxis]
    scale = np.trace(cov, axis1=-2, axis2=-1)[..., np.newaxis, np.newaxis] / d
    return (1.0 - gamma) * cov + gamma * scale * np.eye(d)


def _class_statistics(X, codes, n_classes):
    """Class counts, means and scatter matrices sum_{i in k} (x_i - mu_k)(x_i - mu_k)^T."""
    d = X.shape[1]
    counts = np.bincount(codes, minlength=n_classes)
    means = np.empty((n_classes, d))
    scatters = np.empty((n_classes, d, d))
    for k in range(n_classes):
        residuals = X[codes == k]
        means[k] = residuals.mean(axis=0)
        residuals -= means[k]
        scatter = residuals.T @ residuals
        scatters[k] = 0.5 * (scatter + scatter.T)
    return counts, means, scatters


def _blend(counts, scatters, alpha: float, weighting: str) -> NDArray[np.float64]:
    """Sigma_k(alpha) for every class, in either weighting."""
    n = counts.sum()
    pooled_scatter = scatters.sum(axis=0)
    if weighting == "covariance":
        return alpha * scatters / counts[:, None, None] + (1.0 - alpha) * pooled_scatter / n
    weights = alpha * counts + (1.0 - alpha) * n  # > 0, as every class has a point
    return (alpha * scatters + (1.0 - alpha) * pooled_scatter) / weights[:, None, None]


# --------------------------------------------------------------------------- Ledoit-Wolf


def ledoit_wolf_shrinkage(X: ArrayLike, *, assume_centered: bool = False) -> float:
    r"""The Ledoit-Wolf shrinkage intensity :math:`\delta` of a sample covariance.

    With :math:`\hat\Sigma = \frac1m \sum_i x^{(i)} x^{(i)\top}` (after centring the rows unless
    ``assume_centered``), :math:`\nu = \operatorname{tr} \hat\Sigma / d` and the normalised Frobenius
    norm :math:`\lVert A \rVert^2 = \operatorname{tr}(AA^\top)/d`, Ledoit and Wolf (2004) estimate

    .. math::

        \hat a^2 = \lVert \hat\Sigma - \nu I \rVert^2, \qquad
        \hat b^2 = \frac{1}{m^2} \sum_{i=1}^m \lVert x^{(i)} x^{(i)\top} - \hat\Sigma \rVert^2, \qquad
        \delta = \frac{\min(\hat b^2, \hat a^2)}{\hat a^2},

    the weight on the target :math:`\nu I` that minimises the expected squared error of
    :math:`(1 - \delta) \hat\Sigma + \delta \nu I` as :math:`m` and :math:`d` grow together. (Ledoit
    and Wolf write :math:`d^2` for :math:`\hat a^2`; here :math:`d` is the dimension.)

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Data, one observation per row.
    assume_centered : bool, default False
        If True, the rows are taken to have mean zero and are not centred.

    Returns
    -------
    float
        :math:`\delta \in [0, 1]`; 0 for one feature, or when :math:`\hat\Sigma` is already a
        multiple of the identity.

    Raises
    ------
    ValueError
        If ``X`` is not a finite two-dimensional array, or has fewer than two rows (one row
        with ``assume_centered``).

    Examples
    --------
    Four points, variances 0.5 and 2: with so few points almost all the spread of the two
    variances is put down to noise, and the intensity is 17/18.

    >>> X = [[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]]
    >>> round(ledoit_wolf_shrinkage(X) * 18, 10)
    17.0

    Derived in ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
    """
    S, mu, delta = _ledoit_wolf(X, assume_centered)
    return delta


def ledoit_wolf(X: ArrayLike, *, assume_centered: bool = False) -> tuple[NDArray[np.float64], float]:
    r"""The Ledoit-Wolf estimate :math:`(1 - \delta) \hat\Sigma + \delta\, \nu I` of a covariance.

    Every eigenvalue of the sample covariance :math:`\hat\Sigma` is pulled towards their mean
    :math:`\nu`: :math:`\lambda_j \mapsto (1 - \delta)\lambda_j + \delta\nu`, so for :math:`\delta > 0`
    the estimate is positive definite even when :math:`m \le d` and :math:`\hat\Sigma` is singular. The
    intensity is :func:`ledoit_wolf_shrinkage`'s.

    Parameters
    ----------
    X, assume_centered
        As in :func:`ledoit_wolf_shrinkage`.

    Returns
    -------
    covariance : ndarray of shape (n_features, n_features)
        The shrunk covariance.
    shrinkage : float
        The intensity :math:`\delta`.

    Raises
    ------
    ValueError
        As :func:`ledoit_wolf_shrinkage`.

    Examples
    --------
    >>> covariance, shrinkage = ledoit_wolf([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    >>> covariance * 24  # the variances 0.5 and 2 become 29/24 and 31/24, around their mean 5/4
    array([[29.,  0.],
           [ 0., 31.]])

    Derived in ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
    """
    S, mu, delta = _ledoit_wolf(X, assume_centered)
    shrunk = (1.0 - delta) * S
    shrunk.flat[:: S.shape[0] + 1] += delta * mu
    return shrunk, delta


def _ledoit_wolf(X: ArrayLike, assume_centered: bool) -> tuple[NDArray[np.float64], float, float]:
    X = _as_data(X, "ledoit_wolf")
    n, d = X.shape
    if n < (1 if assume_centered else 2):
        raise ValueError(
            f"ledoit_wolf needs at least two observations to estimate a covariance (one if "
            f"assume_centered=True); X has {n} row(s)."
        )
    if not assume_centered:
        X = X - X.mean(axis=0)
    S = X.T @ X / n
    S = 0.5 * (S + S.T)
    mu = float(np.trace(S)) / d
    if d == 1:  # every shrinkage gives the same 1 x 1 matrix
        return S, mu, 0.0
    # d^2 = ||S - mu I||^2 (normalised: divided by d) = (||S||_F^2 - d mu^2) / d
    norm_S = float(np.sum(S * S))
    d2 = (norm_S - d * mu * mu) / d
    # b_bar^2 = (1/n^2) sum_i ||x_i x_i^T - S||^2 = (sum_i |x_i|^4 / n - ||S||_F^2) / (n d):
    # the cross terms sum to -2n ||S||_F^2 because sum_i x_i x_i^T = nS.
    fourth = float(np.sum(np.einsum("ij,ij->i", X, X) ** 2))
    b_bar2 = max((fourth / n - norm_S) / (n * d), 0.0)
    if d2 <= 0.0:  # S is a multiple of the identity: nothing to shrink
        return S, mu, 0.0
    return S, mu, min(b_bar2, d2) / d2


# --------------------------------------------------------------------------- RDA


def rda_covariances(
    X: ArrayLike, y: ArrayLike, alpha: float, gamma: float, *, weighting: str = "covariance"
) -> NDArray[np.float64]:
    r"""The regularised class covariances :math:`\Sigma_k(\alpha, \gamma)` of RDA (Friedman, 1989).

    .. math::

        \Sigma_k(\alpha) = \alpha \hat\Sigma_k + (1 - \alpha) \hat\Sigma, \qquad
        \Sigma_k(\alpha, \gamma) = (1 - \gamma)\Sigma_k(\alpha)
            + \gamma \frac{\operatorname{tr}\Sigma_k(\alpha)}{d} I,

    with the maximum-likelihood class covariances :math:`\hat\Sigma_k` (divided by
    :math:`m_k`) and pooled covariance :math:`\hat\Sigma` (divided by :math:`m`). This first step
    is the form of Hastie, Tibshirani and Friedman (2009); with ``weighting="scatter"`` it is
    Friedman's (1989) own, on scatter matrices
    :math:`S_k = m_k\hat\Sigma_k`, :math:`S = m\hat\Sigma` with :math:`\lambda = 1 - \alpha`:
    :math:`\Sigma_k(\lambda) = ((1 - \lambda) S_k + \lambda S) / ((1 - \lambda) m_k + \lambda m)`.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Training inputs.
    y : array_like of shape (n_samples,)
        Class labels; at least two classes.
    alpha : float in [0, 1]
        Weight of the class's own covariance: 1 keeps it (QDA), 0 replaces it by the pooled
        one (LDA).
    gamma : float in [0, 1]
        Weight of the scaled identity: 0 leaves :math:`\Sigma_k(\alpha)` alone, 1 replaces it by
        :math:`(\operatorname{tr}\Sigma_k(\alpha)/d) I`.
    weighting : {"covariance", "scatter"}, default "covariance"
        Blend the covariances with the same weight for every class, or blend the scatter
        matrices as Friedman does (small classes are then pulled harder towards the pooled
        covariance).

    Returns
    -------
    ndarray of shape (n_classes, n_features, n_features)
        One matrix per class, in the order of the sorted labels (``np.unique(y)``).

    Raises
    ------
    ValueError
        If ``X`` is not finite and two-dimensional, ``y`` has another length or fewer than two
        classes, ``alpha`` or ``gamma`` lies outside [0, 1], or ``weighting`` is unknown.

    Examples
    --------
    >>> X = [[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [10.0, 4.0]]
    >>> y = [0, 0, 1, 1]
    >>> rda_covariances(X, y, alpha=1.0, gamma=0.0)  # QDA: each class's own
    array([[[1., 0.],
            [0., 0.]],
    <BLANKLINE>
           [[0., 0.],
            [0., 4.]]])
    >>> rda_covariances(X, y, alpha=0.5, gamma=1.0)[0]  # halfway to pooled, then spherical
    array([[0.875, 0.   ],
           [0.   , 0.875]])

    Derived in ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
    """
    alpha, gamma = _fraction(alpha, "alpha"), _fraction(gamma, "gamma")
    weighting = _weighting(weighting)
    X = _as_data(X, "rda_covariances")
    classes, codes = _labels(X, y, "rda_covariances")
    counts, _, scatters = _class_statistics(X, codes, classes.size)
    return _shrink_to_scaled_identity(_blend(counts, scatters, alpha, weighting), gamma)


class RDA(_JointClassifier):
    r"""Regularised discriminant analysis: QDA with shrunk class covariances.

    The class priors (frequencies) and means are the maximum-likelihood ones of
    :class:`lecturekit.gda.GDA`; the class covariances are :func:`rda_covariances`'s
    :math:`\Sigma_k(\alpha, \gamma)`. Prediction is Bayes' rule on
    :math:`\log \pi_k + \log \mathcal N(x; \mu_k, \Sigma_k(\alpha, \gamma))`.

    Parameters
    ----------
    alpha : float in [0, 1], default 1.0
        Weight of each class's own covariance against the pooled one (1: QDA, 0: LDA).
    gamma : float in [0, 1] or "ledoit-wolf", default 0.0
        Weight of the scaled identity. ``"ledoit-wolf"`` (only with ``alpha=1``) gives each
        class its own Ledoit-Wolf intensity, computed from that class's points: QDA with
        Ledoit-Wolf covariances.
    weighting : {"covariance", "scatter"}, default "covariance"
        As in :func:`rda_covariances`.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        Training examples per class.
    priors_ : ndarray of shape (n_classes,)
        Class frequencies.
    means_ : ndarray of shape (n_classes, n_features)
        Class means.
    covariances_ : ndarray of shape (n_classes, n_features, n_features)
        The regularised covariances :math:`\Sigma_k(\alpha, \gamma)`.
    gamma_ : ndarray of shape (n_classes,)
        The :math:`\gamma` used for each class (all equal unless ``gamma="ledoit-wolf"``).
    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    Examples
    --------
    >>> X = [[0.0, 0.0], [2.0, 0.0], [1.0, 0.1], [10.0, 0.0], [10.0, 4.0], [9.0, 2.0]]
    >>> y = [0, 0, 0, 1, 1, 1]
    >>> model = RDA(alpha=0.5, gamma=0.1).fit(X, y)
    >>> model.predict([[1.0, 0.0], [9.5, 2.5]])
    array([0, 1])

    Derived in ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
    """

    def __init__(self, alpha: float = 1.0, gamma: float | str = 0.0, weighting: str = "covariance"):
        self.alpha = alpha
        self.gamma = gamma
        self.weighting = weighting

    def fit(self, X: ArrayLike, y: ArrayLike) -> RDA:
        """Priors, means and regularised covariances.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training inputs (finite).
        y : array_like of shape (n_samples,)
            Class labels; at least two classes.

        Returns
        -------
        self : RDA
            The fitted model.

        Raises
        ------
        ValueError
            For invalid parameters or data, or a covariance that is still singular (then raise
            ``gamma`` or lower ``alpha``).

        Derived in ``notebooks/02.04-Quadratic-Discriminant-Analysis.ipynb``.
        """
        alpha = _fraction(self.alpha, "alpha")
        weighting = _weighting(self.weighting)
        ledoit = isinstance(self.gamma, str)
        if ledoit and (self.gamma != "ledoit-wolf" or alpha != 1.0):
            raise ValueError(
                f"gamma must be a number in [0, 1], or 'ledoit-wolf' together with alpha=1.0 "
                f"(Ledoit-Wolf's intensity is derived for a class's own sample covariance); got "
                f"gamma={self.gamma!r}, alpha={self.alpha!r}. With alpha < 1 choose gamma by "
                f"cross-validation."
            )
        gamma = None if ledoit else _fraction(self.gamma, "gamma")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False)
        check_finite(X, "X passed to RDA.fit contains NaN or infinite values; remove or impute them first.")
        classes, codes = _labels(X, y, "RDA.fit")
        counts, means, scatters = _class_statistics(X, codes, classes.size)
        if ledoit:
            gammas = np.array(
                [ledoit_wolf_shrinkage(X[codes == k]) if counts[k] > 1 else 1.0 for k in range(classes.size)]
            )
        else:
            gammas = np.full(classes.size, gamma)
        covariances = _shrink_to_scaled_identity(_blend(counts, scatters, alpha, weighting), gammas)
        d = X.shape[1]
        chol = np.empty_like(covariances)
        for k in range(classes.size):
            try:
                chol[k] = cholesky(covariances[k], name=f"the covariance of class {label(classes[k])}")
            except ValueError as exc:
                raise ValueError(
                    f"{exc} In RDA, raise gamma above 0 (or lower alpha below 1) instead: class "
                    f"{label(classes[k])} has {counts[k]} example(s) in {d} dimensions."
                ) from exc
        self.classes_ = classes
        self.class_count_ = counts
        self.priors_ = counts / counts.sum()
        self.means_ = means
        self.covariances_ = covariances
        self.gamma_ = gammas
        self._chol = chol
        log_dets = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=1, axis2=2)), axis=1)
        self._intercept = np.log(self.priors_) - 0.5 * (d * _LOG_2PI + log_dets)
        return self

    # predict, predict_proba, predict_log_proba, decision_function and predict_joint_log_proba
    # come from _JointClassifier, by Bayes' rule on _joint.

    def _predict_input(self, X: ArrayLike) -> NDArray[np.float64]:
        X = fitted_input(self, X)
        check_finite(X, "X passed to RDA contains NaN or infinite values; remove or impute them first.")
        return X

    def _joint(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        return np.column_stack(
            [self._intercept[k] - 0.5 * mahalanobis_sq(X, self.means_[k], chol) for k, chol in enumerate(self._chol)]
        )
