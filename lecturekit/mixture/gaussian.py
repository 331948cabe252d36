r"""A mixture of Gaussians fitted by EM: :class:`GaussianMixture`.

Gaussian discriminant analysis (:mod:`lecturekit.gda`) with the label hidden: :math:`z \sim
\mathrm{Categorical}(\pi)`, :math:`x \mid z = k \sim \mathcal N(\mu_k, \Sigma_k)`, and only
:math:`x` observed. The E-step and M-step are :mod:`lecturekit.mixture.steps`; the loop is
:mod:`lecturekit.mixture.loop`. Parameter and attribute names keep the meaning of
:class:`sklearn.mixture.GaussianMixture`; ``tests/lecturekit/mixture/test_gaussian.py`` checks that, started
from the same parameters, both fits agree.

Derived in notebooks/05.01-Latent-Variables-and-the-EM-Lower-Bound.ipynb and
notebooks/05.02-Gaussian-Mixtures.ipynb.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from lecturekit._checks import check_finite, fitted_input
from lecturekit.gaussian import cholesky
from lecturekit.mixture.loop import (
    _FittedMixture,
    _log_posterior,
    _non_negative,
    _positive_int,
    _run_em,
    _VerbosePrinter,
)
from lecturekit.mixture.steps import (
    COVARIANCE_TYPES,
    _check_covariances,
    _initial_values,
    _log_gaussians,
    _m_step,
    _precisions,
    _precisions_cholesky,
)

__all__ = ["GaussianMixture"]

INIT_PARAMS = ("kmeans", "k-means++", "random", "random_from_data")


def _check_finite(X: NDArray[np.float64], where: str) -> None:
    check_finite(
        X,
        f"X passed to GaussianMixture.{where} contains NaN or infinite values; a "
        f"Gaussian cannot score them. Remove those rows or impute the values first "
        f"(e.g. sklearn.impute.SimpleImputer).",
    )


class GaussianMixture(_FittedMixture, DensityMixin, BaseEstimator):
    r"""A mixture of K Gaussians, fitted by expectation-maximisation.

    The density is :math:`p(x) = \sum_k \pi_k \mathcal N(x; \mu_k, \Sigma_k)`; :meth:`fit`
    alternates the E-step (responsibilities) and the M-step (weighted GDA estimates) until the
    mean log-likelihood changes by less than ``tol``.

    Parameters
    ----------
    n_components : int, default 1
        Number of components K.
    covariance_type : {"full", "tied", "diag", "spherical"}, default "full"
        One full covariance per component; one full covariance shared by all; one diagonal
        covariance per component; one variance per component.
    tol : float, default 1e-3
        Stop when the mean log-likelihood per sample (the EM lower bound) changes by less than
        this between two iterations.
    reg_covar : float, default 1e-6
        Non-negative number added to the diagonal of every covariance (to every variance).
    max_iter : int, default 100
        Largest number of EM iterations per initialisation (0: keep the initial parameters).
    n_init : int, default 1
        Number of initialisations; the fit with the largest final lower bound is kept.
    init_params : {"kmeans", "k-means++", "random", "random_from_data"}, default "kmeans"
        Initial responsibilities: the labels of one run of :class:`sklearn.cluster.KMeans`;
        k-means++ seeds; uniform random numbers normalised per row; or K distinct points chosen
        at random. The initial parameters are one M-step from them.
    weights_init : array_like of shape (n_components,), optional
        Initial weights (non-negative, summing to one); replaces the one from ``init_params``.
    means_init : array_like of shape (n_components, n_features), optional
        Initial means.
    precisions_init : array_like, optional
        Initial precisions (inverse covariances), shaped like ``covariances_``: (K, d, d) for
        "full", (d, d) for "tied", (K, d) for "diag", (K,) for "spherical".
    random_state : int, numpy.random.RandomState or None, default None
        Seed of the initialisation (as in scikit-learn, the same seed gives the same k-means
        labels) and of :meth:`sample`.
    warm_start : bool, default False
        If True, every :meth:`fit` after the first continues from the fitted parameters (one
        start, ``n_init`` and the initial values ignored; the first iteration's change is
        measured from ``lower_bound_``). ``n_components`` and ``covariance_type`` must not change.
    verbose : int, default 0
        0 prints nothing; 1 prints each initialisation and every ``verbose_interval``-th
        iteration; 2 also the time taken and the change of the lower bound (to stdout, in
        scikit-learn's format).
    verbose_interval : int, default 10
        Iterations between two printed ones.

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        Mixture weights :math:`\pi_k`. EM runs in float64; ``weights_``, ``means_``,
        ``covariances_`` and the precisions are stored in X's float type (float32 for float32
        data, as in scikit-learn), and so are the scores of a model fitted on float32 data.
    means_ : ndarray of shape (n_components, n_features)
        Component means :math:`\mu_k`.
    covariances_ : ndarray
        Covariances (plus ``reg_covar``), shaped as described under ``precisions_init``.
    precisions_ : ndarray
        Inverse covariances, shaped like ``covariances_`` (computed from them).
    precisions_cholesky_ : ndarray
        Upper triangular :math:`U_k` with :math:`U_k U_k^\top` the precision (:math:`1/\sigma`
        for "diag" and "spherical"), shaped like ``covariances_``.
    converged_ : bool
        Whether the kept initialisation converged within ``max_iter`` iterations.
    n_iter_ : int
        Number of EM iterations of the kept initialisation (of this call, with a warm start).
    lower_bound_ : float
        Its last mean log-likelihood per sample (-inf if ``max_iter=0``).
    lower_bounds_ : ndarray of shape (n_iter_,)
        Its mean log-likelihood per sample at each iteration, measured in the E-step (before the
        M-step of that iteration). Plain EM (``reg_covar=0``) never decreases it; the floor
        ``reg_covar`` :math:`= \varepsilon` may cost up to about :math:`(\varepsilon/\lambda)^2/4`
        per eigenvalue :math:`\lambda` of a covariance. ``lower_bounds_[-1] == lower_bound_``.
    history_ : ndarray of shape (n_iter_,)
        The same as ``lower_bounds_`` (the name the other EM models of the course use).
    n_features_in_ : int
        Number of features seen during :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features, when ``X`` had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = np.vstack([rng.normal(-3, 1, (100, 1)), rng.normal(3, 1, (100, 1))])
    >>> model = GaussianMixture(n_components=2, random_state=0).fit(X)
    >>> np.sort(model.means_.ravel()).round(1)
    array([-2.9,  3. ])
    >>> bool(np.all(np.diff(model.lower_bounds_) >= 0))
    True
    >>> bool(np.array_equal(model.fit_predict(X), model.predict(X)))
    True
    >>> bool(np.allclose(model.precisions_, 1.0 / model.covariances_))  # 1 x 1 covariances
    True

    Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
    """

    def __init__(
        self,
        n_components: int = 1,
        *,
        covariance_type: str = "full",
        tol: float = 1e-3,
        reg_covar: float = 1e-6,
        max_iter: int = 100,
        n_init: int = 1,
        init_params: str = "kmeans",
        weights_init: ArrayLike | None = None,
        means_init: ArrayLike | None = None,
        precisions_init: ArrayLike | None = None,
        random_state: int | np.random.RandomState | None = None,
        warm_start: bool = False,
        verbose: int = 0,
        verbose_interval: int = 10,
    ):
        self.n_components = n_components
        self.covariance_type = covariance_type
        self.tol = tol
        self.reg_covar = reg_covar
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.weights_init = weights_init
        self.means_init = means_init
        self.precisions_init = precisions_init
        self.random_state = random_state
        self.warm_start = warm_start
        self.verbose = verbose
        self.verbose_interval = verbose_interval

    # ----------------------------------------------------------------------- fitting

    def fit(self, X: ArrayLike, y: None = None) -> GaussianMixture:
        """Estimate the weights, means and covariances by EM.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training points (finite real numbers), at least ``n_components`` of them.
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        self : GaussianMixture
            The fitted model.

        Raises
        ------
        ValueError
            For NaN or infinite values, a one-dimensional ``X``, fewer points than components,
            invalid parameters or initial values, a warm start whose ``n_components``,
            ``covariance_type`` or number of features differ from the previous fit, or a
            covariance that becomes singular (with ``reg_covar=0``), in any M-step including
            the last.

        Warns
        -----
        UserWarning
            If a component ends with a weight of about zero (responsible for less than one point).
        sklearn.exceptions.ConvergenceWarning
            If the kept initialisation did not converge within ``max_iter`` iterations.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        self._fit(X)
        return self

    def fit_predict(self, X: ArrayLike, y: None = None) -> NDArray[np.intp]:
        """Fit by EM as :meth:`fit` does, then return the most responsible component of each row.

        The labels come from one more E-step at the fitted parameters, so ``fit_predict(X)``
        equals ``fit(X).predict(X)`` for any ``max_iter`` and ``tol``.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        ndarray of shape (n_samples,)
            Component indices in ``0 .. n_components - 1``.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        return np.argmax(self._fit(X), axis=1)

    def _fit(self, X: ArrayLike) -> NDArray[np.float64]:
        """:meth:`fit`; returns :meth:`_weighted_log_prob` of ``X`` under the fitted parameters."""
        self._check_params()
        # A warm start continues from the fitted parameters: one start, no initialisation.
        warm = bool(self.warm_start) and hasattr(self, "converged_")
        X = validate_data(self, X, dtype=[np.float64, np.float32], ensure_all_finite=False, reset=not warm)
        # EM runs in float64 whatever X is; the fitted parameters are then stored in X's float type,
        # as scikit-learn stores them (float32 data, float32 parameters).
        dtype, X = X.dtype, X.astype(np.float64, copy=False)
        _check_finite(X, "fit")
        n, d = X.shape
        K = self.n_components
        if n < K:
            raise ValueError(
                f"GaussianMixture(n_components={K}) needs at least {K} points, but X has {n}; "
                f"use n_components <= {n} or pass more data."
            )
        initial = _initial_values(self, d)
        random_state = check_random_state(self.random_state)
        if warm:
            self._check_warm_start()
            start, n_init, bound = (lambda: None), 1, self.lower_bound_
        else:
            start, n_init, bound = (lambda: self._initialise(X, random_state, initial)), self.n_init, -np.inf
        _run_em(
            self,
            start,
            lambda: self._e_step(X),
            lambda log_resp: self._m_step(X, log_resp),
            ("weights_", "means_", "covariances_"),
            n_init,
            objective="mean log-likelihood",
            advice="try another initialisation (n_init, random_state)",
            bound=bound,
            printer=_VerbosePrinter(self.verbose, self.verbose_interval),
            stacklevel=4,
        )
        self.lower_bounds_ = self.history_.copy()
        self._fitted_shape = (K, self.covariance_type)
        for name in ("weights_", "means_", "covariances_"):
            setattr(self, name, getattr(self, name).astype(dtype, copy=False))
        # The final E-step, which predict repeats: fit_predict(X) == fit(X).predict(X).
        weighted_log_prob = self._weighted_log_prob(X)
        counts = self.weights_ * n
        empty = np.flatnonzero(counts < 1.0)
        if empty.size:
            warnings.warn(
                f"Component(s) {empty.tolist()} of GaussianMixture collapsed: weight(s) "
                f"{np.array2string(self.weights_[empty], precision=2)}, i.e. responsible for less "
                f"than one of the {n} points; they only hold their initial place and reg_covar. "
                f"Use fewer components, another initialisation (n_init > 1, random_state), or "
                f"check the data for duplicated or outlying points.",
                UserWarning,
                stacklevel=3,
            )
        return weighted_log_prob

    def _check_warm_start(self) -> None:
        fitted = getattr(self, "_fitted_shape", (self.means_.shape[0], self.covariance_type))
        if fitted != (self.n_components, self.covariance_type):
            raise ValueError(
                f"warm_start=True continues the previous fit, which had n_components={fitted[0]} "
                f"and covariance_type={fitted[1]!r}, but the model now has "
                f"n_components={self.n_components} and covariance_type={self.covariance_type!r}. "
                f"Set warm_start=False to start afresh, or restore the previous values."
            )

    def _check_params(self) -> None:
        _positive_int(self.n_components, "n_components", 1, "the number of Gaussians")
        if self.covariance_type not in COVARIANCE_TYPES:
            raise ValueError(
                f"covariance_type must be one of {', '.join(map(repr, COVARIANCE_TYPES))}; "
                f"got {self.covariance_type!r}."
            )
        if self.init_params not in INIT_PARAMS:
            raise ValueError(
                f"init_params must be one of {', '.join(map(repr, INIT_PARAMS))}; got {self.init_params!r}."
            )
        _non_negative(
            self.tol, "tol", "It is the smallest change of the mean log-likelihood that counts as progress, e.g. 1e-3."
        )
        _non_negative(self.reg_covar, "reg_covar", "It is added to the diagonal of every covariance, e.g. 1e-6.")
        _positive_int(self.max_iter, "max_iter", 0, "the number of EM iterations")
        _positive_int(self.n_init, "n_init", 1, "the number of initialisations")
        if not isinstance(self.warm_start, (bool, np.bool_)):
            raise ValueError(f"warm_start must be True or False; got {self.warm_start!r}.")
        if not isinstance(self.verbose, (bool, np.bool_)):
            _positive_int(
                self.verbose, "verbose", 0, "0 is silent, 1 prints the iterations, 2 also their times and changes"
            )
        _positive_int(self.verbose_interval, "verbose_interval", 1, "print every verbose_interval-th iteration")

    def _initialise(
        self, X: NDArray[np.float64], random_state: np.random.RandomState, initial: dict[str, NDArray[np.float64]]
    ) -> None:
        """Initial parameters: one M-step from initial responsibilities, then the given values."""
        n, K = X.shape[0], self.n_components
        weights = means = covariances = None
        if not {"weights_init", "means_init", "precisions_init"} <= initial.keys():
            if self.init_params == "kmeans":
                resp = np.zeros((n, K))
                labels = KMeans(n_clusters=K, n_init=1, random_state=random_state).fit(X).labels_
                resp[np.arange(n), labels] = 1.0
            elif self.init_params == "k-means++":
                resp = np.zeros((n, K))
                _, indices = kmeans_plusplus(X, K, random_state=random_state)
                resp[indices, np.arange(K)] = 1.0
            elif self.init_params == "random":
                resp = random_state.uniform(size=(n, K))
                resp /= resp.sum(axis=1, keepdims=True)
            else:  # random_from_data
                resp = np.zeros((n, K))
                resp[random_state.choice(n, size=K, replace=False), np.arange(K)] = 1.0
            weights, means, covariances = _m_step(X, resp, self.reg_covar, self.covariance_type)
            if "covariances" not in initial:  # a collapsed start raises now, as in scikit-learn
                _check_covariances(covariances, self.covariance_type, X.shape[1])
        self.weights_ = initial.get("weights_init", weights)
        self.means_ = initial.get("means_init", means)
        self.covariances_ = initial.get("covariances", covariances)

    def _e_step(self, X: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        """The mean log-likelihood of X and the log responsibilities, under the current parameters."""
        log_norm, log_resp = _log_posterior(self._weighted_log_prob(X))
        return float(np.mean(log_norm)), log_resp

    def _m_step(self, X: NDArray[np.float64], log_resp: NDArray[np.float64]) -> None:
        """The M-step; a covariance that collapsed (``reg_covar=0``) raises here, as in scikit-learn."""
        self.weights_, self.means_, self.covariances_ = _m_step(
            X, np.exp(log_resp), self.reg_covar, self.covariance_type
        )
        _check_covariances(self.covariances_, self.covariance_type, X.shape[1])

    @property
    def precisions_cholesky_(self) -> NDArray[np.float64]:
        r"""Upper triangular :math:`U_k` with :math:`U_k U_k^\top = \Sigma_k^{-1}`, from ``covariances_``.

        scikit-learn's definition: :math:`L_k^{-\top}` for the Cholesky factor :math:`L_k` of a
        "full" or "tied" covariance, :math:`1/\sigma` for "diag" and "spherical"; shaped like
        ``covariances_``.
        """
        covariances = self.covariances_
        return _precisions_cholesky(np.asarray(covariances, dtype=np.float64), self.covariance_type).astype(
            np.asarray(covariances).dtype, copy=False
        )

    @property
    def precisions_(self) -> NDArray[np.float64]:
        r"""Precisions :math:`\Sigma_k^{-1} = U_k U_k^\top`, shaped like ``covariances_``."""
        factor = self.precisions_cholesky_
        return _precisions(factor.astype(np.float64), self.covariance_type).astype(factor.dtype, copy=False)

    def _weighted_log_prob(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\log \pi_k + \log \mathcal N(x^{(i)}; \mu_k, \Sigma_k)`, from the public attributes."""
        with np.errstate(divide="ignore"):  # a weight of exactly 0 (set by hand) is log 0 = -inf
            log_weights = np.log(self.weights_)
        return _log_gaussians(X, self.means_, self.covariances_, self.covariance_type) + log_weights

    # ----------------------------------------------------------------------- the fitted density

    def _check_data(self, X: ArrayLike, where: str) -> NDArray[np.float64]:
        array = fitted_input(self, X)
        _check_finite(array, where)
        return array

    def sample(
        self, n_samples: int = 1, random_state: int | np.random.RandomState | None = None
    ) -> tuple[NDArray[np.float64], NDArray[np.intp]]:
        """Draw from the fitted mixture: a component from the weights, then that Gaussian.

        Parameters
        ----------
        n_samples : int, default 1
            Number of draws (>= 1).
        random_state : int, numpy.random.RandomState or None, default None
            Seed for these draws; None uses the estimator's ``random_state`` (as scikit-learn
            does, so with a fixed seed every call returns the same draws).

        Returns
        -------
        X : ndarray of shape (n_samples, n_features)
            The draws, grouped by component.
        y : ndarray of shape (n_samples,)
            The component of each draw.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        check_is_fitted(self)
        n_samples = _positive_int(n_samples, "n_samples", 1, "the number of draws")
        rng = check_random_state(self.random_state if random_state is None else random_state)
        counts = rng.multinomial(n_samples, self.weights_ / self.weights_.sum())
        K, d = self.means_.shape
        draws = []
        for k in range(K):
            z = rng.standard_normal((counts[k], d))
            if self.covariance_type in ("full", "tied"):
                cov = self.covariances_ if self.covariance_type == "tied" else self.covariances_[k]
                draws.append(self.means_[k] + z @ cholesky(cov, name=f"the covariance of component {k}").T)
            else:
                draws.append(self.means_[k] + z * np.sqrt(self.covariances_[k]))
        return np.vstack(draws), np.repeat(np.arange(K), counts)

    # ----------------------------------------------------------------------- model selection

    def _n_parameters(self) -> int:
        K, d = self.means_.shape
        covariance = {"full": K * d * (d + 1) // 2, "tied": d * (d + 1) // 2, "diag": K * d, "spherical": K}[
            self.covariance_type
        ]
        return covariance + K * d + K - 1

    def bic(self, X: ArrayLike) -> float:
        r"""Bayesian information criterion :math:`-2 \log L + p \log m` (lower is better).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        float
            With :math:`p` the number of free parameters (K - 1 weights, the means, the
            covariances).

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        n = np.shape(X)[0]
        return -2.0 * self.score(X) * n + self._n_parameters() * math.log(n)

    def aic(self, X: ArrayLike) -> float:
        r"""Akaike information criterion :math:`-2 \log L + 2p` (lower is better).

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            The data the model is judged on, usually its training data.

        Returns
        -------
        float
            With :math:`p` counted as in :meth:`bic`.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        n = np.shape(X)[0]
        return -2.0 * self.score(X) * n + 2.0 * self._n_parameters()
