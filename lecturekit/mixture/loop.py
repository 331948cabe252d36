r"""The EM loop shared by every model of the course fitted by expectation-maximisation.

``_iterate`` alternates an E-step and an M-step until the objective settles; ``_run_em`` runs it
from several starts and keeps the best. The models supply their own steps:
:class:`lecturekit.mixture.gaussian.GaussianMixture`, :mod:`lecturekit.mixture.multinomial`
(naive Bayes with labels missing, multinomial features) and :mod:`lecturekit.mixture.bernoulli`
(the same with per-feature Bernoulli features). Derived in
notebooks/05.01-Latent-Variables-and-the-EM-Lower-Bound.ipynb.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning

from lecturekit.naive_bayes.base import _classes, _validate_X


def _positive_int(value: Any, name: str, minimum: int, meaning: str) -> int:
    if isinstance(value, bool) or not isinstance(value, Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum} ({meaning}); got {value!r}.")
    return int(value)


def _non_negative(value: Any, name: str, hint: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not np.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}. {hint}")
    return float(value)


def _log_posterior(joint: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """log p(x^(i)) (the log-sum-exp over classes) and the log responsibilities, from log p(x^(i), k).

    The log-sum-exp of each row is shifted by the row's largest entry (so that no exp overflows),
    as :func:`scipy.special.logsumexp` does, in fewer passes over the (n, K) matrix. With few
    components, NumPy's reductions along the short axis of a C-ordered matrix are slow (a tenth of
    an E-step), so the maximum is taken column by column and the sum as a product with ones.
    """
    top = joint[:, 0].copy()
    for column in joint.T[1:]:
        np.maximum(top, column, out=top)
    top[~np.isfinite(top)] = 0.0  # a row of -inf: its sum is 0 and its log -inf, as in logsumexp
    shifted = joint - top[:, np.newaxis]
    np.exp(shifted, out=shifted)
    with np.errstate(divide="ignore"):
        log_norm = np.log(shifted @ np.ones(joint.shape[1])) + top
    return log_norm, joint - log_norm[:, np.newaxis]


class _VerbosePrinter:
    """Progress messages of an EM fit, printed to stdout in scikit-learn's words and format.

    ``verbose=0`` prints nothing; 1 prints each initialisation, every ``interval``-th iteration
    and whether the initialisation converged; 2 or more adds the time taken and the change of
    the objective (as :class:`sklearn.mixture.GaussianMixture` does).
    """

    def __init__(self, verbose: int, interval: int):
        self.verbose, self.interval = int(verbose), interval

    def init_begin(self, init: int) -> None:
        if self.verbose >= 1:
            print(f"Initialization {init:d}")
            self.init_time = self.iter_time = time.time()

    def iteration_end(self, n_iter: int, change: float) -> None:
        if self.verbose >= 1 and n_iter % self.interval == 0:
            if self.verbose == 1:
                print(f"  Iteration {n_iter:d}")
            else:
                now = time.time()
                print(f"  Iteration {n_iter:d}\t time lapse {now - self.iter_time:.5f}s\t ll change {change:.5f}")
                self.iter_time = now

    def init_end(self, bound: float, converged: bool) -> None:
        message = "converged" if converged else "did not converge"
        if self.verbose == 1:
            print(f"Initialization {message}.")
        elif self.verbose >= 2:
            print(
                f"Initialization {message}. time lapse {time.time() - self.init_time:.5f}s\t lower bound {bound:.5f}."
            )


def _iterate(
    e_step: Callable[[], tuple[float, Any]],
    m_step: Callable[[Any], None],
    max_iter: int,
    tol: float,
    bound: float = -np.inf,
    printer: _VerbosePrinter | None = None,
) -> tuple[list[float], bool]:
    """The EM loop shared by every model here: E-step, M-step, until the objective settles.

    ``e_step()`` returns the objective at the current parameters and the (log) responsibilities;
    ``m_step(responsibilities)`` updates the parameters in place. Stops after ``max_iter``
    iterations or when the objective changed by less than ``tol`` (the first iteration compares
    with ``bound``: -inf, or the last objective of the fit that a warm start continues); returns
    the objective of each iteration and whether it converged.
    """
    history: list[float] = []
    for n_iter in range(1, max_iter + 1):
        previous = bound
        bound, responsibilities = e_step()
        m_step(responsibilities)
        history.append(bound)
        if printer is not None:
            printer.iteration_end(n_iter, bound - previous)
        if abs(bound - previous) < tol:
            return history, True
    return history, False


def _run_em(
    model: BaseEstimator,
    start: Callable[[], None],
    e_step: Callable[[], tuple[float, Any]],
    m_step: Callable[[Any], None],
    parameters: tuple[str, ...],
    n_init: int,
    *,
    objective: str,
    advice: str,
    bound: float = -np.inf,
    printer: _VerbosePrinter | None = None,
    stacklevel: int = 3,
) -> None:
    """EM from ``n_init`` starts, keeping the one with the largest final objective.

    ``start()`` sets the initial parameters; the attributes named in ``parameters`` are kept from
    the best start. Sets ``history_``, ``n_iter_``, ``converged_`` and ``lower_bound_`` and warns
    (``objective`` and ``advice`` phrase it; ``stacklevel`` counts from here to the user's call)
    if the kept start did not converge. ``bound`` and ``printer`` are passed on to
    :func:`_iterate`.
    """
    best = None
    for init in range(n_init):
        if printer is not None:
            printer.init_begin(init)
        start()
        history, converged = _iterate(e_step, m_step, model.max_iter, model.tol, bound, printer)
        if printer is not None and model.max_iter > 0:
            printer.init_end(history[-1], converged)
        final = history[-1] if history else -np.inf
        if best is None or final > best[0]:
            best = (final, history, converged, [getattr(model, name) for name in parameters])
    final, history, model.converged_, values = best
    for name, value in zip(parameters, values, strict=True):
        setattr(model, name, value)
    model.history_ = np.array(history, dtype=float)
    model.n_iter_ = len(history)
    model.lower_bound_ = float(final)
    if not model.converged_ and model.max_iter > 0:
        warnings.warn(
            f"EM did not converge: after max_iter={model.max_iter} iterations the {objective} "
            f"still changed by more than tol={model.tol}. Increase max_iter, loosen tol, or "
            f"{advice}.",
            ConvergenceWarning,
            stacklevel=stacklevel,
        )


def _check_em_params(model: BaseEstimator) -> None:
    """alpha, tol and max_iter of naive Bayes fitted by EM (mixture.multinomial, mixture.bernoulli)."""
    alpha = model.alpha
    if isinstance(alpha, bool) or not isinstance(alpha, Real) or not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(
            f"alpha must be a finite number > 0 in {type(model).__name__}; got {alpha!r}. With "
            f"alpha = 0 a word that no class has seen gives an unlabelled document probability zero "
            f"under every class, and the E-step has nothing to normalise. Use alpha=1.0 (Laplace) "
            f"or a smaller positive value such as 0.1."
        )
    _non_negative(model.tol, "tol", "It is the smallest change of the objective that counts as progress, e.g. 1e-3.")
    _positive_int(model.max_iter, "max_iter", 0, "the number of EM iterations")


# --------------------------------------------------------------------------- a fitted mixture


class _FittedMixture:
    r"""What a fitted mixture answers: the density of each row and the component responsible for it.

    Shared by :class:`lecturekit.mixture.gaussian.GaussianMixture` and
    :class:`lecturekit.mixture.multinomial.MultinomialMixture`, which give ``_check_data(X, where)``
    (checks that the model is fitted and X for the method ``where``) and
    ``_weighted_log_prob(X)``, the (m, K) matrix :math:`\log \pi_k + \log p(x^{(i)} \mid z = k)`.
    """

    def score_samples(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Log density :math:`\log p(x) = \log \sum_k \pi_k\, p(x \mid z = k)` of each row.

        For :class:`~lecturekit.mixture.multinomial.MultinomialMixture`, without the multinomial
        coefficient of each document (see its class docstring).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Sparse only for :class:`~lecturekit.mixture.multinomial.MultinomialMixture`.

        Returns
        -------
        ndarray of shape (n_samples,)

        Derived in notebooks/05.02-Gaussian-Mixtures.ipynb and
        notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
        """
        log_density = logsumexp(self._weighted_log_prob(self._check_data(X, "score_samples")), axis=1)
        return log_density.astype(self._output_dtype(), copy=False)

    def _output_dtype(self) -> type:
        """float32 for a model fitted on float32 data (as scikit-learn), float64 otherwise."""
        return np.float32 if np.asarray(self.weights_).dtype == np.float32 else np.float64

    def score(self, X: ArrayLike, y: None = None) -> float:
        """Mean log-likelihood per sample (:meth:`score_samples`), the quantity that EM increases.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Points (or documents) whose average log density is wanted.
        y : None
            Ignored; present for the scikit-learn API.

        Returns
        -------
        float
        """
        return float(np.mean(self.score_samples(X)))

    def predict_proba(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Responsibilities :math:`p(z = k \mid x)`, the posterior over the components.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Points (or documents) to assign softly.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            Each row sums to one.
        """
        joint = self._weighted_log_prob(self._check_data(X, "predict_proba"))
        return np.exp(_log_posterior(joint)[1]).astype(self._output_dtype(), copy=False)

    def predict(self, X: ArrayLike) -> NDArray[np.intp]:
        """The most responsible component of each row.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Points (or documents) to cluster.

        Returns
        -------
        ndarray of shape (n_samples,)
            Component indices in ``0 .. n_components - 1``.
        """
        return np.argmax(self._weighted_log_prob(self._check_data(X, "predict")), axis=1)


# --------------------------------------------------------------------------- naive Bayes with missing labels
#
# What SemiSupervisedNB (multinomial) and SemiSupervisedBernoulliNB (bernoulli) share around
# their own E- and M-steps: the parameters, the unlabelled documents, and how EM is run.


def _unlabeled_weight(model: BaseEstimator) -> float:
    """``unlabeled_weight`` checked, after alpha, tol and max_iter (:func:`_check_em_params`)."""
    _check_em_params(model)
    return _non_negative(
        model.unlabeled_weight,
        "unlabeled_weight",
        "It weighs each unlabelled document against a labelled one, e.g. 1.0 (plain EM) or 0.1.",
    )


def _validated_unlabeled(model: BaseEstimator, X_unlabeled: Any, check: Callable[[Any], Any] | None = None) -> Any:
    """``X_unlabeled`` validated against the columns of the labelled fit, sparse kept sparse.

    ``check`` (e.g. the refusal of negative counts) runs on the validated matrix; the messages of
    both say "X_unlabeled: ". An empty (0, n_features) input is returned as it is: no unlabelled
    documents, nothing for EM to do.
    """
    shape = np.shape(X_unlabeled)
    if len(shape) == 2 and shape[0] == 0 and shape[1] == model.n_features_in_:
        return X_unlabeled
    try:
        X_u, _ = _validate_X(model, X_unlabeled, None, "predict", reset=False, sparse=True)
        if check is not None:
            check(X_u)
    except ValueError as exc:
        raise ValueError(f"X_unlabeled: {exc}") from exc
    return X_u


def _soft_counts(X: Any, resp: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""The (K, d) soft word counts :math:`\sum_i r_{ik}\, x^{(i)}_j`, nothing densified.

    ``(X.T @ resp).T``: a sparse ``X`` stays sparse.
    """
    return np.asarray(X.T @ resp).T


class _SemiSupervisedEM:
    r"""``fit(X, y, X_unlabeled)`` of naive Bayes with missing labels: the labelled fit, then EM.

    Shared by :class:`lecturekit.mixture.multinomial.SemiSupervisedNB` and
    :class:`lecturekit.mixture.bernoulli.SemiSupervisedBernoulliNB`, which give

    * ``_fit_labeled(X, classes, codes)``: the plain naive Bayes fit of the labelled documents
      (sets ``classes_``, ``class_count_``, ``feature_count_`` and the estimates); returns X as
      the model reads it (e.g. binarised);
    * ``_check_unlabeled(X_unlabeled)``: the unlabelled documents, checked and read the same way;
    * ``_estimate_all(alpha)``: ``feature_log_prob_`` and ``class_log_prior_`` from the counts
      (the M-step's closed form) and ``_log_prior_of_theta(alpha)``, the log prior density of the
      word probabilities (up to a constant);
    * ``_joint(X, where)``, :math:`\log p(x, y = k)`, and ``_em_parameters``, the fitted attributes.

    EM climbs :math:`J = \sum_{i \in L} \log p(x^{(i)}, y^{(i)}) + \lambda \sum_{i \in U} \log p(x^{(i)}) +
    \log p(\theta)`, recorded in ``history_`` divided by :math:`m_L + \lambda m_U`: the E-step
    gives the responsibilities :math:`r_{ik}` of every unlabelled document, the M-step adds :math:`\lambda`
    times its soft counts to the labelled counts.
    """

    def fit(self, X: Any, y: ArrayLike, X_unlabeled: Any = None) -> Any:
        """Fit on labelled documents, then run EM with the unlabelled ones.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_labeled, n_features)
            The labelled documents: word counts (:class:`~lecturekit.mixture.multinomial.SemiSupervisedNB`)
            or features binarised with ``binarize``
            (:class:`~lecturekit.mixture.bernoulli.SemiSupervisedBernoulliNB`).
        y : array_like of shape (n_labeled,)
            Their labels; at least two classes. Every class the model can predict must appear.
        X_unlabeled : {array_like, sparse matrix} of shape (n_unlabeled, n_features), optional
            The unlabelled documents, in the same columns (vocabulary) as ``X``.

        Returns
        -------
        self
            The fitted model.

        Raises
        ------
        ValueError
            For alpha <= 0, a negative ``unlabeled_weight`` or ``tol``, a bad ``max_iter`` (or
            ``binarize``), NaN values, negative counts (or non-binary values with
            ``binarize=None``), fewer than two classes, or an ``X_unlabeled`` whose columns differ
            from ``X``'s.

        Warns
        -----
        sklearn.exceptions.ConvergenceWarning
            If EM did not settle within ``max_iter`` iterations.

        Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
        """
        weight = _unlabeled_weight(self)
        alpha = float(self.alpha)
        X, y = _validate_X(self, X, y, "fit", reset=True, sparse=True)
        classes, codes = _classes(y, type(self).__name__, return_codes=True)
        X = self._fit_labeled(X, classes, codes)  # naive Bayes on the labelled documents
        X_u = self._unlabeled_for_em(X_unlabeled, weight)
        if X_u is None:
            return self
        labeled_class_count, labeled_feature_count = self.class_count_, self.feature_count_
        rows = np.arange(X.shape[0])
        total = X.shape[0] + weight * X_u.shape[0]

        def e_step() -> tuple[float, NDArray[np.float64]]:
            log_norm, log_resp = _log_posterior(self._joint(X_u, "fit"))
            labeled = float(self._joint(X, "fit")[rows, codes].sum())
            objective = labeled + weight * float(log_norm.sum()) + self._log_prior_of_theta(alpha)
            return objective / total, log_resp

        def m_step(log_resp: NDArray[np.float64]) -> None:
            resp = np.exp(log_resp)
            self.class_count_ = labeled_class_count + weight * resp.sum(axis=0)
            self.feature_count_ = labeled_feature_count + weight * _soft_counts(X_u, resp)
            self._estimate_all(alpha)

        _run_em(
            self,
            lambda: None,
            e_step,
            m_step,
            self._em_parameters,
            1,
            objective="objective per document",
            advice="accept the current fit (the objective only grows)",
        )
        return self

    def _unlabeled_for_em(self, X_unlabeled: Any, weight: float) -> Any:
        """The unlabelled documents EM should use (``_check_unlabeled``'s), or None.

        None when there are none or their ``weight`` is 0: the labelled fit is then the model.
        Sets ``history_``, ``n_iter_``, ``converged_`` and ``lower_bound_`` to "no iteration ran".
        """
        self.history_, self.n_iter_, self.converged_, self.lower_bound_ = np.empty(0), 0, True, -np.inf
        if X_unlabeled is None:
            return None
        X_u = self._check_unlabeled(X_unlabeled)
        return None if X_u.shape[0] == 0 or weight == 0 else X_u
