"""Input checks shared by the estimators of lecturekit: one implementation, each model's own words.

Private: the public modules call these and phrase the messages for their own model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    check_array,
    check_is_fitted,
    column_or_1d,
    validate_data,
)


def label(value: Any) -> str:
    """A class label as the user wrote it: 'spam' or 3, not np.str_('spam') or np.int64(3)."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def all_finite(values: NDArray[Any]) -> bool:
    """True if no entry is NaN or infinite, in one pass without a temporary when that holds.

    A finite sum means finite entries (as scikit-learn checks); only when the sum is not finite (a
    NaN or an infinity, or finite values that overflow when added) are the entries examined.
    """
    if values.dtype.kind in "biu":
        return True
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(np.sum(values)):
            return True
    return bool(np.all(np.isfinite(values)))


def check_finite(values: NDArray[Any], message: str) -> None:
    """Raise ``ValueError(message)`` if ``values`` holds a NaN or an infinity."""
    if not all_finite(values):
        raise ValueError(message)


def unsortable(exc: TypeError, what: str = "The labels in y") -> ValueError:
    """The error to raise for labels that cannot be sorted (``exc`` is NumPy's TypeError)."""
    return ValueError(f"{what} cannot be sorted ({exc}); give every label the same type, e.g. all strings.")


def codes_in(
    values: NDArray[Any],
    categories: NDArray[Any],
    incomparable: Callable[[TypeError], str],
    unknown: Callable[[list[Any]], str],
    order: NDArray[np.intp] | None = None,
) -> NDArray[np.intp]:
    """The index in ``categories`` of each of ``values``, or a ValueError that names the problem.

    ``categories`` are sorted, or sorted by ``order`` (an argsort of them). The messages are the
    caller's: ``incomparable(exc)`` when NumPy cannot compare the values with the categories
    (``exc`` its TypeError), ``unknown(missing)`` for values not among the categories (the first
    five of them, sorted).
    """
    ordered = categories if order is None else categories[order]
    try:
        positions = np.searchsorted(ordered, values)
    except TypeError as exc:
        raise ValueError(incomparable(exc)) from exc
    positions = np.clip(positions, 0, categories.size - 1)
    codes = positions if order is None else order[positions]
    missing = categories[codes] != values
    if np.any(missing):
        raise ValueError(unknown(np.unique(values[missing])[:5].tolist()))
    return codes.astype(np.intp, copy=False)


def class_codes(y: Any, n_rows: int, where: str, one_class: str) -> tuple[NDArray[Any], NDArray[np.intp]]:
    """The sorted classes of ``y`` and the class index of each row, for a classifier's fit.

    ``y`` must hold one label per row of X (``n_rows``), labels that can be sorted, and at least
    two classes; ``where`` names the call in the messages, and ``one_class`` is the message for a
    single class, with ``{}`` where that class goes.
    """
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n_rows:
        raise ValueError(
            f"X has {n_rows} rows but y has {y.shape[0]} labels; pass exactly one label per row of X to {where}."
        )
    try:
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError as exc:
        raise unsortable(exc) from exc
    if classes.size < 2:
        raise ValueError(one_class.format(label(classes[0])))
    return classes, codes.ravel()


def fitted_input(estimator: BaseEstimator, X: Any) -> NDArray[np.float64]:
    """X for a fitted estimator's predict/score: a float array with the columns it was fitted on.

    Finiteness is left to the caller, which knows what to say about it.
    """
    check_is_fitted(estimator)
    array = check_array(X, dtype=np.float64, ensure_all_finite=False)
    if array.shape[1] != estimator.n_features_in_:
        raise ValueError(
            f"X has {array.shape[1]} features, but {type(estimator).__name__} is expecting "
            f"{estimator.n_features_in_} features as input (the number it was fitted on); pass the "
            f"same columns as in fit, or refit the model."
        )
    validate_data(estimator, X, reset=False, skip_check_array=True)  # feature names, if any
    return array
