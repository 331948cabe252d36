"""Chapter 2: Gaussian discriminant analysis against scikit-learn's LDA and QDA.

Shared covariance: ``GDA().fit`` and ``predict_proba`` against
``LinearDiscriminantAnalysis(solver="lsqr")``, which estimates the same pooled maximum-likelihood
covariance. One covariance per class: ``GDA(shared_covariance=False)`` against
``QuadraticDiscriminantAnalysis``. tests/lecturekit/test_gda.py checks that the probabilities agree to 1e-8.
"""

from __future__ import annotations

import numpy as np
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

from lecturekit.gda import GDA
from timing import report


def main(quick: bool = False) -> None:
    n, d = (2_000, 5) if quick else (100_000, 50)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=n)
    # Two correlated Gaussian classes with different covariances (so QDA has work to do).
    mixing = rng.normal(size=(2, d, d)) / np.sqrt(d) + np.eye(d)
    X = rng.standard_normal((n, d))
    X = np.einsum("ni,nji->nj", X, mixing[y]) + 0.5 * y[:, np.newaxis]
    size = f"n={n:,} d={d} classes=2"

    lda, ours = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y), GDA().fit(X, y)
    report(f"LDA fit ({size})", lambda: GDA().fit(X, y), lambda: LinearDiscriminantAnalysis(solver="lsqr").fit(X, y))
    report(f"LDA predict_proba ({size})", lambda: ours.predict_proba(X), lambda: lda.predict_proba(X))

    qda, ours_q = QuadraticDiscriminantAnalysis().fit(X, y), GDA(shared_covariance=False).fit(X, y)
    report(
        f"QDA fit ({size})",
        lambda: GDA(shared_covariance=False).fit(X, y),
        lambda: QuadraticDiscriminantAnalysis().fit(X, y),
    )
    report(f"QDA predict_proba ({size})", lambda: ours_q.predict_proba(X), lambda: qda.predict_proba(X))


if __name__ == "__main__":
    main()
