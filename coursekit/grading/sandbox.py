"""The grader's side of the worker that runs a student's code: start it, talk to it, limit it.

The grader (:mod:`coursekit.grading.grader`) never runs a submission in its own process. A *zygote*
(:mod:`coursekit.grading.worker`), started once per grading process and environment, imports IPython and
the scientific stack and forks a fresh *worker* for each submission (and again after a fault).
Confined (:mod:`coursekit.grading.isolation`), the zygote and its workers live in a bubblewrap sandbox
that shows them an allowlist of the machine; the zygote checks after every submission that nothing
was left behind, and the sandbox is replaced when something was.

A worker answers three requests: run this cell, what is this name, call this function. Limits are
kept from outside:

- **time**: every request has a wall-clock deadline kept here; past it the worker and everything
  it started are killed (a student can ignore or disarm signals inside the worker, not this);
- **memory**: ``RLIMIT_AS`` is set in the worker before it runs anything of the student's;
- **the grader's own memory**: a worker is the student's process and can write anything to its
  end of the socket, so a reply is read only up to :data:`MAX_MESSAGE` bytes and decoded only if
  it holds at most :data:`MAX_ITEMS` JSON values, and the replies to one question's check may
  total :data:`MAX_CHECK_BYTES` (:attr:`Sandbox.allowance`). Reading, parsing and decoding one
  reply holds at most about three times its size; so a submission costs the grader at most about
  ``MAX_CHECK_BYTES + 3 * MAX_MESSAGE`` (160 MiB) above what it holds anyway.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import hashlib
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coursekit.grading import isolation
from coursekit.grading.isolation import Environment
from coursekit.grading.isolation import problem as isolation_problem
from coursekit.grading.plain_data import decode, encode
from coursekit.grading.worker import HEADER

__all__ = ["IsolationUnavailable", "Outcome", "Sandbox", "WorkerPool", "WorkerUnavailable", "Zygote"]

STARTUP_SECONDS = 120
CONTROL_SECONDS = 5
MAX_MESSAGE = 32 * 2**20
MAX_ITEMS = 100_000
MAX_CHECK_BYTES = 64 * 2**20


class IsolationUnavailable(RuntimeError):
    """Workers must be confined, and cannot be here (the message says why and what to install)."""


class WorkerUnavailable(RuntimeError):
    """The zygote does not start or answer (the message has the last lines it printed)."""


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


def _worker_environment(home: str) -> dict:
    return {"PATH": "/usr/bin:/bin", "HOME": home, "USER": "student", "LOGNAME": "student",
            "MPLBACKEND": "Agg", "MPLCONFIGDIR": f"{home}/.config/matplotlib", "IPYTHONDIR": f"{home}/.ipython",
            "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8",
            "TMPDIR": "/tmp" if home == isolation.SANDBOX_HOME else home}


class Zygote:
    """A zygote process (see :mod:`coursekit.grading.worker`) for one environment, started on first use.

    Parameters
    ----------
    environment : Environment
        What its workers see and may import.
    isolated : bool
        Run it in the bubblewrap sandbox (:mod:`coursekit.grading.isolation`); otherwise it is a plain
        child process in a temporary folder of its own, replaced after every submission.
    scratch : path
        A private folder of the grader's for the zygote's files.
    """

    def __init__(self, environment: Environment, isolated: bool, scratch):
        self.environment, self.isolated, self.scratch = environment, isolated, Path(scratch)
        self.process: subprocess.Popen | None = None
        self.worker: int | None = None

    def start(self) -> None:
        """Start the zygote and wait until it has imported the stack (WorkerUnavailable if it cannot)."""
        self.stop()
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        flags = [f"--ban={name}" for name in self.environment.banned]
        if self.isolated:
            banned_file = self.scratch / "banned_module.py"
            banned_file.write_text(isolation.BANNED_MODULE)
            worker = [sys.executable, f"{isolation.GRADER_DIR}/worker.py", str(theirs.fileno()), "--isolated", *flags]
            command = isolation.sandbox_command(self.environment, worker, banned_file)
            home, cwd = isolation.SANDBOX_HOME, None
        else:
            cwd = Path(tempfile.mkdtemp(prefix="worker-", dir=self.scratch))
            if self.environment.support is not None:
                shutil.copytree(self.environment.support, cwd, dirs_exist_ok=True,  # never the machinery
                                ignore=lambda folder, names: [n for n in names if n in isolation.GRADER_PACKAGES])
            command = [sys.executable, str(isolation.HERE / "worker.py"), str(theirs.fileno()), *flags]
            home = str(cwd)
        self._log = tempfile.TemporaryFile(dir=self.scratch)
        self.process = subprocess.Popen(command, cwd=cwd, env=_worker_environment(home), pass_fds=(theirs.fileno(),),
                                        stdin=subprocess.DEVNULL, stdout=self._log, stderr=self._log,
                                        start_new_session=True)
        theirs.close()
        self.control, self.home = control, cwd
        ready = self._receive(STARTUP_SECONDS)
        if not ready or not ready.get("ready") or ready.get("banned"):
            self._log.seek(0)
            said = self._log.read().decode(errors="replace").strip().splitlines()[-3:]
            self.stop()
            raise WorkerUnavailable("the grading worker did not start: " + (" / ".join(said) or "no message"))

    def _receive(self, timeout: float) -> dict | None:
        try:
            self.control.settimeout(timeout)
            message = self.control.recv(4096)
            return json.loads(message) if message else None
        except (OSError, ValueError):
            return None

    def spawn(self, memory_bytes: int) -> socket.socket:
        """A fresh worker, forked by the zygote; the grader's end of its socket.

        Parameters
        ----------
        memory_bytes : int
            The worker's address-space limit.

        Returns
        -------
        socket.socket
        """
        for _ in range(2):
            if self.process is None or self.process.poll() is not None:
                self.start()
            ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                socket.send_fds(self.control, [json.dumps({"op": "spawn", "memory": int(memory_bytes)}).encode()],
                                [theirs.fileno()])
            except OSError:
                reply = None
            else:
                reply = self._receive(CONTROL_SECONDS)
            theirs.close()
            if reply and isinstance(reply.get("pid"), int):
                self.worker = reply["pid"]
                return ours
            ours.close()
            self.stop()  # it could not end the last worker's processes, or did not answer
        raise WorkerUnavailable("the grading worker's zygote does not answer")

    def reset(self) -> bool:
        """End the current worker and everything it started.

        A zygote that does not answer is stopped (and started again on the next :meth:`spawn`).

        Returns
        -------
        bool
            True if the sandbox is as it was when the zygote was ready (always False unconfined).
        """
        if self.process is None:
            return False
        try:
            self.control.send(json.dumps({"op": "reset"}).encode())
            reply = self._receive(CONTROL_SECONDS)
        except OSError:
            reply = None
        if reply is None:
            self.stop()
            return False
        self._end_worker()
        return bool(reply.get("clean"))

    def release(self) -> None:
        """The submission is done: keep the zygote for the next one only if nothing was left behind."""
        if not self.reset():
            self.stop()

    def _end_worker(self) -> None:
        if not self.isolated and self.worker is not None:  # its own session: the zygote's kill may miss some
            try:
                os.killpg(self.worker, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        self.worker = None

    def stop(self) -> None:
        """Kill the zygote, its workers and (confined) the whole sandbox."""
        if self.process is None:
            return
        self._end_worker()
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        self.control.close()
        self._log.close()
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
        self.process = None


class WorkerPool:
    """The zygotes of one grading process, one per environment, kept from submission to submission.

    Parameters
    ----------
    isolation : {"required", "auto", "off"}
        Confine the workers (:mod:`coursekit.grading.isolation`): ``"required"`` raises
        :class:`IsolationUnavailable` where that is impossible, ``"auto"`` confines where possible
        (a grading image that gives each submission its own container), ``"off"`` never does.
    protect : iterable of path
        Folders a confined worker must not see; confining is refused if a folder the worker needs
        would show one (see :func:`coursekit.grading.isolation.problem`).
    """

    def __init__(self, isolation: str = "required", protect=()):
        if isolation not in ("required", "auto", "off"):
            raise ValueError(f"isolation must be 'required', 'auto' or 'off', not {isolation!r}")
        self.protect = [Path(p) for p in protect]
        self.scratch = Path(tempfile.mkdtemp(prefix="lecturekit-grader-"))
        self.zygotes: dict[Environment, Zygote] = {}
        self.supports: dict[str, Path] = {}
        found = None if isolation == "off" else isolation_problem(self.protect)
        if found and isolation == "required":
            self.close()
            raise IsolationUnavailable(found)
        self.isolated = isolation != "off" and found is None

    def support(self, zip_path) -> Path | None:
        """The folder of an autograder's support files (its ``files/``), unpacked once per content.

        Parameters
        ----------
        zip_path : path
            An autograder zip, or the folder it was unpacked into (a grading image's source).

        Returns
        -------
        Path or None
            A folder of this pool's (or the unpacked autograder's ``files/``); None if it has none.
        """
        zip_path = Path(zip_path)
        if zip_path.is_dir():  # unpacked, as in a grading image's /autograder/source
            return zip_path / "files" if (zip_path / "files").is_dir() else None
        with zipfile.ZipFile(zip_path) as archive:
            members = [m for m in archive.infolist() if m.filename.startswith("files/")
                       and not m.filename.endswith("/") and ".." not in m.filename]
            key = hashlib.sha256(repr([(m.filename, m.CRC, m.file_size) for m in members]).encode()).hexdigest()[:16]
            if key not in self.supports:
                folder = self.scratch / f"support-{key}"
                for member in members:
                    target = folder / member.filename[len("files/"):]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with archive.open(member) as source, target.open("wb") as out:
                        shutil.copyfileobj(source, out)
                folder.mkdir(exist_ok=True)
                self.supports[key] = folder
        return self.supports[key]

    def zygote(self, environment: Environment) -> Zygote:
        """The zygote for ``environment``, made on first use (at most two are kept; the oldest goes).

        Parameters
        ----------
        environment : Environment
            The support files and banned modules of the workers wanted.

        Returns
        -------
        Zygote
            Not started yet if new: it starts with its first worker.
        """
        if environment not in self.zygotes:
            if environment.banned and not self.isolated:
                raise IsolationUnavailable("a question that bans a module needs the confined worker: "
                                           + (isolation_problem(self.protect) or "this grader runs without it"))
            if len(self.zygotes) >= 4:  # the assignment's own and those of questions with bans
                oldest = next(iter(self.zygotes))
                self.zygotes.pop(oldest).stop()
            self.zygotes[environment] = Zygote(environment, self.isolated, self.scratch)
        return self.zygotes[environment]

    def close(self) -> None:
        """Stop every zygote and remove the pool's files."""
        for zygote in self.zygotes.values():
            zygote.stop()
        self.zygotes.clear()
        shutil.rmtree(self.scratch, ignore_errors=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


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
            if not release:
                self.zygote.reset()
        if release:
            self.zygote.release()

    def _request(self, message: dict, timeout: float, expect_value: bool = False) -> Outcome:
        if self.channel is None:
            self.start()
        deadline = time.monotonic() + timeout
        try:
            data = json.dumps(message).encode()
            view = memoryview(HEADER.pack(len(data)) + data)
            while view:
                _, ready, _ = select.select([], [self.channel], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return self._fail("timeout")
                view = view[self.channel.send(view[: 1 << 16]):]
            (size,) = HEADER.unpack(self._read(HEADER.size, deadline))
            if size > MAX_MESSAGE or (self.allowance is not None and size > self.allowance):
                return self._fail("flood")
            if self.allowance is not None:
                self.allowance -= size
            raw = self._read(size, deadline)
            if _items(raw) > MAX_ITEMS:
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
                value = decode(value)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError):
                return Outcome("error", "an answer that is not plain data")
        outcome = Outcome(reply["status"], str(reply.get("detail", ""))[:80], value if expect_value else None)
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
        self.close(release=False)
        return Outcome(status)

    def run(self, source: str, timeout: float) -> Outcome:
        """Run one cell's source."""
        return self._request({"op": "run", "source": source}, timeout)

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


def _items(raw) -> int:
    """An upper bound on the JSON values and keys in ``raw``: each follows one of ``[{,:``."""
    return raw.count(b"[") + raw.count(b"{") + raw.count(b",") + raw.count(b":") + 1
