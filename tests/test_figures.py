"""Every figure of the course has a text alternative that says what it shows.

myst-nb takes a figure's alt text from the metadata of the cell that draws it
(``"mystnb": {"image": {"alt": ...}}``) and, where the prose refers to the figure, its caption and
label from ``"mystnb": {"figure": {"caption": ..., "name": ...}}``. Without an alt text the HTML
gets the image's file name (``alt="../_images/e768e6....png"``), which a screen reader reads out.

How myst-nb 1.4 uses the metadata (``myst_nb/core/render.py``): the ``image`` options go to every
image output of the cell, so a cell that draws two figures would give both the same description;
the ``figure`` options wrap every display output of the cell (an image, but also a table or a
returned value) in a figure with that caption and label. Hence the rules checked here: one image
per cell, and a caption only on a cell whose one display output is its image.

The masters in ``notebooks/`` are checked directly (their stored outputs show which cells draw a
figure); the built website, when there is one, is checked for alt texts that are file names.
"""

from __future__ import annotations

import os
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
IMAGE_TYPES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")
MIN_WORDS = 12

# A file name or a path (what myst-nb writes without metadata), or a long hexadecimal hash.
FILE_LIKE = re.compile(r"\.(png|jpe?g|gif|svg|webp|pdf)\b|_images/|(^|\s)\.{0,2}/\S|[0-9a-f]{16,}", flags=re.IGNORECASE)


def image_outputs(cell) -> list[dict]:
    return [
        output
        for output in cell.get("outputs", [])
        if output.get("output_type") in ("display_data", "execute_result")
        and any(kind in output.get("data", {}) for kind in IMAGE_TYPES)
    ]


def problems_of_cell(cell) -> list[str]:
    """What is wrong with the text alternative of one code cell that draws a figure (empty: nothing)."""
    images = image_outputs(cell)
    if not images:
        return []
    mystnb = cell.metadata.get("mystnb") or {}
    alt = str((mystnb.get("image") or {}).get("alt") or "").strip()
    problems = []
    if len(images) > 1:
        problems.append(
            f"draws {len(images)} figures, which myst-nb would give one alt text: split the cell, one figure each"
        )
    if not alt:
        problems.append('has no alt text: add "mystnb": {"image": {"alt": "..."}} to its metadata')
    elif FILE_LIKE.search(alt):
        problems.append(f"has an alt text that looks like a file name or a hash: {alt!r}")
    elif len(alt.split()) < MIN_WORDS:
        problems.append(
            f"has an alt text of {len(alt.split())} words ({alt!r}): say what is plotted "
            f"against what and what the reader should see, in at least {MIN_WORDS} words"
        )
    figure = mystnb.get("figure")
    if figure is not None:
        displays = [
            output
            for output in cell.get("outputs", [])
            if output.get("output_type") in ("display_data", "execute_result")
        ]
        if not str(figure.get("caption") or "").strip():
            problems.append("has figure options without a caption")
        if len(displays) != len(images):
            problems.append(
                "has a caption but also a non-image display output, which myst-nb would "
                "wrap in the same figure: print it instead, or move it to another cell"
            )
    return problems


def problems_of_notebook(nb) -> dict[int, list[str]]:
    found = {}
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (problems := problems_of_cell(cell)):
            found[index] = problems
    return found


def describe(found: dict[int, list[str]]) -> str:
    return "\n".join(f"  cell {index} {problem}" for index, problems in found.items() for problem in problems)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_every_figure_of_the_notebook_has_a_real_alt_text(path):
    nb = nbformat.read(path, as_version=4)
    found = problems_of_notebook(nb)
    assert not found, f"{path.name}:\n{describe(found)}"


def test_figure_names_are_unique_across_the_course():
    """A figure's ``name`` is a label for {numref}/{ref}: two figures with one name break the links."""
    seen: dict[str, str] = {}
    duplicates = []
    for path in NOTEBOOKS:
        for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
            name = ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name")
            if name:
                if name in seen:
                    duplicates.append(f"{name}: {seen[name]} and {path.name} cell {index}")
                seen[name] = f"{path.name} cell {index}"
    assert not duplicates, "figure names used twice:\n" + "\n".join(duplicates)


def test_every_notebook_that_draws_sets_the_course_style_first():
    """The colour-blind-safe palette is set once, by use_course_style() in the notebook's first code
    cell (instructor-guide.md); a notebook that sets its own colours instead drifts from it."""
    drifting = []
    for path in NOTEBOOKS:
        cells = [cell for cell in nbformat.read(path, as_version=4).cells if cell.cell_type == "code"]
        draws = any(image_outputs(cell) for cell in cells)
        if draws and not re.search(r"^use_course_style\(\)", cells[0].source, re.MULTILINE):
            drifting.append(path.name)
    assert not drifting, "figures drawn without use_course_style() in the first code cell: " + ", ".join(drifting)


def test_the_course_has_figures_to_check():
    assert (
        sum(
            len(image_outputs(cell))
            for path in NOTEBOOKS
            for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "code"
        )
        >= 40
    )


# --------------------------------------------------------------------------- the check can fail


def figure_cell(alt=None, *, outputs=None, figure=None):
    cell = nbformat.v4.new_code_cell("plt.plot([1, 2]); plt.show()")
    cell.outputs = (
        outputs
        if outputs is not None
        else [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"})]
    )
    mystnb = {}
    if alt is not None:
        mystnb["image"] = {"alt": alt}
    if figure is not None:
        mystnb["figure"] = figure
    if mystnb:
        cell.metadata["mystnb"] = mystnb
    return cell


GOOD = (
    "Test error against the number of training examples for GDA and logistic regression: "
    "GDA is lower below 100 examples, the two meet beyond 1,000."
)


@pytest.mark.parametrize(
    "alt, expected",
    [
        (None, "no alt text"),
        ("", "no alt text"),
        ("../_images/e768e6a1b2c3d4e5f60718293a4b5c6d.png", "file name or a hash"),
        ("figure_3.png", "file name or a hash"),
        ("e768e6a1b2c3d4e5f60718293a4b5c6d7e8f", "file name or a hash"),
        ("A plot of the error.", "words"),
    ],
)
def test_a_missing_or_meaningless_alt_text_is_reported(alt, expected):
    problems = problems_of_cell(figure_cell(alt))
    assert len(problems) == 1 and expected in problems[0]


def test_a_descriptive_alt_text_passes_and_cells_without_figures_are_not_checked():
    assert problems_of_cell(figure_cell(GOOD)) == []
    assert problems_of_cell(figure_cell(None, outputs=[nbformat.v4.new_output("stream", text="0.93\n")])) == []


def test_two_figures_in_one_cell_and_a_caption_over_a_table_are_reported():
    image = nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo="})
    table = nbformat.v4.new_output("execute_result", data={"text/html": "<table></table>"}, execution_count=1)
    assert any("split the cell" in p for p in problems_of_cell(figure_cell(GOOD, outputs=[image, image])))
    captioned = figure_cell(GOOD, outputs=[image, table], figure={"caption": "The errors.", "name": "errors"})
    assert any("non-image display output" in p for p in problems_of_cell(captioned))
    assert problems_of_cell(figure_cell(GOOD, outputs=[image], figure={"caption": "The errors."})) == []


def test_a_notebook_stripped_of_its_metadata_fails(tmp_path):
    """The real check on a copy of a real notebook without any cell metadata: every figure is reported."""
    path = next(p for p in NOTEBOOKS if p.name.startswith("02.02"))
    nb = nbformat.read(path, as_version=4)
    n_figures = sum(bool(image_outputs(cell)) for cell in nb.cells if cell.cell_type == "code")
    for cell in nb.cells:
        cell.metadata.pop("mystnb", None)
    copy = tmp_path / path.name
    nbformat.write(nb, copy)
    found = problems_of_notebook(nbformat.read(copy, as_version=4))
    assert n_figures > 0 and len(found) == n_figures


# --------------------------------------------------------------------------- the built website


class Images(HTMLParser):
    def __init__(self):
        super().__init__()
        self.alts: list[tuple[str, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            attributes = dict(attrs)
            self.alts.append((attributes.get("src") or "", (attributes.get("alt") or "").strip()))


def file_like_alts(html_root: Path) -> list[str]:
    found = []
    for page in sorted(html_root.rglob("*.html")):
        parser = Images()
        parser.feed(page.read_text(encoding="utf-8"))
        found += [
            f"{page.relative_to(html_root)}: {src} has alt {alt!r}"
            for src, alt in parser.alts
            if FILE_LIKE.search(alt) or ("_images/" in src and not alt)
        ]
    return found


@pytest.fixture(scope="module")
def built_html(request, tmp_path_factory) -> Path:
    """The website of this test session if one is being built (``make test``), else ``_build/html``."""
    shared = tmp_path_factory.getbasetemp().parent
    if "PYTEST_XDIST_WORKER" in os.environ and (shared / "prebuild.log").exists():
        return request.getfixturevalue("built_book") / "html"  # waits for the session's build
    html = ROOT / "_build" / "html"
    if not (html / "index.html").exists():
        pytest.skip("no built website: run `make book` (or the whole suite) to check its images")
    return html


def test_the_built_website_has_no_image_whose_alt_is_a_file_name(built_html):
    found = file_like_alts(built_html)
    assert not found, "images whose text alternative is a file name:\n" + "\n".join(found)


def test_the_website_check_can_fail(tmp_path):
    (tmp_path / "page.html").write_text(
        '<p><img alt="../_images/e768e6a1b2c3d4e5f607.png" src="../_images/e768e6a1b2c3d4e5f607.png">'
        f'<img alt="{GOOD}" src="../_images/ok.png"><img src="_static/logo.svg" alt="Course logo"></p>'
    )
    found = file_like_alts(tmp_path)
    assert len(found) == 1 and "e768e6" in found[0]
