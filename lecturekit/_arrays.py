"""Numeric input checks that every layer of lecturekit may use, the drawing code included.

NumPy only: :mod:`lecturekit.plotting` imports this and no estimator module.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def as_float_array(values: ArrayLike, name: str, *, min_ndim: int = 1) -> NDArray[np.float64]:
    """Convert ``values`` to a float array, refusing NaN, infinities and too few dimensions.

    >>> as_float_array([1, 2], "counts")
    array([1., 2.])
    >>> as_float_array([1.0, float("nan")], "x")
    Traceback (most recent call last):
    ...
    ValueError: x contains NaN or infinite values; remove or impute them first.
    """
    try:
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric; got {values!r}.") from exc
    if array.ndim < min_ndim:
        raise ValueError(
            f"{name} must have at least {min_ndim} dimension(s); got a scalar. Wrap a single value in a list."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or infinite values; remove or impute them first.")
    return array
