"""Where the course's parts are (:mod:`coursekit.repository`), and running the tools it drives."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coursekit import repository


def test_the_paths_are_the_checkout():
    assert (repository.ROOT / "coursekit" / "repository.py").is_file()
    assert repository.MASTERS == repository.ROOT / "notebooks" and any(repository.MASTERS.glob("*.ipynb"))
    assert repository.BOOK_SOURCE.parent == repository.BUILD == repository.ROOT / "_build"


def test_tool_prefers_this_environment():
    assert repository.tool("python") == str(Path(sys.executable).parent / "python")
    assert repository.tool("no-such-tool") == "no-such-tool"


def test_run_logs_and_fails_loudly(capsys):
    assert repository.run([sys.executable, "-c", "pass"]).returncode == 0
    assert "[course]" in capsys.readouterr().out
    with pytest.raises(subprocess.CalledProcessError):
        repository.run([sys.executable, "-c", "raise SystemExit(3)"])
