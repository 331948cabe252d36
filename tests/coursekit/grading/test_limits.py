"""A grading sandbox bounded as a whole by a cgroup (coursekit.grading.limits), on the real kernel.

These tests start real processes in real groups and check what the kernel did: memory, tmpfs files
and their slab, tasks, CPU time, killing and cleaning up. They use the mechanism this machine has
(cgroup v1 where they were written) and are skipped, with the reason, where ``problem()`` says
there is none; tests/coursekit/grading/test_cgroupfs.py drives the other mechanisms against a fake
cgroup tree.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT
from coursekit.grading import isolation, limits
from coursekit.grading.cgroupfs import Host
from coursekit.grading.limits import Group, Limits

MiB = 2**20


class Lab:
    """The groups and processes of one test, all killed and removed at its end, whatever happened."""

    def __init__(self):
        self.groups: list[Group] = []
        self.folders: list[Path] = []
        self.processes: list[subprocess.Popen] = []

    def group(self, bounds: Limits, label: str, host: Host | None = None) -> Group:
        group = Group(bounds, label, host=host)
        self.groups.append(group)
        self.folders += [f for d in group.directories for f in (d, d.parent)]
        return group

    def start(self, group: Group, argv: list[str]) -> subprocess.Popen:
        process = subprocess.Popen(
            group.command(argv), preexec_fn=group.preexec, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
        )
        self.processes.append(process)
        return process

    def python(self, group: Group, code: str, *args) -> subprocess.Popen:
        return self.start(group, [sys.executable, "-c", code, *map(str, args)])

    def clean(self) -> None:
        for group in self.groups:
            group.close()
        for process in self.processes:
            if process.poll() is None:  # never expected: everything it started was in its group
                process.kill()
            process.wait()
            process.stdout.close()
        limits.remove_stale(os.getpid())
        left = [folder for folder in self.folders if folder.exists()]
        assert not left, f"left behind: {left}"


@pytest.fixture
def lab():
    found = limits.problem()
    if found:
        pytest.skip(found)
    made = Lab()
    try:
        yield made
    finally:
        made.clean()


def read_line(process: subprocess.Popen, seconds: float = 60.0) -> str:
    """The next line ``process`` prints (the bound only tells "prints" from "hangs")."""
    ready, _, _ = select.select([process.stdout], [], [], seconds)
    assert ready, "the process printed nothing"
    return process.stdout.readline().strip()


def marked(marker: str) -> list[int]:
    """The live processes whose command line holds ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                found.append(int(name))
        except OSError:
            pass
    return found


# --------------------------------------------------------------------------- memory


CHILDREN = """
import json, os, select, sys, time
size = int(sys.argv[1])
r, w = os.pipe()
kids = []
for _ in range(3):
    pid = os.fork()
    if pid == 0:
        data = b"x" * size  # every page touched
        os.write(w, b"%d\\n" % os.getpid())
        time.sleep(600)
    kids.append(pid)
os.close(w)
ready, dead, text = set(), {}, b""
while any(k not in ready and k not in dead for k in kids):
    if select.select([r], [], [], 0.02)[0]:
        text += os.read(r, 4096)
        ready = {int(p) for p in text.split()}
    try:
        pid, status = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pid = 0
    if pid:
        dead[pid] = os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0
print(json.dumps({"alive": sorted(ready - set(dead)), "killed": sorted(dead.values())}), flush=True)
time.sleep(600)
"""


def test_forked_children_together_stay_within_the_memory_bound(lab):
    bound, size = 2**30, 400 * MiB
    group = lab.group(Limits(bound, 64, 2.0), "memory")
    process = lab.python(group, CHILDREN, size)
    outcome = json.loads(read_line(process))
    assert signal.SIGKILL in outcome["killed"], outcome  # the kernel's OOM killer, not an error of the child
    assert len(outcome["alive"]) <= 2, outcome
    assert group.oom_kills() >= 1
    peak = group.peak_memory()
    assert 2 * size <= peak <= bound, peak  # the children were charged, and together never passed the bound


# --------------------------------------------------------------------------- tmpfs and kernel memory


FILL = """
import os, sys
n, chunk = 0, b"x" * 2**20
try:
    if sys.argv[1] == "file":
        with open("/t/big", "wb", buffering=0) as out:
            while True:
                out.write(chunk)
                n += 1
                os.write(1, b"%d\\n" % n)
    while True:
        os.close(os.open("/t/%d" % n, os.O_CREAT | os.O_WRONLY, 0o600))
        n += 1
        if n % 1000 == 0:
            os.write(1, b"%d\\n" % n)
except OSError as error:
    os.write(1, b"%d %s\\n" % (n, error.strerror.encode()))
"""


def bubblewrap(tmpfs_bytes: int, argv: list[str]) -> list[str]:
    """``argv`` in a bubblewrap sandbox with a tmpfs of ``tmpfs_bytes`` at ``/t``, and this Python."""
    command = [
        "bwrap",
        "--unshare-all",
        "--die-with-parent",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--ro-bind",
        "/usr",
        "/usr",
    ]
    for path in isolation.SYSTEM:
        if os.path.islink(path):
            command += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            command += ["--ro-bind", path, path]
    for folder in isolation.interpreter_folders():
        command += ["--ro-bind", str(folder), str(folder)]
    return [*command, "--size", str(tmpfs_bytes), "--tmpfs", "/t", "--", *argv]


@pytest.mark.parametrize("what", ["file", "files"])
def test_tmpfs_files_and_their_kernel_memory_are_held_to_the_bound(lab, what):
    if shutil.which("bwrap") is None:
        pytest.skip(f"bubblewrap is not installed: {isolation.INSTALL_HINT}")
    bound = 256 * MiB
    group = lab.group(Limits(bound, 64, 2.0), f"tmpfs-{what}")
    process = lab.start(group, bubblewrap(4 * bound, [sys.executable, "-c", FILL, what]))
    output, _ = process.communicate(timeout=120)  # a liveness bound: it takes about 2 s
    last = (output.strip().splitlines() or ["0"])[-1]
    count = int(last.split()[0])
    print(
        f"\n{what}: reached {count} {'MiB' if what == 'file' else 'files'} ({last!r}); "
        f"peak {group.peak_memory() / MiB:.1f} MiB of {bound / MiB:.0f}; OOM kills {group.oom_kills()}"
    )
    assert group.oom_kills() >= 1 or "Cannot allocate memory" in output, output[-200:]  # stopped by the group,
    assert 0.9 * bound <= group.peak_memory() <= bound  # not by the tmpfs (4 times larger), once the group was full
    assert count > (100 if what == "file" else 50_000)


# --------------------------------------------------------------------------- tasks and CPU


FORKS = """
import errno, os, signal
n = 0
while True:
    try:
        pid = os.fork()
    except OSError as error:
        print(n, errno.errorcode[error.errno], flush=True)
        break
    if pid == 0:
        signal.pause()
        os._exit(0)
    n += 1
signal.pause()
"""


def test_a_fork_loop_is_refused_at_the_task_bound(lab):
    group = lab.group(Limits(256 * MiB, 64, 1.0), "forks")
    process = lab.python(group, FORKS)
    assert read_line(process) == "63 EAGAIN"  # itself and 63 children: 64 tasks
    assert len(group.pids()) == 64
    assert group.kill()
    assert group.pids() == []


SPIN = """
import os, signal
for _ in range(8):
    if os.fork() == 0:
        while True:
            pass
print("spinning", flush=True)
signal.pause()
"""


def cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


# A child that burns 0.3 s of CPU in a grandchild of its own and exits at once: the grandchild is
# orphaned, never waited for by anyone in the group, and exits too.
ORPHAN_BURNS = """
import os, time
if os.fork() == 0:
    if os.fork() == 0:
        start = time.process_time()
        while time.process_time() - start < 0.3:
            pass
    os._exit(0)
os.wait()
print("started", flush=True)
"""


def test_the_groups_cpu_time_counts_processes_that_ended_unwaited(lab):
    group = lab.group(Limits(256 * MiB, 64, 1.0), "cpu-time")
    assert group.cpu_seconds() == 0
    process = lab.python(group, ORPHAN_BURNS)
    assert read_line(process) == "started"
    process.wait()
    end = time.monotonic() + 60  # a liveness bound: the grandchild ends after 0.3 s of CPU, however slow the machine
    while group.pids() and time.monotonic() < end:
        time.sleep(0.05)
    assert not group.pids()
    assert group.cpu_seconds() >= 0.3


def favour(group: Group) -> None:
    """Weight ``group`` (and its parent) far above the machine's other work, so that only its quota holds it back.

    The machine is shared: spinners held to 0.5 CPU by other people's work would pass a test of
    the quota without a quota.
    """
    folder = next(f for f in group.directories if (f / "cpu.shares").exists() or (f / "cpu.weight").exists())
    for each in (folder.parent, folder):
        name, most = ("cpu.shares", 262144) if (each / "cpu.shares").exists() else ("cpu.weight", 10000)
        (each / name).write_text(str(most))


def test_spinners_get_at_most_their_share_of_cpu(lab):
    group = lab.group(Limits(256 * MiB, 64, 0.5), "cpu")
    favour(group)
    process = lab.python(group, SPIN)
    assert read_line(process) == "spinning"
    pids = group.pids()
    assert len(pids) == 9
    start, used = time.monotonic(), cpu_seconds(pids)
    time.sleep(2.0)
    rate = (cpu_seconds(pids) - used) / (time.monotonic() - start)
    print(f"\n8 spinners with cpus=0.5: {rate:.2f} CPU")
    # A bound, not a benchmark: favoured and unbounded, 8 spinners take every CPU there is (two here);
    # the band is wide because the machine is shared. The lower end says they ran.
    assert 0.1 < rate < 0.8


# --------------------------------------------------------------------------- killing and cleaning up


STORM = """
import os, sys, time
for _ in range(8):
    if os.fork() == 0:
        while True:  # a chain that keeps moving: each process starts a session, forks, and exits
            try:
                os.setsid()
            except OSError:
                pass
            try:
                if os.fork():
                    os._exit(0)
            except OSError:
                time.sleep(0.001)
print("storming", flush=True)
time.sleep(600)
"""


def without_freezer(tmp_path: Path) -> Host:
    """This machine, as if the freezer were not mounted."""
    table = tmp_path / "mountinfo"
    table.write_text(
        "".join(
            line
            for line in Path("/proc/self/mountinfo").read_text().splitlines(keepends=True)
            if "freezer" not in line.split(" - ")[-1]
        )
    )
    return Host(mountinfo=table)


@pytest.mark.parametrize("freezer", [True, False], ids=["frozen", "unfrozen"])
def test_kill_ends_processes_that_setsid_and_keep_forking(lab, tmp_path, freezer):
    host = None if freezer else without_freezer(tmp_path)
    assert ("freezer" in limits.mechanism(host)) == freezer
    group = lab.group(Limits(256 * MiB, 256, 1.0), "storm", host)
    marker = f"storm-{os.getpid()}-{freezer}"
    process = lab.python(group, STORM, marker)
    assert read_line(process) == "storming"
    time.sleep(0.3)
    assert len(group.pids()) >= 2 and marked(marker)
    assert group.kill()
    assert group.pids() == []
    process.wait(timeout=10)
    assert marked(marker) == []  # none escaped the group


def test_close_kills_and_removes_the_folders(lab):
    first = lab.group(Limits(64 * MiB, 16, 1.0), "first")
    second = lab.group(Limits(64 * MiB, 16, 1.0), "second")
    sleeper = lab.start(first, ["sleep", "600"])
    assert first.pids() == [sleeper.pid]
    folders = first.directories
    first.close()
    assert sleeper.wait(timeout=10) == -signal.SIGKILL
    assert not any(folder.exists() for folder in folders)
    assert all(folder.exists() for folder in second.directories)  # the parent stays while a group is in it
    first.close()  # idempotent
    second.close()
    assert not any(folder.parent.exists() for folder in folders)  # the last group takes the parent with it


STALE = """
import os, subprocess
from coursekit.grading.limits import Group, Limits
group = Group(Limits(64 * 2**20, 16, 1.0), "left")
sleeper = subprocess.Popen(["sleep", "600"], preexec_fn=group.preexec, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
print(os.getpid(), sleeper.pid, *group.directories, flush=True)
os._exit(0)
"""


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_remove_stale_cleans_up_after_a_grader_that_never_closed(lab):
    result = subprocess.run([sys.executable, "-c", STALE], cwd=ROOT, capture_output=True, text=True, timeout=60)
    dead, sleeper, *folders = result.stdout.split()
    dead, sleeper, folders = int(dead), int(sleeper), [Path(f) for f in folders]
    lab.folders += [f for folder in folders for f in (folder, folder.parent)]
    try:
        assert all(folder.is_dir() for folder in folders), result.stderr
        assert alive(sleeper)
        limits.remove_stale(dead)
        assert not any(folder.exists() or folder.parent.exists() for folder in folders)
        deadline = time.monotonic() + 10  # a liveness bound: the kill is at once, its reaping up to init
        while alive(sleeper):
            assert time.monotonic() < deadline, "the stale group's process is still alive"
            time.sleep(0.01)
    finally:
        limits.remove_stale(dead)


# --------------------------------------------------------------------------- what is refused


def test_limits_and_labels_are_checked():
    for bad in ({"memory_bytes": 1000}, {"tasks": 0}, {"cpus": 0.001}, {"cpus": float("nan")}, {"tasks": True}):
        with pytest.raises(ValueError, match="Limits"):
            Limits(**{"memory_bytes": 2**30, "tasks": 64, "cpus": 1.0, **bad})
    assert Limits(2**30, 64, 0.5).quota_us == 50_000
    for label in ("", "../up", "a/b", "-a", "x" * 65, "a.b", "tasks"):
        with pytest.raises(ValueError, match="label"):
            Group(Limits(2**30, 64, 1.0), label)


def test_a_taken_label_is_refused(lab):
    lab.group(Limits(64 * MiB, 16, 1.0), "same")
    with pytest.raises(ValueError, match="exists already"):
        Group(Limits(64 * MiB, 16, 1.0), "same")
