r"""Models fitted by the EM algorithm: Gaussian mixtures, and naive Bayes with missing labels.

:class:`GaussianMixture` is Gaussian discriminant analysis (:mod:`lecturekit.gda`) with the label
hidden: :math:`z \sim \mathrm{Categorical}(\pi)`, :math:`x \mid z = k \sim
\mathcal N(\mu_k, \Sigma_k)`, and only :math:`x` is observed. Expectation-maximisation alternates

* the **E-step**: the responsibilities :math:`r_{ik} = p(z_i = k \mid x_i)`, by Bayes' rule in
  log space (normalised by :func:`scipy.special.logsumexp`);
* the **M-step**: GDA's closed forms with every point counted :math:`r_{ik}` times in component
  :math:`k`: :math:`\pi_k = n_k / n`, :math:`\mu_k = \sum_i r_{ik} x_i / n_k`,
  :math:`\Sigma_k = \sum_i r_{ik} (x_i - \mu_k)(x_i - \mu_k)^\top / n_k`, with
  :math:`n_k = \sum_i r_{ik}`.

Without a floor (``reg_covar=0``) no iteration can decrease the log-likelihood. ``reg_covar`` is
added to the diagonal of every covariance, which keeps a component that collapses onto a point
or a subspace positive definite, at the price of an M-step that no longer maximises exactly: the
log-likelihood may then fall by a tiny amount near convergence. A component whose weight falls
to about zero is reported by a warning.

:class:`SemiSupervisedNB` and :class:`MultinomialMixture` are the multinomial naive Bayes model
of :mod:`lecturekit.naive_bayes` with some or all labels hidden: the E-step is its posterior, the
M-step its add-alpha counting with soft counts (Nigam, McCallum, Thrun and Mitchell, 2000).

All three share one EM loop (``_run_em``). The Gaussian log densities run through Cholesky factors
from :func:`lecturekit.gaussian.cholesky` and :func:`lecturekit.gaussian.mahalanobis_sq`.
Parameter and attribute names shared with :class:`sklearn.mixture.GaussianMixture` and
:class:`sklearn.naive_bayes.MultinomialNB` keep scikit-learn's meaning; ``tests/test_em.py``
checks that, started from the same parameters, both Gaussian fits agree to 1e-6, and
``tests/test_em_naive_bayes.py`` that each soft-count M-step is scikit-learn's
``MultinomialNB`` fitted with sample weights.

Derived in notebooks/05.01-Latent-Variables-and-the-EM-Lower-Bound.ipynb (EM and its lower
bound), notebooks/05.02-Gaussian-Mixtures.ipynb (Gaussian mixtures) and
notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb (naive Bayes with missing labels).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_solve
from scipy.special import logsumexp
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.cluster import KMeans, kmeans_plusplus
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from lecturekit._checks import check_finite, fitted_input
from lecturekit.estimation import add_k
from lecturekit.gaussian import cholesky, mahalanobis_sq
from lecturekit.naive_bayes import MultinomialNB, _classes, _validate_X, _values
from lecturekit.naive_bayes import _check_finite as _check_finite_counts

__all__ = ["GaussianMixture", "MultinomialMixture", "SemiSupervisedNB"]

_LOG_2PI = float(np.log(2.0 * np.pi))
COVARIANCE_TYPES = ("full", "tied", "diag", "spherical")
INIT_PARAMS = ("kmeans", "k-means++", "random", "random_from_data")


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


def _check_finite(X: NDArray[np.float64], where: str) -> None:
    check_finite(X, f"X passed to GaussianMixture.{where} contains NaN or infinite values; a "
                    f"Gaussian cannot score them. Remove those rows or impute the values first "
                    f"(e.g. sklearn.impute.SimpleImputer).")


def _positive_int(value: Any, name: str, minimum: int, meaning: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} ({meaning}); got {value!r}.")
    return int(value)


def _non_negative(value: Any, name: str, hint: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}. {hint}")
    return float(value)


def _log_posterior(joint: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """log p(x_i) (the log-sum-exp over classes) and the log responsibilities, from log p(x_i, c)."""
    log_norm = logsumexp(joint, axis=1)
    return log_norm, joint - log_norm[:, np.newaxis]


def _iterate(e_step: Callable[[], tuple[float, Any]], m_step: Callable[[Any], None], max_iter: int,
             tol: float) -> tuple[list[float], bool]:
    """The EM loop shared by every model here: E-step, M-step, until the objective settles.

    ``e_step()`` returns the objective at the current parameters and the (log) responsibilities;
    ``m_step(responsibilities)`` updates the parameters in place. Stops after ``max_iter``
    iterations or when the objective changed by less than ``tol``; returns the objective of each
    iteration and whether it converged.
    """
    history: list[float] = []
    bound = -np.inf
    for _ in range(max_iter):
        previous = bound
        bound, responsibilities = e_step()
        m_step(responsibilities)
        history.append(bound)
        if abs(bound - previous) < tol:
            return history, True
    return history, False


def _run_em(model: BaseEstimator, start: Callable[[], None], e_step: Callable[[], tuple[float, Any]],
            m_step: Callable[[Any], None], parameters: tuple[str, ...], n_init: int, *, objective: str,
            advice: str) -> None:
    """EM from ``n_init`` starts, keeping the one with the largest final objective.

    ``start()`` sets the initial parameters; the attributes named in ``parameters`` are kept from
    the best start. Sets ``history_``, ``n_iter_``, ``converged_`` and ``lower_bound_`` and warns
    (``objective`` and ``advice`` phrase it) if the kept start did not converge.
    """
    best = None
    for _ in range(n_init):
        start()
        history, converged = _iterate(e_step, m_step, model.max_iter, model.tol)
        bound = history[-1] if history else -np.inf
        if best is None or bound > best[0]:
            best = (bound, history, converged, [getattr(model, name) for name in parameters])
    bound, history, model.converged_, values = best
    for name, value in zip(parameters, values):
        setattr(model, name, value)
    model.history_ = np.array(history, dtype=float)
    model.n_iter_ = len(history)
    model.lower_bound_ = float(bound)
    if not model.converged_ and model.max_iter > 0:
        warnings.warn(
            f"EM did not converge: after max_iter={model.max_iter} iterations the {objective} "
            f"still changed by more than tol={model.tol}. Increase max_iter, loosen tol, or "
            f"{advice}.",
            ConvergenceWarning,
            stacklevel=3,
        )


# --------------------------------------------------------------------------- the estimator


class GaussianMixture(DensityMixin, BaseEstimator):
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

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        Mixture weights :math:`\pi_k`.
    means_ : ndarray of shape (n_components, n_features)
        Component means :math:`\mu_k`.
    covariances_ : ndarray
        Covariances (plus ``reg_covar``), shaped as described under ``precisions_init``.
    converged_ : bool
        Whether the kept initialisation converged within ``max_iter`` iterations.
    n_iter_ : int
        Number of EM iterations of the kept initialisation.
    lower_bound_ : float
        Its last mean log-likelihood per sample (-inf if ``max_iter=0``).
    history_ : ndarray of shape (n_iter_,)
        Its mean log-likelihood per sample at each iteration, measured in the E-step (before the
        M-step of that iteration). Plain EM (``reg_covar=0``) never decreases it; the floor
        ``reg_covar`` may cost up to about :math:`(r/\lambda)^2/4` per eigenvalue
        :math:`\lambda` of a covariance. ``history_[-1] == lower_bound_``.
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
    >>> bool(np.all(np.diff(model.history_) >= 0))
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
            invalid parameters or initial values, or a covariance that becomes singular (with
            ``reg_covar=0``).

        Warns
        -----
        UserWarning
            If a component ends with a weight of about zero (responsible for less than one point).
        sklearn.exceptions.ConvergenceWarning
            If the kept initialisation did not converge within ``max_iter`` iterations.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False)
        _check_finite(X, "fit")
        n, d = X.shape
        K = self.n_components
        if n < K:
            raise ValueError(
                f"GaussianMixture(n_components={K}) needs at least {K} points, but X has {n}; "
                f"use n_components <= {n} or pass more data."
            )
        initial = self._check_initial_values(d)
        random_state = check_random_state(self.random_state)

        _run_em(self, lambda: self._initialise(X, random_state, initial), lambda: self._e_step(X),
                lambda log_resp: self._m_step(X, log_resp), ("weights_", "means_", "covariances_"),
                self.n_init, objective="mean log-likelihood",
                advice="try another initialisation (n_init, random_state)")
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
                stacklevel=2,
            )
        return self

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
        _non_negative(self.tol, "tol", "It is the smallest change of the mean log-likelihood that "
                                       "counts as progress, e.g. 1e-3.")
        _non_negative(self.reg_covar, "reg_covar", "It is added to the diagonal of every "
                                                   "covariance, e.g. 1e-6.")
        _positive_int(self.max_iter, "max_iter", 0, "the number of EM iterations")
        _positive_int(self.n_init, "n_init", 1, "the number of initialisations")

    def _check_initial_values(self, d: int) -> dict[str, NDArray[np.float64]]:
        K, kind = self.n_components, self.covariance_type
        initial = {}
        for name, shape in (("weights_init", (K,)), ("means_init", (K, d)),
                            ("precisions_init", {"full": (K, d, d), "tied": (d, d),
                                                 "diag": (K, d), "spherical": (K,)}[kind])):
            value = getattr(self, name)
            if value is None:
                continue
            try:
                value = np.array(value, dtype=float)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{name} must be numeric; got {value!r}.") from exc
            if value.shape != shape:
                raise ValueError(
                    f"{name} has shape {value.shape}, but n_components={K}, {d} features and "
                    f"covariance_type={kind!r} need shape {shape}."
                )
            if not np.all(np.isfinite(value)):
                raise ValueError(f"{name} contains NaN or infinite values; pass finite numbers.")
            initial[name] = value
        weights = initial.get("weights_init")
        if weights is not None and (np.any(weights < 0) or abs(weights.sum() - 1.0) > 1e-9):
            raise ValueError(
                f"weights_init must be non-negative and sum to one; got {weights.tolist()}."
            )
        precisions = initial.get("precisions_init")
        if precisions is not None:
            # The covariances are the inverses; cho_solve with each Cholesky factor inverts them.
            if kind in ("diag", "spherical"):
                if np.any(precisions <= 0):
                    raise ValueError("precisions_init must be positive (they are 1 / variance).")
                initial["covariances"] = 1.0 / precisions
            else:
                stack = precisions[np.newaxis] if kind == "tied" else precisions
                inverses = np.array([
                    cho_solve((cholesky(p, name="precisions_init" if kind == "tied" else f"precisions_init[{k}]"), True), np.eye(d))
                    for k, p in enumerate(stack)
                ])
                inverses = 0.5 * (inverses + np.swapaxes(inverses, 1, 2))
                initial["covariances"] = inverses[0] if kind == "tied" else inverses
        return initial

    def _initialise(self, X: NDArray[np.float64], random_state: np.random.RandomState,
                    initial: dict[str, NDArray[np.float64]]) -> None:
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
        self.weights_ = initial.get("weights_init", weights)
        self.means_ = initial.get("means_init", means)
        self.covariances_ = initial.get("covariances", covariances)

    def _e_step(self, X: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
        """The mean log-likelihood of X and the log responsibilities, under the current parameters."""
        log_norm, log_resp = _log_posterior(self._weighted_log_prob(X))
        return float(np.mean(log_norm)), log_resp

    def _m_step(self, X: NDArray[np.float64], log_resp: NDArray[np.float64]) -> None:
        self.weights_, self.means_, self.covariances_ = _m_step(
            X, np.exp(log_resp), self.reg_covar, self.covariance_type)

    def _weighted_log_prob(self, X: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\log \pi_k + \log \mathcal N(x_i; \mu_k, \Sigma_k)`, from the public attributes."""
        with np.errstate(divide="ignore"):  # a weight of exactly 0 (set by hand) is log 0 = -inf
            log_weights = np.log(self.weights_)
        return _log_gaussians(X, self.means_, self.covariances_, self.covariance_type) + log_weights

    # ----------------------------------------------------------------------- the fitted density

    def _check_data(self, X: ArrayLike, where: str) -> NDArray[np.float64]:
        array = fitted_input(self, X)
        _check_finite(array, where)
        return array

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Log density :math:`\log p(x) = \log \sum_k \pi_k \mathcal N(x; \mu_k, \Sigma_k)` of each row.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        return logsumexp(self._weighted_log_prob(self._check_data(X, "score_samples")), axis=1)

    def score(self, X: ArrayLike, y: None = None) -> float:
        """Mean log-likelihood per sample, the quantity that EM increases.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        float

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Responsibilities :math:`p(z = k \mid x)`, the posterior over the components.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Each row sums to one.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        _, log_resp = self._e_step(self._check_data(X, "predict_proba"))
        return np.exp(log_resp)

    def predict(self, X: ArrayLike) -> NDArray[np.intp]:
        """The most responsible component of each row.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Component indices in ``0 .. n_components - 1``.

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        return np.argmax(self._weighted_log_prob(self._check_data(X, "predict")), axis=1)

    def sample(self, n_samples: int = 1, random_state: int | np.random.RandomState | None = None
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
        covariance = {"full": K * d * (d + 1) // 2, "tied": d * (d + 1) // 2, "diag": K * d,
                      "spherical": K}[self.covariance_type]
        return covariance + K * d + K - 1

    def bic(self, X: ArrayLike) -> float:
        r"""Bayesian information criterion :math:`-2 \log L + p \log n` (lower is better).

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

        Returns
        -------
        float

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb.
        """
        n = np.shape(X)[0]
        return -2.0 * self.score(X) * n + 2.0 * self._n_parameters()


# --------------------------------------------------------------------------- naive Bayes by EM
#
# The multinomial event model of notebooks/03.02 with some or all labels hidden. The E-step is
# MultinomialNB's posterior; the M-step is MultinomialNB's counting with every unlabelled
# document counted Q_i(c) times in class c (soft counts Q^T X). Both steps, and the objective
# EM increases, are the three functions below; SemiSupervisedNB and MultinomialMixture only
# differ in what is fixed (labelled counts) and how EM starts.


def _soft_counts(X: Any, resp: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""The (K, d) word counts :math:`\sum_i Q_i(c)\, x_{ij}` and nothing densified: :math:`(X^\top Q)^\top`."""
    return np.asarray(X.T @ resp).T


def _log_prior_of_theta(feature_log_prob: NDArray[np.float64], alpha: float) -> float:
    r"""The log of the Dirichlet(alpha + 1) prior density of every class's word distribution (up to a constant)."""
    return alpha * float(feature_log_prob.sum()) if alpha > 0 else 0.0


def _check_em_params(model: BaseEstimator) -> None:
    alpha = model.alpha
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(
            f"alpha must be a finite number > 0 in {type(model).__name__}; got {alpha!r}. With "
            f"alpha = 0 a word that no class has seen gives an unlabelled document probability zero "
            f"under every class, and the E-step has nothing to normalise. Use alpha=1.0 (Laplace) "
            f"or a smaller positive value such as 0.1."
        )
    _non_negative(model.tol, "tol", "It is the smallest change of the objective that counts as "
                                    "progress, e.g. 1e-3.")
    _positive_int(model.max_iter, "max_iter", 0, "the number of EM iterations")


def _never(model: Any) -> bool:
    return False


class SemiSupervisedNB(MultinomialNB):
    r"""Multinomial naive Bayes fitted by EM from labelled and unlabelled documents.

    Nigam, McCallum, Thrun and Mitchell (2000). Start from :class:`MultinomialNB` fitted on the
    labelled documents, then alternate

    * the **E-step**: soft labels :math:`Q_i(c) = p(y = c \mid x_i)` of every unlabelled
      document under the current model (Bayes' rule in log space);
    * the **M-step**: the add-alpha estimates of :class:`MultinomialNB` from the labelled counts
      plus ``unlabeled_weight`` :math:`\lambda` times the soft counts,

    .. math::

        \theta_{cj} = \frac{N^L_{cj} + \lambda \sum_{i \in U} Q_i(c)\, x_{ij} + \alpha}
                           {\sum_{j'} \bigl(N^L_{cj'} + \lambda \sum_{i \in U} Q_i(c)\, x_{ij'}\bigr) + \alpha d},
        \qquad
        \pi_c = \frac{n^L_c + \lambda \sum_{i \in U} Q_i(c)}{n_L + \lambda n_U}.

    Each iteration cannot decrease the objective

    .. math::

        \sum_{i \in L} \log p(x_i, y_i) + \lambda \sum_{i \in U} \log p(x_i)
        + \alpha \sum_{c, j} \log \theta_{cj},

    the log posterior of the parameters under a Dirichlet(alpha + 1) prior (up to a constant and
    the multinomial coefficients), which ``history_`` records divided by
    :math:`n_L + \lambda n_U`. With no unlabelled documents (or :math:`\lambda = 0`) the fit is
    exactly ``MultinomialNB(alpha)``.

    The class prior is the plain weighted frequency, as in :class:`MultinomialNB`; Nigam et al.
    add one to each class count, which changes little since every class has labelled documents.
    Prediction, ``predict_proba`` and ``sample`` are those of :class:`MultinomialNB`.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count added to every word count; must be > 0 here.
    unlabeled_weight : float, default 1.0
        :math:`\lambda \ge 0`, the weight of each unlabelled document relative to a labelled one
        (Nigam et al.'s EM-lambda; 1 is plain EM, 0 ignores the unlabelled documents).
    max_iter : int, default 100
        Largest number of EM iterations (0: the labelled fit only).
    tol : float, default 1e-3
        Stop when the objective per (weighted) document changes by less than this (as
        :class:`GaussianMixture`'s ``tol``). A post of a few hundred words scores about -1e3, and
        the prior term :math:`\alpha \sum \log \theta` adds a part that grows with alpha and the
        vocabulary, so on long documents 1e-2 changes little (notebook 5.3 uses it).

    Attributes
    ----------
    classes_, class_count_, feature_count_, class_log_prior_, feature_log_prob_, n_features_in_
        As in :class:`MultinomialNB`; the counts include the weighted soft counts.
    converged_ : bool
        Whether EM stopped because the objective settled (True when there was nothing to do).
    n_iter_ : int
        Number of EM iterations run.
    history_ : ndarray of shape (n_iter_,)
        The objective per weighted document at each iteration, measured in the E-step (before
        that iteration's M-step); it never decreases.
    lower_bound_ : float
        ``history_[-1]`` (-inf when no iteration ran).

    Examples
    --------
    >>> import numpy as np
    >>> X_labeled = np.array([[3, 0, 1, 0], [0, 2, 0, 1]])
    >>> X_unlabeled = np.array([[2, 0, 1, 0], [4, 0, 0, 1], [0, 3, 0, 2], [0, 1, 0, 3]])
    >>> model = SemiSupervisedNB().fit(X_labeled, ["ham", "spam"], X_unlabeled)
    >>> model.predict(X_unlabeled)
    array(['ham', 'ham', 'spam', 'spam'], dtype='<U4')
    >>> bool(np.all(np.diff(model.history_) >= 0))
    True

    Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
    """

    # MultinomialNB's options that EM fixes: alpha as given, the class prior learned.
    force_alpha = True
    fit_prior = True
    class_prior = None

    def __init__(self, alpha: float = 1.0, unlabeled_weight: float = 1.0, max_iter: int = 100,
                 tol: float = 1e-3):
        self.alpha = alpha
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.tol = tol

    # Adding labelled batches one at a time would not rerun EM; fit takes everything at once.
    partial_fit = available_if(_never)(MultinomialNB.partial_fit)

    def fit(self, X: Any, y: ArrayLike, X_unlabeled: Any = None) -> SemiSupervisedNB:
        """Fit on labelled documents, then run EM with the unlabelled ones.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_labeled, n_features)
            Word counts of the labelled documents.
        y : array_like of shape (n_labeled,)
            Their labels; at least two classes. Every class the model can predict must appear.
        X_unlabeled : {array_like, sparse matrix} of shape (n_unlabeled, n_features), optional
            Word counts of the unlabelled documents, in the same columns (vocabulary) as ``X``.

        Returns
        -------
        self : SemiSupervisedNB

        Raises
        ------
        ValueError
            For alpha <= 0, a negative ``unlabeled_weight``, NaN or negative counts, fewer than
            two classes, or an ``X_unlabeled`` whose columns differ from ``X``'s.

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            If EM did not settle within ``max_iter`` iterations.

        Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
        """
        _check_em_params(self)
        weight = _non_negative(self.unlabeled_weight, "unlabeled_weight",
                               "It weighs each unlabelled document against a labelled one, e.g. 1.0 "
                               "(plain EM) or 0.1.")
        X, y = _validate_X(self, X, y, "fit", reset=True, sparse=True)
        classes, codes = _classes(y, type(self).__name__, return_codes=True)
        self._start(classes, X.shape[1])
        self._update(X, codes)  # MultinomialNB on the labelled documents: EM's starting point
        self.history_, self.n_iter_, self.converged_, self.lower_bound_ = np.empty(0), 0, True, -np.inf
        if X_unlabeled is None:
            return self
        X_u = self._check_unlabeled(X_unlabeled)
        if X_u.shape[0] == 0 or weight == 0:
            return self

        alpha = float(self.alpha)
        labeled_counts, labeled_class_count = self.feature_count_, self.class_count_
        total = X.shape[0] + weight * X_u.shape[0]

        def e_step() -> tuple[float, NDArray[np.float64]]:
            log_norm, log_resp = _log_posterior(self._joint(X_u))
            labeled = labeled_class_count @ self.class_log_prior_ \
                + float(np.sum(labeled_counts * self.feature_log_prob_))
            objective = labeled + weight * log_norm.sum() + _log_prior_of_theta(self.feature_log_prob_, alpha)
            return float(objective / total), log_resp

        def m_step(log_resp: NDArray[np.float64]) -> None:
            resp = np.exp(log_resp)
            self.feature_count_ = labeled_counts + weight * _soft_counts(X_u, resp)
            self.class_count_ = labeled_class_count + weight * resp.sum(axis=0)
            self._estimate(alpha)
            self.class_log_prior_ = self._class_log_prior()

        _run_em(self, lambda: None, e_step, m_step,
                ("feature_count_", "class_count_", "feature_log_prob_", "class_log_prior_"), 1,
                objective="objective per document",
                advice="accept the current fit (the objective only grows)")
        return self

    def _check_unlabeled(self, X_unlabeled: Any) -> Any:
        shape = np.shape(X_unlabeled)
        if len(shape) == 2 and shape[0] == 0 and shape[1] == self.n_features_in_:
            return X_unlabeled  # no unlabelled documents: nothing for EM to do
        try:
            X_u, _ = _validate_X(self, X_unlabeled, None, "predict", reset=False, sparse=True)
            self._data(X_u)  # refuses negative counts
        except ValueError as exc:
            raise ValueError(f"X_unlabeled: {exc}") from exc
        return X_u


class MultinomialMixture(DensityMixin, BaseEstimator):
    r"""A mixture of K multinomials (naive Bayes with every label hidden), fitted by EM.

    Clusters documents: :math:`z \sim \mathrm{Categorical}(\pi)`, then the words of the document
    from :math:`\theta_z`. EM is that of :class:`SemiSupervisedNB` with no labelled documents:
    the E-step gives responsibilities :math:`Q_i(k)`, the M-step the add-alpha estimates from
    the soft counts, :math:`\theta_{kj} \propto \sum_i Q_i(k) x_{ij} + \alpha` and
    :math:`\pi_k = \sum_i Q_i(k) / n`. Each iteration cannot decrease
    :math:`\sum_i \log p(x_i) + \alpha \sum_{k, j} \log \theta_{kj}`, recorded per document in
    ``history_``. A component is a cluster, not a class: its index carries no meaning and a
    restart may permute them.

    Log-probabilities leave out the multinomial coefficient :math:`\log (n_i! / \prod_j x_{ij}!)`
    of each document: it does not depend on the parameters, so it changes no fit, posterior or
    comparison of models on the same documents.

    Parameters
    ----------
    n_components : int, default 2
        Number of components K.
    alpha : float, default 1.0
        Pseudo-count added to every word count of every component (> 0).
    tol : float, default 1e-3
        Stop when the objective per document changes by less than this.
    max_iter : int, default 100
        Largest number of EM iterations per initialisation.
    n_init : int, default 1
        Number of initialisations; the one with the largest final objective is kept.
    init_params : {"random", "random_from_data"}, default "random"
        Initial responsibilities: uniform random numbers normalised per row, or K distinct
        documents chosen at random, one per component. The initial parameters are one M-step
        from them.
    random_state : int, numpy.random.RandomState or None, default None
        Seed of the initialisation.

    Attributes
    ----------
    weights_ : ndarray of shape (n_components,)
        Mixture weights :math:`\pi_k`.
    feature_log_prob_ : ndarray of shape (n_components, n_features)
        :math:`\log \theta_{kj}`.
    feature_count_ : ndarray of shape (n_components, n_features)
        The soft word counts of the last M-step.
    converged_, n_iter_, history_, lower_bound_, n_features_in_
        As in :class:`GaussianMixture`, for the objective above.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[5, 1, 0, 0], [4, 2, 0, 0], [0, 0, 3, 3], [0, 1, 4, 2]])
    >>> model = MultinomialMixture(2, random_state=0).fit(X)
    >>> labels = model.predict(X)
    >>> bool(labels[0] == labels[1] != labels[2] == labels[3])
    True

    Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
    """

    def __init__(self, n_components: int = 2, *, alpha: float = 1.0, tol: float = 1e-3,
                 max_iter: int = 100, n_init: int = 1, init_params: str = "random",
                 random_state: int | np.random.RandomState | None = None):
        self.n_components = n_components
        self.alpha = alpha
        self.tol = tol
        self.max_iter = max_iter
        self.n_init = n_init
        self.init_params = init_params
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        return tags

    def _check_X(self, X: Any, where: str, reset: bool) -> Any:
        try:
            X = validate_data(self, X, reset=reset, accept_sparse=["csr", "csc"], dtype=np.float64,
                              ensure_all_finite=False)
        except ValueError as exc:
            if "features, but" in str(exc):
                raise ValueError(f"{exc} Pass the same columns (the same vocabulary) as in fit, "
                                 f"or refit the model.") from exc
            raise
        _check_finite_counts(X, "MultinomialMixture", where)
        values = _values(X)
        if values.size and values.min() < 0:
            raise ValueError(
                f"Negative values in data passed to MultinomialMixture.{where}; counts must be >= 0. "
                f"Pass word counts (e.g. from CountVectorizer), not centred or scaled features."
            )
        return X

    def fit(self, X: Any, y: None = None) -> MultinomialMixture:
        """Cluster the documents by EM.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Word counts, at least ``n_components`` documents.
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        self : MultinomialMixture

        Raises
        ------
        ValueError
            For invalid parameters, NaN or negative counts, or fewer documents than components.

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            If the kept initialisation did not converge within ``max_iter`` iterations.

        Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
        """
        K = _positive_int(self.n_components, "n_components", 1, "the number of clusters")
        _check_em_params(self)
        _positive_int(self.n_init, "n_init", 1, "the number of initialisations")
        if self.init_params not in ("random", "random_from_data"):
            raise ValueError(f"init_params must be 'random' or 'random_from_data'; got "
                             f"{self.init_params!r}.")
        X = self._check_X(X, "fit", reset=True)
        n = X.shape[0]
        if n < K:
            raise ValueError(f"MultinomialMixture(n_components={K}) needs at least {K} documents, "
                             f"but X has {n}; use n_components <= {n} or pass more documents.")
        random_state = check_random_state(self.random_state)
        alpha = float(self.alpha)

        def e_step() -> tuple[float, NDArray[np.float64]]:
            log_norm, log_resp = _log_posterior(self._joint(X))
            objective = log_norm.sum() + _log_prior_of_theta(self.feature_log_prob_, alpha)
            return float(objective / n), log_resp

        def m_step(log_resp: NDArray[np.float64]) -> None:
            self._m_step(X, np.exp(log_resp), alpha)

        def start() -> None:
            if self.init_params == "random":
                resp = random_state.uniform(size=(n, K))
                resp /= resp.sum(axis=1, keepdims=True)
            else:
                resp = np.zeros((n, K))
                resp[random_state.choice(n, size=K, replace=False), np.arange(K)] = 1.0
            self._m_step(X, resp, alpha)

        _run_em(self, start, e_step, m_step, ("weights_", "feature_count_", "feature_log_prob_"),
                self.n_init, objective="objective per document",
                advice="try another initialisation (n_init, random_state)")
        return self

    def _m_step(self, X: Any, resp: NDArray[np.float64], alpha: float) -> None:
        self.feature_count_ = _soft_counts(X, resp)
        # The same floor as GaussianMixture: an empty component keeps a tiny weight, log finite.
        counts = np.maximum(resp.sum(axis=0), 10.0 * np.finfo(float).eps)
        self.weights_ = counts / counts.sum()
        self.feature_log_prob_ = np.log(add_k(self.feature_count_, alpha, axis=1))

    def _joint(self, X: Any) -> NDArray[np.float64]:
        """log pi_k + sum_j x_ij log theta_kj: one sparse-times-dense product."""
        return np.asarray(X @ self.feature_log_prob_.T) + np.log(self.weights_)

    def score_samples(self, X: Any) -> NDArray[np.float64]:
        r"""Log probability of each document, :math:`\log \sum_k \pi_k \prod_j \theta_{kj}^{x_{ij}}`.

        Without the multinomial coefficient (see the class docstring).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)

        Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
        """
        check_is_fitted(self)
        return logsumexp(self._joint(self._check_X(X, "score_samples", reset=False)), axis=1)

    def score(self, X: Any, y: None = None) -> float:
        """Mean of :meth:`score_samples`.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        r"""Responsibilities :math:`p(z = k \mid x)`; each row sums to one.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
        """
        check_is_fitted(self)
        joint = self._joint(self._check_X(X, "predict_proba", reset=False))
        return np.exp(_log_posterior(joint)[1])

    def predict(self, X: Any) -> NDArray[np.intp]:
        """The most responsible component of each document.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
            Component indices in ``0 .. n_components - 1``.
        """
        check_is_fitted(self)
        return np.argmax(self._joint(self._check_X(X, "predict", reset=False)), axis=1)
