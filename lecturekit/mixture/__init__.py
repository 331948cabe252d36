r"""Models fitted by the EM algorithm: Gaussian mixtures, and naive Bayes with missing labels.

Every model here has a hidden variable :math:`z` beside the observed :math:`x`, and
expectation-maximisation alternates

* the **E-step**: the responsibilities :math:`r_{ik} = p(z^{(i)} = k \mid x^{(i)})`, by Bayes' rule in
  log space (normalised by :func:`scipy.special.logsumexp`);
* the **M-step**: the closed-form estimates of the same model with its label seen, every point
  counted :math:`r_{ik}` times in component :math:`k` (soft counts).

==================================  ===================================  ========================================
Model                               :math:`x \mid z = k`                 M-step
==================================  ===================================  ========================================
:class:`GaussianMixture`            :math:`\mathcal N(\mu_k, \Sigma_k)`  GDA's closed forms (:mod:`lecturekit.gda`),
                                    (no label seen)                      each point weighted by :math:`r_{ik}`
:class:`SemiSupervisedNB`           multinomial naive Bayes,             add-alpha counting of words, soft
                                    some labels hidden                   counts for the unlabelled documents
:class:`MultinomialMixture`         multinomial naive Bayes,             the same, every document soft
                                    every label hidden (clustering)
:class:`SemiSupervisedBernoulliNB`  Bernoulli naive Bayes,               add-alpha counting of documents, soft
                                    some labels hidden                   counts for the unlabelled documents
==================================  ===================================  ========================================

For the Gaussian mixture, :math:`\pi_k = m_k / m`, :math:`\mu_k = \sum_i r_{ik} x^{(i)} / m_k`,
:math:`\Sigma_k = \sum_i r_{ik} (x^{(i)} - \mu_k)(x^{(i)} - \mu_k)^\top / m_k`, with
:math:`m_k = \sum_i r_{ik}` for :math:`m` points. Without a floor (``reg_covar=0``) no iteration can
decrease the log-likelihood. ``reg_covar`` is added to the diagonal of every covariance, which keeps a
component that collapses onto a point or a subspace positive definite, at the price of an M-step that
no longer maximises exactly: the log-likelihood may then fall by a tiny amount near convergence. A
component whose weight falls to about zero is reported by a warning. The naive Bayes models are those
of :mod:`lecturekit.naive_bayes` with some or all labels hidden: the E-step is their posterior, the
M-step their add-alpha counting with soft counts (Nigam, McCallum, Thrun and Mitchell, 2000).

Each model is a module of this subpackage: :mod:`~lecturekit.mixture.gaussian` (the Gaussian
mixture), :mod:`~lecturekit.mixture.steps` (its E- and M-step as functions of arrays, through
Cholesky factors from :func:`lecturekit.gaussian.cholesky`), :mod:`~lecturekit.mixture.multinomial`
and :mod:`~lecturekit.mixture.bernoulli` (naive Bayes by EM), on :mod:`~lecturekit.mixture.loop` (the
loop all of them share); this ``__init__`` gives their public names, as the notebooks import them.
Parameter and attribute names shared with :class:`sklearn.mixture.GaussianMixture` and
:class:`sklearn.naive_bayes.MultinomialNB` keep scikit-learn's meaning;
``tests/lecturekit/mixture/test_gaussian.py`` checks that, started from the same parameters, both
Gaussian fits agree to 1e-6, and ``tests/lecturekit/mixture/test_multinomial.py`` that each
soft-count M-step is scikit-learn's ``MultinomialNB`` fitted with sample weights.

Derived in notebooks/05.01-Latent-Variables-and-the-EM-Lower-Bound.ipynb (EM and its lower
bound), notebooks/05.02-Gaussian-Mixtures.ipynb (Gaussian mixtures) and
notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb (naive Bayes with missing labels).
"""

from lecturekit.mixture.bernoulli import SemiSupervisedBernoulliNB
from lecturekit.mixture.gaussian import INIT_PARAMS, GaussianMixture
from lecturekit.mixture.multinomial import MultinomialMixture, SemiSupervisedNB
from lecturekit.mixture.steps import (
    COVARIANCE_TYPES,
    _m_step,  # noqa: F401  (05.02 checks its formulas against it)
)

__all__ = [
    "COVARIANCE_TYPES",
    "INIT_PARAMS",
    "GaussianMixture",
    "MultinomialMixture",
    "SemiSupervisedBernoulliNB",
    "SemiSupervisedNB",
]
