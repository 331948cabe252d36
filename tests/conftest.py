"""Shared fixtures: the course released (and its website built) once per test session.

``make test`` runs pytest in two processes (pytest-xdist, ``--dist loadfile``): every test file,
and every notebook under nbval, is one unit that one process runs from start to end. The release
and the book are built once for the whole session: on a whole-suite run a third process starts
building them with the session (``pytest_sessionstart``), and a test that needs them waits for it
(a file lock) and reuses them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from coursekit.build.assign import assign
from coursekit.build.book import build_book, stage_book
from coursekit.notebooks import is_assignment, master_notebooks

ROOT = Path(__file__).resolve().parents[1]

PREBUILD = pytest.StashKey[subprocess.Popen]()


def build_release(folder: Path) -> None:
    """``otter assign`` on every master, as ``make assignments`` does, without otter's own test run."""
    assign(folder, run_tests=False)


def build_website(release: Path, out: Path) -> None:
    """The website built strictly from the student notebooks, as ``make book`` does."""
    build_book(stage_book(release / "student", out / "_build" / "source"), out)


def shared_build(shared: Path, name: str, build) -> Path:
    """``build(shared / name)`` once for every process of a session; the others wait for it (a file lock).

    A build that failed is not tried again by the next process: it raises with the first one's error.
    """
    folder, failed = shared / name, shared / f"{name}.failed"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if failed.exists():
            raise RuntimeError(f"building {name} failed in another test process: {failed.read_text()}")
        if not (folder / ".built").exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            try:
                build(folder)
            except BaseException as error:
                failed.write_text(f"{type(error).__name__}: {error} (log: {shared / 'prebuild.log'})")
                raise
            (folder / ".built").touch()
    return folder


def built_once(tmp_path_factory, name: str, build) -> Path:
    """``build(folder)`` once per session, even across pytest-xdist's processes."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    return shared_build(tmp_path_factory.getbasetemp().parent, name, build)  # the session's basetemp


def prebuild(shared: Path) -> None:
    """The release, then the website: what the slowest tests wait for, started with the session."""
    release = shared_build(shared, "dist", build_release)
    shared_build(shared, "book", lambda out: build_website(release, out))


def prebuild_command(shared: Path | None) -> list[str]:
    """The command that runs :func:`prebuild` into ``shared`` (None: only its imports), from the checkout.

    Run from the checkout, so that ``coursekit`` is the package and not ``tests/coursekit`` (which
    mirrors it: a namespace package wherever it comes first on the path), with ``tests/`` after it.
    """
    code = f"import sys; sys.path.insert(1, {str(Path(__file__).parent)!r}); import conftest"
    if shared is not None:
        code += f"; conftest.prebuild(__import__('pathlib').Path({str(shared)!r}))"
    return [sys.executable, "-c", code]


def pytest_addoption(parser):
    parser.addoption(
        "--every-wrong-answer",
        action="store_true",
        help="grade every catalogued wrong answer (notebooks/wrong-answers/), not only each "
        "question's first mistake and first shortcut",
    )


def pytest_sessionstart(session):
    """On a whole-suite run in several processes, build the release and the website from the start.

    pytest-xdist's controller runs no test; it starts ``prebuild`` in a process of its own (output in
    ``prebuild.log`` of the session's basetemp), so that the book builds on one core while the
    workers run the unit tests and the notebooks, and the tests that need it find it built.
    """
    config = session.config
    whole_suite = config.args_source == pytest.Config.ArgsSource.TESTPATHS
    if (
        "PYTEST_XDIST_WORKER" in os.environ
        or not getattr(config.option, "numprocesses", None)
        or not whole_suite
        or "not slow" in (config.option.markexpr or "")
    ):
        return
    shared = config._tmp_path_factory.getbasetemp()
    with open(shared / "prebuild.log", "w") as log:
        config.stash[PREBUILD] = subprocess.Popen(
            prebuild_command(shared),
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
        )


def pytest_sessionfinish(session):
    process = session.config.stash.get(PREBUILD, None)
    if process is not None and process.poll() is None:
        process.terminate()  # the run ended (or was interrupted) before anything needed it
        process.wait()


@pytest.fixture(scope="session")
def release(tmp_path_factory) -> Path:
    """``otter assign`` on every master, as ``make assignments`` does, into a temporary dist/.

    Without otter's own run of each master's tests, which executes every notebook once more:
    tests/test_exercises.py grades every solution through the autograder instead (with a blank
    and the typical wrong answers), in a fraction of the time.
    """
    return built_once(tmp_path_factory, "dist", build_release)


@pytest.fixture(scope="session")
def built_book(release, tmp_path_factory) -> Path:
    """The website built strictly from the student notebooks, as ``make book`` does."""
    return built_once(tmp_path_factory, "book", lambda out: build_website(release, out)) / "_build"


def assignment_masters() -> list[Path]:
    return [p for p in master_notebooks() if is_assignment(nbformat.read(p, as_version=4))]
