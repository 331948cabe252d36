r"""Multinomial naive Bayes with some or all labels hidden, fitted by EM.

:class:`SemiSupervisedNB` (labelled and unlabelled documents) and :class:`MultinomialMixture`
(no labels: document clustering) are the multinomial event model of
:class:`lecturekit.naive_bayes.MultinomialNB` with labels missing: the E-step is its posterior,
the M-step its add-alpha counting with soft counts (Nigam, McCallum, Thrun and Mitchell, 2000).
The loop is :mod:`lecturekit.mixture.loop`; ``tests/lecturekit/mixture/test_multinomial.py`` checks
that each soft-count M-step is scikit-learn's ``MultinomialNB`` fitted with sample weights.

Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, DensityMixin
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from lecturekit.estimation import add_k
from lecturekit.mixture.loop import (
    _check_em_params,
    _FittedMixture,
    _log_posterior,
    _positive_int,
    _run_em,
    _SemiSupervisedEM,
    _soft_counts,
    _validated_unlabeled,
)
from lecturekit.naive_bayes._counting import _values
from lecturekit.naive_bayes.base import _check_finite as _check_finite_counts
from lecturekit.naive_bayes.multinomial import MultinomialNB

# --------------------------------------------------------------------------- naive Bayes by EM
#
# The multinomial event model of notebooks/03.02 with some or all labels hidden. The E-step is
# MultinomialNB's posterior; the M-step is MultinomialNB's counting with every unlabelled
# document counted Q_i(c) times in class c (soft counts Q^T X, loop._soft_counts), and the
# objective EM increases adds the Dirichlet log prior below. SemiSupervisedNB (whose EM is
# loop._SemiSupervisedEM, shared with the Bernoulli model) and MultinomialMixture only differ
# in what is fixed (labelled counts) and how EM starts.


def _dirichlet_log_prior(feature_log_prob: NDArray[np.float64], alpha: float) -> float:
    r"""The log of the Dirichlet(alpha + 1) prior density of every class's word distribution (up to a constant)."""
    return alpha * float(feature_log_prob.sum()) if alpha > 0 else 0.0


def _never(model: Any) -> bool:
    return False


class SemiSupervisedNB(_SemiSupervisedEM, MultinomialNB):
    r"""Multinomial naive Bayes fitted by EM from labelled and unlabelled documents.

    Nigam, McCallum, Thrun and Mitchell (2000). Start from :class:`MultinomialNB` fitted on the
    labelled documents, then alternate

    * the **E-step**: the responsibilities :math:`r_{ik} = p(y = k \mid x^{(i)})` of every
      unlabelled document under the current model (Bayes' rule in log space);
    * the **M-step**: the add-alpha estimates of :class:`MultinomialNB` from the labelled counts
      plus ``unlabeled_weight`` :math:`\lambda` times the soft counts,

    .. math::

        \phi_{j \mid y = k} = \frac{\tilde N_{kj} + \alpha}{\sum_{j'} \tilde N_{kj'} + \alpha V},
        \qquad
        \pi_k = \frac{m^L_k + \lambda \sum_{i \in U} r_{ik}}{m_L + \lambda m_U},
        \qquad
        \tilde N_{kj} = N^L_{kj} + \lambda \sum_{i \in U} r_{ik}\, x^{(i)}_j.

    Each iteration cannot decrease the objective

    .. math::

        \sum_{i \in L} \log p(x^{(i)}, y^{(i)}) + \lambda \sum_{i \in U} \log p(x^{(i)})
        + \alpha \sum_{k, j} \log \phi_{j \mid y = k},

    the log posterior of the parameters under a Dirichlet(alpha + 1) prior (up to a constant and
    the multinomial coefficients), which ``history_`` records divided by
    :math:`m_L + \lambda m_U`. With no unlabelled documents (or :math:`\lambda = 0`) the fit is
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
        the prior term :math:`\alpha \sum \log \phi` adds a part that grows with alpha and the
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

    def __init__(self, alpha: float = 1.0, unlabeled_weight: float = 1.0, max_iter: int = 100, tol: float = 1e-3):
        self.alpha = alpha
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.tol = tol

    # Adding labelled batches one at a time would not rerun EM; fit takes everything at once.
    partial_fit = available_if(_never)(MultinomialNB.partial_fit)

    # fit(X, y, X_unlabeled) is _SemiSupervisedEM's; what it asks of this model:

    _em_parameters = ("feature_count_", "class_count_", "feature_log_prob_", "class_log_prior_")

    def _fit_labeled(self, X: Any, classes: NDArray[Any], codes: NDArray[np.intp]) -> Any:
        """MultinomialNB(alpha) on the labelled documents: EM's starting point."""
        self._start(classes, X.shape[1])
        self._update(X, codes)
        return X

    def _estimate_all(self, alpha: float) -> None:
        self._estimate(alpha)
        self.class_log_prior_ = self._class_log_prior()

    def _log_prior_of_theta(self, alpha: float) -> float:
        return _dirichlet_log_prior(self.feature_log_prob_, alpha)

    def _check_unlabeled(self, X_unlabeled: Any) -> Any:
        return _validated_unlabeled(self, X_unlabeled, self._data)  # _data refuses negative counts


class MultinomialMixture(_FittedMixture, DensityMixin, BaseEstimator):
    r"""A mixture of K multinomials (naive Bayes with every label hidden), fitted by EM.

    Clusters documents: :math:`z \sim \mathrm{Categorical}(\pi)`, then the words of the document
    from component :math:`z`'s word distribution :math:`\phi_{\cdot \mid y = z}`. EM is that of
    :class:`SemiSupervisedNB` with no labelled documents: the E-step gives responsibilities
    :math:`r_{ik}`, the M-step the add-alpha estimates from the soft counts,
    :math:`\phi_{j \mid y = k} \propto \sum_i r_{ik} x^{(i)}_j + \alpha` and
    :math:`\pi_k = \sum_i r_{ik} / m`.
    Each iteration cannot decrease
    :math:`\sum_i \log p(x^{(i)}) + \alpha \sum_{k, j} \log \phi_{j \mid y = k}`, recorded per document in
    ``history_``. A component is a cluster, not a class: its index carries no meaning and a
    restart may permute them.

    Log-probabilities leave out the multinomial coefficient :math:`\log (n_i! / \prod_j x^{(i)}_j!)`
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
        :math:`\log \phi_{j \mid y = k}`.
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

    def __init__(
        self,
        n_components: int = 2,
        *,
        alpha: float = 1.0,
        tol: float = 1e-3,
        max_iter: int = 100,
        n_init: int = 1,
        init_params: str = "random",
        random_state: int | np.random.RandomState | None = None,
    ):
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
            X = validate_data(
                self, X, reset=reset, accept_sparse=["csr", "csc"], dtype=np.float64, ensure_all_finite=False
            )
        except ValueError as exc:
            if "features, but" in str(exc):
                raise ValueError(
                    f"{exc} Pass the same columns (the same vocabulary) as in fit, or refit the model."
                ) from exc
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
            raise ValueError(f"init_params must be 'random' or 'random_from_data'; got {self.init_params!r}.")
        X = self._check_X(X, "fit", reset=True)
        n = X.shape[0]
        if n < K:
            raise ValueError(
                f"MultinomialMixture(n_components={K}) needs at least {K} documents, "
                f"but X has {n}; use n_components <= {n} or pass more documents."
            )
        random_state = check_random_state(self.random_state)
        alpha = float(self.alpha)

        def e_step() -> tuple[float, NDArray[np.float64]]:
            log_norm, log_resp = _log_posterior(self._weighted_log_prob(X))
            objective = log_norm.sum() + _dirichlet_log_prior(self.feature_log_prob_, alpha)
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

        _run_em(
            self,
            start,
            e_step,
            m_step,
            ("weights_", "feature_count_", "feature_log_prob_"),
            self.n_init,
            objective="objective per document",
            advice="try another initialisation (n_init, random_state)",
        )
        return self

    def _m_step(self, X: Any, resp: NDArray[np.float64], alpha: float) -> None:
        self.feature_count_ = _soft_counts(X, resp)
        # The same floor as GaussianMixture: an empty component keeps a tiny weight, log finite.
        counts = np.maximum(resp.sum(axis=0), 10.0 * np.finfo(float).eps)
        self.weights_ = counts / counts.sum()
        self.feature_log_prob_ = np.log(add_k(self.feature_count_, alpha, axis=1))

    def _check_data(self, X: Any, where: str) -> Any:
        check_is_fitted(self)
        return self._check_X(X, where, reset=False)

    def _weighted_log_prob(self, X: Any) -> NDArray[np.float64]:
        """log pi_k + sum_j x_ij log theta_kj: one sparse-times-dense product."""
        return np.asarray(X @ self.feature_log_prob_.T) + np.log(self.weights_)
