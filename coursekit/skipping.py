"""Lecture cells that grading may skip: which, and why no score can depend on them.

Most of the time a submission takes to grade is the notebook's own lecture: experiments, figures,
tables (half a minute in 5.3), whose results no answer and no check uses. A master marks such a
code cell with the tag ``skip-when-grading`` (``coursekit.notebooks.SKIP_TAG``); ``make assignments`` puts the
fingerprint of each into the autograder zip (``skippable.json``), and the grader
(``coursekit.grading.grader``) does not run a submission's cell that is exactly one of them.

A mark is a claim that this module checks before any notebook carries it (:func:`problems`, run by
``python -m coursekit exercises rules`` and the tests): no name a marked cell binds is read by

- a code cell that is not marked (which would fail without it),
- any answer a question can get: the solution, the blank, every catalogued wrong answer,
- a test, as one of the answer names it asks the worker for;

and no marked cell changes the process in ways an answer could see (a random seed, the working
folder, a module's attribute, warning filters, a written file). tests/coursekit/test_skipping.py also grades
whole submissions with and without the marked cells and compares the scores.

``python -m coursekit skipping mark notebooks/NAME.ipynb`` tags every lecture cell that can be skipped
under these rules (and takes the tag off any that cannot); ``python -m coursekit skipping check`` lists
the broken claims of every master.
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import symtable
import sys
import zipfile
from pathlib import Path

import nbformat

from coursekit import exercises
from coursekit.grading.gradebook import grade
from coursekit.grading.grader import SKIPPABLE
from coursekit.grading.variant import VARIANT_TAG
from coursekit.notebooks import SKIP_TAG, master_notebooks

COMPREHENSIONS = ("listcomp", "setcomp", "dictcomp", "genexpr")  # scopes that run where they stand
# Calls that change the process for every later cell (unless inside a `with` block, which undoes them).
EFFECTS = {
    "seed",
    "chdir",
    "setattr",
    "delattr",
    "filterwarnings",
    "simplefilter",
    "resetwarnings",
    "seterr",
    "set_printoptions",
    "rc",
    "rcdefaults",
    "use",
    "putenv",
    "savefig",
    "to_csv",
    "write_text",
    "write_bytes",
    "use_course_style",
    "set_config",
}


def bound_names(source: str) -> set[str]:
    """Names a cell binds in the notebook's namespace (assigned, imported, defined, declared global)."""
    found = set()

    def visit(table: symtable.SymbolTable, top: bool) -> None:
        for symbol in table.get_symbols():
            binds = symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()
            if binds and (top or symbol.is_declared_global()):
                found.add(symbol.get_name())
        for child in table.get_children():
            visit(child, False)

    visit(symtable.symtable(source, "<cell>", "exec"), True)
    return found


def read_names(source: str, last: bool = False) -> set[str]:
    """Names a cell reads from the notebook's namespace, at its top level or in its functions.

    A name the cell binds itself at its top level counts as its own (not read), even where it is
    read first, and so in a comprehension run there and then; a function's global reads all count,
    since it runs later, when a later cell may have bound the name again. With ``last`` (an answer
    that no marked cell follows, so none can bind a name again after it) the cell's own names are
    its own in its functions too.
    """
    found = set()
    top_table = symtable.symtable(source, "<cell>", "exec")
    own = {s.get_name() for s in top_table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()}

    def visit(table: symtable.SymbolTable, top: bool, deferred: bool) -> None:
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if not symbol.is_referenced() or (name in own and (last or not deferred)):
                continue
            if top or symbol.is_global():
                found.add(name)
        for child in table.get_children():
            visit(child, False, deferred or child.get_name() not in COMPREHENSIONS)

    visit(top_table, True, False)
    return found


def effects(source: str) -> list[str]:
    """What a cell does to the process beyond binding names (see :data:`EFFECTS`), one line each."""
    tree = ast.parse(source)
    inside_with = {id(n) for w in ast.walk(tree) if isinstance(w, (ast.With, ast.AsyncWith)) for n in ast.walk(w)}
    modules = {
        a.asname or a.name.split(".")[0]
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in n.names
    }
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and id(node) not in inside_with:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in EFFECTS:
                found.append(f"calls {name}()")
            elif name == "open" and any(
                isinstance(a, ast.Constant) and isinstance(a.value, str) and set(a.value) & set("wax+")
                for a in [*node.args[1:], *(k.value for k in node.keywords if k.arg == "mode")]
            ):
                found.append("writes a file")
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            found.append("declares " + ", ".join(node.names) + " global")
        elif isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and (root.id in modules or root.id in ("np", "plt", "mpl", "os", "sys")):
                found.append(f"changes {ast.unparse(node)}")
    return found


def lecture_cells(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The code cells of a master outside its questions, but its first (the imports every answer needs) and
    the questions' variant declarations (which no student notebook holds)."""
    cells, inside = [], False
    for cell in nb.cells:
        block = cell.source.strip() if cell.cell_type == "raw" else ""
        if block.startswith("# BEGIN QUESTION"):
            inside = True
        elif block.startswith("# END QUESTION"):
            inside = False
        elif cell.cell_type == "code" and not inside and VARIANT_TAG not in cell.metadata.get("tags", []):
            cells.append(cell)
    return cells[1:]


def marked(cell: nbformat.NotebookNode) -> bool:
    return SKIP_TAG in cell.metadata.get("tags", [])


def readers(master: Path, nb: nbformat.NotebookNode) -> list[tuple[str, set[str]]]:
    """Whatever may read a name in a graded notebook, as (who, the names it reads).

    The master's unmarked lecture cells; per question, its solution and every catalogued wrong answer
    (the blank reads what the solution reads, less what it leaves out), and the answer names its tests
    ask the worker for.
    """
    found = [
        (f"the unmarked cell {c.source.splitlines()[0][:50]!r}", read_names(c.source))
        for c in lecture_cells(nb)
        if not marked(c)
    ]
    wrong = exercises.wrong_answers(master)
    # Where each question begins, and the last marked cell: an answer after it is the last to bind its names.
    begins = [
        i for i, c in enumerate(nb.cells) if c.cell_type == "raw" and c.source.strip().startswith("# BEGIN QUESTION")
    ]
    last_mark = max((i for i, c in enumerate(nb.cells) if c.cell_type == "code" and marked(c)), default=-1)
    for q, begin in zip(exercises.questions(nb), begins, strict=True):
        last = begin > last_mark
        found.append((f"{q.name}'s solution", read_names(q.solution, last)))
        found += [
            (f"{q.name}'s catalogued answer '{exercises.described(e)}'", read_names(e["answer"], last))
            for e in wrong.get(q.name, [])
        ]
        found.append((f"{q.name}'s tests", set(q.answer_names)))
    return found


def broken(master: Path, nb: nbformat.NotebookNode) -> list[tuple[nbformat.NotebookNode, str]]:
    """Each marked cell that cannot be skipped, with why (one entry per reason)."""
    first = next((c for c in nb.cells if c.cell_type == "code"), None)
    found = (
        [(first, "is the first code cell (the imports every answer needs)")]
        if first is not None and marked(first)
        else []
    )
    skipped = [c for c in lecture_cells(nb) if marked(c)]
    reads = readers(master, nb) if skipped else []
    for cell in skipped:
        binds = bound_names(cell.source)
        found += [
            (cell, f"binds {', '.join(sorted(binds & names))}, which {who} reads")
            for who, names in reads
            if binds & names
        ]
        found += [(cell, effect) for effect in effects(cell.source)]
    return found


def problems(master: Path, nb: nbformat.NotebookNode | None = None) -> list[str]:
    """Why a master's marked cells could not be skipped without changing a score (empty: they can)."""
    nb = nb or nbformat.read(master, as_version=4)
    return [
        f"{master.stem[:5]}: the marked cell {cell.source.splitlines()[0][:50]!r} {why}"
        for cell, why in broken(master, nb)
    ]


def mark(master: Path) -> int:
    """Tag every lecture cell of ``master`` that can be skipped (and untag the others); how many are tagged."""
    nb = nbformat.read(master, as_version=4)
    lecture = lecture_cells(nb)
    for cell in lecture:
        if not marked(cell):
            cell.metadata.setdefault("tags", []).append(SKIP_TAG)
    while culprits := {id(cell): cell for cell, _ in broken(master, nb)}:  # until what stays marked stands alone
        for cell in culprits.values():
            cell.metadata["tags"].remove(SKIP_TAG)
            if not cell.metadata["tags"]:
                del cell.metadata["tags"]
    nbformat.write(nb, master)
    return sum(marked(c) for c in lecture)


def every_cell(autograders: Path, folder: Path) -> Path:
    """Copies of the autograder zips in ``folder`` that list no cell as skippable: every cell runs."""
    folder.mkdir(parents=True, exist_ok=True)
    for zip_path in autograders.glob("*-autograder.zip"):
        with zipfile.ZipFile(zip_path) as original, zipfile.ZipFile(folder / zip_path.name, "w") as copy:
            for item in original.infolist():
                data = json.dumps({"cells": []}) if item.filename == SKIPPABLE else original.read(item)
                copy.writestr(item, data)
    return folder


def differences(
    masters: list[Path], student_dir: Path, autograders: Path, folder: Path, names: tuple[str, ...] | None = None
) -> list[str]:
    """Grade whole submissions with the marked cells skipped and with every cell run; what differs.

    Parameters
    ----------
    masters : list of Path
        The notebooks.
    student_dir, autograders : Path
        Their student versions and autograder zips (``make assignments``).
    folder : Path
        An empty folder for the submissions and the scores.
    names : tuple of str or None
        The variants to grade (``"solution"``, ``"blank"``, ``"wrong-1"``, ...); None: all of them
        (:func:`exercises.variants`).

    Returns
    -------
    list of str
        One line per submission whose scores or reasons differ, or that could not be graded.
    """
    submissions = folder / "submissions"
    for master in masters:
        subs, _ = exercises.variants(master, nbformat.read(student_dir / master.name, as_version=4), whole=True)
        for name, nb in subs.items():
            if names is None or name in names:
                (submissions / master.stem / name).mkdir(parents=True)
                nbformat.write(nb, submissions / master.stem / name / master.name)
    tables = []
    for zips, out in ((autograders, "skipped.csv"), (every_cell(autograders, folder / "every-cell"), "every-cell.csv")):
        grade(submissions, folder / out, zips)
        with (folder / out).open() as handle:
            tables.append(
                {row["submission"]: {k: v for k, v in row.items() if k != "seconds"} for row in csv.DictReader(handle)}
            )
    skipped, everything = tables
    found = [f"{name}: could not be graded: {row['error']}" for name, row in skipped.items() if row["error"]]
    for name, row in skipped.items():
        changed = [k for k in row if row[k] != everything[name].get(k)]
        if changed:
            found.append(
                f"{name}: "
                + "; ".join(f"{k} {everything[name].get(k)!r} with every cell, {row[k]!r} skipped" for k in changed)
            )
    return found


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit skipping check|mark``."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="the broken claims of every master's marked cells")
    mark_parser = commands.add_parser("mark", help="tag the lecture cells of masters that grading can skip")
    mark_parser.add_argument("notebooks", type=Path, nargs="+")
    args = parser.parse_args(argv)
    if args.command == "mark":
        for path in args.notebooks:
            print(f"{path.name}: {mark(path.resolve())} lecture cells marked {SKIP_TAG}")
        return
    found = [p for master in master_notebooks() for p in problems(master)]
    print("\n".join(found) or "every marked cell can be skipped")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
