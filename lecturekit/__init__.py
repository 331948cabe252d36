"""lecturekit: the companion package of the course *Generative Learning Algorithms*.

Each module holds the model that one chapter derives; the notebook derives it, then imports it.
Where one idea spans several modules it is a subpackage whose ``__init__`` gives the public names
(``from lecturekit.naive_bayes import MultinomialNB``). The machinery that builds, releases and grades
the course is a package of its own, :mod:`coursekit`.

==================================  =====================================================================
Module                              Chapter
==================================  =====================================================================
:mod:`lecturekit.estimation`        01.01 Bayes' rule and maximum likelihood (counting estimates)
:mod:`lecturekit.gaussian`          02.01 The multivariate Gaussian
:mod:`lecturekit.gda`               02.02-02.04 Gaussian discriminant analysis (LDA and QDA)
:mod:`lecturekit.fisher`            02.03 Fisher's discriminant and reduced-rank LDA
:mod:`lecturekit.shrinkage`         02.04 covariance shrinkage: Ledoit-Wolf and Friedman's RDA
:mod:`lecturekit.logistic`          02.05 Logistic regression, against GDA
:mod:`lecturekit.datasets`          offline corpora (data/): SMS spam, 20 Newsgroups; Brown, chapter 6
:mod:`lecturekit.text`              chapter 3 (subpackage): tokenizer, vocabulary, word selection
:mod:`lecturekit.naive_bayes`       chapter 3 (subpackage): base; Bernoulli, multinomial, complement,
                                    categorical and Gaussian naive Bayes, a module each
:mod:`lecturekit.smoothing`         chapter 4: add-k, interpolation, Beta/Dirichlet MAP and mean
:mod:`lecturekit.evaluation`        chapter 4 and any chapter: learning curves over repeated splits
:mod:`lecturekit.mixture`           chapter 5 (subpackage): the EM loop; Gaussian mixtures and their steps,
                                    multinomial and Bernoulli naive Bayes with missing labels, a module each
:mod:`lecturekit.hmm`               chapter 6 (subpackage): the categorical hidden Markov model (Viterbi,
                                    Baum-Welch), its input encoding and its recursions, run time-major on all
                                    sequences at once
:mod:`lecturekit.plotting`          figures for every chapter (draws fitted models, never fits)
==================================  =====================================================================
"""

__version__ = "0.1.0"
