"""Assigning (``make assignments``, :mod:`coursekit.build.assign`): student notebooks that hold no
solution and no hidden test, and autograder zips a grading image can use as they are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
import pytest

from coursekit.build.assign import (
    GRADER_SOURCE,
    TIME_LIMITS_ID,
    course_python,
    grader_files,
    pinned_requirements,
    time_limits_statement,
    use_honest_check,
)
from coursekit.check import NO_PROBLEM
from coursekit.grading.grader import Assignment
from coursekit.repository import ROOT
from released import BAYES, CORRECT, MARKERS, MASTERS, check_outputs, readable_text, solution_lines, submission

pytestmark = pytest.mark.slow


def test_there_is_something_to_leak():
    """Guard against a vacuous no-leak test: every assignment has solutions and hidden tests."""
    assert MASTERS, "no assignment notebooks found"
    for master in MASTERS:
        lines = solution_lines(master)
        assert len(lines) >= 5, f"{master.name}: too few distinctive solution lines to check ({lines})"
        assert any("def test_" in line for line in lines), f"{master.name}: no hidden test found"


def student_facing_files(release: Path, built_book: Path) -> list[Path]:
    files = sorted((release / "student").rglob("*.ipynb"))
    files += sorted(p for p in (built_book / "html").rglob("*") if p.suffix in {".html", ".ipynb", ".txt", ".js"})
    files += sorted((built_book / "source").rglob("*.ipynb"))
    return files


def test_no_solution_or_hidden_test_reaches_students_or_the_website(release, built_book):
    files = student_facing_files(release, built_book)
    assert any(p.suffix == ".html" for p in files) and any(p.suffix == ".ipynb" for p in files)
    leaks = []
    texts = {path: readable_text(path) for path in files}
    for path, text in texts.items():  # otter's markup must not survive anywhere
        leaks += [f"{path}: {marker!r}" for marker in MARKERS if marker in text]
    for master in MASTERS:
        # A master's solutions and hidden tests must not reach any file made from it. (Another
        # notebook's lecture code may legitimately contain a line such as `A = rng.standard_normal(...)`.)
        own = [path for path in files if master.stem in path.name]
        assert len(own) >= 3, f"expected student, page and download files for {master.stem}: {own}"
        for path in own:
            leaks += [f"{path}: {secret!r}" for secret in solution_lines(master) if secret in texts[path]]
    assert not leaks, "solutions or hidden tests reached a student-facing file:\n" + "\n".join(leaks[:20])


def test_the_otter_initialisation_cell_makes_the_courses_notebook():
    otter_cell = '# Initialize Otter\nimport otter\ngrader = otter.Notebook("04.02-MAP-Estimation.ipynb")'
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# MAP"),
            nbformat.v4.new_code_cell(otter_cell),
            nbformat.v4.new_code_cell('grader.check("q1")'),
        ]
    )
    use_honest_check(nb)
    assert nb.cells[1].source == (
        '# Initialize Otter\nfrom coursekit.check import Notebook\ngrader = Notebook("04.02-MAP-Estimation.ipynb")'
    )
    assert [c.source for c in nb.cells[::2]] == ["# MAP", 'grader.check("q1")']
    nb.cells[1].source = "# Initialize Otter\nimport otter"  # what otter writes changed: say so
    with pytest.raises(SystemExit, match="otter initialisation cell"):
        use_honest_check(nb)


def test_student_notebooks_are_clean(release):
    assignments = {master.name for master in MASTERS}
    for path in (release / "student").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        if path.name in assignments:  # the grader is the course's Notebook, whose check never says "passed"
            first = next(c for c in nb.cells if c.cell_type == "code")
            assert first.source.startswith("# Initialize Otter\nfrom coursekit.check import Notebook\n"), first.source
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.execution_count is None and cell.outputs == [], f"{path.name}: stored outputs"
            assert "execution" not in cell.metadata


def test_autograder_zip_carries_hidden_tests(release):
    import zipfile

    for master in MASTERS:
        with zipfile.ZipFile(release / "autograder" / f"{master.stem}-autograder.zip") as archive:
            names = archive.namelist()
            tests = [n for n in names if n.startswith("tests/")]
            assert tests, names
            body = "".join(archive.read(n).decode() for n in tests)
            assert "hidden=True" in body
            config = archive.read("otter_config.json").decode()
            assert "coursekit.grading.time_limit.CellTimeLimit" in config


def test_autograder_zip_is_self_contained_for_a_grading_image(release, tmp_path):
    """What a grading image (Gradescope's, or otter grade's) needs beyond otter: pins, lecturekit, the
    grading machinery of coursekit (and none of the rest), data.

    Otter puts the zip in /autograder/source and copies files/ next to each submission; this test
    does the same into a temporary folder and imports lecturekit from there, not from the checkout.
    """
    import subprocess
    import sys
    import zipfile

    root = ROOT
    pins = pinned_requirements()
    for master in MASTERS:
        with zipfile.ZipFile(release / "autograder" / f"{master.stem}-autograder.zip") as archive:
            names = set(archive.namelist())
            for path in [
                *(root / "lecturekit").rglob("*.py"),
                *(root / "data").iterdir(),
                root / "pyproject.toml",
                *grader_files(),
            ]:
                name = f"files/{path.relative_to(root).as_posix()}"
                assert name in names, name
                assert archive.read(name) == path.read_bytes(), name
            shipped = {n for n in names if n.startswith("files/coursekit/")}
            assert shipped == {f"files/{p.relative_to(root).as_posix()}" for p in grader_files()}, shipped
            assert "files/coursekit/grading/grader.py" in shipped and "files/coursekit/symbolic.py" in shipped
            environment = archive.read("environment.yml").decode()
            assert f"- python={course_python()}" in environment
            for pin in pins:
                assert pin.replace("otter-grader", "otter-grader[grading,plugins]") in environment, pin
            assert f"- {GRADER_SOURCE}/files" in environment
    with zipfile.ZipFile(release / "autograder" / f"{MASTERS[0].stem}-autograder.zip") as archive:
        archive.extractall(tmp_path / "source")
    submission = tmp_path / "submission"
    shutil.copytree(tmp_path / "source" / "files", submission)
    # Hide the checkout's editable install, as in a grading image where only the zip exists.
    probe = (
        "import sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
        "sys.path = [p for p in sys.path if p not in ('', '.')]; sys.path.insert(0, '.'); "
        "import lecturekit, coursekit.grading.time_limit, coursekit.grading.grader, coursekit.symbolic, "
        "lecturekit.datasets as d; "
        "print(lecturekit.__file__); print(d.load_old_faithful().shape, len(d.load_sms_spam()[0]))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=submission, capture_output=True, text=True, check=True)
    where, sizes = result.stdout.splitlines()
    assert Path(where).resolve().is_relative_to(submission.resolve())
    assert sizes.startswith("(272, 2)")
    # pip can build lecturekit from the zip's files/ (what the environment's last line installs).
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path / "wheel"),
            str(tmp_path / "source" / "files"),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "wheel").glob("lecturekit-*.whl")
    with zipfile.ZipFile(wheel) as built:
        assert {"lecturekit/mixture/gaussian.py", "coursekit/grading/time_limit.py"} <= set(built.namelist())


def test_public_checks_pass_for_a_correct_answer(release, tmp_path):
    from nbclient import NotebookClient

    nb = submission(release, CORRECT)
    shutil.copy2(release / "student" / f"{BAYES}.ipynb", tmp_path / f"{BAYES}.ipynb")  # otter reads it
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = check_outputs(nb)
    assert set(outputs) == {f"q{i}" for i in range(1, 7)}
    for question, text in outputs.items():
        assert NO_PROBLEM.format(name=question) in text and "passed" not in text, (question, text[:300])
    # The symbolic answer is shown as the grader read it.
    import sympy

    from coursekit.symbolic import parse, to_data

    N, m = sympy.symbols("N m", positive=True)
    read = parse(to_data(1 / (1 + (N - m) / m))["sympy"])
    assert f"The grader reads q4_estimate as: {sympy.sstr(read)}" in outputs["q4"], outputs["q4"]


def test_every_assignment_states_its_graders_time_limits_before_its_first_question(release):
    zips = sorted((release / "autograder").glob("*-autograder.zip"))
    assert zips
    for zip_path in zips:
        seconds = Assignment.load(zip_path).cell_seconds  # what the grader enforces
        name = zip_path.name.removesuffix("-autograder.zip")
        cells = nbformat.read(release / "student" / f"{name}.ipynb", as_version=4).cells
        (where,) = [i for i, c in enumerate(cells) if c.get("id") == TIME_LIMITS_ID]
        assert cells[where].source == time_limits_statement(seconds)
        assert f"{seconds:g} seconds of CPU time" in cells[where].source
        assert cells[where + 1].source.lstrip("*# ").startswith("Question"), (name, cells[where + 1].source[:80])
