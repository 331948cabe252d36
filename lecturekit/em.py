r"""Models fitted by the EM algorithm: Gaussian mixtures, and naive Bayes with missing labels.

:class:`GaussianMixture` is Gaussian discriminant analysis (:mod:`lecturekit.gda`) with the label
hidden: :math:`z \sim \mathrm{Categorical}(\pi)`, :math:`x \mid z = k \sim
\mathcal N(\mu_k, \Sigma_k)`, and only :math:`x` is observed. Expectation-maximisation alternates

* the **E-step**: the responsibilities :math:`r_{ik} = p(z^{(i)} = k \mid x^{(i)})`, by Bayes' rule in
  log space (normalised by :func:`scipy.special.logsumexp`);
* the **M-step**: GDA's closed forms with every point counted :math:`r_{ik}` times in component
  :math:`k`: :math:`\pi_k = m_k / m`, :math:`\mu_k = \sum_i r_{ik} x^{(i)} / m_k`,
  :math:`\Sigma_k = \sum_i r_{ik} (x^{(i)} - \mu_k)(x^{(i)} - \mu_k)^\top / m_k`, with
  :math:`m_k = \sum_i r_{ik}` for :math:`m` points.

Without a floor (``reg_covar=0``) no iteration can decrease the log-likelihood. ``reg_covar`` is
added to the diagonal of every covariance, which keeps a component that collapses onto a point
or a subspace positive definite, at the price of an M-step that no longer maximises exactly: the
log-likelihood may then fall by a tiny amount near convergence. A component whose weight falls
to about zero is reported by a warning.

:class:`SemiSupervisedNB` and :class:`MultinomialMixture` are the multinomial naive Bayes model
of :mod:`lecturekit.naive_bayes` with some or all labels hidden: the E-step is its posterior, the
M-step its add-alpha counting with soft counts (Nigam, McCallum, Thrun and Mitchell, 2000).

This module gathers them under one name, as the notebooks import them. Each lives in a module of
its own: :mod:`lecturekit.gaussian_mixture` (the estimator), :mod:`lecturekit.mixture_steps` (its
E- and M-step as functions of arrays, through Cholesky factors from
:func:`lecturekit.gaussian.cholesky`), :mod:`lecturekit.multinomial_em` (naive Bayes by EM), and
:mod:`lecturekit.em_loop` (the loop all of them share, with :mod:`lecturekit.bernoulli_em`).
Parameter and attribute names shared with :class:`sklearn.mixture.GaussianMixture` and
:class:`sklearn.naive_bayes.MultinomialNB` keep scikit-learn's meaning; ``tests/test_gaussian_mixture.py``
checks that, started from the same parameters, both Gaussian fits agree to 1e-6, and
``tests/test_multinomial_em.py`` that each soft-count M-step is scikit-learn's
``MultinomialNB`` fitted with sample weights.

Derived in notebooks/05.01-Latent-Variables-and-the-EM-Lower-Bound.ipynb (EM and its lower
bound), notebooks/05.02-Gaussian-Mixtures.ipynb (Gaussian mixtures) and
notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb (naive Bayes with missing labels).
"""


from lecturekit.gaussian_mixture import INIT_PARAMS, GaussianMixture
from lecturekit.mixture_steps import (
    COVARIANCE_TYPES,
    _m_step,  # noqa: F401  (05.02 checks its formulas against it)
)
from lecturekit.multinomial_em import MultinomialMixture, SemiSupervisedNB

__all__ = ["COVARIANCE_TYPES", "INIT_PARAMS", "GaussianMixture", "MultinomialMixture", "SemiSupervisedNB"]
