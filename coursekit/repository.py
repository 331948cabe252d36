"""The course repository: where its parts are, and how coursekit runs the tools it drives.

Every other module of coursekit finds the masters, ``dist/`` and ``_build/`` here, and logs and runs
commands (``otter assign``, ``jupyter-book``) with :func:`log` and :func:`run`.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "notebooks"
DIST = ROOT / "dist"
BUILD = ROOT / "_build"
BOOK_SOURCE = BUILD / "source"


def log(message: str) -> None:
    """Print ``message`` for the person at the terminal; a character the terminal cannot show is escaped."""
    print(f"[course] {message}".encode("utf-8", "backslashreplace").decode("utf-8"), flush=True)


@contextmanager
def stage(name: str) -> Iterator[None]:
    """Log a stage of a build as it starts and, with the seconds it took, as it ends."""
    log(f"{name} ...")
    started = time.perf_counter()
    yield
    log(f"{name}: done in {time.perf_counter() - started:.0f} s")


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    log(" ".join(str(part) for part in command))
    return subprocess.run([str(part) for part in command], check=True, **kwargs)


def tool(name: str) -> str:
    """Path of a console script installed next to this Python (the course's virtual environment)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name
