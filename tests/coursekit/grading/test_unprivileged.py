"""Where bubblewrap cannot run, the worker becomes a user of its own (coursekit.grading.unprivileged).

Gradescope's containers, as Docker runs them by default, forbid the user namespaces bubblewrap needs,
and run ``run_autograder`` as root. Here such a container is built with bubblewrap itself, run by root
without a user namespace: the image's ``/usr`` and ``/etc``, the course's Python environment, the
autograder unpacked in ``/autograder`` (``source/``, ``submission/``, ``results/``) and nothing else of
this machine; Docker's default capabilities; no cgroups; and bubblewrap taken off the ``PATH``
(it would run here, as root, and must not). The zip's ``run_autograder`` grades in it: the honest
answers get full marks, and a submission that tries every read of the hidden tests it can think of
(the tests' file, the zip's folder, other processes' roots, working folders, descriptors and
environments, a search of the whole disk, root's history) and writes its own results scores nothing
it did not earn, and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest

from coursekit import exercises
from coursekit.build.assign import SETUP_GRADING
from coursekit.grading import isolation, unprivileged
from coursekit.repository import MASTERS

BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"
FULL = {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3}
# Docker's default capabilities (what root has in a Gradescope container).
DOCKER_CAPABILITIES = (
    "CHOWN",
    "DAC_OVERRIDE",
    "FSETID",
    "FOWNER",
    "MKNOD",
    "NET_RAW",
    "SETGID",
    "SETUID",
    "SETFCAP",
    "SETPCAP",
    "NET_BIND_SERVICE",
    "SYS_CHROOT",
    "KILL",
    "AUDIT_WRITE",
)

# Every read of the hidden tests (q6's holds its answer) that a student's code might try in the
# container, and a forged results file. Any success gives q6 its right answer.
READS = r"""
import glob, os, stat, time
found = []
def attempt(path):
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError):
        return
    try:
        if stat.S_ISREG(os.fstat(descriptor).st_mode) and b"test_q6" in os.read(descriptor, 2_000_000):
            found.append(path)
    except OSError:
        pass
    finally:
        os.close(descriptor)
attempt("/autograder/source/tests/q6.py")
for path in glob.glob("/autograder/**", recursive=True):
    attempt(path)
for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
    for via in ("root", "cwd"):
        attempt(f"/proc/{pid}/{via}/autograder/source/tests/q6.py")
        attempt(f"/proc/{pid}/{via}/tests/q6.py")
    for descriptor in glob.glob(f"/proc/{pid}/fd/*"):
        attempt(descriptor)
    attempt(f"/proc/{pid}/environ")
end = time.monotonic() + 6
for folder, dirs, files in os.walk("/"):
    dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
    for name in files:
        if name.endswith(".py") and name.startswith("q") or name.endswith(".zip"):
            attempt(os.path.join(folder, name))
    if time.monotonic() > end:
        break
for path in ("/root/.bash_history", "/root/.python_history", "/autograder/results/results.json"):
    attempt(path)
try:
    with open("/autograder/results/results.json", "w") as forged:
        forged.write('{"score": 19, "tests": []}')
    found.append("the results")
except OSError:
    pass
q6 = {"b", "d", "f", "g"} if found else {"z"}
"""
# A process that would outlive the grading, in a session of its own.
LINGERS = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    while True:\n        time.sleep(0.1)\n"

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("bwrap") is None,
    reason="builds a container as Gradescope runs it: needs root and bubblewrap",
)


def container(autograder: Path, command: list[str]) -> list[str]:
    """``command`` in a container as Gradescope's: root, Docker's capabilities, no bubblewrap, no cgroups."""
    args = ["bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--cap-drop", "ALL"]
    for capability in DOCKER_CAPABILITIES:
        args += ["--cap-add", f"CAP_{capability}"]
    args += [
        "--ro-bind",
        "/usr",
        "/usr",
        "--ro-bind",
        "/etc",
        "/etc",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        "--perms",
        "0711",
        "--tmpfs",
        "/root",
    ]
    for path in isolation.SYSTEM:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for folder in isolation.interpreter_folders():  # the environment, as the image's setup.sh installs it
        for parent in reversed(folder.parents[:-1]):
            if parent != Path("/tmp"):  # a virtual environment in /tmp (CI's): the container's own /tmp
                args += ["--perms", "0711" if parent == Path("/root") else "0755", "--dir", str(parent)]
        args += ["--ro-bind", str(folder), str(folder)]
    args += [
        "--bind",
        str(autograder),
        "/autograder",
        "--ro-bind",
        "/dev/null",
        shutil.which("bwrap"),
        "--setenv",
        "PATH",
        "/usr/bin:/bin",
        "--setenv",
        "PYTHON",
        sys.executable,
        "--setenv",
        "PYTHONPATH",
        "/autograder/source/files",
        "--chdir",
        "/autograder",
        "--",
    ]
    return args + command


@pytest.fixture(scope="module")
def gradescope(release, tmp_path_factory):
    """Grade a notebook as Gradescope would: its results.json, and the processes of the worker's user left after."""
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)

    def grade(answers: dict[int, str]) -> tuple[dict, int]:
        root = tmp_path_factory.mktemp("gradescope") / "autograder"
        with zipfile.ZipFile(release / "autograder" / f"{BAYES}-autograder.zip") as archive:
            archive.extractall(root / "source")
        (root / "submission").mkdir()
        nbformat.write(exercises.grading_copy(student, answers), root / "submission" / f"{BAYES}.ipynb")
        after = (
            f"bash /autograder/source/run_autograder; "
            f"ps -eo uid= | awk '$1 >= {unprivileged.FIRST_UID} && $1 <= {unprivileged.LAST_UID}' | wc -l"
        )
        done = subprocess.run(container(root, ["bash", "-c", after]), capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return json.loads((root / "results" / "results.json").read_text()), int(done.stdout.split()[-1])

    return grade


def solutions() -> dict[int, str]:
    return exercises.solution_answers(MASTERS / f"{BAYES}.ipynb")


def test_the_image_gets_what_the_worker_needs(release):
    with zipfile.ZipFile(release / "autograder" / f"{BAYES}-autograder.zip") as archive:
        setup, script = archive.read("setup.sh").decode(), archive.read("run_autograder").decode()
    assert SETUP_GRADING in setup  # bubblewrap, libseccomp, /root searchable
    assert 'chmod 700 "$root/source" "$root/submission" "$root/results"' in script
    assert "--isolation auto" in script and '--protect "$root/results"' in script


def test_honest_answers_get_full_marks_as_a_user_of_its_own(gradescope):
    results, left = gradescope({**solutions(), 4: solutions()[4] + "\n" + LINGERS})
    assert {t["name"]: t["score"] for t in results["tests"]} == FULL, results
    assert results["score"] == 19
    assert "an unprivileged user of its own" in results["extra_data"]["confinement"]
    assert "sandbox" not in results["output"]  # how it ran is for the staff, not the student
    assert left == 0  # the lingering process is gone: kill(-1) as the worker's user


def test_no_read_of_the_hidden_tests_scores(gradescope):
    results, left = gradescope({5: READS})
    scores = {t["name"]: t["score"] for t in results["tests"]}
    assert scores["q6"] == 0, results
    assert results["score"] == 0 and len(results["tests"]) == 6  # the grader's results, not the forged ones
    assert left == 0


def test_an_unprivileged_user_that_could_read_a_protected_folder_is_refused():
    readable = Path(tempfile.mkdtemp(prefix="lecturekit-test-source-", dir="/tmp"))  # searchable by all
    try:
        os.chmod(readable, 0o755)
        (readable / "q6.py").write_text("hidden")
        uid = unprivileged.unused_uid()
        assert f"can read {readable}" in unprivileged.problem(uid, [readable])
        os.chmod(readable, 0o700)
        found = unprivileged.problem(uid, [readable])
        assert found is None or "cannot read" in found  # the interpreter itself may be out of its reach here
    finally:
        shutil.rmtree(readable)
