"""Where a machine's cgroups are, and which way of bounding a grading sandbox they could offer.

:mod:`coursekit.grading.limits` bounds each sandbox by a cgroup; this module finds what it needs
for that: the cgroup file systems mounted (``/proc/self/mountinfo``), the grading process's own
cgroups (``/proc/self/cgroup``), and for each mechanism (cgroup v1, cgroup v2 directly, cgroup v2
through systemd) a :class:`Plan` where the machine has what it needs, or a sentence saying what it
lacks. Whether a plan really works is found by :mod:`coursekit.grading.limits`, by making a group.

Everything read, written or run goes through a :class:`Host`, which tests point at a fake tree.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CONTROLLERS", "HOST", "LEAF_PREFIX", "OPTIONAL_V1", "Host", "Mount", "Plan", "keyed", "plans", "systemctl"]

CONTROLLERS = ("memory", "pids", "cpu")
LEAF_PREFIX = "lecturekit-grader-"  # cgroup v2: where a grader alone in its cgroup moves itself
# cgroup v1's hierarchies used where mounted: the CPU time a group has used (cgroup v2 counts it in
# the cpu controller's cpu.stat), and the freezer that holds a group still while it is killed.
OPTIONAL_V1 = ("cpuacct", "freezer")


class Host:
    """Where the kernel's and systemd's interfaces are, and the only code that touches them.

    Parameters
    ----------
    mountinfo, cgroup : path
        This process's mount table (where the cgroup file systems are) and cgroup membership:
        ``/proc/self/mountinfo`` and ``/proc/self/cgroup``.
    systemd_run, systemctl : str
        The programs of the third mechanism, by name on ``PATH`` or by path.
    euid : int or None
        The user to act as (default: this process's); systemd is asked with ``--user`` but for root.

    Tests point a Host at a fake tree and override its methods. What :mod:`coursekit.grading.limits`
    finds about it is cached in :attr:`found`.
    """

    def __init__(
        self,
        mountinfo="/proc/self/mountinfo",
        cgroup="/proc/self/cgroup",
        systemd_run="systemd-run",
        systemctl="systemctl",
        euid: int | None = None,
    ):
        self.mountinfo, self.cgroup = Path(mountinfo), Path(cgroup)
        self.systemd_run, self.systemctl = systemd_run, systemctl
        self.euid = getattr(os, "geteuid", lambda: -1)() if euid is None else euid
        self.found: tuple[Plan | None, list[str]] | None = None
        self.lock = threading.Lock()

    def read(self, path) -> str:
        return Path(path).read_text()

    def write(self, path, text: str) -> None:
        descriptor = os.open(path, os.O_WRONLY)  # never O_CREAT: a cgroup's files are the kernel's
        try:
            os.write(descriptor, text.encode())
        finally:
            os.close(descriptor)

    def exists(self, path) -> bool:
        return os.path.exists(path)

    def mkdir(self, path) -> None:
        os.mkdir(path)

    def rmdir(self, path) -> None:
        os.rmdir(path)

    def folders(self, path) -> list[str]:
        return sorted(entry.name for entry in os.scandir(path) if entry.is_dir(follow_symlinks=False))

    def signal(self, pid: int, number: int) -> None:
        os.kill(pid, number)

    def pid(self) -> int:
        return os.getpid()

    def which(self, program: str) -> str | None:
        return shutil.which(program)

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)


HOST = Host()


@dataclass(frozen=True)
class Mount:
    """A mounted cgroup hierarchy: the part of it mounted (``root``), where, and (v1) its controllers."""

    root: str
    point: Path
    controllers: frozenset = frozenset()

    def locate(self, path: str | None) -> Path | None:
        """The folder of cgroup ``path`` (as /proc/<pid>/cgroup names it), or None if not mounted here."""
        top = self.root.rstrip("/")
        if path is None or not (path == self.root or path.startswith(top + "/")):
            return None
        return self.point / path[len(top) :].lstrip("/")


@dataclass
class Plan:
    """A mechanism this machine could offer.

    ``kind`` is ``"v1"``, ``"v2"`` or ``"systemd"``; ``bases`` maps the grader's own cgroup folders
    to the controllers each gives (none for systemd); ``mount`` is the cgroup v2 hierarchy (v2,
    systemd); ``user`` and ``program`` say how to run ``systemd-run``.
    """

    kind: str
    description: str
    bases: dict[Path, frozenset] = field(default_factory=dict)
    mount: Mount | None = None
    user: bool = False
    program: str = ""


def _unescape(text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda match: chr(int(match[1], 8)), text)


def mounts(text: str) -> tuple[list[Mount], list[Mount]]:
    """The cgroup v1 and v2 mounts of a ``mountinfo`` table (v2 ones mounting the whole hierarchy first)."""
    v1, v2 = [], []
    for line in text.split("\n"):  # fields are separated by one space; the kernel escapes any in a path
        fields, _, tail = line.partition(" - ")
        fields, tail = fields.split(" "), tail.split(" ")
        if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
            mount = Mount(_unescape(fields[3]), Path(_unescape(fields[4])), frozenset(tail[2].split(",")))
            (v1 if tail[0] == "cgroup" else v2).append(mount)
    return v1, sorted(v2, key=lambda mount: mount.root != "/")


def memberships(text: str) -> dict[str, str]:
    """Controller -> cgroup path from a /proc/<pid>/cgroup file; ``""`` is cgroup v2's (less a leaf of ours)."""
    found = {}
    for line in text.split("\n"):
        parts = line.split(":", 2)
        if len(parts) == 3:
            for name in parts[1].split(",") if parts[1] else [""]:
                found[name] = parts[2]
    if re.fullmatch(rf".*/{LEAF_PREFIX}\d+", found.get("", "")):
        found[""] = found[""].rsplit("/", 1)[0] or "/"
    return found


def _v1(host: Host, v1: list[Mount], v2: list[Mount], own: dict) -> Plan | str:
    if not v1:
        return "no cgroup v1 hierarchy is mounted"
    bases, missing = {}, []
    for name in (*CONTROLLERS, *OPTIONAL_V1):
        folder = next((m.locate(own.get(name)) for m in v1 if name in m.controllers and m.locate(own.get(name))), None)
        if folder is None:
            missing += [name] if name not in OPTIONAL_V1 else []
        else:
            bases[folder] = bases.get(folder, frozenset()) | {name}
    if missing:
        return f"the {', '.join(missing)} controller(s) are not mounted as cgroup v1 hierarchies"
    used = sorted({n for names in bases.values() for n in names}, key=(*CONTROLLERS, *OPTIONAL_V1).index)
    return Plan("v1", f"cgroup v1 ({', '.join(used)})", bases)


def _v2(host: Host, v1: list[Mount], v2: list[Mount], own: dict) -> Plan | str:
    if not v2:
        return "no cgroup v2 hierarchy is mounted"
    folder = next((m.locate(own.get("")) for m in v2 if m.locate(own.get(""))), None)
    if folder is None:
        return "this process's cgroup v2 is not in the mounted hierarchy"
    try:
        offered = set(host.read(folder / "cgroup.controllers").split())
    except OSError:
        offered = set()
    lacking = [name for name in CONTROLLERS if name not in offered]
    if lacking:
        return (
            f"the cgroup v2 hierarchy at {v2[0].point} gives no {', '.join(lacking)} controller to the grader's "
            f"cgroup {own['']} (they are bound to cgroup v1 here, or not enabled in its parents' "
            "cgroup.subtree_control)"
        )
    return Plan("v2", "cgroup v2", {folder: frozenset(CONTROLLERS)}, v2[0])


def _systemd(host: Host, v1: list[Mount], v2: list[Mount], own: dict) -> Plan | str:
    program = host.which(host.systemd_run)
    if program is None:
        return f"{host.systemd_run} is not installed (it needs a machine run by systemd)"
    if not v2:
        return "no cgroup v2 hierarchy is mounted, where systemd would make scopes"
    user = host.euid != 0
    return Plan(
        "systemd", f"cgroup v2 through systemd-run{' --user' if user else ''} --scope", {}, v2[0], user, program
    )


def plans(host: Host) -> list[tuple[str, Plan | str]]:
    """Each mechanism, in the order to try them, with its plan here or what it lacks.

    Parameters
    ----------
    host : Host
        Where to look.

    Returns
    -------
    list of (str, Plan or str)
        ``"cgroup v1"``, ``"cgroup v2"`` and ``"systemd"``, each with a :class:`Plan` or a sentence;
        a single ``("cgroups", sentence)`` where the kernel's tables cannot be read (not Linux).
    """
    try:
        v1, v2 = mounts(host.read(host.mountinfo))
        own = memberships(host.read(host.cgroup))
    except OSError as error:
        return [("cgroups", f"they cannot be read here ({error.strerror}: {error.filename}); they need Linux")]
    return [
        (name, make(host, v1, v2, own))
        for name, make in (("cgroup v1", _v1), ("cgroup v2", _v2), ("systemd", _systemd))
    ]


def systemctl(host: Host, plan: Plan, *args: str) -> subprocess.CompletedProcess | None:
    """Run ``systemctl`` (``--user`` as the plan says) with ``args``; None if it did not run."""
    try:
        return host.run([host.systemctl, *(["--user"] if plan.user else []), *args], timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None


def keyed(text: str) -> dict[str, str]:
    """The ``key value`` lines of a cgroup file (``memory.events``, ``cgroup.events``, ``memory.oom_control``)."""
    return dict(line.split(None, 1) for line in text.splitlines() if len(line.split(None, 1)) == 2)
