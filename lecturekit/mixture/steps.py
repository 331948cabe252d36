r"""The two steps of EM for a mixture of Gaussians, as functions of arrays.

* :func:`_log_gaussians`: the (m, K) matrix of :math:`\log \mathcal N(x^{(i)}; \mu_k, \Sigma_k)` for
  the four covariance types, through Cholesky factors (:func:`lecturekit.gaussian.cholesky`);
  with the log weights added and normalised by log-sum-exp, it gives the E-step's responsibilities;
* :func:`_m_step`: GDA's closed forms with every point counted :math:`r_{ik}` times in component
  :math:`k`, plus ``reg_covar`` on the diagonal;
* :func:`_precisions_cholesky` and :func:`_precisions`: scikit-learn's ``precisions_cholesky_``
  and ``precisions_``, from the covariances; :func:`_initial_values`: ``weights_init``,
  ``means_init`` and ``precisions_init`` checked as scikit-learn checks them.

Used by :class:`lecturekit.mixture.gaussian.GaussianMixture`; derived, and checked against these
functions, in notebooks/05.02-Gaussian-Mixtures.ipynb.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.linalg import cho_solve, solve_triangular

from lecturekit.gaussian import cholesky, mahalanobis_sq

_LOG_2PI = float(np.log(2.0 * np.pi))
COVARIANCE_TYPES = ("full", "tied", "diag", "spherical")


# --------------------------------------------------------------------------- the two steps


_COLLAPSE_HINT = (
    "In GaussianMixture this happens when a component collapses onto a point or a subspace: use "
    "reg_covar > 0 (default 1e-6; larger for features in large units), fewer components, or "
    "rescale the features."
)


def _factors(covariances: NDArray[np.float64], covariance_type: str) -> list[NDArray[np.float64]]:
    """The lower Cholesky factor of each covariance ("full": K of them, "tied": one), checked."""
    stack = covariances[np.newaxis] if covariance_type == "tied" else covariances
    factors = []
    for k, cov in enumerate(stack):
        name = "the tied covariance" if covariance_type == "tied" else f"the covariance of component {k}"
        try:
            factors.append(cholesky(cov, name=name))
        except ValueError as exc:
            raise ValueError(f"{exc} {_COLLAPSE_HINT}") from exc
    return factors


def _variances(covariances: NDArray[np.float64], covariance_type: str, d: int) -> NDArray[np.float64]:
    """The (K, d) variances of a "diag" or "spherical" mixture, checked to be positive."""
    variances = (
        np.broadcast_to(covariances[:, np.newaxis], (covariances.shape[0], d))
        if covariance_type == "spherical"
        else covariances
    )
    if np.any(variances <= 0):
        k, j = np.argwhere(variances <= 0)[0]
        raise ValueError(
            f"the covariance of component {k} is singular: feature {j} has variance "
            f"{variances[k, j]:.6g} <= 0. {_COLLAPSE_HINT}"
        )
    return variances


def _check_covariances(covariances: NDArray[np.float64], covariance_type: str, d: int) -> None:
    """Raise the collapse error if a covariance is singular (as the next E-step would)."""
    if covariance_type in ("full", "tied"):
        _factors(covariances, covariance_type)
    else:
        _variances(covariances, covariance_type, d)


# Rows per block of the (K, rows, d) differences x_i - mu_k, sized so that a block stays in the
# cache: centring exactly (no expansion of (x - mu)^2, which cancels digits) at the speed of BLAS.
_BLOCK_ELEMENTS = 1 << 15
# Below this ratio of a variance to the mean square about the shift, recompute it centred (see
# _diagonal_scatter): the expansion then keeps at least 12 of the 16 significant digits.
_CANCELLATION = 1e-4


def _row_blocks(n: int, K: int, d: int) -> list[slice]:
    step = max(1, _BLOCK_ELEMENTS // (K * d))
    return [slice(start, start + step) for start in range(0, n, step)]


def _squared_distances(
    X: NDArray[np.float64], means: NDArray[np.float64], scales: NDArray[np.float64]
) -> NDArray[np.float64]:
    r"""The (m, K) matrix :math:`\sum_j s_{kj} (x^{(i)}_j - \mu_{kj})^2`."""
    (n, d), K = X.shape, means.shape[0]
    out = np.empty((n, K))
    for rows in _row_blocks(n, K, d):
        diff = X[np.newaxis, rows] - means[:, np.newaxis]  # (K, rows, d)
        np.square(diff, out=diff)
        out[rows] = (diff @ scales[:, :, np.newaxis])[:, :, 0].T
    return out


def _log_gaussians(
    X: NDArray[np.float64], means: NDArray[np.float64], covariances: NDArray[np.float64], covariance_type: str
) -> NDArray[np.float64]:
    r"""The (m, K) matrix :math:`\log \mathcal N(x^{(i)}; \mu_k, \Sigma_k)`."""
    n, d = X.shape
    K = means.shape[0]
    if covariance_type == "full":
        log_prob = np.empty((n, K))
        for k, chol in enumerate(_factors(covariances, covariance_type)):
            log_det = 2.0 * np.sum(np.log(np.diag(chol)))
            log_prob[:, k] = -0.5 * (d * _LOG_2PI + log_det + mahalanobis_sq(X, means[k], chol))
        return log_prob
    if covariance_type == "tied":
        # One triangular solve z = L^{-1} x for all points, then Euclidean distances to L^{-1} mu_k.
        (chol,) = _factors(covariances, covariance_type)
        log_det = 2.0 * np.sum(np.log(np.diag(chol)))
        Z = solve_triangular(chol, X.T, lower=True).T
        centres = solve_triangular(chol, means.T, lower=True).T
        distance = _squared_distances(Z, centres, np.ones((K, d)))
    else:  # diagonal: independent features, one variance per feature (or per component)
        variances = _variances(covariances, covariance_type, d)
        log_det = np.sum(np.log(variances), axis=1)
        distance = _squared_distances(X, means, 1.0 / variances)
    return -0.5 * (d * _LOG_2PI + log_det + distance)


def _diagonal_scatter(
    X: NDArray[np.float64], resp: NDArray[np.float64], nk: NDArray[np.float64], means: NDArray[np.float64]
) -> NDArray[np.float64]:
    r"""The (K, d) weighted variances :math:`\sum_i r_{ik} (x^{(i)}_j - \mu_{kj})^2 / m_k`, to full precision.

    One matrix product does the work: about a shift :math:`c` (the weighted mean of all points),
    :math:`\operatorname{var}_{kj} = \nu^{(2)}_{kj} - (\nu^{(1)}_{kj})^2` with the moments
    :math:`\nu^{(p)}_{kj} = \sum_i r_{ik} (x^{(i)}_j - c_j)^p / m_k` taken from the same product (not
    :math:`\mu_k - c`, whose rounding error would enter the difference to first order).
    That difference loses the leading digits when a component's spread is small next to its
    distance from :math:`c` (scikit-learn expands about 0, so it loses them whenever the data are
    far from the origin). Where the result is below ``_CANCELLATION`` times the first term, fewer
    than about 12 of the 16 digits are left, and that component's variances are recomputed from the
    centred points, :math:`\sum_i r_{ik} (x^{(i)}_j - \mu_{kj})^2 / m_k`: a component on a single
    point gets a variance of exactly 0, never a rounding error of either sign.
    """
    centred = X - nk @ means / nk.sum()
    first = (resp.T @ centred) / nk[:, np.newaxis]
    second = (resp.T @ np.square(centred, out=centred)) / nk[:, np.newaxis]
    variances = second - np.square(first)
    for k in np.flatnonzero(np.any(variances <= _CANCELLATION * second, axis=1)):
        variances[k] = resp[:, k] @ np.square(X - means[k]) / nk[k]
    return variances


def _m_step(X: NDArray[np.float64], resp: NDArray[np.float64], reg_covar: float, covariance_type: str):
    """Weights, means and covariances that maximise the expected complete-data log-likelihood."""
    d = X.shape[1]
    # A floor of 10 eps keeps an empty component's count (and weight) above zero, so its mean is
    # 0 / n_k rather than 0 / 0 and log(weight) stays finite. scikit-learn adds 10 eps to every
    # count instead; that shifts the mean of a component on a single point x by 10 eps |x|, which
    # is not small next to the spread of that component when reg_covar is 0 (a variance of
    # (10 eps x)^2 rather than exactly 0, and a log-likelihood that can decrease).
    # A product with ones rather than resp.sum(axis=0), which is slow along a short axis.
    nk = np.maximum(np.ones(resp.shape[0]) @ resp, 10.0 * np.finfo(float).eps)
    means = (resp.T @ X) / nk[:, np.newaxis]
    K = nk.size
    if covariance_type == "full":
        covariances = np.empty((K, d, d))
        for k in range(K):
            # sqrt(r) * (x - mu): its Gram matrix is the weighted scatter, exactly symmetric (syrk).
            weighted = (X - means[k]) * np.sqrt(resp[:, k])[:, np.newaxis]
            covariances[k] = weighted.T @ weighted / nk[k]
            covariances[k].flat[:: d + 1] += reg_covar
    elif covariance_type == "tied":
        # The same, summed over the components: one Gram matrix of all K blocks stacked.
        covariances = np.zeros((d, d))
        for rows in _row_blocks(X.shape[0], K, d):
            weighted = (X[np.newaxis, rows] - means[:, np.newaxis]) * np.sqrt(resp[rows].T)[:, :, np.newaxis]
            weighted = weighted.reshape(-1, d)
            covariances += weighted.T @ weighted
        covariances /= nk.sum()
        covariances.flat[:: d + 1] += reg_covar
    else:
        covariances = _diagonal_scatter(X, resp, nk, means)
        covariances += reg_covar
        if covariance_type == "spherical":
            covariances = covariances.mean(axis=1)
    return nk / nk.sum(), means, covariances


# --------------------------------------------------------------------------- precisions


def _precisions_cholesky(covariances: NDArray[np.float64], covariance_type: str) -> NDArray[np.float64]:
    r"""scikit-learn's ``precisions_cholesky_``: :math:`U = L^{-\top}` for :math:`\Sigma = LL^\top`.

    :math:`U` is upper triangular and :math:`UU^\top = \Sigma^{-1}`; for "diag" and "spherical"
    it is :math:`1 / \sigma`. Shaped like ``covariances``.
    """
    if covariance_type in ("full", "tied"):
        d = covariances.shape[-1]
        chol = np.array([solve_triangular(L, np.eye(d), lower=True).T for L in _factors(covariances, covariance_type)])
        return chol[0] if covariance_type == "tied" else chol
    d = 1 if covariance_type == "spherical" else covariances.shape[1]
    _variances(covariances, covariance_type, d)
    return 1.0 / np.sqrt(covariances)


def _precisions(precisions_cholesky: NDArray[np.float64], covariance_type: str) -> NDArray[np.float64]:
    r"""scikit-learn's ``precisions_``, :math:`UU^\top = \Sigma^{-1}` from :func:`_precisions_cholesky`."""
    if covariance_type in ("full", "tied"):
        return precisions_cholesky @ np.swapaxes(precisions_cholesky, -1, -2)
    return precisions_cholesky**2


def _initial_values(model, d: int) -> dict[str, NDArray[np.float64]]:
    """``weights_init``, ``means_init`` and ``precisions_init`` of ``model``, checked as scikit-learn does.

    Returns the given ones by name, and under "covariances" the inverses of the precisions.
    """
    K, kind = model.n_components, model.covariance_type
    shapes = {
        "weights_init": (K,),
        "means_init": (K, d),
        "precisions_init": {"full": (K, d, d), "tied": (d, d), "diag": (K, d), "spherical": (K,)}[kind],
    }
    initial, precise = {}, {}
    for name, shape in shapes.items():
        value = getattr(model, name)
        if value is None:
            continue
        try:
            given = np.asarray(value)
            value = np.array(value, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric; got {value!r}.") from exc
        precise[name] = given.dtype != np.float32
        if value.shape != shape:
            raise ValueError(
                f"{name} has shape {value.shape}, but n_components={K}, {d} features and "
                f"covariance_type={kind!r} need shape {shape}."
            )
        if not np.all(np.isfinite(value)):
            raise ValueError(f"{name} contains NaN or infinite values; pass finite numbers.")
        initial[name] = value
    weights = initial.get("weights_init")
    # scikit-learn's tolerance, |sum - 1| <= 1e-8, for weights given in float64; weights rounded to
    # float32 (scikit-learn sums them in float32) may miss 1 by a few float32 epsilons.
    tolerance = 1e-8 if weights is None or precise["weights_init"] else 4 * K * np.finfo(np.float32).eps
    if weights is not None and (np.any(weights < 0) or abs(weights.sum() - 1.0) > tolerance):
        raise ValueError(
            f"weights_init must be non-negative and sum to one; got {weights.tolist()} (sum "
            f"{weights.sum():.10g}). Divide them by their sum."
        )
    precisions = initial.get("precisions_init")
    if precisions is None:
        return initial
    if kind in ("diag", "spherical"):
        if np.any(precisions <= 0):
            raise ValueError(f"precisions_init must be positive (they are 1 / variance); got {precisions.min():.6g}.")
        initial["covariances"] = 1.0 / precisions
        return initial
    stack = precisions[np.newaxis] if kind == "tied" else precisions
    if not np.all(np.isclose(stack, np.swapaxes(stack, 1, 2))):  # scikit-learn's test of symmetry
        raise ValueError(
            "precisions_init must be symmetric (it is an inverse covariance); pass "
            "(P + P.T) / 2 if rounding made it asymmetric."
        )
    # Like scikit-learn, which factors the reversed matrix, only the upper triangle is read.
    stack = np.triu(stack) + np.swapaxes(np.triu(stack, 1), 1, 2)
    names = ["precisions_init"] if kind == "tied" else [f"precisions_init[{k}]" for k in range(K)]
    inverses = np.array(
        [cho_solve((cholesky(p, name=name), True), np.eye(d)) for p, name in zip(stack, names, strict=True)]
    )
    inverses = 0.5 * (inverses + np.swapaxes(inverses, 1, 2))
    initial["covariances"] = inverses[0] if kind == "tied" else inverses
    return initial
