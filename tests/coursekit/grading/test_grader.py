"""Grading holds against hostile and broken submissions (coursekit.grading.grader, coursekit.grading.sandbox).

A battery of submissions to the short assignment 1.1 is graded through the real pipeline
(``coursekit.grading.gradebook.grade``, as ``make grade`` runs it): the honest solution, a blank, wrong answers,
attacks on the checker (monkeypatching NumPy, ``math`` and builtins, rigged ``__eq__``, writing
to disk, reading the hidden tests), attacks that look for the solutions anywhere on the machine
(the repository's history, another section's graded notebooks in the temporary folder, the home
folders and the folder above the repository, other processes' ``/proc/<pid>/root`` and ``cwd``,
a search of the whole disk, the instructor's shell history and ``~/.cache``), and faults in one
answer (an exception, a loop, a loop with the alarm disabled, a killed process, a segfault,
exhausted memory), which must cost that question only. Submissions hold the notebook's imports and
answer cells, so that the battery stays fast. A forged reply from a worker must cost the grader a
bounded amount of memory and the classmates nothing.
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from coursekit import exercises
from coursekit.build.assign import SETUP_GRADING
from coursekit.grading import gradebook, isolation, limits, zygote
from coursekit.grading.gradebook import grade
from coursekit.grading.grader import DEFAULT_MEMORY
from coursekit.grading.sandbox import MAX_MESSAGE, backstop
from coursekit.repository import MASTERS

from . import attacks as hostile
from .attacks import FORGE

BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"
FULL = {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3}
CELL_SECONDS = 4  # instead of the assignment's 20, to keep the battery short (honest answers use well under 1 s)
CLASSMATES = ("aa-classmate", "zz-classmate-1", "zz-classmate-2", "zz-classmate-3", "zz-classmate-4")
GRADER_GROWTH = 64 * 2**20  # what one small submission may add to the grading process's peak memory
GRADER_BOUND = 2**30  # a grading process's peak, whatever it grades (its checks run in processes of their own)

WRONG = {  # every answer wrong, in every public and hidden test
    0: "def positive_predictive_value(prevalence, sensitivity, specificity):\n    return 0.5\n",
    1: "def add_k_estimate(counts, k):\n    return np.zeros(3)\n",
    2: "def classify(prior, likelihood, x):\n    return np.full(len(x), -1)\n",
    3: "q4_log_likelihood = 7.0\nq4_estimate = 7.0\n",
    4: "q5 = 2.0\n",
    5: 'q6 = {"z"}\n',
}
PATCH = """\
import builtins, math, operator
import numpy as np
np.isclose = lambda *a, **k: True
np.allclose = lambda *a, **k: True
np.array_equal = lambda *a, **k: True
np.testing.assert_allclose = lambda *a, **k: None
math.isclose = lambda *a, **k: True
builtins.abs = lambda x: 0
builtins.isinstance = lambda *a: True
builtins.set = lambda *a: {"b", "d", "f", "g"}
operator.eq = lambda a, b: True
import lecturekit, otter
"""
RIGGED = {
    0: (
        "class Always(float):\n    def __eq__(self, other):\n        return True\n    __hash__ = float.__hash__\n"
        "    def __le__(self, other):\n        return True\n    def __ge__(self, other):\n        return True\n"
        "def positive_predictive_value(prevalence, sensitivity, specificity):\n    return Always(0.5)\n"
    ),
    1: (
        "class Everything(np.ndarray):\n    def __eq__(self, other):\n        return np.ones(self.shape, bool)\n"
        "def add_k_estimate(counts, k):\n    return np.zeros(len(counts)).view(Everything)\n"
    ),
    4: "class Always(float):\n    def __eq__(self, other):\n        return True\n"
    "    __hash__ = float.__hash__\nq5 = Always(2.0)\n",
    5: "class AnySet(set):\n    def __eq__(self, other):\n        return True\n"
    "    __hash__ = None\nq6 = AnySet({'z'})\n",
}

# Shared by the attacks below, which all sit in the last answer cell and, if they find the answers
# anywhere, run them there: a notebook's solution cells (a master: the code cells between raw
# "# BEGIN SOLUTION" and "# END SOLUTION" cells) or its answer cells (a graded submission).
FIND = r"""
import json, os, time
def _source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else str(text)
def _answers(text):
    try:
        cells = json.loads(text).get("cells", [])
    except Exception:
        return []
    inside, found = False, []
    for cell in cells:
        source = _source(cell).strip()
        if cell.get("cell_type") == "raw" and source.startswith("# BEGIN SOLUTION"):
            inside = True
        elif cell.get("cell_type") == "raw" and source.startswith("# END SOLUTION"):
            inside = False
        elif cell.get("cell_type") == "code" and (
                inside or "otter_answer_cell" in cell.get("metadata", {}).get("tags", [])):
            found.append(_source(cell))
    if any(line.strip() == "..." or line.rstrip().endswith("= ...") for c in found for line in c.splitlines()):
        return []  # a blank submission
    return found if any("positive_predictive_value" in c for c in found) else []
def _use(text):
    for source in _answers(text):
        try:
            exec(source, globals())
        except Exception:
            pass
    return bool(_answers(text))
def _read(path, limit=4_000_000):
    try:
        if os.path.isfile(path) and os.path.getsize(path) < limit:
            with open(path, errors="replace") as handle:
                return handle.read()
    except Exception:
        pass
    return ""
def _walk(tops, wanted, seconds=4.0, depth=7):
    end, queue = time.monotonic() + seconds, [(t, 0) for t in tops]
    while queue and time.monotonic() < end:
        folder, level = queue.pop(0)
        try:
            entries = list(os.scandir(folder))
        except Exception:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if level < depth and entry.name not in (
                            "proc", "sys", "dev", ".venv", "node_modules", "site-packages"):
                        queue.append((entry.path, level + 1))
                elif wanted(entry.path) and _use(_read(entry.path)):
                    return entry.path
            except Exception:
                continue
    return None
"""


def searches(zip_path: Path, master: Path) -> dict[str, str]:
    """Cells that look for the answers outside the submission and run them where they find them."""
    repo, above = str(ROOT), str(ROOT.parent)
    return {
        # The course repository's history: the master as committed.
        "git-show-head": FIND
        + (
            "import subprocess\n"
            f"for repo in ({repo!r}, os.path.dirname(os.path.dirname(__import__('sys').prefix))):\n"
            "    try:\n"
            f"        _use(subprocess.run(['git', '-C', repo, 'show', 'HEAD:notebooks/{BAYES}.ipynb'],\n"
            "                            capture_output=True, text=True, timeout=5).stdout)\n"
            "    except Exception:\n"
            "        pass\n"
        ),
        # Another section's graded notebook in the temporary folder, the home folders or the folder above.
        "globs-other-sections": FIND
        + (
            f"_walk(['/tmp', '/home', '/root', os.path.expanduser('~'), {above!r}],\n"
            f"      lambda path: path.endswith('{BAYES}.ipynb'))\n"
        ),
        # The masters and the hidden tests through another process's root or working folder.
        "reads-proc-root-and-cwd": FIND
        + (
            "for pid in [p for p in os.listdir('/proc') if p.isdigit()]:\n"
            "    for via in ('root', 'cwd'):\n"
            f"        for path in ({str(master)!r}, {str(zip_path)!r}, 'notebooks/{BAYES}.ipynb'):\n"
            "            place = f'/proc/{pid}/{via}/' + path.lstrip('/')\n"
            "            if path.endswith('.zip') and os.path.exists(place):\n"
            "                import zipfile\n"
            "                try:\n"
            "                    if 'test_q6_value' in zipfile.ZipFile(place).read('tests/q6.py').decode():\n"
            "                        q6 = {'b', 'd', 'f', 'g'}\n"
            "                except Exception:\n"
            "                    pass\n"
            "            _use(_read(place))\n"
        ),
        # Any autograder zip or any notebook holding the solution markers, anywhere on the disk.
        "searches-the-disk": FIND
        + (
            "def _wanted(path):\n"
            "    if path.endswith('-autograder.zip'):\n"
            "        global q6\n"
            "        q6 = {'b', 'd', 'f', 'g'}\n"
            "    return path.endswith('.ipynb') and '# BEGIN SOLUTION' in _read(path)\n"
            "_walk(['/'], _wanted, depth=12)\n"
        ),
        # The instructor's shell history (and the files it names) and ~/.cache.
        "reads-history-and-cache": FIND
        + (
            "import glob, pwd, re\n"
            "homes = {pwd.getpwuid(os.getuid()).pw_dir, '/root', *glob.glob('/home/*')}\n"
            "for home in homes:\n"
            "    for name in ('.bash_history', '.zsh_history', '.python_history', '.local/share/fish/fish_history'):\n"
            "        for path in re.findall(r'[\\w./~-]+\\.(?:ipynb|zip)', _read(os.path.join(home, name))):\n"
            "            _use(_read(os.path.expanduser(path)))\n"
            "    _walk([os.path.join(home, '.cache')], lambda path: path.endswith('.ipynb'))\n"
        ),
    }


@pytest.fixture(scope="module")
def other_sections(release, tmp_path_factory):
    """Another section's graded notebook in the temporary folder, a home folder and the folder above
    the repository, and a copy of the master in ``~/.cache``, as an instructor's machine may hold them."""
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    graded = exercises.grading_copy(student, solutions())
    tag = f"lecturekit-test-{os.getpid()}"
    folders = [
        tmp_path_factory.mktemp("section-b"),
        Path.home() / f".{tag}-section-c",
        ROOT.parent / f".{tag}-section-d",
    ]
    cache = Path.home() / ".cache" / tag
    try:
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
            nbformat.write(graded, folder / f"{BAYES}.ipynb")
        cache.mkdir(parents=True, exist_ok=True)
        shutil.copy(MASTERS / f"{BAYES}.ipynb", cache / f"{BAYES}.ipynb")
        yield folders
    finally:
        for folder in [*folders[1:], cache]:
            shutil.rmtree(folder, ignore_errors=True)


def solutions() -> dict[int, str]:
    return exercises.solution_answers(MASTERS / f"{BAYES}.ipynb")


@pytest.fixture(scope="module")
def battery(release, other_sections, tmp_path_factory):
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    good = solutions()
    zip_path = release / "autograder" / f"{BAYES}-autograder.zip"
    master = MASTERS / f"{BAYES}.ipynb"
    snoop = (
        f"import zipfile\ntry:\n    text = zipfile.ZipFile({str(zip_path)!r}).read('tests/q6.py').decode()\n"
        "except Exception:\n    text = ''\ntry:\n"
        f"    text += open({str(master)!r}).read()\nexcept Exception:\n    pass\n"
        "print(text)\nq6 = {'b', 'd', 'f', 'g'} if 'test_q6_value' in text else {'z'}\n"
    )
    tamper = (
        f"try:\n    open({str(ROOT / 'lecturekit' / '_tampered.py')!r}, 'w').write('x = 1')\n"
        "except OSError:\n    pass\n"
        "import numpy, os\ntry:\n    open(os.path.join(os.path.dirname(numpy.__file__), '_tampered.py'), 'w')\n"
        "except OSError:\n    pass\n" + WRONG[0]
    )
    cases = {
        "honest": good,
        "blank": {},
        "all-wrong": WRONG,
        "patches-numpy-math-builtins": {**WRONG, 0: PATCH + WRONG[0]},
        "rigged-eq": {**WRONG, **RIGGED},
        "reads-hidden-tests": {**WRONG, 5: snoop},
        "writes-to-disk": {**WRONG, 0: tamper},
        "raises-in-q1": {**good, 0: good[0] + "\nraise RuntimeError('out of time')\n"},
        "loops-in-q2": {
            **good,
            1: "def add_k_estimate(counts, k):\n    while True:\n        pass\n\nadd_k_estimate([1], 1)\n",
        },
        "disables-alarm-in-q3": {
            **good,
            2: "import signal\nfor s in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM):\n"
            "    signal.signal(s, signal.SIG_IGN)\nsignal.setitimer(signal.ITIMER_REAL, 0)\n"
            "while True:\n    pass\n",
        },
        "loops-when-checked-q3": {**good, 2: "def classify(prior, likelihood, x):\n    while True:\n        pass\n"},
        "kills-process-in-q5": {**good, 4: "import os\nos._exit(1)\n"},
        "segfaults-in-q6": {**good, 5: "import ctypes\nctypes.string_at(0)\n"},
        # 256 MiB blocks reserved but never written: the address-space limit is reached at once, however
        # busy the machine (writing 2 GiB of pages can outlast the 8 s limit on a loaded one).
        "exhausts-memory-in-q1": {**good, 0: "hoard = []\nwhile True:\n    hoard.append(np.empty(2**25))\n"},
        **{name: {5: cell} for name, cell in searches(zip_path, master).items()},
    }
    folder = tmp_path_factory.mktemp("hostile")
    for name, answers in cases.items():
        (folder / name).mkdir()
        nbformat.write(exercises.grading_copy(student, answers), folder / name / f"{BAYES}.ipynb")
    # The attacks on the sandbox and on the grader (attacks.py), with honest classmates graded before,
    # beside and after them.
    notebooks = {name: hostile.notebook(student, good, name) for name in hostile.CELLS}
    notebooks.update({name: exercises.grading_copy(student, good) for name in CLASSMATES})
    for name, nb in notebooks.items():
        (folder / name).mkdir()
        nbformat.write(nb, folder / name / f"{BAYES}.ipynb")
    texts = {"two-million-names": hostile.two_million_names(student, good), **hostile.unreadable_files(BAYES)}
    for name, text in texts.items():
        (folder / name).mkdir()
        (folder / name / f"{BAYES}.ipynb").write_text(text)
    (folder / "not-json").mkdir()
    (folder / "not-json" / f"{BAYES}.ipynb").write_text("{ this is not json")
    (folder / "other-assignment").mkdir()
    other = exercises.grading_copy(student, good)
    other.metadata["otter"] = {"assignment_name": "02.01-The-Multivariate-Gaussian"}
    nbformat.write(other, folder / "other-assignment" / f"{BAYES}.ipynb")
    (folder / "no-cells").mkdir()
    (folder / "no-cells" / f"{BAYES}.ipynb").write_text(
        json.dumps({"metadata": {"otter": {"assignment_name": BAYES}}, "nbformat": 4})
    )
    # The grading processes' temporary folders, and so every sandbox's command line, name this folder:
    # what is left running afterwards is found by it.
    scratch, previous = Path(tempfile.mkdtemp(prefix="lecturekit-battery-")), tempfile.tempdir
    tempfile.tempdir = str(scratch)
    before = set(grading_groups())  # left by graders outside this run (another session, a killed run)
    start = time.monotonic()
    try:
        rows = grade(folder, folder / "scores.csv", release / "autograder", cell_seconds=CELL_SECONDS, jobs=2)
    finally:
        tempfile.tempdir = previous
    seconds = time.monotonic() - start
    with (folder / "scores.csv").open() as handle:
        table = {row["submission"].split("/")[0]: row for row in csv.DictReader(handle)}
    with (folder / "summary.csv").open() as handle:
        summary = {row["question"]: row for row in csv.DictReader(handle)}
    rows = {row["submission"].split("/")[0]: row for row in rows}
    yield table, summary, seconds, rows, scratch, folder, before
    shutil.rmtree(scratch, ignore_errors=True)


def grading_groups() -> list[Path]:
    """Every cgroup folder a grading process has made on this machine (any hierarchy, any depth)."""
    return list(Path("/sys/fs/cgroup").glob(f"*/**/{limits.PREFIX}*")) + list(
        Path("/sys/fs/cgroup").glob(f"{limits.PREFIX}*")
    )


def scores(row) -> dict[str, float]:
    return {q: float(row[q]) for q in FULL}


def test_honest_blank_and_wrong(battery):
    table, *_ = battery
    assert scores(table["honest"]) == FULL and float(table["honest"]["total"]) == 19
    assert float(table["honest"]["possible"]) == 19
    assert scores(table["blank"]) == dict.fromkeys(FULL, 0)
    assert scores(table["all-wrong"]) == dict.fromkeys(FULL, 0)
    assert table["honest"]["error"] == "" and table["honest"]["q1 reason"] == ""
    assert table["blank"]["q1 reason"].startswith("failed 2 of 2")
    # A failed public check's message (here: the mistake on the worked example) is the feedback in the reason;
    # a hidden test's text never is.
    assert table["all-wrong"]["q1 reason"] == (
        "failed 2 of 2 tests; On the worked example your answer differs from Bayes' theorem."
    )
    assert "test_q1_many_values" not in table["all-wrong"]["q1 reason"]
    assert {row["isolated"] for row in table.values() if not row["error"]} == {"yes"}  # every grade confined


@pytest.mark.parametrize(
    "case",
    [
        "patches-numpy-math-builtins",
        "rigged-eq",
        "reads-hidden-tests",
        "writes-to-disk",
        "git-show-head",
        "globs-other-sections",
        "reads-proc-root-and-cwd",
        "searches-the-disk",
        "reads-history-and-cache",
    ],
)
def test_no_submission_raises_its_own_score(battery, case):
    table, *_ = battery
    assert scores(table[case]) == dict.fromkeys(FULL, 0), table[case]
    assert table[case]["isolated"] == "yes"
    assert not (ROOT / "lecturekit" / "_tampered.py").exists()


# A loop reaches its CELL_SECONDS of CPU time, or, on a shared machine loaded past what the backstop
# allows (four runnable processes per CPU), the backstop's wall-clock time first: which, the test
# cannot control; test_a_busy_machine_costs_a_slow_but_honest_answer_nothing loads the machine itself.
SPINS = rf"timed out after ({CELL_SECONDS:g} s of CPU|{backstop(CELL_SECONDS):g} s of wall-clock) time"


@pytest.mark.parametrize(
    "case, question, reason",
    [
        ("raises-in-q1", "q1", "raised RuntimeError in this cell"),
        ("loops-in-q2", "q2", SPINS + " in this cell"),
        ("disables-alarm-in-q3", "q3", SPINS + " in this cell"),
        ("loops-when-checked-q3", "q3", SPINS + " while checking this question"),
        ("kills-process-in-q5", "q5", "the process died in this cell"),
        ("segfaults-in-q6", "q6", "the process died in this cell"),
        ("exhausts-memory-in-q1", "q1", "used more than 2 GiB in this cell"),
    ],
)
def test_a_fault_costs_its_question_only(battery, case, question, reason):
    table, *_ = battery
    row = table[case]
    assert row["error"] == ""
    assert scores(row) == {**FULL, question: 0}, row
    assert re.search(reason, row[f"{question} reason"]), row[f"{question} reason"]


@pytest.mark.parametrize(
    "case, message",
    [
        ("not-json", "not a readable notebook (the notebook is not JSON"),
        ("other-assignment", "is for assignment '02.01-The-Multivariate-Gaussian'"),
        ("no-cells", "not a readable notebook"),
    ],
)
def test_malformed_submissions_get_a_row_saying_so(battery, case, message):
    table, *_ = battery
    assert message in table[case]["error"], table[case]["error"]
    assert float(table[case]["total"]) == 0


def test_the_summary_counts_faults_and_the_batch_ends_in_bounded_time(battery):
    _, summary, seconds, *_ = battery
    assert int(summary["q2"]["timed out"]) >= 1 and int(summary["q3"]["timed out"]) >= 2
    assert int(summary["q5"]["crashed"]) >= 1 and int(summary["q6"]["crashed"]) >= 1
    assert int(summary["q1"]["out of memory"]) >= 1
    assert float(summary["q1"]["mean"]) < 3
    # A bound on the whole batch (44 submissions, two at a time, a dozen CELL_SECONDS limits hit), where one
    # submission once held a grader for 960 s: it ends, and soon.
    assert seconds < 600


# --------------------------------------------------------------------------- attacks on the class


def test_every_row_is_present_and_every_classmate_gets_full_marks(battery):
    table, *_, folder, _ = battery
    assert set(table) == {path.name for path in folder.iterdir() if path.is_dir()}
    for name in CLASSMATES:
        assert scores(table[name]) == FULL and table[name]["error"] == "", table[name]


@pytest.mark.parametrize("name", sorted(hostile.CELLS))
def test_no_attack_earns_more_than_its_honest_work(battery, name):
    table, *_ = battery
    honest = name in hostile.HONEST_ELSEWHERE
    expected = {q: FULL[q] if honest and i not in hostile.CELLS[name] else 0 for i, q in enumerate(FULL)}
    assert scores(table[name]) == expected, table[name]


def test_a_first_cell_of_two_million_names_costs_its_own_grade_only(battery):
    table, *_ = battery
    row = table["two-million-names"]
    assert row["error"] == "" and float(row["total"]) <= 19, row


@pytest.mark.parametrize("name", sorted(hostile.unreadable_files(BAYES)))
def test_a_file_that_is_no_notebook_is_a_row_saying_so(battery, name):
    table, *_ = battery
    assert table[name]["error"].startswith("not a readable notebook ("), table[name]
    assert float(table[name]["total"]) == 0


def test_the_scores_file_holds_only_what_the_grader_wrote(battery):
    table, *_, folder, _ = battery
    text = (folder / "scores.csv").read_bytes()
    assert max(text) < 128  # plain ASCII, whatever the submissions sent
    for trace in (b"/tmp", b"/proc", b"MemTotal", b"\\udcff", b"lecturekit-grader"):
        assert trace not in text, trace
    assert not re.search(rb"\d+\.\d\d \d+\.\d\d \d+\.\d\d", text)  # a load average
    assert table["exception-names"]["q1 reason"] == "raised an exception in this cell"


def test_nothing_a_submission_started_outlives_the_batch(battery):
    *_, scratch, _, before = battery
    left = subprocess.run(["pgrep", "-f", str(scratch)], capture_output=True, text=True).stdout.split()
    assert not left, subprocess.run(
        ["ps", "-o", "pid,cmd", "-p", ",".join(left)], capture_output=True, text=True
    ).stdout
    # No cgroup of a grading process of this run that has ended (the groups of other tests' live ones may
    # exist; what a grader killed before this run left is not this run's doing).
    stale = [
        group
        for group in set(grading_groups()) - before
        if not Path(f"/proc/{group.name.removeprefix(limits.PREFIX)}").exists()
    ]
    assert not stale, stale


def test_the_grader_and_every_sandbox_stay_within_their_bounds(battery):
    *_, rows, _, _, _ = battery
    bound = DEFAULT_MEMORY + zygote.ZYGOTE_MEMORY
    peaks = {name: row["memory"] for name, row in rows.items() if row.get("memory")}
    assert set(peaks) == {name for name, row in rows.items() if not row.get("error")}
    for name, memory in peaks.items():
        assert memory["grader"] < GRADER_BOUND, (name, memory)
        assert memory["sandbox"] <= bound, (name, memory)
    assert max(memory["sandbox"] for memory in peaks.values()) > 2**30  # the attacks did press on the bound


# --------------------------------------------------------------------------- the grader's memory

# A worker is the student's process and writes what it likes to its end of the socket: here, while
# a cell runs or while the check calls its function, a reply the grader did not ask for. {"i": "1"}
# list items cost a JSON parser about 25 times their size (40 MB once took a grader from 28 MB to 834 MB).


def peak_memory(pid: int) -> int:
    """The peak resident memory of a process, in bytes (VmHWM)."""
    status = Path(f"/proc/{pid}/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) * 1024


def test_a_forged_reply_costs_the_grader_a_bounded_amount_and_classmates_nothing(release, tmp_path):
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    good = solutions()
    when_called = good[1].replace("def add_k_estimate(counts, k):\n", "def add_k_estimate(counts, k):\n    forge({})\n")
    assert when_called != good[1]
    cases = {
        "honest-before": good,
        # while a cell runs: its reply is a status, read up to RUN_REPLY bytes
        "forges-40-MB": {**good, 0: FORGE + "forge(40_000_000)\n" + good[0]},
        "forges-under-the-limit": {**good, 0: FORGE + f"forge({MAX_MESSAGE - 100})\n" + good[0]},
        # while the check calls the function: read in the check's own process, up to MAX_MESSAGE and
        # MAX_ITEMS (refused for its 3 million values), or read and parsed (it only confuses its own grading)
        "forges-when-called": {**good, 1: FORGE + when_called.format(MAX_MESSAGE - 100)},
        "forges-a-valid-reply-when-called": {
            **good,
            1: FORGE + when_called.format(f"{MAX_MESSAGE - 100}, item=b'{{\"s\": \"' + b'x' * 4000 + b'\"}}, '"),
        },
        "honest-after": good,
    }
    grader, rows = gradebook.GraderProcess(), {}
    try:
        for name, answers in cases.items():
            (tmp_path / name).mkdir()
            path = tmp_path / name / f"{BAYES}.ipynb"
            nbformat.write(exercises.grading_copy(student, answers), path)
            rows[name] = gradebook.grade_one(
                path, release / "autograder" / f"{BAYES}-autograder.zip", cell_seconds=CELL_SECONDS, grader=grader
            )
            if name == "honest-before":
                baseline = peak_memory(grader.process.pid)
        peak = peak_memory(grader.process.pid)
    finally:
        grader.close()
    assert scores(rows["honest-before"]) == scores(rows["honest-after"]) == FULL
    for name, question in (("forges-40-MB", "q1"), ("forges-under-the-limit", "q1"), ("forges-when-called", "q2")):
        assert scores(rows[name]) == {**FULL, question: 0}, rows[name]
        assert "sent the grader more than it reads" in rows[name][f"{question} reason"], rows[name]
    # Documented in coursekit.grading.sandbox and checking: what a worker sends reaches the grading
    # process only as a cell's status; answers are read and decoded in each check's own process.
    assert peak - baseline < GRADER_GROWTH, f"the grader's peak rose by {(peak - baseline) / 2**20:.0f} MiB"


# --------------------------------------------------------------------------- bans that hold


def test_a_question_that_forbids_a_module_is_graded_where_it_cannot_be_imported(release, tmp_path):
    # As if 1.1's question 1 said `forbids: [lecturekit]`: its answer runs in a worker of its own, after
    # the notebook's first code cell (statement by statement, so its lecturekit import fails alone).
    from dataclasses import replace

    from coursekit.grading.grader import Assignment, grade_submission

    assignment = replace(
        Assignment.load(release / "autograder" / f"{BAYES}-autograder.zip"), rules={"q1": {"forbids": ["lecturekit"]}}
    )
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    good = solutions()
    uses = (
        "def positive_predictive_value(prevalence, sensitivity, specificity):\n"
        "    from lecturekit.estimation import posterior\n"
        "    return posterior([1 - prevalence, prevalence], [1 - specificity, sensitivity])[1]\n"
    )
    results = {}
    for name, answers in {
        "honest": good,
        "uses-lecturekit": {**good, 0: uses},
        "imports-it-first": {**good, 0: "import lecturekit.estimation\n" + good[0]},
    }.items():
        path = tmp_path / name / f"{BAYES}.ipynb"
        path.parent.mkdir()
        nbformat.write(exercises.grading_copy(student, answers), path)
        results[name] = grade_submission(assignment, path, protect=[ROOT, tmp_path], cell_seconds=CELL_SECONDS)
    assert {q: e["score"] for q, e in results["honest"]["questions"].items()} == FULL
    for name in ("uses-lecturekit", "imports-it-first"):
        questions = results[name]["questions"]
        assert questions["q1"]["score"] == 0 and "ModuleNotFoundError" in questions["q1"]["reason"], questions["q1"]
        assert {q: e["score"] for q, e in questions.items() if q != "q1"} == {
            q: p for q, p in FULL.items() if q != "q1"
        }


# --------------------------------------------------------------------------- failing closed


def test_grading_stops_where_workers_cannot_be_confined_unless_asked(release, tmp_path, monkeypatch):
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    (tmp_path / "subs" / "alice").mkdir(parents=True)
    nbformat.write(exercises.grading_copy(student, solutions()), tmp_path / "subs" / "alice" / f"{BAYES}.ipynb")
    missing = f"bubblewrap (bwrap) is not installed: {isolation.INSTALL_HINT}"
    monkeypatch.setattr(gradebook.isolation, "problem", lambda *args, **kwargs: missing)
    with pytest.raises(SystemExit) as stopped:
        gradebook.grade(tmp_path / "subs", tmp_path / "scores.csv", release / "autograder")
    assert "apt-get install bubblewrap" in str(stopped.value) and "UNISOLATED=1" in str(stopped.value)
    assert not (tmp_path / "scores.csv").exists()
    rows = gradebook.grade(tmp_path / "subs", tmp_path / "scores.csv", release / "autograder", unisolated=True)
    assert rows[0]["total"] == 19 and rows[0]["isolated"] == "no"
    with (tmp_path / "scores.csv").open() as handle:
        assert next(csv.DictReader(handle))["isolated"] == "no"


def test_the_zips_run_autograder_grades_with_this_grader_as_a_grading_image_would(release, tmp_path):
    """Gradescope runs /autograder/run_autograder with the zip in source/ and the notebook in submission/."""
    import subprocess
    import sys
    import zipfile

    root = tmp_path / "autograder"
    with zipfile.ZipFile(release / "autograder" / f"{BAYES}-autograder.zip") as archive:
        archive.extractall(root / "source")
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    (root / "submission").mkdir()
    answers = {**solutions(), 0: PATCH + WRONG[0]}  # all right but q1, which also patches NumPy
    nbformat.write(exercises.grading_copy(student, answers), root / "submission" / f"{BAYES}.ipynb")
    script = root / "source" / "run_autograder"
    assert "coursekit.grading.grader" in script.read_text() and "--isolation auto" in script.read_text()
    assert SETUP_GRADING in (root / "source" / "setup.sh").read_text()  # the image gets bubblewrap
    subprocess.run(
        ["bash", str(script)],
        check=True,
        timeout=300,
        env={"PATH": "/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable},
    )
    results = json.loads((root / "results" / "results.json").read_text())
    assert "bubblewrap's sandbox" in results["extra_data"]["confinement"]  # bubblewrap runs here, as in CI
    assert {t["name"]: t["score"] for t in results["tests"]} == {**FULL, "q1": 0}
    assert results["score"] == 16 and all(t["max_score"] == FULL[t["name"]] for t in results["tests"])


# --------------------------------------------------------------------------- CPU time, not wall-clock time

BURN = "import time as _t\n_end = _t.process_time() + {seconds}\nwhile _t.process_time() < _end:\n    pass\n"
# The slow-but-honest answer checks that the load did slow it (its wall-clock time at least 1.5 x its
# CPU time, where the share below makes it about 3 x): else it scores nothing, and the test would not
# be testing a loaded machine. A bound on the test's premise, not a timing of the grader.
SLOWED = (
    "_w, _c = _t.monotonic(), _t.process_time()\n"
    + BURN.format(seconds=1.2)
    + "if (_t.monotonic() - _w) < 1.5 * (_t.process_time() - _c):\n    positive_predictive_value = None\n"
)


def test_a_busy_machine_costs_a_slow_but_honest_answer_nothing(release, tmp_path):
    """Each cell may use 2 s of CPU time. The grader, and so its sandbox's zygote and workers, run on
    one CPU beside two spinners pinned to it: the worker gets about a third of it (the machine's other
    work moves to the other CPUs), so that each of its CPU seconds takes about three of wall-clock time.
    (An answer that waits without computing meets the wall-clock backstop:
    test_checking.py::test_an_answer_that_waits_meets_the_wall_clock_backstop.)"""
    from coursekit.grading.grader import Assignment, grade_submission

    if limits.problem():
        pytest.skip(limits.problem())
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    good = solutions()
    answers = {
        **good,
        0: "import time as _t\n" + SLOWED + good[0],  # 1.2 s of CPU: 60 % of its limit
        1: BURN.format(seconds=3) + good[1],  # 3 s of CPU: over its limit
    }
    path = tmp_path / "slow" / f"{BAYES}.ipynb"
    path.parent.mkdir()
    nbformat.write(exercises.grading_copy(student, answers), path)
    assignment = Assignment.load(release / "autograder" / f"{BAYES}-autograder.zip")
    before = os.sched_getaffinity(0)
    cpu = sorted(before)[:1]
    spinners = [
        subprocess.Popen(
            [sys.executable, "-c", "while True: pass"],
            stdin=subprocess.DEVNULL,
            preexec_fn=lambda: os.sched_setaffinity(0, cpu),
        )
        for _ in range(2)
    ]
    try:
        os.sched_setaffinity(0, cpu)
        result = grade_submission(assignment, path, protect=[ROOT, tmp_path], cell_seconds=2, budget_seconds=900)
    finally:
        os.sched_setaffinity(0, before)
        for process in spinners:
            process.kill()
            process.wait()
    questions = result["questions"]
    assert {q: e["score"] for q, e in questions.items()} == {**FULL, "q2": 0}, questions
    assert questions["q2"]["reason"] == "timed out after 2 s of CPU time in this cell"
