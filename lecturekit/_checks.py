"""Input checks shared by the estimators of lecturekit: one implementation, each model's own words.

Private: the public modules call these and phrase the messages for their own model.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_array, check_is_fitted, validate_data


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
