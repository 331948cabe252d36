"""A separate process for a student's code, with limits the student cannot lift.

The grader (:mod:`lecturekit.grader`) never runs a submission in its own process. It starts a
*worker*, ``python -m lecturekit.sandbox``, which runs notebook cells in an IPython shell and
answers three requests over a pipe: run this cell, what is this name (a value, as plain data, or
a function), and call this function with these arguments. Everything that crosses is plain data
(:mod:`lecturekit.plain_data`), so the checker never holds an object the student made.

Limits are set from outside:

- **time**: every request has a wall-clock deadline kept by the client; past it the worker's whole
  process group is killed (a student can ignore or disarm signals inside the worker, not this);
- **memory**: ``RLIMIT_AS`` is set before the worker starts (a ``MemoryError`` or the worker's death);
- **isolation**, where the grader runs as root on Linux and ``unshare`` is available (Gradescope's
  and otter's grading images, CI): the worker gets its own mount, PID and network namespaces, every
  file system read-only except its working folder, the folders given as ``hide`` (the hidden tests,
  the other submissions, the masters) covered by an empty read-only tmpfs, no network, and no
  capabilities, so it cannot undo any of this, see the grader's process or touch another
  submission. Elsewhere the worker is an ordinary child process and the grader says so.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import json
import os
import resource
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lecturekit.plain_data import decode, encode

__all__ = ["Outcome", "Sandbox", "isolation_available"]

_HEADER = struct.Struct("!Q")
STARTUP_SECONDS = 120
# Imported by every worker before the student's first cell (not counted in any cell's time).
PRELOAD = ("numpy", "scipy.stats", "scipy.optimize", "scipy.special", "scipy.sparse", "matplotlib.pyplot")
MAX_MESSAGE = 512 * 2**20

# Run inside the new namespaces before the worker: remount everything read-only but the working
# folder, cover the hidden folders, drop every capability, then become the worker.
_CONFINE = r"""
set -e
work="$1"; shift
mount --bind "$work" "$work"
for m in $(awk '{print $2}' /proc/self/mounts | sort -u); do
  case "$m" in
    /proc|/proc/*|/sys|/sys/*|/dev|/dev/*|"$work") ;;
    *) mount -o remount,bind,ro "$m" 2>/dev/null || true ;;
  esac
done
while [ "$1" != "--" ]; do
  [ -d "$1" ] && mount -t tmpfs -o ro,size=4k,mode=000 hidden "$1"
  shift
done
shift
exec setpriv --bounding-set -all --inh-caps -all --no-new-privs -- "$@"
"""


def isolation_available() -> bool:
    """Whether workers can be confined in namespaces here.

    Returns
    -------
    bool
        True on Linux as root with ``unshare`` and ``setpriv`` (util-linux) that work.
    """
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    if not (shutil.which("unshare") and shutil.which("setpriv")):
        return False
    probe = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--net", "--mount-proc", "true"],
                           capture_output=True, timeout=30)
    return probe.returncode == 0


@dataclass
class Outcome:
    """What one request came to.

    ``status`` is ``"ok"``, ``"error"`` (the student's code raised ``detail``, an exception's type
    name), ``"timeout"``, ``"memory"`` or ``"died"`` (the worker exited or broke the channel).
    """

    status: str
    detail: str = ""
    value: Any = None

    @property
    def fatal(self) -> bool:
        """The worker is gone, stuck or out of memory; it must be restarted."""
        return self.status in ("timeout", "died", "memory")


class Sandbox:
    """A worker process for one submission (see the module docstring).

    Parameters
    ----------
    workdir : path
        The worker's working folder (its HOME too); the only place it may write when isolated.
    memory_bytes : int
        Address-space limit of the worker.
    hide : list of path
        Folders the worker must not see (when isolated).
    isolate : bool or None
        Confine the worker in namespaces; None: when :func:`isolation_available`.
    """

    def __init__(self, workdir, memory_bytes: int = 2 * 2**30, hide=(), isolate: bool | None = None):
        self.workdir = Path(workdir).resolve()
        self.memory_bytes = int(memory_bytes)
        self.hide = [str(Path(h).resolve()) for h in hide]
        self.isolate = isolation_available() if isolate is None else isolate
        self.process: subprocess.Popen | None = None

    # ----------------------------------------------------------------------- life cycle

    def start(self) -> None:
        self.close()
        to_worker_r, to_worker_w = os.pipe()
        from_worker_r, from_worker_w = os.pipe()
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.workdir),
               "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(self.workdir / ".config" / "matplotlib"),
               "IPYTHONDIR": str(self.workdir / ".ipython"), "PYTHONDONTWRITEBYTECODE": "1",
               "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
               "PYTHONHASHSEED": "0", "LANG": "C.UTF-8", "TMPDIR": str(self.workdir)}
        worker = [sys.executable, "-m", "lecturekit.sandbox", str(to_worker_r), str(from_worker_w)]
        if self.isolate:
            command = ["unshare", "--mount", "--pid", "--fork", "--net", "--mount-proc",
                       "--propagation", "private", "--", "/bin/sh", "-c", _CONFINE, "confine",
                       str(self.workdir), *self.hide, "--", *worker]
        else:
            command = worker
        limit = self.memory_bytes

        def limits():
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

        self.process = subprocess.Popen(command, cwd=self.workdir, env=env, pass_fds=(to_worker_r, from_worker_w),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, start_new_session=True, preexec_fn=limits)
        os.close(to_worker_r)
        os.close(from_worker_w)
        self._out, self._in = to_worker_w, from_worker_r
        # The worker imports the scientific stack before its first cell, so that no cell's time
        # limit pays for it; it says so with an empty message.
        try:
            self._read(_HEADER.size, time.monotonic() + STARTUP_SECONDS)
        except (TimeoutError, EOFError, OSError):
            pass  # the first request will find the worker dead or late

    def close(self) -> None:
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.process.wait()
        for fd in (self._out, self._in):
            try:
                os.close(fd)
            except OSError:
                pass
        self.process = None

    def __enter__(self) -> Sandbox:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ----------------------------------------------------------------------- requests

    def _request(self, message: dict, timeout: float) -> Outcome:
        if self.process is None:
            self.start()
        deadline = time.monotonic() + timeout
        try:
            data = json.dumps(message).encode()
            os.write(self._out, _HEADER.pack(len(data)))
            view = memoryview(data)
            while view:
                _, ready, _ = select.select([], [self._out], [], max(0.0, deadline - time.monotonic()))
                if not ready:
                    return self._fail("timeout")
                view = view[os.write(self._out, view[: 1 << 16]):]
            header = self._read(_HEADER.size, deadline)
            (size,) = _HEADER.unpack(header)
            if size > MAX_MESSAGE:
                return self._fail("died")
            reply = json.loads(self._read(size, deadline))
        except TimeoutError:
            return self._fail("timeout")
        except (OSError, EOFError, ValueError, struct.error):
            return self._fail("died")
        if not isinstance(reply, dict) or reply.get("status") not in ("ok", "error", "memory"):
            return self._fail("died")
        value = reply.get("value")
        try:
            value = decode(value) if value is not None else None
        except (ValueError, TypeError, KeyError):
            return Outcome("error", "an answer that is not plain data")
        outcome = Outcome(reply["status"], str(reply.get("detail", ""))[:80], value)
        if outcome.fatal:  # out of memory: what the worker holds may starve every later request
            self.close()
        return outcome

    def _read(self, size: int, deadline: float) -> bytes:
        chunks, got = [], 0
        while got < size:
            ready, _, _ = select.select([self._in], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise TimeoutError
            chunk = os.read(self._in, min(size - got, 1 << 20))
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            got += len(chunk)
        return b"".join(chunks)

    def _fail(self, status: str) -> Outcome:
        self.close()
        return Outcome(status)

    def run(self, source: str, timeout: float) -> Outcome:
        """Run one cell's source."""
        return self._request({"op": "run", "source": source}, timeout)

    def lookup(self, name: str, timeout: float) -> Outcome:
        """``value`` is ``("function", None)``, ``("value", the value)`` or ``("missing", None)``."""
        return self._request({"op": "lookup", "name": name}, timeout)

    def call(self, name: str, args: tuple, kwargs: dict, timeout: float) -> Outcome:
        """Call the worker's function ``name``; ``value`` is what it returned."""
        return self._request({"op": "call", "name": name, "args": encode(list(args)),
                              "kwargs": encode(dict(kwargs))}, timeout)


# --------------------------------------------------------------------------- the worker


def _serve(read_fd: int, write_fd: int) -> None:  # pragma: no cover - runs in the worker process
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    namespace = shell.user_ns
    for module in PRELOAD:
        try:
            __import__(module)
        except Exception:  # noqa: BLE001 - a missing optional module only costs time later
            pass
    os.write(write_fd, _HEADER.pack(0))

    def receive() -> dict:
        header = b""
        while len(header) < _HEADER.size:
            chunk = os.read(read_fd, _HEADER.size - len(header))
            if not chunk:
                raise SystemExit(0)
            header += chunk
        (size,) = _HEADER.unpack(header)
        data = bytearray()
        while len(data) < size:
            chunk = os.read(read_fd, min(size - len(data), 1 << 20))
            if not chunk:
                raise SystemExit(0)
            data += chunk
        return json.loads(bytes(data))

    def send(reply: dict) -> None:
        data = json.dumps(reply).encode()
        os.write(write_fd, _HEADER.pack(len(data)))
        view = memoryview(data)
        while view:
            view = view[os.write(write_fd, view):]

    def failure(error: BaseException) -> dict:
        status = "memory" if isinstance(error, MemoryError) else "error"
        return {"status": status, "detail": type(error).__name__}

    while True:
        request = receive()
        try:
            if request["op"] == "run":
                result = shell.run_cell(request["source"], store_history=False, silent=True)
                error = result.error_before_exec or result.error_in_exec
                send(failure(error) if error is not None else {"status": "ok"})
            elif request["op"] == "lookup":
                name = request["name"]
                if name not in namespace:
                    send({"status": "ok", "value": encode(("missing", None))})
                elif callable(namespace[name]):
                    send({"status": "ok", "value": encode(("function", None))})
                else:
                    send({"status": "ok", "value": encode(("value", namespace[name]))})
            elif request["op"] == "call":
                function = namespace.get(request["name"])
                args, kwargs = decode(request["args"]), decode(request["kwargs"])
                try:
                    value = function(*args, **kwargs)
                except BaseException as error:  # noqa: BLE001 - the student's code, whatever it raised
                    send(failure(error))
                    continue
                send({"status": "ok", "value": encode(value)})
        except Exception as error:  # noqa: BLE001 - e.g. an answer too large to encode, or no memory left
            send(failure(error))


if __name__ == "__main__":  # pragma: no cover
    _serve(int(sys.argv[1]), int(sys.argv[2]))
