"""Grading one submission with the student's code kept out of the checking process.

otter-grader runs a student's notebook and then its tests *in the same Python*, so a cell that
says ``np.isclose = lambda *a, **k: True`` passes every test after it, and a cell that disarms
the time limit or kills its kernel costs the whole submission. This grader keeps otter's
assignment format (the autograder zip that ``otter assign`` writes, whose ``tests/qN.py`` files
hold the public and hidden test functions) and changes where things run:

1. The submission's code cells run in a worker (:class:`coursekit.grading.sandbox.Sandbox`), one cell
   at a time, each with a wall-clock limit enforced from outside. The worker is confined in a
   sandbox that shows it only the Python packages and the course's support files
   (:mod:`coursekit.grading.isolation`). A cell that times out, kills the worker or breaks its channel is
   marked; the worker is restarted and the other cells are run again without it, so the fault
   costs only that cell's question.
2. Each question's tests run *here*, in a process the student's code never ran in, with this
   process's own NumPy, SciPy and ``math``. A test's argument that names a function becomes a
   proxy: calling it sends the arguments to the worker as plain data and brings back the answer as
   plain data (:mod:`coursekit.grading.plain_data`); a name bound to a value is fetched the same way.
   The references a test computes, and the comparisons, are never within the student's reach.
3. Each question's check has its own time limit; a check that times out or kills the worker
   scores 0 with that reason and the worker is restarted for the next question.
4. Lecture cells that no answer or check uses are not run, where the master marks them so (the
   ``skip-when-grading`` tag; the autograder zip's ``skippable.json`` holds a fingerprint of each,
   :func:`fingerprint`). Only a cell that is exactly as the student notebook had it is skipped: an
   edited one runs, as any cell does. Should anything raise ``NameError`` (an answer that uses a
   lecture cell's variable), the submission is graded again with every cell run, so that a score
   never depends on what was skipped.

The result says, per question, the score and, where points were lost, why ("timed out after
20 s", "the process died in this cell", "used more than 2 GiB", "raised ZeroDivisionError",
"failed 2 of 3 tests"); never the student's output or a hidden test's text.

Run ``python -m coursekit.grading.grader AUTOGRADER.zip SUBMISSION.ipynb`` for one submission (JSON on
stdout); ``make grade`` (``python -m coursekit grade``) grades a folder. See the instructor guide.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import hashlib
import inspect
import json
import os
import re
import sys
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.grading.isolation import Environment
from coursekit.grading.sandbox import (MAX_CHECK_BYTES, MAX_ITEMS, MAX_MESSAGE, IsolationUnavailable, Outcome, Sandbox,
                                WorkerPool, WorkerUnavailable)

__all__ = ["Assignment", "grade_submission"]

DEFAULT_CELL_SECONDS = 20.0
DEFAULT_MEMORY = 2 * 2**30
# Imported here, before any student code runs anywhere, so that the tests' own imports are
# already loaded from an untouched disk.
_PRELOAD = ("numpy", "scipy", "scipy.optimize", "scipy.stats", "scipy.special", "scipy.sparse",
            "scipy.integrate", "scipy.linalg", "fractions", "math", "itertools")
# In an autograder zip: the fingerprints of the lecture cells that grading may skip.
SKIPPABLE = "skippable.json"
SKIPPED = "not run: a lecture cell that no answer or check uses"


def fingerprint(source: str) -> str:
    """The fingerprint of a code cell's source, as ``skippable.json`` lists skippable cells.

    Parameters
    ----------
    source : str
        The cell's source, exactly as the notebook holds it (lines joined).

    Returns
    -------
    str
        Its SHA-256, in hexadecimal.
    """
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Assignment:
    """An autograder zip: its name, each question's test file and the cell time limit."""

    name: str
    tests: dict[str, str]
    cell_seconds: float
    zip_path: Path
    rules: dict = field(default_factory=dict)  # per question: {"forbids": [module, ...]}
    skippable: frozenset = frozenset()  # fingerprints of the lecture cells grading may skip

    @classmethod
    def load(cls, zip_path) -> Assignment:
        """Read an ``otter assign`` autograder zip.

        Parameters
        ----------
        zip_path : path
            The assignment's autograder zip, or the folder it was unpacked into.

        Returns
        -------
        Assignment
        """
        zip_path = Path(zip_path)
        if zip_path.is_dir():  # unpacked, as in a grading image's /autograder/source
            def member(name, default):
                return json.loads((zip_path / name).read_text()) if (zip_path / name).exists() else default
            config = json.loads((zip_path / "otter_config.json").read_text())
            tests = {p.stem: p.read_text() for p in (zip_path / "tests").glob("*.py")}
            rules, skippable = member("questions.json", {}), member(SKIPPABLE, {})
        else:
            with zipfile.ZipFile(zip_path) as archive:
                def member(name, default):
                    return json.loads(archive.read(name)) if name in archive.namelist() else default
                config = json.loads(archive.read("otter_config.json"))
                tests = {Path(n).stem: archive.read(n).decode() for n in archive.namelist()
                         if n.startswith("tests/") and n.endswith(".py")}
                rules, skippable = member("questions.json", {}), member(SKIPPABLE, {})
        seconds = DEFAULT_CELL_SECONDS
        for plugin in config.get("plugins", []):
            if isinstance(plugin, dict) and "coursekit.grading.time_limit.CellTimeLimit" in plugin:
                seconds = float((plugin["coursekit.grading.time_limit.CellTimeLimit"] or {}).get("seconds", seconds))
        order = sorted(tests, key=lambda q: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", q)])
        return cls(config.get("assignment_name", zip_path.stem.removesuffix("-autograder")),
                   {q: tests[q] for q in order}, seconds, zip_path, rules, frozenset(skippable.get("cells", ())))


class _Abort(BaseException):
    """A check cannot go on: its time is up or the worker died (not catchable as Exception)."""

    def __init__(self, outcome: Outcome):
        super().__init__(outcome.status)
        self.outcome = outcome


def _student_error(name: str) -> Exception:
    kind = getattr(builtins, name, None)
    if isinstance(kind, type) and issubclass(kind, Exception):
        return kind(f"the answer raised {name}")
    return RuntimeError(f"the answer raised {name}")


class _Remote:
    """Stands for a student's function inside a test: calls go to the worker, answers come back as data."""

    def __init__(self, check: _Check, name: str):
        self._check, self.__name__ = check, name

    def __call__(self, *args, **kwargs):
        outcome = self._check.sandbox.call(self.__name__, args, kwargs, self._check.remaining())
        if outcome.fatal:
            raise _Abort(outcome)
        if outcome.status != "ok":
            self._check.raised.append(outcome.detail)
            raise _student_error(outcome.detail)
        return outcome.value


@dataclass
class _Check:
    sandbox: Sandbox
    deadline: float
    raised: list = field(default_factory=list)

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _Abort(Outcome("timeout"))
        return left


def _reason(outcome: Outcome, seconds: float, memory: int, where: str) -> str:
    if outcome.status == "timeout":
        return f"timed out after {seconds:g} s {where}"
    if outcome.status == "memory":
        return f"used more than {memory / 2**30:g} GiB {where}"
    if outcome.status == "died":
        return f"the process died {where}"
    if outcome.status == "flood":
        return (f"sent the grader more than it reads ({MAX_MESSAGE // 2**20} MiB or {MAX_ITEMS:,} values "
                f"in one answer, {MAX_CHECK_BYTES // 2**20} MiB in one question's check) {where}")
    return f"raised {outcome.detail} {where}"


def _code_cells(nb: dict) -> tuple[list[str], dict[int, str]]:
    """The submission's code cells to run, and which of them answers which question.

    An answer cell is one tagged ``otter_answer_cell`` (or, if a student removed the tag, the
    cell just before a ``grader.check``), belonging to the next ``grader.check("qN")``.
    """
    sources, checks, tagged = [], {}, set()
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        check = re.match(r'\s*grader\.check\(\s*["\'](\w+)["\']\s*\)\s*$', source)
        if check:
            checks[len(sources)] = check.group(1)
            continue
        if source.lstrip().startswith("# Initialize Otter") or re.match(r"\s*grader\.", source):
            continue
        tags = (cell.get("metadata") or {}).get("tags") or []
        if isinstance(tags, list) and "otter_answer_cell" in tags:
            tagged.add(len(sources))
        sources.append(source)
    owner = {}
    for position, question in sorted(checks.items()):
        answers = [i for i in tagged if i < position and i not in owner] or \
                  ([position - 1] if position - 1 >= 0 and position - 1 not in owner else [])
        for i in answers:
            owner[i] = question
    return sources, owner


def _run_cells(sandbox: Sandbox, sources: list[str], skip: dict[int, str], seconds: float, memory: int,
               raised: dict[int, str], budget_end: float) -> None:
    """Run every cell not in ``skip``; a cell that is fatal joins ``skip`` and the rest run again."""
    while True:
        sandbox.start()
        for index, source in enumerate(sources):
            if index in skip:
                continue
            if time.monotonic() > budget_end:
                skip[index] = "not run: the submission used up its time"
                continue
            outcome = sandbox.run(source, seconds)
            if outcome.fatal:
                skip[index] = _reason(outcome, seconds, memory, "in this cell")
                break
            if outcome.status != "ok":
                raised[index] = _reason(outcome, seconds, memory, "in this cell")
        else:
            return


def grade_submission(assignment: Assignment, notebook_path, *, pool: WorkerPool | None = None,
                     isolation: str = "required", protect=(), memory_bytes: int = DEFAULT_MEMORY,
                     budget_seconds: float | None = None, cell_seconds: float | None = None) -> dict:
    """Grade one submitted notebook against an assignment.

    Parameters
    ----------
    assignment : Assignment
        From :meth:`Assignment.load`.
    notebook_path : path
        The submitted ``.ipynb``.
    pool : WorkerPool or None
        Where the workers come from, kept from one submission to the next by a process that grades
        many (:func:`serve`); None: a pool of this call's own, made with ``isolation`` and
        ``protect``, and closed when it returns.
    isolation : {"required", "auto", "off"}
        Confine the worker (:mod:`coursekit.grading.isolation`); see :class:`coursekit.grading.sandbox.WorkerPool`.
    protect : list of path
        Folders the worker must not see (the submissions, the autograder zips, the repository).
    memory_bytes : int
        The worker's memory limit.
    budget_seconds : float or None
        Time for the whole submission, cells and checks; default 3 × (cells + questions) × limit.
    cell_seconds : float or None
        Time limit of each cell and each question's check; default: the assignment's.

    Returns
    -------
    dict
        ``{"questions": {q: {"score", "possible", "reason"}}, "error": str, "isolated": bool}``.
    """
    if pool is None:
        with WorkerPool(isolation, [*protect, _secret(assignment)]) as own:
            return grade_submission(assignment, notebook_path, pool=own, memory_bytes=memory_bytes,
                                    budget_seconds=budget_seconds, cell_seconds=cell_seconds)
    for module in _PRELOAD:
        __import__(module)
    result = {"questions": {}, "error": "", "isolated": pool.isolated}
    try:
        nb = json.loads(Path(notebook_path).read_text(encoding="utf-8"))
        if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
            raise ValueError("it has no list of cells")
    except (OSError, UnicodeDecodeError, ValueError) as error:
        result["error"] = f"not a readable notebook ({type(error).__name__}: {str(error)[:100]})"
        return result
    name = ((nb.get("metadata") or {}).get("otter") or {}).get("assignment_name")
    if name and name != assignment.name:
        result["error"] = f"this notebook is for assignment {name!r}, not {assignment.name!r}"
        return result
    sources, owner = _code_cells(nb)
    seconds, memory = cell_seconds or assignment.cell_seconds, memory_bytes
    budget = budget_seconds or 3 * (len(sources) + len(assignment.tests)) * seconds
    budget_end = time.monotonic() + budget
    lecture = {i: SKIPPED for i, source in enumerate(sources)
               if i not in owner and fingerprint(source) in assignment.skippable}
    support = pool.support(assignment.zip_path)
    sandbox = Sandbox(pool.zygote(Environment(support)), memory)
    grade = (assignment, pool, support, sandbox, sources, owner, seconds, memory, budget_end)
    try:
        result["questions"] = _grade_all(*grade, lecture)
        if lecture and "NameError" in sandbox.errors:  # perhaps a skipped cell's name: run them all
            result["questions"] = _grade_all(*grade, {})
    except WorkerUnavailable as error:  # the grader's fault, not the submission's: no grade at all
        result["questions"], result["error"] = {}, f"not graded: {error}"
    finally:
        sandbox.close()
    return result


def _grade_all(assignment, pool, support, sandbox, sources, owner, seconds, memory, budget_end, skip) -> dict:
    """Run the cells but those in ``skip`` (index: why), then check every question."""
    skip, raised = dict(skip), {}
    sandbox.errors.clear()
    _run_cells(sandbox, sources, skip, seconds, memory, raised, budget_end)
    questions = {}
    for question, source in assignment.tests.items():
        # A ban holds only in a confined worker; unconfined grading (asked for explicitly, and
        # marked in scores.csv) grades the answer as any other.
        forbids = tuple((assignment.rules.get(question) or {}).get("forbids") or ())
        if forbids and pool.isolated:
            questions[question] = _grade_banned(
                question, source, Sandbox(pool.zygote(Environment(support, forbids)), memory),
                sources, owner, seconds, memory, budget_end)
        else:
            questions[question] = _grade_question(
                question, source, sandbox, owner, skip, raised, seconds, memory, budget_end, sources)
    return questions


def _grade_banned(question, source, sandbox, sources, owner, seconds, memory, budget_end) -> dict:
    """Grade a question whose answer may not import some modules, in a worker where they cannot be.

    That worker runs the notebook's first code cell (its imports), one statement at a time so that
    an import of a banned module does not stop the others, then the question's answer cells, and
    nothing else of the notebook.
    """
    cells = [i for i, q in owner.items() if q == question]
    setup = _statements(sources[0]) if sources and 0 not in owner else []
    own_sources = setup + [sources[i] for i in cells]
    own_owner = {len(setup) + j: question for j in range(len(cells))}
    skip, raised = {}, {}
    try:
        _run_cells(sandbox, own_sources, skip, seconds, memory, raised, budget_end)
        return _grade_question(question, source, sandbox, own_owner, skip, raised, seconds, memory, budget_end,
                               own_sources)
    finally:
        sandbox.close()


def _statements(source: str) -> list[str]:
    """The top-level statements of a cell, each as its own source (the whole cell if it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [source]
    lines = source.splitlines(keepends=True)
    starts = [min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) for node in tree.body]
    return ["".join(lines[start - 1:node.end_lineno]) for start, node in zip(starts, tree.body)] or [source]


def _secret(assignment: Assignment) -> Path:
    """The folder of the hidden tests: the unpacked autograder, or the folder of the zip."""
    return assignment.zip_path if assignment.zip_path.is_dir() else assignment.zip_path.parent


def _grade_question(question, source, sandbox, owner, skip, raised, seconds, memory, budget_end, sources):
    from otter.test_files.exception_test import ExceptionTestFile

    tests = ExceptionTestFile.from_string(source, path=f"{question}.py")
    entry = {"score": 0, "possible": tests.possible, "reason": ""}
    cells = [i for i, q in owner.items() if q == question]
    faults = [skip[i] for i in cells if i in skip] + [raised[i] for i in cells if i in raised]
    if faults:  # an answer cell that raised, timed out or died earns nothing, whatever it defined first
        entry["reason"] = faults[0]
        return entry
    if time.monotonic() > budget_end:
        entry["reason"] = "not checked: the submission used up its time"
        return entry
    check = _Check(sandbox, min(time.monotonic() + seconds, budget_end))
    sandbox.allowance = MAX_CHECK_BYTES
    try:
        names = {p for tc in tests.test_cases for p in inspect.signature(tc.body.test_func).parameters}
        environment = {}
        for name in sorted(names - {"env"}):
            found = sandbox.lookup(name, check.remaining())
            if found.fatal:
                raise _Abort(found)
            kind, value = found.value if found.status == "ok" else ("missing", None)
            if kind == "function":
                environment[name] = _Remote(check, name)
            elif kind == "value":
                environment[name] = value
        tests.run(environment)
    except _Abort as abort:
        sandbox.allowance = None
        entry["reason"] = _reason(abort.outcome, seconds, memory, "while checking this question")
        _run_cells(sandbox, sources, skip, seconds, memory, raised, budget_end)  # a fresh worker
        return entry
    finally:
        sandbox.allowance = None
    entry["score"] = tests.score
    if tests.score < tests.possible:
        failed = sum(not r.passed for r in tests.test_case_results)
        why = [f"the answer raised {check.raised[0]} on a test input"] if check.raised else []
        # What a failed public check told the student (it names a known mistake where it can); a
        # hidden test's text is never shown.
        said = [_feedback(r.message) for r in tests.test_case_results if not r.passed and not r.test_case.hidden]
        entry["reason"] = "; ".join([f"failed {failed} of {len(tests.test_cases)} tests", *why[:1],
                                     *[s for s in said if s][:1]])
    return entry


def _feedback(message: str | None, limit: int = 300) -> str:
    """The message of a failed public check's assertion (otter's last line), shortened to ``limit``."""
    last = (message or "").strip().splitlines()[-1:] or [""]
    kind, _, text = last[0].partition(": ")
    text = text.strip() if kind == "AssertionError" else ""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def serve() -> None:
    """Grade one submission after another: a JSON request per line on stdin, a JSON result per line out.

    A request is ``{"autograder": path, "submission": path}`` with the optional keys ``protect``
    (a list of paths), ``isolation``, ``memory_gib``, ``budget_seconds`` and ``cell_seconds`` of the
    command line. ``make grade`` keeps one such process per grading job, so that the checker's
    imports are paid once, and the workers' zygote (:class:`coursekit.grading.sandbox.WorkerPool`) is
    started once: every submission still gets a fresh worker, in a sandbox in which the one before
    left nothing. A request that takes too long is ended by killing this process. Anything the
    tests print goes to stderr.
    """
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    assignments, pools = {}, {}
    try:
        for line in sys.stdin:
            request = json.loads(line)
            path = Path(request["autograder"])
            if path not in assignments:
                assignments[path] = Assignment.load(path)
            protect = tuple(sorted({*request.get("protect", []), str(_secret(assignments[path]))}))
            key = (request.get("isolation", "required"), protect)
            try:
                if key not in pools:
                    pools[key] = WorkerPool(key[0], protect)
                result = grade_submission(assignments[path], request["submission"], pool=pools[key],
                                          memory_bytes=int(request.get("memory_gib", DEFAULT_MEMORY / 2**30) * 2**30),
                                          budget_seconds=request.get("budget_seconds"),
                                          cell_seconds=request.get("cell_seconds"))
            except IsolationUnavailable as error:
                result = {"questions": {}, "error": f"not graded: {error}", "isolated": False}
            out.write(json.dumps(result) + "\n")
            out.flush()
    finally:
        for pool in pools.values():
            pool.close()


def main(argv=None) -> None:
    """The command line: ``python -m coursekit.grading.grader AUTOGRADER SUBMISSION`` (see ``--help``)."""
    if argv is None and sys.argv[1:] == ["--serve"]:
        serve()
        return
    parser = argparse.ArgumentParser(description="Grade one notebook; print the result as JSON "
                                                 "(or, with --serve alone, many: see serve()).")
    parser.add_argument("autograder", type=Path)
    parser.add_argument("submission", type=Path)
    parser.add_argument("--protect", type=Path, action="append", default=[],
                        help="a folder the worker must not see (repeat for several)")
    parser.add_argument("--memory-gib", type=float, default=DEFAULT_MEMORY / 2**30)
    parser.add_argument("--budget-seconds", type=float, default=None)
    parser.add_argument("--cell-seconds", type=float, default=None)
    parser.add_argument("--isolation", choices=("required", "auto", "off"), default="required",
                        help="confine the worker: always (default; stop where impossible), where possible "
                             "(a grading image with a container per submission), or never")
    parser.add_argument("--gradescope", type=Path, default=None,
                        help="also write Gradescope's results.json here (what run_autograder does)")
    args = parser.parse_args(argv)
    try:
        result = grade_submission(Assignment.load(args.autograder), args.submission, isolation=args.isolation,
                                  protect=[args.submission.parent, *args.protect],
                                  memory_bytes=int(args.memory_gib * 2**30), budget_seconds=args.budget_seconds,
                                  cell_seconds=args.cell_seconds)
    except IsolationUnavailable as error:
        raise SystemExit(f"not graded: {error}; or pass --isolation off to grade without it") from None
    if args.gradescope:
        args.gradescope.parent.mkdir(parents=True, exist_ok=True)
        args.gradescope.write_text(json.dumps(gradescope_results(result)))
    json.dump(result, sys.stdout)


def gradescope_results(result: dict) -> dict:
    """A grading result in Gradescope's ``results.json`` format.

    Parameters
    ----------
    result : dict
        What :func:`grade_submission` returned.

    Returns
    -------
    dict
        One test per question (its score, points and the reason points were lost), and the total.
    """
    if result.get("error"):
        return {"score": 0, "output": f"This submission could not be graded: {result['error']}", "tests": []}
    tests = [{"name": q, "score": e["score"], "max_score": e["possible"], "output": e["reason"],
              "visibility": "visible"} for q, e in result["questions"].items()]
    how = ("in a sandbox that showed it only the Python packages and the course's files" if result.get("isolated")
           else "without a sandbox (bubblewrap could not run here): in this container of its own")
    return {"score": sum(t["score"] for t in tests), "output": f"Your notebook ran {how}.", "tests": tests}


if __name__ == "__main__":
    main()
