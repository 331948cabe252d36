"""The confined grading worker sees an allowlist of the machine (coursekit.grading.isolation, coursekit.grading.worker).

These tests start workers as the grader does (a zygote in a bubblewrap sandbox, a worker forked per
submission) and look at the machine from inside one: what its file system holds, which processes
and network it has, what it can write, which modules a question's environment lets it import, and
what a submission leaves for the next one. tests/test_grader.py grades whole hostile submissions.
"""

from __future__ import annotations

import errno
import math
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from coursekit.grading import isolation, worker
from coursekit.grading import zygote as zygote_module
from coursekit.grading.isolation import Environment
from coursekit.grading.sandbox import Sandbox
from coursekit.grading.zygote import IsolationUnavailable, WorkerPool

from .attacks import THREE_GIGABYTES

PROBE = f"""
import os, socket, sys
top = sorted(os.listdir('/'))
home = sorted(os.listdir(os.path.expanduser('~')))
temporary = sorted(os.listdir('/tmp'))
processes = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())
me = os.getpid()
seen = [p for p in ({str(ROOT / "README.md")!r}, {str(ROOT / ".git")!r}, {str(Path.home())!r} + '/.cache')
        if os.path.exists(p)]
written = []
for path in ('/usr/x', sys.prefix + '/x', 'lecturekit/x', 'data/x', '/x', '/dev/x', '/grader/x'):
    try:
        open(path, 'w').close()
        written.append(path)
    except OSError:
        pass
open('/tmp/scratch', 'w').write('a private /tmp can be written')
open('notes.txt', 'w').write('so can the working folder')
try:
    socket.create_connection(('192.0.2.1', 80), timeout=2)
    network = True
except OSError:
    network = False
capabilities = [line.split()[1] for line in open('/proc/self/status') if line.startswith('CapEff')][0]
sys.path.insert(0, '/grader')  # the worker's own files, read-only
from worker import keyctl
session_keyring = keyctl(0, -3, 0)
"""


@pytest.fixture(scope="module")
def support(tmp_path_factory) -> Path:
    """A support folder as the autograder zip's files/ holds it: lecturekit/, coursekit/ and data/."""
    folder = tmp_path_factory.mktemp("support")
    for name in ("lecturekit", "coursekit", "data"):
        (folder / name).symlink_to(ROOT / name)
    return folder


@pytest.fixture(scope="module")
def pool():
    with WorkerPool("required", [ROOT]) as workers:
        yield workers


def values(sandbox: Sandbox, source: str, names: list[str]) -> dict:
    outcome = sandbox.run(source, 30)
    assert outcome.status == "ok", outcome
    found = {}
    for name in names:
        looked = sandbox.lookup(name, 30)
        assert looked.status == "ok" and looked.value[0] == "value", (name, looked)
        found[name] = looked.value[1]
    return found


def test_a_confined_worker_sees_only_its_allowlist(pool, support):
    sandbox = Sandbox(pool.zygote(Environment(support)))
    try:
        sandbox.start()
        seen = values(
            sandbox,
            PROBE,
            [
                "top",
                "home",
                "temporary",
                "processes",
                "me",
                "seen",
                "written",
                "network",
                "capabilities",
                "session_keyring",
            ],
        )
    finally:
        sandbox.close()
    interpreter = isolation.interpreter_folders()
    allowed = {"bin", "dev", "etc", "grader", "home", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"}
    assert set(seen["top"]) <= allowed | {folder.parts[1] for folder in interpreter}, seen["top"]
    assert {"lecturekit", "data"} <= set(seen["home"]) <= {"lecturekit", "data", ".ipython", ".config", ".cache"}, seen[
        "home"
    ]
    under_tmp = {f.parts[2] for f in interpreter if f.parts[1] == "tmp"}  # a virtual environment in /tmp (CI)
    assert set(seen["temporary"]) <= under_tmp, seen["temporary"]
    # Its own PID namespace: bubblewrap's init, the zygote, and the worker itself.
    assert seen["me"] in seen["processes"] and len(seen["processes"]) <= 3, seen["processes"]
    assert seen["seen"] == [] and seen["written"] == [], (seen["seen"], seen["written"])
    assert seen["network"] is False and int(seen["capabilities"], 16) == 0
    # a session keyring of its own: none of the keys of the session that started the grader
    assert seen["session_keyring"] != worker.keyctl(worker.KEYCTL_GET_KEYRING_ID, worker.SESSION_KEYRING, 0)


@pytest.mark.parametrize(
    "banned, fails, works",
    [
        (("lecturekit",), "import lecturekit.estimation", "import scipy.stats"),
        (("scipy.stats",), "from scipy import stats", "import scipy, scipy.linalg, lecturekit"),
    ],
)
def test_a_question_environment_can_ban_a_module(pool, support, banned, fails, works):
    sandbox = Sandbox(pool.zygote(Environment(support, banned)))
    try:
        sandbox.start()
        assert sandbox.run(works, 30).status == "ok"
        refused = sandbox.run(fails, 30)
        assert (refused.status, refused.detail) == ("error", "ModuleNotFoundError"), refused
        assert sandbox.run(f"import sys\nassert {banned[0]!r} not in sys.modules", 30).status == "ok"
        # the worker's own plain data needs no lecturekit: a SymPy answer still crosses
        assert sandbox.run("import sympy\nformula = sympy.Symbol('x') ** 2 / 2", 30).status == "ok"
        sent = sandbox.lookup("formula", 30)
        assert sent.status == "ok" and str(sent.value[1]) == "x**2/2", sent
    finally:
        sandbox.close()
    unbanned = Sandbox(pool.zygote(Environment(support)))
    try:
        unbanned.start()
        assert unbanned.run(fails, 30).status == "ok"
    finally:
        unbanned.close()


def test_a_question_can_ban_exact_arithmetic(pool, support):
    """decimal and fractions can be banned: the worker's own plain data never imports them."""
    sandbox = Sandbox(pool.zygote(Environment(support, ("decimal", "fractions"))))
    try:
        sandbox.start()
        for fails in (
            "import decimal",
            "import _decimal",
            "import _pydecimal",
            "from fractions import Fraction",
            "import statistics",
        ):
            refused = sandbox.run(fails, 30)
            # a compiled module covered by a Python file cannot load: ImportError, not ModuleNotFoundError
            wanted = "ImportError" if fails == "import _decimal" else "ModuleNotFoundError"
            assert (refused.status, refused.detail) == ("error", wanted), (fails, refused)
        assert sandbox.run("import numpy as np\nanswer = [np.log(0.5), 2, 'x']", 30).status == "ok"
        sent = sandbox.lookup("answer", 30)
        assert sent.status == "ok" and sent.value == ("value", [math.log(0.5), 2, "x"]), sent
    finally:
        sandbox.close()


@pytest.mark.parametrize("banned", [(), ("lecturekit",)])
def test_no_answer_can_import_the_grading_machinery(pool, support, banned):
    """coursekit travels in the zip for the grader, but a worker never sees it, banned or not."""
    sandbox = Sandbox(pool.zygote(Environment(support, banned)))
    try:
        sandbox.start()
        for attempt in ("import coursekit", "from coursekit.grading import grader", "import coursekit.symbolic"):
            refused = sandbox.run(attempt, 30)
            assert (refused.status, refused.detail) == ("error", "ModuleNotFoundError"), (attempt, refused)
        assert sandbox.run("import os\nassert not os.path.exists('coursekit')", 30).status == "ok"
    finally:
        sandbox.close()


def test_a_submission_leaves_nothing_for_the_next(pool, support):
    zygote = pool.zygote(Environment(support))
    first = Sandbox(zygote)
    first.start()
    assert first.run("x = 1", 30).status == "ok"
    first.close()
    kept = zygote.process.pid  # a clean sandbox is kept for the next submission
    second = Sandbox(zygote)
    second.start()
    assert zygote.process.pid == kept
    leave = (
        "import subprocess\nsubprocess.Popen(['sleep', '987654'], start_new_session=True)\n"
        "open('/tmp/left-behind', 'w').write('for the next submission')"
    )
    assert second.run(leave, 30).status == "ok"
    second.close()
    assert zygote.process is None  # a file was left: the sandbox is thrown away
    assert subprocess.run(["pgrep", "-f", "sleep 987654"], capture_output=True).returncode == 1
    third = Sandbox(zygote)
    try:
        third.start()
        assert third.run("import os\nassert not os.path.exists('/tmp/left-behind')", 30).status == "ok"
    finally:
        third.close()


def test_the_kernels_keyrings_and_other_processes_are_out_of_reach(pool, support):
    """The system-call filter (coursekit.grading.syscalls) refuses keys, tracing and reading other processes;
    what the zygote checks after each submission (worker.init) sees bubblewrap as pid 1."""
    sandbox = Sandbox(pool.zygote(Environment(support)))
    try:
        sandbox.start()
        probe = (
            "import ctypes, errno, sys\nsys.path.insert(0, '/grader')\nfrom worker import KEYCTL, init, keyctl\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "persistent = keyctl(22, -1, -4), ctypes.get_errno()\n"  # KEYCTL_GET_PERSISTENT
            "traced = libc.ptrace(16, 1, None, None), ctypes.get_errno()\n"  # PTRACE_ATTACH to bubblewrap's init
            "exe, command = init()\n"
        )
        seen = values(sandbox, probe, ["persistent", "traced", "exe"])
    finally:
        sandbox.close()
    assert seen["persistent"] == (-1, errno.EPERM) and seen["traced"] == (-1, errno.EPERM), seen
    assert Path(seen["exe"]).name == "bwrap", seen["exe"]


def test_a_sandbox_is_bounded_as_a_whole(pool, support):
    """Memory, tasks and what bubblewrap's init prints are bounded for all of a sandbox's processes together."""
    if pool.limits is None:
        pytest.skip(f"no cgroup can be made here: {pool.unbounded}")
    zygote = pool.zygote(Environment(support))
    sandbox = Sandbox(zygote)
    try:
        sandbox.start()
        # Three children of 1 GiB: each under the worker's own 2 GiB, together over the sandbox's 3 GiB.
        three = "import numpy as np\n" + THREE_GIGABYTES.format(seconds=50)
        forks = (
            "import os, time\nforked = 0\nfor _ in range(1000):\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(600)\n        os._exit(0)\n"
            "    forked += 1\n"
        )
        flood = (
            "import os\nwritten = 0\ntry:\n    out = os.open('/proc/1/fd/1', os.O_WRONLY | os.O_NONBLOCK)\n"
            "    while written < 2**30:\n        written += os.write(out, b'x' * 2**20)\n"
            "except OSError:\n    pass\n"
        )
        seen = {**values(sandbox, three, ["held"])}
        killed, peak = zygote.oom_kills(), zygote.peak_memory()
        seen.update(values(sandbox, forks, ["forked"]))
        seen.update(values(sandbox, flood, ["written"]))
    finally:
        sandbox.close()
    assert seen["held"] < 3 and killed >= 1, (seen, killed)
    assert 2**30 < peak <= pool.limits.memory_bytes, peak
    assert seen["forked"] < zygote_module.TASKS, seen  # the zygote and the worker count too
    assert seen["written"] <= 2**20, seen  # a pipe that fills, not a file of the host's


def test_confinement_is_refused_where_it_would_show_a_protected_folder():
    inside = Path(sys.prefix) / "lib"
    assert "would see" in isolation.problem([inside])
    assert isolation.problem([ROOT]) is None


def test_unconfined_workers_are_explicit_and_cannot_ban(support):
    with WorkerPool("off") as unconfined:
        assert not unconfined.isolated
        with pytest.raises(IsolationUnavailable):
            unconfined.zygote(Environment(support, ("lecturekit",)))


def test_a_pool_keeps_the_zygotes_it_used_last(tmp_path):
    # A batch of several assignments comes back to the environments every assignment shares (no ban,
    # or lecturekit's): the least recently used zygote goes, not the first made.
    kept = zygote_module.ZYGOTES
    environments = [Environment(tmp_path / f"support-{i}") for i in range(kept + 1)]
    with WorkerPool(isolation="off", bounded=False) as pool:
        first = pool.zygote(environments[0])
        for environment in environments[1:kept]:
            pool.zygote(environment)
        assert pool.zygote(environments[0]) is first  # used again
        pool.zygote(environments[kept])  # one more than the pool keeps
        assert environments[0] in pool.zygotes and environments[1] not in pool.zygotes
        assert len(pool.zygotes) == kept
