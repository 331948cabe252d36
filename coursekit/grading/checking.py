"""A question's check, in a process of its own: stopped at its deadline, bounded in memory.

The tests of a question run in the grader, never where the student's code ran
(:mod:`coursekit.grading.grader`); but they run *on* the student's answers, and an answer can make a
test's own code run for ever or take the machine's memory: a SymPy expression ``10**(2**30000)``
that a test turns into a float, a forged sparse matrix whose shape asks for gigabytes. An interval
timer cannot stop Python inside one long call into C (a huge integer power never returns to the
interpreter), so each check runs in a **child forked from the grading process**:

- it looks up the answers in the worker and calls the student's functions there (through the
  same socket, :class:`coursekit.grading.sandbox.Sandbox`), runs the tests and sends back a
  :class:`Verdict` of a few hundred bytes;
- the grading process waits for it until the check's deadline and then kills it, whatever it is
  doing; a check that times out scores 0 ("timed out ... while checking this question");
- its address space may grow by at most :data:`CHECK_MEMORY` over the grading process's; a check
  that runs out scores 0 ("the check ran out of memory on this answer");
- every reply of the worker is read and decoded in the child, so what a submission sends never
  reaches the grading process's own memory.

Forking a process that has imported the checker's libraries costs a few milliseconds.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import builtins
import faulthandler
import inspect
import json
import os
import resource
import select
import signal
import sys
import time
from dataclasses import asdict, dataclass, field

from coursekit.grading.sandbox import MAX_CHECK_BYTES, Outcome, Sandbox
from coursekit.grading.untrusted import identifier, plain

__all__ = ["CHECK_MEMORY", "Verdict", "run"]

CHECK_MEMORY = 2**30
GRACE_SECONDS = 1.0  # past the deadline, for the child to say it timed out itself
MAX_VERDICT = 1 << 16


@dataclass
class Verdict:
    """What one question's check came to.

    ``abort`` is empty when the tests ran; otherwise the status of an
    :class:`~coursekit.grading.sandbox.Outcome` that stopped them (``"timeout"``, ``"died"``,
    ``"memory"``, ``"flood"``: the worker's) or ``"check-memory"``, ``"check-died"`` (the check's own
    process ran out of memory or died).
    """

    score: float = 0.0
    failed: int = 0
    tests: int = 0
    raised: str = ""  # the first exception type the student's function raised on a test input
    said: str = ""  # the first failed public test's message
    errors: list = field(default_factory=list)  # exception types raised in the worker, in order
    abort: str = ""


class _Abort(BaseException):
    """A check cannot go on: its time is up or the worker died (not catchable as Exception)."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.status)
        self.outcome = outcome


def _student_error(name: str) -> Exception:
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        return kind(f"the answer raised {name}")
    return RuntimeError(f"the answer raised {name}")


class _Remote:
    """Stands for a student's function inside a test: calls go to the worker, answers come back as data."""

    def __init__(self, check: _Check, name: str):
        self._check, self.__name__ = check, name

    def __call__(self, *args, **kwargs):
        outcome = self._check.sandbox.call(self.__name__, args, kwargs, self._check.remaining())
        if outcome.fatal:
            raise _Abort(outcome)
        if outcome.status != "ok":
            self._check.raised.append(outcome.detail)
            raise _student_error(outcome.detail)
        return outcome.value


@dataclass
class _Check:
    sandbox: Sandbox
    deadline: float
    raised: list = field(default_factory=list)

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Abort(Outcome("timeout"))
        return left


def answers(check: _Check, names) -> dict:
    """The environment the tests take: each name's value from the worker, or a stand-in for a function."""
    environment = {}
    for name in sorted(names):
        found = check.sandbox.lookup(name, check.remaining())
        if found.fatal:
            raise _Abort(found)
        kind, value = found.value if found.status == "ok" else ("missing", None)
        if kind == "function":
            environment[name] = _Remote(check, name)
        elif kind == "value":
            environment[name] = value
    return environment


def _last_line(message: str | None) -> str:
    lines = (message or "").strip().splitlines()
    return lines[-1] if lines else ""


def feedback(message: str | None, limit: int = 300) -> str:
    """The message of a failed public check's assertion (otter's last line), shortened to ``limit``."""
    kind, _, text = _last_line(message).partition(": ")
    return plain(text.strip(), limit) if kind == "AssertionError" else ""


def _checked(tests, sandbox: Sandbox, deadline: float) -> Verdict:
    """In the child: look the answers up, run the tests, say how it went."""
    check = _Check(sandbox, deadline)
    sandbox.allowance = MAX_CHECK_BYTES
    sandbox.errors = []
    try:
        names = {p for tc in tests.test_cases for p in inspect.signature(tc.body.test_func).parameters}
        tests.run(answers(check, names - {"env"}))
    except _Abort as abort:
        return Verdict(errors=sandbox.errors, abort=abort.outcome.status)
    results = tests.test_case_results
    if any(_last_line(r.message).startswith("MemoryError") for r in results if not r.passed):
        return Verdict(errors=sandbox.errors, abort="check-memory")  # a test ran out of this process's memory
    said = [feedback(r.message) for r in results if not r.passed and not r.test_case.hidden]
    return Verdict(score=float(tests.score), failed=sum(not r.passed for r in results), tests=len(results),
                   raised=check.raised[0] if check.raised else "", said=next((s for s in said if s), ""),
                   errors=sandbox.errors)


def _child(tests, sandbox: Sandbox, deadline: float, out: int) -> None:  # pragma: no cover - forked child
    """The forked child's whole life: limits, the check, the verdict on ``out``, exit."""
    try:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
            signal.signal(number, signal.SIG_DFL)
        faulthandler.disable()  # a crash of the check is its verdict, not a dump into the grader's log
        null = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(null, descriptor)
        sys.stdout = sys.stderr = open(os.devnull, "w")  # fresh objects: no lock held by another thread
        sandbox.detached = True  # a fault ends only this process's use of the worker (the parent restarts it)
        size = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (size + CHECK_MEMORY, size + CHECK_MEMORY))
        verdict = _checked(tests, sandbox, deadline)
    except MemoryError:
        verdict = Verdict(abort="check-memory")
    except BaseException:  # noqa: BLE001 - whatever the check's code raised: this process just reports it
        verdict = Verdict(abort="check-died")
    try:
        os.write(out, json.dumps(asdict(verdict)).encode()[:MAX_VERDICT])
    finally:
        os._exit(0)


def _address_space() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run(tests, sandbox: Sandbox, deadline: float) -> Verdict:
    """Run ``tests`` (otter's test file object) on the answers in ``sandbox``'s worker, in a child.

    Parameters
    ----------
    tests : otter.test_files.abstract_test.TestFile
        The question's tests (they are run in the child; this copy is not changed).
    sandbox : Sandbox
        The submission's worker, with its cells run.
    deadline : float
        ``time.monotonic()`` value by which the check must be done.

    Returns
    -------
    Verdict
        Its ``errors`` are also appended to ``sandbox.errors``. After a verdict with ``abort``, the
        worker may be in any state: the caller restarts it.
    """
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        _child(tests, sandbox, deadline, write)
    os.close(write)
    data, timed_out = b"", False
    try:
        while len(data) <= MAX_VERDICT:
            left = deadline + GRACE_SECONDS - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                timed_out = True
                break
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read)
        if timed_out:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        os.waitpid(pid, 0)
    if timed_out:
        return Verdict(abort="timeout")
    try:
        verdict = Verdict(**json.loads(data))
    except (ValueError, TypeError):
        return Verdict(abort="check-died")
    verdict.errors = [identifier(e) for e in verdict.errors]
    sandbox.errors.extend(verdict.errors)
    return verdict
