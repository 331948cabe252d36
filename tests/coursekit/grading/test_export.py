"""gradebook.csv (coursekit.grading.export): one row per student, one column per assignment, as Canvas
and Moodle import it."""

from __future__ import annotations

import csv

from coursekit.grading import export


def row(submission: str, assignment: str, total: float, error: str = "") -> dict:
    return {"submission": submission, "assignment": assignment, "total": total, "error": error}


def test_a_student_is_the_first_folder_level_or_the_file_name():
    assert export.student("alice/01.01-Bayes.ipynb") == "alice"
    assert export.student("alice/late/01.01-Bayes.ipynb") == "alice"
    assert export.student("bob.ipynb") == "bob"


def test_one_row_per_student_one_column_per_assignment(tmp_path):
    rows = [
        row("alice/a.ipynb", "a", 7),
        row("alice/b.ipynb", "b", 3),
        row("bob/a.ipynb", "a", 5),
        row("bob/again/a.ipynb", "a", 6),
        row("carol/a.ipynb", "", 0, "not a readable notebook"),
        row("dan/b.ipynb", "b", 0, "no autograder b-autograder.zip"),
    ]
    book = export.gradebook(rows)
    assert book.assignments == ["a", "b"]
    assert book.totals == {"alice": {"a": 7, "b": 3}, "bob": {"a": 6}, "carol": {}, "dan": {}}
    assert book.repeated == {("bob", "a"): ["bob/a.ipynb", "bob/again/a.ipynb"]}
    export.write(book, tmp_path / "gradebook.csv")
    with (tmp_path / "gradebook.csv").open() as handle:
        table = list(csv.reader(handle))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "a", "b"]
    assert table[1:] == [
        ["alice", "", "", "alice", "", "7", "3"],
        ["bob", "", "", "bob", "", "6", ""],
        ["carol", "", "", "carol", "", "", ""],
        ["dan", "", "", "dan", "", "", ""],
    ]


def test_a_name_that_starts_like_a_formula_is_written_as_text(tmp_path):
    book = export.gradebook(
        [row("=HYPERLINK(1)/a.ipynb", "a", 2), row("+1/a.ipynb", "a", 1), row("ann/a.ipynb", "a", 3)]
    )
    export.write(book, tmp_path / "gradebook.csv")
    with (tmp_path / "gradebook.csv").open() as handle:
        names = [line[0] for line in list(csv.reader(handle))[1:]]
    assert sorted(names) == ["'+1", "'=HYPERLINK(1)", "ann"]
