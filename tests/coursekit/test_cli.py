"""The command line, ``python -m coursekit COMMAND`` (:mod:`coursekit.cli`), and the Makefile that wraps it."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys

import pytest

from conftest import ROOT
from coursekit import cli


@pytest.mark.parametrize("command", sorted(cli.COMMANDS))
def test_every_command_is_a_module_main(command):
    module = importlib.import_module(cli.COMMANDS[command][0])
    assert callable(module.main), command
    with pytest.raises(SystemExit) as stop:  # its own --help, under the command's name
        cli.main([command, "--help"])
    assert stop.value.code == 0


def test_the_makefile_runs_only_known_commands():
    used = re.findall(r"\$\(PY\) -m coursekit ([\w-]+)", (ROOT / "Makefile").read_text())
    assert {"assign", "book", "pdf", "release", "grade"} <= set(used) <= set(cli.COMMANDS), used
    assert "tools/" not in (ROOT / "Makefile").read_text()


def test_usage_lists_every_command_and_an_unknown_one_fails(capsys):
    done = subprocess.run([sys.executable, "-m", "coursekit", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0 and all(command in done.stdout for command in cli.COMMANDS), done.stdout
    assert cli.main(["no-such-command"]) == 2
    assert "unknown command 'no-such-command'" in capsys.readouterr().err
    assert cli.main([]) == 2
