"""Chapter 5: EM for Gaussian mixtures and for naive Bayes with missing labels.

* One EM iteration (an E-step and an M-step, each covariance type) of
  ``lecturekit.mixture.GaussianMixture`` against the same two steps of ``sklearn.mixture.GaussianMixture``,
  both started from the same parameters; then a whole ``fit_predict`` (EM and the final E-step) from
  the same k-means initialisation. tests/lecturekit/mixture/test_gaussian.py checks that
  the two fits agree to 1e-6.
* ``lecturekit.mixture.SemiSupervisedNB`` on 20 Newsgroups (10 labelled posts per class, 10,000
  unlabelled), 10 EM iterations. scikit-learn has no soft-label naive Bayes, so the reference is
  the same 10 iterations done *with hard labels* from its ``MultinomialNB``: each a ``fit`` on the
  labelled and pseudo-labelled posts and a ``predict_proba`` of the unlabelled ones, the same two
  passes over the data. tests/lecturekit/mixture/test_multinomial.py checks every soft-label M-step against
  scikit-learn's ``MultinomialNB`` fitted with sample weights.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.mixture import GaussianMixture as SklearnGaussianMixture
from sklearn.naive_bayes import MultinomialNB as SklearnMultinomialNB

from lecturekit.datasets import load_20newsgroups
from lecturekit.mixture import GaussianMixture, SemiSupervisedNB
from timing import report


def main(quick: bool = False) -> None:
    n, d, k = (2_000, 3, 3) if quick else (100_000, 10, 5)
    rng = np.random.default_rng(0)
    centres = 3.0 * rng.normal(size=(k, d))
    mixing = rng.normal(size=(k, d, d)) / np.sqrt(d) + np.eye(d)
    z = rng.integers(0, k, size=n)
    X = np.einsum("ni,nji->nj", rng.standard_normal((n, d)), mixing[z]) + centres[z]
    size = f"n={n:,} d={d} k={k}"

    # Both models one iteration into a fit from the same k-means labels (same random_state); each
    # timed call is then one more E-step and M-step (through the private _e_step and _m_step that
    # scikit-learn's own fit loop calls), from where the previous call left off.
    def step(model):
        _, log_resp = model._e_step(X)
        model._m_step(X, log_resp)

    for covariance_type in ("full", "tied", "diag", "spherical"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            ours = GaussianMixture(k, covariance_type=covariance_type, max_iter=1, random_state=0).fit(X)
            theirs = SklearnGaussianMixture(k, covariance_type=covariance_type, max_iter=1, random_state=0).fit(X)
        report(f"GMM one EM iteration ({size} {covariance_type})", partial(step, ours), partial(step, theirs))
    # fit_predict: the whole fit and its final E-step.
    report(
        f"GMM fit_predict from k-means ({size} full)",
        lambda: GaussianMixture(k, random_state=0).fit_predict(X),
        lambda: SklearnGaussianMixture(k, random_state=0).fit_predict(X),
        repeat=3,
    )
    semi_supervised(quick)


def semi_supervised(quick: bool) -> None:
    texts, labels = load_20newsgroups("train")
    per_class, n_unlabeled = (2, 400) if quick else (10, 10_000)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(texts))
    unlabeled = order[:n_unlabeled]
    rest = order[n_unlabeled:]
    labeled = np.concatenate([rest[labels[rest] == c][:per_class] for c in np.unique(labels)])
    X = CountVectorizer().fit_transform(texts)  # CSR counts, 73,686 columns on the full set
    X_l, y_l, X_u = X[labeled], labels[labeled], X[unlabeled]
    iterations = 10

    def ours():
        SemiSupervisedNB(alpha=0.1, max_iter=iterations, tol=0.0).fit(X_l, y_l, X_u)

    def hard_label_em():
        model = SklearnMultinomialNB(alpha=0.1).fit(X_l, y_l)
        X_all = sp.vstack([X_l, X_u], format="csr")
        for _ in range(iterations):
            guess = model.classes_[np.argmax(model.predict_proba(X_u), axis=1)]
            model = SklearnMultinomialNB(alpha=0.1).fit(X_all, np.concatenate([y_l, guess]))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        report(
            f"SemiSupervisedNB 10 EM its (20NG, {len(labeled)} + {n_unlabeled:,} unl.)", ours, hard_label_em, repeat=3
        )


if __name__ == "__main__":
    main()
