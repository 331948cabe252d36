"""The grader's side of the worker that runs a student's code: start it, talk to it, limit it.

The grader (:mod:`coursekit.grading.grader`) never runs a submission in its own process: a *worker*
(:mod:`coursekit.grading.worker`), forked for each submission by a zygote in a sandbox of its own
(:mod:`coursekit.grading.zygote`), runs the student's code. A :class:`Sandbox` is the grader's end of
one submission's worker.

A worker answers three requests: run this cell, what is this name, call this function. Limits are
kept from outside:

- **time**: every request may use ``seconds`` of CPU time, counted by the kernel for the worker and
  everything it started (:meth:`Zygote.cpu_seconds`: the sandbox's cgroup, else ``/proc``; never a
  number the worker reports), and has a wall-clock backstop of :func:`backstop` seconds; past
  either the worker and everything it started are killed (a student can ignore or disarm signals
  inside the worker, not this). CPU time, not wall-clock time, so that a busy grading machine
  costs no points: an answer that computes for 15 s is graded alike on an idle machine and on one
  where it gets a third of a CPU and takes 45 s. The backstop stops what uses no CPU (a sleep, a
  wait on a pipe) and what hides its work from the count (where there is no cgroup, a process
  that leaves the worker's tree). Where no CPU time can be read at all (no cgroup and no
  ``/proc``), ``seconds`` is a wall-clock limit, as before. The CPU time is read only when it could
  have run out (never before ``seconds`` divided by the CPUs the sandbox may use, then at least
  every :data:`POLL_SECONDS`): a request that answers in time costs a single read, or none;
- **memory**: ``RLIMIT_AS`` is set in the worker before it runs anything of the student's;
- **the sandbox as a whole**: the zygote and everything it starts share the bounds of a cgroup
  (:mod:`coursekit.grading.zygote`); a worker the kernel kills for that memory bound is reported as
  out of memory;
- **the grader's own memory**: a worker is the student's process and can write anything to its
  end of the socket. The reply to a cell is a status, read up to :data:`RUN_REPLY` bytes; the
  replies that carry answers (to a lookup or a call) are read only in a question's check, a process
  of its own (:mod:`coursekit.grading.checking`), up to :data:`MAX_MESSAGE` bytes and
  :data:`MAX_ITEMS` JSON values each, :data:`MAX_CHECK_BYTES` for one check
  (:attr:`Sandbox.allowance`). A reply too large for these ends the request ("flood").

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import contextlib
import json
import math
import select
import socket
import time
from dataclasses import dataclass
from typing import Any

from coursekit.grading.plain_data import decode, encode
from coursekit.grading.untrusted import identifier, json_values
from coursekit.grading.worker import HEADER
from coursekit.grading.zygote import STARTUP_SECONDS, Zygote

__all__ = ["Outcome", "Sandbox", "backstop"]

MAX_MESSAGE = 32 * 2**20
MAX_ITEMS = 100_000
MAX_CHECK_BYTES = 64 * 2**20
RUN_REPLY = 4096  # a cell's reply is a status and an exception's name
POLL_SECONDS = 0.1  # the least wait between two reads of the CPU time: a request ends at most this late
# The wall-clock backstop: 4 x the CPU seconds tolerates a machine with four runnable processes per
# CPU (a sandbox is held to one CPU's worth and shares it equally; benchmarks/grading_neighbours.py
# measured 1.5 x beside a hostile neighbour), and 10 s more what does not scale with the limit:
# a fresh worker's first page faults, imports and swap on a crowded machine.
BACKSTOP_FACTOR, BACKSTOP_SECONDS = 4.0, 10.0


def backstop(seconds: float) -> float:
    """The wall-clock limit of a request that may use ``seconds`` of CPU time: 4 x ``seconds`` + 10 s."""
    return BACKSTOP_FACTOR * seconds + BACKSTOP_SECONDS


class _Clock:
    """When a request's time is up: the sandbox's CPU time past ``seconds`` or the wall clock past ``wall_end``.

    ``zygote`` None: the wall clock only (``seconds`` from now). Where the zygote's CPU time cannot be
    read, ``seconds`` is a wall-clock limit. :meth:`wait` raises TimeoutError whose message says which limit.
    """

    def __init__(self, zygote: Zygote | None, seconds: float, wall_end: float | None = None):
        now = time.monotonic()
        self.zygote, self.seconds = zygote, seconds
        self.start = zygote.cpu_seconds() if zygote is not None else None
        if self.start is None:
            self.next, self.wall_end, self.wall = math.inf, now + seconds, seconds
        else:
            self.next, self.wall_end = now + seconds / zygote.cpus, now + backstop(seconds)
            self.wall = backstop(seconds)
        if wall_end is not None and wall_end < self.wall_end:
            self.wall_end, self.wall = wall_end, max(0.0, wall_end - now)

    def wait(self) -> float:
        """How long to wait for the worker now (TimeoutError once its time is up)."""
        now = time.monotonic()
        if now >= self.next:
            used = self.zygote.cpu_seconds()
            left = self.seconds - (used - self.start) if used is not None else 0.0
            if left <= 0:
                raise TimeoutError(
                    f"{self.seconds:g} s of CPU time" if used is not None else f"{self.wall:g} s of wall-clock time"
                )
            self.next = now + max(POLL_SECONDS, left / self.zygote.cpus)
        if now >= self.wall_end:
            raise TimeoutError(f"{self.wall:g} s of wall-clock time")
        return min(self.next, self.wall_end) - now


@dataclass
class Outcome:
    """What one request came to.

    ``status`` is ``"ok"``, ``"error"`` (the student's code raised ``detail``, an exception's type
    name), ``"timeout"`` (``detail`` says which limit: ``"20 s of CPU time"``, ``"90 s of wall-clock
    time"``), ``"memory"``, ``"died"`` (the worker exited or broke the channel) or
    ``"flood"`` (it sent more than the grader reads: :data:`MAX_MESSAGE`, :data:`MAX_ITEMS`,
    :attr:`Sandbox.allowance`).
    """

    status: str
    detail: str = ""
    value: Any = None

    @property
    def fatal(self) -> bool:
        """The worker is gone, stuck, out of memory or flooding; it must be restarted."""
        return self.status in ("timeout", "died", "memory", "flood")


class Sandbox:
    """One submission's worker, forked from ``zygote``; restarted by :meth:`start` after a fault.

    Parameters
    ----------
    zygote : Zygote
        Where workers come from (:meth:`WorkerPool.zygote`).
    memory_bytes : int
        Address-space limit of the worker.

    Attributes
    ----------
    allowance : int or None
        Bytes that replies may still total before the worker is stopped as flooding (None: no
        limit but :data:`MAX_MESSAGE` per reply); the grader sets it for each question's check.
    errors : list of str
        The type of every exception the student's code raised in a request (a cell, a call), in
        order; the grader clears it.
    """

    def __init__(self, zygote: Zygote, memory_bytes: int = 2 * 2**30):
        self.zygote, self.memory_bytes = zygote, int(memory_bytes)
        self.channel: socket.socket | None = None
        self.allowance: int | None = None
        self.errors: list[str] = []
        self.detached = False  # in a check's process (coursekit.grading.checking): never touch the zygote
        self._kills = 0

    def start(self) -> None:
        """A fresh worker (ending the current one, if any); WorkerUnavailable if none can be had."""
        self.close(release=False)
        self.channel = self.zygote.spawn(self.memory_bytes)
        # Its empty "ready" message; if none comes, the first request will find the worker dead.
        with contextlib.suppress(TimeoutError, EOFError, OSError):
            self._read(HEADER.size, _Clock(None, STARTUP_SECONDS))

    def close(self, release: bool = True) -> None:
        """End the worker; with ``release``, the submission is done (see :meth:`Zygote.release`)."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None
            if not release and not self.detached:
                self.zygote.reset()
        if release and not self.detached:
            self.zygote.release()

    def _request(
        self,
        message: dict,
        seconds: float,
        expect_value: bool = False,
        limit: int = MAX_MESSAGE,
        wall_end: float | None = None,
    ) -> Outcome:
        if self.channel is None:
            if self.detached:  # a check's process never starts a worker: the grading process does
                return Outcome("died")
            self.start()
        clock = _Clock(self.zygote, seconds, wall_end)
        self._kills = self.zygote.oom_kills()
        try:
            data = json.dumps(message).encode()
            view = memoryview(HEADER.pack(len(data)) + data)
            while view:
                _, ready, _ = select.select([], [self.channel], [], clock.wait())
                if ready:
                    view = view[self.channel.send(view[: 1 << 16]) :]
            (size,) = HEADER.unpack(self._read(HEADER.size, clock))
            if size > limit or (self.allowance is not None and size > self.allowance):
                return self._fail("flood")
            if self.allowance is not None:
                self.allowance -= size
            raw = self._read(size, clock)
            if json_values(raw) > MAX_ITEMS:
                return self._fail("flood")
            reply = json.loads(raw)
            del raw
        except TimeoutError as limit_reached:
            return self._fail("timeout", str(limit_reached))
        except (OSError, EOFError, ValueError, RecursionError):
            return self._fail("died")
        if not isinstance(reply, dict) or reply.get("status") not in ("ok", "error", "memory"):
            return self._fail("died")
        value = reply.pop("value", None)
        if expect_value and value is not None:
            try:
                value = decode(value, max_bytes=2 * MAX_MESSAGE)  # what an answer that fits in a reply needs
            except Exception:  # noqa: BLE001 - plain_data refuses what it cannot decode (ValueError), and more
                return Outcome("error", "an answer that is not plain data")
        detail = identifier(reply.get("detail")) if reply["status"] == "error" else ""
        outcome = Outcome(reply["status"], detail, value if expect_value else None)
        if outcome.status == "error":
            self.errors.append(outcome.detail)
        if outcome.fatal:  # out of memory: what the worker holds may starve every later request
            self.close(release=False)
        return outcome

    def _read(self, size: int, clock: _Clock) -> bytes:
        buffer = bytearray(size)
        view, got = memoryview(buffer), 0
        while got < size:
            ready, _, _ = select.select([self.channel], [], [], clock.wait())
            if not ready:
                continue
            count = self.channel.recv_into(view[got:], min(size - got, 1 << 20))
            if not count:
                raise EOFError
            got += count
        view.release()
        return buffer

    def _fail(self, status: str, detail: str = "") -> Outcome:
        if status == "died" and self.zygote.oom_kills() > self._kills:
            status = "memory"  # the kernel killed it for the sandbox's memory bound
        self.close(release=False)
        return Outcome(status, detail)

    def run(self, source: str, seconds: float) -> Outcome:
        """Run one cell's source with ``seconds`` of CPU time (its reply, a status, is read up to
        :data:`RUN_REPLY` bytes)."""
        return self._request({"op": "run", "source": source}, seconds, limit=RUN_REPLY)

    def lookup(self, name: str, seconds: float, wall_end: float | None = None) -> Outcome:
        """``value`` is ``("function", None)``, ``("value", the value)`` or ``("missing", None)``.

        Within ``seconds`` of CPU time, and by ``wall_end`` (a ``time.monotonic()`` value) if given
        as well as within the backstop.
        """
        outcome = self._request({"op": "lookup", "name": name}, seconds, expect_value=True, wall_end=wall_end)
        if outcome.status == "ok" and not (
            isinstance(outcome.value, tuple)
            and len(outcome.value) == 2
            and outcome.value[0] in ("function", "value", "missing")
        ):
            return self._fail("died")  # not what a worker answers: a forged reply
        return outcome

    def call(self, name: str, args: tuple, kwargs: dict, seconds: float, wall_end: float | None = None) -> Outcome:
        """Call the worker's function ``name``; ``value`` is what it returned (limits as :meth:`lookup`'s)."""
        return self._request(
            {"op": "call", "name": name, "args": encode(list(args)), "kwargs": encode(dict(kwargs))},
            seconds,
            expect_value=True,
            wall_end=wall_end,
        )
