"""The student repository (``make release``, :mod:`coursekit.build.release`): what students need, of
``coursekit`` only the symbolic checks, and no solution.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from coursekit.build.release import STUDENT_COURSEKIT, STUDENT_REPOSITORY_FILES
from coursekit.build.release import release as write_student_repository
from coursekit.notebooks import is_assignment, master_notebooks
from coursekit.repository import MASTERS, ROOT
from released import MARKERS, STUDENT_REPOSITORY_URL, readable_text, solution_lines

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def student_repository(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("published") / "student-repository"
    return write_student_repository(out, repository_url=STUDENT_REPOSITORY_URL, student_dir=release / "student")


def test_student_repository_holds_what_students_need_and_no_solution(student_repository):
    root = ROOT
    notebooks = sorted(p.name for p in (student_repository / "notebooks").glob("*.ipynb"))
    assert notebooks == [p.name for p in master_notebooks()]
    for name in STUDENT_REPOSITORY_FILES:
        assert (student_repository / name).exists(), name
    shipped = student_repository / "lecturekit" / "mixture" / "gaussian.py"  # a subpackage travels whole
    assert shipped.read_bytes() == (root / "lecturekit" / "mixture" / "gaussian.py").read_bytes()
    assert not list(student_repository.rglob("__pycache__"))
    post_build = student_repository / "postBuild"
    assert post_build.stat().st_mode & 0o111 and "pip install --no-deps -e ." in post_build.read_text()
    assert "-m coursekit" not in post_build.read_text()  # no masters here to assign from
    # Of coursekit, what the public checks import (coursekit.symbolic) and nothing of the machinery.
    shipped = sorted(
        p.relative_to(student_repository).as_posix()
        for p in (student_repository / "coursekit").rglob("*")
        if "__pycache__" not in p.parts
    )
    assert shipped == sorted(["coursekit/__init__.py", *(f"coursekit/{name}" for name in STUDENT_COURSEKIT)]), shipped
    assert (student_repository / "coursekit" / "symbolic.py").read_bytes() == (
        root / "coursekit" / "symbolic.py"
    ).read_bytes()
    leaks = []
    for path in (student_repository / "notebooks").glob("*.ipynb"):
        text = readable_text(path)
        leaks += [f"{path.name}: {marker!r}" for marker in MARKERS if marker in text]
        master = MASTERS / path.name
        if is_assignment(nbformat.read(master, as_version=4)):
            leaks += [f"{path.name}: {secret!r}" for secret in solution_lines(master) if secret in text]
    assert not leaks, leaks[:10]
    # A notebook's link to a page of the book (the notation page) finds it beside notebooks/.
    pages = {
        page
        for path in (student_repository / "notebooks").glob("*.ipynb")
        for page in re.findall(r"\]\(\.\./([\w-]+\.md)\)", path.read_text())
    }
    assert "notation.md" in pages and all((student_repository / page).is_file() for page in pages), pages
    # The badge opens the notebooks folder on the default branch, not on a tag.
    readme = (student_repository / "README.md").read_text()
    badge = "https://mybinder.org/v2/gh/example-university/generative-learning-student/main?urlpath=lab/tree/notebooks"
    assert f"[![Binder](https://mybinder.org/badge_logo.svg)]({badge})" in readme
