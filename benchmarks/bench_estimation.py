"""Chapter 1: class-conditional categorical tables by counting, against CategoricalNB.fit.

Both compute the add-1 estimates of p(x_j = v | y = c) for every feature j, value v and class c,
plus the class prior; tests/lecturekit/test_estimation.py checks that the numbers agree to 1e-8.
"""

from __future__ import annotations

import numpy as np
from sklearn.naive_bayes import CategoricalNB

from lecturekit.estimation import conditional_probabilities, count_values, mle
from timing import report


def main(quick: bool = False) -> None:
    n, d, n_values, n_classes = (2_000, 5, 6, 4) if quick else (200_000, 20, 6, 4)
    rng = np.random.default_rng(0)
    X = rng.integers(0, n_values, size=(n, d))
    y = rng.integers(0, n_classes, size=n)
    values, classes = np.arange(n_values), np.arange(n_classes)

    def ours():
        prior = mle(count_values(y, classes)[1])
        tables = [
            conditional_probabilities(X[:, j], y, k=1.0, x_categories=values, y_categories=classes)[2] for j in range(d)
        ]
        return prior, tables

    def theirs():
        return CategoricalNB(alpha=1.0).fit(X, y)

    report(f"add-1 categorical tables, n={n:,} d={d} values={n_values} classes={n_classes}", ours, theirs)


if __name__ == "__main__":
    main()
