"""The website (``make book``, :mod:`coursekit.build.book`): every chapter executed from the student
versions, launch buttons only with a student repository, math served by the site, no check noise.
"""

from __future__ import annotations

import re
import subprocess

import nbformat
import pytest

from conftest import ROOT
from coursekit.build import book
from coursekit.build.book import binder_url, build_book, stage_book
from coursekit.notebooks import master_notebooks
from released import BAYES, STUDENT_REPOSITORY_URL, check_outputs

pytestmark = pytest.mark.slow


def test_launch_buttons_open_the_student_notebook_in_the_student_repository(release, tmp_path):
    """A one-chapter book built with REPOSITORY_URL: Binder and JupyterHub buttons on the chapter."""
    source = stage_book(
        release / "student",
        tmp_path / "source",
        repository_url=STUDENT_REPOSITORY_URL,
        jupyterhub_url="https://hub.example.edu",
    )
    (source / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/{BAYES}\n")
    (source / "intro.md").write_text("# Generative Learning Algorithms\n")
    build_book(source, tmp_path, strict=False)  # the chapter links chapters left out of this book
    page = (tmp_path / "_build" / "html" / "notebooks" / f"{BAYES}.html").read_text().replace("&amp;", "&")
    binder = f"{binder_url(STUDENT_REPOSITORY_URL)}?urlpath=lab/tree/notebooks/{BAYES}.ipynb"
    assert binder == (
        "https://mybinder.org/v2/gh/example-university/generative-learning-student/main"
        f"?urlpath=lab/tree/notebooks/{BAYES}.ipynb"
    )
    assert f'href="{binder}"' in page
    hub = re.search(r'href="(https://hub\.example\.edu/hub/user-redirect/git-pull\?[^"]+)"', page)
    assert hub, "no JupyterHub button"
    assert "repo=https%3A//github.com/example-university/generative-learning-student" in hub.group(1)
    assert f"urlpath=lab/tree/generative-learning-student/notebooks/{BAYES}.ipynb" in hub.group(1)
    assert hub.group(1).endswith("branch=main")


def test_without_a_repository_the_book_has_no_launch_button(built_book):
    """No address is configured in the repository itself, so the default build shows no dead button."""
    page = (built_book / "html" / "notebooks" / f"{BAYES}.html").read_text()
    assert "mybinder.org" not in page and "git-pull" not in page
    assert f"_sources/notebooks/{BAYES}.ipynb" in page  # the download button: the student version


def test_book_has_every_chapter_executed_with_figures(built_book):
    html = built_book / "html"
    assert (html / "index.html").exists()
    for master in master_notebooks():
        page = html / "notebooks" / f"{master.stem}.html"
        assert page.exists(), f"{page} was not built"
        text = page.read_text()
        assert "cell_output" in text, f"{page.name} shows no executed output"
        images = re.findall(r'<img[^>]+src="([^"]+\.png)"', text)
        assert len(images) >= 2, f"{page.name} has {len(images)} figures"
        for src in images:
            assert (page.parent / src).resolve().exists(), f"{page.name}: missing image {src}"
    bayes = (html / "notebooks" / f"{BAYES}.html").read_text()
    assert "0.1538" in bayes  # the worked example's posterior, computed while building


def test_math_is_served_from_the_site_itself(built_book):
    """No CDN: the pages load MathJax from _static, and the file is there."""
    html = built_book / "html"
    for page in html.rglob("*.html"):
        text = page.read_text()
        if "\\(" in text or "\\[" in text or "$$" in text:
            scripts = re.findall(r'<script[^>]+src="([^"]*mathjax[^"]*)"', text, flags=re.I)
            assert scripts, f"{page.name} has math but loads no MathJax"
            for src in scripts:
                assert not src.startswith(("http:", "https:", "//")), f"{page.name} loads {src}"
                assert (page.parent / src.split("?")[0]).resolve().is_file(), f"{page.name}: {src} missing"
    assert (html / "_static" / "mathjax" / "output" / "chtml" / "fonts" / "woff-v2").is_dir()


def test_skipping_every_exercise_still_runs_the_whole_notebook(built_book):
    """The book executes the blank student versions: no cell may raise."""
    executed = sorted((built_book / "jupyter_execute" / "notebooks").glob("*.ipynb"))
    assert executed, "the build kept no executed notebooks"
    for path in executed:
        nb = nbformat.read(path, as_version=4)
        assert any(c.outputs for c in nb.cells if c.cell_type == "code"), f"{path.name} holds no output"
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert not errors, f"{path.name}: {errors[0]['ename']}: {errors[0]['evalue']}"


def test_website_hides_failing_check_noise(built_book):
    page = (built_book / "html" / "notebooks" / f"{BAYES}.html").read_text()
    assert "grader.check" in page  # the prompt tells students how to check...
    assert "results:" not in page and "Initialize Otter" not in page  # ...but shows no failing output


def test_public_checks_fail_on_the_blank_website_version(built_book):
    executed = nbformat.read(built_book / "jupyter_execute" / "notebooks" / f"{BAYES}.ipynb", as_version=4)
    outputs = check_outputs(executed)
    assert set(outputs) == {f"q{i}" for i in range(1, 7)}
    for question, text in outputs.items():
        assert "results:" in text and "All test cases passed" not in text, (question, text[:300])


@pytest.mark.parametrize("failures, builds", [(1, 2), (2, 2)])
def test_a_failed_book_build_is_tried_once_more(monkeypatch, tmp_path, failures, builds):
    # A kernel that lost its port to another process fails one build; the second uses the cache.
    # A build that fails twice (a real error) raises.
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        if len(calls) <= failures:
            raise subprocess.CalledProcessError(1, command)
        (tmp_path / "_build" / "html").mkdir(parents=True)
        (tmp_path / "_build" / "html" / "index.html").write_text("")

    monkeypatch.setattr(book, "run", run)
    if failures < 2:
        assert build_book(tmp_path / "source", tmp_path) == tmp_path / "_build" / "html" / "index.html"
    else:
        with pytest.raises(subprocess.CalledProcessError):
            build_book(tmp_path / "source", tmp_path)
    assert len(calls) == builds and calls[0] == calls[-1]


def test_the_sessions_prebuild_process_imports_the_course_packages():
    # Started with a whole-suite run (conftest.pytest_sessionstart), it builds the release and the
    # website while the tests run; an import error there would leave every test that needs them to
    # build them itself, one process at a time.
    import conftest

    done = subprocess.run(conftest.prebuild_command(None), cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
