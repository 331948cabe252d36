"""Shared fixtures: the course released (and its website built) once per test session.

``make test`` runs pytest in two processes (pytest-xdist, ``--dist loadfile``): every test file,
and every notebook under nbval, is one unit that one process runs from start to end. The release
and the book are built once for the whole session, whichever process needs them first; the other
waits for it (a file lock) and reuses them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import course  # noqa: E402  (tools/course.py)


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` once per session, even across pytest-xdist's processes."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    shared = tmp_path_factory.getbasetemp().parent  # the same for every worker of this session
    folder = shared / name
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            (folder / ".built").touch()
    return folder


@pytest.fixture(scope="session")
def release(tmp_path_factory) -> Path:
    """``otter assign`` on every master, as ``make assignments`` does, into a temporary dist/.

    Without otter's own run of each master's tests, which executes every notebook once more:
    tests/test_exercises.py grades every solution through the autograder instead (with a blank
    and the typical wrong answers), in a fraction of the time.
    """
    return built_once(tmp_path_factory, "dist", lambda folder: course.assign(folder, run_tests=False))


@pytest.fixture(scope="session")
def built_book(release, tmp_path_factory) -> Path:
    """The website built strictly from the student notebooks, as ``make book`` does."""
    def build(out: Path) -> None:
        source = course.stage_book(release / "student", out / "_build" / "source")
        course.build_book(source, out)

    return built_once(tmp_path_factory, "book", build) / "_build"


def assignment_masters() -> list[Path]:
    return [p for p in course.master_notebooks() if course.is_assignment(nbformat.read(p, as_version=4))]
