"""The website for a reader who uses the keyboard alone or a screen reader (WCAG 2.1 AA).

axe-core checks every page in tests/test_browser.py; what it cannot see is checked here:

* with the keyboard alone (Tab, Enter, the arrows, Escape), on the introduction and on a chapter, focus
  reaches every link of the main navigation and the page's download menu, shows where it is on every
  stop, and the menu opens, can be walked and closes, after which Tab moves on;
* a fold (a MyST admonition of class ``dropdown``) is closed when the page opens, opens with Enter on its
  button, which says whether it is open, shows its text and math, and closes again; axe-core finds no
  violation with it open;
* no image has a file name for its text alternative (myst-nb's default when a cell gives none), and no
  figure has an empty one.

The browser fixtures (Debian's Chromium, driven by Playwright; skipped without it, failed in CI) and
the served site come from tests/test_browser.py.
"""

from __future__ import annotations

import html.parser
import re

import pytest

from test_browser import (  # noqa: F401  (browser, chromium, screenshots and site are fixtures)
    AXE,
    AXE_JS,
    BAYES,
    TIMEOUT_MS,
    WCAG_AA,
    browser,
    chromium,
    new_context,
    report,
    screenshots,
    site,
    site_pages,
)

pytestmark = pytest.mark.slow

# --------------------------------------------------------------------------- the keyboard

MAX_TABS = 80  # the skip link, the search, the logo, about twenty chapters, then the page's buttons

# The element that has the focus: what it is, and whether the reader can see it and see that it has it
# (an outline, or a box shadow with a colour and a size, as the theme draws on links).
FOCUS_JS = r"""() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el), box = el.getBoundingClientRect();
  const opaque = colour => !/^rgba\(.*,\s*0\)$/.test(colour) && colour !== 'transparent';
  const outline = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 && opaque(style.outlineColor);
  const shadow = style.boxShadow !== 'none' && style.boxShadow.split(/,(?![^(]*\))/).some(layer => {
    const colour = (layer.match(/rgba?\([^)]*\)/) || ['transparent'])[0];
    return opaque(colour) && (layer.match(/-?[\d.]+px/g) || []).some(length => parseFloat(length) !== 0);
  });
  const text = (el.innerText || el.getAttribute('aria-label') || '').trim().replace(/\s+/g, ' ').slice(0, 50);
  return {
    name: `${el.tagName.toLowerCase()}.${[...el.classList].join('.')} "${text}"`,
    href: el.getAttribute('href'),
    navigation: !!el.closest('nav.bd-docs-nav'),
    menu_toggle: el.matches('.dropdown-toggle[data-bs-toggle="dropdown"]'),
    menu_item: el.matches('.dropdown-menu .dropdown-item'),
    shown: el.checkVisibility() && box.width > 0 && box.height > 0,
    indicated: el.matches(':focus-visible') && (outline || shadow),
  };
}"""
NAVIGATION_LINKS_JS = (
    "() => Array.from(document.querySelectorAll('nav.bd-docs-nav a[href]')).map(a => a.getAttribute('href'))"
)
MENU_SHOWN_JS = (
    "() => { const m = document.activeElement.closest('.dropdown').querySelector('.dropdown-menu'); "
    "return m.classList.contains('show') && m.checkVisibility(); }"
)


def focus(page) -> dict:
    return page.evaluate(FOCUS_JS)


@pytest.mark.parametrize("path", ["index.html", f"notebooks/{BAYES}.html"])
def test_the_keyboard_reaches_the_navigation_and_opens_the_download_menu(browser, site, path):  # noqa: F811
    from playwright.sync_api import expect

    outside: list[str] = []
    context = new_context(browser, outside)
    page = context.new_page()
    try:
        page.goto(site + path, wait_until="load")
        page.wait_for_url(re.compile(r"/(intro|notebooks/[^/]+)\.html$"))  # index.html sends the reader to intro.html
        page.wait_for_load_state("load")
        links = page.evaluate(NAVIGATION_LINKS_JS)
        assert len(links) >= 15, f"{path}: the main navigation has only {links}"
        stops = []
        for _ in range(MAX_TABS):
            page.keyboard.press("Tab")
            stops.append(focus(page))
            if stops[-1] and stops[-1]["menu_toggle"]:
                break
        names = [stop["name"] if stop else "(nothing)" for stop in stops]
        assert stops[-1] and stops[-1]["menu_toggle"], (
            f"{path}: {MAX_TABS} presses of Tab did not reach the download menu; focus went to {names}"
        )
        reached = [stop["href"] for stop in stops if stop and stop["navigation"]]
        assert reached == links, f"{path}: Tab reached the navigation links {reached}, the page has {links}"
        unseen = [stop["name"] for stop in stops if stop and not (stop["shown"] and stop["indicated"])]
        assert not unseen, f"{path}: focus is not visible (no outline or ring, or hidden) on {unseen}"

        toggle = page.locator(":focus")
        page.keyboard.press("Enter")
        expect(toggle).to_have_attribute("aria-expanded", "true", timeout=TIMEOUT_MS)
        assert page.evaluate(MENU_SHOWN_JS), f"{path}: Enter on {names[-1]} did not show its menu"
        page.keyboard.press("ArrowDown")
        item = focus(page)
        assert item["menu_item"] and item["shown"] and item["indicated"], f"{path}: ArrowDown went to {item}"
        page.keyboard.press("Escape")
        expect(toggle).to_have_attribute("aria-expanded", "false", timeout=TIMEOUT_MS)
        assert focus(page)["menu_toggle"], f"{path}: Escape did not give the focus back to the menu's button"
        page.keyboard.press("Tab")
        after = focus(page)
        assert after and not after["menu_toggle"] and not after["menu_item"] and after["indicated"], (
            f"{path}: after the menu closed, Tab went to {after}"
        )
    finally:
        context.close()
    assert not outside, f"{path}: requests off 127.0.0.1 (blocked): {outside}"


# --------------------------------------------------------------------------- folds


def test_a_fold_opens_and_closes_with_the_keyboard(browser, site, screenshots):  # noqa: F811
    from playwright.sync_api import expect

    outside: list[str] = []
    context = new_context(browser, outside)
    page = context.new_page()
    try:
        page.goto(site + f"notebooks/{BAYES}.html", wait_until="load")
        page.evaluate("() => MathJax.startup.promise.then(() => true)")
        folds = page.locator(".admonition.dropdown:not(.solution)")
        assert folds.count() >= 2, f"{BAYES}: {folds.count()} folds (admonitions of class dropdown)"
        fold = folds.first
        fold.scroll_into_view_if_needed()
        button = fold.locator("button.toggle-button")
        body = fold.locator("> :not(.admonition-title)").first
        expect(button).to_have_attribute("aria-expanded", "false")
        assert not body.is_visible(), "a fold is open before the reader opens it"
        page.screenshot(path=screenshots / "fold-closed.png")
        button.focus()
        assert focus(page)["indicated"], "the fold's button does not show that it has the focus"
        page.keyboard.press("Enter")
        expect(button).to_have_attribute("aria-expanded", "true")
        expect(body).to_be_visible()
        page.screenshot(path=screenshots / "fold-open.png")
        page.add_script_tag(path=AXE)
        violations = page.evaluate(AXE_JS, WCAG_AA)
        assert not violations, f"axe-core with a fold open: {violations}"
        page.keyboard.press("Enter")
        expect(button).to_have_attribute("aria-expanded", "false")
        expect(body).to_be_hidden()
    finally:
        context.close()
    assert not outside, f"requests off 127.0.0.1 (blocked): {outside}"


# --------------------------------------------------------------------------- text alternatives


class Images(html.parser.HTMLParser):
    """The attributes of every <img> of a page."""

    def __init__(self):
        super().__init__()
        self.found: list[dict] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.found.append(dict(attrs))


FILE_NAME = re.compile(r"^\S*\.(png|jpe?g|gif|svg|webp|pdf)$|_images/|^\.\.?/", flags=re.IGNORECASE)


def test_every_figure_has_a_text_alternative_that_is_not_a_file_name(built_book):
    """No image's alt is a file name (myst-nb's default for a figure without one), nor is a figure's empty.

    A screen reader reads the alt text out; an empty one hides the figure from it altogether.
    """
    html_root, problems, figures = built_book / "html", {}, 0
    for path in site_pages(html_root):
        parser = Images()
        parser.feed((html_root / path).read_text(encoding="utf-8"))
        found = []
        for img in parser.found:
            alt, src = (img.get("alt") or "").strip(), img.get("src", "")
            figures += "_images/" in src
            if FILE_NAME.search(alt):
                found.append(f"{src}: its alt text is a file name, {alt!r}")
            elif "_images/" in src and not alt:
                found.append(f"{src}: a figure with no text alternative")
        problems[path] = found
    assert figures > 0, "no figure (an image under _images/) on any page"
    assert not report(problems), "images without a real text alternative:\n" + report(problems)


def test_captions_do_not_number_figures_against_the_notebooks_own_numbers(browser, site):  # noqa: F811
    """Sphinx numbers figures across the book ("Fig. 37"); the notebooks number their own ("Figure 2.")
    in the figures' titles and prose. figures.css hides the former, keeping the caption's text."""
    outside: list[str] = []
    context = new_context(browser, outside)
    page = context.new_page()
    try:
        page.goto(site + "notebooks/05.02-Gaussian-Mixtures.html", wait_until="load")
        captions = page.locator("figure figcaption")
        assert captions.count() >= 5, "05.02 has five captioned figures"
        for i in range(captions.count()):
            caption = captions.nth(i)
            assert caption.locator(".caption-number").count() == 1  # Sphinx still writes it ...
            assert not caption.locator(".caption-number").is_visible()  # ... but it is not shown
            assert caption.locator(".caption-text").is_visible()
            assert not re.match(r"\s*Fig\. \d", caption.inner_text()), caption.inner_text()
    finally:
        context.close()
