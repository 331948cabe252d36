"""A submitted notebook as the grader reads it: within bounds, its code cells, and whose answer each is.

A notebook is the student's file, so it is read as untrusted input (:mod:`coursekit.grading.untrusted`):
at most :data:`MAX_BYTES` and :data:`MAX_VALUES` JSON values, its assignment name accepted only when
it is a plain name, and every failure (not UTF-8, not JSON, nested too deep, no cells) an
:class:`Unreadable` error whose message, in plain ASCII, becomes the submission's row. Its first cell
(the imports, which a question with a ban runs statement by statement) is split only up to
:data:`MAX_SPLIT` characters, so parsing it costs the grader a bounded amount.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from coursekit.grading.untrusted import UntrustedInput, load_json

__all__ = ["MAX_BYTES", "MAX_SPLIT", "MAX_VALUES", "Unreadable", "assignment_name", "code_cells", "read", "statements"]

MAX_BYTES = 64 * 2**20  # a notebook with its figures is a few MiB
MAX_VALUES = 1_000_000  # JSON values: a long notebook has some tens of thousands
MAX_SPLIT = 100_000  # characters of the first cell split into statements (a course's imports: a few hundred)
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class Unreadable(ValueError):
    """Not a notebook the grader can read; the message (plain ASCII) says why."""


def read(path) -> dict:
    """The notebook at ``path``, read within bounds.

    Parameters
    ----------
    path : path
        The submitted ``.ipynb``.

    Returns
    -------
    dict
        The notebook, with a list of cells.

    Raises
    ------
    Unreadable
        It cannot be read, is too large, is not JSON or has no list of cells.
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_BYTES:
            raise Unreadable(f"the notebook is larger than {MAX_BYTES // 2**20} MiB: clear its outputs")
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise Unreadable(f"the file cannot be read ({type(error).__name__})") from None
    try:
        nb = load_json(raw, MAX_BYTES, MAX_VALUES, "the notebook")
    except UntrustedInput as error:
        raise Unreadable(str(error)) from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise Unreadable("it has no list of cells")
    return nb


def assignment_name(nb: dict) -> str | None:
    """The assignment a notebook says it belongs to (otter's metadata), or None if it says none.

    Raises
    ------
    Unreadable
        The metadata names an assignment in something other than a plain name (letters, digits,
        ``.``, ``_`` and ``-``), which no assignment has.
    """
    metadata = nb.get("metadata")
    otter = metadata.get("otter") if isinstance(metadata, dict) else None
    name = otter.get("assignment_name") if isinstance(otter, dict) else None
    if name is None or name == "":
        return None
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise Unreadable("its metadata names no assignment of this course (otter.assignment_name)")
    return name


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def code_cells(nb: dict) -> tuple[list[str], dict[int, str]]:
    """The submission's code cells to run, and which of them answers which question.

    An answer cell is one tagged ``otter_answer_cell`` (or, if a student removed the tag, the
    cell just before a ``grader.check``), belonging to the next ``grader.check("qN")``.

    Returns
    -------
    (list of str, dict of int to str)
        The sources, and the question of each answer cell by its index among them.
    """
    sources, checks, tagged = [], {}, set()
    for cell in nb.get("cells", []):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = _source(cell)
        check = re.match(r'\s*grader\.check\(\s*["\'](\w+)["\']\s*\)\s*$', source)
        if check:
            checks[len(sources)] = check.group(1)
            continue
        if source.lstrip().startswith("# Initialize Otter") or re.match(r"\s*grader\.", source):
            continue
        metadata = cell.get("metadata")
        tags = metadata.get("tags") if isinstance(metadata, dict) else None
        if isinstance(tags, list) and "otter_answer_cell" in tags:
            tagged.add(len(sources))
        sources.append(source)
    owner = {}
    for position, question in sorted(checks.items()):
        answers = [i for i in tagged if i < position and i not in owner] or (
            [position - 1] if position - 1 >= 0 and position - 1 not in owner else []
        )
        for i in answers:
            owner[i] = question
    return sources, owner


def statements(source: str) -> list[str]:
    """The top-level statements of a cell, each as its own source.

    The whole cell, as one, where it does not parse or is longer than :data:`MAX_SPLIT`.

    Examples
    --------
    >>> statements("import numpy as np\\nimport lecturekit\\n\\nx = [1,\\n     2]\\n")
    ['import numpy as np\\n', 'import lecturekit\\n', 'x = [1,\\n     2]\\n']
    """
    if len(source) > MAX_SPLIT:
        return [source]
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return [source]
    lines = source.splitlines(keepends=True)
    starts = [min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))]) for node in tree.body]
    parts = ["".join(lines[start - 1 : node.end_lineno]) for start, node in zip(starts, tree.body, strict=True)]
    return parts or [source]
