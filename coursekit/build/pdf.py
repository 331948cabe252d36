"""The whole course as one PDF (``make pdf``, ``python -m coursekit pdf``).

Sphinx's single-page HTML builder, through Jupyter Book and from the same staged sources as the website
(student notebooks only), writes every page of the book into one HTML file in the order of ``_toc.yml``.
The notebooks are not executed again when ``make book`` ran first: the single-page build uses the
website's execution cache and its Sphinx environment in ``_build``. Headless Chromium (Debian's, the one
the browser tests drive) then loads that page from a server on 127.0.0.1, waits for the MathJax that the
site serves itself to typeset every formula and for every figure to decode, and prints it through
Playwright's ``page.pdf``: A4, page numbers in the footer, bookmarks made from the headings (Chromium's
document outline) and a tagged PDF, whose structure a screen reader can follow.

``make book`` builds the website and then, where Chromium is installed, the PDF (``--if-chromium``:
without Chromium it says so and stops, leaving the website's link to the PDF dead); ``make pdf`` does
the same but fails without Chromium. The PDF is written to
``_build/pdf/generative-learning-algorithms.pdf`` and copied into ``_build/html`` beside
``intro.html``, whose introduction links to it.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import re
import shutil
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from coursekit.repository import BOOK_SOURCE, BUILD, ROOT, run, tool

PDF_NAME = "generative-learning-algorithms.pdf"
PDF = BUILD / "pdf" / PDF_NAME
TIMEOUT_MS = 300_000  # the whole course is one page: MathJax typesets a few thousand formulas

# Every image decoded (lazy ones too), then the fonts; the page is ready to print.
SETTLE_JS = """async () => {
  const images = Array.from(document.images);
  images.forEach(img => { img.loading = 'eager'; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  await document.fonts.ready;
  return images.filter(img => img.naturalWidth === 0).map(img => img.currentSrc || img.src);
}"""
# Sphinx marks math with class "math"; MathJax puts an mjx-container into each one it typesets.
UNTYPESET_JS = """() => Array.from(document.querySelectorAll('.math'))
  .filter(el => !el.closest('pre, code') && !el.querySelector('mjx-container'))
  .map(el => el.textContent.trim().slice(0, 80))"""
# For paper: no theme chrome, every folded block (solutions, hidden code) open, code at 10.5px (an
# 88-column line, as ruff formats the notebooks, fits the A4 column's 605 pixels unwrapped), and no
# figure or code block split between two pages where it can be helped.
PRINT_CSS = """
.bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-header-article, .bd-footer,
.bd-footer-article, .prev-next-area, .headerlink, .copybtn, #pst-back-to-top, .skip-link { display: none !important; }
.bd-main .bd-content .bd-article-container { max-width: 100% !important; }
details { display: block; }
details > summary { display: none; }
.toggle-hidden, .toggle-details__container, details > * { display: block !important; visibility: visible !important; }
pre { white-space: pre-wrap !important; overflow-wrap: anywhere; overflow: visible !important; }
.cell_input pre, .highlight-python pre { font-size: 10.5px !important; }
figure, img, .cell_input, .cell_output, mjx-container[display="true"] { break-inside: avoid; }
h1, h2, h3 { break-after: avoid; }
span[id^="document-"] + section { break-before: page; }
"""
# Every <details> (a hidden code cell's toggle) opened, its summary ("Show code cell source") hidden, not
# removed (without one Chromium draws its own, "Details"): Chromium does not lay out the content of a closed
# <details>, whatever the style says.
OPEN_DETAILS_JS = """() => document.querySelectorAll('details').forEach(d => {
  d.open = true;
  d.querySelectorAll(':scope > summary').forEach(s => s.style.setProperty('display', 'none', 'important'));
})"""
# MathJax's assistive MathML: a hidden copy of every formula for screen readers of the web page. Printed,
# it only doubles the page's elements (and the time Chromium takes to tag them, 100 s against 45 s).
DROP_ASSISTIVE_MML_JS = "() => document.querySelectorAll('mjx-assistive-mml').forEach(el => el.remove())"
# Chromium titles each bookmark with its heading's text but drops the space where the heading wraps
# onto another line ("maximumlikelihood"). A no-break space followed by a line-break opportunity
# (<wbr>) wraps the same and survives.
KEEP_HEADING_SPACES_JS = r"""() => {
  for (const heading of document.querySelectorAll('h1, h2, h3, h4, h5, h6')) {
    const walker = document.createTreeWalker(heading, NodeFilter.SHOW_TEXT);
    const texts = [];
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement.closest('mjx-container')) texts.push(node);
    }
    for (const node of texts) {
      const words = node.textContent.split(/ +/), spaced = document.createDocumentFragment();
      words.forEach((word, i) => {
        if (i) spaced.append('\u00a0', document.createElement('wbr'));
        spaced.append(word);
      });
      node.replaceWith(spaced);
    }
  }
}"""
FOOTER = (
    '<div style="width: 100%; font-size: 9px; color: #333; text-align: center;">'
    '<span class="title"></span> &middot; <span class="pageNumber"></span> / <span class="totalPages"></span>'
    "</div>"
)


def log(message: str) -> None:
    print(f"[pdf] {message}", flush=True)


def chromium_executable() -> str | None:
    """Debian's Chromium (``CHROMIUM_PATH`` if set), or None: Playwright never downloads one here."""
    path = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
    return path if Path(path).is_file() and os.access(path, os.X_OK) else None


def build_singlehtml(source: Path, output_root: Path) -> Path:
    """Jupyter Book's single-page build of the staged ``source`` into ``output_root/_build/singlehtml``.

    Strict like the website's build, and it shares the website's execution cache and Sphinx
    environment in ``output_root/_build``, so notebooks the website executed are not executed again.
    """
    run(
        [
            tool("jupyter-book"),
            "build",
            source,
            "--path-output",
            output_root,
            "--builder",
            "singlehtml",
            "-W",
            "-n",
            "--keep-going",
        ]
    )
    page = output_root / "_build" / "singlehtml" / "intro.html"
    if not page.exists():
        raise SystemExit(f"the single-page build finished but {page} is missing")
    return page


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@contextmanager
def served(folder: Path):
    """``folder`` over http on 127.0.0.1 at a free port; yields its base URL."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(QuietHandler, directory=folder))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def print_pdf(page_html: Path, pdf: Path, chromium: str | None = None) -> Path:
    """Print the single-page book ``page_html`` to ``pdf`` with headless Chromium, math and figures done.

    Raises SystemExit when Chromium or Playwright is missing, a figure does not load, or a formula is
    left untypeset.
    """
    chromium = chromium or chromium_executable()
    if chromium is None:
        raise SystemExit(
            "printing the PDF needs Chromium: `apt-get install chromium` (Debian, Ubuntu) "
            "or set CHROMIUM_PATH; never `playwright install`"
        )
    from playwright.sync_api import sync_playwright

    pdf.parent.mkdir(parents=True, exist_ok=True)
    with served(page_html.parent) as base, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True)
        try:
            context = browser.new_context(service_workers="block")
            context.set_default_timeout(TIMEOUT_MS)
            # Offline like the website: nothing but the local server is asked for anything.
            context.route(
                "**/*",
                lambda route: (
                    route.continue_() if route.request.url.startswith(base) else route.abort("blockedbyclient")
                ),
            )
            page = context.new_page()
            page.goto(base + page_html.name, wait_until="load")
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.evaluate("() => MathJax.startup.promise.then(() => true)")
            broken = page.evaluate(SETTLE_JS)
            untypeset = page.evaluate(UNTYPESET_JS)
            if broken or untypeset:
                raise SystemExit(
                    f"not printing {page_html}: images that did not load {broken[:5]}, "
                    f"formulas MathJax did not typeset {untypeset[:5]}"
                )
            page.add_style_tag(content=PRINT_CSS)
            page.evaluate(OPEN_DETAILS_JS)
            page.evaluate(DROP_ASSISTIVE_MML_JS)
            page.evaluate(KEEP_HEADING_SPACES_JS)
            page.pdf(
                path=pdf,
                format="A4",
                print_background=True,
                outline=True,
                tagged=True,
                display_header_footer=True,
                header_template="<span></span>",
                footer_template=FOOTER,
                margin={"top": "18mm", "bottom": "18mm", "left": "16mm", "right": "16mm"},
            )
        finally:
            browser.close()
    undouble_bookmarks(pdf)
    return pdf


# A bookmark's title in Chromium's PDF: a literal string, or UTF-16 in hexadecimal after a byte order mark.
TITLE = re.compile(rb"/Title (\((?:[^()\\]|\\.)*\)|<FEFF[0-9A-Fa-f]*>)")


def written_once(title: str) -> str | None:
    """``title`` as it reads when Chromium wrote some of its lines twice, or None if it did not.

    A heading is printed as words joined by no-break spaces (KEEP_HEADING_SPACES_JS). In a line that
    Chromium writes twice every word and the space after it come twice: "The\u00a0covariance ... the\u00a0
    proof,proof,\u00a0\u00a0slightlyslightly" for a heading whose second line is "proof, slightly", and
    "ConditionalConditional\u00a0\u00a0independenceindependence\u00a0\u00a0...\u00a0parameter\u00a0count"
    when it is the first. A word followed by two spaces is written twice, as is the last word after
    one that was; a heading of one word may be too ("SummarySummary").
    """
    parts = re.split("(\u00a0+)", title)
    words, gaps = parts[0::2], parts[1::2]
    if any(gap not in ("\u00a0", "\u00a0\u00a0") for gap in gaps):
        return None
    once = []
    for i, word in enumerate(words):
        half = word[: len(word) // 2]
        doubled = bool(word) and word == half * 2
        if i < len(gaps) and gaps[i] == "\u00a0\u00a0":  # a word of a line written twice
            if not doubled:
                return None
            word = half
        elif i == len(gaps) and doubled and (not gaps or gaps[-1] == "\u00a0\u00a0"):
            word = half  # the last word, on a line written twice
        once += [word, "\u00a0"] if i < len(gaps) else [word]
    return "".join(once) if "".join(once) != title else None


def undouble_bookmarks(pdf: Path) -> int:
    """Write once the bookmark titles that Chromium wrote twice; returns how many it rewrote.

    Chromium's outline sometimes repeats a line of a heading ("SummarySummary"), which headings and
    lines depending on the layout, with or without the print style. Each such title is shortened in place and
    padded with spaces (white space, which a PDF dictionary ignores), so that no object moves and the
    cross-reference table stays right.
    """
    data, fixed = bytearray(pdf.read_bytes()), 0
    for match in TITLE.finditer(bytes(data)):
        title = match.group(1)
        if title.startswith(b"<") and len(title) % 4 == 2:  # "<FEFF", four digits a character, ">"
            once = written_once(bytes.fromhex(title[5:-1].decode()).decode("utf-16-be", errors="replace"))
            shorter = once and b"<FEFF" + once.encode("utf-16-be").hex().upper().encode() + b">"
        elif title.startswith(b"(") and b"\\" not in title:  # no escapes: plain ASCII
            once = written_once(title[1:-1].decode("latin-1"))
            shorter = once and b"(" + once.encode("latin-1") + b")"
        else:
            shorter = None
        if shorter:
            data[match.start(1) : match.end(1)] = shorter + b" " * (len(title) - len(shorter))
            fixed += 1
    if fixed:
        pdf.write_bytes(bytes(data))
    return fixed


def build_pdf(source: Path, output_root: Path, pdf: Path) -> Path:
    """The single-page build of the staged ``source``, printed to ``pdf``."""
    return print_pdf(build_singlehtml(source, output_root), pdf)


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``make pdf``: after ``make book``, print its staged sources into the PDF and beside the website."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PDF, help=f"the PDF to write (default: {PDF})")
    parser.add_argument(
        "--if-chromium",
        action="store_true",
        help="without Chromium, say so and stop without an error (what `make book` asks)",
    )
    args = parser.parse_args(argv)
    if args.if_chromium and chromium_executable() is None:
        log(
            "no Chromium found, so no PDF: the website's link to it stays dead until you install "
            "Debian's chromium (apt-get install chromium) and run `make pdf`"
        )
        return
    website = BUILD / "html"
    if not (BOOK_SOURCE / "_toc.yml").exists() or not (website / "intro.html").exists():
        raise SystemExit(f"no website in {website}: run `make book` first (`make pdf` does)")
    started = time.perf_counter()
    pdf = build_pdf(BOOK_SOURCE, ROOT, args.out)
    shutil.copy2(pdf, website / PDF_NAME)  # where the website's introduction links to it
    log(
        f"{pdf} written ({pdf.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.0f} s, "
        f"and copied to {website / PDF_NAME}"
    )


if __name__ == "__main__":
    main()
