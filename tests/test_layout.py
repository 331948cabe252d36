"""The two houses and the naming rule: a module, its test file and (for a model) its notebook share a name.

``lecturekit/`` holds what the chapters teach and ``coursekit/`` what builds, releases and grades
the course; ``tests/lecturekit/`` and ``tests/coursekit/`` mirror them, so that the tests of
``coursekit/grading/grader.py`` are ``tests/coursekit/grading/test_grader.py``. A module whose
behaviour is tested in another module's file is listed in :data:`TESTED_ELSEWHERE` with that file.
Imports only point down: lecturekit never imports coursekit, and coursekit's modules import one
another without a cycle.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

PACKAGES = ("lecturekit", "coursekit")
# module -> the test file that tests it, where that is not tests/<package path>/test_<module>.py.
TESTED_ELSEWHERE = {
    "lecturekit/hmm/recursions.py": "tests/lecturekit/hmm/test_model.py",  # the model's recursions, one family
    "lecturekit/hmm/encoding.py": "tests/lecturekit/hmm/test_model.py",  # the model's input, with the model
    "lecturekit/mixture/loop.py": "tests/lecturekit/mixture/test_gaussian.py",  # the EM loop, through each model
    "lecturekit/mixture/steps.py": "tests/lecturekit/mixture/test_gaussian.py",  # the Gaussian mixture's steps
    "lecturekit/text/tokenizer.py": "tests/lecturekit/text/test_text.py",  # one file for the text features
    "lecturekit/text/vocabulary.py": "tests/lecturekit/text/test_text.py",
    "lecturekit/text/selection.py": "tests/lecturekit/text/test_text.py",
    "coursekit/evaluator.py": "tests/coursekit/test_symbolic.py",  # evaluated as answers are compared
    # a student's variant: declared, drawn, made a notebook, read back and flagged, in one file
    "coursekit/choices.py": "tests/coursekit/build/test_personal.py",
    "coursekit/grading/variant.py": "tests/coursekit/build/test_personal.py",
    "coursekit/grading/owners.py": "tests/coursekit/build/test_personal.py",
    "coursekit/notebooks.py": "tests/test_notebooks.py",  # the masters' markup and hygiene, on every master
    "coursekit/grading/sandbox.py": "tests/coursekit/grading/test_isolation.py",  # the worker, from the grader's side
    "coursekit/grading/worker.py": "tests/coursekit/grading/test_isolation.py",
    "coursekit/grading/zygote.py": "tests/coursekit/grading/test_isolation.py",  # the zygotes and their pool
    "coursekit/data/wheels.py": "tests/lecturekit/test_datasets.py",  # the data and the recipe that made them
    "coursekit/data/brown.py": "tests/lecturekit/test_datasets.py",
}


def modules(package: str) -> list[Path]:
    """The public modules of a package: every ``.py`` file but ``__init__``, ``__main__`` and ``_private``."""
    return sorted(
        p.relative_to(ROOT)
        for p in (ROOT / package).rglob("*.py")
        if not p.name.startswith("_") and "__pycache__" not in p.parts
    )


def own_test(module: Path) -> Path:
    return Path("tests", *module.parent.parts, f"test_{module.name}")


@pytest.mark.parametrize("module", [m for package in PACKAGES for m in modules(package)], ids=str)
def test_every_module_has_its_test_file(module):
    elsewhere = TESTED_ELSEWHERE.get(module.as_posix())
    if elsewhere is None:
        assert (ROOT / own_test(module)).is_file(), (
            f"{module}: write {own_test(module)}, or list in TESTED_ELSEWHERE the file that tests it"
        )
        return
    assert not (ROOT / own_test(module)).is_file(), f"{module} has {own_test(module)}: take it off TESTED_ELSEWHERE"
    assert (ROOT / elsewhere).is_file(), f"{module}: {elsewhere} is missing"
    dotted = module.with_suffix("").as_posix().replace("/", ".")
    text = (ROOT / elsewhere).read_text()
    assert module.stem in text or dotted in text, f"{elsewhere} never names {module.stem}"


def test_the_exceptions_are_modules():
    listed = {Path(m) for m in TESTED_ELSEWHERE}
    assert listed <= {m for package in PACKAGES for m in modules(package)}, listed


def imports(path: Path) -> set[str]:
    """The modules of lecturekit or coursekit that a file imports, anywhere in it (lazy imports too)."""
    found = set()
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return {name for name in found if name.split(".")[0] in PACKAGES}


def dotted(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_lecturekit_never_imports_coursekit():
    found = {
        dotted(p): sorted(i for i in imports(p) if i.startswith("coursekit"))
        for p in (ROOT / "lecturekit").rglob("*.py")
    }
    assert not {k: v for k, v in found.items() if v}, "the models may not import the machinery"


def test_coursekit_has_no_import_cycle():
    files = {dotted(p): p for p in (ROOT / "coursekit").rglob("*.py") if "__pycache__" not in p.parts}
    graph = {
        name: {i for i in imports(path) if i in files and i != name and not name.startswith(i + ".")}
        for name, path in files.items()
    }
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(graph[name]):
            assert state.get(target) != 1, "import cycle: " + " -> ".join([*trail, name, target])
            if target not in state:
                visit(target, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])


@pytest.mark.parametrize("package", sorted({p.parent for p in (ROOT / "coursekit").rglob("__init__.py")}), ids=str)
def test_a_package_with_a_table_of_its_modules_lists_every_one(package):
    """Where a package's docstring has a table of its modules, the table keeps up with the folder."""
    text = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    listed = set(re.findall(r"^``(\w+)``\s{2,}", text, re.M))  # a table's first column, not prose
    if not listed:
        return
    present = {p.stem for p in package.glob("*.py") if not p.name.startswith("_")}
    assert listed == present, f"{package}: the table lacks {sorted(present - listed)}, names {sorted(listed - present)}"


LECTUREKIT = ROOT / "lecturekit"


def public_modules(package: Path) -> set[str]:
    """A package's public modules and subpackages, by name."""
    return {p.stem for p in package.glob("*.py") if not p.name.startswith("_")} | {
        p.name for p in package.iterdir() if (p / "__init__.py").is_file() and not p.name.startswith("_")
    }


def test_lecturekit_s_table_lists_every_module_and_subpackage():
    text = ast.get_docstring(ast.parse((LECTUREKIT / "__init__.py").read_text())) or ""
    listed = set(re.findall(r"^:mod:`lecturekit\.(\w+)`", text, re.M))
    present = public_modules(LECTUREKIT)
    assert listed == present, f"lecturekit's table lacks {sorted(present - listed)}, names {sorted(listed - present)}"


def test_the_readme_names_every_lecturekit_module():
    row = next(line for line in (ROOT / "README.md").read_text().splitlines() if line.startswith("| `lecturekit/` |"))
    named = set(re.findall(r"`(\w+)(?:\.py|/)`", row))
    present = public_modules(LECTUREKIT) | {
        module
        for package in LECTUREKIT.iterdir()
        if (package / "__init__.py").is_file()
        for module in public_modules(package)
    }
    assert present <= named, f"the README's lecturekit/ row lacks {sorted(present - named)}"
    assert named <= present | {"lecturekit"}, f"the README's lecturekit/ row names {sorted(named - present)}, gone"


def test_the_naive_bayes_table_lists_every_model():
    import lecturekit.naive_bayes as package

    models = {name for name in package.__all__ if isinstance(getattr(package, name), type)}
    rows = set(re.findall(r"^:class:`(\w+)`", package.__doc__, re.M))
    assert rows == models, f"the table lacks {sorted(models - rows)}, names {sorted(rows - models)}"
    modules = set(re.findall(r":mod:`~lecturekit\.naive_bayes\.(\w+)`", package.__doc__))
    assert public_modules(LECTUREKIT / "naive_bayes") <= modules | {"base"}, "the module list lacks a module"
