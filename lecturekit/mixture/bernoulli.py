r"""Bernoulli naive Bayes with missing labels, fitted by EM.

The model is the per-feature Bernoulli naive Bayes of :class:`lecturekit.naive_bayes.BernoulliNB`
(a class :math:`y \sim \mathrm{Categorical}(\pi)`, then every feature
:math:`x_j \in \{0, 1\}` independently, present with probability :math:`\phi_{j \mid y = k}` in class
:math:`k`), fitted from
labelled documents :math:`L` and unlabelled documents :math:`U` whose class is a latent variable.
Expectation-maximisation climbs

.. math::

    J(\theta) = \sum_{i \in L} \log p(x^{(i)}, y^{(i)}) + \lambda \sum_{i \in U} \log p(x^{(i)})
    + \alpha \sum_{k, j} \bigl[\log \phi_{j \mid y = k} + \log (1 - \phi_{j \mid y = k})\bigr],

the log posterior under a Beta(alpha + 1, alpha + 1) prior on every :math:`\phi_{j \mid y = k}` (up to a
constant), with weight :math:`\lambda` (``unlabeled_weight``) on each unlabelled document. The
E-step gives the responsibilities :math:`r_{ik} = p(y = k \mid x^{(i)})` of each unlabelled document,
in log space; the M-step counts **documents** (not word occurrences), each unlabelled one split
between the classes by its responsibilities. This per-feature M-step is *not* the M-step of the
multinomial event model (:class:`lecturekit.mixture.SemiSupervisedNB`), whose denominator counts words.

A sparse document-term matrix stays sparse: a document's score in class :math:`k` is
:math:`\log \pi_k + \sum_j \log(1 - \phi_{j \mid y = k}) + \sum_j x_j w_{kj}`, with
:math:`w_{kj} = \log \phi_{j \mid y = k} - \log(1 - \phi_{j \mid y = k})`: one sparse-times-dense
product. The soft counts are ``X_U.T @ resp``. The EM loop is :mod:`lecturekit.mixture.loop`'s.
``tests/lecturekit/mixture/test_bernoulli.py`` checks that the objective never decreases, that the
posteriors equal a brute-force sum over the labels, and that without unlabelled documents
the fit is scikit-learn's ``BernoulliNB`` to 1e-10.

Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.utils.validation import check_is_fitted

from lecturekit.mixture.loop import _SemiSupervisedEM, _validated_unlabeled
from lecturekit.naive_bayes._counting import _class_feature_counts, _values
from lecturekit.naive_bayes.base import _Posterior, _validate_X
from lecturekit.naive_bayes.bernoulli import _threshold

__all__ = ["SemiSupervisedBernoulliNB"]


class SemiSupervisedBernoulliNB(_SemiSupervisedEM, _Posterior):
    r"""Bernoulli naive Bayes fitted by EM from labelled and unlabelled documents.

    Starts from the Bernoulli naive Bayes fit of the labelled documents (scikit-learn's
    ``BernoulliNB(alpha)``), then alternates

    * the **E-step**: the responsibilities :math:`r_{ik} = p(y = k \mid x^{(i)})` of every
      unlabelled document, by Bayes' rule in log space;
    * the **M-step**: with the soft document counts
      :math:`\tilde m_k = m^L_k + \lambda \sum_{i \in U} r_{ik}` and
      :math:`\tilde N_{kj} = N^L_{kj} + \lambda \sum_{i \in U} r_{ik}\, x^{(i)}_j`,

      .. math::

          \phi_{j \mid y = k} = \frac{\tilde N_{kj} + \alpha}{\tilde m_k + 2\alpha},
          \qquad \pi_k = \frac{\tilde m_k}{m_L + \lambda m_U},

    until the objective :math:`J` per weighted document (module docstring) changes by less than
    ``tol``. No iteration can decrease it.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count added to both outcomes of every feature (> 0): as in ``BernoulliNB``.
    binarize : float or None, default 0.0
        Threshold: a value above it counts as present (as in ``BernoulliNB``). None: X already
        holds 0/1 values, which is checked. Sparse X needs ``binarize >= 0``.
    unlabeled_weight : float, default 1.0
        :math:`\lambda \ge 0`, the weight of an unlabelled document against a labelled one
        (Nigam et al.'s EM-lambda; 0 ignores the unlabelled documents).
    max_iter : int, default 100
        Largest number of EM iterations (0: the labelled fit only).
    tol : float, default 1e-6
        Stop when the objective per weighted document changes by less than this.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The labels seen in ``y``, sorted.
    class_count_ : ndarray of shape (n_classes,)
        :math:`\tilde m_k`, labelled documents plus weighted soft counts.
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`\tilde N_{kj}`, documents of class k that contain feature j (soft, weighted).
    class_log_prior_ : ndarray of shape (n_classes,)
        :math:`\log \pi_k`.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log \phi_{j \mid y = k}`.
    history_ : ndarray of shape (n_iter_,)
        :math:`J / (m_L + \lambda m_U)` at each iteration, measured in the E-step (before that
        iteration's M-step); it never decreases.
    n_iter_ : int
        Number of EM iterations run.
    converged_ : bool
        Whether EM stopped because the objective settled (True when there was nothing to do).
    lower_bound_ : float
        ``history_[-1]`` (-inf when no iteration ran).
    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    Examples
    --------
    One labelled document per class and four unlabelled ones, each of which EM splits between
    the classes by its posterior:

    >>> X_unlabeled = [[1, 1, 1, 0], [1, 0, 0, 0], [0, 1, 1, 1], [0, 0, 1, 1]]
    >>> model = SemiSupervisedBernoulliNB().fit([[1, 1, 0, 0], [0, 0, 1, 1]], ["ham", "spam"],
    ...                                         X_unlabeled)
    >>> model.predict_proba(X_unlabeled)[:, 1].round(3)  # p(spam | x)
    array([0.106, 0.043, 0.946, 0.975])
    >>> model.class_count_.round(2)  # 1 + 0.894 + 0.957 + 0.054 + 0.025 documents of ham
    array([2.93, 3.07])

    Derived in notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
    """

    def __init__(
        self,
        alpha: float = 1.0,
        *,
        binarize: float | None = 0.0,
        unlabeled_weight: float = 1.0,
        max_iter: int = 100,
        tol: float = 1e-6,
    ):
        self.alpha = alpha
        self.binarize = binarize
        self.unlabeled_weight = unlabeled_weight
        self.max_iter = max_iter
        self.tol = tol

    # ------------------------------------------------------------------ data

    def _binary(self, X: Any, where: str) -> Any:
        """X as 0/1 floats, sparse kept sparse (only its stored values are touched)."""
        values = _values(X)
        if self.binarize is None:
            if values.size and np.any((values != 0) & (values != 1)):
                raise ValueError(
                    f"X passed to SemiSupervisedBernoulliNB.{where} holds values other than 0 and 1, "
                    f"but binarize=None says it is already binary. Set binarize=0.0 to count any "
                    f"positive value as present."
                )
            data = values.astype(np.float64)
        else:
            data = (values > _threshold(self.binarize, X)).astype(np.float64)
        if sp.issparse(X):
            return (
                sp.csr_matrix((data, X.indices, X.indptr), shape=X.shape)
                if X.format == "csr"
                else sp.csc_matrix((data, X.indices, X.indptr), shape=X.shape).tocsr()
            )
        return data

    def _check_unlabeled(self, X_unlabeled: Any) -> Any:
        X_u = _validated_unlabeled(self, X_unlabeled)
        return self._binary(X_u, "fit (X_unlabeled)") if np.shape(X_u)[0] else X_u

    # ------------------------------------------------------------------ the two steps

    def _estimate_all(self, alpha: float) -> None:
        """The M-step's closed form from ``class_count_`` and ``feature_count_``."""
        denominator = np.log(self.class_count_ + 2.0 * alpha)[:, np.newaxis]
        absent = np.maximum(self.class_count_[:, np.newaxis] - self.feature_count_, 0.0)
        self.feature_log_prob_ = np.log(self.feature_count_ + alpha) - denominator
        self._log_absent = np.log(absent + alpha) - denominator  # log(1 - theta), accurately
        self.class_log_prior_ = np.log(self.class_count_) - np.log(self.class_count_.sum())

    def _joint(self, X: Any, where: str) -> NDArray[np.float64]:
        r"""The (m, K) matrix :math:`\log p(x^{(i)}, y = k)` for binary X: one sparse product."""
        joint = np.asarray(X @ (self.feature_log_prob_ - self._log_absent).T)
        return joint + (self.class_log_prior_ + self._log_absent.sum(axis=1))

    def _log_prior_of_theta(self, alpha: float) -> float:
        return alpha * float(self.feature_log_prob_.sum() + self._log_absent.sum())

    # ------------------------------------------------------------------ fit (from _SemiSupervisedEM)

    _em_parameters = ("class_count_", "feature_count_", "feature_log_prob_", "_log_absent", "class_log_prior_")

    def _fit_labeled(self, X: Any, classes: NDArray[Any], codes: NDArray[np.intp]) -> Any:
        """BernoulliNB(alpha) on the labelled documents: EM's starting point."""
        X = self._binary(X, "fit")
        self.classes_ = classes
        self.class_count_ = np.bincount(codes, minlength=classes.size).astype(np.float64)
        self.feature_count_ = _class_feature_counts(X, codes, classes.size)
        self._estimate_all(float(self.alpha))
        return X

    # ------------------------------------------------------------------ predict (from _Posterior)

    def _predict_input(self, X: Any) -> Any:
        check_is_fitted(self)
        X, _ = _validate_X(self, X, None, "predict", reset=False, sparse=True)
        return self._binary(X, "predict")
