"""Bounds on a grading sandbox as a whole: a cgroup per sandbox, by the kernel's own accounting.

A worker's ``RLIMIT_AS`` (:mod:`coursekit.grading.worker`) bounds one process; a student's code can
fork, fill the sandbox's in-memory folders or spin on every CPU from many processes. A
:class:`Group` adds it all up: the kernel charges to it the memory of its processes, the tmpfs files
they write and the kernel memory those cost (inodes, dentries: slab), its processes and threads, and
its CPU time, and holds it to its :class:`Limits`. A grading process ``P`` puts its groups in
``lecturekit-grading-<P>``, made below its own cgroup (of each controller) so that a machine's
limits on the grader still hold above them; each group is ``lecturekit-grading-<P>/<label>``.
:func:`remove_stale` removes what a grader killed before closing its groups left behind.

Mechanisms, tried in this order (:func:`mechanism` names the one that works here, :func:`problem`
says why none does and what would fix it):

1. **cgroup v1**: the memory, pids and cpu hierarchies, writable (root). ``memory.limit_in_bytes``
   and ``memory.memsw.limit_in_bytes`` (no swap beyond the bound; ``memory.swappiness`` 0 where
   swap is not accounted), ``pids.max``, ``cpu.cfs_quota_us`` per ``cpu.cfs_period_us``,
   ``cpu.shares``; the freezer, where mounted, holds the group still while it is killed, and
   cpuacct, where mounted, counts its CPU time (:meth:`Group.cpu_seconds`). Measured
   on Linux 6.18: v1 charges slab to ``memory.usage_in_bytes``, and a group of 256 MiB stops a file
   in a tmpfs of 1 GiB at about 250 MiB, and empty files at about 274,000, by the OOM killer.
2. **cgroup v2 directly**, where the grader may make cgroups below its own (root, or the owner of
   a delegated cgroup): ``memory.max``, ``memory.swap.max`` 0, ``pids.max``, ``cpu.max``,
   ``cpu.weight``; ``cgroup.kill`` (else ``cgroup.freeze``) to kill; ``cpu.stat`` counts CPU
   time. The kernel passes controllers to the children of a cgroup only while it holds no process
   (the root excepted): a grader alone in its cgroup first moves itself into a leaf beside its
   groups, ``lecturekit-grader-<P>``.
3. **cgroup v2 through systemd**, for a user without root: each group is a transient scope
   (:meth:`Group.command` prefixes ``systemd-run --user --scope``; no ``--user`` for root), found
   with ``systemctl show -p ControlGroup``. A scope lives where systemd puts it, not below the
   grader's cgroup, and its counts (:meth:`Group.oom_kills`, :meth:`Group.peak_memory`) go with it.

:mod:`coursekit.grading.cgroupfs` finds what the machine offers, and is the one place (its ``Host``)
where anything is read, written, signalled or run. Only the first mechanism is tested on a real
kernel (the tests' machine has cgroup v1 only); the second and third follow the kernel's
``cgroup-v2.rst`` and ``systemd.resource-control(5)`` and are tested against a fake cgroup tree and
fake ``systemd-run`` and ``systemctl`` only.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import contextlib
import errno
import math
import re
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from coursekit.grading.cgroupfs import CONTROLLERS, HOST, LEAF_PREFIX, Host, Plan, keyed, plans, systemctl

__all__ = ["Group", "Limits", "LimitsUnavailable", "mechanism", "problem", "remove_stale"]

PREFIX = "lecturekit-grading-"
ENABLE = "+memory +pids +cpu"
PERIOD_US = 100_000
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
RESERVED = ("tasks", "notify_on_release", "release_agent")  # cgroup v1's files without a dot, in every folder
REMOVE_SECONDS = 5.0  # a killed sandbox's tmpfs of 270,000 files takes about a second to go
FIX = (
    "Grade as root on Linux with cgroups (a virtual machine, or a container given a cgroup of its own), "
    "or as a user with a systemd session"
)
DELEGATE = (
    "as root, write the two lines `[Service]` and `Delegate=pids memory cpu` to "
    "/etc/systemd/system/user@.service.d/delegate.conf, run `systemctl daemon-reload`, and log in again"
)
NO_INTERNAL = (
    "{own} holds other processes than the grader, and cgroup v2 passes no controller to the children "
    "of a cgroup that holds processes: run the grader as the only process of its cgroup (exec it from "
    "the container's entry point, or start it with `systemd-run --scope -p Delegate=yes`)"
)


class LimitsUnavailable(RuntimeError):
    """No group can be made here (the message says what is missing and how to get it)."""


@dataclass(frozen=True)
class Limits:
    """What one sandbox may use, all its processes together.

    Parameters
    ----------
    memory_bytes : int
        Memory of all its processes, with the tmpfs files they write and the kernel memory those
        cost (slab); no swap beyond it. Past it the kernel OOM-kills a process of the group.
    tasks : int
        Processes and threads together; a ``fork`` past it fails with ``EAGAIN``.
    cpus : float
        At most this many CPUs' worth of time (a CFS quota per 100 ms), at least 0.01; every
        sandbox has the same weight when CPUs are short.
    """

    memory_bytes: int
    tasks: int
    cpus: float

    def __post_init__(self):
        for name, least in (("memory_bytes", 2**20), ("tasks", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"Limits.{name} must be a whole number of at least {least}, not {value!r}")
        if (
            isinstance(self.cpus, bool)
            or not isinstance(self.cpus, (int, float))
            or not math.isfinite(self.cpus)
            or self.cpus < 0.01
        ):
            raise ValueError(
                f"Limits.cpus must be a number of CPUs of at least 0.01 (the kernel's least quota is "
                f"1 ms per {PERIOD_US // 1000} ms), not {self.cpus!r}"
            )

    @property
    def quota_us(self) -> int:
        """CPU time per :data:`PERIOD_US`, in microseconds."""
        return max(1000, round(self.cpus * PERIOD_US))


PROBE = Limits(64 * 2**20, 16, 1.0)  # what a group made to find whether a mechanism works gets
_PARENTS = threading.Lock()  # a grading process's parent folders: made, and removed when empty, one at a time


# Run through systemd-run as the third mechanism's check: the limits its scope really got.
SCOPE_PROBE = """import sys
point, root, own = sys.argv[1:4]
path = [line.split(':', 2)[2].strip() for line in open(own) if line.startswith('0::')][0]
folder = point.rstrip('/') + '/' + path[len(root.rstrip('/')):].lstrip('/')
for name in ('memory.max', 'pids.max', 'cpu.max'):
    try:
        print(name, open(folder + '/' + name).read().strip(), sep='=')
    except OSError:
        print(name, 'missing', sep='=')
"""


def _check(host: Host, plan: Plan) -> str | None:
    """Why ``plan`` does not work here (having made and removed a group with it), or None."""
    label = f"probe-{secrets.token_hex(4)}"
    if plan.kind == "systemd":
        unit = f"{PREFIX}{host.pid()}-{label}.scope"
        probe = [sys.executable, "-c", SCOPE_PROBE, str(plan.mount.point), plan.mount.root, "/proc/self/cgroup"]
        command = _scope_command(plan, unit, PROBE, probe)
        try:
            result = host.run(command, timeout=60)
        except (OSError, subprocess.SubprocessError) as error:
            return f"{plan.program} did not run ({error})"
        if result.returncode != 0:
            said = (result.stderr.strip().splitlines() or ["no message"])[-1]
            return (
                f"`{' '.join(command[:3])}` fails ({said}): it needs a systemd "
                f"{'user manager (a login session, or `loginctl enable-linger`)' if plan.user else 'machine'}"
            )
        got = dict(line.split("=", 1) for line in result.stdout.splitlines() if "=" in line)
        wanted = {
            "memory.max": str(PROBE.memory_bytes),
            "pids.max": str(PROBE.tasks),
            "cpu.max": f"{PROBE.quota_us} {PERIOD_US}",
        }
        lacking = [name.split(".")[0] for name, value in wanted.items() if got.get(name) != value]
        if lacking:
            return (
                f"the scopes systemd makes are not bounded by the {', '.join(lacking)} controller(s), which "
                f"it is not delegated (systemd before 252 and RHEL 9 delegate only pids and memory): {DELEGATE}"
            )
        return None
    try:
        Group(PROBE, label, host=host, _plan=plan).close()
    except (LimitsUnavailable, OSError) as error:
        return str(error)
    return None


def _detect(host: Host) -> tuple[Plan | None, list[str]]:
    """The first mechanism that works on ``host`` and why each before it does not (cached in ``host``)."""
    with host.lock:
        if host.found is None:
            host.found = _choose(host)
        return host.found


def _choose(host: Host) -> tuple[Plan | None, list[str]]:
    reasons = []
    for name, plan in plans(host):
        found = _check(host, plan) if isinstance(plan, Plan) else plan
        if found is None:
            return plan, reasons
        reasons.append(f"{name}: {found}")
    return None, reasons


def problem(host: Host | None = None) -> str | None:
    """Why no sandbox can be bounded here (what each mechanism lacks, how to get it), or None.

    Found once per ``host`` (default: this machine), by making and removing a group.
    """
    plan, reasons = _detect(host or HOST)
    return None if plan else f"no grading sandbox can be bounded as a whole here ({'; '.join(reasons)}). {FIX}"


def mechanism(host: Host | None = None) -> str | None:
    """What bounds sandboxes on ``host`` (default: this machine), for messages, or None.

    E.g. ``"cgroup v1 (memory, pids, cpu, cpuacct, freezer)"``, ``"cgroup v2"``, ``"cgroup v2 through systemd-run
    --user --scope"``.
    """
    plan, _ = _detect(host or HOST)
    return plan.description if plan else None


# --------------------------------------------------------------------------- one sandbox's group


def _scope_command(plan: Plan, unit: str, limits: Limits, argv: list[str]) -> list[str]:
    return [
        plan.program,
        *(["--user"] if plan.user else []),
        "--scope",
        "--quiet",
        "--collect",
        f"--unit={unit}",
        "-p",
        f"MemoryMax={limits.memory_bytes}",
        "-p",
        "MemorySwapMax=0",
        "-p",
        f"TasksMax={limits.tasks}",
        "-p",
        f"CPUQuota={max(1, round(limits.cpus * 100))}%",
        "-p",
        "CPUWeight=100",
        "--",
        *argv,
    ]


def _settings(kind: str, limits: Limits) -> list[tuple[str, str, object, bool]]:
    """(controller, file, value, required), in the order they are written."""
    m, q = limits.memory_bytes, limits.quota_us
    if kind == "v1":  # the memory bound before memsw's, which the kernel keeps at least as high
        return [
            ("memory", "memory.limit_in_bytes", m, True),
            ("memory", "memory.memsw.limit_in_bytes", m, False),
            ("pids", "pids.max", limits.tasks, True),
            ("cpu", "cpu.cfs_period_us", PERIOD_US, True),
            ("cpu", "cpu.cfs_quota_us", q, True),
            ("cpu", "cpu.shares", 1024, True),
        ]
    return [
        ("memory", "memory.max", m, True),
        ("memory", "memory.swap.max", 0, False),
        ("pids", "pids.max", limits.tasks, True),
        ("cpu", "cpu.max", f"{q} {PERIOD_US}", True),
        ("cpu", "cpu.weight", 100, True),
    ]


def _prepare_v2(host: Host, own: Path) -> None:
    """Let the grader's own cgroup pass the controllers on, moving the grader into a leaf if it must."""
    control = own / "cgroup.subtree_control"
    if set(CONTROLLERS) <= set(host.read(control).split()):
        return
    try:
        host.write(control, ENABLE)
        return
    except OSError as error:
        if error.errno != errno.EBUSY:
            raise
    pid = str(host.pid())
    if host.read(own / "cgroup.procs").split() != [pid]:
        raise LimitsUnavailable(NO_INTERNAL.format(own=own))
    leaf = own / f"{LEAF_PREFIX}{pid}"
    if not host.exists(leaf):
        host.mkdir(leaf)
    host.write(leaf / "cgroup.procs", pid)
    host.write(control, ENABLE)


class Group:
    """One sandbox's cgroup(s), made with its limits set.

    Parameters
    ----------
    limits : Limits
        What the sandbox may use, all its processes together.
    label : str
        Its name among the grading process's groups: letters, digits, ``_`` and ``-`` (64 at most).
    host : Host or None
        Where the cgroups are (default: this machine).

    Start the sandbox with ``subprocess.Popen(group.command(argv), preexec_fn=group.preexec)``:
    every process it starts is then in the group. Raises :class:`LimitsUnavailable` where no group
    can be made (:func:`problem`), ValueError for a bad or taken label.
    """

    def __init__(self, limits: Limits, label: str, *, host: Host | None = None, _plan: Plan | None = None):
        if not isinstance(limits, Limits):
            raise TypeError(f"limits must be a Limits, not {type(limits).__name__}")
        if not isinstance(label, str) or not LABEL.fullmatch(label) or label in RESERVED:
            raise ValueError(
                f"a group's label is a letter or digit and at most 63 more letters, digits, '_' or '-', "
                f"and not one of the files of a cgroup ({', '.join(RESERVED)}): not {label!r}"
            )
        self.host = host or HOST
        self.plan = _plan or _detect(self.host)[0]
        if self.plan is None:
            raise LimitsUnavailable(problem(self.host))
        self.limits, self.label, self.unit = limits, label, ""
        self.folders: list[tuple[Path, frozenset]] = []
        self.closed = False
        if self.plan.kind == "systemd":  # systemd-run makes the scope when command() runs
            self.unit = f"{PREFIX}{self.host.pid()}-{label}-{secrets.token_hex(4)}.scope"
            return
        try:
            self._make()
        except BaseException as error:
            self.close()
            if isinstance(error, FileExistsError):
                raise ValueError(
                    f"a group labelled {label!r} exists already: labels are unique in a grading "
                    "process (close it first)"
                ) from error
            if isinstance(error, OSError):
                raise LimitsUnavailable(
                    f"cannot make the cgroup {label!r} with {self.plan.description} "
                    f"({error.strerror}: {error.filename}): grade as root, or as the "
                    "owner of a delegated cgroup"
                ) from error
            raise

    def _make(self) -> None:
        host, pid = self.host, self.host.pid()
        with _PARENTS:
            for base, names in self.plan.bases.items():
                if self.plan.kind == "v2":
                    _prepare_v2(host, base)
                parent = base / f"{PREFIX}{pid}"
                if not host.exists(parent):
                    host.mkdir(parent)
                if self.plan.kind == "v2":  # before its children exist, so that they get the controllers' files
                    host.write(parent / "cgroup.subtree_control", ENABLE)
                host.mkdir(parent / self.label)
                self.folders.append((parent / self.label, names))
        for folder, names in self.folders:
            for controller, name, value, required in _settings(self.plan.kind, self.limits):
                if controller in names and (required or host.exists(folder / name)):
                    host.write(folder / name, str(value))
            if self.plan.kind == "v1" and "memory" in names and not host.exists(folder / "memory.memsw.limit_in_bytes"):
                host.write(folder / "memory.swappiness", "0")  # swap is not accounted: keep the group out of it

    @classmethod
    def _adopt(cls, host: Host, plan: Plan, folders: list[tuple[Path, frozenset]], unit: str = "") -> Group:
        """A group left by another process, to kill and remove."""
        group = cls.__new__(cls)
        group.host, group.plan, group.folders, group.unit, group.closed = host, plan, folders, unit, False
        group.limits, group.label = None, folders[0][0].name if folders else unit
        return group

    @property
    def directories(self) -> list[Path]:
        """Its cgroup folders (one per v1 hierarchy; a systemd scope's once it runs)."""
        return [folder for folder, _ in self._found()]

    def _found(self) -> list[tuple[Path, frozenset]]:
        if self.plan.kind == "systemd" and not self.folders:
            result = systemctl(self.host, self.plan, "show", "-p", "ControlGroup", "--value", self.unit)
            folder = self.plan.mount.locate(result.stdout.strip() or None) if result else None
            if folder is not None and self.host.exists(folder):
                self.folders = [(folder, frozenset(CONTROLLERS))]
        return self.folders

    def _folder(self, controller: str) -> Path | None:
        return next((folder for folder, names in self._found() if controller in names), None)

    def command(self, argv: list[str]) -> list[str]:
        """What to run instead of ``argv`` (once, under systemd): itself, or ``systemd-run ... -- argv``."""
        argv = [str(part) for part in argv]
        return _scope_command(self.plan, self.unit, self.limits, argv) if self.plan.kind == "systemd" else argv

    def preexec(self) -> None:
        """Move the calling process into the group (``Popen(preexec_fn=...)``: the child, before exec).

        A no-op under systemd, where :meth:`command` does it. Raises OSError if the kernel refuses,
        so that nothing runs outside the group.
        """
        for folder, _ in self.folders if self.plan.kind != "systemd" else []:
            self.host.write(folder / "cgroup.procs", str(self.host.pid()))

    def pids(self) -> list[int]:
        """Every process in the group now (as this process's PID namespace numbers them)."""
        found = set()
        for folder, _ in self._found():
            with contextlib.suppress(OSError, ValueError):
                found |= {int(pid) for pid in self.host.read(folder / "cgroup.procs").split()}
        return sorted(found)

    def _stop(self, deadline: float):
        """Freeze the group (or, in v2, have the kernel kill it); a function that thaws it, or None."""
        host, v1 = self.host, self.plan.kind == "v1"
        folder = self._folder("freezer" if v1 else "memory")
        state, frozen, thawed = ("freezer.state", "FROZEN", "THAWED") if v1 else ("cgroup.freeze", "1", "0")

        def still() -> bool:
            if v1:
                return host.read(folder / state).strip() == frozen
            return keyed(host.read(folder / "cgroup.events")).get("frozen") == "1"

        def thaw() -> None:
            with contextlib.suppress(OSError):
                host.write(folder / state, thawed)

        try:
            if folder is not None and not v1 and host.exists(folder / "cgroup.kill"):
                host.write(folder / "cgroup.kill", "1")
            elif folder is not None and host.exists(folder / state):
                host.write(folder / state, frozen)
                until = min(deadline, time.monotonic() + 1.0)  # a task in uninterruptible sleep may not freeze
                while time.monotonic() < until and not still():
                    time.sleep(0.002)
                return thaw
        except OSError:
            pass
        return None

    def _populated(self) -> bool:
        if self.pids():
            return True
        folder = None if self.plan.kind == "v1" else self._folder("memory")
        try:
            return folder is not None and keyed(self.host.read(folder / "cgroup.events")).get("populated") == "1"
        except OSError:
            return False

    def kill(self, seconds: float = 2.0) -> bool:
        """SIGKILL everything in the group, again and again for up to ``seconds``; True once it is empty.

        The group is first frozen where it can be (v1's freezer, v2's ``cgroup.freeze``), so that
        nothing forks while it is killed, or killed by the kernel at once (v2's ``cgroup.kill``).
        A killed process's zombie still counts against ``pids.max`` until it is reaped.
        """
        deadline = time.monotonic() + seconds
        thaw, delay = self._stop(deadline), 0.001
        try:
            while True:
                pids = self.pids()
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        self.host.signal(pid, signal.SIGKILL)
                if thaw is not None:  # killed while frozen: they die as they thaw, without running again
                    thaw, then = None, thaw
                    then()
                if not pids and not self._populated():
                    return True
                if time.monotonic() >= deadline:
                    return False
                time.sleep(delay)
                delay = min(2 * delay, 0.05)
        finally:
            if thaw is not None:
                thaw()

    def _count(self, v1: tuple[str, str | None], v2: tuple[str, str | None]) -> int:
        name, key = v1 if self.plan.kind == "v1" else v2
        folder = self._folder("memory")
        try:
            text = self.host.read(folder / name) if folder is not None else "0"
            return int(keyed(text).get(key, 0) if key else text.strip())
        except (OSError, ValueError):
            return 0

    def oom_kills(self) -> int:
        """How many processes the kernel has killed in the group for its memory bound, so far."""
        return self._count(("memory.oom_control", "oom_kill"), ("memory.events", "oom_kill"))

    def peak_memory(self) -> int:
        """The group's peak memory use in bytes, tmpfs and kernel memory included (0 where not known)."""
        return self._count(("memory.max_usage_in_bytes", None), ("memory.peak", None))

    def cpu_seconds(self) -> float | None:
        """The CPU time all the group's processes have used so far, those ended included, in seconds.

        The kernel's own count: cgroup v1's ``cpuacct.usage`` (nanoseconds; None where the cpuacct
        hierarchy is not mounted), cgroup v2's ``usage_usec`` in ``cpu.stat``. None where it cannot
        be read. A process in the group cannot reset it (the files are root's, and not in the sandbox).
        """
        v1 = self.plan.kind == "v1"
        folder = self._folder("cpuacct" if v1 else "cpu")
        try:
            if folder is None:
                return None
            if v1:
                return int(self.host.read(folder / "cpuacct.usage").strip()) / 1e9
            return int(keyed(self.host.read(folder / "cpu.stat"))["usage_usec"]) / 1e6
        except (OSError, ValueError, KeyError):
            return None

    def close(self) -> None:
        """Kill everything in the group, then remove its folders (the parent too if empty); never raises."""
        if self.closed:
            return
        self.closed = True
        try:
            self.kill()
            if self.plan.kind == "systemd":  # --collect: systemd removes the scope when it is empty
                if self.unit:
                    systemctl(self.host, self.plan, "stop", self.unit)
                return
            deadline = time.monotonic() + REMOVE_SECONDS
            for folder, _ in reversed(self.folders):
                _remove(self.host, folder, deadline)
            with _PARENTS:
                for folder, _ in self.folders:
                    _remove(self.host, folder.parent, 0.0)
        except Exception:  # noqa: BLE001 - closing happens on the way out of anything; it must not mask it
            pass


def _remove(host: Host, folder: Path, deadline: float) -> None:
    """Remove a cgroup folder, waiting until ``deadline`` while the kernel still holds it (EBUSY)."""
    while True:
        try:
            host.rmdir(folder)
            return
        except FileNotFoundError:
            return
        except OSError as error:
            if error.errno != errno.EBUSY or time.monotonic() >= deadline:
                return
        time.sleep(0.02)


def remove_stale(pid: int, *, host: Host | None = None) -> None:
    """Kill and remove what is left of the groups of grading process ``pid``, dead before closing them.

    They are looked for below this process's own cgroups (call it from where the dead grader ran:
    the same service, container or shell), or under systemd by their scopes' names, on ``host``
    (default: this machine).
    """
    host = host or HOST
    plan, _ = _detect(host)
    if plan is None:
        return
    if plan.kind == "systemd":
        result = systemctl(
            host, plan, "list-units", "--all", "--plain", "--no-legend", "--type=scope", f"{PREFIX}{int(pid)}-*"
        )
        for line in result.stdout.splitlines() if result else []:
            if line.split():
                Group._adopt(host, plan, [], line.split()[0]).close()
        return
    parents = {base: base / f"{PREFIX}{int(pid)}" for base in plan.bases}
    labels = set()
    for parent in parents.values():
        with contextlib.suppress(OSError):
            labels |= set(host.folders(parent))
    for label in sorted(labels):
        folders = [
            (parent / label, plan.bases[base]) for base, parent in parents.items() if host.exists(parent / label)
        ]
        Group._adopt(host, plan, folders).close()
    with _PARENTS:
        for base, parent in parents.items():
            _remove(host, parent, 0.0)
            if plan.kind == "v2":
                _remove(host, base / f"{LEAF_PREFIX}{int(pid)}", 0.0)
