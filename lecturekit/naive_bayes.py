r"""Naive Bayes: Bernoulli, multinomial, complement, categorical and Gaussian models.

Every model here tells the same generative story: draw a class :math:`y \sim
\mathrm{Categorical}(\pi)`, then draw each feature *independently given the class* (the naive
Bayes assumption). Only the distribution of a feature given the class changes. In the notation of
the course (notation.md): class k, word or feature j, V words, m_k examples and N_k words of
class k, N_kj the count of word j in class k, R_j the values of feature j:

======================  ============================================  ==========================================
Model                   :math:`x_j \mid y = k`                        Estimate (from counts)
======================  ============================================  ==========================================
:class:`BernoulliNB`    word j present with probability phi_j|y=k     (N_kj + alpha) / (m_k + 2 alpha)
:class:`MultinomialNB`  each word j drawn w. prob. phi_j|y=k          (N_kj + alpha) / (N_k + alpha V)
:class:`ComplementNB`   as multinomial, each class scored against     weights -log (N~_kj + alpha) / (N~_k + alpha V),
                        the other classes (Rennie et al., 2003)       N~: the counts of all the other classes
:class:`CategoricalNB`  value v of feature j w. prob. theta_kjv       (N_kjv + alpha) / (m_k + alpha R_j)
:class:`GaussianNB`     :math:`\mathcal N(\mu_{kj}, \sigma^2_{kj})`   class mean, variance (MLE)
======================  ============================================  ==========================================

This module gathers them under one name; each lives in a module of its own
(:mod:`lecturekit.bernoulli_nb`, :mod:`lecturekit.multinomial_nb`, :mod:`lecturekit.complement_nb`,
:mod:`lecturekit.categorical_nb`, :mod:`lecturekit.gaussian_nb`),
on the machinery they share (:mod:`lecturekit.nb_base`). Fitting is a single counting pass over the data; the smoothed
Bernoulli and multinomial estimates come from :func:`lecturekit.estimation.add_k`, so the add-alpha
formula lives in one place (the complement and categorical models normalise over other sets). Sparse
document-term matrices stay sparse: counting uses ``np.bincount`` over the stored non-zeros and
prediction a sparse-times-dense product, never ``X.toarray()``. All scores are kept in log space
and normalised by the log-sum-exp over the classes, after subtracting each row's maximum.

Parameter and attribute names shared with :mod:`sklearn.naive_bayes` keep scikit-learn's meaning
(``alpha``, ``force_alpha``, ``fit_prior``, ``class_prior``, ``binarize``, ``norm``,
``min_categories``, ``priors``, ``var_smoothing``, ``classes_``, ``class_count_``,
``feature_count_``, ``feature_all_``, ``category_count_``, ``n_categories_``, ``class_log_prior_``,
``feature_log_prob_``, ``theta_``, ``var_``, ``epsilon_``); ``tests/test_nb_base.py`` and the
per-model ``tests/test_<model>_nb.py`` check that the fitted estimates and the probabilities agree
with scikit-learn's to 1e-8.

Derived in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (Bernoulli),
notebooks/03.02-The-Multinomial-Event-Model.ipynb (multinomial) and
notebooks/03.03-Gaussian-and-Multiclass-Naive-Bayes.ipynb (Gaussian, multiclass); the complement
and categorical models are derived in their classes' docstrings.
"""

from lecturekit.bernoulli_nb import BernoulliNB
from lecturekit.categorical_nb import CategoricalNB
from lecturekit.complement_nb import ComplementNB
from lecturekit.gaussian_nb import GaussianNB
from lecturekit.multinomial_nb import MultinomialNB
from lecturekit.nb_base import ALPHA_MIN

__all__ = ["ALPHA_MIN", "BernoulliNB", "CategoricalNB", "ComplementNB", "GaussianNB", "MultinomialNB"]
