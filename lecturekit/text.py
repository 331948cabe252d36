"""Turning documents into count vectors.

Naive Bayes for text sees a document as a bag of words: a vector of word counts (multinomial
event model) or of word indicators (multivariate Bernoulli event model) over a fixed vocabulary.
This module holds the three steps between raw text and those vectors:

* :func:`tokenize` splits a string into words with one regular expression;
* :class:`Vocabulary` learns the vocabulary from a training corpus and turns any list of
  documents into a sparse document-term matrix (CSR, one row per document);
* :func:`mutual_information` and :func:`select_by_mutual_information` rank words by the mutual
  information between the word's presence and the class, to choose a smaller vocabulary, as
  McCallum and Nigam (1998) do in their vocabulary-size experiments.

The matrices stay sparse from start to end: no function here ever builds a dense
document-by-word array.

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
from numpy.typing import ArrayLike, NDArray
from scipy.special import xlogy
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted

__all__ = [
    "TOKEN_PATTERN",
    "Vocabulary",
    "mutual_information",
    "select_by_mutual_information",
    "tokenize",
]

#: The default token: a run of ASCII letters, digits and apostrophes ("don't", "2nd", "o'clock").
#: Everything else (spaces, punctuation, accented letters, symbols) separates tokens.
TOKEN_PATTERN: str = r"[A-Za-z0-9']+"


# --------------------------------------------------------------------------- tokenizing


def _compile_pattern(token_pattern: Any) -> re.Pattern[str]:
    if not isinstance(token_pattern, str):
        raise ValueError(
            f"token_pattern must be a regular expression given as a string; got "
            f"{token_pattern!r}. Use for example r\"[A-Za-z0-9']+\"."
        )
    try:
        pattern = re.compile(token_pattern)
    except re.error as exc:
        raise ValueError(
            f"token_pattern {token_pattern!r} is not a valid regular expression ({exc}); fix the "
            f"expression, for example r\"[A-Za-z0-9']+\"."
        ) from exc
    if pattern.groups > 1:
        raise ValueError(
            f"token_pattern {token_pattern!r} has {pattern.groups} capturing groups; use at most "
            f"one (the token), and write the others as non-capturing groups (?:...)."
        )
    return pattern


def _check_lowercase(lowercase: Any) -> bool:
    if not isinstance(lowercase, (bool, np.bool_)):
        raise ValueError(f"lowercase must be True or False; got {lowercase!r}.")
    return bool(lowercase)


def tokenize(text: str, lowercase: bool = True, token_pattern: str = TOKEN_PATTERN) -> list[str]:
    r"""Split a string into tokens: every non-overlapping match of one regular expression.

    The text is lower-cased first (if ``lowercase``), then ``re.findall(token_pattern, text)``
    returns the tokens in reading order, repeats included. With the default pattern a token is
    a run of ASCII letters, digits and apostrophes, so ``"don't"`` stays one word and
    ``"e-mail"`` becomes two; punctuation, spaces and all other characters only separate
    tokens. This is the rule of scikit-learn's ``CountVectorizer`` with the same
    ``token_pattern`` and ``lowercase``: if the pattern has one capturing group, the group is
    the token.

    Parameters
    ----------
    text : str
        One document.
    lowercase : bool, default True
        Convert the text to lower case before matching, so that "Free" and "free" are one word.
    token_pattern : str, default ``TOKEN_PATTERN`` (``r"[A-Za-z0-9']+"``)
        Regular expression that matches one token; at most one capturing group.

    Returns
    -------
    list of str
        The tokens, in the order they occur.

    Raises
    ------
    ValueError
        If ``text`` is not a string, or ``token_pattern`` is not a valid pattern.

    Examples
    --------
    >>> tokenize("WIN a FREE prize!! Don't wait: call 0800-123.")
    ['win', 'a', 'free', 'prize', "don't", 'wait', 'call', '0800', '123']
    >>> tokenize("Free free FREE", lowercase=False)
    ['Free', 'free', 'FREE']

    Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (binary features)
    and notebooks/03.02-The-Multinomial-Event-Model.ipynb (counts, mutual information).
    """
    if not isinstance(text, str):
        raise ValueError(
            f"tokenize expects one document as a string; got {type(text).__name__}. "
            f"Decode bytes first (text.decode('utf-8')), or call tokenize on each document."
        )
    pattern = _compile_pattern(token_pattern)
    if _check_lowercase(lowercase):
        text = text.lower()
    return pattern.findall(text)


def _as_documents(documents: Any, where: str) -> list[str]:
    """A list of str from any iterable of documents; refuses a single string."""
    if isinstance(documents, (str, bytes)):
        raise ValueError(
            f"{where} got a single {type(documents).__name__} where a collection of documents was "
            f"expected; pass a list of documents, not one string (e.g. [text] for one document)."
        )
    if not isinstance(documents, Iterable):
        raise ValueError(
            f"{where} expects a list of documents (strings); got {type(documents).__name__}. "
            f"Pass a list of documents, e.g. texts from load_sms_spam()."
        )
    documents = list(documents)
    bad = next((i for i, doc in enumerate(documents) if not isinstance(doc, str)), None)
    if bad is not None:
        raise ValueError(
            f"{where}: document {bad} is a {type(documents[bad]).__name__}, not a str; every "
            f"document must be a string (decode bytes, replace missing documents by \"\")."
        )
    return documents


# --------------------------------------------------------------------------- the vocabulary


class Vocabulary(TransformerMixin, BaseEstimator):
    r"""A vocabulary learned from a corpus, and the document-term count matrix over it.

    ``fit`` tokenizes the training documents (see :func:`tokenize`), keeps the words that occur
    in enough documents (``min_df``) and, optionally, only the ``max_features`` most frequent
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
            isinstance(max_features, (bool, np.bool_))
            or not isinstance(max_features, Integral)
            or max_features < 1
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
        return [names[X.indices[X.indptr[i]:X.indptr[i + 1]]] for i in range(X.shape[0])]


# --------------------------------------------------------------------------- mutual information


def _presence_and_classes(X: Any, y: ArrayLike) -> tuple[sp.csr_matrix, NDArray[np.intp], int]:
    """Word-presence indicators (CSR of int64) and integer class codes."""
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        if X.ndim != 2:
            raise ValueError(f"X must be two-dimensional; got shape {X.shape}.")
        data = X.data
    else:
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ValueError(
                f"X must be a matrix of counts (a sparse matrix or a numeric array); got "
                f"{type(X).__name__}. Turn documents into counts with Vocabulary first."
            ) from exc
        if X.ndim != 2:
            raise ValueError(
                f"X must be two-dimensional (documents by words); got shape {X.shape}. Use "
                f"X.reshape(-1, 1) for a single word."
            )
        data = X
    if data.size and not np.all(np.isfinite(data)):
        raise ValueError("X contains NaN or infinite values; counts must be finite numbers >= 0.")
    if data.size and np.any(data < 0):
        raise ValueError("Negative values in X passed to mutual_information; counts must be >= 0.")
    if X.shape[0] == 0:
        raise ValueError("X has no rows (documents); pass at least one document.")
    presence = sp.csr_matrix(X != 0 if sp.issparse(X) else X > 0, dtype=np.int64)

    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(
            f"y must be one-dimensional (one class label per document); got shape {y.shape}. "
            f"Use y.ravel() for a column vector."
        )
    if y.shape[0] != X.shape[0]:
        raise ValueError(
            f"X has {X.shape[0]} rows but y has {y.shape[0]} labels; pass exactly one label per "
            f"row of X."
        )
    try:
        classes, codes = np.unique(y, return_inverse=True)
    except TypeError as exc:
        raise ValueError(
            f"The labels in y cannot be sorted ({exc}); give every label the same type, e.g. all "
            f"strings."
        ) from exc
    return presence, codes.ravel(), classes.size


def mutual_information(X: Any, y: ArrayLike) -> NDArray[np.float64]:
    r"""Mutual information (in nats) between each word's presence and the class label.

    For word :math:`j` let :math:`W_j \in \{0, 1\}` say whether a document contains it
    (:math:`X_{ij} > 0`) and :math:`C` be the document's class. With the empirical joint
    distribution over the :math:`n` documents,

    .. math::

        I(W_j; C) = \sum_{c} \sum_{w \in \{0, 1\}} \frac{n_{cw}}{n}
            \log \frac{n \, n_{cw}}{n_c \, n_{w}},

    where :math:`n_{c1}` counts documents of class :math:`c` that contain the word,
    :math:`n_{c0} = n_c - n_{c1}` those that do not, and :math:`n_w = \sum_c n_{cw}`. Terms with
    :math:`n_{cw} = 0` are zero (:math:`0 \log 0 = 0`). All :math:`n_{c1}` come from one sparse
    product, :math:`Y^\top B`, of the one-hot class matrix :math:`Y` (documents by classes) with
    the presence matrix :math:`B` (documents by words), so the cost is one pass over the
    non-zeros of ``X``.

    This is the average mutual information with the class variable by which McCallum and Nigam
    (1998) choose vocabularies of a given size; it is zero exactly when the word's presence is
    independent of the class in the training data, and at most :math:`\log K` for :math:`K`
    classes.

    Parameters
    ----------
    X : sparse matrix or array_like, shape (n_documents, n_features)
        Word counts (or indicators), >= 0; only ``X > 0`` matters.
    y : array_like, shape (n_documents,)
        Class label of each document.

    Returns
    -------
    ndarray of float64, shape (n_features,)
        :math:`I(W_j; C)` for each word, >= 0 (rounding errors below zero are clipped to 0).

    Raises
    ------
    ValueError
        If ``X`` is not a two-dimensional matrix of finite counts >= 0, or ``y`` does not have one
        label per row.

    Examples
    --------
    A word found in every spam and no ham message carries all :math:`\log 2` nats of the class;
    a word found in half of each carries none.

    >>> import numpy as np
    >>> X = np.array([[1, 1], [2, 0], [0, 3], [0, 0]])
    >>> y = ["spam", "spam", "ham", "ham"]
    >>> mutual_information(X, y).round(4), round(float(np.log(2)), 4)
    (array([0.6931, 0.    ]), 0.6931)

    Used in notebooks/03.02-The-Multinomial-Event-Model.ipynb (choosing the vocabulary).
    """
    presence, codes, n_classes = _presence_and_classes(X, y)
    n = presence.shape[0]
    one_hot = sp.csr_matrix(
        (np.ones(n, dtype=np.int64), (np.arange(n), codes)), shape=(n, n_classes)
    )
    present = np.asarray((one_hot.T @ presence).toarray(), dtype=float)  # (K, n_features): n_c1
    class_sizes = np.bincount(codes, minlength=n_classes).astype(float)[:, None]  # n_c
    absent = class_sizes - present  # n_c0
    n_present = present.sum(axis=0)  # n_1 per word
    n_absent = n - n_present  # n_0 per word

    def term(joint: NDArray[np.float64], marginal: NDArray[np.float64]) -> NDArray[np.float64]:
        # n_cw / n * log(n n_cw / (n_c n_w)); where n_cw = 0 the ratio is set to 1 (0 log 0 = 0),
        # which also avoids 0/0 when a word occurs in every document or in none.
        denominator = class_sizes * marginal
        ratio = np.divide(n * joint, denominator, out=np.ones_like(joint), where=joint > 0)
        return xlogy(joint, ratio) / n

    mi = (term(present, n_present) + term(absent, n_absent)).sum(axis=0)
    return np.maximum(mi, 0.0)


def select_by_mutual_information(X: Any, y: ArrayLike, k: int) -> NDArray[np.intp]:
    """Column indices of the ``k`` words with the highest mutual information with the class.

    Parameters
    ----------
    X : sparse matrix or array_like, shape (n_documents, n_features)
        Word counts (or indicators), >= 0.
    y : array_like, shape (n_documents,)
        Class label of each document.
    k : int
        How many words to keep, 1 <= k <= n_features.

    Returns
    -------
    ndarray of intp, shape (k,)
        Column indices in order of decreasing mutual information; equal values are listed
        lower index first. The first ``k'`` of them are the selection for any ``k' < k``, and
        ``X[:, np.sort(indices)]`` keeps the columns in their original (alphabetical) order.

    Raises
    ------
    ValueError
        If ``k`` is not an int in [1, n_features], or as in :func:`mutual_information`.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1, 1, 0], [2, 0, 1], [0, 3, 1], [0, 0, 0]])
    >>> select_by_mutual_information(X, ["spam", "spam", "ham", "ham"], k=2)
    array([0, 1])

    Used in notebooks/03.02-The-Multinomial-Event-Model.ipynb (choosing the vocabulary).
    """
    mi = mutual_information(X, y)
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, Integral) or not 1 <= k <= mi.size:
        raise ValueError(
            f"k must be an int between 1 and the number of features ({mi.size}); got {k!r}. "
            f"To keep every word, skip the selection."
        )
    return np.argsort(-mi, kind="stable")[:k].astype(np.intp)
