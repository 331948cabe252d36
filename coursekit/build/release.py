"""The student repository to publish (``python -m coursekit release``).

``assign``, then write a *student repository* in ``dist/student-repository/``: the student
notebooks, ``lecturekit``, what their checks import of ``coursekit`` (:data:`STUDENT_COURSEKIT`:
``coursekit.symbolic`` and ``coursekit.check``), ``data/`` and the Binder environment, with a README
whose Binder badge points at the default branch. Publish it (e.g. as its own GitHub repository) and pass its address
to ``book`` (``REPOSITORY_URL``) for launch buttons that open student notebooks.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from coursekit.build.assign import assign, course_python
from coursekit.build.book import binder_url, repository_settings
from coursekit.repository import DIST, ROOT, log

# The student repository (see ``release``): what it holds besides the notebooks. Launch buttons and
# its Binder badge point at it, never at this repository, whose notebooks hold the solutions.
STUDENT_REPOSITORY = DIST / "student-repository"
# notation.md sits beside notebooks/, where the notebooks' links (../notation.md) look for it.
STUDENT_REPOSITORY_FILES = [
    "lecturekit",
    "data",
    "pyproject.toml",
    "requirements.txt",
    "environment.yml",
    "notation.md",
]
# Of coursekit, the student repository carries what the notebooks' public checks import (the digests
# of known slips, a symbolic answer read and evaluated as the grader does) and what their `grader`
# is (coursekit.check.Notebook), and nothing of the machinery that builds, releases and grades.
STUDENT_COURSEKIT = ["symbolic.py", "evaluator.py", "check.py", "choices.py"]
STUDENT_COURSEKIT_INIT = '''"""coursekit, as the student repository carries it: the notebooks' checks.

The notebooks' public checks compare an answer's digest with those of known slips and read a
symbolic answer as the grader does (:mod:`coursekit.symbolic`, evaluated by
:mod:`coursekit.evaluator`); ``grader.check`` reports on them
(:mod:`coursekit.check`, which reads a shuffled question's letters as the grader does with
:mod:`coursekit.choices`). The rest of coursekit, which builds, releases and grades the course,
stays with the instructor.
"""
'''


STUDENT_README = """# Generative Learning Algorithms: the notebooks
{badge}
The notebooks of the course *Generative Learning Algorithms*, with exercises to complete, and
`lecturekit`, the package the notebooks import.

## Run them

- **In the browser**: {binder}
- **On your machine** (Python {python}):

  ```
  python -m venv .venv
  .venv/bin/pip install -r requirements.txt
  .venv/bin/pip install -e .
  .venv/bin/jupyter lab notebooks
  ```

In each exercise, replace the `...` with your answer and run the `grader.check("q1")` cell below it
to run the public tests. They check your answer's form and rule out known mistakes; they cannot tell
that it is right, and never say "passed": your instructor's hidden tests decide the grade. For a
formula, the check also shows it as the grader reads it.

The data sets in `data/` are described, with their sources and licences, in `data/README.md`.
"""


def release(
    out: Path = STUDENT_REPOSITORY,
    dist: Path = DIST,
    *,
    repository_url: str | None = None,
    branch: str = "main",
    student_dir: Path | None = None,
) -> Path:
    """Write the student repository: student notebooks, lecturekit, the checks of coursekit, data and the Binder setup.

    Its ``postBuild`` only installs ``lecturekit`` and ``coursekit``'s checks (editable, so that
    ``data/`` stays next to them);
    there are no masters to assign from. With ``repository_url`` (where it will be published) the
    README carries a Binder badge for ``branch``. ``student_dir``: notebooks already assigned.
    """
    student_dir = student_dir or assign(dist)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(student_dir, out / "notebooks")
    for name in STUDENT_REPOSITORY_FILES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(
            ROOT / name,
            out / name,
            **({"ignore": shutil.ignore_patterns("__pycache__")} if (ROOT / name).is_dir() else {}),
        )
    (out / "coursekit").mkdir()
    (out / "coursekit" / "__init__.py").write_text(STUDENT_COURSEKIT_INIT)
    for name in STUDENT_COURSEKIT:
        shutil.copy2(ROOT / "coursekit" / name, out / "coursekit" / name)
    post_build = out / "postBuild"
    post_build.write_text(
        "#!/usr/bin/env bash\n# Binder: install the course's packages next to data/.\n"
        "set -euo pipefail\npython -m pip install --no-deps -e .\n"
    )
    post_build.chmod(0o755)
    if repository_url:
        link = binder_url(repository_url, branch) + "?urlpath=lab/tree/notebooks"
        badge = f"\n[![Binder](https://mybinder.org/badge_logo.svg)]({link})\n"
        binder = f"open them on [Binder]({link}) (no installation; changes are lost when it closes)."
    else:
        badge, binder = "", "publish this folder as a repository and open it on Binder (mybinder.org)."
    (out / "README.md").write_text(STUDENT_README.format(badge=badge, binder=binder, python=course_python()))
    log(f"student repository in {out}")
    return out


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit release``."""
    argparse.ArgumentParser(
        prog=prog,
        description="assign, then write the student repository into "
        "dist/student-repository (REPOSITORY_URL: its Binder badge)",
    ).parse_args(argv)
    settings = repository_settings()
    release(repository_url=settings["repository_url"], branch=settings["branch"])
