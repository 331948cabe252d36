"""Grading one submission with the student's code kept out of the checking process.

otter-grader runs a student's notebook and then its tests *in the same Python*, so a cell that
says ``np.isclose = lambda *a, **k: True`` passes every test after it, and a cell that disarms
the time limit or kills its kernel costs the whole submission. This grader keeps otter's
assignment format (the autograder zip that ``otter assign`` writes, whose ``tests/qN.py`` files
hold the public and hidden test functions) and changes where things run:

1. The submitted notebook is read as untrusted input, within bounds
   (:mod:`coursekit.grading.submission`): a file that is not one the grader can read is that
   submission's row ("not a readable notebook (...)"), never the batch's end.
2. The submission's code cells run in a worker (:class:`coursekit.grading.sandbox.Sandbox`), one cell
   at a time, each with a limit on its CPU time (the assignment's ``CellTimeLimit`` seconds; a busy
   grading machine costs no points) and a wall-clock backstop, both kept from outside. The worker is confined in a
   sandbox that shows it only the Python packages and the course's support files
   (:mod:`coursekit.grading.isolation`), under a system-call filter (:mod:`coursekit.grading.syscalls`),
   bounded as a whole in memory, processes and CPU (:mod:`coursekit.grading.limits`). A cell that
   times out, kills the worker or breaks its channel is marked; the worker is restarted and the
   other cells are run again without it, so the fault costs only that cell's question.
3. Each question's tests run in a process forked from this one, which the student's code never ran
   in, with its own NumPy, SciPy and ``math`` (:mod:`coursekit.grading.checking`). A test's argument
   that names a function becomes a proxy: calling it sends the arguments to the worker as plain
   data and brings back the answer as plain data (:mod:`coursekit.grading.plain_data`); a name bound
   to a value is fetched the same way. The references a test computes, and the comparisons, are
   never within the student's reach.
4. Each question's check has the same CPU time limit (the answers' and its own) and backstop, kept
   by killing its process, and a memory bound; a check that times out, runs out of memory or kills
   the worker scores 0 with that reason, and the worker is restarted for the next question.
5. Lecture cells that no answer or check uses are not run, where the master marks them so (the
   ``skip-when-grading`` tag; the autograder zip's ``skippable.json`` holds a fingerprint of each,
   :func:`fingerprint`). Only a cell that is exactly as the student notebook had it is skipped: an
   edited one runs, as any cell does. Should anything raise ``NameError`` (an answer that uses a
   lecture cell's variable), the submission is graded again with every cell run, so that a score
   never depends on what was skipped.

The result says, per question, the score and, where points were lost, why ("timed out after
20 s of CPU time in this cell", "the process died in this cell", "used more than 2 GiB", "raised
ZeroDivisionError", "failed 2 of 3 tests"), in the grader's words: an exception's name only when it is a short
identifier (:mod:`coursekit.grading.untrusted`); never the student's output, a hidden test's text, or
anything of the machine it ran on.

Run ``python -m coursekit.grading.grader AUTOGRADER.zip SUBMISSION.ipynb`` for one submission (JSON on
stdout); ``make grade`` (``python -m coursekit grade``) grades a folder. See the instructor guide.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import time
import traceback
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from coursekit.grading import checking, submission
from coursekit.grading.gradescope import gradescope_results, gradescope_seed
from coursekit.grading.isolation import Environment
from coursekit.grading.sandbox import (
    MAX_CHECK_BYTES,
    MAX_ITEMS,
    MAX_MESSAGE,
    Outcome,
    Sandbox,
)
from coursekit.grading.untrusted import identifier, plain
from coursekit.grading.variant import PUBLIC, Variants
from coursekit.grading.zygote import IsolationUnavailable, WorkerPool, WorkerUnavailable

__all__ = ["Assignment", "grade_submission"]

DEFAULT_CELL_SECONDS = 20.0
DEFAULT_MEMORY = 2 * 2**30
# Imported here, before any student code runs anywhere, so that the tests' own imports are
# already loaded from an untouched disk.
_PRELOAD = (
    "numpy",
    "scipy",
    "scipy.optimize",
    "scipy.stats",
    "scipy.special",
    "scipy.sparse",
    "scipy.integrate",
    "scipy.linalg",
    "fractions",
    "math",
    "itertools",
)
# In an autograder zip: the fingerprints of the lecture cells that grading may skip.
SKIPPABLE = "skippable.json"
VARIANTS = "variants.json"  # the questions' variant declarations (coursekit.grading.variant)
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
    variants: Variants = field(default_factory=Variants)  # the questions whose numbers or options vary
    _test_files: dict = field(default_factory=dict, repr=False, compare=False)

    def test_file(self, question: str):
        """The question's tests as otter's test file object (parsed once)."""
        if question not in self._test_files:
            from otter.test_files.exception_test import ExceptionTestFile

            self._test_files[question] = ExceptionTestFile.from_string(self.tests[question], path=f"{question}.py")
        return self._test_files[question]

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
            declared = member(VARIANTS, {})
        else:
            with zipfile.ZipFile(zip_path) as archive:

                def member(name, default):
                    return json.loads(archive.read(name)) if name in archive.namelist() else default

                config = json.loads(archive.read("otter_config.json"))
                tests = {
                    Path(n).stem: archive.read(n).decode()
                    for n in archive.namelist()
                    if n.startswith("tests/") and n.endswith(".py")
                }
                rules, skippable = member("questions.json", {}), member(SKIPPABLE, {})
                declared = member(VARIANTS, {})
        seconds = DEFAULT_CELL_SECONDS
        for plugin in config.get("plugins", []):
            if isinstance(plugin, dict) and "coursekit.grading.time_limit.CellTimeLimit" in plugin:
                seconds = float((plugin["coursekit.grading.time_limit.CellTimeLimit"] or {}).get("seconds", seconds))
        order = sorted(tests, key=lambda q: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", q)])
        return cls(
            config.get("assignment_name", zip_path.stem.removesuffix("-autograder")),
            {q: tests[q] for q in order},
            seconds,
            zip_path,
            rules,
            frozenset(skippable.get("cells", ())),
            Variants.from_json(json.dumps(declared)),
        )


def _reason(outcome: Outcome, seconds: float, memory: int, where: str) -> str:
    if outcome.status == "timeout":  # the limit reached, in the sandbox's own words ("20 s of CPU time")
        return f"timed out after {plain(outcome.detail, 60) or f'{seconds:g} s'} {where}"
    if outcome.status == "memory":
        return f"used more than {memory / 2**30:g} GiB {where}"
    if outcome.status == "died":
        return f"the process died {where}"
    if outcome.status == "flood":
        return (
            f"sent the grader more than it reads ({MAX_MESSAGE // 2**20} MiB or {MAX_ITEMS:,} values "
            f"in one answer, {MAX_CHECK_BYTES // 2**20} MiB in one question's check) {where}"
        )
    if outcome.status == "check-memory":
        return f"the check ran out of memory on this answer ({checking.CHECK_MEMORY // 2**30} GiB)"
    if outcome.status == "check-died":
        return "the check could not run on this answer"
    return f"raised {identifier(outcome.detail)} {where}"


def _run_cells(
    sandbox: Sandbox,
    sources: list[str],
    skip: dict[int, str],
    seconds: float,
    memory: int,
    raised: dict[int, str],
    budget_end: float,
) -> None:
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


def grade_submission(
    assignment: Assignment,
    notebook_path,
    *,
    pool: WorkerPool | None = None,
    isolation: str = "required",
    protect=(),
    memory_bytes: int = DEFAULT_MEMORY,
    budget_seconds: float | None = None,
    cell_seconds: float | None = None,
    seed: int = PUBLIC,
) -> dict:
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
        Confine the worker (:mod:`coursekit.grading.isolation`); see :class:`coursekit.grading.zygote.WorkerPool`.
    protect : list of path
        Folders the worker must not see (the submissions, the autograder zips, the repository).
    memory_bytes : int
        The worker's memory limit.
    budget_seconds : float or None
        Time for the whole submission, cells and checks; default 3 × (cells + questions) × limit.
    cell_seconds : float or None
        CPU time limit of each cell and each question's check (each also has a wall-clock backstop,
        :func:`coursekit.grading.sandbox.backstop`); default: the assignment's.
    seed : int
        The seed of the variant to grade against (:mod:`coursekit.grading.variant`): the owner's,
        never what the notebook says; 0, the public variant, where the course has no roster.

    Returns
    -------
    dict
        ``{"questions": {q: {"score", "possible", "reason"}}, "error": str, "isolated": bool,
        "confinement": str, "memory": {"grader": bytes, "sandbox": bytes}}``: ``error`` (plain ASCII)
        where the submission could not be graded; ``memory``, the peaks of this grading process and
        of its sandboxes so far (0 where they are not bounded as a whole).
    """
    if pool is None:
        with WorkerPool(isolation, [*protect, _secret(assignment)], memory_bytes) as own:
            return grade_submission(
                assignment,
                notebook_path,
                pool=own,
                memory_bytes=memory_bytes,
                budget_seconds=budget_seconds,
                cell_seconds=cell_seconds,
                seed=seed,
            )
    for module in _PRELOAD:
        __import__(module)
    result = {"questions": {}, "error": "", "isolated": pool.isolated, "confinement": pool.confinement}
    try:
        nb = submission.read(notebook_path)
        name = submission.assignment_name(nb)
    except submission.Unreadable as error:
        result["error"] = f"not a readable notebook ({error})"
        return result
    if name and name != assignment.name:
        result["error"] = f"this notebook is for assignment {name!r}, not {assignment.name!r}"
        return result
    sources, owner = submission.code_cells(nb)
    del nb
    seconds, memory = cell_seconds or assignment.cell_seconds, memory_bytes
    budget = budget_seconds or 3 * (len(sources) + len(assignment.tests)) * seconds
    budget_end = time.monotonic() + budget
    lecture = {
        i: SKIPPED for i, source in enumerate(sources) if i not in owner and fingerprint(source) in assignment.skippable
    }
    support = pool.support(assignment.zip_path)
    sandbox = Sandbox(pool.zygote(Environment(support)), memory)
    variant = assignment.variants.of(seed)
    grade = (assignment, pool, support, sandbox, sources, owner, seconds, memory, budget_end)
    try:
        result["questions"] = _grade_all(*grade, lecture, variant)
        if lecture and "NameError" in sandbox.errors:  # perhaps a skipped cell's name: run them all
            result["questions"] = _grade_all(*grade, {}, variant)
    except WorkerUnavailable as error:  # the grader's fault, not the submission's: no grade at all
        print(f"not graded: {error}", file=sys.stderr)
        result["questions"], result["error"] = {}, f"not graded: {error.reason}"
    finally:
        sandbox.close()
        result["memory"] = {"grader": _peak_resident(), "sandbox": pool.sandbox_peak()}
    return result


def _peak_resident() -> int:
    """The most memory this process has held (its peak resident set, VmHWM), in bytes."""
    with open("/proc/self/status") as status:
        return next((int(line.split()[1]) * 1024 for line in status if line.startswith("VmHWM:")), 0)


def _grade_all(assignment, pool, support, sandbox, sources, owner, seconds, memory, budget_end, skip, variant) -> dict:
    """Run the cells but those in ``skip`` (index: why), then check every question on its ``variant``."""
    skip, raised = dict(skip), {}
    sandbox.errors.clear()
    _run_cells(sandbox, sources, skip, seconds, memory, raised, budget_end)
    questions = {}
    first = submission.statements(sources[0]) if sources and 0 not in owner else []
    for question in assignment.tests:
        # A ban holds only in a confined worker; unconfined grading (asked for explicitly, and
        # marked in scores.csv) grades the answer as any other.
        forbids = tuple((assignment.rules.get(question) or {}).get("forbids") or ())
        if forbids and pool.isolated:
            questions[question] = _grade_banned(
                assignment,
                question,
                Sandbox(pool.zygote(Environment(support, forbids)), memory),
                first,
                sources,
                owner,
                seconds,
                memory,
                budget_end,
                variant.get(question),
            )
        else:
            questions[question] = _grade_question(
                assignment,
                question,
                sandbox,
                owner,
                skip,
                raised,
                seconds,
                memory,
                budget_end,
                sources,
                variant.get(question),
            )
    return questions


def _grade_banned(assignment, question, sandbox, first, sources, owner, seconds, memory, budget_end, variant) -> dict:
    """Grade a question whose answer may not import some modules, in a worker where they cannot be.

    That worker runs the notebook's first code cell (its imports, ``first``: one statement at a time
    so that an import of a banned module does not stop the others), then the question's answer
    cells, and nothing else of the notebook.
    """
    cells = [i for i, q in owner.items() if q == question]
    own_sources = first + [sources[i] for i in cells]
    own_owner = {len(first) + j: question for j in range(len(cells))}
    skip, raised = {}, {}
    try:
        _run_cells(sandbox, own_sources, skip, seconds, memory, raised, budget_end)
        return _grade_question(
            assignment, question, sandbox, own_owner, skip, raised, seconds, memory, budget_end, own_sources, variant
        )
    finally:
        sandbox.close()


def _secret(assignment: Assignment) -> Path:
    """The folder of the hidden tests: the unpacked autograder, or the folder of the zip."""
    return assignment.zip_path if assignment.zip_path.is_dir() else assignment.zip_path.parent


def _grade_question(
    assignment, question, sandbox, owner, skip, raised, seconds, memory, budget_end, sources, variant=None
):
    tests = assignment.test_file(question)
    entry = {"score": 0, "possible": tests.possible, "reason": ""}
    cells = [i for i, q in owner.items() if q == question]
    faults = [skip[i] for i in cells if i in skip] + [raised[i] for i in cells if i in raised]
    if faults:  # an answer cell that raised, timed out or died earns nothing, whatever it defined first
        entry["reason"] = faults[0]
        return entry
    if time.monotonic() > budget_end:
        entry["reason"] = "not checked: the submission used up its time"
        return entry
    verdict = checking.run(tests, sandbox, seconds, budget_end, variant)
    if verdict.abort:
        entry["reason"] = _reason(
            Outcome(verdict.abort, verdict.limit), seconds, memory, "while checking this question"
        )
        _run_cells(sandbox, sources, skip, seconds, memory, raised, budget_end)  # a fresh worker
        return entry
    entry["score"] = min(max(verdict.score, 0), tests.possible)
    if verdict.score < tests.possible:
        why = [f"the answer raised {identifier(verdict.raised)} on a test input"] if verdict.raised else []
        # What a failed public check told the student (it names a known mistake where it can); a
        # hidden test's text is never shown.
        entry["reason"] = "; ".join(
            [f"failed {verdict.failed} of {verdict.tests} tests", *why, *([verdict.said] if verdict.said else [])]
        )
    return entry


def serve() -> None:
    """Grade one submission after another: a JSON request per line on stdin, a JSON result per line out.

    A request is ``{"autograder": path, "submission": path}`` with the optional keys ``protect``
    (a list of paths), ``isolation``, ``memory_gib``, ``budget_seconds``, ``cell_seconds`` and ``seed``
    of the command line, and ``bounded`` (False: grade where the sandboxes cannot be bounded as a whole).
    ``make grade`` keeps one such process per grading job, so that the checker's
    imports are paid once, and the workers' zygote (:class:`coursekit.grading.zygote.WorkerPool`) is
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
            memory = int(request.get("memory_gib", DEFAULT_MEMORY / 2**30) * 2**30)
            key = (request.get("isolation", "required"), protect, memory, request.get("bounded", True))
            try:
                if key not in pools:
                    pools[key] = WorkerPool(key[0], protect, memory, key[3])
                result = grade_submission(
                    assignments[path],
                    request["submission"],
                    pool=pools[key],
                    memory_bytes=memory,
                    budget_seconds=request.get("budget_seconds"),
                    cell_seconds=request.get("cell_seconds"),
                    seed=int(request.get("seed") or PUBLIC),
                )
            except IsolationUnavailable as error:
                print(f"not graded: {error}", file=sys.stderr)
                result = {"questions": {}, "error": f"not graded: {plain(error)}", "isolated": False}
            except Exception as error:  # noqa: BLE001 - one submission's failure is its row, never the batch's end
                traceback.print_exc()
                result = {
                    "questions": {},
                    "error": f"not graded: the grader failed on this submission ({identifier(type(error).__name__)})",
                    "isolated": False,
                }
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
    parser = argparse.ArgumentParser(
        description="Grade one notebook; print the result as JSON (or, with --serve alone, many: see serve())."
    )
    parser.add_argument("autograder", type=Path)
    parser.add_argument("submission", type=Path)
    parser.add_argument(
        "--protect",
        type=Path,
        action="append",
        default=[],
        help="a folder the worker must not see (repeat for several)",
    )
    parser.add_argument("--memory-gib", type=float, default=DEFAULT_MEMORY / 2**30)
    parser.add_argument("--budget-seconds", type=float, default=None)
    parser.add_argument("--cell-seconds", type=float, default=None)
    parser.add_argument(
        "--isolation",
        choices=("required", "auto", "off"),
        default="required",
        help="confine the worker: always (default; stop where impossible), where possible "
        "(a grading image with a container per submission), or never",
    )
    parser.add_argument(
        "--gradescope",
        type=Path,
        default=None,
        help="also write Gradescope's results.json here (what run_autograder does)",
    )
    parser.add_argument("--seed", type=int, default=PUBLIC, help="the seed of the owner's variant (default 0)")
    parser.add_argument(
        "--student-metadata",
        type=Path,
        default=None,
        help="Gradescope's submission_metadata.json: the owner is its first user's sid (with --variant-secret)",
    )
    parser.add_argument(
        "--variant-secret", type=Path, default=None, help="the course secret: grade the owner's own variant"
    )
    args = parser.parse_args(argv)
    seed = args.seed
    if args.variant_secret is not None and args.variant_secret.exists() and args.student_metadata is not None:
        seed = gradescope_seed(args.student_metadata, args.variant_secret, Assignment.load(args.autograder).name)
    try:
        result = grade_submission(
            Assignment.load(args.autograder),
            args.submission,
            isolation=args.isolation,
            protect=[args.submission.parent, *args.protect],
            memory_bytes=int(args.memory_gib * 2**30),
            budget_seconds=args.budget_seconds,
            cell_seconds=args.cell_seconds,
            seed=seed,
        )
    except IsolationUnavailable as error:
        if args.gradescope:  # the course's staff see why in Gradescope, and fix the image
            args.gradescope.parent.mkdir(parents=True, exist_ok=True)
            args.gradescope.write_text(
                json.dumps(
                    gradescope_results(
                        {
                            "error": "the grading image cannot keep your code apart from the tests; the course's staff "
                            "have been told",
                            "confinement": plain(str(error)),
                        }
                    )
                )
            )
        raise SystemExit(f"not graded: {error}; or pass --isolation off to grade without it") from None
    if args.gradescope:
        args.gradescope.parent.mkdir(parents=True, exist_ok=True)
        args.gradescope.write_text(json.dumps(gradescope_results(result)))
    json.dump(result, sys.stdout)


if __name__ == "__main__":
    main()
