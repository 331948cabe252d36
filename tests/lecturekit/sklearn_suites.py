"""Load one of scikit-learn's own test modules with its estimators replaced by lecturekit's.

:func:`load_suite` reads a test module of the installed scikit-learn (for example
``sklearn/tests/test_naive_bayes.py``), rewrites its ``from sklearn.naive_bayes import ...``
statement so that the names come from a substitute module holding lecturekit's classes, and
executes it as a new module (``sklearn_suite_<name>``). Only that one line changes, so the line
numbers in a traceback are those of scikit-learn's file; everything else the suite imports (its
data, its private helpers, ``assert_allclose``) stays scikit-learn's.
``tests/lecturekit/test_sklearn_suites.py`` then exposes the suite's test functions, with their marks and fixtures,
as its own.

A class lecturekit does not have yet is replaced by a placeholder of the same name that skips
the test which makes one (:func:`missing_class`), so the rest of the suite still runs and the
class's tests start running once lecturekit provides it.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import sklearn

SKLEARN = Path(sklearn.__file__).parent


def missing_class(name: str, reason: str) -> type:
    """A stand-in for a class lecturekit lacks: making one skips the test with ``reason``."""

    def __new__(cls, *args, **kwargs):
        pytest.skip(reason)

    return type(name, (), {"__new__": __new__, "__doc__": reason, "__module__": __name__})


def load_suite(relative_path: str, name: str, substitutes: dict[str, dict[str, Any]]) -> types.ModuleType:
    """Execute scikit-learn's test module ``relative_path`` with some imports taken from ``substitutes``.

    Parameters
    ----------
    relative_path : str
        The test module's path inside the installed ``sklearn`` package.
    name : str
        The new module's name is ``sklearn_suite_<name>``.
    substitutes : dict
        For each scikit-learn module (``"sklearn.naive_bayes"``) the names its ``from ... import``
        statement in the suite should bind instead, e.g. ``{"GaussianNB": lecturekit's GaussianNB}``.
        Every name the statement imports must be given.

    Returns
    -------
    module
        The executed suite, registered in ``sys.modules`` under its new name.

    Raises
    ------
    RuntimeError
        If the suite no longer has a ``from <module> import`` statement to rewrite, or imports a
        name that ``substitutes`` does not provide (a new scikit-learn release changed the suite).
    """
    path = SKLEARN / relative_path
    source = path.read_text()
    module_name = f"sklearn_suite_{name}"
    stand_ins = {}
    for original, names in substitutes.items():
        stand_in = types.ModuleType(f"{module_name}_{original.replace('.', '_')}")
        stand_in.__dict__.update(names)
        stand_ins[stand_in.__name__] = stand_in
        statement = re.compile(rf"^from {re.escape(original)} import (\([^)]*\)|[^\n]*)", re.MULTILINE)
        found = statement.search(source)
        if found is None:
            raise RuntimeError(
                f"{path} no longer imports from {original}; update tests/lecturekit/test_sklearn_suites.py."
            )
        imported = set(re.findall(r"\w+", found.group(1)))
        if imported - set(names):
            raise RuntimeError(
                f"{path} imports {sorted(imported - set(names))} from {original}, which "
                f"tests/lecturekit/test_sklearn_suites.py does not substitute; add them there."
            )
        source = source[: found.start()] + f"from {stand_in.__name__} import {found.group(1)}" + source[found.end() :]
    module = types.ModuleType(module_name)
    module.__file__ = str(path)
    sys.modules[module_name] = module
    sys.modules.update(stand_ins)  # only while the import statements run
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)  # noqa: S102 (scikit-learn's own test file)
    finally:
        for stand_in_name in stand_ins:
            del sys.modules[stand_in_name]
    return module


def suite_tests(module: types.ModuleType) -> dict[str, Callable]:
    """The module's test functions by name (``test_*``), in the order of the file."""
    return {
        key: value
        for key, value in vars(module).items()
        if key.startswith("test_") and callable(value) and getattr(value, "__module__", None) == module.__name__
    }
