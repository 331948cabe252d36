"""A question's check in a process of its own (coursekit.grading.checking): stopped at its deadline inside a
call into C that no timer interrupts, bounded in memory, and reporting the student's exceptions and the
public checks' messages as before."""

from __future__ import annotations

import time

import pytest
from otter.test_files.exception_test import ExceptionTestFile

from coursekit.grading import checking
from coursekit.grading.isolation import Environment
from coursekit.grading.sandbox import Sandbox
from coursekit.grading.zygote import WorkerPool

TESTS = '''
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
'''


@pytest.fixture(scope="module")
def worker(tmp_path_factory):
    """An unconfined worker (no sandbox is needed to test the check's own process) with two answers."""
    with WorkerPool("off") as pool:
        sandbox = Sandbox(pool.zygote(Environment()))
        sandbox.start()
        outcome = sandbox.run("answer = 42\ndef twice(x):\n    if x < 0:\n        raise ValueError(x)\n"
                              "    return 2 * x\n", 60)
        assert outcome.status == "ok", outcome
        yield sandbox
        sandbox.close()


def check(sandbox, body: str, seconds: float = 5.0) -> checking.Verdict:
    tests = ExceptionTestFile.from_string(TESTS.format(body=body), path="q1.py")
    return checking.run(tests, sandbox, time.monotonic() + seconds)


def test_a_right_answer_scores_and_a_wrong_one_says_why(worker):
    right = check(worker, "assert answer == 42 and twice(3) == 6")
    assert (right.score, right.failed, right.abort) == (2, 0, "")
    wrong = check(worker, "assert twice(-1) == -2")
    assert (wrong.score, wrong.failed, wrong.raised) == (0, 1, "ValueError")
    assert "ValueError" in worker.errors  # as the cells' errors, for the grader's NameError rule


def test_a_public_checks_message_comes_back_as_plain_text(worker):
    tests = ExceptionTestFile.from_string(TESTS.format(body="assert False").replace(
        '"Assign a whole number to answer."', '"Caf\\u00e9\\t" + str(answer)').replace(
        "isinstance(answer, int)", "False"), path="q1.py")
    verdict = checking.run(tests, worker, time.monotonic() + 5)
    assert verdict.said == "Caf??42"


def test_a_check_stuck_in_c_is_killed_at_its_deadline(worker):
    start = time.monotonic()
    verdict = check(worker, "assert 10 ** (2 ** 30000) > 0", seconds=2)  # one C call: no timer stops it
    assert verdict.abort == "timeout"
    assert time.monotonic() - start < 2 + checking.GRACE_SECONDS + 2


def test_a_check_that_takes_too_much_memory_scores_nothing(worker):
    verdict = check(worker, f"block = bytearray({checking.CHECK_MEMORY + 2**28})\n    assert block")
    assert verdict.abort == "check-memory"
    assert check(worker, "assert answer == 42").score == 2  # the grader and the worker go on


def test_a_crashing_check_is_reported(worker):
    assert check(worker, "import os\n    os._exit(3)").abort == "check-died"
    assert check(worker, "import ctypes\n    ctypes.string_at(0)").abort == "check-died"
