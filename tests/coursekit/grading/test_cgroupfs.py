"""How each mechanism is found and driven (coursekit.grading.cgroupfs, coursekit.grading.limits), on a fake tree.

cgroup v2 and systemd cannot run where these tests were written (cgroup v1 only), so they are
driven against :class:`FakeTree`, a cgroup v2 hierarchy in a temporary folder whose kernel part
(and systemd's) is played here: which files are written, where and in which order, what is refused
and what ``problem()`` then says. tests/coursekit/grading/test_limits.py checks on the real kernel
what the groups hold.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coursekit.grading import cgroupfs, limits
from coursekit.grading.cgroupfs import Host
from coursekit.grading.limits import ENABLE, PREFIX, Group, Limits, LimitsUnavailable

MiB = 2**20


@given(
    st.lists(
        st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=8), min_size=1, max_size=4
    )
)
def test_mount_points_are_read_back_as_the_kernel_escapes_them(parts):
    point = "/" + "/".join(parts)
    escaped = "".join(f"\\{ord(c):03o}" if c in " \t\n\\" else c for c in point)
    (mount,), _ = cgroupfs.mounts(f"35 31 0:32 /a\\040b {escaped} rw - cgroup cgroup rw,memory\n")
    assert mount.point == Path(point) and mount.controllers >= {"memory"}
    assert mount.locate("/a b/c/d") == Path(point) / "c/d"
    assert mount.locate("/a bc") is None and mount.locate("/elsewhere") is None


def test_the_folders_found_for_this_process_hold_it():
    found = [plan for _, plan in cgroupfs.plans(cgroupfs.HOST) if isinstance(plan, cgroupfs.Plan)]
    folders = [folder for plan in found for folder in plan.bases]
    if not folders:
        pytest.skip("no cgroup hierarchy here offers the memory, pids and cpu controllers")
    for folder in folders:  # the grader's own cgroup in each hierarchy, from /proc/self/mountinfo and /cgroup
        assert str(os.getpid()) in (folder / "cgroup.procs").read_text().split(), folder


SYSTEMD_SLICE = "/user.slice/user-1000.slice/user@1000.service/app.slice"
CONTROLLER_FILES = {
    "memory": {
        "memory.max": "max",
        "memory.swap.max": "max",
        "memory.peak": "0",
        "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n",
    },
    "pids": {"pids.max": "max"},
    "cpu": {"cpu.max": "max 100000", "cpu.weight": "100", "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n"},
}


class FakeTree(Host):
    """A cgroup v2 hierarchy in a folder, with the kernel's part (and systemd's) played here.

    A folder made gets the interface files of the controllers its parent passes on; a parent passes
    only controllers it has, and only while it holds no process (the root excepted); ``cgroup.kill``
    and signals empty ``cgroup.procs``. Every change made is in :attr:`journal`, paths relative to
    the hierarchy. ``writable`` is the part of the tree the grader may change (None: all of it, as
    root); ``delegated`` the controllers systemd passes to a user's scopes; ``kill_file`` whether
    the kernel has ``cgroup.kill``.
    """

    def __init__(
        self,
        tmp: Path,
        own: str,
        procs: dict[str, list[int]],
        writable: str | None = None,
        systemd: bool = False,
        delegated: str = "memory pids cpu",
        kill_file: bool = True,
        euid: int = 0,
    ):
        self.top, self.kill_file, self.delegated = tmp / "cgroup2", kill_file, delegated
        self.writable, self.journal, self.grader = writable, [], 4242
        self.top.mkdir()
        (self.top / "cgroup.controllers").write_text("cpuset cpu io memory pids")
        (self.top / "cgroup.subtree_control").write_text("cpu memory pids")
        (self.top / "cgroup.procs").write_text("")
        for path in {own, *procs, SYSTEMD_SLICE}:
            for depth in range(1, len(Path(path).parts)):
                folder = self.top.joinpath(*Path(path).parts[1 : depth + 1])
                if not folder.exists():  # made top down, each parent passing the controllers on
                    (folder.parent / "cgroup.subtree_control").write_text("cpu memory pids")
                    self._make(folder)
        for path, pids in procs.items():
            (self.top / path.lstrip("/") / "cgroup.procs").write_text("".join(f"{p}\n" for p in pids))
        (self.top / SYSTEMD_SLICE.lstrip("/") / "cgroup.subtree_control").write_text(delegated)
        (tmp / "mountinfo").write_text(f"30 25 0:26 / {self.top} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n")
        (tmp / "cgroup").write_text(f"0::{own}\n")
        super().__init__(
            tmp / "mountinfo", tmp / "cgroup", "/fake/systemd-run" if systemd else "missing", "/fake/systemctl", euid
        )

    # the kernel's part

    def _make(self, folder: Path) -> None:
        folder.mkdir(exist_ok=True)
        passed = (folder.parent / "cgroup.subtree_control").read_text().split()
        files = {
            "cgroup.controllers": " ".join(passed),
            "cgroup.subtree_control": "",
            "cgroup.procs": "",
            "cgroup.events": "populated 0\nfrozen 0\n",
            "cgroup.freeze": "0",
            **({"cgroup.kill": ""} if self.kill_file else {}),
        }
        for name in passed:
            files.update(CONTROLLER_FILES.get(name, {}))
        for name, text in files.items():
            if not (folder / name).exists():
                (folder / name).write_text(text)

    def relative(self, path) -> str:
        return "/" + Path(path).relative_to(self.top).as_posix().removeprefix(".")

    def _allowed(self, path) -> None:
        if self.writable is not None and not self.relative(path).startswith(self.writable):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))

    def _procs(self, folder: Path) -> list[int]:
        return [int(p) for p in (folder / "cgroup.procs").read_text().split()]

    def _take(self, pid: int) -> None:
        for procs in self.top.rglob("cgroup.procs"):
            procs.write_text("".join(f"{p}\n" for p in map(int, procs.read_text().split()) if p != pid))

    def mkdir(self, path) -> None:
        self._allowed(path)
        os.mkdir(path)
        self._make(Path(path))
        self.journal.append(("mkdir", self.relative(path)))

    def rmdir(self, path) -> None:
        path = Path(path)
        self._allowed(path)
        if not path.is_dir():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        if any(p.is_dir() for p in path.iterdir()) or self._procs(path):
            raise OSError(errno.EBUSY, "Device or resource busy", str(path))
        shutil.rmtree(path)
        self.journal.append(("rmdir", self.relative(path)))

    def write(self, path, text: str) -> None:
        path, folder, written = Path(path), Path(path).parent, text
        self._allowed(path)
        if not path.is_file():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(path))
        root = folder == self.top
        if path.name == "cgroup.subtree_control":
            wanted = {word[1:] for word in text.split()}
            if not wanted <= set((folder / "cgroup.controllers").read_text().split()):
                raise OSError(errno.ENOENT, "No such file or directory", str(path))
            if not root and self._procs(folder):
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            text = " ".join(sorted(wanted | set(path.read_text().split())))
        elif path.name == "cgroup.procs":
            if not root and (folder / "cgroup.subtree_control").read_text().split():
                raise OSError(errno.EBUSY, "Device or resource busy", str(path))
            self._take(int(text))
            text = "".join(f"{p}\n" for p in [*self._procs(folder), int(text)])
        elif path.name == "cgroup.kill":
            for pid in self._procs(folder):
                self._take(pid)
        elif path.name == "cgroup.freeze":
            (folder / "cgroup.events").write_text(f"populated 0\nfrozen {text}\n")
        path.write_text(text)
        self.journal.append(("write", self.relative(path), written))

    def signal(self, pid: int, number: int) -> None:
        self.journal.append(("signal", pid, number))
        self._take(pid)

    def pid(self) -> int:
        return self.grader

    def which(self, program: str) -> str | None:
        return program if program.startswith("/fake/") else None

    # systemd's part: systemd-run --scope, systemctl show, stop and list-units

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        self.journal.append(("run", *argv))
        split = argv.index("--") if "--" in argv else len(argv)
        options, command = argv[:split], argv[split + 1 :]
        if argv[0] == self.systemd_run:
            unit = next(a.split("=", 1)[1] for a in options if a.startswith("--unit="))
            scope = self.top / SYSTEMD_SLICE.lstrip("/") / unit
            self._make(scope)
            values = dict(options[i + 1].split("=", 1) for i, a in enumerate(options) if a == "-p")
            for name, value in (
                ("memory.max", values["MemoryMax"]),
                ("memory.swap.max", values["MemorySwapMax"]),
                ("pids.max", values["TasksMax"]),
                ("cpu.weight", values["CPUWeight"]),
                ("cpu.max", f"{int(values['CPUQuota'].rstrip('%')) * 1000} 100000"),
            ):
                if (scope / name).exists():
                    (scope / name).write_text(value)
            if limits.SCOPE_PROBE in command:  # run it, in the scope as far as it can tell
                (scope / "probe-cgroup").write_text(f"0::{self.relative(scope)}\n")
                done = subprocess.run([*command[:-1], str(scope / "probe-cgroup")], capture_output=True, text=True)
                shutil.rmtree(scope)
                return done
            (scope / "cgroup.procs").write_text("6000\n6001\n")  # the sandbox's processes
            return subprocess.CompletedProcess(argv, 0, "", "")
        verb, unit = argv[2], argv[-1]
        scope = self.top / SYSTEMD_SLICE.lstrip("/") / unit
        if verb == "show":
            return subprocess.CompletedProcess(argv, 0, f"{self.relative(scope)}\n" if scope.exists() else "\n", "")
        if verb == "stop" and scope.exists():
            self.rmdir(scope)
        if verb == "list-units":
            units = [p.name for p in scope.parent.iterdir() if p.is_dir() and fnmatch.fnmatch(p.name, unit)]
            return subprocess.CompletedProcess(argv, 0, "".join(f"{u} loaded active running {u}\n" for u in units), "")
        return subprocess.CompletedProcess(argv, 0, "", "")


def normal(journal: list[tuple]) -> list[tuple]:
    """The journal, with the random part of probe labels left out."""
    return [
        tuple(re.sub(r"probe-[0-9a-f]{8}", "probe", part) if isinstance(part, str) else part for part in entry)
        for entry in journal
    ]


def settings(folder: str) -> list[tuple]:
    """The writes that set Limits(256 MiB, 64, 0.5) in cgroup v2."""
    return [
        ("write", f"{folder}/memory.max", str(256 * MiB)),
        ("write", f"{folder}/memory.swap.max", "0"),
        ("write", f"{folder}/pids.max", "64"),
        ("write", f"{folder}/cpu.max", "50000 100000"),
        ("write", f"{folder}/cpu.weight", "100"),
    ]


def test_v2_a_grader_alone_in_its_cgroup_moves_into_a_leaf_then_makes_groups(tmp_path):
    tree = FakeTree(tmp_path, "/grader.service", {"/grader.service": [4242]})
    assert limits.problem(tree) is None and limits.mechanism(tree) == "cgroup v2"
    own, parent = "/grader.service", "/grader.service/lecturekit-grading-4242"
    probe = f"{parent}/probe"
    assert normal(tree.journal) == [
        ("mkdir", f"{own}/lecturekit-grader-4242"),
        ("write", f"{own}/lecturekit-grader-4242/cgroup.procs", "4242"),
        ("write", f"{own}/cgroup.subtree_control", ENABLE),
        ("mkdir", parent),
        ("write", f"{parent}/cgroup.subtree_control", ENABLE),
        ("mkdir", probe),
        ("write", f"{probe}/memory.max", str(64 * MiB)),
        ("write", f"{probe}/memory.swap.max", "0"),
        ("write", f"{probe}/pids.max", "16"),
        ("write", f"{probe}/cpu.max", "100000 100000"),
        ("write", f"{probe}/cpu.weight", "100"),
        ("write", f"{probe}/cgroup.kill", "1"),
        ("rmdir", probe),
        ("rmdir", parent),
    ]
    tree.journal.clear()
    group = Group(Limits(256 * MiB, 64, 0.5), "s1", host=tree)
    assert tree.journal == [
        ("mkdir", parent),
        ("write", f"{parent}/cgroup.subtree_control", ENABLE),
        ("mkdir", f"{parent}/s1"),
        *settings(f"{parent}/s1"),
    ]
    assert group.directories == [tree.top / parent.lstrip("/") / "s1"] and group.command(["x"]) == ["x"]
    for child in (5000, 5001):  # as Popen's children would, before exec
        tree.grader = child
        group.preexec()
    tree.grader = 4242
    assert tree.journal[-2:] == [
        ("write", f"{parent}/s1/cgroup.procs", "5000"),
        ("write", f"{parent}/s1/cgroup.procs", "5001"),
    ]
    assert group.pids() == [5000, 5001]
    (group.directories[0] / "memory.events").write_text("low 0\nhigh 0\nmax 4\noom 2\noom_kill 2\n")
    (group.directories[0] / "memory.peak").write_text(str(200 * MiB))
    assert group.oom_kills() == 2 and group.peak_memory() == 200 * MiB
    assert group.cpu_seconds() == 0
    (group.directories[0] / "cpu.stat").write_text("usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    assert group.cpu_seconds() == 1.5
    tree.journal.clear()
    group.close()
    group.close()
    assert tree.journal == [("write", f"{parent}/s1/cgroup.kill", "1"), ("rmdir", f"{parent}/s1"), ("rmdir", parent)]


def test_v2_without_cgroup_kill_the_group_is_frozen_then_killed(tmp_path):
    tree = FakeTree(tmp_path, "/", {"/": [4242]}, kill_file=False)  # the root holds processes and passes controllers
    group = Group(Limits(256 * MiB, 64, 0.5), "s1", host=tree)
    folder = f"/{PREFIX}4242/s1"
    for child in (5000, 5001):
        tree.grader = child
        group.preexec()
    tree.journal.clear()
    assert group.kill() and group.pids() == []
    assert tree.journal == [
        ("write", f"{folder}/cgroup.freeze", "1"),
        ("signal", 5000, signal.SIGKILL),
        ("signal", 5001, signal.SIGKILL),
        ("write", f"{folder}/cgroup.freeze", "0"),
    ]
    group.close()


def test_v2_remove_stale_kills_and_removes_a_dead_graders_groups(tmp_path):
    tree = FakeTree(tmp_path, "/grader.service", {"/grader.service": [4242]})
    assert limits.mechanism(tree) == "cgroup v2"
    for number, label in enumerate(("a", "b")):
        tree.grader = 777  # a grader that then died without closing its groups
        group = Group(Limits(256 * MiB, 64, 0.5), label, host=tree)
        tree.grader = 5000 + number  # a worker of it
        group.preexec()
    assert sorted(p.name for p in (tree.top / "grader.service" / f"{PREFIX}777").iterdir() if p.is_dir()) == ["a", "b"]
    tree.grader = 4242
    tree.journal.clear()
    limits.remove_stale(777, host=tree)
    left = [p.name for p in (tree.top / "grader.service").iterdir() if p.is_dir()]
    assert left == ["lecturekit-grader-4242"]  # the live grader's leaf only
    assert [e for e in tree.journal if e[-1] == "1"] == [
        ("write", f"/grader.service/{PREFIX}777/a/cgroup.kill", "1"),
        ("write", f"/grader.service/{PREFIX}777/b/cgroup.kill", "1"),
    ]


def test_v2_is_refused_where_the_graders_cgroup_holds_other_processes(tmp_path):
    tree = FakeTree(tmp_path, "/session.scope", {"/session.scope": [4242, 99]})
    found = limits.problem(tree)
    assert "holds other processes than the grader" in found and "cgroup v1: no cgroup v1 hierarchy" in found
    assert limits.mechanism(tree) is None
    with pytest.raises(LimitsUnavailable, match="no-internal|passes no controller"):
        Group(Limits(256 * MiB, 64, 0.5), "s1", host=tree)


def systemd_tree(tmp_path: Path, delegated: str = "memory pids cpu") -> FakeTree:
    """A user's machine: a session whose cgroup it may not change, and systemd delegating ``delegated``."""
    return FakeTree(
        tmp_path,
        "/user.slice/user-1000.slice/session-2.scope",
        {"/user.slice/user-1000.slice/session-2.scope": [4242, 99]},
        writable=SYSTEMD_SLICE,
        systemd=True,
        delegated=delegated,
        euid=1000,
    )


def test_systemd_scopes_for_a_user_without_root(tmp_path):
    tree = systemd_tree(tmp_path)
    assert limits.mechanism(tree) == "cgroup v2 through systemd-run --user --scope"
    group = Group(Limits(256 * MiB, 64, 0.5), "s1", host=tree)
    assert group.unit.startswith(f"{PREFIX}4242-s1-") and group.unit.endswith(".scope")
    command = group.command(["python", "worker.py"])
    assert command == [
        "/fake/systemd-run",
        "--user",
        "--scope",
        "--quiet",
        "--collect",
        f"--unit={group.unit}",
        "-p",
        f"MemoryMax={256 * MiB}",
        "-p",
        "MemorySwapMax=0",
        "-p",
        "TasksMax=64",
        "-p",
        "CPUQuota=50%",
        "-p",
        "CPUWeight=100",
        "--",
        "python",
        "worker.py",
    ]
    tree.journal.clear()
    group.preexec()
    assert tree.journal == [] and group.pids() == [] and group.directories == []  # nothing until it runs
    tree.run(command, timeout=1)  # as Popen would start it
    scope = f"{SYSTEMD_SLICE}/{group.unit}"
    assert group.directories == [tree.top / scope.lstrip("/")] and group.pids() == [6000, 6001]
    assert (tree.top / scope.lstrip("/") / "cpu.max").read_text() == "50000 100000"
    (tree.top / scope.lstrip("/") / "memory.events").write_text("oom 1\noom_kill 1\n")
    assert group.oom_kills() == 1
    tree.journal.clear()
    group.close()
    assert [e for e in tree.journal if e[0] != "run" or e[3] != "show"] == [
        ("write", f"{scope}/cgroup.kill", "1"),
        ("run", "/fake/systemctl", "--user", "stop", group.unit),
        ("rmdir", scope),
    ]


def test_systemd_remove_stale_finds_a_dead_graders_scopes_by_name(tmp_path):
    tree = systemd_tree(tmp_path)
    tree.grader = 777
    group = Group(Limits(256 * MiB, 64, 0.5), "left", host=tree)
    tree.run(group.command(["sleep", "600"]), timeout=1)
    tree.grader = 4242
    limits.remove_stale(777, host=tree)
    assert not (tree.top / SYSTEMD_SLICE.lstrip("/") / group.unit).exists()
    assert (
        "run",
        "/fake/systemctl",
        "--user",
        "list-units",
        "--all",
        "--plain",
        "--no-legend",
        "--type=scope",
        f"{PREFIX}777-*",
    ) in tree.journal


def test_systemd_without_the_cpu_controller_delegated_says_how_to_delegate_it(tmp_path):
    found = limits.problem(systemd_tree(tmp_path, delegated="memory pids"))
    assert "not bounded by the cpu controller" in found and "Delegate=pids memory cpu" in found
    assert "cgroup v2: cannot make the cgroup" in found and "Permission denied" in found


class Unwritable(Host):
    """A machine with cgroup v1 (memory, pids, cpu) and v2 (no controllers), none of it writable, no systemd."""

    def mkdir(self, path) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    def which(self, program: str) -> None:
        return None


def test_problem_says_what_each_mechanism_lacks_when_nothing_is_writable(tmp_path):
    table = []
    for number, name in enumerate(("memory", "pids", "cpu,cpuacct")):
        (tmp_path / name).mkdir()
        table.append(f"{40 + number} 31 0:{40 + number} / {tmp_path / name} rw - cgroup cgroup rw,{name}\n")
    (tmp_path / "unified").mkdir()
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    table.append(f"50 31 0:50 / {tmp_path / 'unified'} rw - cgroup2 cgroup2 rw\n")
    (tmp_path / "mountinfo").write_text("".join(table))
    (tmp_path / "cgroup").write_text("4:memory:/\n3:pids:/\n2:cpu,cpuacct:/\n0::/\n")
    host = Unwritable(tmp_path / "mountinfo", tmp_path / "cgroup", euid=1000)
    found = limits.problem(host)
    assert found.startswith("no grading sandbox can be bounded as a whole here (cgroup v1: cannot make the cgroup")
    assert "Permission denied" in found and "grade as root" in found
    assert "cgroup v2: the cgroup v2 hierarchy at" in found and "gives no memory, pids, cpu controller" in found
    assert "systemd: systemd-run is not installed" in found and found.endswith(limits.FIX)
    assert limits.mechanism(host) is None
    with pytest.raises(LimitsUnavailable, match="no grading sandbox can be bounded"):
        Group(Limits(2**30, 64, 1.0), "s1", host=host)
    assert limits.problem(Host(mountinfo=tmp_path / "missing")).startswith(
        "no grading sandbox can be bounded as a whole here (cgroups: they cannot be read here"
    )
