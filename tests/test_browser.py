"""The website and a student notebook in a real browser: headless Chromium, driven by Playwright.

What a reader and a student see, checked the way they see it:

* every page of the built book, served over http from 127.0.0.1 with every other address blocked,
  loads with no console error, no failed request and no broken image, and its math is typeset by the
  MathJax that the site serves itself: no TeX is left showing;
* one screenshot of every chapter page, which must show a page rather than a blank or tiny image;
* every page meets WCAG 2.0 and 2.1 at levels A and AA as far as axe-core (pinned in package.json,
  injected into each page once it has settled) can tell (tests/test_accessibility.py: the keyboard,
  and the figures' text alternatives);
* the instructor's report (``make report``) of a simulated class: offline, WCAG 2.1 AA by axe-core,
  and on a phone's screen its tables scroll sideways inside the page rather than the page itself;
* JupyterLab on the student notebook of chapter 1.1: after Run All Cells the public check of question 1
  fails while the answer is blank, passes once a correct answer is typed in, and fails again when the
  answer is blanked.

The browser is Debian's Chromium (``apt-get install chromium``; set ``CHROMIUM_PATH`` if it lives
elsewhere). Playwright, pinned in requirements.txt, drives it and never downloads a browser of its own.
On a machine without them these tests skip and say how to enable them; in CI (the ``CI`` environment
variable is set, as .ci/run is run) they fail instead, and .ci/run installs Chromium.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import nbformat
import numpy as np
import pytest
import simulated_class

from conftest import ROOT
from coursekit import exercises
from coursekit.build.pdf import chromium_executable, served  # Debian\'s Chromium; a folder over http
from coursekit.grading import export
from coursekit.grading import item_analysis as analysis
from coursekit.grading import report as instructor_report
from coursekit.grading.gradebook import write_scores
from coursekit.notebooks import master_notebooks
from coursekit.repository import MASTERS

pytestmark = pytest.mark.slow

BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"
VIEWPORT = {"width": 1280, "height": 900}
TIMEOUT_MS = 60_000  # generous for any one wait: a page, MathJax, a cell, a check

# --------------------------------------------------------------------------- the browser


def playwright_pin() -> str:
    """``playwright==X`` as requirements.txt pins it (or constraints.txt freezes it)."""
    for name in ("requirements.txt", "constraints.txt"):
        for line in (ROOT / name).read_text().splitlines():
            if line.split("#")[0].strip().lower().startswith("playwright=="):
                return line.split("#")[0].strip()
    return "playwright"


@pytest.fixture(scope="session")
def chromium() -> str:
    """Path of the system's Chromium; skips (in CI, fails) with how to enable these tests.

    Session-scoped and requested first by every test here, so that a machine without a browser skips
    before the book is built.
    """
    missing = []
    executable = chromium_executable()
    if executable is None:
        where = (
            f"CHROMIUM_PATH={os.environ['CHROMIUM_PATH']} is not"
            if os.environ.get("CHROMIUM_PATH")
            else "no chromium on PATH, nor is /usr/bin/chromium"
        )
        missing.append(
            f"Chromium ({where} an executable): `apt-get install chromium` on Debian or Ubuntu, "
            "or set CHROMIUM_PATH to a Chromium executable"
        )
    if importlib.util.find_spec("playwright") is None:
        missing.append(f"Playwright: `pip install {playwright_pin()}` (`make setup` installs it)")
    if missing:
        message = (
            "the browser tests need "
            + "; and ".join(missing)
            + ". Never `playwright install`: the tests drive the system's Chromium."
        )
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests, but {message}", pytrace=False)
        pytest.skip(message)
    return executable


@pytest.fixture(scope="module")
def browser(chromium):
    """Headless Chromium for this module only (Playwright's event loop stops with the module)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=chromium, headless=True)
        yield instance
        instance.close()


def new_context(browser, outside: list[str]):
    """A fresh profile (a first-time visitor) in which every request off 127.0.0.1 is refused and noted."""
    context = browser.new_context(viewport=VIEWPORT, service_workers="block")
    context.set_default_timeout(TIMEOUT_MS)

    def only_local(route):
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort("blockedbyclient")

    context.route("**/*", only_local)
    return context


@pytest.fixture(scope="module")
def screenshots(request, tmp_path_factory):
    """Where the screenshots go: $SCREENSHOTS_DIR if set (to keep them), else a pytest temp folder.

    The folder is named on the terminal when the module is done, even under output capture.
    """
    folder = Path(os.environ.get("SCREENSHOTS_DIR") or tmp_path_factory.mktemp("screenshots")).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    yield folder
    line = f"browser tests: {len(list(folder.glob('*.png')))} screenshots in {folder}"
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    terminal = request.config.pluginmanager.get_plugin("terminalreporter")
    if capture and terminal:
        with capture.global_and_fixture_disabled():
            terminal.write_line("\n" + line)
    else:
        print(line)


# --------------------------------------------------------------------------- the website


@pytest.fixture(scope="module")
def site(chromium, built_book):
    """The built book served over http on 127.0.0.1 at a free port; yields its base URL."""
    with served(built_book / "html") as base:
        yield base


@dataclass
class Visit:
    """What one page showed a first-time visitor."""

    path: str  # relative to the site's root, as requested
    url: str = ""  # where the browser ended up (index.html redirects)
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    outside_requests: list[str] = field(default_factory=list)
    images: list[dict] = field(default_factory=list)
    math: dict = field(default_factory=dict)
    violations: list[dict] | None = None  # axe-core's, None when axe-core is not installed
    screenshot: Path | None = None
    cut_code: list[str] = field(default_factory=list)  # code lines behind a scroll bar, folds opened


def site_pages(html: Path) -> list[str]:
    """Every page of the site: its HTML files, less the theme's template fragments in _static."""
    return sorted(p.relative_to(html).as_posix() for p in html.rglob("*.html") if "_static" not in p.parts)


def is_chapter(path: str) -> bool:
    return path.startswith("notebooks/")


def redirect_target(page: Path) -> str | None:
    pattern = r'<meta http-equiv="refresh" content="\d+;\s*url=([^"]+)"'
    match = re.search(pattern, page.read_text(), flags=re.IGNORECASE)
    return match.group(1) if match else None


# Settle every image (lazy ones included) and report what it decoded to.
IMAGES_JS = """async () => {
  const images = Array.from(document.images);
  images.forEach(img => { img.loading = 'eager'; });
  await Promise.all(images.map(img => img.decode().catch(() => null)));
  return images.map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth}));
}"""

# Sphinx marks math with class "math"; MathJax puts an mjx-container inside each one it typesets.
# Visible text outside code, scripts and typeset math must hold no TeX delimiters or commands.
# (MathJax only looks inside class "math" and outputs here, so TeX anywhere else stays raw.)
MATH_JS = r"""() => {
  const math = Array.from(document.querySelectorAll('.math')).filter(el => !el.closest('pre, code'));
  const untypeset = math.filter(el => !el.querySelector('mjx-container'));
  // TeX that MathJax could not make sense of: an error box, or (its noundefined extension) an unknown
  // macro shown as red text.
  const errors = [];
  if (window.MathJax && MathJax.startup && MathJax.startup.document) {
    for (const item of MathJax.startup.document.math) {
      if (/<merror|<mtext mathcolor="red">\\/.test(MathJax.startup.toMML(item.root))) errors.push(item.math);
    }
  }
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const text = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent && !parent.closest(skip) && parent.checkVisibility()) text.push(node.textContent);
  }
  return {
    elements: math.length,
    containers: document.querySelectorAll('mjx-container').length,
    untypeset: untypeset.map(el => el.textContent.trim().slice(0, 80)),
    errors: errors,
    text: text.join('\n'),
  };
}"""
# Every fold (sphinx-togglebutton's) and hidden cell (a <details>) opened, the longest line of each code
# block (code cells, markdown's Python blocks) that does not fit its width: _ext/static/code.css sizes
# code for the 88 columns that ruff formats the notebooks to.
CUT_CODE_JS = r"""() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(el => el.classList.remove('toggle-hidden'));
  return Array.from(document.querySelectorAll('.cell_input pre, .highlight-python pre'))
    .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
    .map(pre => pre.textContent.split('\n').reduce((a, b) => (b.length > a.length ? b : a)));
}"""
RAW_TEX = re.compile(r"\$\$|\\\[|\\\]|\\\(|\\\)|\\begin\{|\\end\{|\\[A-Za-z]{2,}")

# axe-core from the npm package pinned in package.json (`npm ci`, which `make setup` runs, installs it),
# run with the rules of WCAG 2.0 and 2.1 at levels A and AA on the page as the reader sees it.
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
AXE_JS = r"""async (tags) => {
  const results = await axe.run(document, {runOnly: {type: 'tag', values: tags}, resultTypes: ['violations']});
  return results.violations.map(v => ({
    rule: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ') + ' (' + n.failureSummary.replace(/\s+/g, ' ').trim() + ')'),
  }));
}"""


def visit(browser, base: str, html: Path, path: str, screenshots: Path) -> Visit:
    seen = Visit(path)
    context = new_context(browser, seen.outside_requests)
    page = context.new_page()
    errors, failed = seen.console_errors, seen.failed_requests
    page.on("console", lambda m: errors.append(f"console.error: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error.message}"))
    page.on("requestfailed", lambda r: failed.append(f"{r.url} ({r.failure})"))
    page.on("response", lambda r: failed.append(f"{r.url} (HTTP {r.status})") if r.status >= 400 else None)
    try:
        page.goto(base + path, wait_until="load")
        if target := redirect_target(html / path):
            page.wait_for_url(urljoin(base + path, target))
            page.wait_for_load_state("load")
        seen.url = page.url
        if page.locator("script[src*='mathjax']").count():
            page.wait_for_function("() => window.MathJax && MathJax.startup && MathJax.startup.promise")
            page.evaluate("() => MathJax.startup.promise.then(() => true)")
        seen.images = page.evaluate(IMAGES_JS)
        seen.math = page.evaluate(MATH_JS)
        if AXE.is_file():
            page.add_script_tag(path=AXE)
            seen.violations = page.evaluate(AXE_JS, WCAG_AA)
        if is_chapter(path):
            seen.screenshot = screenshots / f"{Path(path).stem}.png"
            page.screenshot(path=seen.screenshot, full_page=True)
        seen.cut_code = page.evaluate(CUT_CODE_JS)
    finally:
        context.close()
    # A blocked request also fails; it is reported once, as a request off this machine.
    seen.failed_requests = [r for r in failed if not any(r.startswith(url) for url in seen.outside_requests)]
    return seen


@pytest.fixture(scope="module")
def visits(chromium, browser, site, built_book, screenshots) -> dict[str, Visit]:
    html = built_book / "html"
    started = time.perf_counter()
    pages = {path: visit(browser, site, html, path, screenshots) for path in site_pages(html)}
    print(f"\nvisited {len(pages)} pages in {time.perf_counter() - started:.1f} s")
    return pages


def report(problems: dict[str, list[str]]) -> str:
    return "\n".join(f"{path}:\n    " + "\n    ".join(found) for path, found in problems.items() if found)


def test_the_site_has_every_page(visits):
    assert {"index.html", "intro.html", "search.html", "genindex.html"} <= set(visits)
    chapters = {Path(p).stem for p in visits if is_chapter(p)}
    assert chapters == {master.stem for master in master_notebooks()}
    assert visits["index.html"].url.endswith("/intro.html"), "index.html should send the reader to intro.html"


def test_no_code_line_is_cut_off(visits):
    """At the tests' window width every line of code, folded or not, shows whole (no scroll bar)."""
    cut = {path: [f"longest line cut off: {line!r}" for line in seen.cut_code] for path, seen in visits.items()}
    assert not any(cut.values()), report(cut)


def test_every_page_loads_without_console_errors(visits):
    problems = {path: seen.console_errors for path, seen in visits.items()}
    assert not report(problems), "console errors:\n" + report(problems)


def test_the_site_works_offline(visits):
    """Nothing is fetched from anywhere but the site itself, and everything it asks for is there."""
    outside = {path: seen.outside_requests for path, seen in visits.items()}
    assert not report(outside), "requests off 127.0.0.1 (blocked):\n" + report(outside)
    failed = {path: seen.failed_requests for path, seen in visits.items()}
    assert not report(failed), "failed requests:\n" + report(failed)


def test_every_image_loads(visits):
    broken = {path: [img["src"] for img in seen.images if img["width"] == 0] for path, seen in visits.items()}
    assert not report(broken), "images that did not load:\n" + report(broken)
    for path, seen in visits.items():
        if is_chapter(path):  # the executed figures, besides the logo
            assert sum("_images/" in img["src"] for img in seen.images) >= 2, f"{path}: {seen.images}"


def test_math_is_typeset_and_no_tex_is_left_showing(visits):
    problems = {}
    for path, seen in visits.items():
        math = seen.math
        found = [f"not typeset: {text!r}" for text in math["untypeset"]]
        found += [f"MathJax error: {error!r}" for error in math["errors"]]
        for match in RAW_TEX.finditer(math["text"]):
            context = math["text"][max(0, match.start() - 60) : match.end() + 60].replace("\n", " ")
            found.append(f"raw TeX {match.group()!r} in: ...{context}...")
        problems[path] = found
    assert not report(problems), "math problems:\n" + report(problems)
    for path, seen in visits.items():
        if is_chapter(path) or path == "intro.html":
            assert seen.math["elements"] > 0 and seen.math["containers"] >= seen.math["elements"], (path, seen.math)


def test_every_page_meets_wcag_21_aa(visits):
    """axe-core finds no violation of a WCAG 2.0 or 2.1 rule of level A or AA on any page."""
    assert AXE.is_file(), f"axe-core is missing ({AXE}): run `npm ci` (`make setup` does)"
    problems, nodes = {}, Counter()
    for path, seen in visits.items():
        problems[path] = [
            f"{v['rule']} ({v['impact']}, {len(v['nodes'])} nodes): {v['help']}: " + "; ".join(v["nodes"][:3])
            for v in seen.violations
        ]
        nodes.update({v["rule"]: len(v["nodes"]) for v in seen.violations})
    summary = ", ".join(f"{rule}: {count} nodes" for rule, count in nodes.most_common())
    assert not report(problems), f"WCAG 2.1 AA violations ({summary}):\n" + report(problems)


def test_every_chapter_has_a_screenshot_that_shows_a_page(visits, screenshots):
    from PIL import Image

    chapters = {path: seen for path, seen in visits.items() if is_chapter(path)}
    assert chapters
    for path, seen in chapters.items():
        shot = seen.screenshot
        assert shot is not None and shot.parent == screenshots and shot.is_file(), (
            f"{path}: no screenshot in {screenshots}"
        )
        size = shot.stat().st_size
        assert 50_000 < size < 50_000_000, f"{shot}: {size} bytes is not the size of a chapter's screenshot"
        with Image.open(shot) as image:
            assert image.format == "PNG"
            assert image.width == VIEWPORT["width"] and image.height > 2 * VIEWPORT["height"], (shot, image.size)
            gray = np.asarray(image.convert("L"), dtype=float)
        ink = (gray < 200).mean()  # text, figures, code backgrounds: a chapter page is far from white
        assert 0.01 < ink < 0.6, f"{shot}: {ink:.1%} of the pixels are dark; the page looks blank or broken"
        assert gray.std() > 15, f"{shot}: almost uniform (standard deviation {gray.std():.1f})"
        rows = (gray < 200).any(axis=1)
        assert rows.mean() > 0.3, f"{shot}: only {rows.mean():.0%} of the rows hold anything"


# --------------------------------------------------------------------------- the instructor's report

PHONE = {"width": 375, "height": 812}


@pytest.fixture(scope="module")
def report_site(chromium, tmp_path_factory):
    """The report of a simulated class of 1.1 (tests/simulated_class.py; the grader's words made up from the
    catalogue, so that no notebook is graded), with an unconfined and an unreadable submission, served."""
    folder = tmp_path_factory.mktemp("report")
    master = MASTERS / f"{BAYES}.ipynb"
    possible = {q.name: q.points for q in exercises.questions(nbformat.read(master, as_version=4))}
    catalogue = instructor_report.catalogue(BAYES)
    pool = {q: simulated_class.wrong_indices(entries) for q, entries in catalogue.items()}
    named = {q: {i for i in pool[q] if catalogue[q][i].get("feedback")} for q in catalogue}
    outcomes = simulated_class.synthetic_outcomes(catalogue, possible)
    rows = simulated_class.compose(simulated_class.simulate(pool, named), outcomes, BAYES)
    rows[0]["isolated"] = "no"
    rows.append({"submission": "zoe/notes.ipynb", "assignment": "", "error": "not a readable notebook (not JSON)"})
    write_scores(rows, folder / "scores.csv")
    rows = analysis.read_scores(folder / "scores.csv")
    summaries = [
        analysis.summarize(name, graded, possible, catalogue)
        for name, graded in analysis.graded_by_assignment(rows).items()
    ]
    assert summaries[0].pairs, "the simulated class copies: the page should show a pair"
    page = instructor_report.render(summaries, rows, export.gradebook(rows), "simulated class")
    (folder / "report.html").write_text(page, encoding="utf-8")
    with served(folder) as base:
        yield base, folder


def test_the_report_works_offline_and_meets_wcag_21_aa(browser, report_site, screenshots):
    base, folder = report_site
    seen = visit(browser, base, folder, "report.html", screenshots)
    assert not seen.console_errors and not seen.outside_requests and not seen.failed_requests, seen
    assert seen.images and all(img["width"] > 0 and img["src"].startswith("data:image/svg+xml") for img in seen.images)
    assert AXE.is_file(), f"axe-core is missing ({AXE}): run `npm ci` (`make setup` does)"
    found = [f"{v['rule']} ({v['impact']}): {v['help']}: " + "; ".join(v["nodes"][:3]) for v in seen.violations]
    assert not found, "WCAG 2.1 AA violations on the report:\n" + "\n".join(found)
    print(f"\naxe-core: no WCAG 2.1 AA violation on the report ({len(seen.images)} figures)")


def test_the_report_reads_on_a_phone(browser, report_site, screenshots):
    """At a phone's width the page does not scroll sideways; its wide tables do, inside focusable regions."""
    base, _ = report_site
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(base + "report.html", wait_until="load")
        widths = page.evaluate("""() => ({page: document.documentElement.scrollWidth, screen: window.innerWidth,
            regions: Array.from(document.querySelectorAll('.scroll')).map(r => [r.scrollWidth, r.clientWidth,
                                                                                 r.tabIndex])})""")
        page.screenshot(path=screenshots / "report-phone.png", full_page=False)
    finally:
        context.close()
    assert widths["page"] <= widths["screen"], widths
    wide = [r for r in widths["regions"] if r[0] > r[1]]
    assert wide and all(tab == 0 for _, _, tab in wide), widths["regions"]


# --------------------------------------------------------------------------- JupyterLab


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def lab_api(base: str, token: str, path: str, method: str = "GET"):
    request = urllib.request.Request(f"{base}{path}", method=method, headers={"Authorization": f"token {token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
    return json.loads(body) if body else None


@dataclass
class Lab:
    url: str
    token: str
    notebooks: Path
    log: Path


# A JupyterLab that touches nothing of the user's and nothing off this machine: its own settings,
# workspaces and Jupyter folders; no news, no update check, no PyPI extension manager; every cell
# attached to the page (windowing off), so that the test sees the whole notebook.
LAB_SETTINGS = {
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false", "checkForUpdates": False},
}


@pytest.fixture(scope="module")
def jupyterlab(chromium, release, tmp_path_factory):
    """JupyterLab on a copy of the student notebooks, at a random port with a random token."""
    root = tmp_path_factory.mktemp("jupyterlab")
    notebooks = shutil.copytree(release / "student", root / "notebooks")
    for name, values in LAB_SETTINGS.items():
        (root / "settings" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "settings" / name).write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(24)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(root / "config"),
        "JUPYTER_DATA_DIR": str(root / "data"),
        "JUPYTER_RUNTIME_DIR": str(root / "runtime"),
        "IPYTHONDIR": str(root / "ipython"),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        f"--ServerApp.token={token}",
        "--ServerApp.ip=127.0.0.1",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={notebooks}",
        f"--LabApp.user_settings_dir={root / 'settings'}",
        f"--LabApp.workspaces_dir={root / 'workspaces'}",
        "--LabApp.news_url=None",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
        "--LabApp.extension_manager=readonly",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # CI's machine runs as root
    log = root / "jupyterlab.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=notebooks,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            if process.poll() is not None:
                pytest.fail(f"JupyterLab exited with {process.returncode}:\n{log.read_text()[-3000:]}")
            try:
                lab_api(base, token, "/api/status")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"JupyterLab did not answer on {base} in 90 s:\n{log.read_text()[-3000:]}")
                time.sleep(0.25)
        yield Lab(base, token, notebooks, log)
    finally:
        stop_jupyterlab(process, base, token)


def stop_jupyterlab(process: subprocess.Popen, base: str, token: str) -> None:
    """Shut its kernels down (each runs in a session of its own), then end the server's process group."""
    if process.poll() is None:
        try:
            for kernel in lab_api(base, token, "/api/kernels"):
                lab_api(base, token, f"/api/kernels/{kernel['id']}", method="DELETE")
        except OSError:
            pass
    for sig, grace in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue


def question_sources(nb_path: Path, function: str) -> tuple[str, str]:
    """The blank answer cell a student gets for ``function``, and the instructor's solution to type."""
    student = nbformat.read(nb_path, as_version=4)
    master = nbformat.read(MASTERS / nb_path.name, as_version=4)

    def cell(nb):
        (found,) = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith(f"def {function}(")]
        return found.source

    solution = "\n".join(
        line for line in cell(master).splitlines() if line.strip() not in ("# BEGIN SOLUTION", "# END SOLUTION")
    )
    return cell(student), solution + "\n"


# True once the kernel is idle and every code cell shows an execution count, e.g. "[12]:".
ALL_CELLS_RAN_JS = r"""() => {
  const indicator = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
  const prompts = Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell .jp-InputPrompt'));
  return indicator && indicator.dataset.status === 'idle' && prompts.length > 0
    && prompts.every(p => /^\[\d+\]:$/.test(p.textContent.trim()));
}"""
# True once the given prompt shows a new execution count.
RAN_AGAIN_JS = r"""([prompt, before]) => {
  const now = prompt.textContent.trim();
  return now !== before && /^\[\d+\]:$/.test(now);
}"""


def code_cell(page, starts_with: str):
    """The first code cell whose source begins with ``starts_with``."""
    index = page.evaluate(
        """(start) => Array.from(document.querySelectorAll('.jp-NotebookPanel .jp-CodeCell'))
             .findIndex(cell => (cell.querySelector('.cm-content')?.textContent || '').startsWith(start))""",
        starts_with,
    )
    assert index >= 0, f"no code cell starts with {starts_with!r}"
    return page.locator(".jp-NotebookPanel .jp-CodeCell").nth(index)


def run(page, cell, source: str | None = None) -> str:
    """Optionally replace a cell's source as a student would type it, run it with Shift+Enter, return its output."""
    prompt = cell.locator(".jp-InputPrompt")
    before = prompt.inner_text().strip()
    cell.locator(".cm-content").click()
    if source is not None:
        page.keyboard.press("ControlOrMeta+a")
        # One insertion, as a paste would be: no auto-indent, no auto-closed brackets.
        page.keyboard.insert_text(source)
    page.keyboard.press("Shift+Enter")
    page.wait_for_function(RAN_AGAIN_JS, arg=[prompt.element_handle(), before])
    page.wait_for_function(ALL_CELLS_RAN_JS)
    return cell.locator(".jp-OutputArea").inner_text()


def test_a_student_checks_an_answer_in_jupyterlab(chromium, browser, jupyterlab, screenshots):
    from playwright.sync_api import expect

    blank, solution = question_sources(jupyterlab.notebooks / f"{BAYES}.ipynb", "positive_predictive_value")
    assert "..." in blank and "..." not in solution and "return" in solution
    outside: list[str] = []
    context = new_context(browser, outside)
    page = context.new_page()
    crashes: list[str] = []
    page.on("pageerror", lambda error: crashes.append(error.message))
    started = time.perf_counter()
    try:
        page.goto(f"{jupyterlab.url}/lab/tree/{BAYES}.ipynb?token={jupyterlab.token}")
        page.wait_for_selector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]')
        expect(page.get_by_text(re.compile(r"\| Idle$"))).to_be_visible(timeout=TIMEOUT_MS)  # kernel connected
        first = page.locator(".jp-NotebookPanel .jp-CodeCell").first
        expect(first).to_contain_text("Initialize Otter", timeout=TIMEOUT_MS)

        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).click()
        page.wait_for_function(ALL_CELLS_RAN_JS, timeout=180_000)
        answer = code_cell(page, "def positive_predictive_value(")
        check = code_cell(page, 'grader.check("q1")')
        output = check.locator(".jp-OutputArea")
        expect(output).to_contain_text("q1 results:", timeout=TIMEOUT_MS)
        assert "failed" in output.inner_text() and "no problem" not in output.inner_text(), output.inner_text()

        value = run(page, answer, solution)
        assert re.search(r"0\.15384615", value), f"the typed solution printed {value!r}"
        run(page, check)
        expect(output).to_contain_text("q1: the public tests found no problem", timeout=TIMEOUT_MS)
        assert "failed" not in output.inner_text() and "passed" not in output.inner_text(), output.inner_text()
        page.screenshot(path=screenshots / "jupyterlab-q1-no-problem.png")

        run(page, answer, blank)
        run(page, check)
        expect(output).to_contain_text("q1 results:", timeout=TIMEOUT_MS)
        assert "failed" in output.inner_text() and "no problem" not in output.inner_text(), output.inner_text()
    except Exception:
        try:
            page.screenshot(path=screenshots / "jupyterlab-failure.png")
        finally:
            print(f"JupyterLab's log: {jupyterlab.log}\nscreenshot: {screenshots / 'jupyterlab-failure.png'}")
        raise
    finally:
        context.close()
    print(f"\nJupyterLab session took {time.perf_counter() - started:.1f} s")
    assert not crashes, f"uncaught errors in JupyterLab: {crashes}"
    assert not outside, f"JupyterLab asked for addresses off this machine (blocked): {outside}"


def test_a_graded_questions_fine_print_is_a_closed_fold_in_jupyterlab(browser, jupyterlab, screenshots):
    """jupyterlab-myst renders a question's *How it is graded* fold as a closed <details> that Enter opens."""
    from playwright.sync_api import expect

    outside: list[str] = []
    context = new_context(browser, outside)
    page = context.new_page()
    try:
        page.goto(f"{jupyterlab.url}/lab/tree/{BAYES}.ipynb?token={jupyterlab.token}")
        page.wait_for_selector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator[data-status="idle"]')
        question = page.locator(".jp-NotebookPanel .jp-MarkdownCell", has_text="Question 1 (").first
        question.scroll_into_view_if_needed()
        fold = question.locator("details", has=page.locator("summary", has_text="How it is graded"))
        expect(fold).to_have_count(1, timeout=TIMEOUT_MS)
        body = fold.locator("> :not(summary)").first
        assert fold.evaluate("d => d.open") is False and not body.is_visible(), "the fold is open on load"
        assert "dropdown" not in question.inner_text(), "the directive shows as raw text"
        fold.locator("summary").scroll_into_view_if_needed()
        question.screenshot(path=screenshots / "jupyterlab-fold-closed.png")
        fold.locator("summary").focus()
        page.keyboard.press("Enter")
        expect(body).to_be_visible()
        assert fold.evaluate("d => d.open") is True
        expect(body).to_contain_text("The grader runs your answer cell")
        assert fold.locator("mjx-container, .MathJax, .katex").count() >= 1, "no typeset math in the open fold"
        question.screenshot(path=screenshots / "jupyterlab-fold-open.png")
    finally:
        context.close()
    assert not outside, f"JupyterLab asked for addresses off this machine (blocked): {outside}"
