"""The grades of a graded folder as a gradebook imports them: ``gradebook.csv``, for Canvas and Moodle.

One row per student, one column per assignment holding the total points. The student is named by
where the submission lies: the first folder level under the graded folder
(``submissions/alice/01.01-....ipynb`` is ``alice``), or, for a notebook directly in the folder, its
file name without ``.ipynb``. That name should be the student's login, which both systems can match:

* **Canvas** (Grades, Import) reads the columns of its own export: ``Student``, ``ID``,
  ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment. It needs one of
  ``Student``, ``ID`` or ``SIS User ID`` to find the student, with ``SIS Login ID`` and ``Section``
  present; here ``Student`` and ``SIS Login ID`` hold the name, the other two are empty. A column
  whose header is no assignment of the course becomes a new assignment.
* **Moodle** (Grades, Import, CSV file) maps any one column to a user field: map ``SIS Login ID`` to
  *username*, and each assignment column to a grade item (or a new one); the other columns are
  ignored.

An assignment a student did not hand in, or whose notebook could not be graded (``scores.csv``'s
``error``), is an empty cell, which neither system writes over. A student who handed in one
assignment twice is given the higher total, and :func:`gradebook` says which.

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import PurePosixPath

IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def student(submission: str) -> str:
    """Who handed in a submission: its first folder level, else its file name without ``.ipynb``.

    >>> student("alice/01.01-Bayes-Rule-and-Maximum-Likelihood.ipynb"), student("bob.ipynb")
    ('alice', 'bob')
    """
    parts = PurePosixPath(submission.replace("\\", "/")).parts
    return parts[0] if len(parts) > 1 else PurePosixPath(parts[0]).stem


@dataclass
class Gradebook:
    """Each student's total per assignment, and the students who handed an assignment in twice."""

    assignments: list[str]
    totals: dict[str, dict[str, float]]  # student -> assignment -> total
    repeated: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (student, assignment) -> submissions


def gradebook(rows: list[dict]) -> Gradebook:
    """The gradebook of the rows of ``scores.csv`` (``coursekit.grading.item_analysis.read_scores``).

    Every student who handed anything in has a row, ungraded submissions included (as empty cells).
    """
    assignments = sorted({row["assignment"] for row in rows if row.get("assignment") and not row.get("error")})
    totals: dict[str, dict[str, float]] = {}
    seen: dict[tuple[str, str], list[str]] = {}
    for row in rows:
        name = student(row["submission"])
        marks = totals.setdefault(name, {})
        if row.get("error") or not row.get("assignment"):
            continue
        assignment, total = row["assignment"], float(row.get("total", 0.0))
        seen.setdefault((name, assignment), []).append(row["submission"])
        marks[assignment] = max(marks.get(assignment, total), total)
    repeated = {key: subs for key, subs in seen.items() if len(subs) > 1}
    return Gradebook(assignments, dict(sorted(totals.items())), repeated)


def _text(value: str) -> str:
    """A cell a spreadsheet shows as text: one that starts like a formula gets a leading apostrophe."""
    return "'" + value if value[:1] in ("=", "+", "-", "@", "\t", "\r") else value


def write(book: Gradebook, path) -> None:
    """``gradebook.csv``: the columns Canvas exports and imports (above), one per assignment after them.

    A name that starts like a spreadsheet formula (``=``, ``+``, ``-``, ``@``) is written with a leading
    apostrophe, so that opening the file never runs it.
    """
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(IDENTITY + [_text(a) for a in book.assignments])
        for name, marks in book.totals.items():
            writer.writerow(
                [_text(name), "", "", _text(name), ""]
                + [f"{marks[a]:g}" if a in marks else "" for a in book.assignments]
            )
