r"""The two steps of EM for a mixture of Gaussians, as functions of arrays.

* :func:`_log_gaussians`: the (n, K) matrix of :math:`\log \mathcal N(x_i; \mu_k, \Sigma_k)` for
  the four covariance types, through Cholesky factors (:func:`lecturekit.gaussian.cholesky`);
  with the log weights added and normalised by log-sum-exp, it gives the E-step's responsibilities;
* :func:`_m_step`: GDA's closed forms with every point counted :math:`r_{ik}` times in component
  :math:`k`, plus ``reg_covar`` on the diagonal.

Used by :class:`lecturekit.gaussian_mixture.GaussianMixture`; derived, and checked against these
functions, in notebooks/05.02-Gaussian-Mixtures.ipynb.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from lecturekit.gaussian import cholesky, mahalanobis_sq

_LOG_2PI = float(np.log(2.0 * np.pi))
COVARIANCE_TYPES = ("full", "tied", "diag", "spherical")


# --------------------------------------------------------------------------- the two steps


_COLLAPSE_HINT = (
    "In GaussianMixture this happens when a component collapses onto a point or a subspace: use "
    "reg_covar > 0 (default 1e-6; larger for features in large units), fewer components, or "
    "rescale the features."
)


def _factor(cov: NDArray[np.float64], name: str) -> NDArray[np.float64]:
    try:
        return cholesky(cov, name=name)
    except ValueError as exc:
        raise ValueError(f"{exc} {_COLLAPSE_HINT}") from exc


def _log_gaussians(X: NDArray[np.float64], means: NDArray[np.float64], covariances: NDArray[np.float64],
                   covariance_type: str) -> NDArray[np.float64]:
    r"""The (n, K) matrix :math:`\log \mathcal N(x_i; \mu_k, \Sigma_k)`."""
    n, d = X.shape
    K = means.shape[0]
    log_prob = np.empty((n, K))
    if covariance_type in ("full", "tied"):
        for k in range(K):
            cov = covariances if covariance_type == "tied" else covariances[k]
            if k == 0 or covariance_type == "full":
                chol = _factor(cov, "the tied covariance" if covariance_type == "tied"
                               else f"the covariance of component {k}")
                log_det = 2.0 * np.sum(np.log(np.diag(chol)))
            log_prob[:, k] = -0.5 * (d * _LOG_2PI + log_det + mahalanobis_sq(X, means[k], chol))
    else:  # diagonal: independent features, one variance per feature (or per component)
        variances = np.broadcast_to(covariances[:, np.newaxis], (K, d)) if covariance_type == "spherical" \
            else covariances
        if np.any(variances <= 0):
            k, j = np.argwhere(variances <= 0)[0]
            raise ValueError(
                f"the covariance of component {k} is singular: feature {j} has variance "
                f"{variances[k, j]:.6g} <= 0. {_COLLAPSE_HINT}"
            )
        for k in range(K):
            distance = ((X - means[k]) ** 2) @ (1.0 / variances[k])
            log_prob[:, k] = -0.5 * (d * _LOG_2PI + np.sum(np.log(variances[k])) + distance)
    return log_prob


def _m_step(X: NDArray[np.float64], resp: NDArray[np.float64], reg_covar: float, covariance_type: str):
    """Weights, means and covariances that maximise the expected complete-data log-likelihood."""
    d = X.shape[1]
    # A floor of 10 eps keeps an empty component's count (and weight) above zero, so its mean is
    # 0 / n_k rather than 0 / 0 and log(weight) stays finite. scikit-learn adds 10 eps to every
    # count instead; that shifts the mean of a component on a single point x by 10 eps |x|, which
    # is not small next to the spread of that component when reg_covar is 0 (a variance of
    # (10 eps x)^2 rather than exactly 0, and a log-likelihood that can decrease).
    nk = np.maximum(resp.sum(axis=0), 10.0 * np.finfo(float).eps)
    means = (resp.T @ X) / nk[:, np.newaxis]
    K = nk.size
    if covariance_type in ("full", "tied"):
        scatter = np.empty((K, d, d))
        for k in range(K):
            # sqrt(r) * (x - mu): its Gram matrix is the weighted scatter, exactly symmetric (syrk).
            weighted = (X - means[k]) * np.sqrt(resp[:, k])[:, np.newaxis]
            scatter[k] = weighted.T @ weighted
        if covariance_type == "tied":
            covariances = scatter.sum(axis=0) / nk.sum()
            covariances.flat[:: d + 1] += reg_covar
        else:
            covariances = scatter / nk[:, np.newaxis, np.newaxis]
            for k in range(K):
                covariances[k].flat[:: d + 1] += reg_covar
    else:
        # Centred before squaring (scikit-learn expands E[x^2] - mu^2, which cancels digits).
        covariances = np.empty((K, d))
        for k in range(K):
            covariances[k] = resp[:, k] @ (X - means[k]) ** 2 / nk[k]
        covariances += reg_covar
        if covariance_type == "spherical":
            covariances = covariances.mean(axis=1)
    return nk / nk.sum(), means, covariances
