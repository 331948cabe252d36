"""The master notebooks: which they are, their markup, and their hygiene (``python -m coursekit clean``).

The master notebooks in ``notebooks/`` hold the lecture, the solutions and the tests in
otter-grader's markup; an assignment opens with a raw ``# ASSIGNMENT CONFIG`` cell. ``clean``
strips execution metadata and volatile fields from notebooks: run it after re-executing a master,
before committing.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import nbformat
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

from coursekit.repository import MASTERS, ROOT, log

ASSIGNMENT_MARKER = "# ASSIGNMENT CONFIG"
# A master's lecture cell whose results no answer or check uses carries this tag; the grader may then
# skip it (coursekit.skipping checks the claim; its tests grade with and without such cells).
SKIP_TAG = "skip-when-grading"


def master_notebooks() -> list[Path]:
    return sorted(p for p in MASTERS.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def is_assignment(nb: nbformat.NotebookNode) -> bool:
    return (
        bool(nb.cells) and nb.cells[0].cell_type == "raw" and nb.cells[0].source.lstrip().startswith(ASSIGNMENT_MARKER)
    )


VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TQDM_LINE = re.compile(r"\|\s*\d+/\d+ \[\d+:\d+")  # "| 3/192 [00:01<00:30, ..."


def is_progress_bar(output: nbformat.NotebookNode) -> bool:
    """A tqdm bar: a widget (in Jupyter) or its text fallback on stderr (without ipywidgets)."""
    if WIDGET_VIEW in output.get("data", {}):
        return True
    return (
        output.get("output_type") == "stream"
        and output.get("name") == "stderr"
        and bool(TQDM_LINE.search(output.get("text", "")))
    )


def clean_notebook(nb: nbformat.NotebookNode, *, clear_outputs: bool = False) -> nbformat.NotebookNode:
    """Remove execution timings, widget state and other per-run metadata; optionally outputs."""
    for cell in nb.cells:
        for key in VOLATILE_CELL_METADATA:
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            if clear_outputs:
                cell.outputs = []
                cell.execution_count = None
            # A progress bar (a tqdm widget) says how long a loop took on one run: not for the
            # website or the repository. Cells that show one carry the nbval-ignore-output tag.
            cell.outputs = [output for output in cell.get("outputs", []) if not is_progress_bar(output)]
            CoalesceStreamsPreprocessor().preprocess_cell(cell, {}, 0)  # how streams were flushed is not content
            for output in cell.outputs:
                output.get("metadata", {}).pop("execution", None)
    nb.metadata.pop("widgets", None)
    nb.metadata["kernelspec"] = {
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
        "name": "python3",
    }
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def clean(paths: list[Path]) -> None:
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        nbformat.write(clean_notebook(nb), path)
        log(f"cleaned {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit clean [NOTEBOOK ...]``: every master by default."""
    parser = argparse.ArgumentParser(prog=prog, description="strip volatile metadata from notebooks")
    parser.add_argument("paths", type=Path, nargs="*", help="default: every master notebook")
    args = parser.parse_args(argv)
    clean(args.paths or master_notebooks())
