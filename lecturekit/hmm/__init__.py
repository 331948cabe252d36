r"""Hidden Markov models with categorical emissions: the model and its recursions.

A sequence of symbols (words) :math:`x_1, \dots, x_T` is emitted by a sequence of hidden states
(tags) :math:`y_1, \dots, y_T`: :math:`y_1 \sim \pi`, :math:`y_t \mid y_{t-1} \sim A_{y_{t-1}, \cdot}`,
:math:`x_t \mid y_t \sim B_{y_t, \cdot}`.

==================================  ===================================================================
Module                              What it holds
==================================  ===================================================================
:mod:`~lecturekit.hmm.model`        :class:`CategoricalHMM` (hmmlearn's names and input conventions):
                                    fitting by counting or by Baum–Welch, Viterbi, sampling
:mod:`~lecturekit.hmm.encoding`     :func:`sequences_to_column`, token sequences as the model's input
:mod:`~lecturekit.hmm.recursions`   the scaled forward–backward recursion and Viterbi in log space,
                                    run time-major on all sequences at once, on arrays
==================================  ===================================================================

This ``__init__`` gives the public names of the model, as the notebooks import them
(``from lecturekit.hmm import CategoricalHMM``); the recursions are used as
``from lecturekit.hmm import recursions``.

Derived in notebooks/06.01-Hidden-Markov-Models-and-Viterbi.ipynb and
notebooks/06.02-Forward-Backward-and-Baum-Welch.ipynb.
"""

from lecturekit.hmm.encoding import sequences_to_column
from lecturekit.hmm.model import CategoricalHMM

__all__ = ["CategoricalHMM", "sequences_to_column"]
