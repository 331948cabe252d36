"""The grading worker: the process that runs a student's code, and the zygote that forks it.

This file runs as a script, ``python worker.py CONTROL_FD``, never as part of the package: in the
sandbox (:mod:`coursekit.grading.isolation`) it is bound read-only at ``/grader/worker.py`` beside
``plain_data.py``, the only other module it needs, so that a worker runs even where ``lecturekit``
is hidden from it (a question that bans the package); ``coursekit`` is always hidden from it.

**The zygote.** It imports IPython and the scientific stack once (:data:`PRELOAD`), then waits for
requests from the grader on a Unix socket (``CONTROL_FD``): ``spawn`` forks a fresh worker with the
socket it was sent, ``reset`` ends the worker and everything it started. Forking from a process
that has already imported NumPy, SciPy and Matplotlib is what makes a worker cheap. No student
code ever runs in the zygote; it is not dumpable, so a worker cannot trace it or read its memory.

When the zygote is the sandbox's only tenant (``--isolated``: its own PID namespace, private
writable file systems), ``reset`` kills every process of the sandbox but itself and its init, then
compares what the writable folders, System V IPC, the user's kernel keyrings and pid 1 (bubblewrap's
init, by its program and command line) hold with what they held when the zygote was ready, and
reports the sandbox ``clean`` or not. The grader reuses a clean sandbox for the next submission and
throws away any other: nothing a submission leaves behind (a process, a file, a shared-memory
segment, a key, a replaced init) can reach the next. Under the sandbox's system-call filter no
worker can reach a keyring at all; unconfined, the zygote and every worker join a session keyring
of their own, so no worker holds a key of the grader's session (a login's Kerberos tickets, say)
or of another worker's.

As a user of its own (``--user``, where bubblewrap cannot run: :mod:`coursekit.grading.unprivileged`),
the zygote loads the system-call filter itself (:func:`install_filter`), limits that user's processes
(``RLIMIT_NPROC``), and ``reset`` kills every process of that user but itself; it is replaced after
every submission. A worker's processes have the highest ``oom_score_adj``, so that where the
sandbox's memory bound is reached the kernel kills one of them, not the zygote.

**The worker.** It runs notebook cells in an IPython shell and answers three requests over its
socket: run this cell, what is this name (a value, as plain data, or a function), and call this
function with these arguments. Its messages are a big-endian 8-byte length and that many bytes of
JSON. See :mod:`coursekit.grading.sandbox` for the grader's side.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import random
import resource
import signal
import socket
import struct
import sys
import time

if __package__:  # imported as coursekit.grading.worker (documentation, tests)
    from coursekit.grading.plain_data import decode, encode
else:  # run as a script: plain_data.py is beside this file (/grader in the sandbox)
    from plain_data import decode, encode

HEADER = struct.Struct("!Q")
# Imported by the zygote, before any worker exists (and so never counted in a cell's time): the
# scientific stack and what the notebooks' first cells import from it, then the course's own modules
# (every lecturekit/*.py of the working folder).
PRELOAD = (
    "numpy",
    "scipy",
    "scipy.stats",
    "scipy.optimize",
    "scipy.special",
    "scipy.sparse",
    "scipy.linalg",
    "matplotlib",
    "matplotlib.pyplot",
    "sympy",
    "pandas",
    "threadpoolctl",
    "tqdm.auto",
    *(
        f"sklearn.{name}"
        for name in (
            "base",
            "calibration",
            "cluster",
            "covariance",
            "datasets",
            "decomposition",
            "discriminant_analysis",
            "exceptions",
            "feature_extraction.text",
            "linear_model",
            "metrics",
            "mixture",
            "model_selection",
            "naive_bayes",
            "pipeline",
            "preprocessing",
        )
    ),
)
# What a worker may write, and so what must look as it did when the zygote was ready.
WRITABLE = ("/tmp", "/dev/shm", "/dev/mqueue")
IPC_TABLES = ("/proc/sysvipc/shm", "/proc/sysvipc/sem", "/proc/sysvipc/msg")
MAX_ENTRIES = 10_000  # in the writable folders: more is never clean (and is not walked further)
PR_SET_DUMPABLE = 4
# keyctl(2), which Python does not wrap: its system call number, and the operations used here.
KEYCTL = {"x86_64": 250, "aarch64": 219, "riscv64": 219, "ppc64le": 271, "s390x": 280}.get(os.uname().machine)
KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING, KEYCTL_READ = 0, 1, 11
SESSION_KEYRING, USER_KEYRING, USER_SESSION_KEYRING = -3, -4, -5


# --------------------------------------------------------------------------- the worker


def serve(channel: socket.socket, shell) -> None:  # pragma: no cover - runs in the worker process
    """Answer the grader's requests on ``channel`` until it closes (see the module docstring)."""
    namespace = shell.user_ns

    def receive() -> dict:
        (size,) = HEADER.unpack(read_exactly(HEADER.size))
        return json.loads(read_exactly(size))

    def read_exactly(size: int) -> bytes:
        data = bytearray()
        while len(data) < size:
            chunk = channel.recv(min(size - len(data), 1 << 20))
            if not chunk:
                raise SystemExit(0)
            data += chunk
        return bytes(data)

    def send(reply: dict) -> None:
        data = json.dumps(reply).encode()
        channel.sendall(HEADER.pack(len(data)) + data)

    def failure(error: BaseException) -> dict:
        status = "memory" if isinstance(error, MemoryError) else "error"
        return {"status": status, "detail": type(error).__name__}

    channel.sendall(HEADER.pack(0))  # ready: an empty message
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


def become_worker(channel_fd: int, memory_bytes: int, shell) -> None:  # pragma: no cover - forked child
    """In a child just forked from the zygote: shed the zygote's resources, set limits, then serve."""
    os.setsid()
    for number in range(1, signal.NSIG):
        with contextlib.suppress(OSError, ValueError):
            signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.closerange(3, channel_fd)
    os.closerange(channel_fd + 1, os.sysconf("SC_OPEN_MAX"))
    keyctl(KEYCTL_JOIN_SESSION_KEYRING, None)  # its keys die with it
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:  # where the sandbox's memory bound is reached, the kernel kills a worker's process, not the zygote
        with open("/proc/self/oom_score_adj", "w") as adjust:
            adjust.write("1000")
    except OSError:
        pass
    random.seed()  # as a fresh process would be: not the zygote's state, shared by every worker
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()
    serve(socket.socket(fileno=channel_fd), shell)


# --------------------------------------------------------------------------- the zygote


def make_shell():
    """An IPython shell with no history (no database file, no thread), as every worker starts.

    Its tracebacks are plain: nobody reads them (a worker prints to nothing), and the default,
    with each frame's context, takes a good part of a second per exception.
    """
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.xmode = "Plain"
    return InteractiveShell.instance(config=config)


def preload(banned: list[str]) -> None:
    """Import :data:`PRELOAD`, except what a question bans (which the sandbox hides anyway)."""
    course = sorted(
        f"lecturekit.{name[:-3]}"
        for name in (os.listdir("lecturekit") if os.path.isdir("lecturekit") else [])
        if name.endswith(".py") and not name.startswith("_")
    )
    for module in (*PRELOAD, *course):
        if any(module == b or module.startswith(b + ".") for b in banned):
            continue
        with contextlib.suppress(Exception):  # e.g. a module that needs a banned one: a worker imports it if it can
            __import__(module)


def install_filter(program: bytes) -> None:
    """Load a compiled system-call filter into the calling process, with the C library alone.

    Sets ``PR_SET_NO_NEW_PRIVS`` (required to load a filter without privileges; nothing the process
    runs next can gain any), then loads ``program`` (:func:`coursekit.grading.syscalls.program`).
    The filter holds for the calling thread and everything it starts afterwards, and cannot be
    removed: call it in a process that has not yet started threads.

    Parameters
    ----------
    program : bytes
        The classic-BPF program: 1 to 4096 instructions of 8 bytes.
    """
    if not program or len(program) % 8 or len(program) > 8 * 4096:
        raise ValueError(f"a seccomp program is 1 to 4096 instructions of 8 bytes, not {len(program)} bytes")
    libc = ctypes.CDLL(None, use_errno=True)
    instructions = ctypes.create_string_buffer(bytes(program), len(program))
    fprog = ctypes.create_string_buffer(struct.pack("@HP", len(program) // 8, ctypes.addressof(instructions)))
    # prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), then prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sock_fprog, 0, 0)
    for option, value, pointer in ((38, 1, None), (22, 2, fprog)):
        if libc.prctl(ctypes.c_int(option), ctypes.c_ulong(value), pointer, ctypes.c_ulong(0), ctypes.c_ulong(0)):
            code = ctypes.get_errno()
            raise OSError(code, f"the system-call filter cannot be loaded (prctl {option}): {os.strerror(code)}")


def keyctl(*args) -> int:
    """The ``keyctl`` system call (-1 where its number is not known here).

    Parameters
    ----------
    *args : int, None or ctypes buffer
        Its operation and arguments (None for a null pointer).

    Returns
    -------
    int
        What it returned.
    """
    if KEYCTL is None:
        return -1
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(KEYCTL, *[ctypes.c_long(a) if isinstance(a, int) else a for a in args])


def user_keys() -> tuple:
    """The keys linked in the user's keyrings (which outlive every process of the sandbox)."""
    found = []
    for keyring in (USER_KEYRING, USER_SESSION_KEYRING):
        buffer = ctypes.create_string_buffer(4096)
        size = keyctl(KEYCTL_READ, keyring, buffer, len(buffer))
        found.append(buffer.raw[:size] if 0 <= size <= len(buffer) else b"unreadable")
    return tuple(found)


def snapshot() -> tuple:
    """What a worker could have left behind: every entry of the writable folders, and IPC objects.

    Returns
    -------
    tuple
        Every entry's folder, name, mode, size, modification time and inode under the working
        folder and :data:`WRITABLE` (not in what is mounted there, read-only), the number of lines
        of each of :data:`IPC_TABLES`, the keys of :func:`user_keys`, and what pid 1 runs
        (:func:`init`). Raises OSError where a folder cannot
        be read or holds more than :data:`MAX_ENTRIES` entries (which the zygote counts as not
        clean, without walking them all).
    """
    entries = []
    for top in (os.getcwd(), *WRITABLE):
        if not os.path.isdir(top):
            continue
        device = os.stat(top).st_dev
        for folder, dirs, files in os.walk(top, onerror=_raise):
            # Not into what is mounted there (read-only: the support files, a virtual environment in /tmp)
            dirs[:] = [d for d in dirs if os.lstat(os.path.join(folder, d)).st_dev == device]
            if len(entries) + len(dirs) + len(files) > MAX_ENTRIES:
                raise OSError(f"more than {MAX_ENTRIES} entries")
            for name in dirs + files:
                info = os.lstat(os.path.join(folder, name))
                entries.append((folder, name, info.st_mode, info.st_size, info.st_mtime_ns, info.st_ino))
    tables = []
    for table in IPC_TABLES:
        try:
            with open(table) as handle:
                tables.append(len(handle.read().splitlines()))
        except OSError:
            tables.append(-1)
    return tuple(sorted(entries)), tuple(tables), user_keys(), init()


def init() -> tuple:
    """What the PID namespace's pid 1 runs: its program and command line (bubblewrap's, unless replaced)."""
    try:
        with open("/proc/1/cmdline", "rb") as handle:
            return os.readlink("/proc/1/exe"), handle.read()
    except OSError:
        return ("unreadable",)


def _raise(error: OSError) -> None:
    raise error


def others(own: set[int], uid: int | None = None) -> list[int]:
    """The processes this zygote can see but ``own``: every one of its PID namespace, or those of ``uid``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) in own:
            continue
        if uid is not None:
            try:
                with open(f"/proc/{entry}/status") as status:
                    if next(int(line.split()[1]) for line in status if line.startswith("Uid:")) != uid:
                        continue
            except (OSError, StopIteration, ValueError):
                continue
        found.append(int(entry))
    return found


def end_everything(mode: str, worker: int | None) -> bool:
    """Kill the worker and all it started.

    Parameters
    ----------
    mode : {"bubblewrap", "user", "none"}
        ``"bubblewrap"``: the zygote has a PID namespace of its own: kill every process of it but the
        zygote and bubblewrap's init. ``"user"``: the zygote runs as a user of its own: kill every
        process of that user but the zygote. Either again and again until none is left (at most
        2 s); ``kill(-1)`` reaches no other process in either. ``"none"``: kill the worker's process
        group only.
    worker : int or None
        The worker's process ID (used unconfined).

    Returns
    -------
    bool
        True when no process but the zygote (and its init) is left (always True unconfined).
    """
    if mode == "none":
        if worker is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(worker, signal.SIGKILL)
        _reap()
        return True
    own, uid = ({1, os.getpid()}, None) if mode == "bubblewrap" else ({os.getpid()}, os.getuid())
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)  # every process of the namespace, or of the user, but init and the caller
        _reap()
        if not others(own, uid):
            return True
        time.sleep(0.005)
    return False


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def zygote(
    control_fd: int, mode: str, banned: list[str], program: int | None = None, tasks: int | None = None
) -> None:  # pragma: no cover - sandboxed
    """Import the stack, say ready, then spawn and reset workers on request (see the module docstring).

    ``mode`` is how it is confined (see :func:`end_everything`); as a user of its own (``"user"``),
    it loads the system-call filter from the file descriptor ``program`` itself and limits that
    user's processes to ``tasks``.
    """
    isolated = mode == "bubblewrap"
    if isolated and not (os.getpid() == 2 and os.getppid() == 1):  # kill(-1) must never reach the host
        raise SystemExit("an isolated zygote must run in a PID namespace of its own, under bubblewrap's init")
    if mode == "user":
        if os.getuid() == 0 or os.getpid() == 1:  # kill(-1) must reach only this user's processes
            raise SystemExit("a zygote of its own user must not run as root")
        with os.fdopen(program, "rb") as handle:
            install_filter(handle.read())
        resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))
    ctypes.CDLL(None).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    keyctl(KEYCTL_JOIN_SESSION_KEYRING, None)  # hold none of the grader's keys
    for number in (
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGHUP,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGPIPE,
        signal.SIGALRM,
        signal.SIGQUIT,
    ):
        signal.signal(number, signal.SIG_IGN)
    control = socket.socket(fileno=control_fd)
    shell = make_shell()
    preload(banned)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the grader reads what the start printed; workers print to nothing
        os.dup2(null, fd)
    try:
        baseline = snapshot() if isolated else None
    except OSError:  # a sandbox it cannot take stock of is never clean: replaced after each submission
        baseline = None
    worker = None
    control.send(json.dumps({"ready": True, "banned": [b for b in banned if b in sys.modules]}).encode())
    while True:
        message, fds, _, _ = socket.recv_fds(control, 4096, 1)
        if not message:
            return
        request = json.loads(message)
        alone = end_everything(mode, worker)
        worker = None
        if request["op"] == "spawn":
            (channel,) = fds
            if not alone:
                os.close(channel)
                control.send(json.dumps({"pid": None}).encode())
                continue
            pid = os.fork()
            if pid == 0:
                try:
                    control.close()
                    become_worker(channel, int(request["memory"]), shell)
                finally:
                    os._exit(0)
            os.close(channel)
            worker = pid
            control.send(json.dumps({"pid": pid}).encode())
        elif request["op"] == "reset":
            try:
                clean = alone and baseline is not None and snapshot() == baseline
            except OSError:
                clean = False
            control.send(json.dumps({"clean": clean}).encode())


if __name__ == "__main__":  # pragma: no cover
    sys.path[0] = os.getcwd()  # the working folder, as a notebook's kernel has it; not this file's folder
    options = {a.split("=", 1)[0]: a.split("=", 1)[-1] for a in sys.argv[2:]}
    zygote(
        int(sys.argv[1]),
        "bubblewrap" if "--isolated" in options else "user" if "--user" in options else "none",
        [a.split("=", 1)[1] for a in sys.argv[2:] if a.startswith("--ban=")],
        int(options["--seccomp"]) if "--seccomp" in options else None,
        int(options["--tasks"]) if "--tasks" in options else None,
    )
