r"""Naive Bayes: Bernoulli, multinomial and Gaussian class-conditional models.

Every model here tells the same generative story: draw a class :math:`y \sim
\mathrm{Categorical}(\pi)`, then draw each feature *independently given the class* (the naive
Bayes assumption). Only the distribution of a feature given the class changes:

=====================  ==========================================  ==============================
Model                  :math:`x_j \mid y = c`                      Estimate (from counts)
=====================  ==========================================  ==============================
:class:`BernoulliNB`   word j present with probability p_jc        (N_jc + a) / (N_c + 2a)
:class:`MultinomialNB` a document of words drawn from theta_c      (N_jc + a) / (N_c. + a d)
:class:`GaussianNB`    :math:`\mathcal N(\mu_{jc}, \sigma^2_{jc})` class mean, variance (MLE)
=====================  ==========================================  ==============================

Fitting is a single counting pass over the data; the smoothed estimates come from
:func:`lecturekit.estimation.add_k`, so the add-alpha formula lives in one place. Sparse
document-term matrices stay sparse: counting uses ``np.bincount`` over the stored non-zeros and
prediction a sparse-times-dense product, never ``X.toarray()``. All scores are kept in log space
and normalised by the log-sum-exp over the classes, after subtracting each row's maximum.

Parameter and attribute names shared with :mod:`sklearn.naive_bayes` keep scikit-learn's meaning
(``alpha``, ``force_alpha``, ``fit_prior``, ``class_prior``, ``binarize``, ``priors``,
``var_smoothing``, ``classes_``, ``class_count_``, ``feature_count_``, ``class_log_prior_``,
``feature_log_prob_``, ``theta_``, ``var_``, ``epsilon_``); ``tests/test_naive_bayes.py``
checks that the fitted estimates and the probabilities agree with scikit-learn's to 1e-8.

Derived in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (Bernoulli),
notebooks/03.02-The-Multinomial-Event-Model.ipynb (multinomial) and
notebooks/03.03-Gaussian-and-Multiclass-Naive-Bayes.ipynb (Gaussian, multiclass).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d, validate_data

from lecturekit._checks import check_finite, label
from lecturekit.estimation import add_k

__all__ = ["BernoulliNB", "GaussianNB", "MultinomialNB"]

#: The smallest alpha used unless ``force_alpha=True`` (scikit-learn's bound, same warning).
ALPHA_MIN = 1e-10


# --------------------------------------------------------------------------- helpers


def _values(X: Any) -> NDArray[Any]:
    """The stored values of ``X``: ``X.data`` for a sparse matrix (no densifying), else ``X``."""
    return X.data if sp.issparse(X) else X


def _check_finite(X: Any, name: str, where: str) -> None:
    check_finite(_values(X), f"X passed to {name}.{where} contains NaN or infinite values; naive "
                             f"Bayes cannot score them. Remove those rows or impute the values "
                             f"first (e.g. sklearn.impute.SimpleImputer).")


def _validate_X(estimator: BaseEstimator, X: Any, y: Any, where: str, *, reset: bool,
                sparse: bool) -> tuple[Any, Any]:
    """validate_data with the course's messages; sparse X stays sparse (CSR or CSC)."""
    name = type(estimator).__name__
    accept = ["csr", "csc"] if sparse else False
    try:
        if y is None and where != "predict":
            validate_data(estimator, X, y, reset=reset)  # raises "requires y to be passed"
        if where == "predict":
            X = validate_data(estimator, X, reset=False, accept_sparse=accept,
                              ensure_all_finite=False)
        else:
            X, y = validate_data(estimator, X, y, reset=reset, accept_sparse=accept,
                                 ensure_all_finite=False)
    except ValueError as exc:
        if "features, but" in str(exc):
            raise ValueError(
                f"{exc} Pass the same columns (the same vocabulary) as in fit, or refit the model."
            ) from exc
        raise
    _check_finite(X, name, where)
    if y is not None:
        y = column_or_1d(y, warn=True)
        if y.dtype.kind not in "biuSU":  # integer, boolean and string labels are always classes
            try:
                check_classification_targets(y)
            except TypeError as exc:
                raise ValueError(
                    f"The labels in y cannot be sorted ({exc}); give every label the same type, "
                    f"e.g. all strings."
                ) from exc
    return X, y


def _encode(y: NDArray[Any], classes: NDArray[Any], name: str) -> NDArray[np.intp]:
    """Codes 0..K-1 of the labels ``y`` in the sorted ``classes``; unknown labels are refused."""
    try:
        codes = np.searchsorted(classes, y)
    except TypeError as exc:
        raise ValueError(
            f"The labels in y cannot be compared with classes_ {classes.tolist()} ({exc}); give "
            f"labels of the same type."
        ) from exc
    codes = np.clip(codes, 0, classes.size - 1)
    unknown = classes[codes] != y
    if np.any(unknown):
        raise ValueError(
            f"y holds label(s) {np.unique(y[unknown])[:5].tolist()} that are not among the classes "
            f"{classes.tolist()} given on the first call to {name}.partial_fit; pass every "
            f"possible label in `classes` on the first call (e.g. classes=np.unique(y_all))."
        )
    return codes.astype(np.intp, copy=False)


def _classes(y: Any, name: str, return_codes: bool = False) -> Any:
    """The sorted distinct labels (and, with ``return_codes``, the code of each label)."""
    try:
        classes, codes = np.unique(np.asarray(y), return_inverse=True)
    except TypeError as exc:
        raise ValueError(
            f"The labels cannot be sorted ({exc}); give every label the same type, e.g. all "
            f"strings."
        ) from exc
    if classes.size < 2:
        shown = f" ({label(classes[0])})" if classes.size else ""
        raise ValueError(
            f"{name} needs at least two classes, but it was given only one class{shown}: with one "
            f"class there is nothing to classify. Add examples of another class (with "
            f"partial_fit, list every possible label in `classes`)."
        )
    return (classes, codes.ravel().astype(np.intp, copy=False)) if return_codes else classes


def _class_feature_counts(X: Any, codes: NDArray[np.intp], n_classes: int,
                          data: NDArray[Any] | None = None) -> NDArray[np.float64]:
    """The (n_classes, n_features) sums of X over the rows of each class, in one pass.

    Sparse X: one ``np.bincount`` of ``class * n_features + column`` weighted by the stored values
    (``data`` replaces ``X.data``, e.g. binarised values). Dense X: one BLAS product with the
    one-hot class indicator.
    """
    n, d = X.shape
    data = _values(X) if data is None else data
    if sp.issparse(X):
        if X.format == "csr":
            keys = np.repeat(codes.astype(np.int64), np.diff(X.indptr))  # class of each value
            columns = X.indices
        else:  # csc
            keys = codes.astype(np.int64)[X.indices]
            columns = np.repeat(np.arange(d), np.diff(X.indptr))
        keys *= d
        keys += columns  # key = class * n_features + column
        if data.dtype == bool:  # present/absent (BernoulliNB): count the keys of present values
            counts = np.bincount(keys if data.all() else keys[data], minlength=n_classes * d)
            return counts.reshape(n_classes, d).astype(np.float64)
        return np.bincount(keys, weights=data, minlength=n_classes * d).reshape(n_classes, d)
    indicator = np.zeros((n_classes, n))
    indicator[codes, np.arange(n)] = 1.0
    return indicator @ data.astype(np.float64, copy=False)


def _normalise(joint: NDArray[np.float64], name: str, *, exponentiate: bool = False) -> NDArray[np.float64]:
    """Bayes' rule in log space, in place: subtract log p(x), the log-sum-exp over the classes.

    The row maximum is subtracted first, so that the log-sum-exp and the final subtraction work
    on numbers near 0: with scores near -1e6 (long documents, tiny alpha) subtracting the
    log-sum-exp directly would leave rows that sum to one only within about 1e-10. After the
    shift every score is <= 0 and one is exactly 0, so ``exp`` cannot overflow and each row's sum
    lies in [1, n_classes]: the log-sum-exp is then a plain ``log(sum(exp))``, with no need for
    ``scipy.special.logsumexp`` to shift again. With ``exponentiate=True`` the probabilities are
    returned instead (``exp`` once, divided by the row sums).
    """
    top = joint.max(axis=1, keepdims=True)
    if not np.all(np.isfinite(top)):
        raise ValueError(
            f"X passed to {name} holds values so large that every class score overflows; rescale "
            f"the features (e.g. with sklearn.preprocessing.StandardScaler) before fitting and "
            f"predicting."
        )
    joint -= top
    if exponentiate:
        np.exp(joint, out=joint)
        joint /= joint.sum(axis=1, keepdims=True)
        return joint
    joint -= np.log(np.exp(joint).sum(axis=1, keepdims=True))
    return joint


# --------------------------------------------------------------------------- shared machinery


class _BaseNB(ClassifierMixin, BaseEstimator):
    """Fit/partial_fit bookkeeping and Bayes' rule, shared by the three models."""

    _sparse = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._sparse
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: ArrayLike) -> _BaseNB:
        """Estimate the model from labelled data (forgetting any earlier fit).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Training data (for the discrete models a document-term matrix, CSR or CSC).
        y : array_like of shape (n_samples,)
            Class labels of any sortable type; at least two classes.

        Returns
        -------
        self
            The fitted model.
        """
        name = type(self).__name__
        X, y = _validate_X(self, X, y, "fit", reset=True, sparse=self._sparse)
        classes, codes = _classes(y, name, return_codes=True)
        self._start(classes, X.shape[1])
        self._update(X, codes)
        return self

    def partial_fit(self, X: Any, y: ArrayLike, classes: ArrayLike | None = None) -> _BaseNB:
        """Update the model with one more batch of labelled data (out-of-core learning).

        The counts are sufficient statistics, so fitting batch by batch gives the same model
        as one :meth:`fit` on all the data.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            One batch of training data.
        y : array_like of shape (n_samples,)
            Its class labels.
        classes : array_like of shape (n_classes,), optional
            Every label that may ever appear; required on the first call, optional (and then
            checked) afterwards.

        Returns
        -------
        self
            The updated model.
        """
        name = type(self).__name__
        first = not hasattr(self, "classes_")
        if first and classes is None:
            raise ValueError(
                f"classes must be passed on the first call to {name}.partial_fit, because later "
                f"batches may hold labels this one lacks; pass classes=np.unique(y_all)."
            )
        X, y = _validate_X(self, X, y, "partial_fit", reset=first, sparse=self._sparse)
        if classes is not None:
            given = _classes(classes, name)
            if given.size != np.size(classes):
                raise ValueError("classes contains duplicates; list each label once.")
            if not first and not np.array_equal(given, self.classes_):
                raise ValueError(
                    f"classes={given.tolist()} differs from classes_={self.classes_.tolist()} of "
                    f"the earlier calls; pass the same classes, or call fit to start over."
                )
            if first:
                self._start(given, X.shape[1])
        self._update(X, _encode(y, self.classes_, name))
        return self

    # subclasses: _start(classes, n_features) sets classes_ and zero counters;
    #             _update(X, codes) adds the counts of a batch and recomputes the estimates;
    #             _joint(X) returns log p(x, y = c) for a validated X.

    def predict_joint_log_proba(self, X: Any) -> NDArray[np.float64]:
        """Log joint probabilities :math:`\\log p(x, y = c)`, one column per class.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        X, _ = _validate_X(self, X, None, "predict", reset=False, sparse=self._sparse)
        return self._joint(X)

    def predict_log_proba(self, X: Any) -> NDArray[np.float64]:
        """Log posterior probabilities :math:`\\log p(y = c \\mid x)` (Bayes' rule, log-sum-exp).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return _normalise(self.predict_joint_log_proba(X), type(self).__name__)

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Posterior probabilities :math:`p(y = c \\mid x)`; each row sums to one.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
        """
        return _normalise(self.predict_joint_log_proba(X), type(self).__name__, exponentiate=True)

    def predict(self, X: Any) -> NDArray[Any]:
        """The most probable class of each row (the maximum of the joint log probability).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        joint = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(joint, axis=1)]

    def _sample_classes(self, n_samples: int, y: ArrayLike | None, rng: np.random.Generator):
        name = type(self).__name__
        check_is_fitted(self)
        if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 0:
            raise ValueError(f"n_samples must be an integer >= 0; got {n_samples!r}.")
        if y is None:
            prior = np.exp(self.class_log_prior_)
            codes = rng.choice(self.classes_.size, size=n_samples, p=prior / prior.sum())
        else:
            y = column_or_1d(np.asarray(y))
            if y.size != n_samples:
                raise ValueError(
                    f"y has {y.size} labels but n_samples={n_samples}; give one label per sample."
                )
            codes = _encode(y, self.classes_, name)
        return codes, self.classes_[codes]


class _DiscreteNB(_BaseNB):
    """Counting models: alpha, force_alpha, fit_prior, class_prior."""

    def _start(self, classes: NDArray[Any], n_features: int) -> None:
        self.classes_ = classes
        self.class_count_ = np.zeros(classes.size)
        self.feature_count_ = np.zeros((classes.size, n_features))

    def _alpha(self) -> float:
        name = type(self).__name__
        alpha = self.alpha
        if isinstance(alpha, bool) or not isinstance(alpha, Real) or not np.isfinite(alpha) or alpha < 0:
            raise ValueError(
                f"alpha is the pseudo-count added to every count and must be a finite number "
                f">= 0; got {alpha!r}. Use alpha=1.0 (Laplace smoothing) or a smaller positive "
                f"value such as 0.1; {name} does not take one alpha per feature."
            )
        if alpha < ALPHA_MIN and not self.force_alpha:
            warnings.warn(
                f"alpha too small will result in numeric errors, setting alpha = {ALPHA_MIN:.1e}. "
                f"Use `force_alpha=True` to keep alpha unchanged.",
                UserWarning,
                stacklevel=4,
            )
            return ALPHA_MIN
        return float(alpha)

    def _class_log_prior(self) -> NDArray[np.float64]:
        n_classes = self.classes_.size
        if self.class_prior is not None:
            prior = np.asarray(self.class_prior, dtype=float)
            if prior.ndim != 1 or prior.size != n_classes:
                raise ValueError(
                    f"class_prior has shape {prior.shape} but there are {n_classes} classes "
                    f"{self.classes_.tolist()}; give one prior per class, in that (sorted) order."
                )
            if not np.all(np.isfinite(prior)) or np.any(prior < 0) or abs(prior.sum() - 1) > 1e-9:
                raise ValueError(
                    f"class_prior must hold non-negative probabilities that sum to one; got "
                    f"{prior.tolist()}. Divide by the sum if they are counts or weights."
                )
            with np.errstate(divide="ignore"):  # a zero prior rules a class out
                return np.log(prior)
        if self.fit_prior:
            with np.errstate(divide="ignore"):  # a class not seen yet (partial_fit)
                return np.log(self.class_count_) - np.log(self.class_count_.sum())
        return np.full(n_classes, -np.log(n_classes))

    def _update(self, X: Any, codes: NDArray[np.intp]) -> None:
        alpha = self._alpha()
        data = self._data(X)
        counts = _class_feature_counts(X, codes, self.classes_.size, data)
        if self.class_count_.any():
            self.feature_count_ += counts
        else:  # the first batch: no need to add to zeros
            self.feature_count_ = counts
        self.class_count_ += np.bincount(codes, minlength=self.classes_.size)
        self._estimate(alpha)
        self.class_log_prior_ = self._class_log_prior()

    def _with_data(self, X: Any, data: NDArray[Any]) -> Any:
        """X with its stored values replaced by ``data`` (same structure, nothing densified)."""
        if data is _values(X):
            return X
        if sp.issparse(X):
            return type(X)((data, X.indices, X.indptr), shape=X.shape)
        return data

    def _scores(self, X: Any, log_yes: NDArray[np.float64],
                log_no: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        r"""Sum over features of :math:`x_j \log a_{cj}` (+ :math:`(1-x_j) \log b_{cj}`) + log prior.

        Fast path: one sparse-times-dense product. When a probability is exactly 0 (alpha = 0 with
        force_alpha) the zero entries of X must contribute 0, not ``0 * -inf = NaN``; the
        impossible classes are then marked with a second product of X with the 0/1 mask of the
        zero probabilities.
        """
        if not self._has_zero:
            weights = log_yes if log_no is None else log_yes - log_no
            joint = np.asarray(X @ weights.T)
            joint += self.class_log_prior_ if log_no is None else self.class_log_prior_ + log_no.sum(axis=1)
            return joint
        zero_yes = np.isneginf(log_yes)
        zero_no = None if log_no is None else np.isneginf(log_no)
        finite_yes = np.where(zero_yes, 0.0, log_yes)
        impossible = np.asarray(X @ zero_yes.T.astype(float)) > 0
        if log_no is None:
            joint = np.asarray(X @ finite_yes.T)
        else:
            finite_no = np.where(zero_no, 0.0, log_no)
            joint = np.asarray(X @ (finite_yes - finite_no).T) + finite_no.sum(axis=1)
            # (1 - x_j) log b_cj with b_cj = 0 is impossible wherever x_j = 0
            absent_hits = zero_no.sum(axis=1) - np.asarray(X @ zero_no.T.astype(float))
            impossible |= absent_hits > 0
        joint[impossible] = -np.inf
        joint += self.class_log_prior_
        stuck = np.all(np.isneginf(joint), axis=1)
        if np.any(stuck):
            warnings.warn(
                f"{stuck.sum()} row(s) of X have probability zero under every class (alpha=0 "
                f"with force_alpha=True and a feature value never seen with any class); their "
                f"probabilities fall back to the class prior. Use alpha > 0 to avoid this.",
                RuntimeWarning,
                stacklevel=4,
            )
            joint[stuck] = np.where(np.isneginf(self.class_log_prior_), -np.inf, self.class_log_prior_)
            joint[stuck & np.all(np.isneginf(joint), axis=1)] = 0.0
        return joint

    def _sample_rng(self, random_state):
        return np.random.default_rng(check_random_state(random_state).randint(2**32)) \
            if not isinstance(random_state, np.random.Generator) else random_state


class MultinomialNB(_DiscreteNB):
    r"""Multinomial naive Bayes: a document is a bag of words drawn from its class's distribution.

    With :math:`N_{cj}` the number of times word :math:`j` occurs in the documents of class
    :math:`c`, the add-alpha estimate is
    :math:`\theta_{cj} = (N_{cj} + \alpha) / (\sum_{j'} N_{cj'} + \alpha d)`, computed by
    ``add_k(feature_count_, alpha, axis=1)``, and a document scores
    :math:`\log \pi_c + \sum_j x_j \log \theta_{cj}` (one sparse-times-dense product). An
    empty document (an all-zero row) scores :math:`\log \pi_c`: the prior alone decides.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count added to every word count (1.0: Laplace smoothing; 0: no smoothing). In
        the Bayesian view it is the MAP estimate under a symmetric Dirichlet(a) prior with
        ``alpha = a - 1`` (see :func:`lecturekit.smoothing.dirichlet_map`).
    force_alpha : bool, default True
        As in scikit-learn: if False and ``alpha < 1e-10``, alpha is set to 1e-10 with a
        warning; if True alpha is kept as given (alpha=0 gives the raw MLE).
    fit_prior : bool, default True
        Learn the class prior from the class frequencies; if False use a uniform prior.
    class_prior : array_like of shape (n_classes,), optional
        Fixed class prior (non-negative, summing to one), in the order of ``classes_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_count_ : ndarray of shape (n_classes,)
        Number of training documents of each class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`N_{cj}`: the summed counts of each word in each class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log prior :math:`\log \pi_c`.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log \theta_{cj}`.
    n_features_in_ : int
        Number of features (the vocabulary size).

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[3, 0, 1], [2, 0, 0], [0, 2, 1], [0, 3, 0]])
    >>> model = MultinomialNB().fit(X, ["ham", "ham", "spam", "spam"])
    >>> model.predict([[1, 0, 0], [0, 1, 1]])
    array(['ham', 'spam'], dtype='<U4')
    >>> np.exp(model.feature_log_prob_[0]).round(3)   # (5+1, 0+1, 1+1) / (6 + 3)
    array([0.667, 0.111, 0.222])

    Derived in notebooks/03.02-The-Multinomial-Event-Model.ipynb.
    """

    def __init__(self, alpha: float = 1.0, force_alpha: bool = True, fit_prior: bool = True,
                 class_prior: ArrayLike | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags

    def _data(self, X: Any) -> NDArray[Any]:
        values = _values(X)
        if values.size and values.min() < 0:
            raise ValueError(
                f"Negative values in data passed to {type(self).__name__} (input X); counts must be >= 0. "
                "Pass word counts (e.g. from CountVectorizer), not centred or scaled features."
            )
        return values

    def _estimate(self, alpha: float) -> None:
        with np.errstate(divide="ignore"):  # alpha = 0 (force_alpha): an unseen word has log 0
            probabilities = add_k(self.feature_count_, alpha, axis=1)
            self.feature_log_prob_ = np.log(probabilities, out=probabilities)
        self._has_zero = bool(alpha == 0 and np.isneginf(self.feature_log_prob_).any())

    def _joint(self, X: Any) -> NDArray[np.float64]:
        return self._scores(X, self.feature_log_prob_)

    def sample(self, n_samples: int = 1, y: ArrayLike | None = None, *, n_words: int | ArrayLike = 100,
               random_state: Any = None) -> tuple[sp.csr_matrix, NDArray[Any]]:
        """Generate documents from the fitted generative story.

        For each document: a class from the prior (or the given ``y``), a length from
        ``n_words``, then word counts :math:`\\sim \\mathrm{Multinomial}(\\text{length}, \\theta_c)`
        (drawn as ``length`` word ids, then counted, so memory grows with the number of words,
        not with the vocabulary).

        Parameters
        ----------
        n_samples : int, default 1
            Number of documents.
        y : array_like of shape (n_samples,), optional
            Classes of the documents; drawn from the prior when omitted.
        n_words : int or array_like of shape (n_samples,), default 100
            Length of every document, or of each one.
        random_state : int, numpy.random.Generator or RandomState, optional
            Seed for reproducible samples.

        Returns
        -------
        X_sample : scipy.sparse.csr_matrix of shape (n_samples, n_features), int64
            Word counts; row i sums to its length.
        y_sample : ndarray of shape (n_samples,)
            The class of each document.
        """
        rng = self._sample_rng(random_state)
        codes, labels = self._sample_classes(n_samples, y, rng)
        lengths = np.broadcast_to(np.asarray(n_words), (n_samples,))
        if lengths.dtype.kind not in "iu" or np.any(lengths < 0):
            raise ValueError(f"n_words must hold integers >= 0 (document lengths); got {n_words!r}.")
        d = self.n_features_in_
        rows, words = [], []
        for c in range(self.classes_.size):
            docs = np.flatnonzero(codes == c)
            total = int(lengths[docs].sum())
            if total == 0:
                continue
            p = np.exp(self.feature_log_prob_[c])
            rows.append(np.repeat(docs, lengths[docs]))
            words.append(rng.choice(d, size=total, p=p / p.sum()))
        rows = np.concatenate(rows) if rows else np.zeros(0, np.intp)
        words = np.concatenate(words) if words else np.zeros(0, np.intp)
        X = sp.coo_matrix((np.ones(rows.size, np.int64), (rows, words)), shape=(n_samples, d)).tocsr()
        X.sum_duplicates()
        return X, labels


class BernoulliNB(_DiscreteNB):
    r"""Bernoulli naive Bayes: each word of the vocabulary is present or absent, independently.

    Each feature is a two-outcome variable, so its add-alpha estimate is
    :math:`p_{cj} = (N_{cj} + \alpha) / (N_c + 2\alpha)`, where :math:`N_{cj}` counts the
    documents of class :math:`c` that contain word :math:`j` and :math:`N_c` all documents of
    class :math:`c`. It is computed by ``add_k`` on the stacked (present, absent) counts
    :math:`(N_{cj}, N_c - N_{cj})`, which also gives :math:`\log(1 - p_{cj})` directly (when
    there are fewer possible counts 0..N_c than features, once per possible count, then looked
    up: the same numbers, several times faster on text). A document
    scores :math:`\log \pi_c + \sum_j [x_j \log p_{cj} + (1 - x_j) \log (1 - p_{cj})] =
    \log \pi_c + x \cdot (\log p_c - \log(1 - p_c)) + \sum_j \log(1 - p_{cj})`, one sparse
    product. Unlike the multinomial model, an empty document carries evidence: every word absent.

    Parameters
    ----------
    alpha : float, default 1.0
        Pseudo-count added to both outcomes of every feature: the MAP estimate under a
        Beta(a, a) prior with ``alpha = a - 1`` (see :func:`lecturekit.smoothing.beta_map`).
    force_alpha : bool, default True
        As in scikit-learn: if False and ``alpha < 1e-10``, alpha is set to 1e-10 with a warning.
    binarize : float or None, default 0.0
        Threshold: a value above it counts as present. None: X already holds 0/1 values.
        Sparse X needs ``binarize >= 0`` (a negative threshold would make every zero a one).
    fit_prior : bool, default True
        Learn the class prior from the class frequencies; if False use a uniform prior.
    class_prior : array_like of shape (n_classes,), optional
        Fixed class prior (non-negative, summing to one), in the order of ``classes_``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        :math:`N_c`, documents per class.
    feature_count_ : ndarray of shape (n_classes, n_features)
        :math:`N_{cj}`, documents of class c that contain word j.
    class_log_prior_ : ndarray of shape (n_classes,)
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        :math:`\log p_{cj}`.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 0, 1], [1, 0, 0], [0, 1, 1], [0, 1, 0]])
    >>> model = BernoulliNB().fit(X, [0, 0, 1, 1])
    >>> np.exp(model.feature_log_prob_[0])   # (2+1, 0+1, 1+1) / (2 + 2)
    array([0.75, 0.25, 0.5 ])
    >>> model.predict([[1, 0, 0], [0, 1, 1]])
    array([0, 1])

    Derived in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb.
    """

    def __init__(self, alpha: float = 1.0, force_alpha: bool = True, binarize: float | None = 0.0,
                 fit_prior: bool = True, class_prior: ArrayLike | None = None):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior

    def _data(self, X: Any) -> NDArray[Any]:
        values = _values(X)
        if self.binarize is None:
            if values.size and np.any((values != 0) & (values != 1)):
                raise ValueError(
                    "BernoulliNB with binarize=None needs X of 0/1 values (present/absent); X "
                    "holds other values. Set binarize=0.0 to count any positive value as present."
                )
            return values
        threshold = self.binarize
        if isinstance(threshold, bool) or not isinstance(threshold, Real) or np.isnan(threshold):
            raise ValueError(f"binarize must be a number or None; got {threshold!r}.")
        if sp.issparse(X) and threshold < 0:
            raise ValueError(
                f"binarize={threshold} < 0 would turn every zero of the sparse X into a one (a "
                f"dense matrix); use binarize >= 0 or pass a dense X."
            )
        return values > threshold  # boolean: _class_feature_counts counts the True values

    def _estimate(self, alpha: float) -> None:
        # p_cj depends on N_cj only through the integer N_cj in 0..N_c. With fewer possible counts
        # than features (the usual case for text) the estimate is computed once per possible
        # count, in a table, and looked up; otherwise once per feature. Either way, the two
        # outcomes (present, absent) lie along the first axis of the counts given to add_k.
        n_max = int(self.class_count_.max())
        if n_max + 1 < self.feature_count_.shape[1]:
            present = np.broadcast_to(np.arange(n_max + 1.0), (self.classes_.size, n_max + 1))
            # absent = N_c - n; clipped at 0 for n > N_c, entries that no feature can look up
            absent = np.maximum(self.class_count_[:, np.newaxis] - present, 0.0)
            with np.errstate(divide="ignore"):  # alpha = 0 (force_alpha): p may be 0 or 1
                table = np.log(add_k(np.stack([present, absent]), alpha, axis=0))
            index = self.feature_count_.astype(np.intp)
            logs = np.stack([np.take_along_axis(table[0], index, axis=1),
                             np.take_along_axis(table[1], index, axis=1)])
        else:
            counts = np.empty((2,) + self.feature_count_.shape)
            counts[0] = self.feature_count_
            np.subtract(self.class_count_[:, np.newaxis], self.feature_count_, out=counts[1])
            with np.errstate(divide="ignore"):
                logs = np.log(add_k(counts, alpha, axis=0), out=counts)
        self.feature_log_prob_, self._log_absent = logs[0], logs[1]
        self._has_zero = bool(alpha == 0 and np.isneginf(logs).any())

    def _joint(self, X: Any) -> NDArray[np.float64]:
        X = self._with_data(X, self._data(X).astype(np.float64, copy=False))
        return self._scores(X, self.feature_log_prob_, self._log_absent)

    def sample(self, n_samples: int = 1, y: ArrayLike | None = None, *,
               random_state: Any = None) -> tuple[sp.csr_matrix, NDArray[Any]]:
        """Generate binary documents: a class, then each word present with probability p_cj.

        Parameters
        ----------
        n_samples : int, default 1
            Number of documents.
        y : array_like of shape (n_samples,), optional
            Classes of the documents; drawn from the prior when omitted.
        random_state : int, numpy.random.Generator or RandomState, optional
            Seed for reproducible samples.

        Returns
        -------
        X_sample : scipy.sparse.csr_matrix of shape (n_samples, n_features), int64
            0/1 entries (the draws are made one class at a time, n_c by n_features uniforms).
        y_sample : ndarray of shape (n_samples,)
        """
        rng = self._sample_rng(random_state)
        codes, labels = self._sample_classes(n_samples, y, rng)
        blocks, order = [], []
        for c in range(self.classes_.size):
            docs = np.flatnonzero(codes == c)
            if docs.size:
                present = rng.random((docs.size, self.n_features_in_)) < np.exp(self.feature_log_prob_[c])
                blocks.append(sp.csr_matrix(present.astype(np.int64)))
                order.append(docs)
        if not blocks:
            return sp.csr_matrix((n_samples, self.n_features_in_), dtype=np.int64), labels
        X = sp.vstack(blocks, format="csr")
        inverse = np.empty(n_samples, np.intp)
        inverse[np.concatenate(order)] = np.arange(n_samples)
        return X[inverse], labels


# --------------------------------------------------------------------------- Gaussian


class GaussianNB(_BaseNB):
    r"""Gaussian naive Bayes: each feature is normal within a class, independently.

    The estimates are the class means :math:`\mu_{cj}` (``theta_``) and the maximum-likelihood
    variances :math:`\sigma^2_{cj}` (divided by :math:`n_c`, not :math:`n_c - 1`) plus
    ``epsilon_ = var_smoothing * max_j Var(x_j)``, the largest variance of any feature over *all*
    training data, as in scikit-learn. :meth:`partial_fit` merges batches with the pairwise update
    of Chan, Golub and LeVeque (1979), and keeps running totals of the overall variance as well,
    so that ``epsilon_`` (and hence ``var_``) is the same as after one :meth:`fit` on all the data.
    (scikit-learn recomputes ``epsilon_`` from the latest batch alone.)

    Parameters
    ----------
    priors : array_like of shape (n_classes,), optional
        Fixed class prior (non-negative, summing to one); by default the class frequencies.
    var_smoothing : float, default 1e-9
        Fraction of the largest feature variance added to every variance, for stability.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_prior_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    theta_ : ndarray of shape (n_classes, n_features)
        Class means.
    var_ : ndarray of shape (n_classes, n_features)
        Class variances (MLE) plus ``epsilon_``.
    epsilon_ : float
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [2.0], [10.0], [12.0]])
    >>> model = GaussianNB(var_smoothing=0.0).fit(X, [0, 0, 1, 1])
    >>> model.theta_.ravel(), model.var_.ravel()
    (array([ 1., 11.]), array([1., 1.]))
    >>> model.predict([[4.0], [8.0]])
    array([0, 1])

    Derived in notebooks/03.03-Gaussian-and-Multiclass-Naive-Bayes.ipynb.
    """

    _sparse = False

    def __init__(self, priors: ArrayLike | None = None, var_smoothing: float = 1e-9):
        self.priors = priors
        self.var_smoothing = var_smoothing

    def _start(self, classes: NDArray[Any], n_features: int) -> None:
        self.classes_ = classes
        self.class_count_ = np.zeros(classes.size)
        self.theta_ = np.zeros((classes.size, n_features))
        self._mle_var = np.zeros((classes.size, n_features))
        self._total = (0.0, np.zeros(n_features), np.zeros(n_features))  # n, mean, variance

    @staticmethod
    def _merge(n_a, mean_a, var_a, n_b, mean_b, var_b):
        """Chan et al.: mean and (MLE) variance of two groups from their own means and variances."""
        n = n_a + n_b
        if n_a == 0:
            return n_b, mean_b, var_b
        delta = mean_b - mean_a
        mean = mean_a + delta * (n_b / n)
        var = (n_a * var_a + n_b * var_b + delta**2 * (n_a * n_b / n)) / n
        return n, mean, var

    def _update(self, X: NDArray[Any], codes: NDArray[np.intp]) -> None:
        smoothing = self.var_smoothing
        if isinstance(smoothing, bool) or not isinstance(smoothing, Real) or not np.isfinite(smoothing) \
                or smoothing < 0:
            raise ValueError(
                f"var_smoothing must be a finite number >= 0; got {smoothing!r}. The default is 1e-9."
            )
        X = np.asarray(X, dtype=np.float64)
        for c in np.unique(codes):
            X_c = X[codes == c]
            n, mean, var = self._merge(self.class_count_[c], self.theta_[c], self._mle_var[c],
                                       X_c.shape[0], X_c.mean(axis=0), X_c.var(axis=0))
            self.class_count_[c], self.theta_[c], self._mle_var[c] = n, mean, var
        self._total = self._merge(*self._total, X.shape[0], X.mean(axis=0), X.var(axis=0))
        self.epsilon_ = float(smoothing * np.max(self._total[2]))
        self.var_ = self._mle_var + self.epsilon_
        if self.priors is None:
            self.class_prior_ = self.class_count_ / self.class_count_.sum()
        else:
            prior = np.asarray(self.priors, dtype=float)
            if prior.ndim != 1 or prior.size != self.classes_.size:
                raise ValueError(
                    f"priors has shape {prior.shape} but there are {self.classes_.size} classes "
                    f"{self.classes_.tolist()}; give one prior per class, in that (sorted) order."
                )
            if not np.all(np.isfinite(prior)) or np.any(prior < 0) or abs(prior.sum() - 1) > 1e-9:
                raise ValueError(
                    f"priors must hold non-negative probabilities that sum to one; got "
                    f"{prior.tolist()}. Divide by the sum if they are counts or weights."
                )
            self.class_prior_ = prior
        with np.errstate(divide="ignore"):
            self.class_log_prior_ = np.log(self.class_prior_)
        if np.any(self.var_[self.class_count_ > 0] <= 0):
            raise ValueError(
                "A feature is constant within a class and var_smoothing is 0 (or every feature is "
                "constant), so its variance is 0 and the Gaussian density is undefined; use "
                "var_smoothing > 0 (the default 1e-9), or drop constant features."
            )

    def _joint(self, X: NDArray[Any]) -> NDArray[np.float64]:
        X = np.asarray(X, dtype=np.float64)
        joint = np.empty((X.shape[0], self.classes_.size))
        # divide/invalid: a class not seen yet (partial_fit); over: huge X, refused in _normalise
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            for c in range(self.classes_.size):
                normaliser = -0.5 * np.sum(np.log(2.0 * np.pi * self.var_[c]))
                joint[:, c] = (self.class_log_prior_[c] + normaliser
                               - 0.5 * np.sum((X - self.theta_[c]) ** 2 / self.var_[c], axis=1))
        joint[:, self.class_count_ == 0] = -np.inf
        return joint

    def sample(self, n_samples: int = 1, y: ArrayLike | None = None, *,
               random_state: Any = None) -> tuple[NDArray[np.float64], NDArray[Any]]:
        """Generate points: a class from the prior (or ``y``), then ``N(theta_[c], var_[c])``.

        Parameters
        ----------
        n_samples : int, default 1
        y : array_like of shape (n_samples,), optional
        random_state : int, numpy.random.Generator or RandomState, optional

        Returns
        -------
        X_sample : ndarray of shape (n_samples, n_features)
        y_sample : ndarray of shape (n_samples,)
        """
        rng = (random_state if isinstance(random_state, np.random.Generator)
               else np.random.default_rng(check_random_state(random_state).randint(2**32)))
        codes, labels = self._sample_classes(n_samples, y, rng)
        return rng.normal(self.theta_[codes], np.sqrt(self.var_[codes])), labels
