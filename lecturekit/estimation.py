"""Counting estimates for categorical data.

Bayes' rule over a finite set of hypotheses, maximum-likelihood estimates of Bernoulli and
categorical parameters, add-k (Laplace) smoothing, class-conditional probability tables, and the
parameter counts that make the naive Bayes assumption necessary.

Everything here is a pure function of counts, so later chapters (naive Bayes, smoothing, EM) build
on it rather than counting again.

Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import logsumexp, xlog1py, xlogy

from lecturekit._arrays import as_float_array as _as_float_array
from lecturekit._checks import codes_in

__all__ = [
    "add_k",
    "bernoulli_log_likelihood",
    "bernoulli_mle",
    "conditional_probabilities",
    "count_values",
    "joint_counts",
    "log_posterior",
    "mle",
    "parameter_count",
    "posterior",
]


# --------------------------------------------------------------------------- validation helpers


def _as_counts(counts: ArrayLike, name: str = "counts") -> NDArray[np.float64]:
    array = _as_float_array(counts, name)
    if np.any(array < 0):
        raise ValueError(f"Negative values in {name}; counts must be >= 0.")
    return array


def _as_1d(values: ArrayLike, name: str) -> NDArray[Any]:
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional; got shape {array.shape}.")
    if array.dtype.kind == "f" and np.any(~np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first.")
    if array.dtype.kind == "O" and any(v is None for v in array):
        raise ValueError(f"{name} contains None; remove or impute missing values first.")
    return array


def _encode(values: NDArray[Any], categories: ArrayLike | None, name: str):
    """Map ``values`` to integer codes 0..K-1 against ``categories`` (sorted unique if None)."""
    if categories is None:
        categories, codes = np.unique(values, return_inverse=True)
        return categories, codes.ravel()
    categories = np.asarray(categories)
    if categories.ndim != 1 or categories.size == 0:
        raise ValueError(f"{name} categories must be a non-empty one-dimensional list.")
    if np.unique(categories).size != categories.size:
        raise ValueError(f"{name} categories contain duplicates; list each category once.")
    if (
        values.dtype.kind in "iu"
        and categories.dtype.kind in "iu"
        and np.array_equal(categories, np.arange(categories.size))
    ):
        # Categories 0..K-1 given as integers: the values are their own codes (no search needed).
        outside = (values < 0) | (values >= categories.size)
        if np.any(outside):
            raise ValueError(
                f"{name} holds values that are not among the given categories: "
                f"{np.unique(values[outside])[:5].tolist()}; add them to the categories or leave "
                f"categories=None to use the observed ones."
            )
        return categories, values.astype(np.intp, copy=False)

    def incomparable(exc: TypeError) -> str:
        return f"{name} and its categories cannot be compared ({exc}); give categories of the same type as the values."

    try:
        order = np.argsort(categories, kind="stable")
    except TypeError as exc:
        raise ValueError(incomparable(exc)) from exc
    codes = codes_in(
        values,
        categories,
        incomparable,
        lambda missing: (
            f"{name} holds values that are not among the given categories: {missing}; "
            f"add them to the categories or leave categories=None to use the observed "
            f"ones."
        ),
        order,
    )
    return categories, codes


# --------------------------------------------------------------------------- Bayes' rule


def log_posterior(log_prior: ArrayLike, log_likelihood: ArrayLike) -> NDArray[np.float64]:
    r"""Bayes' rule in log space over a finite set of hypotheses.

    Computes :math:`\log p(h \mid e) = \log p(e \mid h) + \log p(h) - \log \sum_{h'} p(e \mid h')
    p(h')` with the normaliser (the law of total probability) evaluated by log-sum-exp, so that
    likelihoods far below the smallest float never turn into ``0/0``.

    Parameters
    ----------
    log_prior : array_like of shape (K,)
        Log prior probability of each of the K hypotheses. ``-inf`` marks an impossible one.
    log_likelihood : array_like of shape (..., K)
        Log probability of the evidence under each hypothesis; leading axes index independent
        pieces of evidence (for example, one row per e-mail).

    Returns
    -------
    ndarray of shape (..., K)
        Log posterior; ``exp`` of each row sums to one.

    Raises
    ------
    ValueError
        If the shapes disagree, a value is NaN or ``+inf``, or every hypothesis has probability
        zero for some piece of evidence (the posterior is then undefined).

    Examples
    --------
    >>> import numpy as np
    >>> np.exp(log_posterior(np.log([0.5, 0.5]), np.log([0.2, 0.6]))).round(3)
    array([0.25, 0.75])

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    log_prior = np.asarray(log_prior, dtype=float)
    log_likelihood = np.asarray(log_likelihood, dtype=float)
    if log_prior.ndim != 1:
        raise ValueError(f"log_prior must be one-dimensional; got shape {log_prior.shape}.")
    if log_likelihood.ndim < 1 or log_likelihood.shape[-1] != log_prior.shape[0]:
        raise ValueError(
            f"log_likelihood has shape {log_likelihood.shape} but there are {log_prior.shape[0]} "
            f"hypotheses in log_prior; its last axis must have length {log_prior.shape[0]}."
        )
    for name, array in (("log_prior", log_prior), ("log_likelihood", log_likelihood)):
        if np.any(np.isnan(array)) or np.any(array == np.inf):
            raise ValueError(f"{name} contains NaN or +inf; log probabilities must be <= 0 or -inf.")
    log_joint = log_likelihood + log_prior
    log_evidence = logsumexp(log_joint, axis=-1, keepdims=True)
    if np.any(np.isneginf(log_evidence)):
        raise ValueError(
            "The evidence has probability zero under every hypothesis, so the posterior is 0/0. "
            "Smooth the likelihoods (add-k) so that no observation is impossible."
        )
    return log_joint - log_evidence


def posterior(prior: ArrayLike, likelihood: ArrayLike) -> NDArray[np.float64]:
    r"""Bayes' rule over a finite set of hypotheses: :math:`p(h \mid e) \propto p(e \mid h)\,p(h)`.

    Parameters
    ----------
    prior : array_like of shape (K,)
        Prior probabilities of the K hypotheses; they must sum to one.
    likelihood : array_like of shape (..., K)
        :math:`p(e \mid h)` for each hypothesis (each in [0, 1]; they need not sum to one).

    Returns
    -------
    ndarray of shape (..., K)
        Posterior probabilities; each row sums to one.

    Examples
    --------
    A test with sensitivity 0.9 and specificity 0.95 for a condition with prevalence 1%:
    the posterior probability of the condition after a positive result is about 15%.

    >>> posterior([0.99, 0.01], [0.05, 0.90]).round(4)
    array([0.8462, 0.1538])

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    prior = _as_float_array(prior, "prior")
    likelihood = _as_float_array(likelihood, "likelihood")
    if np.any(prior < 0) or np.any(prior > 1) or not np.isclose(prior.sum(), 1.0, atol=1e-9):
        raise ValueError(
            f"prior must hold probabilities in [0, 1] that sum to one; it sums to {prior.sum():.6g}. "
            f"Divide by its sum if it holds counts."
        )
    if np.any(likelihood < 0) or np.any(likelihood > 1):
        raise ValueError("likelihood values are probabilities and must lie in [0, 1].")
    with np.errstate(divide="ignore"):
        return np.exp(log_posterior(np.log(prior), np.log(likelihood)))


# --------------------------------------------------------------------------- Bernoulli MLE


def _as_binary(x: ArrayLike) -> NDArray[np.float64]:
    array = _as_float_array(x, "x")
    if array.ndim != 1:
        raise ValueError(f"x must be one-dimensional (a sequence of 0/1 outcomes); got {array.shape}.")
    if np.any((array != 0) & (array != 1)):
        raise ValueError("x must hold binary outcomes (0/1 or False/True); recode it first.")
    return array


def bernoulli_log_likelihood(theta: ArrayLike, x: ArrayLike) -> NDArray[np.float64]:
    r"""Log-likelihood :math:`\ell(\theta) = N_1 \log\theta + N_0 \log(1-\theta)` of 0/1 outcomes.

    Parameters
    ----------
    theta : array_like
        One or many candidate values of :math:`P(x = 1)`, each in [0, 1].
    x : array_like of shape (N,)
        Observed outcomes, 0 or 1.

    Returns
    -------
    ndarray
        :math:`\ell(\theta)` with the shape of ``theta``; ``-inf`` where an observed outcome has
        probability zero, and ``0 \log 0`` taken as 0.

    Examples
    --------
    >>> bool(np.isclose(bernoulli_log_likelihood(0.5, [1, 1, 0]), 3 * np.log(0.5)))
    True

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    x = _as_binary(x)
    theta = np.asarray(theta, dtype=float)
    if np.any(~np.isfinite(theta)) or np.any((theta < 0) | (theta > 1)):
        raise ValueError("theta is a probability and must lie in [0, 1].")
    n_ones = x.sum()
    n_zeros = x.size - n_ones
    return xlogy(n_ones, theta) + xlog1py(n_zeros, -theta)


def bernoulli_mle(x: ArrayLike) -> float:
    r"""Maximum-likelihood estimate :math:`\hat\theta = N_1 / N` of a Bernoulli parameter.

    Parameters
    ----------
    x : array_like of shape (N,)
        Observed outcomes, 0 or 1 (booleans work too), with N >= 1.

    Returns
    -------
    float
        The fraction of ones.

    Examples
    --------
    >>> bernoulli_mle([1, 1, 0])  # heads, heads, tails
    0.6666666666666666

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    x = _as_binary(x)
    if x.size == 0:
        raise ValueError("bernoulli_mle needs at least one observation; the MLE of no data is 0/0.")
    return float(x.mean())


# --------------------------------------------------------------------------- categorical estimates


def count_values(values: ArrayLike, categories: ArrayLike | None = None):
    """Count how often each category occurs.

    Parameters
    ----------
    values : array_like of shape (N,)
        Observed categories (numbers or strings).
    categories : array_like of shape (K,), optional
        The possible categories, in the order the counts should follow. Categories never observed
        get a count of 0, which is how the zero-count problem arises. Defaults to the sorted
        distinct observed values.

    Returns
    -------
    categories : ndarray of shape (K,)
    counts : ndarray of shape (K,), int

    Examples
    --------
    >>> count_values(["h", "h", "t"])
    (array(['h', 't'], dtype='<U1'), array([2, 1]))

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    values = _as_1d(values, "values")
    categories, codes = _encode(values, categories, "values")
    return categories, np.bincount(codes, minlength=categories.size)


def mle(counts: ArrayLike, axis: int = -1) -> NDArray[np.float64]:
    r"""Maximum-likelihood estimate of categorical probabilities: :math:`\hat\theta_j = N_j / N`.

    Parameters
    ----------
    counts : array_like
        Non-negative counts; the categories run along ``axis``.
    axis : int, default -1
        The axis that indexes categories.

    Returns
    -------
    ndarray
        Probabilities of the same shape as ``counts`` that sum to one along ``axis``.

    Raises
    ------
    ValueError
        If a count is negative, NaN or infinite, or a slice along ``axis`` has no observations
        (the MLE is then 0/0; use :func:`add_k` with ``k > 0``).

    Examples
    --------
    >>> mle([2, 1])
    array([0.66666667, 0.33333333])

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    return add_k(counts, k=0.0, axis=axis)


def add_k(counts: ArrayLike, k: float | ArrayLike = 1.0, axis: int = -1, *, log: bool = False) -> NDArray[np.float64]:
    r"""Add-k smoothed estimate :math:`(N_j + k) / (N + kK)` of categorical probabilities.

    ``k = 1`` is Laplace smoothing, ``k = 0`` the maximum-likelihood estimate; as ``k`` grows the
    estimate moves towards the uniform distribution :math:`1/K`. The ``kK`` in the denominator
    (one pseudo-count for each of the K categories) is what keeps the result a distribution.
    An array ``k`` gives each count its own pseudo-count :math:`k_j`, and the denominator adds
    those of the slice: :math:`(N_j + k_j) / (N + \sum_{j'} k_{j'})`.

    Parameters
    ----------
    counts : array_like
        Non-negative counts; the K categories run along ``axis``.
    k : float or array_like, default 1.0
        Pseudo-count added to every category, ``k >= 0``; or an array of them that broadcasts
        against ``counts`` (e.g. one per feature along the last axis).
    axis : int, default -1
        The axis that indexes categories.
    log : bool, default False
        Return the natural logarithm of the estimate instead, as
        :math:`\log(N_j + k) - \log(N + kK)` (no division; an estimate of 0 gives ``-inf``).

    Returns
    -------
    ndarray
        Probabilities of the same shape as ``counts`` that sum to one along ``axis`` (with
        ``log=True``, their logarithms).

    Raises
    ------
    ValueError
        For negative, NaN or infinite counts, a negative or non-finite ``k``, or (with ``k = 0``)
        a slice with no observations.

    Examples
    --------
    Observing heads, heads, tails:

    >>> add_k([2, 1], k=1)   # 3/5 and 2/5
    array([0.6, 0.4])
    >>> bool(add_k([2, 1], k=100)[0] == 102 / 203)
    True

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    counts = _as_counts(counts)
    k = np.asarray(k, dtype=float) if np.ndim(k) else float(k)
    if not np.all(np.isfinite(k)) or np.any(k < 0):
        raise ValueError(f"k is a pseudo-count and must be a finite number >= 0; got {k}.")
    try:
        n_categories = counts.shape[axis]
    except IndexError:
        raise ValueError(f"axis {axis} is out of range for counts of shape {counts.shape}.") from None
    if n_categories == 0:
        raise ValueError("counts has no categories along axis; there is nothing to estimate.")
    total = counts.sum(axis=axis, keepdims=True)
    if np.ndim(k):
        try:
            total += np.broadcast_to(k, counts.shape).sum(axis=axis, keepdims=True)
        except ValueError:
            raise ValueError(
                f"k of shape {k.shape} does not broadcast against counts of shape "
                f"{counts.shape}; give one number, or one per count."
            ) from None
    else:
        total += k * n_categories
    if np.any(total == 0):
        raise ValueError(
            "A slice of counts has no observations, so its maximum-likelihood estimate is 0/0. "
            "Use k > 0 (add-k smoothing) or drop the empty slice."
        )
    estimate = counts + k  # then in place: one new array, not two
    if log:
        with np.errstate(divide="ignore"):  # k = 0 and N_j = 0: log 0 = -inf
            np.log(estimate, out=estimate)
        estimate -= np.log(total)
        return estimate
    estimate /= total
    return estimate


def joint_counts(
    x: ArrayLike,
    y: ArrayLike,
    x_categories: ArrayLike | None = None,
    y_categories: ArrayLike | None = None,
):
    """Contingency table of a categorical feature against a class label.

    Counting is a single pass: each pair becomes the code ``y_code * K + x_code`` and
    :func:`numpy.bincount` counts all pairs at once.

    Parameters
    ----------
    x : array_like of shape (N,)
        Feature values.
    y : array_like of shape (N,)
        Class labels.
    x_categories, y_categories : array_like, optional
        The possible feature values and classes (default: those observed, sorted).

    Returns
    -------
    y_categories : ndarray of shape (C,)
    x_categories : ndarray of shape (K,)
    table : ndarray of shape (C, K), int
        ``table[c, j]`` is the number of examples with class ``y_categories[c]`` and feature
        value ``x_categories[j]``.

    Examples
    --------
    >>> classes, values, table = joint_counts(["a", "b", "a"], [0, 1, 1])
    >>> table
    array([[1, 0],
           [1, 1]])

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    x = _as_1d(x, "x")
    y = _as_1d(y, "y")
    if x.shape[0] != y.shape[0]:
        raise ValueError(f"x and y must have the same length; got {x.shape[0]} feature values and {y.shape[0]} labels.")
    x_categories, x_codes = _encode(x, x_categories, "x")
    y_categories, y_codes = _encode(y, y_categories, "y")
    n_x, n_y = x_categories.size, y_categories.size
    flat = np.bincount(y_codes * n_x + x_codes, minlength=n_y * n_x)
    return y_categories, x_categories, flat.reshape(n_y, n_x)


def conditional_probabilities(
    x: ArrayLike,
    y: ArrayLike,
    k: float = 0.0,
    x_categories: ArrayLike | None = None,
    y_categories: ArrayLike | None = None,
):
    r"""Estimate :math:`P(x = v \mid y = c)` by counting, with optional add-k smoothing.

    Each row of the table is :math:`(\mathrm{count}(v, c) + k) / (\mathrm{count}(c) + kK)`.

    Parameters
    ----------
    x, y : array_like of shape (N,)
        Feature values and class labels.
    k : float, default 0.0
        Pseudo-count; 0 gives the maximum-likelihood estimate.
    x_categories, y_categories : array_like, optional
        The possible feature values and classes (default: those observed, sorted). A class listed
        here but never observed has an undefined MLE and raises unless ``k > 0``.

    Returns
    -------
    y_categories : ndarray of shape (C,)
    x_categories : ndarray of shape (K,)
    table : ndarray of shape (C, K)
        Row ``c`` is the estimated distribution of the feature within class ``c``.

    Examples
    --------
    >>> _, _, table = conditional_probabilities(["a", "b", "a"], [0, 1, 1], k=1)
    >>> table
    array([[0.66666667, 0.33333333],
           [0.5       , 0.5       ]])

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    y_categories, x_categories, table = joint_counts(x, y, x_categories, y_categories)
    return y_categories, x_categories, add_k(table, k=k, axis=1)


def parameter_count(n_features: int, n_classes: int = 2, n_values: int = 2, naive: bool = False) -> int:
    r"""Number of free parameters of the class-conditional distribution :math:`p(x \mid y)`.

    With ``n_features`` = :math:`d` features that each take ``n_values`` = :math:`r` values and
    ``n_classes`` = :math:`K` classes, the full joint table has :math:`r^d` cells per class, of which
    :math:`r^d - 1` are free (they sum to one): :math:`K(r^d - 1)` in all. Under the naive Bayes
    assumption each feature has its own distribution per class: :math:`K\,d\,(r - 1)`. The class
    prior adds :math:`K - 1` to both.

    Parameters
    ----------
    n_features : int
        Number of features d (>= 1).
    n_classes : int, default 2
        Number of classes K (>= 2).
    n_values : int, default 2
        Values each feature can take, r (>= 2); 2 for binary features.
    naive : bool, default False
        Count under the naive Bayes (conditional independence) assumption.

    Returns
    -------
    int
        An exact Python integer (it overflows 64 bits for the full table beyond d = 63).

    Examples
    --------
    >>> parameter_count(30), parameter_count(30, naive=True)
    (2147483646, 60)

    Derived in ``notebooks/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb``.
    """
    for name, value, least in (("n_features", n_features, 1), ("n_classes", n_classes, 2), ("n_values", n_values, 2)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < least:
            raise ValueError(f"{name} must be an integer >= {least}; got {value!r}.")
    n, c, v = int(n_features), int(n_classes), int(n_values)
    if naive:
        return c * n * (v - 1)
    return c * (v**n - 1)
