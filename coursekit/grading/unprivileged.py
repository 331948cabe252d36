"""Where bubblewrap cannot run: the worker as an unprivileged user of its own, behind file permissions.

A grading container that gives each submission a machine of its own (Gradescope's) usually forbids
the user namespaces bubblewrap needs, and runs the grader as root. There the worker still must not
read the hidden tests, nor write the results: before it runs anything of the student's it becomes
a **user of its own**, an unused user ID (:func:`unused_uid`) that owns nothing but its working
folder, with no groups, no capabilities and ``no_new_privs`` (no setuid program can give root back),
and what it must not see is owned by root with mode 700 (the zip's ``source/``, the
``submission/`` and ``results/`` folders: ``run_autograder`` sets them so). :func:`problem` checks
this from that user's side before grading: it must be able to run the interpreter and import its
packages, and must fail to read every protected folder; otherwise grading refuses, saying which.

Every process of that user is the submission's, so the zygote ends them all with ``kill(-1)``
(:func:`kill_all`, as that user, reaches no one else), and ``RLIMIT_NPROC`` bounds their number.
The same system-call filter as under bubblewrap holds (:mod:`coursekit.grading.syscalls`), loaded
by the zygote itself.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

from coursekit.grading.isolation import HERE, WORKER_FILES, copy_support

__all__ = ["FIRST_UID", "kill_all", "problem", "unused_uid", "user_folder"]

FIRST_UID = 61_000  # the range searched for a user ID that no account or process has
LAST_UID = 61_999


def _used_uids() -> set[int]:
    used = set()
    try:
        with open("/etc/passwd") as passwd:
            fields = [line.split(":") for line in passwd]
            used |= {int(f[2]) for f in fields if len(f) >= 7 and f[2].isdigit()}
    except OSError:
        pass
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/status") as status:
                used |= {int(line.split()[1]) for line in status if line.startswith("Uid:")}
        except (OSError, ValueError, IndexError):
            continue
    return used


def unused_uid() -> int:
    """A user ID between :data:`FIRST_UID` and ``LAST_UID`` that no account and no process has."""
    used = _used_uids()
    for uid in range(FIRST_UID, LAST_UID + 1):
        if uid not in used:
            return uid
    raise RuntimeError(f"every user ID from {FIRST_UID} to {LAST_UID} is in use")


def _as_user(uid: int, action) -> int:
    """Run ``action()`` in a child that has become ``uid`` (no groups); its exit status (0: it returned True)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            code = 0 if action() else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def kill_all(uid: int) -> None:
    """Kill every process of ``uid`` (as ``uid``: ``kill(-1)`` reaches no process of another user)."""

    def kill() -> bool:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)
        return True

    _as_user(uid, kill)


def _refused(path: Path) -> bool:
    try:
        if path.is_dir():
            os.listdir(path)
        else:
            with open(path, "rb"):
                pass
    except PermissionError:
        return True
    except OSError:
        return not path.exists()
    return False


def problem(uid: int, protect) -> str | None:
    """Why the worker cannot run as ``uid`` here, or None.

    Parameters
    ----------
    uid : int
        The user the worker would become.
    protect : iterable of path
        What that user must not read (each must be refused to it).

    Returns
    -------
    str or None
        A sentence naming what it cannot reach, or what it can read but must not.
    """
    if os.geteuid() != 0:
        return "the grader is not root, so it cannot run the worker as a user of its own"
    for path in map(Path, protect):
        if path.exists() and _as_user(uid, lambda path=path: _refused(path)) != 0:
            return f"an unprivileged user can read {path}: make it root's alone (chmod 700)"
    import numpy  # the heaviest of what a notebook imports: its folder stands for the packages'

    for path in (Path(sys.executable), Path(os.__file__), Path(numpy.__file__)):
        if _as_user(uid, lambda path=path: os.access(path, os.R_OK)) != 0:
            return (
                f"a worker running as an unprivileged user cannot read {path}: make the folders of the "
                "Python environment readable by all (and each folder above them searchable, chmod o+x)"
            )
    return None


def user_folder(uid: int, support: Path | None) -> tuple[Path, Path]:
    """A working folder owned by ``uid`` (the support files in it, read-only), and a folder of the worker's files.

    Both are made in the system's temporary folder (the grader's own temporary folders are private
    to root), the second owned by root and readable by all. The caller removes both.
    """
    base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
    home = Path(tempfile.mkdtemp(prefix="lecturekit-worker-", dir=base))
    copy_support(support, home)
    if support is not None:
        for folder, dirs, files in os.walk(home):
            for name in dirs:
                os.chmod(os.path.join(folder, name), 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
    os.chown(home, uid, uid)
    os.chmod(home, 0o700)
    programs = Path(tempfile.mkdtemp(prefix="lecturekit-worker-files-", dir=base))
    for name in WORKER_FILES:
        shutil.copy(HERE / name, programs / name)
        os.chmod(programs / name, 0o644)
    os.chmod(programs, 0o755)
    return home, programs
