"""Token sequences as hmmlearn's input: one column of symbol indices and the sequences' lengths.

:class:`lecturekit.hmm.model.CategoricalHMM`, like hmmlearn's ``CategoricalHMM``, reads a corpus as a
column ``X`` of symbol indices, shape (n_tokens, 1), split into sequences by ``lengths``;
:func:`sequences_to_column` turns sentences of words into that form.

Derived in notebooks/06.01-Hidden-Markov-Models-and-Viterbi.ipynb (the section on encoding the corpus).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["sequences_to_column"]


def sequences_to_column(
    sequences: Sequence[Sequence[Any]], vocabulary: Mapping[Any, int]
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Encode token sequences as hmmlearn's column of symbol indices and their lengths.

    Parameters
    ----------
    sequences : sequence of sequences of tokens
        Such as the sentences of :func:`lecturekit.datasets.load_brown`; none may be empty.
    vocabulary : mapping from token to int
        The index of each token. Tokens not in it map to ``vocabulary["<unk>"]`` if that key
        exists, and raise a ValueError otherwise.

    Returns
    -------
    X : ndarray of int, shape (n_tokens, 1)
    lengths : ndarray of int, shape (n_sequences,)

    Examples
    --------
    >>> X, lengths = sequences_to_column([("the", "dog"), ("a", "cat")],
    ...                                  {"<unk>": 0, "the": 1, "a": 2, "dog": 3})
    >>> X.ravel(), lengths
    (array([1, 3, 2, 0]), array([2, 2]))
    """
    lengths = np.array([len(sequence) for sequence in sequences], dtype=np.intp)
    if lengths.size == 0 or (lengths == 0).any():
        where = "there are none" if lengths.size == 0 else f"sequence {int(np.flatnonzero(lengths == 0)[0])} is empty"
        raise ValueError(f"Every sequence needs at least one token and {where}; drop empty sequences first.")
    unknown = vocabulary.get("<unk>")
    codes = [vocabulary.get(token, unknown) for sequence in sequences for token in sequence]
    if unknown is None and None in codes:
        position = codes.index(None)
        token = [token for sequence in sequences for token in sequence][position]
        raise ValueError(
            f"The token {token!r} (position {position}) is not in the vocabulary, which has no "
            f"'<unk>' entry; add one (e.g. vocabulary['<unk>'] = len(vocabulary)) to map unseen "
            f"tokens to it."
        )
    return np.array(codes, dtype=np.intp)[:, None], lengths
