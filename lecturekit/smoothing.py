r"""Smoothing and MAP estimation: what to believe about probabilities never (or rarely) observed.

Pure functions of counts, like :mod:`lecturekit.estimation`, on which they build. Each estimate is
the maximum-likelihood estimate with pseudo-counts added, and each pseudo-count is a prior (for a
variable with R values, value j observed N_j times out of N; N_1 heads out of N for a coin):

==============================  ===========================================  ==============================
Estimate                        Formula                                      Function
==============================  ===========================================  ==============================
add-k (Laplace for k = 1)       (N_j + k) / (N + kR)                         :func:`add_k`
Beta MAP (posterior mode)       (N_1 + a - 1) / (N + a + b - 2)              :func:`beta_map`
Beta posterior mean             (N_1 + a) / (N + a + b)                      :func:`beta_posterior_mean`
Dirichlet MAP (posterior mode)  (N_j + a_j - 1) / (N + sum(a) - R)           :func:`dirichlet_map`
Dirichlet posterior mean        (N_j + a_j) / (N + sum(a))                   :func:`dirichlet_posterior_mean`
interpolation (Jelinek-Mercer)  lam P(x | y) + (1 - lam) P(x)                :func:`interpolate`
==============================  ===========================================  ==============================

**The mapping between the two views.** The naive Bayes estimators in
:mod:`lecturekit.naive_bayes` keep scikit-learn's ``alpha``: a pseudo-count added to every count.
In the Bayesian view add-alpha smoothing is

* the posterior *mode* (MAP) under a symmetric Dirichlet prior with :math:`a_j = \alpha + 1`
  (a Beta(:math:`\alpha + 1, \alpha + 1`) prior for a Bernoulli feature), so ``alpha = a - 1``:
  Laplace smoothing (alpha = 1) is the MAP estimate under Beta(2, 2), and the MLE (alpha = 0)
  the MAP estimate under the flat prior Beta(1, 1);
* the posterior *mean* under a symmetric Dirichlet prior with :math:`a_j = \alpha`, so
  Laplace smoothing is also the posterior mean under the flat prior Beta(1, 1).

Every default is Laplace smoothing, like :func:`add_k`'s ``k = 1``.
``tests/lecturekit/test_smoothing.py`` checks both identities against :func:`add_k`, and every closed form
against a numerical maximisation of the log posterior.

**Where the MAP estimate is defined.** The functions here take :math:`a, b, a_j \ge 1`: the
pseudo-counts :math:`a - 1`, :math:`a_j - 1` are then non-negative, exactly the range of
``alpha >= 0``, and the closed form is the maximiser of the posterior density on the closed
interval (simplex), boundary included. A parameter below 1 is a negative pseudo-count, which
pushes estimates towards 0 and 1 rather than smoothing them, and the posterior density can then
be unbounded at the boundary (for :math:`N_1 = 0` and :math:`a < 1` it tends to infinity as
:math:`\theta \to 0`), where the closed form is not its mode: the functions refuse it (use the
posterior mean, which is defined for every parameter >= 0). When the posterior is flat (no data
and the flat prior) every point is a mode, and the functions raise instead of returning ``0/0``.

No function here ever returns NaN: negative, NaN or infinite counts, empty classes (no
observations and no pseudo-counts) and empty vocabularies (no categories) raise a
:class:`ValueError` that names the fix.

Derived in notebooks/04.01-The-Zero-Count-Problem-and-Smoothing.ipynb (add-k and interpolation)
and notebooks/04.02-MAP-Estimation.ipynb (Beta and Dirichlet priors).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from lecturekit.estimation import _as_counts, _as_float_array, add_k, mle

__all__ = [
    "add_k",
    "beta_map",
    "beta_posterior_mean",
    "dirichlet_map",
    "dirichlet_posterior_mean",
    "interpolate",
    "interpolated_estimate",
]


# --------------------------------------------------------------------------- helpers


def _pseudo_count_estimate(
    counts: ArrayLike, pseudo: NDArray[np.float64], axis: int, empty: str
) -> NDArray[np.float64]:
    """``(counts + pseudo) / sum(counts + pseudo)`` along ``axis``: every estimate in this module.

    ``pseudo`` broadcasts against ``counts`` with the category axis moved last (so a vector of
    K pseudo-counts is one per category whatever ``axis`` is). ``empty`` is the message for a
    slice with neither observations nor pseudo-counts.
    """
    counts = _as_counts(counts)
    try:
        moved = np.moveaxis(counts, axis, -1)
    except np.exceptions.AxisError:
        raise ValueError(f"axis {axis} is out of range for counts of shape {counts.shape}.") from None
    if moved.shape[-1] == 0:
        raise ValueError(
            "counts has no categories along axis (an empty vocabulary); there is nothing to "
            "estimate. Check that the vocabulary or the category list is not empty."
        )
    try:
        shape = np.broadcast_shapes(moved.shape, pseudo.shape)
    except ValueError:
        raise ValueError(
            f"concentration of shape {pseudo.shape} does not broadcast against counts of "
            f"shape {counts.shape} (category axis {axis} of length {moved.shape[-1]} moved last); "
            f"give one number, or one per category."
        ) from None
    if shape != moved.shape:
        raise ValueError(
            f"concentration of shape {pseudo.shape} would change the shape of counts "
            f"{counts.shape}; give one number, or one per category."
        )
    total = (moved + pseudo).sum(axis=-1)
    if np.any(total == 0):
        raise ValueError(empty)
    # Every slice now has a positive total, and mle (add_k with k = 0) divides by it.
    return np.moveaxis(mle(moved + pseudo, axis=-1), -1, axis)


def _prior_parameter(value: ArrayLike, name: str, least: float) -> NDArray[np.float64]:
    array = _as_float_array(value, name, min_ndim=0)
    if np.any(array < least):
        raise ValueError(
            f"{name} must be >= {least:g}; got {array.min():g}. "
            + (
                "A parameter below 1 is a negative pseudo-count: it pushes the estimate towards "
                "0 and 1 instead of smoothing it, and for a value never observed the posterior "
                "density is unbounded at 0, so the closed form is not its mode. Use a parameter "
                ">= 1 (add-alpha smoothing is alpha + 1) or the posterior mean."
                if least == 1
                else "Prior parameters are pseudo-counts and cannot be negative."
            )
        )
    return array


def _broadcast(message: str, *arrays: NDArray[np.float64]) -> list[NDArray[np.float64]]:
    """``np.broadcast_arrays(*arrays)``, or ``ValueError(message)`` when the shapes disagree."""
    try:
        return np.broadcast_arrays(*arrays)
    except ValueError:
        raise ValueError(message) from None


def _as_trials(successes: ArrayLike, trials: ArrayLike) -> NDArray[np.float64]:
    """The (successes, failures) counts, stacked along a new last axis."""
    successes = _as_counts(np.atleast_1d(successes), "successes")
    trials = _as_counts(np.atleast_1d(trials), "trials")
    successes, trials = _broadcast(
        f"successes of shape {successes.shape} and trials of shape {trials.shape} do not "
        f"broadcast; give one number of trials, or one per count of successes.",
        successes,
        trials,
    )
    if np.any(successes > trials):
        raise ValueError(
            "successes exceeds trials somewhere; trials is the number of observations N and "
            "successes the number N_1 <= N of them that were ones."
        )
    return np.stack([successes, trials - successes], axis=-1)


def _scalar_if_0d(result: NDArray[np.float64], *inputs: ArrayLike) -> NDArray[np.float64] | float:
    """A float when every input was a scalar (the counts were made 1-D only to be validated)."""
    return float(result.reshape(-1)[0]) if all(np.ndim(v) == 0 for v in inputs) else result


def _beta_estimate(successes, trials, a, b, least: float, shift: float, empty: str):
    """A Beta estimate is the two-category Dirichlet one on the counts (N_1, N - N_1)."""
    pseudo = (
        np.stack(np.broadcast_arrays(_prior_parameter(a, "a", least), _prior_parameter(b, "b", least)), axis=-1) - shift
    )
    counts = _as_trials(successes, trials)
    counts, pseudo = _broadcast(
        f"a and b of shape {pseudo.shape[:-1]} do not broadcast against the counts of shape "
        f"{counts.shape[:-1]}; give one prior, or one per count.",
        counts,
        pseudo,
    )
    estimate = _pseudo_count_estimate(counts, pseudo, -1, empty)[..., 0]
    return _scalar_if_0d(estimate, successes, trials, a, b)


# --------------------------------------------------------------------------- Beta prior


def beta_map(
    successes: ArrayLike, trials: ArrayLike, a: ArrayLike = 2.0, b: ArrayLike = 2.0
) -> NDArray[np.float64] | float:
    r"""MAP estimate of a Bernoulli parameter under a Beta(a, b) prior.

    The posterior is :math:`\mathrm{Beta}(N_1 + a, N - N_1 + b)` and its mode is
    :math:`\hat\theta = (N_1 + a - 1) / (N + a + b - 2)`: the MLE with :math:`a - 1` pseudo-ones
    and :math:`b - 1` pseudo-zeros. Under Beta(:math:`\alpha + 1, \alpha + 1`) this is add-alpha
    smoothing, ``add_k([N_1, N - N_1], alpha)``.

    Parameters
    ----------
    successes : array_like
        :math:`N_1`, the number of ones observed (non-negative; may be fractional weights).
    trials : array_like
        :math:`N`, the number of observations, ``trials >= successes``; broadcasts against
        ``successes``.
    a, b : array_like, default 2.0
        Prior parameters, each ``>= 1`` (Beta(2, 2): Laplace smoothing; Beta(1, 1): the flat
        prior, whose MAP estimate is the MLE). They broadcast against the counts.

    Returns
    -------
    float or ndarray
        The posterior mode in [0, 1]; a float when every argument is a scalar.

    Raises
    ------
    ValueError
        For negative, NaN or infinite counts, ``successes > trials``, ``a < 1`` or ``b < 1`` (a
        negative pseudo-count; see the module docstring), or a flat posterior (no trials
        under Beta(1, 1): every value is a mode).

    Examples
    --------
    Heads, heads, tails under Beta(2, 2) (Laplace smoothing) and under the flat prior (the MLE):

    >>> beta_map(2, 3, a=2, b=2)
    0.6
    >>> beta_map(2, 3, a=1, b=1)
    0.6666666666666666
    >>> beta_map([0, 3], 3, a=2, b=2)  # no ones at all still leaves room for one
    array([0.2, 0.8])

    Derived in notebooks/04.02-MAP-Estimation.ipynb.
    """
    return _beta_estimate(
        successes,
        trials,
        a,
        b,
        least=1.0,
        shift=1.0,
        empty=(
            "No trials under the flat prior Beta(1, 1): the posterior is flat, so every value "
            "is a mode. Use a + b > 2 (e.g. a = b = 2, Laplace smoothing) or the posterior "
            "mean."
        ),
    )


def beta_posterior_mean(
    successes: ArrayLike, trials: ArrayLike, a: ArrayLike = 1.0, b: ArrayLike = 1.0
) -> NDArray[np.float64] | float:
    r"""Posterior mean of a Bernoulli parameter under a Beta(a, b) prior.

    :math:`E[\theta \mid \text{data}] = (N_1 + a) / (N + a + b)`: the MLE with :math:`a`
    pseudo-ones and :math:`b` pseudo-zeros. Under the flat prior Beta(1, 1) this is Laplace's rule
    of succession (add-one smoothing); under Beta(:math:`\alpha, \alpha`) it is add-alpha.

    Parameters
    ----------
    successes : array_like
        :math:`N_1`, the number of ones observed.
    trials : array_like
        :math:`N`, the number of observations, ``trials >= successes``.
    a, b : array_like, default 1.0
        Prior parameters, each ``>= 0``. 0 is the improper limit of the Beta family, whose
        "posterior mean" is the MLE (and is undefined without data).

    Returns
    -------
    float or ndarray
        The posterior mean in [0, 1]; a float when every argument is a scalar.

    Raises
    ------
    ValueError
        For negative, NaN or infinite counts or prior parameters, ``successes > trials``, or
        no trials with ``a + b == 0``.

    Examples
    --------
    The sun has risen on 1000 days out of 1000; by the rule of succession
    it rises tomorrow with probability 1001/1002:

    >>> beta_posterior_mean(1000, 1000) == 1001 / 1002
    True

    Derived in notebooks/04.02-MAP-Estimation.ipynb.
    """
    return _beta_estimate(
        successes,
        trials,
        a,
        b,
        least=0.0,
        shift=0.0,
        empty="No trials and a = b = 0: the estimate is 0/0. Use a prior with a + b > 0 (a = b = 1 is the flat prior).",
    )


# --------------------------------------------------------------------------- Dirichlet prior


def dirichlet_map(counts: ArrayLike, concentration: ArrayLike = 2.0, axis: int = -1) -> NDArray[np.float64]:
    r"""MAP estimate of categorical probabilities under a Dirichlet(:math:`a`) prior.

    The posterior is :math:`\mathrm{Dirichlet}(N_1 + a_1, \dots, N_R + a_R)` and its mode
    is :math:`\hat\phi_j = (N_j + a_j - 1) / (N + \sum_{j'} a_{j'} - R)`. A symmetric prior
    :math:`a_j = \alpha + 1` gives add-alpha smoothing: ``dirichlet_map(counts, alpha + 1)``
    equals ``add_k(counts, alpha)``.

    Parameters
    ----------
    counts : array_like
        Non-negative counts; the R categories run along ``axis``.
    concentration : array_like, default 2.0
        The :math:`a_j`, each ``>= 1``: one number (a symmetric prior) or one per category. It
        broadcasts against ``counts`` with the category axis moved last, so a vector of R values
        is one per category whatever ``axis`` is.
    axis : int, default -1
        The axis that indexes categories.

    Returns
    -------
    ndarray
        Probabilities of the shape of ``counts`` that sum to one along ``axis``.

    Raises
    ------
    ValueError
        For negative, NaN or infinite counts, a concentration below 1 (a negative pseudo-count;
        see the module docstring), no categories, or a slice without observations under the
        flat prior (:math:`a_j = 1`: every distribution is a mode).

    Examples
    --------
    >>> dirichlet_map([3, 0, 1], concentration=2)  # Laplace: (N_j + 1) / (N + R)
    array([0.57142857, 0.14285714, 0.28571429])

    A concentration of 1 adds no pseudo-count: the unseen second value keeps probability 0,
    while 3 counts as two extra observations of the third value.

    >>> dirichlet_map([3, 0, 1], concentration=[1, 1, 3])
    array([0.5, 0. , 0.5])

    Derived in notebooks/04.02-MAP-Estimation.ipynb.
    """
    pseudo = _prior_parameter(concentration, "concentration", 1.0) - 1.0
    return _pseudo_count_estimate(
        counts,
        pseudo,
        axis,
        "A slice of counts has no observations and the prior is flat (concentration 1), so the "
        "posterior is flat and every distribution is a mode. Use concentration > 1 (2 is Laplace "
        "smoothing) or drop the empty class.",
    )


def dirichlet_posterior_mean(counts: ArrayLike, concentration: ArrayLike = 1.0, axis: int = -1) -> NDArray[np.float64]:
    r"""Posterior mean of categorical probabilities under a Dirichlet(:math:`a`) prior.

    :math:`E[\phi_j \mid \text{data}] = (N_j + a_j) / (N + \sum_{j'} a_{j'})`. A symmetric prior
    :math:`a_j = \alpha` gives add-alpha smoothing: ``dirichlet_posterior_mean(counts, alpha)``
    equals ``add_k(counts, alpha)``; unlike :func:`add_k` it also takes one pseudo-count per
    category.

    Parameters
    ----------
    counts : array_like
        Non-negative counts; the R categories run along ``axis``.
    concentration : array_like, default 1.0
        The :math:`a_j`, each ``>= 0``: one number or one per category (broadcast as in
        :func:`dirichlet_map`). 0 is the improper limit, whose "posterior mean" is the MLE.
    axis : int, default -1
        The category axis, as in :func:`dirichlet_map`.

    Returns
    -------
    ndarray
        The posterior means, of the shape of ``counts``; they sum to one along ``axis``.

    Raises
    ------
    ValueError
        For negative, NaN or infinite counts or concentrations, no categories, or a slice with
        neither observations nor pseudo-counts.

    Examples
    --------
    >>> dirichlet_posterior_mean([3, 0, 1], concentration=1)  # Laplace: (N_j + 1) / (N + R)
    array([0.57142857, 0.14285714, 0.28571429])
    >>> dirichlet_posterior_mean([[3, 0, 1], [0, 0, 0]], concentration=[0.5, 0.5, 1])
    array([[0.58333333, 0.08333333, 0.33333333],
           [0.25      , 0.25      , 0.5       ]])

    Derived in notebooks/04.02-MAP-Estimation.ipynb.
    """
    pseudo = _prior_parameter(concentration, "concentration", 0.0)
    return _pseudo_count_estimate(
        counts,
        pseudo,
        axis,
        "A slice of counts has no observations and the prior adds no pseudo-counts "
        "(concentration 0), so the estimate is 0/0. Use concentration > 0 or drop the empty "
        "class.",
    )


# --------------------------------------------------------------------------- interpolation


def _as_distribution(values: ArrayLike, name: str, axis: int) -> NDArray[np.float64]:
    array = _as_float_array(values, name)
    if np.any(array < 0) or np.any(array > 1):
        raise ValueError(
            f"{name} holds probabilities and must lie in [0, 1]; normalise the counts first (e.g. with mle)."
        )
    try:
        if array.shape[axis] == 0:
            raise ValueError(f"{name} has no categories along axis {axis} (an empty vocabulary).")
        sums = array.sum(axis=axis)
    except IndexError:
        raise ValueError(f"axis {axis} is out of range for {name} of shape {array.shape}.") from None
    if not np.allclose(sums, 1.0, rtol=0, atol=1e-9):
        worst = sums.flat[np.argmax(np.abs(sums - 1))]
        raise ValueError(
            f"{name} must sum to one along axis {axis}; a sum is {worst:.6g}. "
            f"Normalise it (e.g. with mle or add_k), and check that axis indexes the categories."
        )
    return array


def _check_lam(lam: float) -> float:
    if isinstance(lam, bool) or not isinstance(lam, Real) or not 0 <= lam <= 1:  # NaN fails too
        raise ValueError(f"lam is the weight of the conditional estimate and must be a number in [0, 1]; got {lam!r}.")
    return float(lam)


def interpolate(conditional: ArrayLike, marginal: ArrayLike, lam: float, axis: int = -1) -> NDArray[np.float64]:
    r"""Linear interpolation (Jelinek-Mercer smoothing): :math:`\lambda P(x \mid y) + (1 - \lambda) P(x)`.

    A class-conditional estimate from few examples is shrunk towards the estimate from all
    examples. A word unseen in one class but seen in another no longer gets probability zero, and
    unlike add-k the mass it gets is proportional to how common the word is overall.

    Parameters
    ----------
    conditional : array_like of shape (K, R) (or any shape)
        :math:`P(x \mid y)`: one distribution per class, summing to one along ``axis``.
    marginal : array_like of shape (R,) (or broadcastable)
        :math:`P(x)`, summing to one along ``axis``; it broadcasts against ``conditional``.
    lam : float
        :math:`\lambda \in [0, 1]`, the weight of the conditional estimate: 1 keeps it, 0 replaces
        it by the marginal.
    axis : int, default -1
        The axis of both arrays that indexes the R categories.

    Returns
    -------
    ndarray
        The interpolated distributions (the broadcast shape), summing to one along ``axis``.

    Raises
    ------
    ValueError
        If ``lam`` is outside [0, 1], an input is not a distribution along ``axis``, or the
        shapes do not broadcast or disagree on R.

    Examples
    --------
    >>> interpolate([[1.0, 0.0], [0.5, 0.5]], [0.75, 0.25], lam=0.8)
    array([[0.95, 0.05],
           [0.55, 0.45]])

    Derived in notebooks/04.01-The-Zero-Count-Problem-and-Smoothing.ipynb.
    """
    lam = _check_lam(lam)
    conditional = _as_distribution(conditional, "conditional", axis)
    marginal = _as_distribution(marginal, "marginal", axis)
    if conditional.shape[axis] != marginal.shape[axis]:
        raise ValueError(
            f"conditional has {conditional.shape[axis]} categories along axis {axis} but marginal "
            f"has {marginal.shape[axis]}; both must be distributions over the same values."
        )
    try:
        np.broadcast_shapes(conditional.shape, marginal.shape)
    except ValueError:
        raise ValueError(
            f"conditional of shape {conditional.shape} and marginal of shape {marginal.shape} do "
            f"not broadcast; give marginal one value per category (shape ({marginal.shape[axis]},))."
        ) from None
    return lam * conditional + (1.0 - lam) * marginal


def interpolated_estimate(counts: ArrayLike, lam: float) -> NDArray[np.float64]:
    r"""Interpolated class-conditional estimate from a class-by-value table of counts.

    :math:`P(x \mid y)` is estimated from each row (:func:`~lecturekit.estimation.mle`),
    :math:`P(x)` from the column totals, and the two are combined by :func:`interpolate`.

    Parameters
    ----------
    counts : array_like of shape (K, R)
        ``counts[k - 1, j - 1]``: how often value (word) j occurs with class k, as returned by
        :func:`~lecturekit.estimation.joint_counts` or a naive Bayes ``feature_count_``.
    lam : float
        The weight :math:`\lambda \in [0, 1]` of the class-conditional estimate.

    Returns
    -------
    ndarray of shape (K, R)
        One distribution per class; each row sums to one. A value never observed in any class
        keeps probability 0: interpolation shares out mass that some class has seen (combine it
        with add-k where the vocabulary holds unseen values).

    Raises
    ------
    ValueError
        For counts that are not a two-dimensional table of non-negative finite numbers, an empty
        table or vocabulary, or (with ``lam > 0``) a class with no observations.

    Examples
    --------
    >>> interpolated_estimate([[3, 0, 1], [1, 2, 1]], lam=0.5)
    array([[0.625, 0.125, 0.25 ],
           [0.375, 0.375, 0.25 ]])

    Derived in notebooks/04.01-The-Zero-Count-Problem-and-Smoothing.ipynb.
    """
    lam = _check_lam(lam)
    counts = _as_counts(counts)
    if counts.ndim != 2:
        raise ValueError(f"counts must be a (classes, values) table; got shape {counts.shape}.")
    if counts.shape[1] == 0:
        raise ValueError("counts has no values (an empty vocabulary); there is nothing to estimate.")
    if counts.sum() == 0:
        raise ValueError(
            "counts holds no observations at all, so neither P(x | y) nor P(x) is defined; count some data first."
        )
    marginal = mle(counts.sum(axis=0))
    if lam == 0:  # the conditional carries no weight, so an empty class is harmless
        conditional = np.broadcast_to(marginal, counts.shape)
    else:
        empty = np.flatnonzero(counts.sum(axis=1) == 0)
        if empty.size:
            raise ValueError(
                f"Class row(s) {empty[:5].tolist()} of counts have no observations, so P(x | y) "
                f"is 0/0 there. Drop the empty classes, use lam=0, or smooth the rows first "
                f"(interpolate(add_k(counts, k, axis=1), marginal, lam))."
            )
        conditional = mle(counts, axis=1)
    return interpolate(conditional, marginal, lam)
