"""The benchmarks must keep running (they are read, not asserted on: no timing is checked here)."""

import subprocess
import sys

from conftest import ROOT


def test_benchmarks_run_and_report_ratios():
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"], capture_output=True, text=True, check=True
    )
    lines = [line for line in result.stdout.splitlines() if "ratio" in line]
    assert lines, result.stdout + result.stderr
    for line in lines:
        float(line.rsplit("ratio", 1)[1])  # a number, whatever its value
