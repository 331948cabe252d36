"""Autograding support: a time limit on every cell of a graded submission.

otter-grader executes a student's whole notebook and then runs each question's tests. A cell
that never finishes (an infinite loop in an answer, or in a test calling that answer) would stall
the whole submission, and locally (``otter run``) there is no time limit at all. The plugin below
adds one: each cell, and so each question's check, gets at most ``seconds`` seconds; past that a
``TimeoutError`` is raised inside it, that question's tests fail, and grading moves on to the next
question.

It is named in each master notebook's assignment configuration::

    generate:
      plugins:
        - coursekit.grading.time_limit.CellTimeLimit:
            seconds: 30

This module is only imported by the grader; it needs ``otter-grader`` installed.
"""

from __future__ import annotations

import nbformat
from otter.plugins import AbstractOtterPlugin

__all__ = ["CellTimeLimit", "time_limit_source"]

DEFAULT_SECONDS = 60


def time_limit_source(seconds: float) -> str:
    """Source of a notebook cell that limits every later cell to ``seconds`` of wall time.

    The cell registers IPython ``pre_run_cell`` / ``post_run_cell`` hooks that arm and disarm a
    ``SIGALRM`` timer. When the timer fires it raises ``TimeoutError`` in the running code and
    re-arms itself, so a cell that catches the first error and loops again is stopped again.

    Parameters
    ----------
    seconds : float
        Wall-time budget of each cell, > 0.

    Returns
    -------
    str
        Python source for a code cell.
    """
    seconds = float(seconds)
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0; got {seconds}.")
    return f"""\
def _lecturekit_time_limit(seconds={seconds!r}):
    import signal
    shell = get_ipython()

    def stop(signum, frame):
        signal.setitimer(signal.ITIMER_REAL, seconds)
        raise TimeoutError(f"stopped by the grader: this cell ran for more than {{seconds:g}} s")

    signal.signal(signal.SIGALRM, stop)
    shell.events.register("pre_run_cell", lambda *_: signal.setitimer(signal.ITIMER_REAL, seconds))
    shell.events.register("post_run_cell", lambda *_: signal.setitimer(signal.ITIMER_REAL, 0))

_lecturekit_time_limit()
del _lecturekit_time_limit
"""


class CellTimeLimit(AbstractOtterPlugin):
    """otter-grader plugin: stop any cell of a submission that runs longer than ``seconds``.

    Configuration (``plugin_config``): ``seconds`` (default 60).
    """

    def before_execution(self, submission):
        """Insert the time-limit cell at the top of a notebook submission."""
        seconds = (self.plugin_config or {}).get("seconds", DEFAULT_SECONDS)
        if isinstance(submission, str):  # a .py submission
            return time_limit_source(seconds) + "\n" + submission
        submission.cells.insert(0, nbformat.v4.new_code_cell(time_limit_source(seconds)))
        return submission
