"""House rules for the master notebooks and the package's backlinks to them."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import nbformat
import pytest
import yaml

import lecturekit
from conftest import ROOT
from coursekit.build.book import BOOK_FILES, shows_progress_bar
from coursekit.notebooks import is_progress_bar, master_notebooks

MASTERS = master_notebooks()


def test_there_are_notebooks():
    assert MASTERS


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.name)
def test_master_notebook_hygiene(path):
    assert re.fullmatch(r"\d\d\.\d\d-[A-Z][A-Za-z0-9]*(-[A-Za-z0-9]+)*\.ipynb", path.name), path.name
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    assert set(nb.metadata) <= {"kernelspec", "language_info"}, f"extra notebook metadata {set(nb.metadata)}"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert any(c.outputs for c in code), "masters are committed executed, so that nbval can compare"
    for cell in nb.cells:
        assert "execution" not in cell.metadata, "run `python -m coursekit clean` before committing"
        for output in cell.get("outputs", []):
            assert output.output_type != "error", f"stored error output: {output.get('ename')}"
        if cell.cell_type == "code":
            assert not any(is_progress_bar(o) for o in cell.outputs), (
                "a stored progress bar: run `python -m coursekit clean`"
            )
            shows_bar = shows_progress_bar(cell)
            ignored = "nbval-ignore-output" in cell.metadata.get("tags", [])
            # A progress bar differs on every run, so nbval must not compare that cell; then the
            # cell must print nothing else, or those results would go unchecked.
            assert shows_bar == ignored, f"progress bar and nbval-ignore-output go together:\n{cell.source[:200]}"
            if ignored:
                assert not cell.outputs, f"a cell that nbval ignores prints nothing:\n{cell.source[:200]}"
    first = next(c for c in nb.cells if c.cell_type != "raw")  # after otter's configuration, if any
    assert first.cell_type == "markdown" and first.source.startswith("# "), "a notebook opens with its title"
    assert "**You will learn**" in first.source


def test_every_master_is_in_the_table_of_contents():
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    files = {c["file"] for part in toc["parts"] for c in part["chapters"]}
    assert {f for f in files if f.startswith("notebooks/")} == {f"notebooks/{p.stem}" for p in MASTERS}
    # The other entries are pages of the book, which coursekit.build.book must stage with it.
    pages = {f for f in files if not f.startswith("notebooks/")}
    assert all((ROOT / f"{page}.md").is_file() and f"{page}.md" in BOOK_FILES for page in pages), pages


def lines_that_break_inline_math(markdown: str) -> list[str]:
    """Lines that open with a list, quote or heading marker while an inline ``$...$`` from the line
    before is still open: Markdown reads the marker first ("+ \\text{const}$" becomes a list item),
    so the formula is split and its TeX is left showing on the page."""
    found = []
    for paragraph in re.split(r"\n\s*\n", markdown):
        open_dollars = 0
        for line in paragraph.replace("$$", "").split("\n"):
            if open_dollars % 2 and re.match(r"\s*([-+*>#]|\d+[.)])\s", line):
                found.append(line.strip()[:80])
            open_dollars += len(re.findall(r"(?<!\\)\$", line))
    return found


@pytest.mark.parametrize(
    "markdown, broken",
    [
        ("maximises $B = -x\n+ c$, a parabola", ["+ c$, a parabola"]),
        ("maximises $B = -x + c$,\n- a list item", []),
        ("$$\nB = -x\n+ c\n$$", []),
    ],
)
def test_a_line_that_breaks_inline_math_is_found(markdown, broken):
    assert lines_that_break_inline_math(markdown) == broken


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.name)
def test_no_line_breaks_an_inline_formula(path):
    cells = nbformat.read(path, as_version=4).cells
    broken = [line for c in cells if c.cell_type == "markdown" for line in lines_that_break_inline_math(c.source)]
    assert not broken, f"a line inside $...$ starts with a Markdown marker; rewrap it: {broken}"


def public_objects():
    """Every name in the ``__all__`` of a module or subpackage of lecturekit (``text.tokenizer.tokenize``)."""
    for info in pkgutil.walk_packages(lecturekit.__path__, "lecturekit."):
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            yield f"{info.name.removeprefix('lecturekit.')}.{name}", getattr(module, name)


@pytest.mark.parametrize("name, obj", list(public_objects()), ids=lambda v: v if isinstance(v, str) else "")
def test_public_objects_have_docstrings_and_backlinks(name, obj):
    if not callable(obj):  # a constant such as datasets.DATA_DIR
        return
    doc = inspect.getdoc(obj)
    assert doc and ("Parameters" in doc or "Returns" in doc) or inspect.isclass(obj), (
        f"{name} needs a numpydoc docstring"
    )
    module = inspect.getmodule(obj)
    links = re.findall(r"notebooks/([\w.\-]+\.ipynb)", (module.__doc__ or "") + (doc or ""))
    # The data loaders are not derived anywhere; every model is (the machinery is coursekit's, not here).
    if module.__name__ != "lecturekit.datasets" and not links:
        # A module written ahead of its chapter may say "the chapter N notebooks" until they exist;
        # as soon as a notebook NN.MM-*.ipynb of that chapter exists, a real backlink is required.
        chapter = re.search(r"chapter (\d+) notebooks", module.__doc__ or "")
        assert chapter, f"{name}: say where it is derived (notebooks/...ipynb)"
        written = sorted((ROOT / "notebooks").glob(f"{int(chapter.group(1)):02d}.*.ipynb"))
        assert not written, f"{name}: chapter {chapter.group(1)} exists now; link {written[0].name}"
    for link in links:
        assert (ROOT / "notebooks" / link).exists(), f"{name} links to a missing notebook {link}"


# --------------------------------------------------------------------------- digits of one machine

# A number below 1e-10 in a stored output is nearly always a difference at the size of rounding, and
# another CPU's BLAS prints another one (or 0), so nbval fails there. A cell that shows two
# computations agree prints the bound it asserts instead ("< 1e-12"). A number preceded by a bound
# ("< 1e-12", "below 1e-10", "equals ... to within 1e-10") is a bound, not a value. The few true
# values this small are listed with the reason their printed digits do not depend on rounding.
NUMBER = re.compile(r"(?<![\w.])[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)(?![\w.])")
BOUND_BEFORE = re.compile(r"(?:<=?|≤|\bbelow|\bwithin|\bless than|\bunder|\bto)\s*(?:an? )?(?:relative |fraction )?$")
EXACT_SMALL_VALUES = {
    "03.01": (
        r"p\(x \| y=0\) = \S+, p\(x \| y=1\) = \S+, p\(y=1 \| x\) = \S+$",
        "likelihoods of one message, products of 24 probabilities: 4 digits hold on every machine",
    ),
    "04.01": (
        r"p\(x \| ham\) = \S+, p\(x \| spam\) = \S+, p\(spam \| x\)",
        "likelihoods of one message, products of probabilities: 3 digits hold on every machine",
    ),
    "05.02": (
        r"collapsed: a ValueError, or a spike variance below 1e-20$",
        "a bound on a variance of about 1e-30 that is itself rounding noise, on any machine",
    ),
}


def rounding_level_numbers(text: str) -> list[str]:
    """The numbers in ``text`` printed as values below 1e-10 (an exact 0 in exponent form included),
    and bounds below 1e-14, which are rounding themselves (a few units in the last place of 1)."""
    found = []
    for line in text.splitlines():
        for match in NUMBER.finditer(line):
            bound = BOUND_BEFORE.search(line[: match.start()])
            if abs(float(match.group())) < (1e-14 if bound else 1e-10):
                found.append(match.group())
    return found


@pytest.mark.parametrize(
    "text, tiny",
    [
        ("max |difference| 8.9e-16", ["8.9e-16"]),
        ("theta_ 0e+00, var_ 0.0e+00, predict_proba 1e-14", ["0e+00", "0.0e+00", "1e-14"]),
        ("array([-2.84162353e+00, -6.66133815e-16,  2.84162353e+00])", ["-6.66133815e-16"]),
        ("GDA(reg 0.01) on copies: 7e-15;  LR(C=1): 3e-16", ["7e-15", "3e-16"]),
        ("max |difference| < 1e-12; |gradient| <= 1e-11, below 1e-10, to within 1e-13", []),
        ("|lecturekit MAP| < 1e-16, |quad| <= 1e-15", ["1e-16", "1e-15"]),
        ("feature 19 keeps less than a fraction 1e-12 of its variance", []),
        ("sigma^2 = 1e-06, accuracy 0.848, 5,490 and 2.3026", []),
    ],
)
def test_rounding_level_numbers_are_found(text, tiny):
    assert rounding_level_numbers(text) == tiny


@pytest.mark.parametrize("path", MASTERS, ids=lambda p: p.name)
def test_no_stored_output_shows_digits_of_one_machine(path):
    allowed = EXACT_SMALL_VALUES.get(path.name[:5])
    shown = []
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        for output in cell.get("outputs", []):
            text = output.get("text", "") or output.get("data", {}).get("text/plain", "")
            for line in text.splitlines():
                if allowed and re.search(allowed[0], line):
                    continue
                if rounding_level_numbers(line):
                    shown.append(f"cell {index}: {line.strip()[:160]}")
    assert not shown, (
        "stored outputs print rounding-level numbers, which another CPU prints "
        'differently; print the bound the cell asserts ("< 1e-12"):\n' + "\n".join(shown)
    )


def test_the_efficiencies_that_02_05_q5_draws_from_are_the_notebooks_table():
    """02.05's Question 5 draws Delta from a table of Efron's efficiencies kept in its variant cell: the same
    numbers as the table the notebook computes and prints (its stored output, which nbval keeps current)."""
    nb = nbformat.read(ROOT / "notebooks" / "02.05-GDA-Against-Logistic-Regression.ipynb", as_version=4)
    (variant,) = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("# VARIANT q5")]
    space: dict = {}
    exec(variant, space)  # noqa: S102 - the master's own cell
    (printed,) = [
        o["text"] for c in nb.cells if c.cell_type == "code" for o in c.outputs if "Eff (d = 1)" in o.get("text", "")
    ]
    rows = [line.split() for line in printed.splitlines()[1:] if re.fullmatch(r"\s*\d\.\d(\s+[\d.]+){4}", line)]
    table = {row[0]: float(row[2]) for row in rows}
    assert len(space["EFFICIENCY"]) == 5 and all(table[k] == v for k, v in space["EFFICIENCY"].items())
