"""Course tooling: release student notebooks, build the website, grade submissions.

The master notebooks in ``notebooks/`` hold the lecture, the solutions and the tests in
otter-grader's markup. Everything a student or a reader sees is generated from them:

``assign``
    ``otter assign`` on every master: student notebooks (no solutions, no hidden tests) in
    ``dist/student/`` and one autograder zip per assignment in ``dist/autograder/``.
``book``
    ``assign``, then stage the website's sources in ``_build/source/`` (the book's configuration,
    its pages and the *student* notebooks) and run the strict Jupyter Book build into
    ``_build/html``. Solutions never reach the website because the website never sees a master.
``release``
    ``assign``, then write a *student repository* in ``dist/student-repository/``: the student
    notebooks, ``lecturekit``, ``data/`` and the Binder environment, with a README whose Binder
    badge points at the default branch. Publish it (e.g. as its own GitHub repository) and pass
    its address to ``book`` (``REPOSITORY_URL``) for launch buttons that open student notebooks.
``grade``
    Grade every ``.ipynb`` under a folder against the matching autograder zip with
    ``lecturekit.grader`` (the student's code in a separate, limited process confined by
    bubblewrap; the checks here) and write a table of scores with reasons, and a per-question
    summary (``tools/gradebook.py``).
``clean``
    Strip execution metadata and volatile fields from notebooks (run it after re-executing a
    master, before committing).

Run ``python tools/course.py --help``; the Makefile wraps each command.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import quote

import nbformat
import yaml
from nbconvert.preprocessors import CoalesceStreamsPreprocessor

from lecturekit.grader import SKIPPABLE, fingerprint

ROOT = Path(__file__).resolve().parents[1]
MASTERS = ROOT / "notebooks"
DIST = ROOT / "dist"
BUILD = ROOT / "_build"
BOOK_SOURCE = BUILD / "source"
# Files and folders at the top of the repository that make up the website besides the notebooks.
BOOK_FILES = ["_config.yml", "_toc.yml", "intro.md", "notation.md", "instructor-guide.md", "where-next.md",
              "bibliography.md", "logo.svg", "_ext"]
ASSIGNMENT_MARKER = "# ASSIGNMENT CONFIG"
# A master's lecture cell whose results no answer or check uses carries this tag; the grader may then
# skip it (tools/skipping.py checks the claim; tests/test_skipping.py grades with and without such cells).
SKIP_TAG = "skip-when-grading"
# The student repository (see ``release``): what it holds besides the notebooks. Launch buttons and
# its Binder badge point at it, never at this repository, whose notebooks hold the solutions.
STUDENT_REPOSITORY = DIST / "student-repository"
# notation.md sits beside notebooks/, where the notebooks' links (../notation.md) look for it.
STUDENT_REPOSITORY_FILES = ["lecturekit", "data", "pyproject.toml", "requirements.txt", "environment.yml",
                            "notation.md"]
BINDERHUB = "https://mybinder.org"
# MathJax 3 from the npm package pinned in package.json (`npm ci` puts it here); the website serves
# it from _static/mathjax so that math renders with no network. _config.yml points mathjax_path at it.
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5"
MATHJAX_PARTS = ["tex-chtml-full.js", "output/chtml/fonts", "ui", "a11y", "adaptors"]
# Where a grading image unpacks the autograder zip: Gradescope's and otter's default autograder_dir
# is /autograder, and the zip's contents go to its source/ folder.
GRADER_SOURCE = "/autograder/source"


def log(message: str) -> None:
    print(f"[course] {message}", flush=True)


def run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    log(" ".join(str(part) for part in command))
    return subprocess.run([str(part) for part in command], check=True, **kwargs)


def tool(name: str) -> str:
    """Path of a console script installed next to this Python (the course's virtual environment)."""
    candidate = Path(sys.executable).parent / name
    return str(candidate) if candidate.exists() else name


def master_notebooks() -> list[Path]:
    return sorted(p for p in MASTERS.glob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)


def is_assignment(nb: nbformat.NotebookNode) -> bool:
    return bool(nb.cells) and nb.cells[0].cell_type == "raw" and nb.cells[0].source.lstrip().startswith(
        ASSIGNMENT_MARKER
    )


# --------------------------------------------------------------------------- notebook hygiene

VOLATILE_CELL_METADATA = ("execution", "collapsed", "scrolled", "ExecuteTime")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TQDM_LINE = re.compile(r"\|\s*\d+/\d+ \[\d+:\d+")  # "| 3/192 [00:01<00:30, ..."


def is_progress_bar(output: nbformat.NotebookNode) -> bool:
    """A tqdm bar: a widget (in Jupyter) or its text fallback on stderr (without ipywidgets)."""
    if WIDGET_VIEW in output.get("data", {}):
        return True
    return output.get("output_type") == "stream" and output.get("name") == "stderr" and bool(
        TQDM_LINE.search(output.get("text", "")))


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


# --------------------------------------------------------------------------- assign


def assign(dist: Path = DIST, *, run_tests: bool = True) -> Path:
    """Generate student notebooks and autograder zips from every master notebook.

    Returns the folder of student notebooks (``dist/student``).
    """
    student_dir, autograder_dir, work = dist / "student", dist / "autograder", dist / "assign"
    for folder in (student_dir, autograder_dir, work):
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
    for master in master_notebooks():
        assign_one(master, dist, run_tests=run_tests)
    shutil.copy2(ROOT / "notation.md", dist / "notation.md")  # where the notebooks' ../notation.md points
    log(f"student notebooks in {student_dir}, autograders in {autograder_dir}")
    return student_dir


def assign_one(master: Path, dist: Path = DIST, *, run_tests: bool = True) -> None:
    """``otter assign`` on one master: its student notebook and autograder zip into ``dist``."""
    student_dir, autograder_dir, work = dist / "student", dist / "autograder", dist / "assign"
    for folder in (student_dir, autograder_dir, work):
        folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.read(master, as_version=4)
    if not is_assignment(nb):
        nbformat.write(clean_notebook(nb, clear_outputs=True), student_dir / master.name)
        return
    out = work / master.stem
    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "otter", "assign", master, out]
    if not run_tests:
        command.insert(4, "--no-run-tests")
    run(command)
    student = nbformat.read(out / "student" / master.name, as_version=4)
    skippable = skippable_cells(nb, student)
    nbformat.write(clean_notebook(student, clear_outputs=True), student_dir / master.name)
    for extra in (out / "student").iterdir():  # support files the assignment ships, if any
        if extra.name != master.name:
            copy = shutil.copytree if extra.is_dir() else shutil.copy2
            copy(extra, student_dir / extra.name)
    (zip_path,) = (out / "autograder").glob("*-autograder_*.zip")
    complete_autograder(zip_path, autograder_dir / f"{master.stem}-autograder.zip", question_rules(nb), skippable)


def skippable_cells(master: nbformat.NotebookNode, student: nbformat.NotebookNode) -> list[str]:
    """The fingerprints of the master's cells tagged :data:`SKIP_TAG`, as the student notebook has them.

    The tag is taken off the student notebook (``student``, changed in place): the grader trusts the
    autograder zip's list, never a submission's tags.
    """
    tagged = {c.source for c in master.cells if c.cell_type == "code" and SKIP_TAG in c.metadata.get("tags", [])}
    found = set()
    for cell in student.cells:
        tags = cell.metadata.get("tags", [])
        if SKIP_TAG in tags:
            tags.remove(SKIP_TAG)
            if not tags:
                del cell.metadata["tags"]
        if cell.cell_type == "code" and cell.source in tagged:
            found.add(cell.source)
    if found != tagged:
        raise SystemExit(f"{len(tagged - found)} cells tagged {SKIP_TAG} are not in the student notebook as "
                         f"the master has them: {sorted(tagged - found)[0][:80]!r}")
    return sorted(fingerprint(source) for source in found)


def question_rules(nb: nbformat.NotebookNode) -> dict[str, dict]:
    """What the grader enforces per question, from its ``# BEGIN QUESTION`` cell: ``forbids``, the
    modules its answer may not import (the grader runs it where they cannot be)."""
    rules = {}
    for cell in nb.cells:
        if cell.cell_type == "raw" and cell.source.lstrip().startswith("# BEGIN QUESTION"):
            config = yaml.safe_load(cell.source.split("\n", 1)[1]) or {}
            if config.get("forbids"):
                rules[config["name"]] = {"forbids": sorted(config["forbids"])}
    return rules


def complete_autograder(generated: Path, target: Path, rules: dict | None = None, skippable=()) -> None:
    """Copy otter's autograder zip to ``target``, made self-contained for a grading image.

    ``otter assign`` zips the tests and an environment with otter alone, and cannot add files from
    outside the notebook's folder. A grading image built from the zip (Gradescope's, or ``otter
    grade``'s Docker image) also needs the course's pinned packages, ``lecturekit`` (the notebooks
    import it and every assignment's CellTimeLimit plugin lives in it) and the corpora of
    ``data/``. Otter copies whatever is under ``files/`` in the zip next to each submission, so
    ``lecturekit/`` and ``data/`` land beside the notebook as in the repository; ``environment.yml``
    gets the pins of requirements.txt, the course's Python, and the package itself from
    ``GRADER_SOURCE/files`` (for the plugin, which loads before the notebook runs). The image's
    ``setup.sh`` also installs bubblewrap, which confines the grading worker where the image's
    container allows it (``run_autograder`` grades with ``--isolation auto``). ``questions.json``
    holds ``rules``, what the grader enforces per question (:func:`question_rules`), and
    ``skippable.json`` the fingerprints of the lecture cells the grader may skip (:func:`skippable_cells`).
    """
    with zipfile.ZipFile(generated) as original:
        entries = {name: original.read(name) for name in original.namelist()
                   if not name.startswith("files/")}
    setup = entries["setup.sh"].decode()
    if "\napt-get update\n" not in setup:
        raise SystemExit("otter's setup.sh no longer runs `apt-get update`: put bubblewrap's installation elsewhere")
    entries["setup.sh"] = setup.replace("\napt-get update\n", f"\napt-get update\n{SETUP_BUBBLEWRAP}\n", 1).encode()
    entries["environment.yml"] = grading_environment().encode()
    entries["run_autograder"] = RUN_AUTOGRADER.encode()
    entries["questions.json"] = json.dumps(rules or {}, indent=1, sort_keys=True).encode()
    entries[SKIPPABLE] = json.dumps({"cells": sorted(skippable)}, indent=1).encode()
    package_files = [ROOT / "pyproject.toml", ROOT / "README.md"]
    package_files += sorted(p for p in (ROOT / "lecturekit").rglob("*.py"))
    package_files += sorted(p for p in (ROOT / "data").iterdir() if p.is_file())
    for path in package_files:
        entries[f"files/{path.relative_to(ROOT).as_posix()}"] = path.read_bytes()
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))  # reproducible bytes
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o755 if name == "run_autograder" else 0o644) << 16
            archive.writestr(info, data)


# The grading image's entry point (Gradescope runs /autograder/run_autograder): lecturekit's grader,
# which keeps the student's code out of the checks, instead of otter's in-process run. otter's
# setup.sh still builds the image (conda environment "otter-env" from environment.yml).
RUN_AUTOGRADER = """#!/usr/bin/env bash
# Grade /autograder/submission/*.ipynb with lecturekit.grader (see the course's instructor guide).
set -uo pipefail
root="${AUTOGRADER_ROOT:-/autograder}"
if [ -x /root/miniforge3/bin/mamba ]; then
    export PATH=/root/miniforge3/bin:$PATH
    eval "$(mamba shell hook --shell bash)"
    mamba activate otter-env
fi
submission=$(ls "$root"/submission/*.ipynb | head -n 1)
mkdir -p "$root/results"
# Confined by bubblewrap where the container allows it; each submission has a container of its own.
"${PYTHON:-python}" -m lecturekit.grader "$root/source" "$submission" --isolation auto \\
    --protect "$root/submission" --gradescope "$root/results/results.json" > /dev/null
"""
# Added to otter's setup.sh: bubblewrap, which confines the grading worker (lecturekit.isolation).
SETUP_BUBBLEWRAP = "apt-get install -y bubblewrap"


def course_python() -> str:
    """The Python version environment.yml asks for (e.g. "3.11")."""
    dependencies = yaml.safe_load((ROOT / "environment.yml").read_text())["dependencies"]
    return next(d.split("=", 1)[1] for d in dependencies if isinstance(d, str) and d.startswith("python="))


def pinned_requirements() -> list[str]:
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def grading_environment() -> str:
    """The conda environment of the grading image: the course's Python and pins, and lecturekit."""
    otter = next(r for r in pinned_requirements() if r.startswith("otter-grader=="))
    pins = [otter.replace("otter-grader", "otter-grader[grading,plugins]")]
    pins += [r for r in pinned_requirements() if not r.startswith("otter-grader==")]
    pins.append(f"{GRADER_SOURCE}/files")  # lecturekit itself, from the zip (pyproject.toml there)
    lines = ["name: otter-env", "channels:", "  - conda-forge", "dependencies:",
             f"  - python={course_python()}", "  - pip", "  - jupyter_server", "  - pip:"]
    lines += [f"      - {pin}" for pin in pins]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- book


def prepare_for_web(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Tag a student notebook for the website.

    The otter initialisation cell still runs (``grader.check`` needs it) but is not shown, and the
    public checks show their code but not their output: on the website every exercise is blank, so
    every check would only report a failure. Cells that draw a progress bar show no output either.
    """
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.metadata.setdefault("tags", [])
        source = cell.source.lstrip()
        if source.startswith("# Initialize Otter"):
            tags.append("remove-cell")
        elif source.startswith("grader.check") or shows_progress_bar(cell):
            tags.append("remove-output")  # a blank answer's failures; a finished progress bar
    return nb


def shows_progress_bar(cell: nbformat.NotebookNode) -> bool:
    """A code cell that draws a tqdm progress bar (directly or through learning_curve)."""
    return cell.cell_type == "code" and ("progress=True" in cell.source or "tqdm(" in cell.source)


def stage_book(student_dir: Path, source: Path = BOOK_SOURCE, *, repository_url: str | None = None,
               branch: str = "main", jupyterhub_url: str | None = None) -> Path:
    """Assemble the website's sources: book configuration, pages and student notebooks.

    With ``repository_url`` (the published student repository, see :func:`release`) every chapter
    gets launch buttons: Binder, and JupyterHub if ``jupyterhub_url`` is given, opening that
    chapter's student notebook on ``branch``.
    """
    shutil.rmtree(source, ignore_errors=True)
    (source / "notebooks").mkdir(parents=True)
    for name in BOOK_FILES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif (ROOT / name).exists():
            shutil.copy2(ROOT / name, source / name)
    if repository_url:
        add_launch_buttons(source / "_config.yml", repository_url, branch, jupyterhub_url)
    copy_mathjax(source / "_assets" / "mathjax")  # not _static: Jupyter Book would load every .js in it
    for path in sorted(student_dir.iterdir()):
        target = source / "notebooks" / path.name
        if path.suffix == ".ipynb":
            nbformat.write(prepare_for_web(nbformat.read(path, as_version=4)), target)
        elif path.is_dir():
            shutil.copytree(path, target)
        else:
            shutil.copy2(path, target)
    return source


def add_launch_buttons(config_path: Path, repository_url: str, branch: str,
                       jupyterhub_url: str | None) -> None:
    """Point the staged book configuration at the student repository, for launch buttons."""
    config = yaml.safe_load(config_path.read_text())
    config["repository"] = {"url": repository_url.rstrip("/"), "branch": branch, "path_to_book": ""}
    launch = config.setdefault("launch_buttons", {})
    launch["binderhub_url"] = BINDERHUB
    if jupyterhub_url:
        launch["jupyterhub_url"] = jupyterhub_url.rstrip("/")
    config.setdefault("html", {})["use_repository_button"] = True
    config_path.write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True))


def binder_url(repository_url: str, branch: str = "main") -> str:
    """The Binder address of a repository's branch, as the book's launch buttons build it."""
    url = repository_url.rstrip("/")
    for host, code in (("https://github.com/", "gh"), ("https://gitlab.com/", "gl")):
        if url.startswith(host):
            org, repo = url[len(host):].split("/")[:2]
            repo = repo.removesuffix(".git")
            return f"{BINDERHUB}/v2/{code}/{org}/{repo}/{branch}" if code == "gh" else \
                f"{BINDERHUB}/v2/gl/{org}%2F{repo}/{branch}"
    return f"{BINDERHUB}/v2/git/{quote(url, safe='')}/{branch}"


def copy_mathjax(target: Path) -> None:
    """Copy the parts of MathJax the website loads: the TeX-to-HTML bundle, its fonts and menus."""
    if not (MATHJAX / MATHJAX_PARTS[0]).exists():
        raise SystemExit(f"MathJax is missing from {MATHJAX}: run `npm ci` (or `make setup`) first")
    for part in MATHJAX_PARTS:
        origin, destination = MATHJAX / part, target / part
        destination.parent.mkdir(parents=True, exist_ok=True)
        if origin.is_dir():
            shutil.copytree(origin, destination)
        else:
            shutil.copy2(origin, destination)


def build_book(source: Path = BOOK_SOURCE, output_root: Path = ROOT, *, strict: bool = True) -> Path:
    """Strict Jupyter Book build: any warning (a failing cell, a broken reference) fails it.

    ``strict=False`` is for partial books in tests, whose chapters link chapters left out.
    """
    flags = ["-W", "-n", "--keep-going"] if strict else []
    command = [tool("jupyter-book"), "build", source, "--path-output", output_root, *flags]
    try:
        run(command)
    except subprocess.CalledProcessError:
        # A kernel can die before it starts: jupyter_client picks its TCP ports by binding port 0
        # and releasing it, and another process starting a kernel at the same moment (nbval, the
        # grader) may take one of them ("Address already in use"). Executed notebooks are cached,
        # so a second build only runs what failed; a real failure (a broken cell or reference)
        # fails again.
        log("the book build failed; building once more, in case a kernel lost its port to another process")
        run(command)
    index = output_root / "_build" / "html" / "index.html"
    if not index.exists():
        raise SystemExit(f"the build finished but {index} is missing")
    return index


def book(dist: Path = DIST, output_root: Path = ROOT) -> Path:
    """Build the website; ``REPOSITORY_URL`` etc. in the environment add launch buttons."""
    student_dir = assign(dist)
    source = stage_book(student_dir, output_root / "_build" / "source", **repository_settings())
    index = build_book(source, output_root)
    log(f"the course website is built: open {index}")
    return index


def repository_settings() -> dict:
    """The student repository's address, branch and JupyterHub, from the environment (make variables)."""
    return {"repository_url": os.environ.get("REPOSITORY_URL") or None,
            "branch": os.environ.get("REPOSITORY_BRANCH") or "main",
            "jupyterhub_url": os.environ.get("JUPYTERHUB_URL") or None}


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
to run the public tests. Your instructor's hidden tests decide the grade.

The data sets in `data/` are described, with their sources and licences, in `data/README.md`.
"""


def release(out: Path = STUDENT_REPOSITORY, dist: Path = DIST, *, repository_url: str | None = None,
            branch: str = "main", student_dir: Path | None = None) -> Path:
    """Write the student repository: student notebooks, lecturekit, data and the Binder setup.

    Its ``postBuild`` only installs ``lecturekit`` (editable, so that ``data/`` stays next to it);
    there are no masters to assign from. With ``repository_url`` (where it will be published) the
    README carries a Binder badge for ``branch``. ``student_dir``: notebooks already assigned.
    """
    student_dir = student_dir or assign(dist)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(student_dir, out / "notebooks")
    for name in STUDENT_REPOSITORY_FILES:
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, out / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                         if (ROOT / name).is_dir() else {}))
    post_build = out / "postBuild"
    post_build.write_text("#!/usr/bin/env bash\n# Binder: install lecturekit next to its data/.\n"
                          "set -euo pipefail\npython -m pip install --no-deps -e .\n")
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


# --------------------------------------------------------------------------- grade


def grade(*args, **kwargs) -> list[dict]:
    """Grade a folder of submissions into a scores file: :func:`gradebook.grade` (tools/gradebook.py)."""
    import gradebook

    return gradebook.grade(*args, **kwargs)


# --------------------------------------------------------------------------- command line


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("assign", help="student notebooks and autograder zips into dist/")
    commands.add_parser("book", help="assign, then build the website into _build/html "
                                     "(REPOSITORY_URL in the environment adds launch buttons)")
    commands.add_parser("release", help="assign, then write the student repository into "
                                        "dist/student-repository (REPOSITORY_URL: its Binder badge)")
    grade_parser = commands.add_parser("grade", help="grade a folder of submitted notebooks")
    grade_parser.add_argument("submissions", type=Path, help="folder holding the submitted .ipynb files")
    grade_parser.add_argument("--out", type=Path, default=None, help="CSV to write (default: SUBMISSIONS/scores.csv)")
    grade_parser.add_argument("--autograders", type=Path, default=DIST / "autograder")
    grade_parser.add_argument("--scheduler", default=None,
                              help="grade on the Dask cluster of this scheduler (tcp://host:8786); "
                                   "default: a local cluster sized to this machine")
    grade_parser.add_argument("--unisolated", action="store_true",
                              help="grade even where the students' code cannot be confined (bubblewrap missing "
                                   "or unable to run): a submission can then read and change whatever you can")
    clean_parser = commands.add_parser("clean", help="strip volatile metadata from notebooks")
    clean_parser.add_argument("paths", type=Path, nargs="*", help="default: every master notebook")
    args = parser.parse_args(argv)

    if args.command == "assign":
        assign()
    elif args.command == "book":
        book()
    elif args.command == "release":
        settings = repository_settings()
        release(repository_url=settings["repository_url"], branch=settings["branch"])
    elif args.command == "grade":
        grade(args.submissions, args.out or args.submissions / "scores.csv", args.autograders, progress=True,
              unisolated=args.unisolated, scheduler=args.scheduler)
    elif args.command == "clean":
        clean(args.paths or master_notebooks())


if __name__ == "__main__":
    main()
