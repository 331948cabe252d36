r"""What every naive Bayes model of the course shares: input checks, counting, Bayes' rule.

:class:`_BaseNB` keeps the bookkeeping of ``fit`` and ``partial_fit`` (classes, counts, the
prior) and turns a model's joint log-likelihoods into posteriors, normalised in log space by the
log-sum-exp over the classes; :class:`_DiscreteNB` adds what the counting models share
(``alpha``, ``force_alpha``, ``fit_prior``, ``class_prior``). The five models are the modules
beside this one (``bernoulli``, ``multinomial``, ``complement``, ``categorical``, ``gaussian``);
the package :mod:`lecturekit.naive_bayes` gives their public names.

The hooks a model implements are declared here, on the class that calls them, as methods that
raise ``NotImplementedError`` until a model gives them; each one's docstring says what it must
set. :class:`_BaseNB`: ``_start``, ``_update``, ``_joint``. :class:`_DiscreteNB` gives ``_start``
and ``_update`` for a model whose statistics are the class-by-feature sums of (transformed) X,
and asks for ``_data`` and ``_estimate`` instead; :func:`~lecturekit.naive_bayes._counting._count_scores`
scores such a model from the log-probability tables it is given (no hidden state).
"""

from __future__ import annotations

import contextlib
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

from lecturekit._checks import check_finite, codes_in, label, unsortable
from lecturekit.naive_bayes._counting import _class_feature_counts, _values

#: The smallest alpha used unless ``force_alpha=True`` (scikit-learn's bound, same warning).
ALPHA_MIN = 1e-10


# --------------------------------------------------------------------------- helpers


def _check_finite(X: Any, name: str, where: str) -> None:
    check_finite(
        _values(X),
        f"X passed to {name}.{where} contains NaN or infinite values; naive "
        f"Bayes cannot score them. Remove those rows or impute the values "
        f"first (e.g. sklearn.impute.SimpleImputer).",
    )


def _validate_X(estimator: BaseEstimator, X: Any, y: Any, where: str, *, reset: bool, sparse: bool) -> tuple[Any, Any]:
    """validate_data with the course's messages; sparse X stays sparse (CSR or CSC)."""
    name = type(estimator).__name__
    accept = ["csr", "csc"] if sparse else False
    try:
        if y is None and where != "predict":
            validate_data(estimator, X, y, reset=reset)  # raises "requires y to be passed"
        if where == "predict":
            X = validate_data(estimator, X, reset=False, accept_sparse=accept, ensure_all_finite=False)
        else:
            X, y = validate_data(estimator, X, y, reset=reset, accept_sparse=accept, ensure_all_finite=False)
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
                raise unsortable(exc) from exc
    return X, y


def _encode(y: NDArray[Any], classes: NDArray[Any], name: str) -> NDArray[np.intp]:
    """Codes 0..K-1 of the labels ``y`` in the sorted ``classes``; unknown labels are refused."""
    return codes_in(
        y,
        classes,
        lambda exc: (
            f"The labels in y cannot be compared with classes_ {classes.tolist()} ({exc}); "
            f"give labels of the same type."
        ),
        lambda missing: (
            f"y holds label(s) {missing} that are not among the classes "
            f"{classes.tolist()} given on the first call to {name}.partial_fit; pass "
            f"every possible label in `classes` on the first call (e.g. "
            f"classes=np.unique(y_all))."
        ),
    )


def _classes(y: Any, name: str, return_codes: bool = False) -> Any:
    """The sorted distinct labels (and, with ``return_codes``, the code of each label)."""
    try:
        classes, codes = np.unique(np.asarray(y), return_inverse=True)
    except TypeError as exc:
        raise unsortable(exc, "The labels") from exc
    if classes.size < 2:
        shown = f" ({label(classes[0])})" if classes.size else ""
        raise ValueError(
            f"{name} needs at least two classes, but it was given only one class{shown}: with one "
            f"class there is nothing to classify. Add examples of another class (with "
            f"partial_fit, list every possible label in `classes`)."
        )
    return (classes, codes.ravel().astype(np.intp, copy=False)) if return_codes else classes


def _check_sample_weight(sample_weight: Any, n_samples: int, name: str, where: str) -> NDArray[np.float64] | None:
    """``sample_weight`` as a float64 array of shape (n_samples,), or None for "all ones".

    As in scikit-learn, a single number weighs every row alike; unlike scikit-learn, negative
    weights are refused (a weight is how many times a row counts, so the counts stay counts).
    """
    if sample_weight is None:
        return None
    problem = f"sample_weight passed to {name}.{where}"
    fix = (
        f"Give one finite weight >= 0 per row of X ({n_samples} rows), e.g. "
        f"np.ones({n_samples}), or None for equal weights."
    )
    if sp.issparse(sample_weight):
        raise ValueError(f"{problem} is a sparse matrix; pass a 1-D array. {fix}")
    if isinstance(sample_weight, Real) and not isinstance(sample_weight, bool):
        weights = np.full(n_samples, float(sample_weight))
    else:
        try:
            weights = np.asarray(sample_weight, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{problem} is not numeric ({exc}). {fix}") from exc
        if weights.ndim != 1:
            raise ValueError(f"{problem} has shape {weights.shape}; it must be 1-D. {fix}")
        if weights.size != n_samples:
            raise ValueError(f"{problem} has {weights.size} weights but X has {n_samples} rows. {fix}")
    if not np.all(np.isfinite(weights)):
        raise ValueError(f"{problem} contains NaN or infinite values. {fix}")
    if np.any(weights < 0):
        raise ValueError(f"{problem} contains negative weights (a weight counts a row). {fix}")
    if n_samples and not np.any(weights):
        raise ValueError(f"{problem} is zero for every row, so there is nothing to learn. {fix}")
    return weights


def _checked_prior(values: ArrayLike, name: str, classes: NDArray[Any]) -> NDArray[np.float64]:
    """A prior given by the user (``name``): one probability >= 0 per class, summing to one."""
    prior = np.asarray(values, dtype=float)
    if prior.ndim != 1 or prior.size != classes.size:
        raise ValueError(
            f"{name} has shape {prior.shape} but there are {classes.size} classes "
            f"{classes.tolist()}; give one prior per class, in that (sorted) order."
        )
    if not np.all(np.isfinite(prior)) or np.any(prior < 0) or abs(prior.sum() - 1) > 1e-9:
        raise ValueError(
            f"{name} must hold non-negative probabilities that sum to one; got "
            f"{prior.tolist()}. Divide by the sum if they are counts or weights."
        )
    return prior


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


class _Posterior(ClassifierMixin, BaseEstimator):
    """Bayes' rule from a model's joint log-likelihoods: the predict methods of naive Bayes.

    Subclasses give ``_joint(X, where)``, :math:`\\log p(x, y = k)` for a validated X (the hook
    declared on :class:`_BaseNB`), and may refine ``_predict_input(X)``, which checks X for
    prediction.
    """

    _sparse = True

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = self._sparse
        return tags

    def _predict_input(self, X: Any) -> Any:
        check_is_fitted(self)
        X, _ = _validate_X(self, X, None, "predict", reset=False, sparse=self._sparse)
        return X

    def predict_joint_log_proba(self, X: Any) -> NDArray[np.float64]:
        """Log joint probabilities :math:`\\log p(x, y = k)`, one column per class (class k in column k - 1).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Rows to score, in the columns (vocabulary) of ``fit``.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Columns in the order of ``classes_``.
        """
        return self._joint(self._predict_input(X), "predict_joint_log_proba")

    def predict_log_proba(self, X: Any) -> NDArray[np.float64]:
        """Log posterior probabilities :math:`\\log p(y = k \\mid x)` (Bayes' rule, log-sum-exp).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Rows to classify; sparse stays sparse.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Each row's exponentials sum to one.
        """
        return _normalise(self.predict_joint_log_proba(X), type(self).__name__)

    def predict_proba(self, X: Any) -> NDArray[np.float64]:
        """Posterior probabilities :math:`p(y = k \\mid x)`; each row sums to one.

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Rows whose class probabilities are wanted.

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
            Rows to label.

        Returns
        -------
        ndarray of shape (n_samples,)
            Labels from ``classes_``.
        """
        joint = self.predict_joint_log_proba(X)
        return self.classes_[np.argmax(joint, axis=1)]


class _BaseNB(_Posterior):
    """Fit/partial_fit bookkeeping (and Bayes' rule, from :class:`_Posterior`), shared by every model.

    A model gives the three hooks below (``_start``, ``_update``, ``_joint``), a constructor
    that stores its parameters unchanged, and ``_sparse = False`` if it takes dense X only.
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X: Any, y: ArrayLike, sample_weight: ArrayLike | None = None) -> _BaseNB:
        """Estimate the model from labelled data (forgetting any earlier fit).

        Parameters
        ----------
        X : {array_like, sparse matrix} of shape (n_samples, n_features)
            Training data (for the discrete models a document-term matrix, CSR or CSC).
        y : array_like of shape (n_samples,)
            Class labels of any sortable type; at least two classes.
        sample_weight : array_like of shape (n_samples,) or float, optional
            How much each row counts (finite, >= 0, not all 0): the counts, means and variances
            are weighted sums, so an integer weight equals repeating the row. None: all ones.

        Returns
        -------
        self
            The fitted model.
        """
        name = type(self).__name__
        X, y = _validate_X(self, X, y, "fit", reset=True, sparse=self._sparse)
        classes, codes = _classes(y, name, return_codes=True)
        weights = _check_sample_weight(sample_weight, X.shape[0], name, "fit")
        self._start(classes, X.shape[1])
        self._update(X, codes, weights)
        return self

    def partial_fit(
        self, X: Any, y: ArrayLike, classes: ArrayLike | None = None, sample_weight: ArrayLike | None = None
    ) -> _BaseNB:
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
        sample_weight : array_like of shape (n_samples,) or float, optional
            How much each row of this batch counts, as in :meth:`fit`.

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
        weights = _check_sample_weight(sample_weight, X.shape[0], name, "partial_fit")
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
        self._update(X, _encode(y, self.classes_, name), weights)
        return self

    # ------------------------------------------------------------------ the hooks of a model

    def _start(self, classes: NDArray[Any], n_features: int) -> None:
        """Begin a fit: set ``classes_`` (the sorted labels) and zero counters for ``n_features`` features.

        Must set ``classes_`` and ``class_count_`` (zeros of shape (n_classes,)), and whatever
        statistics ``_update`` adds to. Called by ``fit`` and by the first ``partial_fit``.
        """
        raise NotImplementedError(f"{type(self).__name__} must define _start(classes, n_features)")

    def _update(self, X: Any, codes: NDArray[np.intp], sample_weight: NDArray[np.float64] | None = None) -> None:
        """Add one batch to the statistics and recompute the estimates.

        ``X`` is validated (finite, sparse kept sparse when the model's ``_sparse`` is True);
        ``codes`` are the class indices 0..K-1 of its rows; ``sample_weight`` is None (every row
        counts once: keep that path fast) or a float64 array of shape (n_samples,), finite,
        >= 0 and not all zero. Must add the (weighted) class counts to ``class_count_`` and set
        the fitted attributes and ``class_log_prior_`` (which ``sample`` reads).
        """
        raise NotImplementedError(f"{type(self).__name__} must define _update(X, codes, sample_weight)")

    def _joint(self, X: Any, where: str) -> NDArray[np.float64]:
        r"""Return :math:`\log p(x, y = k)`, of shape (n_samples, n_classes), for a validated X.

        ``where`` names the public method that asked (for error messages), as in
        :mod:`lecturekit._classifier`, whose classifiers have the same hook. Must not change the
        model; every posterior method is computed from it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define _joint(X, where)")

    # ------------------------------------------------------------------ sampling helpers

    @staticmethod
    def _sample_rng(random_state: Any) -> np.random.Generator:
        """A Generator from ``random_state`` (None, an int or a RandomState; a Generator is used as is)."""
        if isinstance(random_state, np.random.Generator):
            return random_state
        return np.random.default_rng(check_random_state(random_state).randint(2**32))

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
                raise ValueError(f"y has {y.size} labels but n_samples={n_samples}; give one label per sample.")
            codes = _encode(y, self.classes_, name)
        return codes, self.classes_[codes]


class _DiscreteNB(_BaseNB):
    """Counting models: alpha, force_alpha, fit_prior, class_prior.

    Its ``_start`` and ``_update`` keep ``class_count_`` and ``feature_count_``, the class-by-
    feature sums of ``_data(X)``, and call ``_estimate(alpha)`` after each batch; a model gives
    ``_data``, ``_estimate`` and ``_joint`` (usually ``_counting._count_scores`` on its tables). A model
    whose statistics are not such sums (:class:`~lecturekit.naive_bayes.CategoricalNB`) gives
    its own ``_start`` and ``_update`` instead, and uses ``_check_alpha`` and ``_class_log_prior``.
    """

    def _start(self, classes: NDArray[Any], n_features: int) -> None:
        self.classes_ = classes
        self.class_count_ = np.zeros(classes.size)
        self.feature_count_ = np.zeros((classes.size, n_features))
        self._whole_counts = True  # every count so far an integer (no fractional sample_weight)

    def _check_alpha(self) -> float | NDArray[np.float64]:
        """``alpha`` checked: a float, or a float array of one pseudo-count per feature (scikit-learn's name)."""
        alpha, d = self.alpha, self.n_features_in_
        fix = (
            f"Use alpha=1.0 (Laplace smoothing), a smaller positive value such as 0.1, or one "
            f"pseudo-count >= 0 per feature (an array of length n_features = {d})."
        )
        values = None
        if isinstance(alpha, Real) and not isinstance(alpha, bool):
            values = float(alpha)
        elif not isinstance(alpha, (bool, str, bytes)):
            with contextlib.suppress(TypeError, ValueError):
                values = np.asarray(alpha, dtype=np.float64)
        if values is None:
            raise ValueError(
                f"alpha is the pseudo-count added to every count (a number, or one per feature) and "
                f"must be a finite number >= 0; got {alpha!r}. {fix}"
            )
        if np.ndim(values) == 0:  # a NumPy scalar
            values = float(values)
        elif values.ndim != 1 or values.size != d:
            raise ValueError(
                f"alpha is the pseudo-count added to every count: a number or one per feature, "
                f"but got an array of shape {values.shape} for X with {d} features. {fix}"
            )
        bad = ~np.isfinite(values) | (np.asarray(values) < 0)
        if np.any(bad):
            shown = (
                repr(values)
                if np.ndim(values) == 0
                else f"{values[bad][0]} at index {np.flatnonzero(bad)[0]} of the array"
            )
            raise ValueError(
                f"alpha is the pseudo-count added to every count (a number, or one per feature) and "
                f"must be a finite number >= 0; got {shown}. {fix}"
            )
        if np.min(values) < ALPHA_MIN and not self.force_alpha:
            warnings.warn(
                f"alpha too small will result in numeric errors, setting alpha = {ALPHA_MIN:.1e}. "
                f"Use `force_alpha=True` to keep alpha unchanged.",
                UserWarning,
                stacklevel=4,
            )
            return np.maximum(values, ALPHA_MIN)
        return values

    def _class_log_prior(self) -> NDArray[np.float64]:
        n_classes = self.classes_.size
        if self.class_prior is not None:
            prior = _checked_prior(self.class_prior, "class_prior", self.classes_)
            with np.errstate(divide="ignore"):  # a zero prior rules a class out
                return np.log(prior)
        if self.fit_prior:
            with np.errstate(divide="ignore"):  # a class not seen yet (partial_fit)
                return np.log(self.class_count_) - np.log(self.class_count_.sum())
        return np.full(n_classes, -np.log(n_classes))

    def _data(self, X: Any) -> NDArray[Any]:
        """Return the values to count: ``X``'s stored values (``X.data`` if sparse), checked or transformed.

        Same length and order as :func:`_values` of ``X``, so that :meth:`_with_data` can put
        them back in X's structure: e.g. word counts checked >= 0 (``_counting._word_counts``), or 0/1
        presence. Must raise a ValueError that names the fix for values the model cannot count.
        """
        raise NotImplementedError(f"{type(self).__name__} must define _data(X)")

    def _estimate(self, alpha: float | NDArray[np.float64]) -> None:
        """Set the fitted tables (``feature_log_prob_`` and any that ``_joint`` reads) from the counts.

        Called after each batch, with ``class_count_`` and ``feature_count_`` up to date and
        ``alpha`` checked by :meth:`_check_alpha` (a float or one pseudo-count per feature, possibly 0
        with ``force_alpha``: a probability may then be 0, its log ``-inf``).
        ``class_log_prior_`` is set after it.
        """
        raise NotImplementedError(f"{type(self).__name__} must define _estimate(alpha)")

    def _update(self, X: Any, codes: NDArray[np.intp], sample_weight: NDArray[np.float64] | None = None) -> None:
        alpha = self._check_alpha()
        data = self._data(X)
        counts = _class_feature_counts(X, codes, self.classes_.size, data, sample_weight)
        if self.class_count_.any():
            self.feature_count_ += counts
        else:  # the first batch: no need to add to zeros
            self.feature_count_ = counts
        self.class_count_ += np.bincount(codes, weights=sample_weight, minlength=self.classes_.size)
        if sample_weight is not None and np.any(sample_weight % 1):
            self._whole_counts = False  # fractional counts (BernoulliNB cannot use its table)
        self._estimate(alpha)
        self.class_log_prior_ = self._class_log_prior()

    def _with_data(self, X: Any, data: NDArray[Any]) -> Any:
        """X with its stored values replaced by ``data`` (same structure, nothing densified)."""
        if data is _values(X):
            return X
        if sp.issparse(X):
            return type(X)((data, X.indices, X.indptr), shape=X.shape)
        return data
