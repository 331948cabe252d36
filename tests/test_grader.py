"""Grading holds against hostile and broken submissions (lecturekit.grader, lecturekit.sandbox).

A battery of submissions to the short assignment 1.1 is graded through the real pipeline
(``course.grade``, as ``make grade`` runs it): the honest solution, a blank, wrong answers,
attacks on the checker (monkeypatching NumPy, ``math`` and builtins, rigged ``__eq__``, writing
to disk, reading the hidden tests), and faults in one answer (an exception, a loop, a loop with the
alarm disabled, a killed process, a segfault, exhausted memory), which must cost that question only.
Submissions hold the notebook's imports and answer cells, so that the battery stays fast.
"""

from __future__ import annotations

import csv
import json
import time

import nbformat
import numpy as np
import pytest

from conftest import ROOT, course

import exercises  # tools/exercises.py
from lecturekit.plain_data import Unrepresentable, decode, encode
from lecturekit.sandbox import isolation_available

BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"
FULL = {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3}
ISOLATED = isolation_available()
CELL_SECONDS = 8  # instead of the assignment's 20, to keep the battery short

WRONG = {  # every answer wrong, in every public and hidden test
    0: "def positive_predictive_value(prevalence, sensitivity, specificity):\n    return -1.0\n",
    1: "def add_k_estimate(counts, k):\n    return np.zeros(3)\n",
    2: "def classify(prior, likelihood, x):\n    return np.full(len(x), -1)\n",
    3: "def geometric_mle(flips_until_head):\n    return 7.0\n",
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
builtins.set = lambda *a: {"b", "d", "f"}
operator.eq = lambda a, b: True
import lecturekit, otter
"""
RIGGED = {
    0: ("class Always(float):\n    def __eq__(self, other):\n        return True\n    __hash__ = float.__hash__\n"
        "    def __le__(self, other):\n        return True\n    def __ge__(self, other):\n        return True\n"
        "def positive_predictive_value(prevalence, sensitivity, specificity):\n    return Always(0.5)\n"),
    1: ("class Everything(np.ndarray):\n    def __eq__(self, other):\n        return np.ones(self.shape, bool)\n"
        "def add_k_estimate(counts, k):\n    return np.zeros(len(counts)).view(Everything)\n"),
    4: "class Always(float):\n    def __eq__(self, other):\n        return True\n    __hash__ = float.__hash__\nq5 = Always(2.0)\n",
    5: "class AnySet(set):\n    def __eq__(self, other):\n        return True\n    __hash__ = None\nq6 = AnySet({'z'})\n",
}


def solutions() -> dict[int, str]:
    master = course.MASTERS / f"{BAYES}.ipynb"
    return dict(enumerate(q.solution for q in exercises.questions(nbformat.read(master, as_version=4))))


@pytest.fixture(scope="module")
def battery(release, tmp_path_factory):
    student = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    good = solutions()
    zip_path = release / "autograder" / f"{BAYES}-autograder.zip"
    master = course.MASTERS / f"{BAYES}.ipynb"
    snoop = (f"import zipfile\ntry:\n    text = zipfile.ZipFile({str(zip_path)!r}).read('tests/q6.py').decode()\n"
             "except Exception:\n    text = ''\ntry:\n"
             f"    text += open({str(master)!r}).read()\nexcept Exception:\n    pass\n"
             "print(text)\nq6 = {'b', 'd', 'f'} if 'test_q6_value' in text else {'z'}\n")
    tamper = (f"try:\n    open({str(ROOT / 'lecturekit' / '_tampered.py')!r}, 'w').write('x = 1')\nexcept OSError:\n    pass\n"
              "import numpy, os\ntry:\n    open(os.path.join(os.path.dirname(numpy.__file__), '_tampered.py'), 'w')\n"
              "except OSError:\n    pass\n" + WRONG[0])
    cases = {
        "honest": good,
        "blank": {},
        "all-wrong": WRONG,
        "patches-numpy-math-builtins": {**WRONG, 0: PATCH + WRONG[0]},
        "rigged-eq": {**WRONG, **RIGGED},
        "reads-hidden-tests": {**WRONG, 5: snoop},
        "writes-to-disk": {**WRONG, 0: tamper},
        "raises-in-q1": {**good, 0: good[0] + "\nraise RuntimeError('out of time')\n"},
        "loops-in-q2": {**good, 1: "def add_k_estimate(counts, k):\n    while True:\n        pass\n\nadd_k_estimate([1], 1)\n"},
        "disables-alarm-in-q3": {**good, 2: "import signal\nfor s in (signal.SIGALRM, signal.SIGINT, signal.SIGTERM):\n"
                                            "    signal.signal(s, signal.SIG_IGN)\nsignal.setitimer(signal.ITIMER_REAL, 0)\n"
                                            "while True:\n    pass\n"},
        "loops-when-checked-q4": {**good, 3: "def geometric_mle(flips_until_head):\n    while True:\n        pass\n"},
        "kills-process-in-q5": {**good, 4: "import os\nos._exit(1)\n"},
        "segfaults-in-q6": {**good, 5: "import ctypes\nctypes.string_at(0)\n"},
        # 256 MiB blocks reserved but never written: the address-space limit is reached at once, however
        # busy the machine (writing 2 GiB of pages can outlast the 8 s limit on a loaded one).
        "exhausts-memory-in-q1": {**good, 0: "hoard = []\nwhile True:\n    hoard.append(np.empty(2**25))\n"},
    }
    folder = tmp_path_factory.mktemp("hostile")
    for name, answers in cases.items():
        (folder / name).mkdir()
        nbformat.write(exercises.grading_copy(student, answers), folder / name / f"{BAYES}.ipynb")
    (folder / "not-json").mkdir()
    (folder / "not-json" / f"{BAYES}.ipynb").write_text("{ this is not json")
    (folder / "other-assignment").mkdir()
    other = exercises.grading_copy(student, good)
    other.metadata["otter"] = {"assignment_name": "02.01-The-Multivariate-Gaussian"}
    nbformat.write(other, folder / "other-assignment" / f"{BAYES}.ipynb")
    (folder / "no-cells").mkdir()
    (folder / "no-cells" / f"{BAYES}.ipynb").write_text(json.dumps(
        {"metadata": {"otter": {"assignment_name": BAYES}}, "nbformat": 4}))
    start = time.monotonic()
    course.grade(folder, folder / "scores.csv", release / "autograder", cell_seconds=CELL_SECONDS)
    seconds = time.monotonic() - start
    with (folder / "scores.csv").open() as handle:
        table = {row["submission"].split("/")[0]: row for row in csv.DictReader(handle)}
    with (folder / "summary.csv").open() as handle:
        summary = {row["question"]: row for row in csv.DictReader(handle)}
    return table, summary, seconds


def scores(row) -> dict[str, float]:
    return {q: float(row[q]) for q in FULL}


def test_honest_blank_and_wrong(battery):
    table, _, _ = battery
    assert scores(table["honest"]) == FULL and float(table["honest"]["total"]) == 19
    assert float(table["honest"]["possible"]) == 19
    assert scores(table["blank"]) == dict.fromkeys(FULL, 0)
    assert scores(table["all-wrong"]) == dict.fromkeys(FULL, 0)
    assert table["honest"]["error"] == "" and table["honest"]["q1 reason"] == ""
    assert table["blank"]["q1 reason"].startswith("failed 2 of 2")


@pytest.mark.parametrize("case", ["patches-numpy-math-builtins", "rigged-eq", "reads-hidden-tests", "writes-to-disk"])
def test_no_submission_raises_its_own_score(battery, case):
    table, _, _ = battery
    if case in ("reads-hidden-tests", "writes-to-disk") and not ISOLATED:
        pytest.skip("needs the worker's isolation (root, Linux, unshare): see the instructor guide")
    assert scores(table[case]) == dict.fromkeys(FULL, 0), table[case]
    assert not (ROOT / "lecturekit" / "_tampered.py").exists()


@pytest.mark.parametrize("case, question, reason", [
    ("raises-in-q1", "q1", "raised RuntimeError in this cell"),
    ("loops-in-q2", "q2", "timed out after 8 s in this cell"),
    ("disables-alarm-in-q3", "q3", "timed out after 8 s in this cell"),
    ("loops-when-checked-q4", "q4", "timed out after 8 s while checking this question"),
    ("kills-process-in-q5", "q5", "the process died in this cell"),
    ("segfaults-in-q6", "q6", "the process died in this cell"),
    ("exhausts-memory-in-q1", "q1", "used more than 2 GiB in this cell"),
])
def test_a_fault_costs_its_question_only(battery, case, question, reason):
    table, _, _ = battery
    row = table[case]
    assert row["error"] == ""
    assert scores(row) == {**FULL, question: 0}, row
    assert reason in row[f"{question} reason"], row[f"{question} reason"]


@pytest.mark.parametrize("case, message", [
    ("not-json", "not valid notebook JSON"),
    ("other-assignment", "is for assignment '02.01-The-Multivariate-Gaussian'"),
    ("no-cells", "not a readable notebook"),
])
def test_malformed_submissions_get_a_row_saying_so(battery, case, message):
    table, _, _ = battery
    assert message in table[case]["error"], table[case]["error"]
    assert float(table[case]["total"]) == 0


def test_the_summary_counts_faults_and_the_batch_ends_in_bounded_time(battery):
    _, summary, seconds = battery
    assert summary["q2"]["timed out"] == "1" and summary["q3"]["timed out"] == "1"
    assert summary["q4"]["timed out"] == "1"
    assert summary["q5"]["crashed"] == "1" and summary["q6"]["crashed"] == "1"
    assert summary["q1"]["out of memory"] == "1"
    assert float(summary["q1"]["mean"]) < 3
    assert seconds < 300  # 17 submissions, two at a time, with four 8-second limits hit


# --------------------------------------------------------------------------- plain data


@pytest.mark.parametrize("value", [None, True, 3, -2**70, 0.1, float("nan"), float("-inf"), 1 + 2j, "ü",
                                   [1, (2.0, "x")], {"a": {1, 2}}, frozenset({3}), np.float32(1.5),
                                   np.arange(6).reshape(2, 3), np.array([[np.nan, 1.0]]), np.array(["a", "bc"])])
def test_plain_data_round_trips(value):
    back = decode(json.loads(json.dumps(encode(value))))
    assert type(back) is type(value)
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value, equal_nan=value.dtype.kind == "f")
    elif isinstance(value, float) and value != value:
        assert back != back
    else:
        assert back == value


def test_plain_data_keeps_sparse_sparse_and_refuses_objects():
    import scipy.sparse as sparse

    matrix = sparse.random(5, 7, density=0.3, format="csr", random_state=0)
    back = decode(json.loads(json.dumps(encode(matrix))))
    assert sparse.issparse(back) and (back != matrix).nnz == 0

    class Rigged(float):
        def __eq__(self, other):
            return True

    for value in (Rigged(1.0), lambda: 1, object()):
        back = decode(encode(value))
        assert isinstance(back, Unrepresentable) and back != back and not (back == 1.0)
    with pytest.raises(ValueError):
        decode({"zz": 1})


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
    assert "lecturekit.grader" in script.read_text()
    subprocess.run(["bash", str(script)], check=True, timeout=300,
                   env={"PATH": "/usr/bin:/bin", "AUTOGRADER_ROOT": str(root), "PYTHON": sys.executable})
    results = json.loads((root / "results" / "results.json").read_text())
    assert {t["name"]: t["score"] for t in results["tests"]} == {**FULL, "q1": 0}
    assert results["score"] == 16 and all(t["max_score"] == FULL[t["name"]] for t in results["tests"])
