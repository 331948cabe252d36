"""Splitting documents into words: the first step from raw text to count vectors.

:func:`tokenize` splits one string into words with one regular expression (``TOKEN_PATTERN``
by default), the rule of scikit-learn's ``CountVectorizer``; :class:`lecturekit.text.vocabulary.Vocabulary`
applies the same rule to a whole corpus. :mod:`lecturekit.text` gathers this module with the
vocabulary and the word selection by mutual information, as the notebooks import them.

Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (binary features)
and notebooks/03.02-The-Multinomial-Event-Model.ipynb (counts, mutual information).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import numpy as np

__all__ = ["TOKEN_PATTERN", "tokenize"]

#: The default token: a run of ASCII letters, digits and apostrophes ("don't", "2nd", "o'clock").
#: Everything else (spaces, punctuation, accented letters, symbols) separates tokens.
TOKEN_PATTERN: str = r"[A-Za-z0-9']+"


def _compile_pattern(token_pattern: Any) -> re.Pattern[str]:
    if not isinstance(token_pattern, str):
        raise ValueError(
            f"token_pattern must be a regular expression given as a string; got "
            f'{token_pattern!r}. Use for example r"[A-Za-z0-9\']+".'
        )
    try:
        pattern = re.compile(token_pattern)
    except re.error as exc:
        raise ValueError(
            f"token_pattern {token_pattern!r} is not a valid regular expression ({exc}); fix the "
            f'expression, for example r"[A-Za-z0-9\']+".'
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
            f'document must be a string (decode bytes, replace missing documents by "").'
        )
    return documents
