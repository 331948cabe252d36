"""Turning documents into count vectors.

Naive Bayes for text sees a document as a bag of words: a vector of word counts (multinomial
event model) or of word indicators (multivariate Bernoulli event model) over a fixed vocabulary.
The steps between raw text and those vectors:

* :func:`tokenize` splits a string into words with one regular expression
  (:mod:`lecturekit.text.tokenizer`);
* :class:`Vocabulary` learns the vocabulary from a training corpus and turns any list of
  documents into a sparse document-term matrix (CSR, one row per document)
  (:mod:`lecturekit.text.vocabulary`);
* :func:`mutual_information` and :func:`select_by_mutual_information` rank words by the mutual
  information between the word's presence and the class, to choose a smaller vocabulary, as
  McCallum and Nigam (1998) do in their vocabulary-size experiments
  (:mod:`lecturekit.text.selection`).

Each is a module of this subpackage; its ``__init__`` gives their public names, as the notebooks
import them. The matrices stay
sparse from start to end: no function here ever builds a dense document-by-word array.

Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (binary features)
and notebooks/03.02-The-Multinomial-Event-Model.ipynb (counts, mutual information).
"""

from lecturekit.text.selection import mutual_information, select_by_mutual_information
from lecturekit.text.tokenizer import TOKEN_PATTERN, tokenize
from lecturekit.text.vocabulary import Vocabulary

__all__ = [
    "TOKEN_PATTERN",
    "Vocabulary",
    "mutual_information",
    "select_by_mutual_information",
    "tokenize",
]
