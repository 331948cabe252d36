"""otter-grader's per-cell time limit (:mod:`coursekit.grading.time_limit`), the plugin the masters name."""

from __future__ import annotations

import subprocess
import sys

import nbformat

from coursekit.grading.time_limit import CellTimeLimit, time_limit_source


def test_the_plugin_puts_the_limit_before_the_first_cell():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    plugin = CellTimeLimit("submission.ipynb", {}, {"seconds": 7})
    out = plugin.before_execution(nb)
    assert [c.source for c in out.cells][1:] == ["x = 1"]
    assert out.cells[0].source == time_limit_source(7)
    assert plugin.before_execution("x = 1").endswith("\nx = 1")  # a .py submission


def test_a_cell_past_the_limit_raises_and_the_next_runs():
    program = (
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from coursekit.grading.time_limit import time_limit_source\n"
        "shell = InteractiveShell.instance()\n"
        "shell.run_cell(time_limit_source(0.5))\n"
        "looped = shell.run_cell('while True: pass')\n"
        "after = shell.run_cell('y = 2')\n"
        "print(type(looped.error_in_exec).__name__, after.success)\n"
    )
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert done.stdout.split()[-2:] == ["TimeoutError", "True"], done.stdout + done.stderr
