"""Tests of lecturekit.text (chapter 3: turning documents into count vectors).

The subpackage lecturekit.text holds the modules tokenizer, vocabulary and selection, and gives their
public names; the tests import the names from lecturekit.text, as the notebooks do.
"""

import re

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import mutual_info_score

from lecturekit import text
from lecturekit.datasets import load_20newsgroups
from lecturekit.text import (
    TOKEN_PATTERN,
    Vocabulary,
    mutual_information,
    select_by_mutual_information,
    selection,
    tokenize,
    tokenizer,
    vocabulary,
)

SMALL_CORPUS = [
    "WIN a FREE prize!! Don't wait: call 0800-123 now.",
    "Hey, are we still on for lunch? Call me.",
    "free free FREE entry; reply WIN to claim",
    "",
    "...!!!",
    "Lunch at 12 o'clock, don't be late",
    "Ünïcode cafés naïve -- e-mail me at x@y.com",
]


def assert_same_as_count_vectorizer(documents, ours: Vocabulary, **cv_kwargs):
    """Same vocabulary and, after aligning the columns by word, the same counts."""
    X = ours.fit_transform(documents)
    reference = CountVectorizer(**cv_kwargs)
    R = reference.fit_transform(documents)
    assert set(ours.vocabulary_) == set(reference.vocabulary_)
    reference_names = reference.get_feature_names_out()
    columns = np.array([ours.vocabulary_[word] for word in reference_names])
    assert X.shape == R.shape
    assert (X[:, columns] != R).nnz == 0
    assert (ours.transform(documents) != X).nnz == 0
    return X


# --------------------------------------------------------------------------- one name for the three modules


def test_text_gathers_the_three_modules():
    """Every public name of the subpackage's three modules is lecturekit.text's, the same object."""
    modules = (tokenizer, vocabulary, selection)
    assert sorted(text.__all__) == sorted(name for module in modules for name in module.__all__)
    for module in modules:
        for name in module.__all__:
            assert getattr(text, name) is getattr(module, name)


# --------------------------------------------------------------------------- tokenize


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "WIN a FREE prize!! Don't wait: call 0800-123.",
            ["win", "a", "free", "prize", "don't", "wait", "call", "0800", "123"],
        ),
        ("e-mail me@home.com", ["e", "mail", "me", "home", "com"]),
        ("  spaces\tand\nnewlines  ", ["spaces", "and", "newlines"]),
        ("naïve café", ["na", "ve", "caf"]),  # only ASCII letters belong to tokens
        ("", []),
        ("?!... --", []),
        ("o'clock 2nd", ["o'clock", "2nd"]),
    ],
)
def test_tokenize_examples(text, expected):
    assert tokenize(text) == expected


def test_tokenize_case_and_pattern():
    assert tokenize("Free free FREE", lowercase=False) == ["Free", "free", "FREE"]
    assert tokenize("Free free FREE") == ["free"] * 3
    assert tokenize("ab abc a abcd", token_pattern=r"\b\w\w+\b") == ["ab", "abc", "abcd"]
    # one capturing group: the group is the token (as in CountVectorizer)
    assert tokenize("#spam #ham eggs", token_pattern=r"#(\w+)") == ["spam", "ham"]


@pytest.mark.parametrize("text", SMALL_CORPUS)
def test_tokenize_is_count_vectorizers_tokenizer(text):
    analyzer = CountVectorizer(token_pattern=TOKEN_PATTERN).build_analyzer()
    assert tokenize(text) == analyzer(text)


def test_tokenize_errors():
    with pytest.raises(ValueError, match="string.*decode"):
        tokenize(b"bytes")
    with pytest.raises(ValueError, match="not a valid regular expression"):
        tokenize("text", token_pattern="[a-z")
    with pytest.raises(ValueError, match="capturing groups.*non-capturing"):
        tokenize("text", token_pattern=r"(a)(b)")
    with pytest.raises(ValueError, match="lowercase must be True or False"):
        tokenize("text", lowercase="yes")


# --------------------------------------------------------------------------- Vocabulary vs sklearn


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"lowercase": False},
        {"binary": True},
        {"min_df": 2},
        {"min_df": 0.25},
        {"token_pattern": r"(?u)\b\w\w+\b"},  # CountVectorizer's default pattern
    ],
)
def test_agrees_with_count_vectorizer_on_a_small_corpus(params):
    cv_kwargs = {"token_pattern": TOKEN_PATTERN, "lowercase": True} | params
    X = assert_same_as_count_vectorizer(SMALL_CORPUS, Vocabulary(**params), **cv_kwargs)
    assert X.dtype == np.int64


def test_agrees_with_count_vectorizer_on_20_newsgroups():
    texts, _ = load_20newsgroups("train")
    documents = texts[:300]
    X = assert_same_as_count_vectorizer(documents, Vocabulary(), token_pattern=TOKEN_PATTERN, lowercase=True)
    assert X.shape[0] == 300 and X.shape[1] > 5000
    # documents held out from fitting: unknown words are dropped, known ones counted alike
    vocab = Vocabulary(min_df=2).fit(documents)
    reference = CountVectorizer(token_pattern=TOKEN_PATTERN, min_df=2).fit(documents)
    assert vocab.vocabulary_ == reference.vocabulary_  # same words, same (alphabetical) columns
    held_out = texts[300:400]
    assert (vocab.transform(held_out) != reference.transform(held_out)).nnz == 0


# --------------------------------------------------------------------------- Vocabulary behaviour


def test_columns_are_alphabetical_and_counts_exact():
    vocab = Vocabulary()
    X = vocab.fit_transform(["b a b", "c a", "a"])
    assert vocab.vocabulary_ == {"a": 0, "b": 1, "c": 2}
    assert vocab.get_feature_names_out().tolist() == ["a", "b", "c"]
    np.testing.assert_array_equal(X.toarray(), [[1, 2, 0], [1, 0, 1], [1, 0, 0]])
    np.testing.assert_array_equal(vocab.document_frequency_, [3, 1, 1])
    assert vocab.document_frequency_.dtype == np.int64
    assert vocab.n_documents_ == 3


def test_min_df_counts_or_fractions():
    corpus = ["a b c", "a b", "a", "a d"]  # document frequencies a 4, b 2, c 1, d 1
    assert set(Vocabulary(min_df=1).fit(corpus).vocabulary_) == {"a", "b", "c", "d"}
    assert set(Vocabulary(min_df=2).fit(corpus).vocabulary_) == {"a", "b"}
    assert set(Vocabulary(min_df=4).fit(corpus).vocabulary_) == {"a"}
    assert set(Vocabulary(min_df=0.5).fit(corpus).vocabulary_) == {"a", "b"}  # >= 2 of 4
    assert set(Vocabulary(min_df=0.51).fit(corpus).vocabulary_) == {"a"}
    assert set(Vocabulary(min_df=0.0).fit(corpus).vocabulary_) == {"a", "b", "c", "d"}
    assert set(Vocabulary(min_df=1.0).fit(corpus).vocabulary_) == {"a"}
    vocab = Vocabulary(min_df=2).fit(corpus)
    np.testing.assert_array_equal(vocab.document_frequency_, [4, 2])
    # columns are renumbered 0..n-1 after pruning
    np.testing.assert_array_equal(vocab.transform(["c b b d a"]).toarray(), [[1, 2]])


def test_max_features_keeps_most_frequent_with_alphabetical_ties():
    # corpus frequencies: z 4, b 2, c 2, a 2, y 1 (document frequency is not what counts)
    corpus = ["z z z z", "b b", "c", "c", "a", "a", "y"]
    assert list(Vocabulary(max_features=1).fit(corpus).vocabulary_) == ["z"]
    assert Vocabulary(max_features=2).fit(corpus).vocabulary_ == {"a": 0, "z": 1}
    assert Vocabulary(max_features=3).fit(corpus).vocabulary_ == {"a": 0, "b": 1, "z": 2}
    assert len(Vocabulary(max_features=100).fit(corpus).vocabulary_) == 5
    # applied after min_df: only words in >= 2 documents compete
    assert Vocabulary(min_df=2, max_features=1).fit(corpus).vocabulary_ == {"a": 0}
    vocab = Vocabulary(max_features=2)
    np.testing.assert_array_equal(vocab.fit_transform(corpus).toarray()[:, 1], [4, 0, 0, 0, 0, 0, 0])


def test_max_features_agrees_with_count_vectorizer_without_ties():
    corpus = ["a a a a b b b c c d", "a b c e e e e e e", "f"]  # a 5, e 6, b 4, c 3, d 1, f 1
    for k in (1, 2, 3, 4):
        assert_same_as_count_vectorizer(corpus, Vocabulary(max_features=k), token_pattern=TOKEN_PATTERN, max_features=k)


def test_binary_gives_indicators():
    corpus = ["spam spam spam eggs", "eggs ham"]
    counts = Vocabulary().fit_transform(corpus)
    vocab = Vocabulary(binary=True)
    indicators = vocab.fit_transform(corpus)
    np.testing.assert_array_equal(indicators.toarray(), (counts.toarray() > 0).astype(int))
    assert indicators.dtype == np.int64
    np.testing.assert_array_equal(vocab.transform(["spam spam ham ham"]).toarray(), [[0, 1, 1]])


def test_unknown_words_are_ignored_at_transform():
    vocab = Vocabulary().fit(["free prize", "call me"])
    X = vocab.transform(["free free unknown words", "nothing known here", "", "PRIZE!"])
    assert X.shape == (4, 4)
    np.testing.assert_array_equal(X.toarray(), [[0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    assert X.nnz == 2
    assert set(vocab.vocabulary_) == {"call", "free", "me", "prize"}  # transform learns nothing
    assert vocab.transform([]).shape == (0, 4)


def test_transform_is_sparse_and_canonical():
    documents = ["b a b c", "", "c c c", "a d"]
    vocab = Vocabulary().fit(documents)
    X = vocab.transform(documents)
    assert isinstance(X, sp.csr_matrix)
    assert X.dtype == np.int64
    assert X.has_canonical_format  # sorted indices, no duplicate entries
    # one stored entry per distinct known word per document, none for absent words
    assert X.nnz == sum(len(set(tokenize(d))) for d in documents)
    assert np.all(X.data > 0)
    np.testing.assert_array_equal(np.diff(X.indptr), [3, 0, 1, 2])


def test_transform_never_densifies():
    # 100,000 words by 20,000 documents: a dense int64 matrix would take 16 GB.
    n_words, n_documents = 100_000, 20_000
    vocab = Vocabulary().fit([" ".join(f"w{j}" for j in range(n_words))])
    X = vocab.transform([f"w{i} w{i} w{i * 5}" for i in range(n_documents)])
    assert X.shape == (n_documents, n_words)
    assert X.nnz == 2 * n_documents - 1  # document 0 is "w0 w0 w0"
    assert X.sum() == 3 * n_documents
    assert X.data.nbytes + X.indices.nbytes < 1_000_000


def test_fit_transform_equals_fit_then_transform():
    texts, _ = load_20newsgroups("test")
    documents = texts[:100]
    for params in ({}, {"min_df": 3}, {"max_features": 50, "binary": True}):
        X = Vocabulary(**params).fit_transform(documents)
        Y = Vocabulary(**params).fit(documents).transform(documents)
        assert isinstance(X, sp.csr_matrix) and X.has_canonical_format
        assert X.shape == Y.shape and (X != Y).nnz == 0


def test_inverse_transform_lists_present_words():
    vocab = Vocabulary().fit(["b a b c", "d"])
    words = vocab.inverse_transform(vocab.transform(["c b b zzz", "zzz"]))
    assert [w.tolist() for w in words] == [["b", "c"], []]
    with pytest.raises(ValueError, match="columns.*this Vocabulary"):
        vocab.inverse_transform(np.ones((1, 3)))


def test_scikit_learn_protocol():
    vocab = Vocabulary(min_df=0.5, max_features=7, binary=True, lowercase=False, token_pattern=r"\w+")
    assert vocab.get_params() == {
        "min_df": 0.5,
        "max_features": 7,
        "binary": True,
        "lowercase": False,
        "token_pattern": r"\w+",
    }
    copy = clone(vocab)
    assert copy.get_params() == vocab.get_params()
    assert vocab.fit(["a b"]) is vocab
    assert not hasattr(copy, "vocabulary_")
    with pytest.raises(NotFittedError):
        copy.transform(["a"])


def test_accepts_any_iterable_of_strings():
    documents = ["a b", "b c"]
    expected = Vocabulary().fit(documents).vocabulary_
    assert Vocabulary().fit(tuple(documents)).vocabulary_ == expected
    assert Vocabulary().fit(np.array(documents)).vocabulary_ == expected
    assert Vocabulary().fit(d for d in documents).vocabulary_ == expected


word_lists = st.lists(
    st.lists(st.sampled_from(["spam", "ham", "eggs", "Free", "call", "x1", "don't"]), max_size=8),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(words=word_lists, data=st.data())
def test_permuting_documents_permutes_rows(words, data):
    documents = [" ".join(w) + " !" for w in words]
    assume(any(words))  # no tokens at all is an error, tested below
    order = data.draw(st.permutations(range(len(documents))))
    vocab = Vocabulary()
    X = vocab.fit_transform(documents)
    permuted = Vocabulary()
    Y = permuted.fit_transform([documents[i] for i in order])
    assert permuted.vocabulary_ == vocab.vocabulary_
    np.testing.assert_array_equal(permuted.document_frequency_, vocab.document_frequency_)
    assert (X[list(order)] != Y).nnz == 0


# --------------------------------------------------------------------------- Vocabulary errors


def test_empty_corpus_and_no_tokens():
    with pytest.raises(ValueError, match="empty corpus.*non-empty list"):
        Vocabulary().fit([])
    with pytest.raises(ValueError, match="contain no tokens.*token_pattern"):
        Vocabulary().fit(["", "  ", "?!"])
    with pytest.raises(ValueError, match="contain no tokens"):
        Vocabulary().fit_transform(["..."])


@pytest.mark.parametrize("method", ["fit", "fit_transform", "transform"])
def test_a_single_string_is_refused(method):
    vocab = Vocabulary().fit(["a b"])
    for single in ("free prize", b"free prize"):
        with pytest.raises(ValueError, match=re.escape("pass a list of documents, not one string")):
            getattr(vocab, method)(single)


def test_non_string_documents_are_refused():
    with pytest.raises(ValueError, match="document 1 is a NoneType, not a str"):
        Vocabulary().fit(["a", None])
    with pytest.raises(ValueError, match="list of documents"):
        Vocabulary().fit(42)


@pytest.mark.parametrize("min_df", [0, -1, 1.5, -0.1, float("nan"), True, "2", None])
def test_invalid_min_df(min_df):
    with pytest.raises(ValueError, match="min_df"):
        Vocabulary(min_df=min_df).fit(["a b"])


@pytest.mark.parametrize("max_features", [0, -3, 2.5, True, "10"])
def test_invalid_max_features(max_features):
    with pytest.raises(ValueError, match="max_features must be None .* or an int >= 1"):
        Vocabulary(max_features=max_features).fit(["a b"])


def test_min_df_that_removes_every_word():
    with pytest.raises(ValueError, match="No word occurs in at least min_df=3.*lower min_df"):
        Vocabulary(min_df=3).fit(["a b", "b c"])


def test_invalid_flags_and_pattern():
    with pytest.raises(ValueError, match="binary must be True or False"):
        Vocabulary(binary="yes").fit(["a"])
    with pytest.raises(ValueError, match="lowercase must be True or False"):
        Vocabulary(lowercase=None).fit(["a"])
    with pytest.raises(ValueError, match="token_pattern must be a regular expression"):
        Vocabulary(token_pattern=None).fit(["a"])


# --------------------------------------------------------------------------- mutual information


def reference_mutual_information(X, y):
    dense = np.asarray(X.toarray() if sp.issparse(X) else X)
    return np.array([mutual_info_score(y, dense[:, j] > 0) for j in range(dense.shape[1])])


@pytest.mark.parametrize("n_classes", [2, 3, 5])
@pytest.mark.parametrize("sparse", [False, True])
def test_mutual_information_matches_sklearn(n_classes, sparse):
    rng = np.random.default_rng(n_classes)
    n, d = 60, 25
    y = rng.integers(0, n_classes, size=n)
    rates = rng.uniform(0.0, 2.0, size=(n_classes, d))
    X = rng.poisson(rates[y])
    X[:, 0] = 0  # a word that never occurs
    X[:, 1] = 1  # a word in every document
    labels = np.array(["ham", "spam", "eggs", "x", "y"])[y]
    mi = mutual_information(sp.csr_matrix(X) if sparse else X, labels)
    expected = reference_mutual_information(X, labels)
    assert mi.shape == (d,) and mi.dtype == np.float64
    np.testing.assert_allclose(mi, expected, rtol=0, atol=1e-10)
    assert np.all(mi >= 0)
    assert mi[0] == 0 and mi[1] == 0
    assert np.all(mi <= np.log(n_classes) + 1e-12)


def test_mutual_information_is_zero_for_an_independent_word():
    # 6 documents of class a, 3 of class b; the word occurs in 2/3 of each class, so
    # P(word, class) = P(word) P(class) exactly.
    y = np.array(["a"] * 6 + ["b"] * 3)
    word = np.array([1, 1, 1, 1, 0, 0, 2, 5, 0])
    X = np.column_stack([word, (y == "a").astype(int)])
    mi = mutual_information(sp.csr_matrix(X), y)
    assert mi[0] == 0.0
    p = 6 / 9  # the second word is the class: I = H(C)
    assert mi[1] == pytest.approx(-(p * np.log(p) + (1 - p) * np.log(1 - p)), abs=1e-15)


def test_mutual_information_of_a_perfect_indicator_is_the_class_entropy():
    y = np.repeat([0, 1, 2, 3], 5)
    X = (y[:, None] == np.arange(4)).astype(int) * 3
    np.testing.assert_allclose(
        mutual_information(X, y), np.full(4, -(0.25 * np.log(0.25) + 0.75 * np.log(0.75))), atol=1e-15
    )
    single_class = mutual_information(np.eye(3), ["a", "a", "a"])
    np.testing.assert_array_equal(single_class, np.zeros(3))


def test_mutual_information_uses_presence_only():
    rng = np.random.default_rng(3)
    X = rng.poisson(0.7, size=(40, 10))
    y = rng.integers(0, 3, size=40)
    np.testing.assert_array_equal(mutual_information(X, y), mutual_information((X > 0) * 7, y))


def test_select_by_mutual_information_finds_planted_words():
    rng = np.random.default_rng(0)
    n, d, n_classes = 600, 200, 4
    y = rng.integers(0, n_classes, size=n)
    X = sp.csr_matrix(rng.binomial(1, 0.1, size=(n, d)))  # noise words, independent of the class
    planted = np.array([7, 42, 99, 150, 181])
    X = X.tolil()
    for word, cls in zip(planted, [0, 1, 2, 3, 0], strict=True):
        X[:, word] = (rng.random(n) < np.where(y == cls, 0.9, 0.05)).astype(int)[:, None]
    X = X.tocsr()
    chosen = select_by_mutual_information(X, y, k=len(planted))
    assert set(chosen.tolist()) == set(planted.tolist())
    mi = mutual_information(X, y)
    assert np.all(np.diff(mi[select_by_mutual_information(X, y, k=d)]) <= 0)  # decreasing order


def test_select_by_mutual_information_ties_and_prefixes():
    y = np.array([0, 0, 1, 1])
    X = np.array([[0, 1, 1, 1], [0, 1, 1, 0], [1, 0, 0, 1], [1, 0, 0, 0]])  # 0, 1, 2 equal; 3 is 0
    np.testing.assert_array_equal(select_by_mutual_information(X, y, k=2), [0, 1])
    np.testing.assert_array_equal(select_by_mutual_information(X, y, k=4), [0, 1, 2, 3])


@pytest.mark.parametrize("k", [0, 5, -1, 2.0, True, None])
def test_select_by_mutual_information_invalid_k(k):
    with pytest.raises(ValueError, match=r"k must be an int between 1 and the number of features \(4\)"):
        select_by_mutual_information(np.eye(4), [0, 1, 0, 1], k=k)


def test_mutual_information_errors():
    with pytest.raises(ValueError, match="Negative values in X.*>= 0"):
        mutual_information(np.array([[1, -1]]), [0])
    with pytest.raises(ValueError, match="Negative values in X"):
        mutual_information(sp.csr_matrix(np.array([[1, -1]])), [0])
    with pytest.raises(ValueError, match="NaN or infinite"):
        mutual_information(np.array([[np.nan]]), [0])
    with pytest.raises(ValueError, match="3 rows but y has 2 labels"):
        mutual_information(np.eye(3), [0, 1])
    with pytest.raises(ValueError, match="y must be one-dimensional.*ravel"):
        mutual_information(np.eye(2), [[0], [1]])
    with pytest.raises(ValueError, match="two-dimensional.*reshape"):
        mutual_information(np.ones(3), [0, 1, 0])
    with pytest.raises(ValueError, match="no rows"):
        mutual_information(np.zeros((0, 3)), [])
