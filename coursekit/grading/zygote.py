"""Where a submission's workers come from: zygotes, each in a sandbox of its own, kept by a pool.

The grader (:mod:`coursekit.grading.grader`) never runs a submission in its own process. A *zygote*
(:mod:`coursekit.grading.worker`), started once per grading process and environment, imports IPython and
the scientific stack and forks a fresh *worker* for each submission (and again after a fault);
:mod:`coursekit.grading.sandbox` talks to the worker. Confined (:mod:`coursekit.grading.isolation`), the
zygote and its workers live in a bubblewrap sandbox that shows them an allowlist of the machine, under
a system-call filter (:mod:`coursekit.grading.syscalls`); the zygote checks after every submission
that nothing was left behind, and the sandbox is replaced when something was. Where bubblewrap cannot
run and the grader is root (a grading container), the zygote runs as a user of its own instead
(:mod:`coursekit.grading.unprivileged`).

The zygote and everything it starts live in a cgroup of their own (:mod:`coursekit.grading.limits`)
that bounds their memory together (the worker's limit and :data:`ZYGOTE_MEMORY`, with their in-memory
files and the kernel memory those cost), their number (:data:`TASKS`) and their CPU time
(:data:`CPUS`, so that one sandbox cannot slow its neighbours); nothing in the cgroup outlives the
sandbox. What the zygote prints goes to a pipe, read while it starts.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import itertools
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
from pathlib import Path

from coursekit.grading import isolation, limits, syscalls, unprivileged
from coursekit.grading.isolation import Environment
from coursekit.grading.isolation import problem as isolation_problem

__all__ = ["IsolationUnavailable", "WorkerPool", "WorkerUnavailable", "Zygote", "process_seconds"]

STARTUP_SECONDS = 120
CONTROL_SECONDS = 5
# A sandbox as a whole (coursekit.grading.limits): the worker's own limit and the zygote's imports
# (about 250 MB) with room for its tmpfs; processes and threads; CPUs' worth of time.
ZYGOTE_MEMORY = 2**30
TASKS = 256
CPUS = 1.0
# Zygotes a pool keeps: an assignment's own and those of its questions with bans (at most three in this
# course's notebooks), and one more, so that a batch of several assignments keeps the common ones.
ZYGOTES = 4
_ZYGOTES = itertools.count()


class IsolationUnavailable(RuntimeError):
    """Workers must be confined, and cannot be here (the message says why and what to install)."""


class WorkerUnavailable(RuntimeError):
    """The zygote does not start or answer.

    ``reason`` says so in the grader's words (what a scores file may show); the message adds the
    last lines the zygote printed, for the grader's log.
    """

    def __init__(self, reason: str, said: str = ""):
        super().__init__(reason + (f": {said}" if said else ""))
        self.reason = reason


def _become(uid: int) -> None:  # pragma: no cover - in a child, before it runs the zygote
    """Drop every privilege: no groups, ``uid`` as every user and group ID (no capabilities left)."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def _chain(*steps):
    """One ``preexec_fn`` running each of ``steps`` that is not None, in order."""
    steps = [step for step in steps if step is not None]
    return (lambda: [step() for step in steps]) if steps else None


def _worker_environment(home: str) -> dict:
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": home,
        "USER": "student",
        "LOGNAME": "student",
        "MPLBACKEND": "Agg",
        "MPLCONFIGDIR": f"{home}/.config/matplotlib",
        "IPYTHONDIR": f"{home}/.ipython",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "LANG": "C.UTF-8",
        "TMPDIR": "/tmp" if home == isolation.SANDBOX_HOME else home,
    }


class Zygote:
    """A zygote process (see :mod:`coursekit.grading.worker`) for one environment, started on first use.

    Parameters
    ----------
    environment : Environment
        What its workers see and may import.
    pool : WorkerPool
        Whose confinement it gets: ``pool.mode`` is ``"bubblewrap"`` (the sandbox of
        :mod:`coursekit.grading.isolation`), ``"user"`` (a user of its own,
        :mod:`coursekit.grading.unprivileged`) or ``"none"`` (a plain child process in a temporary
        folder of its own); ``pool.limits``, if set, bounds the zygote and all it starts as a whole
        (:mod:`coursekit.grading.limits`). Unless confined by bubblewrap, a zygote is replaced after
        every submission.
    """

    def __init__(self, environment: Environment, pool: WorkerPool):
        self.environment, self.pool, self.scratch = environment, pool, pool.scratch
        self.process: subprocess.Popen | None = None
        self.worker: int | None = None
        self.group = None
        self.folders: list[Path] = []

    def start(self) -> None:
        """Start the zygote and wait until it has imported the stack (WorkerUnavailable if it cannot)."""
        self.stop()
        control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        flags = [f"--ban={name}" for name in self.environment.banned]
        preexec, mode = None, self.pool.mode
        if mode == "bubblewrap":
            banned_file = self.scratch / "banned_module.py"
            banned_file.write_text(isolation.BANNED_MODULE)
            worker = [sys.executable, f"{isolation.GRADER_DIR}/worker.py", str(theirs.fileno()), "--isolated", *flags]
            program = isolation.filter_file()
            command = isolation.sandbox_command(self.environment, worker, banned_file, seccomp_fd=program)
            home, cwd, passed = isolation.SANDBOX_HOME, None, (program,)
        elif mode == "user":
            cwd, programs = unprivileged.user_folder(self.pool.uid, self.environment.support)
            self.folders = [cwd, programs]
            program = isolation.filter_file()
            command = [
                sys.executable,
                str(programs / "worker.py"),
                str(theirs.fileno()),
                "--user",
                f"--seccomp={program}",
                f"--tasks={TASKS}",
                *flags,
            ]
            home, passed, preexec = str(cwd), (program,), functools.partial(_become, self.pool.uid)
        else:
            cwd = Path(tempfile.mkdtemp(prefix="worker-", dir=self.scratch))
            self.folders = [cwd]
            isolation.copy_support(self.environment.support, cwd)
            command = [sys.executable, str(isolation.HERE / "worker.py"), str(theirs.fileno()), *flags]
            home, passed = str(cwd), ()
        if self.pool.limits is not None:
            self.group = limits.Group(self.pool.limits, f"zygote-{next(_ZYGOTES)}")
            command = self.group.command(command)
            preexec = _chain(self.group.preexec, preexec)
        # Its output (and that of bubblewrap's init, which a worker can open through /proc/1/fd/1) goes
        # to a pipe, read only while it starts: never to a file of the host's, which a worker could fill.
        log, self._log = os.pipe()
        try:
            self.process = subprocess.Popen(
                command,
                cwd=cwd,
                env=_worker_environment(home),
                pass_fds=(theirs.fileno(), *passed),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=self._log,
                start_new_session=True,
                preexec_fn=preexec,
            )
        finally:
            for descriptor in passed:
                os.close(descriptor)
            os.close(self._log)
            self._log = log
        os.set_blocking(log, False)
        theirs.close()
        self.control, self.said = control, b""
        ready = self._receive(STARTUP_SECONDS, starting=True)
        if not ready or not ready.get("ready") or ready.get("banned"):
            said = self.said.decode(errors="replace").strip().splitlines()[-3:]
            self.stop()
            raise WorkerUnavailable("the grading worker did not start", " / ".join(said) or "no message")

    def _receive(self, timeout: float, starting: bool = False) -> dict | None:
        """The zygote's next control message (None if none comes in time).

        While it is ``starting``, what it prints is read meanwhile; after that nobody reads it (a
        worker that writes there fills a pipe and waits, alone).
        """
        deadline = time.monotonic() + timeout
        watched = [self.control, self._log] if starting else [self.control]
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                ready, _, _ = select.select(watched, [], [], left)
                if self._log in ready:
                    self._drain()
                if self.control in ready:
                    message = self.control.recv(4096)
                    return json.loads(message) if message else None
        except (OSError, ValueError, RecursionError):
            return None

    def _drain(self) -> None:
        """Keep the last 4 KiB the zygote printed (what a failed start reports)."""
        with contextlib.suppress(OSError):
            self.said = (self.said + os.read(self._log, 1 << 16))[-4096:]

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
                socket.send_fds(
                    self.control, [json.dumps({"op": "spawn", "memory": int(memory_bytes)}).encode()], [theirs.fileno()]
                )
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
        if self.pool.mode == "none" and self.worker is not None:  # its own session: the zygote's kill may miss some
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.worker, signal.SIGKILL)
        self.worker = None

    def stop(self) -> None:
        """Kill the zygote, its workers and everything they started (the whole sandbox), and remove its files."""
        if self.process is None:
            return
        self._end_worker()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        if self.pool.mode == "user":
            unprivileged.kill_all(self.pool.uid)
        if self.group is not None:  # whatever left the zygote's session and process group
            self.pool.peak = max(self.pool.peak, self.group.peak_memory())
            self.group.close()
            self.group = None
        self.process.wait()
        self.control.close()
        os.close(self._log)
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)
        self.process, self.folders = None, []

    def peak_memory(self) -> int:
        """The most memory this sandbox has held so far, tmpfs and kernel memory included (0 unbounded)."""
        return self.group.peak_memory() if self.group is not None else 0

    def oom_kills(self) -> int:
        """How many processes of this sandbox the kernel has killed for its memory bound (0 unbounded)."""
        return self.group.oom_kills() if self.group is not None else 0

    @property
    def cpus(self) -> float:
        """The most CPUs' worth of time this sandbox can use at once (its quota, or the machine's CPUs)."""
        return self.pool.limits.cpus if self.group is not None else float(os.cpu_count() or 1)

    def cpu_seconds(self) -> float | None:
        """The CPU time the sandbox's processes have used so far, in seconds (None where it cannot be known).

        Counted by the kernel, never by a process of the student's. Bounded as a whole, the cgroup's
        count: every process that ever ran in the sandbox, ended or not (:meth:`limits.Group.cpu_seconds`).
        Otherwise the processes living now, each with the children it waited for (``/proc/<pid>/stat``):
        those of the sandbox's own user (``"user"``), or those below the zygote (``"bubblewrap"``,
        whose PID namespace's init keeps orphans below it; ``"none"``, where a process that leaves the
        tree, an orphan re-parented outside or a child nobody waited for, is no longer counted: the
        wall-clock backstop of :mod:`coursekit.grading.sandbox` still bounds it). None before it starts.
        """
        if self.process is None:
            return None
        counted = self.group.cpu_seconds() if self.group is not None else None
        if counted is not None:
            return counted
        uid = self.pool.uid if self.pool.mode == "user" else None
        return _tree_seconds(self.process.pid, uid)


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command's name (which may hold anything), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].decode().split()
    except (OSError, ValueError):
        return None


def process_seconds(pid: int) -> float | None:
    """The CPU time process ``pid`` (all its threads) and the children it waited for have used, or None."""
    fields = _stat(pid)
    return sum(int(fields[i]) for i in range(11, 15)) / _TICKS if fields and len(fields) > 14 else None


def _real_uid(pid: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            return next((int(line.split()[1]) for line in status if line.startswith("Uid:")), None)
    except (OSError, ValueError, IndexError):
        return None


def _descendants(root: int) -> list[int] | None:
    """``root`` and every process below it, from the kernel's lists of children (None where it has none)."""
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # ended meanwhile
        for thread in threads:
            try:
                with open(f"/proc/{pid}/task/{thread}/children") as children:
                    todo.extend(int(child) for child in children.read().split())
            except FileNotFoundError:
                if not os.path.exists(f"/proc/self/task/{os.getpid()}/children"):
                    return None  # a kernel without CONFIG_PROC_CHILDREN
            except (OSError, ValueError):
                pass
    return found


def _tree_seconds(root: int, uid: int | None) -> float | None:
    """CPU time of the living processes of user ``uid`` (None: of ``root`` and all below it), from /proc."""
    below = _descendants(root) if uid is None else None
    if below is not None:  # a few files to read, not the whole of /proc
        return sum(sum(int(f[i]) for i in range(11, 15)) for f in map(_stat, below) if f and len(f) > 14) / _TICKS
    try:
        names = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    parents, used = {}, {}
    for name in names:
        fields = _stat(name)
        if not fields or len(fields) < 15:
            continue  # ended meanwhile
        if uid is not None and _real_uid(name) != uid:  # not /proc/<pid>'s owner: root's if not dumpable
            continue
        parents[int(name)] = int(fields[1])
        used[int(name)] = sum(int(fields[i]) for i in range(11, 15))  # utime, stime, cutime, cstime
    if uid is None:
        children: dict[int, list[int]] = {}
        for pid, parent in parents.items():
            children.setdefault(parent, []).append(pid)
        inside, todo = set(), [root]
        while todo:
            pid = todo.pop()
            if pid not in inside:
                inside.add(pid)
                todo.extend(children.get(pid, ()))
        used = {pid: ticks for pid, ticks in used.items() if pid in inside}
    return sum(used.values()) / _TICKS


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
    memory_bytes : int
        The workers' own memory limit; a sandbox as a whole gets :data:`ZYGOTE_MEMORY` more.
    bounded : bool
        Bound each sandbox as a whole (:mod:`coursekit.grading.limits`): with ``"required"``, raise
        :class:`IsolationUnavailable` where that is impossible; with ``"auto"``, where possible.
        False: never (each worker process is still limited on its own).
    """

    def __init__(self, isolation: str = "required", protect=(), memory_bytes: int = 2 * 2**30, bounded: bool = True):
        if isolation not in ("required", "auto", "off"):
            raise ValueError(f"isolation must be 'required', 'auto' or 'off', not {isolation!r}")
        self.protect = [Path(p) for p in protect]
        self.scratch = Path(tempfile.mkdtemp(prefix="lecturekit-grader-"))
        self.zygotes: dict[Environment, Zygote] = {}
        self.supports: dict[str, Path] = {}
        self.uid: int | None = None
        self.limits: limits.Limits | None = None
        self.unbounded = ""  # why the sandboxes are not bounded as a whole, where they are not
        self.peak = 0  # the most memory a sandbox of this pool held, of those stopped (see sandbox_peak)
        try:
            self.mode = self._mode(isolation)
            if self.mode != "none":
                found = limits.problem() if bounded else "not asked for"
                if found is None:
                    self.limits = limits.Limits(int(memory_bytes) + ZYGOTE_MEMORY, TASKS, CPUS)
                elif bounded and isolation == "required":
                    raise IsolationUnavailable(f"the sandboxes cannot be bounded as a whole here: {found}")
                else:
                    self.unbounded = found
        except BaseException:
            self.close()
            raise

    def _mode(self, isolation: str) -> str:
        if isolation == "off":
            return "none"
        found = isolation_problem(self.protect)
        if found is None:
            return "bubblewrap"
        if isolation == "required":
            raise IsolationUnavailable(found)
        if os.geteuid() != 0 or syscalls.problem() is not None:
            return "none"  # an ordinary user's process, in a container of its own
        self.uid = unprivileged.unused_uid()
        found = unprivileged.problem(self.uid, self.protect)
        if found:
            raise IsolationUnavailable(f"the worker cannot run as a user of its own: {found}")
        return "user"

    def sandbox_peak(self) -> int:
        """The most memory any sandbox of this pool has held (0 where they are not bounded as a whole)."""
        return max([self.peak, *(zygote.peak_memory() for zygote in self.zygotes.values())])

    @property
    def isolated(self) -> bool:
        """The workers run in bubblewrap's sandbox (which a question's ban needs)."""
        return self.mode == "bubblewrap"

    @property
    def confinement(self) -> str:
        """How this pool's workers are confined, in a few words (for the grading log and results)."""
        how = {
            "bubblewrap": "bubblewrap's sandbox and a system-call filter",
            "user": f"an unprivileged user of its own (uid {self.uid}) and a system-call filter",
            "none": "no confinement",
        }[self.mode]
        if self.limits is not None:
            how += f"; bounded as a whole by {limits.mechanism()}"
        elif self.mode != "none":
            how += f"; not bounded as a whole ({self.unbounded})"
        return how

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
            members = [
                m
                for m in archive.infolist()
                if m.filename.startswith("files/") and not m.filename.endswith("/") and ".." not in m.filename
            ]
            key = hashlib.sha256(repr([(m.filename, m.CRC, m.file_size) for m in members]).encode()).hexdigest()[:16]
            if key not in self.supports:
                folder = self.scratch / f"support-{key}"
                for member in members:
                    target = folder / member.filename[len("files/") :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    with archive.open(member) as source, target.open("wb") as out:
                        shutil.copyfileobj(source, out)
                folder.mkdir(exist_ok=True)
                self.supports[key] = folder
        return self.supports[key]

    def zygote(self, environment: Environment) -> Zygote:
        """The zygote for ``environment``, made on first use (at most :data:`ZYGOTES` are kept; the
        one used least recently goes).

        Parameters
        ----------
        environment : Environment
            The support files and banned modules of the workers wanted.

        Returns
        -------
        Zygote
            Not started yet if new: it starts with its first worker.
        """
        if environment in self.zygotes:  # the most recently used last
            self.zygotes[environment] = self.zygotes.pop(environment)
        else:
            if environment.banned and not self.isolated:
                raise IsolationUnavailable(
                    "a question that bans a module needs the confined worker: "
                    + (isolation_problem(self.protect) or "this grader runs without it")
                )
            if len(self.zygotes) >= ZYGOTES:
                oldest = next(iter(self.zygotes))
                self.zygotes.pop(oldest).stop()
            self.zygotes[environment] = Zygote(environment, self)
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
