r"""The multivariate Gaussian, computed through its Cholesky factor.

The log density, the squared Mahalanobis distance and sampling of :math:`\mathcal N(\mu, \Sigma)`,
all through the lower Cholesky factor :math:`\Sigma = LL^\top`: a triangular solve replaces the
inverse, :math:`\log|\Sigma| = 2\sum_j \log L_{jj}` replaces the determinant, and
:math:`\mu + LZ` turns standard normal draws into Gaussian ones. Neither :math:`\Sigma^{-1}` nor
:math:`|\Sigma|` is ever formed: both overflow, underflow or lose digits long before the
factor does.

Gaussian discriminant analysis (:mod:`lecturekit.gda`) builds on these functions.

Derived in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import get_lapack_funcs, solve_triangular

__all__ = ["cholesky", "log_density", "mahalanobis_sq", "sample"]

_LOG_2PI = float(np.log(2.0 * np.pi))

# A covariance is treated as singular when some feature keeps less than this fraction of its
# variance once the features before it are known: L_jj**2 / cov_jj is the residual variance of
# feature j after regressing it on features 0..j-1, i.e. 1 - R_j**2 (scale-free, so features in
# different units are judged alike). For an exactly singular matrix, rounding leaves a residual of
# order d * machine epsilon (1e-14 for d = 50), hence the threshold max(1e-12, 100 d eps); a genuine
# covariance with condition number kappa keeps at least 1 / kappa, so every matrix with
# kappa < 1e12 passes (for d up to 450).
_RESIDUAL_RTOL = 1e-12


# --------------------------------------------------------------------------- validation helpers


def _as_finite(values: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; got {values!r}.") from exc
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first.")
    return array


def _as_mean(mean: ArrayLike) -> NDArray[np.float64]:
    mean = _as_finite(mean, "mean")
    if mean.ndim != 1 or mean.size == 0:
        raise ValueError(
            f"mean must be a non-empty one-dimensional vector of length d; got shape {mean.shape}. "
            f"For a one-dimensional Gaussian pass mean=[mu] and cov=[[sigma**2]]."
        )
    return mean


def _as_points(X: ArrayLike, d: int) -> tuple[NDArray[np.float64], bool]:
    """``X`` as an (m, d) array, and whether it was a single point of shape (d,)."""
    X = _as_finite(X, "X")
    single = X.ndim == 1
    if single:
        X = X[np.newaxis, :]
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(
            f"X has shape {np.shape(X[0] if single else X)} but mean has length {d}; pass one point "
            f"of shape ({d},) or m points as an array of shape (m, {d})."
        )
    return X, single


def _as_square(value: ArrayLike, name: str, d: int, fix: str) -> NDArray[np.float64]:
    """``value`` as a finite (d, d) array, d the mean's length; ``fix`` ends the error message."""
    array = _as_finite(value, name)
    if array.shape != (d, d):
        raise ValueError(f"{name} has shape {array.shape} but mean has length {d}; {fix}")
    return array


def _check_factor(chol: ArrayLike, d: int) -> NDArray[np.float64]:
    chol = _as_square(chol, "chol", d, f"pass the ({d}, {d}) lower Cholesky factor returned by cholesky(cov).")
    if np.any(np.triu(chol, 1)) or np.any(np.diag(chol) <= 0):
        raise ValueError(
            "chol must be lower triangular with a positive diagonal; pass cholesky(cov), not cov "
            "itself (scipy.linalg.cholesky returns the upper factor unless lower=True)."
        )
    return chol


# --------------------------------------------------------------------------- the factor


def _features_before(j: int) -> str:
    return "feature 0 is" if j == 1 else f"features 0..{j - 1} are"


def cholesky(cov: ArrayLike, *, name: str = "cov") -> NDArray[np.float64]:
    r"""Lower Cholesky factor :math:`L` of a covariance matrix, :math:`\Sigma = LL^\top`.

    The factorisation doubles as the test that :math:`\Sigma` is a covariance at all: it succeeds
    exactly when :math:`\Sigma` is symmetric positive definite. Each squared pivot
    :math:`L_{jj}^2` is the variance of feature :math:`j` left over once features
    :math:`0, \dots, j-1` are known, so a pivot that vanishes (relative to
    :math:`\Sigma_{jj}`) names a feature that is constant or a linear combination of the others.

    Parameters
    ----------
    cov : array_like of shape (d, d)
        Symmetric positive definite matrix.
    name : str, default "cov"
        How error messages refer to the matrix (for example "the covariance of class 'spam'").

    Returns
    -------
    ndarray of shape (d, d)
        Lower triangular :math:`L` with a positive diagonal (zeros above it).

    Raises
    ------
    ValueError
        If ``cov`` is not square, holds NaN or infinite values, is not symmetric, or is singular
        or not positive definite. The last message names the first offending feature and
        suggests adding a small multiple of the identity (what ``reg_covar`` does in
        :class:`lecturekit.gda.GDA`).

    Examples
    --------
    >>> cholesky([[4.0, 2.0], [2.0, 2.0]])
    array([[2., 0.],
           [1., 1.]])

    Derived in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
    """
    cov = _as_finite(cov, name)
    if cov.ndim != 2 or cov.shape[0] != cov.shape[1] or cov.shape[0] == 0:
        raise ValueError(f"{name} must be a square (d, d) matrix; got shape {cov.shape}.")
    d = cov.shape[0]
    # Symmetry is judged on the correlation scale, so that it does not depend on the units.
    scale = np.sqrt(np.abs(np.diag(cov)))
    asymmetry = np.abs(cov - cov.T)
    if np.any(asymmetry > 1e-10 * np.outer(scale, scale) + 1e-300):
        i, j = np.unravel_index(np.argmax(asymmetry), asymmetry.shape)
        raise ValueError(
            f"{name} is not symmetric ({name}[{i}, {j}] = {cov[i, j]:.6g} but "
            f"{name}[{j}, {i}] = {cov[j, i]:.6g}); a covariance matrix must be. "
            f"If rounding caused it, pass ({name} + {name}.T) / 2."
        )
    # scipy.linalg.cholesky calls this LAPACK routine; calling it directly also returns `info`,
    # the leading minor at which the factorisation broke down, which the message reports.
    (potrf,) = get_lapack_funcs(("potrf",), (cov,))
    factor, info = potrf(cov, lower=True, clean=True, overwrite_a=False)
    if info < 0:  # pragma: no cover - an illegal argument to LAPACK would be our bug
        raise RuntimeError(f"LAPACK potrf rejected argument {-info}.")
    # For a matrix that is singular in exact arithmetic, the pivot of the first dependent feature is
    # rounding noise: a tiny positive number on one CPU's BLAS, a negative one (potrf stops there) on
    # another. Both are reported as that feature, so the message is the same on every machine.
    computed = d if info == 0 else info - 1  # pivots 0..computed-1 were factorised
    residual = np.diag(factor)[:computed] ** 2 / np.diag(cov)[:computed]
    if info > 1 and cov[computed, computed] > 0:  # the residual that stopped the factorisation
        known = solve_triangular(factor[:computed, :computed], cov[:computed, computed], lower=True)
        residual = np.append(residual, 1.0 - known @ known / cov[computed, computed])
    threshold = max(_RESIDUAL_RTOL, 100.0 * d * np.finfo(float).eps)
    tiny = np.flatnonzero(np.abs(residual) <= threshold)
    if info == 0 and tiny.size == 0:
        return factor
    if tiny.size:
        j = int(tiny[0])
        where = (
            f"feature {j} keeps less than a fraction {threshold:.0e} of its variance once "
            f"{_features_before(j)} known, so it is (numerically) a linear combination of them"
        )
    elif info == 1:
        where = f"feature 0 has variance {cov[0, 0]:.6g} <= 0"
    else:
        j = info - 1
        where = (
            f"the factorisation breaks down at feature {j}: once {_features_before(j)} known, "
            f"its variance would be <= 0 (it is a linear combination of them, or the matrix has "
            f"a negative eigenvalue)"
        )
    raise ValueError(
        f"{name} is singular or not positive definite: {where}. Add a small multiple of the "
        f"identity to it, e.g. cov + 1e-6 * np.eye({d}) (in GDA: reg_covar=1e-6), or drop the "
        f"redundant feature."
    )


def _factor_of(cov: ArrayLike, d: int) -> NDArray[np.float64]:
    """:func:`cholesky` of ``cov``, checked first to be a finite (d, d) matrix, d the mean's length."""
    return cholesky(_as_square(cov, "cov", d, f"the covariance of a {d}-dimensional Gaussian is a ({d}, {d}) matrix."))


# --------------------------------------------------------------------------- densities


def mahalanobis_sq(X: ArrayLike, mean: ArrayLike, chol: ArrayLike) -> NDArray[np.float64] | float:
    r"""Squared Mahalanobis distances :math:`(x - \mu)^\top \Sigma^{-1} (x - \mu)`.

    With :math:`\Sigma = LL^\top` the distance is :math:`\lVert z \rVert^2` where :math:`z` solves
    the triangular system :math:`Lz = x - \mu`: one triangular solve for all points at once, and
    no inverse.

    Parameters
    ----------
    X : array_like of shape (m, d) or (d,)
        Points, one per row (or a single point).
    mean : array_like of shape (d,)
        The mean :math:`\mu`.
    chol : array_like of shape (d, d)
        Lower Cholesky factor of the covariance, as returned by :func:`cholesky`.

    Returns
    -------
    ndarray of shape (m,), or float for a single point

    Examples
    --------
    >>> L = cholesky([[4.0, 0.0], [0.0, 1.0]])
    >>> mahalanobis_sq([[2.0, 0.0], [0.0, 3.0]], [0.0, 0.0], L)
    array([1., 9.])

    Derived in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
    """
    mean = _as_mean(mean)
    chol = _check_factor(chol, mean.size)
    X, single = _as_points(X, mean.size)
    # (X - mean).T is Fortran-ordered, which is what LAPACK wants: the solve overwrites it in place.
    z = solve_triangular(chol, (X - mean).T, lower=True, check_finite=False, overwrite_b=True)
    distances = np.einsum("ij,ij->j", z, z)
    return float(distances[0]) if single else distances


def log_density(X: ArrayLike, mean: ArrayLike, cov: ArrayLike) -> NDArray[np.float64] | float:
    r"""Log density of the multivariate Gaussian :math:`\mathcal N(\mu, \Sigma)`.

    .. math::

        \log \mathcal N(x; \mu, \Sigma) = -\tfrac12 \left( d \log 2\pi + \log|\Sigma|
            + (x - \mu)^\top \Sigma^{-1} (x - \mu) \right),

    with :math:`\log|\Sigma| = 2 \sum_j \log L_{jj}` and the quadratic form from
    :func:`mahalanobis_sq`, where :math:`L` is the lower Cholesky factor of :math:`\Sigma`.

    Parameters
    ----------
    X, mean
        As in :func:`mahalanobis_sq`.
    cov : array_like of shape (d, d)
        The covariance :math:`\Sigma`, symmetric positive definite.

    Returns
    -------
    ndarray of shape (m,), or float for a single point
        The log density of each point.

    Raises
    ------
    ValueError
        If the shapes disagree, a value is NaN or infinite, or ``cov`` is not symmetric positive
        definite (see :func:`cholesky`).

    Examples
    --------
    The standard normal at zero has density :math:`1/\sqrt{2\pi}` per dimension:

    >>> import numpy as np
    >>> bool(np.isclose(log_density([0.0, 0.0], [0.0, 0.0], np.eye(2)), -np.log(2 * np.pi)))
    True

    Derived in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
    """
    mean = _as_mean(mean)
    X, single = _as_points(X, mean.size)
    chol = _factor_of(cov, mean.size)
    log_det = 2.0 * np.sum(np.log(np.diag(chol)))
    result = -0.5 * (mean.size * _LOG_2PI + log_det + mahalanobis_sq(X, mean, chol))
    return float(result[0]) if single else result


# --------------------------------------------------------------------------- sampling


def sample(
    mean: ArrayLike,
    cov: ArrayLike,
    size: int,
    random_state: int | np.random.Generator | None = None,
) -> NDArray[np.float64]:
    r"""Draw from :math:`\mathcal N(\mu, \Sigma)` as :math:`\mu + Lz`, :math:`z \sim \mathcal N(0, I)`.

    If :math:`z` is standard normal, :math:`\mu + Lz` has mean :math:`\mu` and covariance
    :math:`L\,I\,L^\top = \Sigma`. Row by row, the draws are :math:`X = \mu + Z L^\top`.

    Parameters
    ----------
    mean : array_like of shape (d,)
        The mean :math:`\mu`.
    cov : array_like of shape (d, d)
        The covariance :math:`\Sigma`, symmetric positive definite.
    size : int
        Number of draws (>= 0).
    random_state : int, numpy.random.Generator or None, default None
        Seed or generator (passed to :func:`numpy.random.default_rng`); None draws fresh entropy.

    Returns
    -------
    ndarray of shape (size, d)

    Examples
    --------
    >>> X = sample([1.0, -1.0], [[1.0, 0.5], [0.5, 1.0]], size=3, random_state=0)
    >>> X.shape
    (3, 2)

    Derived in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
    """
    mean = _as_mean(mean)
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size must be an integer >= 0 (the number of draws); got {size!r}.")
    chol = _factor_of(cov, mean.size)
    rng = np.random.default_rng(random_state)
    z = rng.standard_normal((int(size), mean.size))
    return mean + z @ chol.T
