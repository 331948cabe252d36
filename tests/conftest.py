"""Shared fixtures: the course released once per test session into a temporary folder."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import course  # noqa: E402  (tools/course.py)


@pytest.fixture(scope="session")
def release(tmp_path_factory) -> Path:
    """``otter assign`` on every master, as ``make assignments`` does, into a temporary dist/.

    Without otter's own run of each master's tests, which executes every notebook once more:
    tests/test_exercises.py grades every solution through the autograder instead (with a blank
    and the typical wrong answers), in a fraction of the time.
    """
    dist = tmp_path_factory.mktemp("dist")
    course.assign(dist, run_tests=False)
    return dist


@pytest.fixture(scope="session")
def built_book(release, tmp_path_factory) -> Path:
    """The website built strictly from the student notebooks, as ``make book`` does."""
    out = tmp_path_factory.mktemp("book")
    source = course.stage_book(release / "student", out / "_build" / "source")
    course.build_book(source, out)
    return out / "_build"


def assignment_masters() -> list[Path]:
    return [p for p in course.master_notebooks() if course.is_assignment(nbformat.read(p, as_version=4))]
