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
- the check may use ``seconds`` of CPU time: the answers' (the worker's, counted by the kernel,
  :meth:`coursekit.grading.zygote.Zygote.cpu_seconds`) and its own together, and has a wall-clock
  backstop (:func:`coursekit.grading.sandbox.backstop`), so that a busy grading machine costs no
  points; the child stops a request to the worker at its limit, and the grading process kills the
  child past the limit (or the backstop) whatever it is doing; a check that times out scores 0
  ("timed out ... while checking this question"). Where the sandbox's CPU time cannot be read,
  ``seconds`` is a wall-clock limit;
- its address space may grow by at most :data:`CHECK_MEMORY` over the grading process's; a check
  that runs out scores 0 ("the check ran out of memory on this answer");
- every reply of the worker is read and decoded in the child, so what a submission sends never
  reaches the grading process's own memory.

Forking a process that has imported the checker's libraries costs a few milliseconds.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import builtins
import contextlib
import faulthandler
import inspect
import json
import math
import os
import resource
import select
import signal
import sys
import time
from dataclasses import asdict, dataclass, field

from coursekit.choices import translate
from coursekit.grading.sandbox import MAX_CHECK_BYTES, POLL_SECONDS, Outcome, Sandbox, backstop
from coursekit.grading.untrusted import identifier, plain
from coursekit.grading.zygote import process_seconds

__all__ = ["CHECK_MEMORY", "Verdict", "run"]

CHECK_MEMORY = 2**30
GRACE_SECONDS = 1.0  # past the limits, for the child to say it timed out itself
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
    limit: str = ""  # which limit a timeout reached: "20 s of CPU time", "90 s of wall-clock time"


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
        outcome = self._check.sandbox.call(self.__name__, args, kwargs, *self._check.remaining())
        if outcome.fatal:
            raise self._check.abort(outcome)
        if outcome.status != "ok":
            self._check.raised.append(outcome.detail)
            raise _student_error(outcome.detail)
        return outcome.value


class _Check:
    """One check's limits, in its process: ``seconds`` of CPU time (the worker's and its own) by
    ``wall_end``, ``wall`` seconds after the check began."""

    def __init__(self, sandbox: Sandbox, seconds: float, wall_end: float, wall: float):
        self.sandbox, self.seconds, self.wall_end, self.wall = sandbox, seconds, wall_end, wall
        self.raised: list[str] = []
        self.start = _used(sandbox)

    def remaining(self) -> tuple[float, float]:
        """The CPU seconds left and the wall-clock end, for the next request to the worker."""
        now = time.monotonic()
        if now >= self.wall_end:
            raise self.abort(Outcome("timeout", "wall-clock time"))
        used = _used(self.sandbox)
        if used is None or self.start is None:  # no CPU time to count: the wall clock alone
            return self.wall_end - now, self.wall_end
        left = self.seconds - (used - self.start)
        if left <= 0:
            raise self.abort(Outcome("timeout", "CPU time"))
        return left, self.wall_end

    def abort(self, outcome: Outcome) -> _Abort:
        """What ends the check for ``outcome``; a timeout names the check's limit, not the request's."""
        if outcome.status == "timeout":
            cpu = outcome.detail.endswith("CPU time")
            outcome = Outcome(
                "timeout", f"{self.seconds:g} s of CPU time" if cpu else f"{self.wall:g} s of wall-clock time"
            )
        return _Abort(outcome)


def _used(sandbox: Sandbox) -> float | None:
    """The CPU time of the worker's sandbox and of this process, or None if the sandbox's cannot be read."""
    worker = sandbox.zygote.cpu_seconds()
    return None if worker is None else worker + time.process_time()


def _seconds(span: float) -> float:
    return round(max(0.0, span), 1)


def answers(check: _Check, names) -> dict:
    """The environment the tests take: each name's value from the worker, or a stand-in for a function."""
    environment = {}
    for name in sorted(names):
        found = check.sandbox.lookup(name, *check.remaining())
        if found.fatal:
            raise check.abort(found)
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


def _checked(tests, sandbox: Sandbox, seconds: float, wall_end: float, wall: float, variant: dict) -> Verdict:
    """In the child: look the answers up, run the tests on the student's ``variant``, say how it went."""
    check = _Check(sandbox, seconds, wall_end, wall)
    sandbox.allowance = MAX_CHECK_BYTES
    sandbox.errors = []
    try:
        names = {p for tc in tests.test_cases for p in inspect.signature(tc.body.test_func).parameters}
        if "params" in variant:  # the tests read the question's numbers from their global VARIANT
            for case in tests.test_cases:
                case.body.test_func.__globals__["VARIANT"] = dict(variant["params"])
        environment = answers(check, names - {"env", "VARIANT"})
        if "options" in variant and tests.name in environment:  # the student's letters and forms, in the master's
            environment[tests.name] = translate(environment[tests.name], variant["options"], variant.get("flips", ()))
        tests.run(environment)
    except _Abort as abort:
        outcome = abort.outcome
        return Verdict(
            errors=sandbox.errors, abort=outcome.status, limit=outcome.detail if outcome.status == "timeout" else ""
        )
    results = tests.test_case_results
    if any(_last_line(r.message).startswith("MemoryError") for r in results if not r.passed):
        return Verdict(errors=sandbox.errors, abort="check-memory")  # a test ran out of this process's memory
    said = [feedback(r.message) for r in results if not r.passed and not r.test_case.hidden]
    return Verdict(
        score=float(tests.score),
        failed=sum(not r.passed for r in results),
        tests=len(results),
        raised=check.raised[0] if check.raised else "",
        said=next((s for s in said if s), ""),
        errors=sandbox.errors,
    )


def _child(
    tests, sandbox: Sandbox, seconds: float, wall_end: float, wall: float, variant: dict, out: int
) -> None:  # pragma: no cover - forked child
    """The forked child's whole life: limits, the check, the verdict on ``out``, exit."""
    try:
        for number in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
            signal.signal(number, signal.SIG_DFL)
        faulthandler.disable()  # a crash of the check is its verdict, not a dump into the grader's log
        null = os.open(os.devnull, os.O_RDWR)
        for descriptor in (0, 1, 2):
            os.dup2(null, descriptor)
        # Fresh objects, no lock held by another thread, open for the rest of this process's life.
        sys.stdout = sys.stderr = open(os.devnull, "w")  # noqa: SIM115
        sandbox.detached = True  # a fault ends only this process's use of the worker (the parent restarts it)
        size = _address_space()
        resource.setrlimit(resource.RLIMIT_AS, (size + CHECK_MEMORY, size + CHECK_MEMORY))
        verdict = _checked(tests, sandbox, seconds, wall_end, wall, variant)
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


def run(tests, sandbox: Sandbox, seconds: float, wall_end: float | None = None, variant: dict | None = None) -> Verdict:
    """Run ``tests`` (otter's test file object) on the answers in ``sandbox``'s worker, in a child.

    Parameters
    ----------
    tests : otter.test_files.abstract_test.TestFile
        The question's tests (they are run in the child; this copy is not changed).
    sandbox : Sandbox
        The submission's worker, with its cells run.
    seconds : float
        CPU time the check may use, the worker's and its own process's together (a wall-clock limit
        where the sandbox's CPU time cannot be read).
    wall_end : float or None
        ``time.monotonic()`` value by which the check must be done in any case; it is never later
        than the backstop, :func:`coursekit.grading.sandbox.backstop` of ``seconds`` from now.
    variant : dict or None
        The question's variant (:meth:`coursekit.grading.variant.Variants.of`): its ``params`` are the
        tests' global ``VARIANT``; with ``options`` (and ``flips``), the answer is translated to the
        master's letters (and forms).

    Returns
    -------
    Verdict
        Its ``errors`` are also appended to ``sandbox.errors``. After a verdict with ``abort``, the
        worker may be in any state: the caller restarts it.
    """
    now, zygote = time.monotonic(), sandbox.zygote
    start = zygote.cpu_seconds()
    metered = start is not None
    end = now + (backstop(seconds) if metered else seconds)
    wall_end = end if wall_end is None else min(wall_end, end)
    wall = _seconds(wall_end - now)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        _child(tests, sandbox, seconds, wall_end, wall, variant or {}, write)
    os.close(write)
    data, limit = b"", ""
    # The child's own CPU time and the worker's, read when they could have run out (as the sandbox does).
    rate, check_at = zygote.cpus + 1, now + seconds / (zygote.cpus + 1) if metered else math.inf
    try:
        while len(data) <= MAX_VERDICT and not limit:
            now = time.monotonic()
            if now >= wall_end + GRACE_SECONDS:
                limit = f"{wall:g} s of wall-clock time"
                break
            if now >= check_at:
                worker, own = zygote.cpu_seconds(), process_seconds(pid)
                left = seconds + GRACE_SECONDS - (worker - start if worker is not None else 0) - (own or 0)
                if left <= 0:
                    limit = f"{seconds:g} s of CPU time"
                    break
                check_at = now + max(POLL_SECONDS, left / rate)
            if not select.select([read], [], [], min(wall_end + GRACE_SECONDS, check_at) - now)[0]:
                continue
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(read)
        if limit:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    if limit:
        return Verdict(abort="timeout", limit=limit)
    try:
        verdict = Verdict(**json.loads(data))
    except (ValueError, TypeError):
        return Verdict(abort="check-died")
    verdict.errors = [identifier(e) for e in verdict.errors]
    verdict.limit = plain(verdict.limit, 60)
    sandbox.errors.extend(verdict.errors)
    return verdict
