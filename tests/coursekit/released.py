"""What the pipeline tests share: a master's secrets, a file as a person reads it, answers to fill in.

The tests of :mod:`coursekit.build` (assign, book, release) and of :mod:`coursekit.grading.gradebook`
look at the course released once per session (tests/conftest.py's ``release`` and ``built_book``).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat

from conftest import assignment_masters

MASTERS = assignment_masters()
BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"
STUDENT_REPOSITORY_URL = "https://github.com/example-university/generative-learning-student"


def solution_lines(master: Path) -> set[str]:
    """Distinctive lines of solution code and of hidden tests in a master notebook."""
    nb = nbformat.read(master, as_version=4)
    secret: set[str] = set()
    public: list[str] = []
    in_tests = in_solution_block = False
    for cell in nb.cells:
        text = cell.source.strip()
        if cell.cell_type == "raw":
            in_tests = text.startswith("# BEGIN TESTS") or (in_tests and not text.startswith("# END TESTS"))
            in_solution_block = text.startswith("# BEGIN SOLUTION") or (
                in_solution_block and not text.startswith("# END SOLUTION")
            )
            continue
        lines = cell.source.splitlines()
        if cell.cell_type == "code" and in_tests:
            if lines and "hidden" in lines[0].lower():
                secret.update(lines[1:])
            else:  # a public test: students see it, so its lines are not secrets
                public.extend(lines)
        elif cell.cell_type == "code" and in_solution_block:
            inside = False
            for line in lines:
                if "# END SOLUTION" in line:
                    inside = False
                (secret.add if inside else public.append)(line)
                if "# BEGIN SOLUTION" in line:
                    inside = True
        else:
            public.extend(lines)
    # Keep lines long enough to be distinctive and that the lecture itself does not also contain.
    shown = "\n".join(public)
    return {line.strip() for line in secret if len(line.strip()) >= 20 and line.strip() not in shown}


MARKERS = ["# BEGIN SOLUTION", "# END SOLUTION", "# BEGIN TESTS", "# HIDDEN", "BEGIN QUESTION", "ASSIGNMENT CONFIG"]


def readable_text(path: Path) -> str:
    """A file's text as a person would read it: notebook sources, or HTML with entities undone."""
    if path.suffix == ".ipynb":  # notebook JSON escapes quotes and newlines
        nb = nbformat.read(path, as_version=4)
        return "\n".join(c.source for c in nb.cells) + "\n" + str(nb.metadata)
    text = path.read_text(errors="replace")
    return (
        text.replace("&quot;", '"')
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
    )


def answer_cells(nb: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    """Answer cells by the function they define, or the question whose names they assign (``q5 = ...``,
    ``q4_estimate = ...``)."""
    cells = {}
    for cell in nb.cells:
        match = re.match(r"def (\w+)\(", cell.source) or re.search(r"^(q\d+)\w* = ", cell.source, re.M)
        if cell.cell_type == "code" and match and "otter_answer_cell" in cell.metadata.get("tags", []):
            cells[match.group(1)] = cell
    return cells


def submission(release: Path, answers: dict[str, str]) -> nbformat.NotebookNode:
    nb = nbformat.read(release / "student" / f"{BAYES}.ipynb", as_version=4)
    cells = answer_cells(nb)
    assert set(answers) <= set(cells), f"unknown answer cells {set(answers) - set(cells)}"
    for name, source in answers.items():
        cells[name].source = source
    return nb


CORRECT = {
    "positive_predictive_value": (
        "def positive_predictive_value(prevalence, sensitivity, specificity):\n"
        "    joint = sensitivity * prevalence\n"
        "    return joint / (joint + (1 - specificity) * (1 - prevalence))\n"
    ),
    "add_k_estimate": (
        "def add_k_estimate(counts, k):\n"
        "    counts = np.asarray(counts, dtype=float)\n"
        "    return (counts + k) / (counts.sum() + k * len(counts))\n"
    ),
    "classify": (
        "def classify(prior, likelihood, x):\n"
        "    return np.argmax(np.asarray(prior)[:, None] * np.asarray(likelihood)[:, x], axis=0)\n"
    ),
    "q4": (  # the same formulas, written another way
        "import sympy\n"
        "theta, m, N = sympy.symbols('theta m N')\n"
        "q4_log_likelihood = sympy.log(theta**m * (1 - theta)**(N - m))\n"
        "q4_estimate = 1 / (1 + (N - m) / m)\n"
    ),
    "q5": "q5 = 0.0009 / (0.0009 + 0.047025)\n",
    "q6": 'q6 = {"f", "d", "b", "g"}\n',
}


def check_outputs(nb: nbformat.NotebookNode) -> dict[str, str]:
    """The text each ``grader.check("qN")`` cell printed, by question."""
    found = {}
    for cell in nb.cells:
        match = re.match(r'grader\.check\("(\w+)"\)', cell.source.strip()) if cell.cell_type == "code" else None
        if match:
            texts = []
            for output in cell.outputs:
                texts.append(output.get("text", ""))
                texts.extend(str(v) for v in output.get("data", {}).values())
            found[match.group(1)] = "\n".join(texts)
    return found
