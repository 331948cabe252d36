r"""A vocabulary learned from a corpus, and the sparse document-term matrix over it.

:class:`Vocabulary` numbers the words of a training corpus (split by
:func:`lecturekit.text.tokenizer.tokenize`'s rule) and turns any list of documents into a CSR matrix
of counts, one row per document, in one pass over the text and without ever building a dense
document-by-word array: the input of multinomial (counts) and Bernoulli (indicators) naive Bayes.
:mod:`lecturekit.text` gathers it with the tokenizer and the word selection by mutual information.

Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (binary features)
and notebooks/03.02-The-Multinomial-Event-Model.ipynb (counts, mutual information).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from numbers import Integral, Real
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from lecturekit.text.tokenizer import (
    TOKEN_PATTERN,
    _as_documents,
    _check_lowercase,
    _compile_pattern,
)

__all__ = ["Vocabulary"]


class Vocabulary(TransformerMixin, BaseEstimator):
    r"""A vocabulary learned from a corpus, and the document-term count matrix over it.

    ``fit`` tokenizes the training documents (see :func:`lecturekit.text.tokenizer.tokenize`), keeps the words that
    occur in enough documents (``min_df``) and, optionally, only the ``max_features`` most frequent
    ones, and numbers the kept words in alphabetical order. ``transform`` turns documents into
    a sparse matrix :math:`X` with :math:`X_{ij}` the number of times word :math:`j` occurs in
    document :math:`i` (or 1 if it occurs at all, with ``binary=True``): the input of
    multinomial (counts) and Bernoulli (indicators) naive Bayes. Words never seen in training
    are ignored at ``transform`` time.

    The parameters and results are those of scikit-learn's ``CountVectorizer`` with the same
    ``token_pattern``, ``lowercase``, ``min_df``, ``max_features`` and ``binary``: the same
    vocabulary, in the same column order, and the same counts.

    Parameters
    ----------
    min_df : int or float, default 1
        Keep a word only if it occurs in at least this many training documents (int >= 1), or
        in at least this fraction of them (float in [0, 1]).
    max_features : int or None, default None
        If an int >= 1, keep only the ``max_features`` words with the largest total count in the
        training corpus (after ``min_df``); ties are broken alphabetically. None keeps all.
    binary : bool, default False
        If True, every non-zero count becomes 1 (word present / absent).
    lowercase : bool, default True
        Lower-case the documents before tokenizing.
    token_pattern : str, default ``TOKEN_PATTERN`` (``r"[A-Za-z0-9']+"``)
        Regular expression that matches one token.

    Attributes
    ----------
    vocabulary_ : dict of str to int
        Column index of each kept word; the columns number the words alphabetically.
    document_frequency_ : ndarray of int64, shape (n_features,)
        Number of training documents that contain each word, in column order.
    n_documents_ : int
        Number of training documents.

    Examples
    --------
    >>> vocab = Vocabulary().fit(["Free prize!", "Call me.", "free FREE call"])
    >>> vocab.get_feature_names_out().tolist()
    ['call', 'free', 'me', 'prize']
    >>> vocab.document_frequency_
    array([2, 2, 1, 1])
    >>> X = vocab.transform(["free call, free prize now"])   # "now" is not in the vocabulary
    >>> X.toarray()
    array([[1, 2, 0, 1]])
    >>> Vocabulary(binary=True).fit_transform(["free free call"]).toarray()
    array([[1, 1]])

    Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (binary features)
    and notebooks/03.02-The-Multinomial-Event-Model.ipynb (counts, mutual information).
    """

    def __init__(
        self,
        min_df: int | float = 1,
        max_features: int | None = None,
        binary: bool = False,
        lowercase: bool = True,
        token_pattern: str = TOKEN_PATTERN,
    ):
        self.min_df = min_df
        self.max_features = max_features
        self.binary = binary
        self.lowercase = lowercase
        self.token_pattern = token_pattern

    # ----------------------------------------------------------------------- validation

    def _check_params(self) -> tuple[re.Pattern[str], bool]:
        min_df = self.min_df
        if isinstance(min_df, (bool, np.bool_)) or not isinstance(min_df, Real):
            raise ValueError(
                f"min_df must be an int >= 1 (a number of documents) or a float in [0, 1] (a "
                f"fraction of documents); got {min_df!r}."
            )
        if isinstance(min_df, Integral):
            if min_df < 1:
                raise ValueError(
                    f"min_df={min_df!r} is an int, so it counts documents and must be >= 1; use "
                    f"min_df=1 to keep every word, or a float such as 0.01 for a fraction."
                )
        elif not 0.0 <= min_df <= 1.0:  # also refuses NaN
            raise ValueError(
                f"min_df={min_df!r} is a float, so it is a fraction of the documents and must lie "
                f"in [0, 1]; to count documents pass an int, e.g. min_df={int(min_df)}."
                if np.isfinite(min_df) and min_df > 1
                else f"min_df={min_df!r} is a float, so it is a fraction of the documents and must "
                f"lie in [0, 1]; use min_df=1 to keep every word."
            )
        max_features = self.max_features
        if max_features is not None and (
            isinstance(max_features, (bool, np.bool_)) or not isinstance(max_features, Integral) or max_features < 1
        ):
            raise ValueError(
                f"max_features must be None (keep every word) or an int >= 1 (keep that many of "
                f"the most frequent words); got {max_features!r}."
            )
        if not isinstance(self.binary, (bool, np.bool_)):
            raise ValueError(f"binary must be True or False; got {self.binary!r}.")
        return _compile_pattern(self.token_pattern), _check_lowercase(self.lowercase)

    # ----------------------------------------------------------------------- counting

    @staticmethod
    def _count(
        documents: list[str],
        vocabulary: dict[str, int],
        pattern: re.Pattern[str],
        lowercase: bool,
        *,
        grow: bool,
    ) -> sp.csr_matrix:
        """Counts of the words of ``vocabulary`` in one pass over the documents.

        Each document contributes its token ids to one flat ``indices`` list and its end to
        ``indptr``; the CSR matrix with a 1 per token is then summed over repeated (row, column)
        pairs by ``sum_duplicates``. With ``grow=True`` new words are added to ``vocabulary``
        (fitting); otherwise unknown words are dropped.
        """
        findall = pattern.findall
        indices: list[int] = []
        indptr = np.empty(len(documents) + 1, dtype=np.int64)
        indptr[0] = 0
        if grow:
            setdefault = vocabulary.setdefault
            for i, doc in enumerate(documents):
                tokens = findall(doc.lower() if lowercase else doc)
                indices.extend([setdefault(t, len(vocabulary)) for t in tokens])
                indptr[i + 1] = len(indices)
        else:
            get = vocabulary.get
            for i, doc in enumerate(documents):
                tokens = findall(doc.lower() if lowercase else doc)
                indices.extend([j for t in tokens if (j := get(t)) is not None])
                indptr[i + 1] = len(indices)
        index_array = np.asarray(indices, dtype=np.int64)
        X = sp.csr_matrix(
            (np.ones(index_array.size, dtype=np.int64), index_array, indptr),
            shape=(len(documents), len(vocabulary)),
        )
        X.sum_duplicates()  # sorts the column indices of each row and adds repeated words
        return X

    # ----------------------------------------------------------------------- the protocol

    def fit(self, documents: Iterable[str], y: Any = None) -> Vocabulary:
        """Learn the vocabulary and document frequencies of a training corpus.

        Parameters
        ----------
        documents : list of str
            The training documents (any iterable of strings, but not a single string).
        y : ignored
            Present for compatibility with scikit-learn pipelines.

        Returns
        -------
        Vocabulary
            ``self``, fitted.

        Raises
        ------
        ValueError
            If ``documents`` is a single string, is empty, or contains no token at all; if no
            word survives ``min_df``; or if a parameter is invalid.
        """
        self._fit(documents)
        return self

    def fit_transform(self, documents: Iterable[str], y: Any = None) -> sp.csr_matrix:
        """Fit, then return the document-term matrix of the training documents.

        Same result as ``fit(documents).transform(documents)``, with one pass over the text.

        Parameters
        ----------
        documents : list of str
            The training documents.
        y : ignored
            Present for compatibility with scikit-learn pipelines.

        Returns
        -------
        scipy.sparse.csr_matrix of int64, shape (n_documents, n_features)
            Word counts (0/1 with ``binary=True``).
        """
        X = self._fit(documents)
        if self.binary:
            X.data[:] = 1
        return X

    def _fit(self, documents: Iterable[str]) -> sp.csr_matrix:
        pattern, lowercase = self._check_params()
        documents = _as_documents(documents, "Vocabulary.fit")
        if not documents:
            raise ValueError(
                "Vocabulary.fit got an empty corpus (no documents), so there are no words to learn; "
                "pass a non-empty list of training documents."
            )
        raw_vocabulary: dict[str, int] = {}
        X = self._count(documents, raw_vocabulary, pattern, lowercase, grow=True)
        if not raw_vocabulary:
            raise ValueError(
                f"The {len(documents)} training documents contain no tokens matching token_pattern="
                f"{self.token_pattern!r} (are they all empty or all punctuation?); pass documents "
                f"with words in them, or choose a token_pattern that matches their words."
            )
        names = list(raw_vocabulary)  # the words in order of first occurrence (raw column order)
        n_documents = len(documents)
        document_frequency = np.bincount(X.indices, minlength=len(names)).astype(np.int64)

        min_count = self.min_df if isinstance(self.min_df, Integral) else self.min_df * n_documents
        kept = np.flatnonzero(document_frequency >= min_count)
        if kept.size == 0:
            raise ValueError(
                f"No word occurs in at least min_df={self.min_df!r} of the {n_documents} "
                f"documents (the most common occurs in {int(document_frequency.max())}); lower "
                f"min_df."
            )
        if self.max_features is not None and kept.size > self.max_features:
            corpus_frequency = np.bincount(X.indices, weights=X.data, minlength=len(names))
            by_frequency = sorted(kept.tolist(), key=lambda j: (-corpus_frequency[j], names[j]))
            kept = np.asarray(by_frequency[: self.max_features], dtype=np.int64)
        columns = np.asarray(sorted(kept.tolist(), key=names.__getitem__), dtype=np.int64)

        self.vocabulary_ = {names[j]: column for column, j in enumerate(columns.tolist())}
        self.document_frequency_ = document_frequency[columns]
        self.n_documents_ = n_documents
        if columns.size == len(names) and np.array_equal(columns, np.arange(len(names))):
            return X
        X = X[:, columns]  # sparse column selection: keeps CSR, never densifies
        X.sort_indices()
        return X.tocsr()

    def transform(self, documents: Iterable[str]) -> sp.csr_matrix:
        """The document-term matrix of ``documents`` over the learned vocabulary.

        Parameters
        ----------
        documents : list of str
            Any documents; words not in ``vocabulary_`` are ignored.

        Returns
        -------
        scipy.sparse.csr_matrix of int64, shape (n_documents, n_features)
            Row ``i``, column ``j``: how often word ``j`` occurs in document ``i`` (0/1 with
            ``binary=True``). A document without known words is a row of zeros.

        Raises
        ------
        ValueError
            If ``documents`` is a single string or holds something other than strings.
        """
        check_is_fitted(self, "vocabulary_")
        pattern, lowercase = self._check_params()
        documents = _as_documents(documents, "Vocabulary.transform")
        X = self._count(documents, self.vocabulary_, pattern, lowercase, grow=False)
        if self.binary:
            X.data[:] = 1
        return X

    def get_feature_names_out(self, input_features: Any = None) -> NDArray[np.object_]:
        """The words of the vocabulary, in column order.

        Parameters
        ----------
        input_features : ignored
            Present for compatibility with scikit-learn.

        Returns
        -------
        ndarray of object (str), shape (n_features,)
        """
        check_is_fitted(self, "vocabulary_")
        names = np.empty(len(self.vocabulary_), dtype=object)
        for word, column in self.vocabulary_.items():
            names[column] = word
        return names

    def inverse_transform(self, X: Any) -> list[NDArray[np.object_]]:
        """The words present (non-zero) in each row of a document-term matrix.

        Parameters
        ----------
        X : sparse matrix or array_like, shape (n_documents, n_features)

        Returns
        -------
        list of ndarray of object (str)
            For each row, its words with non-zero entries, in column (alphabetical) order.
        """
        check_is_fitted(self, "vocabulary_")
        X = sp.csr_matrix(X)
        if X.shape[1] != len(self.vocabulary_):
            raise ValueError(
                f"X has {X.shape[1]} columns but the vocabulary has {len(self.vocabulary_)} "
                f"words; pass a matrix made by this Vocabulary's transform."
            )
        X.eliminate_zeros()
        X.sort_indices()
        names = self.get_feature_names_out()
        return [names[X.indices[X.indptr[i] : X.indptr[i + 1]]] for i in range(X.shape[0])]
