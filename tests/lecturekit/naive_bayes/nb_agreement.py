"""Checks that the tests of the complement and categorical naive Bayes models share."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


def assert_keeps_column_names(ours_class, theirs_class, X, y) -> None:
    """Fitted on a DataFrame, ours records the column names as scikit-learn does and checks them."""
    frame = pd.DataFrame(X, columns=[f"column{j}" for j in range(X.shape[1])])
    ours, theirs = ours_class().fit(frame, y), theirs_class().fit(frame, y)
    np.testing.assert_array_equal(ours.feature_names_in_, theirs.feature_names_in_)
    np.testing.assert_allclose(ours.predict_proba(frame), theirs.predict_proba(frame), atol=1e-12)
    with pytest.raises(ValueError, match="feature names"):
        ours.predict(frame.rename(columns={"column0": "other"}))


def clear_winner(proba) -> np.ndarray:
    """Rows whose most probable class is ahead of the next by more than rounding (no tie)."""
    top_two = np.sort(proba, axis=1)[:, -2:]
    return top_two[:, 1] - top_two[:, 0] > 1e-9
