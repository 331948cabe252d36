r"""How much a reader sees of each chapter before opening a fold: visible and folded words of prose.

A chapter has two layers. The main line is the markdown a reader sees as the page opens; the rest
(proofs of side conditions, extra checks, replications, history, the "About the sources" box, the
solutions of check-your-understanding exercises) sits in **folds**, closed until the reader opens
them:

- a MyST directive whose class list holds ``dropdown`` (``:::{note} Title`` then ``:class: dropdown``;
  ``:::{solution}`` with the same class), or a ``{dropdown}`` directive, with every directive nested
  inside it;
- an HTML ``<details>`` element;
- a markdown cell tagged ``hide-cell`` or ``remove-cell``.

Words are counted as :func:`words` counts them, strictly: every run of letters, digits and
underscores in the markdown source is a word, in prose, math and code alike (``$p(x \mid y)$`` is
four words: p, x, mid, y; ``0.25`` is two), and so are a link's target and a directive's name and
options (``:::{admonition}``, ``:class: dropdown``: three), which a reader of the source meets;
only HTML comments (the other forms of a statement, the markers of a variant's numbers), which no
surface shows, are not counted. A fold's title shows while it is closed and
counts as visible. ``python -m coursekit words [NOTEBOOK ...]`` prints, per master, the visible and
the folded words and the median of the visible ones; :data:`MAX_VISIBLE` and
:data:`MAX_MEDIAN_VISIBLE` are the course's limits.

Derived for the course machinery; not part of the lecture.
"""

from __future__ import annotations

import argparse
import re
import statistics
from pathlib import Path

import nbformat

MAX_VISIBLE = 3000  # visible words of any one chapter
MAX_MEDIAN_VISIBLE = 2500  # the median over the chapters

_UNSEEN = re.compile(r"<!--.*?-->", re.S)  # a comment: no surface shows it
_WORD = re.compile(r"\w+")

_OPEN = re.compile(r"^\s*(:{3,}|`{3,})\{([\w:-]+)\}")
_CLOSE = re.compile(r"^\s*(:{3,}|`{3,})\s*$")
_OPTION = re.compile(r"^\s*:(\w[\w-]*):\s*(.*)$")
_DETAILS_OPEN = re.compile(r"<details\b", re.I)
_DETAILS_CLOSE = re.compile(r"</details\s*>", re.I)
FOLDED_CELL_TAGS = {"hide-cell", "remove-cell"}


def words(text: str) -> int:
    """Words in markdown ``text``: runs of letters, digits and ``_``, outside HTML comments."""
    return len(_WORD.findall(_UNSEEN.sub("", text)))


def prose_words(nb: nbformat.NotebookNode) -> int:
    """Words of prose in the markdown cells, folded or not."""
    return sum(words(cell.source) for cell in nb.cells if cell.cell_type == "markdown")


def split_folds(text: str) -> tuple[str, str]:
    """``text``'s lines as (what shows when the page opens, what sits in folds)."""
    shown: list[str] = []
    folded: list[str] = []
    stack: list[tuple[str, bool]] = []  # open directives: (fence, folds its content)
    code = ""  # the fence of an open code block (```python), whose lines are never directives
    details = 0
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        inside = details > 0 or any(fold for _, fold in stack)
        into = folded if inside else shown
        opened, closed = _OPEN.match(line), _CLOSE.match(line)
        if code:
            code = "" if closed and closed.group(1).startswith(code) else code
        elif opened:
            fence, name = opened.groups()
            j = i + 1
            options = []
            while j < len(lines) and _OPTION.match(lines[j]):
                options.append(_OPTION.match(lines[j]).groups())
                j += 1
            classes = " ".join(value for key, value in options if key == "class").split()
            fold = name == "dropdown" or "dropdown" in classes or "toggle" in classes
            stack.append((fence, fold))
            (folded if inside else shown).append(line)  # a closed fold's title shows
            (folded if inside or fold else shown).extend(lines[i + 1 : j])
            i = j
            continue
        elif closed and stack and closed.group(1)[0] == stack[-1][0][0] and len(closed.group(1)) >= len(stack[-1][0]):
            stack.pop()
        elif line.lstrip().startswith("```"):
            code = line.lstrip()[: len(line.lstrip()) - len(line.lstrip().lstrip("`"))]
        else:
            details += len(_DETAILS_OPEN.findall(line))
            into = folded if inside or details > 0 else shown
            details = max(0, details - len(_DETAILS_CLOSE.findall(line)))
        into.append(line)
        i += 1
    return "\n".join(shown), "\n".join(folded)


def visible_words(nb: nbformat.NotebookNode) -> tuple[int, int]:
    """(words a reader sees as the page opens, words in folds) of a notebook's markdown."""
    visible = folded = 0
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        if FOLDED_CELL_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            folded += words(cell.source)
            continue
        shown, hidden = split_folds(cell.source)
        visible += words(shown)
        folded += words(hidden)
    return visible, folded


def table(masters: list[Path]) -> tuple[list[tuple[str, int, int]], float]:
    """Per master (name, visible words, folded words), and the median of the visible words."""
    rows = []
    for master in masters:
        visible, folded = visible_words(nbformat.read(master, as_version=4))
        rows.append((master.stem, visible, folded))
    return rows, statistics.median(row[1] for row in rows)


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit words [NOTEBOOK ...]``: visible and folded words per chapter."""
    from coursekit.notebooks import master_notebooks

    parser = argparse.ArgumentParser(prog=prog, description="visible and folded words of prose per chapter")
    parser.add_argument("notebooks", type=Path, nargs="*", help="masters (default: every one)")
    args = parser.parse_args(argv)
    rows, median = table(args.notebooks or master_notebooks())
    print(f"| notebook | visible words (at most {MAX_VISIBLE:,}) | folded words |")
    print("|---|---:|---:|")
    for name, visible, folded in rows:
        flag = "" if visible <= MAX_VISIBLE else " (over)"
        print(f"| {name} | {visible:,}{flag} | {folded:,} |")
    print(f"\nmedian visible: {median:,.0f} (at most {MAX_MEDIAN_VISIBLE:,})")
