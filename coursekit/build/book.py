"""The website: the student notebooks staged with the book's pages and built strictly (``python -m coursekit book``).

``assign``, then stage the website's sources in ``_build/source/`` (the book's configuration, its
pages and the *student* notebooks) and run the strict Jupyter Book build into ``_build/html``.
Solutions never reach the website because the website never sees a master. With
``REPOSITORY_URL`` (the published student repository, :mod:`coursekit.build.release`) in the
environment, every chapter gets launch buttons.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import nbformat
import yaml

from coursekit.build.assign import assign
from coursekit.repository import BOOK_SOURCE, DIST, ROOT, log, run, stage, tool

# Files and folders at the top of the repository that make up the website besides the notebooks.
BOOK_FILES = [
    "_config.yml",
    "_toc.yml",
    "intro.md",
    "notation.md",
    "instructor-guide.md",
    "where-next.md",
    "bibliography.md",
    "logo.svg",
    "_ext",
]
BINDERHUB = "https://mybinder.org"
# MathJax 3 from the npm package pinned in package.json (`npm ci` puts it here); the website serves
# it from _static/mathjax so that math renders with no network. _config.yml points mathjax_path at it.
MATHJAX = ROOT / "node_modules" / "mathjax" / "es5"
MATHJAX_PARTS = ["tex-chtml-full.js", "output/chtml/fonts", "ui", "a11y", "adaptors"]


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


def stage_book(
    student_dir: Path,
    source: Path = BOOK_SOURCE,
    *,
    repository_url: str | None = None,
    branch: str = "main",
    jupyterhub_url: str | None = None,
) -> Path:
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


def add_launch_buttons(config_path: Path, repository_url: str, branch: str, jupyterhub_url: str | None) -> None:
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
            org, repo = url[len(host) :].split("/")[:2]
            repo = repo.removesuffix(".git")
            return (
                f"{BINDERHUB}/v2/{code}/{org}/{repo}/{branch}"
                if code == "gh"
                else f"{BINDERHUB}/v2/gl/{org}%2F{repo}/{branch}"
            )
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


EXECUTION_SECONDS = 300  # per cell, as _config.yml's execute.timeout


def execution_cache(output_root: Path):
    """The folder of the execution cache Jupyter Book reads when it builds into ``output_root``, and the cache."""
    from jupyter_cache import get_cache

    path = output_root / "_build" / ".jupyter_cache"
    return path, get_cache(str(path))


def execute_notebooks(source: Path, output_root: Path, processes: int | None = None) -> None:
    """Execute the staged notebooks side by side into the book's execution cache.

    Jupyter Book executes one notebook after another; run first, the notebooks that the book's
    ``_toc.yml`` lists execute ``processes`` at a time (one per CPU by default), each in a Python
    process of its own (:func:`execute_one`), into the cache Jupyter Book reads
    (``_build/.jupyter_cache``, keyed by the code of each notebook), so the build then finds every
    notebook executed. A notebook already in the cache with the same code is not run again; one that
    fails is left to the build, which runs it once more and reports its error.
    """
    cache_path, cache = execution_cache(output_root)
    work = []
    for path in sorted(book_notebooks(source), key=lambda p: -p.stat().st_size):  # the largest first
        try:
            cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:  # not executed yet with this code
            work.append((path, cache.add_nb_to_project(str(path)).pk))

    def execute(item: tuple[Path, int]) -> None:
        path, pk = item
        code = f"from coursekit.build.book import execute_one; execute_one({str(cache_path)!r}, {pk})"
        if subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=False).returncode:
            log(f"{path.name} failed to execute; the build runs it again and reports why")

    with ThreadPoolExecutor(processes or os.cpu_count() or 1) as pool:
        list(pool.map(execute, work))


def execute_one(cache_path: str, pk: int) -> None:
    """Execute the cache's project notebook ``pk`` in its own folder and cache it (exit 1 if it failed)."""
    from jupyter_cache import get_cache
    from jupyter_cache.executors.basic import ExecutionWorkerLocalMProc, ProcessData

    cache = get_cache(cache_path)
    uri = cache.get_project_record(pk).uri
    code, _ = ExecutionWorkerLocalMProc()(ProcessData(pk, uri, cache, EXECUTION_SECONDS, False))
    raise SystemExit(code)


def book_notebooks(source: Path) -> list[Path]:
    """The notebooks that the staged book's ``_toc.yml`` lists (``only_build_toc_files``: the others are not built)."""
    files: list[str] = []

    def walk(node) -> None:
        if isinstance(node, dict):
            files.extend(str(node[key]) for key in ("root", "file") if key in node)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    toc = source / "_toc.yml"
    walk(yaml.safe_load(toc.read_text()) if toc.exists() else None)
    paths = {source / (file if file.endswith(".ipynb") else f"{file}.ipynb") for file in files}
    return sorted(path for path in paths if path.exists())


def keep_executed(source: Path, output_root: Path) -> None:
    """Put each executed notebook in ``_build/jupyter_execute``, as a build that executed it writes it.

    Where myst-nb takes a notebook's outputs from the cache, it renders them but writes the notebook
    it read, without outputs, to ``jupyter_execute``; the executed copy is the cache's.
    """
    _, cache = execution_cache(output_root)
    for path in book_notebooks(source):
        target = output_root / "_build" / "jupyter_execute" / path.relative_to(source)
        try:
            record = cache.match_cache_notebook(nbformat.read(path, as_version=4))
        except KeyError:
            continue  # not executed (the build failed on it, or it was not built)
        if target.exists():
            nbformat.write(cache.get_cache_bundle(record.pk).nb, target)


def build_book(source: Path = BOOK_SOURCE, output_root: Path = ROOT, *, strict: bool = True) -> Path:
    """Strict Jupyter Book build: any warning (a failing cell, a broken reference) fails it.

    The notebooks execute first, side by side (:func:`execute_notebooks`). ``strict=False`` is for
    partial books in tests, whose chapters link chapters left out.
    """
    with stage("execute the notebooks"):
        execute_notebooks(source, output_root)
    flags = ["-W", "-n", "--keep-going"] if strict else []
    command = [tool("jupyter-book"), "build", source, "--path-output", output_root, *flags]
    try:
        with stage("build the website (HTML)"):
            run(command)
    except subprocess.CalledProcessError:
        # A kernel can die before it starts: jupyter_client picks its TCP ports by binding port 0
        # and releasing it, and another process starting a kernel at the same moment (nbval, the
        # grader) may take one of them ("Address already in use"). Executed notebooks are cached,
        # so a second build only runs what failed; a real failure (a broken cell or reference)
        # fails again.
        log("the book build failed; building once more, in case a kernel lost its port to another process")
        run(command)
    keep_executed(source, output_root)
    index = output_root / "_build" / "html" / "index.html"
    if not index.exists():
        raise SystemExit(f"the build finished but {index} is missing")
    return index


def book(dist: Path = DIST, output_root: Path = ROOT) -> Path:
    """Build the website; ``REPOSITORY_URL`` etc. in the environment add launch buttons."""
    with stage("student notebooks and autograder zips (otter assign)"):
        student_dir = assign(dist, run_tests=False)  # `make assignments` runs otter's tests; the website needs none
    with stage("stage the website's sources"):
        source = stage_book(student_dir, output_root / "_build" / "source", **repository_settings())
    index = build_book(source, output_root)
    log(f"the course website is built: open {index}")
    return index


def repository_settings() -> dict:
    """The student repository's address, branch and JupyterHub, from the environment (make variables)."""
    return {
        "repository_url": os.environ.get("REPOSITORY_URL") or None,
        "branch": os.environ.get("REPOSITORY_BRANCH") or "main",
        "jupyterhub_url": os.environ.get("JUPYTERHUB_URL") or None,
    }


def main(argv: list[str] | None = None, prog: str | None = None) -> None:
    """``python -m coursekit book``."""
    argparse.ArgumentParser(
        prog=prog,
        description="assign, then build the website into _build/html "
        "(REPOSITORY_URL in the environment adds launch buttons)",
    ).parse_args(argv)
    book()
