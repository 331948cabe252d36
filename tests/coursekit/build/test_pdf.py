"""The whole course as one PDF (``make pdf``, coursekit/build/pdf.py), printed from the book the suite builds.

Printing the whole course takes minutes and only a release needs it: the tests of the PDF itself are
marked ``release`` and run by ``make check-release``, not by ``make test``.

The single-page build reuses the website's execution cache and Sphinx environment, so no notebook runs
again; Chromium prints it as ``make pdf`` does. The PDF must hold every page of ``_toc.yml`` in order,
with its title, as a bookmark at the page where it starts; its math typeset (no TeX left in the text);
every figure of the book; and every fold printed open (its text, and the code of the cells the website
hides behind a toggle, in the PDF).
"""

from __future__ import annotations

import re
import time
import unicodedata

import nbformat
import pytest
import yaml

from conftest import ROOT
from coursekit.reading import split_folds
from test_browser import chromium  # noqa: F401  (the fixture: skips, or fails in CI, without Chromium)

pytestmark = pytest.mark.slow

# TeX that MathJax should have turned into typeset math. (Code cells may hold TeX of their own, for
# Matplotlib's labels, such as r"$\hat\theta$": the test does not look for single commands.)
RAW_TEX = re.compile(r"\\frac|\$\$|\\begin\{|\\end\{")


def plain(text: str) -> str:
    """Text with single spaces (no-break ones too), one kind of quote and no ligatures."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'").replace("\u2018", "'")
    return " ".join(text.split())


def squashed(text: str) -> str:
    """Text with no white space and no hyphens: in a PDF's text a line may wrap anywhere, and where it
    wraps after a hyphen ("semi-" / "definite") pdfium gives the hyphen as the control character \\x02."""
    return plain(text).replace(" ", "").replace("-", "").replace("\x02", "")


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    return [toc["root"]] + [chapter["file"] for part in toc["parts"] for chapter in part["chapters"]]


def page_title(file: str) -> str:
    """The first level-1 heading of a page of the book (a Markdown file or a master notebook)."""
    path = ROOT / f"{file}.ipynb"
    if path.exists():
        lines = [
            line
            for cell in nbformat.read(path, as_version=4).cells
            if cell.cell_type == "markdown"
            for line in cell.source.splitlines()
        ]
    else:
        lines = (ROOT / f"{file}.md").read_text().splitlines()
    title = next(line[2:].strip() for line in lines if line.startswith("# "))
    return re.sub(r"\$([^$]*)\$", r"\1", title)  # inline math in a title prints as its symbols


@pytest.fixture(scope="module")
def course_pdf(chromium, built_book, tmp_path_factory):  # noqa: F811  (chromium is the fixture)
    from coursekit.build import pdf

    out = tmp_path_factory.mktemp("pdf") / pdf.PDF_NAME
    started = time.perf_counter()
    page = pdf.build_singlehtml(built_book / "source", built_book.parent)
    built = time.perf_counter()
    pdf.print_pdf(page, out, chromium)
    print(f"\nPDF: single-page build {built - started:.0f} s, printing {time.perf_counter() - built:.0f} s")
    return out, page


@pytest.fixture(scope="module")
def document(course_pdf):
    import pypdfium2

    pdf = pypdfium2.PdfDocument(course_pdf[0])
    yield pdf
    pdf.close()


@pytest.fixture(scope="module")
def text(document) -> list[str]:
    """The text of every page."""
    return [document[i].get_textpage().get_text_bounded() for i in range(len(document))]


@pytest.mark.release
def test_every_page_of_the_book_is_in_the_pdf_in_order(text):
    whole, position = squashed("\n".join(text)), 0
    for file in toc_files():
        title = squashed(page_title(file))
        found = whole.find(title, position)
        assert found >= 0, f"{file}: its title {page_title(file)!r} is not in the PDF" + (
            " after the previous page's" if title in whole else ""
        )
        position = found + len(title)
    assert len(text) > 10 * len(toc_files()), f"{len(text)} pages for {len(toc_files())} pages of the book"


# A line of plain prose (no math, code, markup or emphasis), long enough to be found once.
PLAIN_LINE = re.compile(r"^[A-Z][A-Za-z ,;'’.()-]{40,}$")


@pytest.mark.release
def test_every_fold_is_printed_open(text):
    whole, looked, missing = squashed("\n".join(text)), 0, []
    for file in toc_files():
        path = ROOT / f"{file}.ipynb"
        if not path.exists():
            continue
        cells = nbformat.read(path, as_version=4).cells
        for cell in cells:
            if cell.cell_type != "markdown":
                continue
            lines = [line for line in split_folds(cell.source)[1].splitlines() if PLAIN_LINE.match(line)]
            if lines:
                looked += 1
                if squashed(lines[0]) not in whole:
                    missing.append(f"{file}: {lines[0][:80]}")
        hidden = [  # the code of a cell whose source the website hides behind a toggle
            line
            for cell in cells
            if cell.cell_type == "code" and {"hide-input", "hide-cell"} & set(cell.metadata.get("tags", []))
            for line in cell.source.splitlines()[:1]
            if re.fullmatch(r"[A-Za-z_][\w .,=()\[\]-]{20,}", line)
        ]
        if hidden:
            looked += 1
            if squashed(hidden[0]) not in whole:
                missing.append(f"{file} (hidden code): {hidden[0][:80]}")
    assert looked >= 34, f"only {looked} folds and hidden cells have a plain line to look for"
    assert not missing, "folded text or hidden code not in the PDF:\n" + "\n".join(missing)


@pytest.mark.release
def test_every_page_has_a_bookmark_at_its_first_page(document, text):
    """Bookmarks titled as the headings, spaces and all, each pointing at the page where its page begins."""
    bookmarks = [(plain(b.get_title()), b.get_dest().get_index()) for b in document.get_toc() if b.get_dest()]
    doubled = [name for name, _ in bookmarks if re.fullmatch(r"(.+)\1", name)]
    assert not doubled, f"bookmarks whose title is written twice: {doubled}"
    starts = []
    for file in toc_files():
        title = plain(page_title(file))
        found = [page for name, page in bookmarks if name == title]
        assert found, f"no bookmark {title!r} ({file}); bookmarks: {[name for name, _ in bookmarks][:30]}"
        page = found[0]
        assert squashed(title) in squashed(text[page]), f"the bookmark {title!r} points at page {page + 1}"
        starts.append(page)
    assert starts == sorted(starts), f"the bookmarks of the book's pages are out of order: pages {starts}"


@pytest.mark.release
def test_the_math_is_typeset(text):
    whole = "\n".join(text)
    raw = [whole[max(0, m.start() - 60) : m.end() + 60].replace("\n", " ") for m in RAW_TEX.finditer(whole)]
    assert not raw, f"{len(raw)} pieces of raw TeX in the PDF, e.g. {raw[:5]}"
    # MathJax draws \mid as U+2223, as in p(x | y) on the first page: typeset math is in the text.
    assert "\u2223" in whole, "no typeset formula in the PDF's text"


@pytest.mark.release
def test_every_figure_is_in_the_pdf(document, course_pdf):
    import pypdfium2.raw

    figures = len(re.findall(r'<img [^>]*src="_images/', course_pdf[1].read_text(encoding="utf-8")))
    images = sum(
        1
        for i in range(len(document))
        for _ in document[i].get_objects(filter=[pypdfium2.raw.FPDF_PAGEOBJ_IMAGE], max_depth=3)
    )
    assert figures > 0 and images >= figures, f"{images} images in the PDF for the book's {figures} figures"


def test_a_bookmark_written_twice_is_written_once_and_nothing_moves(tmp_path):
    from coursekit.build import pdf

    original = (
        b"1 0 obj\n<</Title (SummarySummary)\n/Parent 2 0 R>>\nendobj\n"
        b"3 0 obj\n<</Title <FEFF004100A000420041 00A00042>/Parent 2 0 R>>\nendobj\n"
        b"4 0 obj\n<</Title <FEFF004100A00042004200A000A000430043>/Parent 2 0 R>>\nendobj\n"
        b"5 0 obj\n<</Title (Bora\\) Bora\\))/Parent 2 0 R>>\nendobj\n"
        b"6 0 obj\n<</Title (Exercises)/Parent 2 0 R>>\nendobj\n"
        b"7 0 obj\n<</Title <FEFF0041004100A000A00042002100A00043>/Parent 2 0 R>>\nendobj\n"
        b"8 0 obj\n<</Title <FEFF0041004100A000A00042002100420021>/Parent 2 0 R>>\nendobj\n"
        b"9 0 obj\n<</Title <FEFF0041004200A000A00043>/Parent 2 0 R>>\nendobj\n"
    )
    path = tmp_path / "outline.pdf"
    path.write_bytes(original)
    assert pdf.undouble_bookmarks(path) == 4
    fixed = path.read_bytes()
    assert len(fixed) == len(original)
    assert b"/Title (Summary)       \n/Parent" in fixed
    assert b"/Title <FEFF004100A0004200A00043>" in fixed  # "A BB  CC": the second line twice
    assert b"(Bora\\) Bora\\))" in fixed and b"(Exercises)" in fixed  # not doubled: untouched
    assert b"<FEFF0041004200A000A00043>" in fixed  # "AB  C": "AB" is not a word written twice
    assert b"<FEFF004100A00042002100A00043>" in fixed  # "AA  B! C": only the first line twice
    assert b"<FEFF004100A000420021>" in fixed  # "AA  B!B!": a line written twice
    assert fixed.replace(b" ", b"") == original.replace(b"SummarySummary", b"Summary").replace(
        b"<FEFF004100A00042004200A000A000430043>", b"<FEFF004100A0004200A00043>"
    ).replace(b"<FEFF0041004100A000A00042002100A00043>", b"<FEFF004100A00042002100A00043>").replace(
        b"<FEFF0041004100A000A00042002100420021>", b"<FEFF004100A000420021>"
    ).replace(b" ", b"")


def test_make_book_without_chromium_says_so_and_builds_the_website_alone(monkeypatch, capsys):
    # `make book` runs `python -m coursekit pdf --if-chromium`: without Chromium it warns and prints nothing.
    from coursekit.build import pdf

    monkeypatch.setattr(pdf, "chromium_executable", lambda: None)
    monkeypatch.setattr(pdf, "build_pdf", lambda *args: pytest.fail("printed without Chromium"))
    pdf.main(["--if-chromium"])
    captured = capsys.readouterr()
    assert "no Chromium found" in captured.out + captured.err
