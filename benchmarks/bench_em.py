"""Chapter 5: Gaussian mixtures by EM against scikit-learn's ``GaussianMixture``.

One EM iteration (an E-step and an M-step, full covariances) of ``lecturekit.em.GaussianMixture``
against the same two steps of ``sklearn.mixture.GaussianMixture``, both started from the same
parameters; then a whole fit from the same k-means initialisation. tests/test_em.py checks that
the two fits agree to 1e-6.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import GaussianMixture as SklearnGaussianMixture

from lecturekit.em import GaussianMixture
from timing import report


def main(quick: bool = False) -> None:
    n, d, k = (2_000, 3, 3) if quick else (100_000, 10, 5)
    rng = np.random.default_rng(0)
    centres = 3.0 * rng.normal(size=(k, d))
    mixing = rng.normal(size=(k, d, d)) / np.sqrt(d) + np.eye(d)
    z = rng.integers(0, k, size=n)
    X = np.einsum("ni,nji->nj", rng.standard_normal((n, d)), mixing[z]) + centres[z]
    size = f"n={n:,} d={d} k={k} full"

    # Both models one iteration into a fit from the same k-means labels (same random_state); each
    # timed call is then one more E-step and M-step (through the private _e_step and _m_step that
    # scikit-learn's own fit loop calls), from where the previous call left off.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = GaussianMixture(k, max_iter=1, random_state=0).fit(X)
        theirs = SklearnGaussianMixture(k, max_iter=1, random_state=0).fit(X)

    def step(model):
        _, log_resp = model._e_step(X)
        model._m_step(X, log_resp)

    report(f"GMM one EM iteration ({size})", lambda: step(ours), lambda: step(theirs))
    report(f"GMM fit from k-means ({size})",
           lambda: GaussianMixture(k, random_state=0).fit(X),
           lambda: SklearnGaussianMixture(k, random_state=0).fit(X),
           repeat=3)


if __name__ == "__main__":
    main()
