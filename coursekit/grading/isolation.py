"""What a grading worker can see: an allowlist of the machine, built by bubblewrap.

A worker (:mod:`coursekit.grading.worker`) runs a student's code. Confined, it runs under bubblewrap
(``bwrap``, Debian's ``bubblewrap``: the sandbox Flatpak is built on), which builds a new root
holding only what is listed here and nothing else of the host:

- the operating system's programs and libraries (``/usr``, and ``/lib``, ``/bin`` ... as they
  are on the host), and the folders of the grader's Python and its packages, all read-only;
- a private ``/tmp``, ``/dev/shm`` and working folder (``/home/student``, also ``HOME``), each a
  small file system in memory that disappears with the worker (:data:`TMPFS_BYTES`);
- in the working folder, read-only, what the notebooks load: the assignment's support files
  (``lecturekit/`` and ``data/``, from the autograder zip's ``files/``), as a notebook finds them
  in the course repository; never the grading machinery (``coursekit/``, :data:`GRADER_PACKAGES`),
  which the zip carries beside them for the grader and which an answer must not import;
- ``/grader``: the worker's own two files, read-only;
- a ``/proc`` of its own PID namespace (the worker sees its own processes and nothing else) and a
  minimal ``/dev``; no network (an empty network namespace); no capabilities, no setuid, no new
  user namespaces; the system-call filter of :mod:`coursekit.grading.syscalls` (``--seccomp``: no
  tracing of bubblewrap's init or the zygote, no keyrings, no mounts ...); and the whole sandbox
  dies with the grader.

So the repository and its history, the autograder zips, the masters, other submissions, home
folders, caches and other processes are not hidden from the worker: they are simply not there.

An :class:`Environment` says what one kind of worker gets: the support files, and modules it must
not import (a question that bans ``lecturekit`` or ``scipy.stats``): those are left out of the
working folder, or covered with a module that raises ``ModuleNotFoundError``, and never preloaded.

:func:`problem` says why confinement is impossible here (no bubblewrap, no Linux, no user
namespaces, no libseccomp for the filter, or a folder to protect that a bound folder would show),
or None. What bounds a sandbox as a whole is :mod:`coursekit.grading.limits`'s; where bubblewrap
cannot run at all, :mod:`coursekit.grading.unprivileged` keeps the worker away from the checks.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from coursekit.grading import syscalls

__all__ = ["Environment", "problem", "sandbox_command", "INSTALL_HINT"]

SANDBOX_HOME = "/home/student"
GRADER_DIR = "/grader"
TMPFS_BYTES = 128 * 2**20  # each of /tmp and the working folder
SHM_BYTES = 64 * 2**20
WORKER_FILES = ("worker.py", "plain_data.py")
HERE = Path(__file__).resolve().parent
SYSTEM = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
INSTALL_HINT = (
    "install bubblewrap (Debian, Ubuntu: `sudo apt-get install bubblewrap`; Fedora: `sudo dnf install bubblewrap`)"
)
# The grading machinery, which no answer may import (it could read the checks or forge a result): never
# bound into the working folder, and covered wherever else the worker could import it from.
GRADER_PACKAGES = ("coursekit",)
# A module's other names: banning it bans them too (decimal is its C module, or its pure-Python twin).
OTHER_NAMES = {"decimal": ("_decimal", "_pydecimal")}
BANNED_MODULE = 'raise ModuleNotFoundError(f"{__name__} is not available to this question\'s answer", name=__name__)\n'


@dataclass(frozen=True)
class Environment:
    """What one kind of worker sees and may import.

    Parameters
    ----------
    support : path or None
        A folder whose entries (``lecturekit/``, ``data/``, ...) appear, read-only, in the worker's
        working folder: the autograder zip's ``files/``, unpacked.
    banned : tuple of str
        Modules the worker must not import, e.g. ``("lecturekit",)`` or ``("scipy.stats",)``
        (held only when the worker is confined), with their other names (:data:`OTHER_NAMES`) added.
    """

    support: Path | None = None
    banned: tuple[str, ...] = ()

    def __post_init__(self):
        names = [*self.banned, *(other for name in self.banned for other in OTHER_NAMES.get(name, ()))]
        object.__setattr__(self, "banned", tuple(dict.fromkeys(names)))


def interpreter_folders() -> list[Path]:
    """The folders of this Python and its packages, outside ``/usr`` (bound whole anyway).

    Returns
    -------
    list of Path
        ``sys.prefix``, ``sys.base_prefix``, the folder of the real executable and any package
        folder on ``sys.path`` (a user's ``~/.local/.../site-packages``), resolved, with any folder
        inside another left out.
    """
    found = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)}
    found.add(Path(os.path.realpath(sys.executable)).parent)
    found |= {
        Path(p).resolve()
        for p in sys.path
        if p and Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()
    }
    found = {p for p in found if not p.is_relative_to("/usr")}
    return sorted(p for p in found if not any(p != q and p.is_relative_to(q) for q in found))


def visible_folders(environment: Environment) -> list[Path]:
    """Every host folder a confined worker sees (all read-only), for :func:`problem`'s check.

    Parameters
    ----------
    environment : Environment
        Whose support files to count.

    Returns
    -------
    list of Path
        ``/usr``, the system folders that are not links into it, :func:`interpreter_folders` and
        the entries of the support folder, resolved.
    """
    folders = [Path("/usr"), *interpreter_folders()]
    folders += [Path(s) for s in SYSTEM if os.path.isdir(s) and not os.path.islink(s)]
    if environment.support is not None:
        folders += [p.resolve() for p in Path(environment.support).iterdir()]
    return folders


def _ban_arguments(environment: Environment, banned_file: Path) -> list[str]:
    """Cover each banned module, and :data:`GRADER_PACKAGES`, wherever the worker could import it from."""
    arguments = []
    entries = [Path(p) for p in sys.path if p and Path(p).is_dir()]
    bound = [Path("/usr"), *interpreter_folders()]
    entries = [e.resolve() for e in entries if any(e.resolve().is_relative_to(b) for b in bound)]
    for name in (*GRADER_PACKAGES, *environment.banned):
        parts = name.split(".")
        places = [(e / Path(*parts), e / Path(*parts)) for e in entries]
        if environment.support is not None and len(parts) > 1:
            support = Path(environment.support).resolve()
            places.append((support / Path(*parts), Path(SANDBOX_HOME, *parts)))
        for host, inside in places:
            if host.is_dir():
                arguments += [
                    "--tmpfs",
                    str(inside),
                    "--ro-bind",
                    str(banned_file),
                    f"{inside}/__init__.py",
                    "--remount-ro",
                    str(inside),
                ]
            for module in sorted(host.parent.glob(f"{host.name}.*")) if host.parent.is_dir() else []:
                if module.suffix in (".py", ".so", ".pyc") and module.is_file():
                    arguments += ["--ro-bind", str(banned_file), str(inside.parent / module.name)]
    return arguments


def sandbox_command(
    environment: Environment, command: list[str], banned_file: Path | None = None, seccomp_fd: int | None = None
) -> list[str]:
    """``bwrap`` with the allowlist of the module docstring, then ``command`` inside it.

    Parameters
    ----------
    environment : Environment
        The support files and the banned modules.
    command : list of str
        What to run inside; :data:`GRADER_DIR` holds the worker's files.
    banned_file : Path or None
        A file holding :data:`BANNED_MODULE`, bound over banned modules and over
        :data:`GRADER_PACKAGES` where installed (needed if any are banned; a grading worker always
        gets one).
    seccomp_fd : int or None
        A file descriptor holding the system-call filter (:func:`coursekit.grading.syscalls.program`),
        which bubblewrap loads for ``command`` and everything it starts (pass it to the process).

    Returns
    -------
    list of str
    """
    args = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "grader",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(SHM_BYTES),
        "--tmpfs",
        "/dev/shm",
        "--mqueue",
        "/dev/mqueue",
        "--size",
        str(TMPFS_BYTES),
        "--tmpfs",
        "/tmp",
        "--size",
        str(TMPFS_BYTES),
        "--tmpfs",
        SANDBOX_HOME,
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind-try",
        "/etc/ld.so.cache",
        "/etc/ld.so.cache",
    ]
    for path in SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for folder in interpreter_folders():
        args += ["--ro-bind", str(folder), str(folder)]
    if environment.support is not None:
        tops = {*GRADER_PACKAGES, *(name for name in environment.banned if "." not in name)}
        for entry in sorted(Path(environment.support).iterdir()):
            if entry.name not in tops and entry.name.removesuffix(".py") not in tops:
                args += ["--ro-bind", str(entry.resolve()), f"{SANDBOX_HOME}/{entry.name}"]
    for name in WORKER_FILES:
        args += ["--ro-bind", str(HERE / name), f"{GRADER_DIR}/{name}"]
    if banned_file is not None:  # what a grading worker gets: the machinery covered, and the bans
        args += _ban_arguments(environment, banned_file)
    elif environment.banned:
        raise ValueError("banned modules need banned_file")
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", SANDBOX_HOME, "--"]
    return args + command


def copy_support(support: Path | None, folder: Path) -> None:
    """Copy the support files into ``folder`` (a worker's own, where no sandbox binds them), never the machinery."""
    if support is not None:
        shutil.copytree(
            support, folder, dirs_exist_ok=True, ignore=lambda parent, names: [n for n in names if n in GRADER_PACKAGES]
        )


def filter_file() -> int:
    """A new file descriptor (an anonymous file in memory) holding the system-call filter, at offset 0."""
    descriptor = os.memfd_create("lecturekit-seccomp")
    os.write(descriptor, syscalls.program())
    os.lseek(descriptor, 0, os.SEEK_SET)
    return descriptor


def _covers(folder: Path, protected: Path) -> bool:
    return protected.resolve() == folder or protected.resolve().is_relative_to(folder)


@functools.cache
def _probe() -> str | None:
    if not sys.platform.startswith("linux"):
        return (
            f"the grading sandbox needs Linux (this is {sys.platform}): grade in a Linux virtual machine or container"
        )
    if shutil.which("bwrap") is None:
        return f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}"
    found = syscalls.problem()
    if found:
        return found
    with tempfile.TemporaryDirectory(prefix="lecturekit-probe-") as support:
        program = filter_file()
        command = sandbox_command(
            Environment(Path(support)), [sys.executable, "-c", "import os; os.listdir('/')"], seccomp_fd=program
        )
        try:
            result = subprocess.run(
                command,
                capture_output=True,
                text=True,
                timeout=60,
                pass_fds=(program,),
                env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"bubblewrap did not start: {error}"
        finally:
            os.close(program)
    if result.returncode != 0:
        said = (result.stderr.strip().splitlines() or ["no message"])[-1]
        return (
            f"bubblewrap cannot build the sandbox here ({said}). It needs user namespaces: grade as "
            "root (in a container, run it with --privileged or with seccomp and AppArmor allowing "
            "namespaces), or allow unprivileged user namespaces (Ubuntu 24.04: sysctl "
            "kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return None


def problem(protect=(), environment: Environment | None = None) -> str | None:
    """Why workers cannot be confined here, or None.

    Parameters
    ----------
    protect : iterable of path
        Folders a worker must not see (the submissions, the autograder zips, the repository),
        besides the home folder, ``/tmp`` and the temporary folder, always protected. A confined
        worker sees only the folders of :func:`visible_folders`; if one of them holds a folder to
        protect (say, a virtual environment made in the home folder's root), confining is refused
        rather than showing it.
    environment : Environment or None
        The environment to check the folders of (default: no support files).

    Returns
    -------
    str or None
        A sentence saying what is missing and how to get it.
    """
    found = _probe()
    if found:
        return found
    protect = [Path.home(), Path("/tmp"), Path(tempfile.gettempdir()), *protect]
    for folder in visible_folders(environment or Environment()):
        for protected in protect:
            if _covers(folder, Path(protected)):
                return (
                    f"a confined worker would see {protected} through {folder}, which it needs "
                    f"(the interpreter, its packages or the support files): keep {protected} outside it"
                )
    return None
