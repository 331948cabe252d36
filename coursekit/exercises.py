"""The graded exercises of the course: their kinds, their typical wrong answers, and the prose around them.

Every master notebook is an otter assignment. Each question's raw ``# BEGIN QUESTION`` cell names
its ``kind``:

``implement``
    write a function; hidden tests try it on many random valid inputs;
``derive``
    derive a result the notebook has not given and enter it as code; hidden tests compare it with
    something computed independently inside the test (a numerical optimum, finite differences, a
    brute-force sum, sampling);
``conceptual``
    a choice, a set of true/false statements or a number worked out by hand, entered as a plain value.

``notebooks/wrong-answers/<notebook>.yml`` keeps, for every question, at least one typical wrong
answer: the whole answer cell a student who made that mistake would write; ``feedback``, words that
the question's public check says when an answer behaves like it (the grader's reason must contain
them); ``shortcut``, for an answer that reaches the result without the understanding asked for (a
library call, finite differences, an optimiser, brute force), which must not earn full points;
``correct``, instead of ``mistake``, for a right answer in a form the master does not use (rising
factorials, a ``Piecewise``), which must earn full points::

    q2:
      - mistake: smooths the numerator only
        feedback: "the estimates do not sum to one"
        answer: |
          def add_k_estimate(counts, k):
              ...
      - correct: smooths with a loop over the outcomes
        answer: |
          ...

``check`` grades, through the real autograder (``coursekit.grading.grader`` on the assignment's zip, as ``make
grade`` does), the master's solutions, a blank submission and one submission per wrong answer, and
says whether every solution scores full points, every blank zero and every wrong answer less than
full; then the same submissions as whole notebooks, with the lecture cells marked
``skip-when-grading`` skipped and with every cell run, which must score the same
(:mod:`coursekit.skipping`). Submissions hold only the notebook's first code cell (its imports) and the answer cells, so
that grading takes seconds: hidden tests may use nothing but the answer they check.

Run ``python -m coursekit exercises table`` for the course's questions by kind and prose length,
``python -m coursekit exercises rules`` for the rules of a fair grade that a question breaks, and
``python -m coursekit exercises check notebooks/NAME.ipynb`` after writing or changing a question.
"""

from __future__ import annotations

import argparse
import ast
import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from coursekit.build.personal import NOT_FORM, TEMPLATE, answer_for, declarations, personalise
from coursekit.grading.gradebook import grade
from coursekit.grading.variant import PUBLIC, VariantError
from coursekit.notebooks import master_notebooks
from coursekit.reading import prose_words
from coursekit.repository import MASTERS

KINDS = ("implement", "derive", "conceptual")
WRONG_ANSWERS = MASTERS / "wrong-answers"
MIN_QUESTIONS = 4
MIN_PROSE_WORDS = 3000


@dataclass
class Question:
    name: str
    kind: str | None
    points: float
    solution: str  # the answer cell of the master, without otter's solution markers
    tests: list[str]  # the sources of its test cells
    prompt: str = ""  # the question's markdown cells
    test_points: list[float] = field(default_factory=list)  # one entry per test cell, in order
    forbids: list[str] = field(default_factory=list)  # modules the answer may not import (enforced)
    answer: str | None = None  # "symbolic": a SymPy expression, checked for equivalence
    reaches: dict[str, list[str]] = field(default_factory=dict)  # edges of the stated domain (coursekit.reach)

    @property
    def hidden_tests(self) -> list[str]:
        return [t for t in self.tests if t.lstrip().lower().startswith("# hidden")]

    @property
    def public_tests(self) -> list[str]:
        return [t for t in self.tests if not t.lstrip().lower().startswith("# hidden")]

    @property
    def answer_names(self) -> list[str]:
        """The variables the answer is read from: its test functions' parameters, in order (not their helpers')."""
        names: list[str] = []
        for test in self.tests:
            for node in ast.parse(test).body:
                if isinstance(node, ast.FunctionDef):
                    names += [a.arg for a in node.args.args if a.arg not in names]
        return names


def _raw_block(cell: nbformat.NotebookNode) -> str:
    return cell.source.strip() if cell.cell_type == "raw" else ""


def questions(nb: nbformat.NotebookNode) -> list[Question]:
    """The graded questions of a master notebook, in order."""
    found: list[Question] = []
    current = None
    in_solution = in_tests = False
    for cell in nb.cells:
        block = _raw_block(cell)
        if block.startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(block.split("\n", 1)[1]) or {}
            points = config.get("points", 1)
            total = sum(points) if isinstance(points, list) else points
            current = Question(
                config["name"],
                config.get("kind"),
                float(total),
                "",
                [],
                test_points=[float(p) for p in points] if isinstance(points, list) else [],
                forbids=list(config.get("forbids") or []),
                answer=config.get("answer"),
                reaches=dict(config.get("reaches") or {}),
            )
            found.append(current)
        elif block.startswith("# END QUESTION"):
            current = None
        elif block.startswith("# BEGIN SOLUTION"):
            in_solution = True
        elif block.startswith("# END SOLUTION"):
            in_solution = False
        elif block.startswith("# BEGIN TESTS"):
            in_tests = True
        elif block.startswith("# END TESTS"):
            in_tests = False
        elif current is not None and cell.cell_type == "markdown":
            current.prompt += cell.source + "\n"
        elif current is not None and cell.cell_type == "code":
            if in_solution:
                lines = [
                    line
                    for line in cell.source.splitlines()
                    if line.strip() not in ("# BEGIN SOLUTION", "# BEGIN SOLUTION NO PROMPT", "# END SOLUTION")
                ]
                current.solution = "\n".join(lines)
            elif in_tests:
                current.tests.append(cell.source)
    return found


def wrong_answers(master: Path) -> dict[str, list[dict]]:
    path = WRONG_ANSWERS / f"{master.stem}.yml"
    return (yaml.safe_load(path.read_text()) or {}) if path.exists() else {}


# --------------------------------------------------------------------------- the rules of a fair grade

_SINGLE_CHOICE = re.compile(r"^\s*(q\d+)\s*=\s*(['\"])([a-z])\2\s*(#.*)?$", re.M)
_OPTION = re.compile(
    r"^[ \t]*(?:[-*][ \t]*)?\(([a-z])\)[ \t]*(.+?)(?=^[ \t]*(?:[-*][ \t]*)?\([a-z]\)|^[ \t]*$|\Z)", re.M | re.S
)
# A prompt that forbids a library ("not `lecturekit`", "without scikit-learn", "NumPy only").
_BAN = re.compile(
    r"\bnot\s+(?:call\s+|use\s+|import\s+)?`?(lecturekit|scikit-learn|sklearn|scipy\.stats)|"
    r"\bwithout\s+`?(lecturekit|scikit-learn|sklearn|scipy\.stats)|NumPy only",
    re.I,
)
# What a prompt says when the grader enforces its ban (the words the check looks for).
BAN_NOTICE = "cannot be imported"


def public_points(question: Question) -> float:
    """Points that the question's public checks give: any well-formed answer would earn them."""
    if len(question.test_points) != len(question.tests):
        return question.points  # unspecified: otter spreads the points over every test
    return sum(
        p
        for p, t in zip(question.test_points, question.tests, strict=True)
        if not t.lstrip().lower().startswith("# hidden")
    )


def options(question: Question) -> dict[str, str]:
    """A choice question's options, ``(a) ...`` lines of its prompt, as letter -> text (without not-forms)."""
    return {m.group(1): " ".join(NOT_FORM.sub("", m.group(2)).split()) for m in _OPTION.finditer(question.prompt)}


def not_forms(question: Question) -> dict[str, str]:
    """The not-forms of a choice question's statements (``<!--not: ...-->``), as letter -> text."""
    found = {}
    for m in _OPTION.finditer(question.prompt):
        form = NOT_FORM.search(m.group(2))
        if form:
            found[m.group(1)] = " ".join(form["text"].split())
    return found


def single_answer(question: Question) -> str | None:
    """The right option of a single-answer choice question (``q3 = "b"``), else None."""
    match = _SINGLE_CHOICE.search(question.solution)
    return match.group(3) if match and len(options(question)) >= 3 else None


_CHOICE = re.compile(
    r"^\s*q\d+\s*=\s*(['\"][a-z]['\"]|\{\s*['\"][a-z]['\"].*\}|\((?:\s*(?:True|False)\s*,?)+\))\s*(#.*)?$", re.M
)


def is_choice(question: Question) -> bool:
    """A choice question: one option, a set of options, or a tuple of true/false verdicts."""
    return bool(_CHOICE.search(question.solution))


def visible_length(text: str) -> int:
    """Characters a reader sees once the math is typeset: a TeX command counts as one character, and
    the dollars, braces, sub- and superscript marks count as none."""
    return len(re.sub(r"[${}_^]", "", re.sub(r"\\[A-Za-z]+\s*", "x", text)))


def bans(question: Question) -> list[str]:
    """The libraries a prompt forbids, as written."""
    return sorted(
        {next(g for g in m.groups() if g) if any(m.groups()) else "NumPy only" for m in _BAN.finditer(question.prompt)}
    )


# A public check that compares a number or a formula with a known slip written out in its source
# (`assert not equivalent(q1, N / m, ...)`, `assert q3 != 180`, `abs(q4 - 20 / 24) > 1e-3`) shows
# the slip, from which the right answer often follows; it compares digests instead (coursekit.symbolic.digest).
_SHOWN_SLIP = re.compile(
    r"assert\s+not\s+\(?\s*(?:equivalent|behaves_like|like|near|gives)\("
    r"|assert\s+abs\(\s*(?:float\(\s*)?q\d+\)?\s*-"
    r"|assert\s+(?:float\(\s*|int\(\s*)?q\d+\)?\s*!=\s*[-\d.(]"
)
SYMBOLIC_CHECK = "equivalent("  # what a symbolic derive question's hidden test calls (coursekit.symbolic)


def violations(master: Path) -> list[str]:
    """What a notebook's questions break of the rules of a fair grade (empty: none).

    Every point comes from a hidden check; a derive question takes a symbolic answer checked for equivalence, or
    catalogues the shortcuts its checks defeat; the public check of a number or a formula names
    known slips without showing them (digests); a ban that a prompt states is enforced (``forbids``,
    and the prompt says the module ``cannot be imported``); every catalogued wrong answer that is not a
    shortcut names the feedback its public check gives; a choice question's options shuffle per student
    (``options: shuffle``, :mod:`coursekit.build.personal`) and asks for a set of statements (or a tuple
    of verdicts), each with a not-form (``<!--not: ...-->``): one letter of k options would be shared by
    one student in k.
    """
    found = []
    wrong = wrong_answers(master)
    nb = nbformat.read(master, as_version=4)
    try:
        shuffled = declarations(nb).options
    except VariantError as error:  # e.g. not-forms in a question whose options do not shuffle
        found.append(f"{master.stem[:5]}: {error}")
        shuffled = {}
    for q in questions(nb):
        where = f"{master.stem[:5]} {q.name}"
        if is_choice(q) and q.name not in shuffled:
            found.append(f"{where}: a choice question shuffles its options per student (options: shuffle)")
        if single_answer(q):
            found.append(
                f"{where}: one letter of {len(options(q))} options is shared by one student in {len(options(q))}, "
                f"whatever their order: ask for the set of the right statements, each with a not-form"
            )
        elif is_choice(q) and set(not_forms(q)) != set(options(q)):
            missing = sorted(set(options(q)) - set(not_forms(q)))
            found.append(
                f"{where}: every statement of a true/false question has a not-form, <!--not: ...--> (missing: "
                f"{', '.join(missing)})"
            )
        if len(q.test_points) != len(q.tests):
            found.append(f"{where}: points must list one value per test cell ({len(q.tests)} cells)")
        elif public_points(q):
            found.append(f"{where}: public checks give {public_points(q):g} points; they must give 0")
        entries = wrong.get(q.name, [])
        if q.kind == "derive":
            symbolic = q.answer == "symbolic" and any(SYMBOLIC_CHECK in t for t in q.hidden_tests)
            if not symbolic and not any(e.get("shortcut") for e in entries):
                found.append(
                    f"{where}: a derive question takes a symbolic answer (answer: symbolic, checked with "
                    f"equivalent) or catalogues the shortcuts its checks defeat (shortcut: ...)"
                )
        stated = bans(q)
        if stated and not q.forbids:
            found.append(f"{where}: the prompt forbids {', '.join(stated)} but the question does not (forbids: [...])")
        if q.forbids and BAN_NOTICE not in q.prompt:
            found.append(f"{where}: forbids {q.forbids} but the prompt does not say they {BAN_NOTICE}")
        if (q.answer == "symbolic" or (q.kind == "conceptual" and not is_choice(q))) and any(
            _SHOWN_SLIP.search(t) for t in q.public_tests
        ):
            found.append(
                f"{where}: a public check shows a known slip's value or formula; compare digests "
                f"(coursekit.symbolic.digest) so that reading the check does not give the answer away"
            )
        for entry in entries:  # a choice's feedback would let a student eliminate options: none asked
            if "mistake" in entry and not entry.get("shortcut") and not entry.get("feedback") and not is_choice(q):
                found.append(f"{where}: the wrong answer '{entry['mistake']}' has no feedback")
    return found


# --------------------------------------------------------------------------- grading the variants


def answer_cells(student: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [c for c in student.cells if c.cell_type == "code" and "otter_answer_cell" in c.metadata.get("tags", [])]


def solution_answers(master: Path, seed: int = PUBLIC) -> dict[int, str]:
    """The master's solutions as answer cells of the variant of ``seed`` (by position, 0 for the first
    question), as :func:`grading_copy` and :func:`whole_copy` take them: a solution that reads its numbers
    from ``VARIANT`` gets them (:func:`coursekit.build.personal.answer_for`)."""
    nb = nbformat.read(master, as_version=4)
    return _solutions(questions(nb), declarations(nb).of(seed))


def _solutions(qs: list[Question], variant: dict[str, dict]) -> dict[int, str]:
    return {i: answer_for(q.name, q.solution, variant.get(q.name, {})) for i, q in enumerate(qs)}


def grading_copy(student: nbformat.NotebookNode, answers: dict[int, str]) -> nbformat.NotebookNode:
    """A submission made of the student notebook's otter cell, its imports and its answer cells.

    ``answers`` maps an answer cell's position (0 for the first question) to the source put there;
    the others keep the blank of the student version. Each answer keeps the ``grader.check`` cell
    that follows it, which tells the grader whose answer it is.
    """
    nb = nbformat.v4.new_notebook(metadata=student.metadata)
    code = [c for c in student.cells if c.cell_type == "code"]
    setup = [c for c in code[:2] if "otter_answer_cell" not in c.metadata.get("tags", [])]
    nb.cells = [nbformat.v4.new_code_cell(c.source) for c in setup]
    index = 0
    for position, cell in enumerate(code):
        if "otter_answer_cell" not in cell.metadata.get("tags", []):
            continue
        new = nbformat.v4.new_code_cell(answers.get(index, cell.source))
        new.metadata["tags"] = ["otter_answer_cell"]
        nb.cells.append(new)
        following = code[position + 1] if position + 1 < len(code) else None
        if following is not None and following.source.lstrip().startswith("grader.check("):
            nb.cells.append(nbformat.v4.new_code_cell(following.source))
        index += 1
    return nb


def whole_copy(student: nbformat.NotebookNode, answers: dict[int, str]) -> nbformat.NotebookNode:
    """The whole student notebook, lecture cells and all, with ``answers`` in its answer cells.

    ``answers`` is as for :func:`grading_copy`; a submission as a student who ran the whole
    notebook hands it in.
    """
    nb = copy.deepcopy(student)
    for index, cell in enumerate(answer_cells(nb)):
        cell.source = answers.get(index, cell.source)
    return nb


@dataclass
class Expectation:
    variant: str
    question: str
    wanted: str  # "full", "zero" or "less"
    mistake: str = ""
    feedback: str = ""  # words the grader's reason must contain: the public check naming the mistake


def described(entry: dict) -> str:
    """What a catalogue entry is: its mistake, or the right answer's form (``correct``)."""
    return entry.get("mistake") or entry.get("correct") or ""


def sample(entries: list[dict]) -> list[dict]:
    """A question's first catalogued mistake, its first shortcut and its first right answer in another
    form, in catalogue order.

    What ``make test`` grades of the catalogue: every question's most typical mistake and, where
    it has them, a forbidden or shortcut answer and a right one the master does not write;
    ``exercises check`` grades every entry.
    """
    first_mistake = next((e for e in entries if "correct" not in e and not e.get("shortcut")), None)
    first_shortcut = next((e for e in entries if e.get("shortcut")), None)
    first_correct = next((e for e in entries if "correct" in e), None)
    return [e for e in entries if e is first_mistake or e is first_shortcut or e is first_correct]


def variants(
    master: Path, student: nbformat.NotebookNode, whole: bool = False, sampled: bool = False, seed: int = PUBLIC
) -> tuple[dict[str, nbformat.NotebookNode], list[Expectation]]:
    """Submissions to grade for one notebook, and what each question should score in each.

    Each holds the notebook's imports and answer cells (:func:`grading_copy`) or, with ``whole``,
    the whole notebook (:func:`whole_copy`). The ``k``-th wrong submission gives every question its
    ``k``-th catalogued wrong answer (the solution where it has fewer); with ``sampled``, only the
    entries :func:`sample` picks. ``student`` is the notebook of the variant of ``seed``
    (:mod:`coursekit.build.personal`); the solutions and catalogued answers, written for the master's
    variant, are made answers of that one (:func:`coursekit.build.personal.answer_for`).
    """
    copy_with = whole_copy if whole else grading_copy
    nb = nbformat.read(master, as_version=4)
    qs, variant = questions(nb), declarations(nb).of(seed)
    cells = answer_cells(student)
    if len(cells) != len(qs):
        raise SystemExit(
            f"{master.name}: {len(qs)} questions but {len(cells)} answer cells; "
            "give each question exactly one answer cell"
        )
    wrong = wrong_answers(master)
    if sampled:
        wrong = {name: sample(entries) for name, entries in wrong.items()}
    solutions = _solutions(qs, variant)
    subs = {"solution": copy_with(student, solutions), "blank": copy_with(student, {})}
    expect = [Expectation(v, q.name, w) for v, w in (("solution", "full"), ("blank", "zero")) for q in qs]
    rounds = max((len(wrong.get(q.name, [])) for q in qs), default=0)
    for k in range(rounds):
        answers = dict(solutions)
        for i, q in enumerate(qs):
            entries = wrong.get(q.name, [])
            if k < len(entries):
                answers[i] = answer_for(q.name, entries[k]["answer"], variant.get(q.name, {}))
                wanted = "full" if "correct" in entries[k] else "less"
                expect.append(
                    Expectation(
                        f"wrong-{k + 1}", q.name, wanted, described(entries[k]), entries[k].get("feedback") or ""
                    )
                )
            else:
                expect.append(Expectation(f"wrong-{k + 1}", q.name, "full"))
        subs[f"wrong-{k + 1}"] = copy_with(student, answers)
    return subs, expect


def grade_variants(
    masters: list[Path],
    student_dir: Path,
    autograders: Path,
    folder: Path,
    sampled: bool = False,
    seeds: Sequence[int] = (PUBLIC,),
) -> list[dict]:
    """Grade every variant of every notebook in one batch; one row per (notebook, seed, variant, question).

    With ``sampled``, of the catalogue only what :func:`sample` picks. Each seed's submissions are
    made from that seed's student notebook (the template ``assign`` leaves beside ``student_dir``,
    :mod:`coursekit.build.personal`) and graded on that seed's variant.
    """
    possible, plans, given = {}, {}, {}
    for master in masters:
        declared = declarations(nbformat.read(master, as_version=4))
        template = student_dir.parent / "assign" / master.stem / TEMPLATE
        for seed in seeds if declared else (PUBLIC,):
            if seed == PUBLIC:
                student, stem = nbformat.read(student_dir / master.name, as_version=4), master.stem
            else:
                student = personalise(nbformat.read(template, as_version=4), declared, seed)
                stem = f"{master.stem}-{seed}"
            subs, expect = variants(master, student, sampled=sampled, seed=seed)
            plans[stem] = (master.stem, seed, expect)
            possible[master.stem] = {q.name: q.points for q in questions(nbformat.read(master, as_version=4))}
            for variant, nb in subs.items():
                (folder / stem / variant).mkdir(parents=True, exist_ok=True)
                nbformat.write(nb, folder / stem / variant / master.name)
                given[f"{stem}/{variant}/{master.name}"] = seed
    graded = grade(folder, folder / "scores.csv", autograders, seeds=given)
    by_path = {row["submission"]: row for row in graded}
    rows = []
    for stem, (name, seed, expect) in plans.items():
        for e in expect:
            row = by_path[f"{stem}/{e.variant}/{name}.ipynb"]
            score = float(row.get(e.question, 0) or 0)
            full = possible[name][e.question]
            ok = {"full": abs(score - full) < 1e-9, "zero": score == 0, "less": score < full - 1e-9}[e.wanted]
            error = row.get("error", "")
            reason = row.get(f"{e.question} reason", "")
            if e.variant == "blank" and "in this cell" in reason:  # e.g. `...` then `q5`: a NameError
                error = error or f"the student's blank answer cell itself fails ({reason}); write `{e.question} = ...`"
            if e.feedback and e.feedback not in reason:
                error = error or f"the reason does not name the mistake ({e.feedback!r} not in {reason!r})"
            rows.append(
                {
                    "notebook": name,
                    "seed": seed,
                    "variant": e.variant,
                    "question": e.question,
                    "score": score,
                    "possible": full,
                    "wanted": e.wanted,
                    "ok": ok and not error,
                    "mistake": e.mistake,
                    "feedback": bool(e.feedback),
                    "error": error,
                }
            )
    return rows


# --------------------------------------------------------------------------- command line


def table(masters: list[Path]) -> str:
    """Per notebook: questions by kind, points, points from public checks, derive questions with a
    symbolic answer, enforced bans, catalogued wrong answers (with a named feedback, shortcuts among
    them) and prose words."""
    lines = [
        "| Notebook | Questions | Implement | Derive | Conceptual | Points | Public points "
        "| Symbolic derive | Bans enforced | Wrong answers (feedback, shortcuts) | Prose words |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: |",
    ]
    for master in masters:
        nb = nbformat.read(master, as_version=4)
        qs = questions(nb)
        entries = [e for q in qs for e in wrong_answers(master).get(q.name, [])]
        imp, der, con = (sum(q.kind == k for q in qs) for k in KINDS)
        symbolic = sum(q.kind == "derive" and q.answer == "symbolic" for q in qs)
        feedback = sum(bool(e.get("feedback")) for e in entries)
        shortcuts = sum(bool(e.get("shortcut")) for e in entries)
        lines.append(
            f"| {master.stem[:5]} | {len(qs)} | {imp} | {der} | {con} | {sum(q.points for q in qs):g} "
            f"| {sum(public_points(q) for q in qs):g} | {symbolic}/{der} | {sum(bool(q.forbids) for q in qs)} "
            f"| {len(entries)} ({feedback}, {shortcuts}) | {prose_words(nb):,} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit exercises table`` (``rules``, ``reach`` and ``check`` build on this module, so
    they live in :mod:`coursekit.cli`)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("table", help="questions by kind and prose words, per notebook")
    parser.parse_args(argv)
    print(table(master_notebooks()))
