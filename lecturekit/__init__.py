"""lecturekit: the companion package of the course *Generative Learning Algorithms*.

Each module holds the model that one chapter derives; the notebook derives it, then imports it.

=========================  ==================================================================
Module                     Chapter
=========================  ==================================================================
:mod:`lecturekit.estimation`  01.01 Bayes' rule and maximum likelihood (counting estimates)
=========================  ==================================================================
"""

__version__ = "0.1.0"
