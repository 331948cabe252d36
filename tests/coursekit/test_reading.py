"""The main line's length: what counts as a fold, and which words a reader sees as the page opens."""

from __future__ import annotations

import re

import nbformat
import pytest

from coursekit.notebooks import master_notebooks
from coursekit.reading import MAX_MEDIAN_VISIBLE, MAX_VISIBLE, main, split_folds, table, visible_words, words

# The "About the sources" box: a directive titled so, with its options (a fold has the class dropdown).
SOURCES_BOX = re.compile(
    r"^[ \t]*:{3,}\{[\w:-]+\}[^\n]*About the sources[^\n]*\n"  # the title line
    r"(?P<options>(?:[ \t]*:\w[\w-]*:.*\n)*)",  # the options
    re.M,
)
FOLD = ":::{admonition} Why it holds\n:class: dropdown\n\nThree folded words.\n:::"


def test_words_are_runs_of_letters_and_digits_math_code_and_markup_included():
    assert words("Two words $x + y$ and `code here` then\n\n$$\na + b\n$$\n") == 10
    assert words("Pick (a) <!--not: the other form of (a)--> or $0.6$<!--v:mean-->.") == 5  # 0 and 6
    assert words(r"$p(x \mid y)$, don't") == 4 + 2
    # A reader of the source meets a directive's name and options and a link's target too.
    assert words(":::{note} A title\n:class: dropdown\n\nA [link](https://x.org/a-b).\n:::") == 3 + 2 + 7
    assert words("See [the Gaussian](02.01-The-Gaussian.ipynb) (twice) and (f(x)).") == 3 + 4 + 5
    assert words("```python\nx = 1\n```") == 3


@pytest.mark.parametrize(
    "text, shown, folded",
    [
        ("Seen here.\n\n" + FOLD + "\n\nSeen again.", 2 + 4 + 2, 2 + 3),  # a closed fold's title shows
        (":::{note}\nAn open note.\n:::", 1 + 3, 0),  # an admonition without the class stays open
        (":::{solution} cyu-a\n:class: dropdown\nFolded answer.\n:::\nAfter.", 3 + 1, 2 + 2),
        (":::{dropdown} A title\nHidden.\n:::", 3, 1),
        ("::::{admonition} Outer\n:class: dropdown\n:::{note} In\nInner words.\n:::\nStill folded.\n::::\nOut.", 3, 8),
        ("<details><summary>More</summary>\n\nFolded here.\n\n</details>\n\nShown.", 1, 2 + 2 + 2 + 1),
        ("```python\n:::{note}\n```\nShown words.", 4, 0),  # a fence inside code is code
        (":::{note}\n:class: tip\nOpen.\n:::", 4, 0),
    ],
)
def test_a_fold_is_a_dropdown_directive_or_details(text, shown, folded):
    visible, hidden = split_folds(text)
    assert (words(visible), words(hidden)) == (shown, folded), split_folds(text)


def test_a_notebook_counts_markdown_only_and_a_hidden_cell_is_folded():
    nb = nbformat.v4.new_notebook()
    hidden = nbformat.v4.new_markdown_cell("All of these four.")
    hidden.metadata["tags"] = ["hide-cell"]
    nb.cells = [
        nbformat.v4.new_markdown_cell("Seen here.\n\n" + FOLD),
        hidden,
        nbformat.v4.new_code_cell("not counted at all"),
    ]
    assert visible_words(nb) == (2 + 4, 5 + 4)


def test_the_table_names_a_chapter_over_the_limit(tmp_path, capsys):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("word " * 3001)]
    path = tmp_path / "long.ipynb"
    nbformat.write(nb, path)
    main([str(path)])
    assert "| long | 3,001 (over) | 0 |" in capsys.readouterr().out


def test_every_chapter_s_main_line_is_short_and_its_sources_box_folded():
    rows, median = table(master_notebooks())
    assert len(rows) == 17
    over = [(name, visible) for name, visible, _ in rows if visible > MAX_VISIBLE]
    assert not over, f"chapters with more than {MAX_VISIBLE:,} visible words: {over}"
    assert median <= MAX_MEDIAN_VISIBLE, f"median visible words {median:,.0f}"
    for master in master_notebooks():
        cells = [c.source for c in nbformat.read(master, as_version=4).cells if c.cell_type == "markdown"]
        boxes = [box for text in cells for box in SOURCES_BOX.finditer(text)]
        assert boxes, f"{master.name}: no 'About the sources' box"
        assert all("dropdown" in box["options"] for box in boxes), f"{master.name}: the sources box is not folded"
        for text in cells:  # nothing of the box shows but its title
            shown = [line for line in split_folds(text)[0].splitlines() if "About the sources" in line]
            assert all(SOURCES_BOX.match(line + "\n") for line in shown), (master.name, shown)
