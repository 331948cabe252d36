"""The grader's side of the worker that runs a student's code: start it, talk to it, limit it.

The grader (:mod:`coursekit.grading.grader`) never runs a submission in its own process: a *worker*
(:mod:`coursekit.grading.worker`), forked for each submission by a zygote in a sandbox of its own
(:mod:`coursekit.grading.zygote`), runs the student's code. A :class:`Sandbox` is the grader's end of
one submission's worker.

A worker answers three requests: run this cell, what is this name, call this function. Limits are
kept from outside:

- **time**: every request has a wall-clock deadline kept here; past it the worker and everything
  it started are killed (a student can ignore or disarm signals inside the worker, not this);
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

import json
import select
import socket
import time
from dataclasses import dataclass
from typing import Any

from coursekit.grading.plain_data import decode, encode
from coursekit.grading.untrusted import identifier, json_values
from coursekit.grading.worker import HEADER
from coursekit.grading.zygote import STARTUP_SECONDS, Zygote

__all__ = ["Outcome", "Sandbox"]

MAX_MESSAGE = 32 * 2**20
MAX_ITEMS = 100_000
MAX_CHECK_BYTES = 64 * 2**20
RUN_REPLY = 4096  # a cell's reply is a status and an exception's name


@dataclass
class Outcome:
    """What one request came to.

    ``status`` is ``"ok"``, ``"error"`` (the student's code raised ``detail``, an exception's type
    name), ``"timeout"``, ``"memory"``, ``"died"`` (the worker exited or broke the channel) or
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
        try:
            self._read(HEADER.size, time.monotonic() + STARTUP_SECONDS)  # its empty "ready" message
        except (TimeoutError, EOFError, OSError):
            pass  # the first request will find the worker dead

    def close(self, release: bool = True) -> None:
        """End the worker; with ``release``, the submission is done (see :meth:`Zygote.release`)."""
        if self.channel is not None:
            self.channel.close()
            self.channel = None
            if not release and not self.detached:
                self.zygote.reset()
        if release and not self.detached:
            self.zygote.release()

    def _request(self, message: dict, timeout: float, expect_value: bool = False,
                 limit: int = MAX_MESSAGE) -> Outcome:
        if self.channel is None:
            if self.detached:  # a check's process never starts a worker: the grading process does
                return Outcome("died")
            self.start()
        deadline = time.monotonic() + timeout
        self._kills = self.zygote.oom_kills()
        try:
            data = json.dumps(message).encode()
            view = memoryview(HEADER.pack(len(data)) + data)
            while view:
                _, ready, _ = select.select([], [self.channel], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return self._fail("timeout")
                view = view[self.channel.send(view[: 1 << 16]):]
            (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
            if size > limit or (self.allowance is not None and size > self.allowance):
                return self._fail("flood")
            if self.allowance is not None:
                self.allowance -= size
            raw = self._read(size, deadline)
            if json_values(raw) > MAX_ITEMS:
                return self._fail("flood")
            reply = json.loads(raw)
            del raw
        except TimeoutError:
            return self._fail("timeout")
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

    def _read(self, size: int, deadline: float) -> bytes:
        buffer = bytearray(size)
        view, got = memoryview(buffer), 0
        while got < size:
            ready, _, _ = select.select([self.channel], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError
            count = self.channel.recv_into(view[got:], min(size - got, 1 << 20))
            if not count:
                raise EOFError
            got += count
        view.release()
        return buffer

    def _fail(self, status: str) -> Outcome:
        if status == "died" and self.zygote.oom_kills() > self._kills:
            status = "memory"  # the kernel killed it for the sandbox's memory bound
        self.close(release=False)
        return Outcome(status)

    def run(self, source: str, timeout: float) -> Outcome:
        """Run one cell's source (its reply, a status, is read up to :data:`RUN_REPLY` bytes)."""
        return self._request({"op": "run", "source": source}, timeout, limit=RUN_REPLY)

    def lookup(self, name: str, timeout: float) -> Outcome:
        """``value`` is ``("function", None)``, ``("value", the value)`` or ``("missing", None)``."""
        outcome = self._request({"op": "lookup", "name": name}, timeout, expect_value=True)
        if outcome.status == "ok" and not (isinstance(outcome.value, tuple) and len(outcome.value) == 2
                                           and outcome.value[0] in ("function", "value", "missing")):
            return self._fail("died")  # not what a worker answers: a forged reply
        return outcome

    def call(self, name: str, args: tuple, kwargs: dict, timeout: float) -> Outcome:
        """Call the worker's function ``name``; ``value`` is what it returned."""
        return self._request({"op": "call", "name": name, "args": encode(list(args)),
                              "kwargs": encode(dict(kwargs))}, timeout, expect_value=True)
