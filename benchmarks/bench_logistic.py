"""Chapter 2: binary logistic regression by Newton's method (IRLS), against scikit-learn.

Both minimise C * sum(log-loss) + ||w||^2 / 2 with the same C and tol (each solver reads tol its
own way); tests/lecturekit/test_logistic.py checks that the weights agree to 1e-5. Two references: the
default L-BFGS solver, and scikit-learn's own Newton solver (newton-cholesky), the like-for-like one.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression

from lecturekit.logistic import LogisticRegression
from timing import report


def main(quick: bool = False) -> None:
    n, d = (2_000, 5) if quick else (100_000, 50)
    C, tol = 1.0, 1e-10
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, d))
    w = rng.standard_normal(d) * 2 / np.sqrt(d)
    y = (rng.random(n) < 1 / (1 + np.exp(-(X @ w + 0.3)))).astype(int)

    def ours():
        return LogisticRegression(C=C, tol=tol).fit(X, y)

    for solver in ("lbfgs", "newton-cholesky"):

        def theirs(solver=solver):
            return SklearnLogisticRegression(C=C, tol=tol, solver=solver, max_iter=10_000).fit(X, y)

        report(f"logistic regression vs {solver}, n={n:,} d={d}", ours, theirs)


if __name__ == "__main__":
    main()
