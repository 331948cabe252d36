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

Each model is a module of this subpackage (:mod:`~lecturekit.naive_bayes.bernoulli`,
:mod:`~lecturekit.naive_bayes.multinomial`, :mod:`~lecturekit.naive_bayes.complement`,
:mod:`~lecturekit.naive_bayes.categorical`, :mod:`~lecturekit.naive_bayes.gaussian`), on the
machinery they share (:mod:`~lecturekit.naive_bayes.base`, with the counting pass and the scoring
of the count models in ``_counting``); this ``__init__`` gives their public names, as the
notebooks import them. Fitting is a single counting pass over the data; the smoothed
Bernoulli and multinomial estimates come from :func:`lecturekit.estimation.add_k`, so the add-alpha
formula lives in one place (the complement and categorical models normalise over other sets). Sparse
document-term matrices stay sparse: counting uses ``np.bincount`` over the stored non-zeros and
prediction a sparse-times-dense product, never ``X.toarray()``. All scores are kept in log space
and normalised by the log-sum-exp over the classes, after subtracting each row's maximum.

Parameter and attribute names shared with :mod:`sklearn.naive_bayes` keep scikit-learn's meaning
(``alpha``, ``force_alpha``, ``fit_prior``, ``class_prior``, ``binarize``, ``norm``,
``min_categories``, ``priors``, ``var_smoothing``, ``classes_``, ``class_count_``,
``feature_count_``, ``feature_all_``, ``category_count_``, ``n_categories_``, ``class_log_prior_``,
``feature_log_prob_``, ``theta_``, ``var_``, ``epsilon_``); the tests check that the fitted
estimates and the probabilities agree with scikit-learn's to 1e-8, and run scikit-learn's own
test suite of :mod:`sklearn.naive_bayes` on these classes.

Derived in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (Bernoulli),
notebooks/03.02-The-Multinomial-Event-Model.ipynb (multinomial) and
notebooks/03.03-Gaussian-and-Multiclass-Naive-Bayes.ipynb (Gaussian, multiclass); the complement
and categorical models are derived in their classes' docstrings.

Adding a model
--------------
A Poisson naive Bayes, say, for counts that are not words:

1. **Module.** ``lecturekit/naive_bayes/poisson.py``, opening with a titled docstring; the class
   derives from :class:`~lecturekit.naive_bayes.base._DiscreteNB` if its statistics are the
   class-by-feature sums of X (or of a transform of X), else from
   :class:`~lecturekit.naive_bayes.base._BaseNB`. Its constructor stores its parameters
   unchanged, under scikit-learn's names where scikit-learn has them.
2. **Hooks.** They are declared, with what each must set, on the class that calls them:
   ``_start(classes, n_features)``, ``_update(X, codes, sample_weight)`` and
   ``_joint(X, where)`` on ``_BaseNB``; ``_DiscreteNB`` gives the first two and asks for
   ``_data(X)`` (the values to count, checked) and ``_estimate(alpha)`` (the fitted tables from
   ``feature_count_`` and ``class_count_``) instead. A ``_joint`` linear in X returns
   ``_counting._count_scores(X, log_table, self.class_log_prior_)``, which handles
   probabilities of exactly 0; no other state is read. ``fit``, ``partial_fit``,
   ``sample_weight``, the posteriors and ``_sample_rng``/``_sample_classes`` (for a ``sample``
   method) come with the base.
3. **Backlink.** The class docstring (numpydoc, with an example) ends with "Derived in
   notebooks/NN.MM-Title.ipynb": ``tests/test_notebooks.py`` fails for a public name of the
   package without a link to an existing notebook.
4. **Tables.** Import the class below and add it to ``__all__``; add its row to the table at
   the top of this docstring and its module to the module list after the table, to the
   ``naive_bayes`` row of ``lecturekit/__init__.py``'s table and to the ``lecturekit/`` row of the
   README's layout table; ``tests/test_layout.py`` fails while one of them lacks it. The tests
   and scikit-learn's suite read ``__all__``.
5. **Tests.** ``tests/lecturekit/naive_bayes/test_poisson.py`` (the tests mirror the package), on
   the data helpers of ``nb_data.py`` in that folder (``counts``, ``FORMATS``, ``NoDensify``): the
   model's estimates against the formula or a reference, partial_fit in batches equal to one fit,
   its invariants, its bad input and its ``sample``. scikit-learn's estimator checks run on every
   class of ``__all__`` (``nb_data.MODELS``) in ``test_base.py`` there; a model that fails a check
   on purpose lists it there, with the reason, in ``EXPECTED_FAILURES``. ``test_base_weights.py``
   and the rest of ``test_base.py`` test what the base gives (sample_weight, alpha arrays,
   streaming).
6. **scikit-learn's suite.** ``tests/lecturekit/test_sklearn_suites.py`` runs scikit-learn's
   ``test_naive_bayes.py`` on the class of ``lecturekit.naive_bayes`` with the same name as
   scikit-learn's, found by name: a model scikit-learn has is picked up with no change; a test it
   fails on purpose is listed there with its reason (``ON_PURPOSE``, ``MESSAGE``).
"""

from lecturekit.naive_bayes.base import ALPHA_MIN
from lecturekit.naive_bayes.bernoulli import BernoulliNB
from lecturekit.naive_bayes.categorical import CategoricalNB
from lecturekit.naive_bayes.complement import ComplementNB
from lecturekit.naive_bayes.gaussian import GaussianNB
from lecturekit.naive_bayes.multinomial import MultinomialNB

__all__ = ["ALPHA_MIN", "BernoulliNB", "CategoricalNB", "ComplementNB", "GaussianNB", "MultinomialNB"]
