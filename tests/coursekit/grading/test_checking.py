"""A question's check in a process of its own (coursekit.grading.checking): stopped at its deadline inside a
call into C that no timer interrupts, bounded in memory, and reporting the student's exceptions and the
public checks' messages as before."""

from __future__ import annotations

import time

import pytest
from otter.test_files.exception_test import ExceptionTestFile

from coursekit.grading import checking
from coursekit.grading import sandbox as sandbox_module
from coursekit.grading.isolation import Environment
from coursekit.grading.sandbox import Sandbox, backstop
from coursekit.grading.zygote import WorkerPool

TESTS = """
from otter.test_files import test_case
OK_FORMAT = False
name = "q1"
points = [0, 2]

@test_case(points=None, hidden=False)
def test_q1_form(answer, twice):
    assert isinstance(answer, int), "Assign a whole number to answer."

@test_case(points=None, hidden=True)
def test_q1_value(answer, twice):
    {body}
"""


ANSWERS = "answer = 42\ndef twice(x):\n    if x < 0:\n        raise ValueError(x)\n    return 2 * x\n"


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """An unconfined worker (no sandbox is needed to test the check's own process) with two answers."""
    with WorkerPool("off") as pool:
        sandbox = Sandbox(pool.zygote(Environment()))
        sandbox.start()
        outcome = sandbox.run(ANSWERS, 60)
        assert outcome.status == "ok", outcome
        yield sandbox
        sandbox.close()


def check(sandbox, body: str, seconds: float = 5.0) -> checking.Verdict:
    tests = ExceptionTestFile.from_string(TESTS.format(body=body), path="q1.py")
    return checking.run(tests, sandbox, seconds)


def test_a_right_answer_scores_and_a_wrong_one_says_why(worker):
    right = check(worker, "assert answer == 42 and twice(3) == 6")
    assert (right.score, right.failed, right.abort) == (2, 0, "")
    wrong = check(worker, "assert twice(-1) == -2")
    assert (wrong.score, wrong.failed, wrong.raised) == (0, 1, "ValueError")
    assert "ValueError" in worker.errors  # as the cells' errors, for the grader's NameError rule


def test_a_public_checks_message_comes_back_as_plain_text(worker):
    tests = ExceptionTestFile.from_string(
        TESTS.format(body="assert False")
        .replace('"Assign a whole number to answer."', '"Caf\\u00e9\\t" + str(answer)')
        .replace("isinstance(answer, int)", "False"),
        path="q1.py",
    )
    verdict = checking.run(tests, worker, 5)
    assert verdict.said == "Caf??42"


# The wall-clock backstop, where a test is about the CPU time limit: so far off that only the CPU
# limit can end the check, however busy the shared machine (the tests' liveness bound).
FAR = 300.0


@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setattr(checking, "backstop", lambda seconds: FAR)
    monkeypatch.setattr(sandbox_module, "backstop", lambda seconds: FAR)


def test_a_check_stuck_in_c_is_killed_at_its_limit(worker, cpu_only):
    start = time.monotonic()
    verdict = check(worker, "assert 10 ** (2 ** 30000) > 0", seconds=2)  # one C call: no timer stops it
    assert (verdict.abort, verdict.limit) == ("timeout", "2 s of CPU time")  # the check's own CPU time counts
    # A liveness bound, not a timing: killed by the CPU limit rather than left until the backstop.
    assert time.monotonic() - start < FAR


SPIN_AND_NAP = (
    "import time\ndef spin(seconds):\n    end = time.process_time() + seconds\n"
    "    while time.process_time() < end:\n        pass\n    return 1\n"
    "def nap():\n    time.sleep(600)\n"
)


@pytest.fixture
def spinner(worker):
    """The worker, with answers that use CPU time and that wait; restarted with the usual ones after."""
    try:
        assert worker.run(SPIN_AND_NAP, 60).status == "ok"
        yield worker, TESTS.replace("answer, twice", "spin, nap")
    finally:
        worker.start()  # as the grader does after an aborted check
        assert worker.run(ANSWERS, 60).status == "ok"


def test_the_answers_cpu_time_counts_against_the_checks_seconds(spinner, cpu_only):
    worker, tests = spinner
    within = ExceptionTestFile.from_string(tests.format(body="assert spin(0.3) == 1"), path="q1.py")
    assert checking.run(within, worker, 2).score == 2
    over = ExceptionTestFile.from_string(tests.format(body="assert spin(5) == 1"), path="q1.py")
    verdict = checking.run(over, worker, 1)
    assert (verdict.abort, verdict.limit) == ("timeout", "1 s of CPU time")


def test_an_answer_that_waits_meets_the_wall_clock_backstop(spinner):
    worker, tests = spinner
    napping = ExceptionTestFile.from_string(tests.format(body="nap()"), path="q1.py")
    verdict = checking.run(napping, worker, 0.5)
    assert (verdict.abort, verdict.limit) == ("timeout", f"{backstop(0.5):g} s of wall-clock time")


def test_a_check_that_takes_too_much_memory_scores_nothing(worker):
    verdict = check(worker, f"block = bytearray({checking.CHECK_MEMORY + 2**28})\n    assert block")
    assert verdict.abort == "check-memory"
    assert check(worker, "assert answer == 42").score == 2  # the grader and the worker go on


def test_a_crashing_check_is_reported(worker):
    assert check(worker, "import os\n    os._exit(3)").abort == "check-died"
    assert check(worker, "import ctypes\n    ctypes.string_at(0)").abort == "check-died"
