"""The course pipeline end to end: student versions, the strict book build, no leaks, grading.

These tests run the same code as ``make assignments``, ``make book`` and ``make grade``
(tools/course.py), in temporary folders.
"""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import nbformat
import pytest

from conftest import assignment_masters, course

pytestmark = pytest.mark.slow

MASTERS = assignment_masters()
BAYES = "01.01-Bayes-Rule-and-Maximum-Likelihood"


# --------------------------------------------------------------------------- what must not leak


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
                in_solution_block and not text.startswith("# END SOLUTION"))
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


def readable_text(path: Path) -> str:
    """A file's text as a person would read it: notebook sources, or HTML with entities undone."""
    if path.suffix == ".ipynb":  # notebook JSON escapes quotes and newlines
        nb = nbformat.read(path, as_version=4)
        return "\n".join(c.source for c in nb.cells) + "\n" + str(nb.metadata)
    text = path.read_text(errors="replace")
    return (text.replace("&quot;", '"').replace("&#39;", "'").replace("&lt;", "<")
            .replace("&gt;", ">").replace("&amp;", "&"))


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


STUDENT_REPOSITORY_URL = "https://github.com/example-university/generative-learning-student"


@pytest.fixture(scope="session")
def student_repository(release, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("published") / "student-repository"
    return course.release(out, repository_url=STUDENT_REPOSITORY_URL, student_dir=release / "student")


def test_student_repository_holds_what_students_need_and_no_solution(student_repository):
    root = course.ROOT
    notebooks = sorted(p.name for p in (student_repository / "notebooks").glob("*.ipynb"))
    assert notebooks == [p.name for p in course.master_notebooks()]
    for name in course.STUDENT_REPOSITORY_FILES:
        assert (student_repository / name).exists(), name
    shipped = student_repository / "lecturekit" / "mixture" / "gaussian.py"  # a subpackage travels whole
    assert shipped.read_bytes() == (root / "lecturekit" / "mixture" / "gaussian.py").read_bytes()
    assert not list(student_repository.rglob("__pycache__"))
    post_build = student_repository / "postBuild"
    assert post_build.stat().st_mode & 0o111 and "pip install --no-deps -e ." in post_build.read_text()
    assert "course.py" not in post_build.read_text()  # no masters here to assign from
    leaks = []
    for path in (student_repository / "notebooks").glob("*.ipynb"):
        text = readable_text(path)
        leaks += [f"{path.name}: {marker!r}" for marker in MARKERS if marker in text]
        master = course.MASTERS / path.name
        if course.is_assignment(nbformat.read(master, as_version=4)):
            leaks += [f"{path.name}: {secret!r}" for secret in solution_lines(master) if secret in text]
    assert not leaks, leaks[:10]
    # A notebook's link to a page of the book (the notation page) finds it beside notebooks/.
    pages = {page for path in (student_repository / "notebooks").glob("*.ipynb")
             for page in re.findall(r"\]\(\.\./([\w-]+\.md)\)", path.read_text())}
    assert "notation.md" in pages and all((student_repository / page).is_file() for page in pages), pages
    # The badge opens the notebooks folder on the default branch, not on a tag.
    readme = (student_repository / "README.md").read_text()
    badge = "https://mybinder.org/v2/gh/example-university/generative-learning-student/main?urlpath=lab/tree/notebooks"
    assert f"[![Binder](https://mybinder.org/badge_logo.svg)]({badge})" in readme


def test_launch_buttons_open_the_student_notebook_in_the_student_repository(release, tmp_path):
    """A one-chapter book built with REPOSITORY_URL: Binder and JupyterHub buttons on the chapter."""
    source = course.stage_book(release / "student", tmp_path / "source", repository_url=STUDENT_REPOSITORY_URL,
                               jupyterhub_url="https://hub.example.edu")
    (source / "_toc.yml").write_text(f"format: jb-book\nroot: intro\nchapters:\n  - file: notebooks/{BAYES}\n")
    (source / "intro.md").write_text("# Generative Learning Algorithms\n")
    course.build_book(source, tmp_path, strict=False)  # the chapter links chapters left out of this book
    page = (tmp_path / "_build" / "html" / "notebooks" / f"{BAYES}.html").read_text().replace("&amp;", "&")
    binder = f"{course.binder_url(STUDENT_REPOSITORY_URL)}?urlpath=lab/tree/notebooks/{BAYES}.ipynb"
    assert binder == ("https://mybinder.org/v2/gh/example-university/generative-learning-student/main"
                      f"?urlpath=lab/tree/notebooks/{BAYES}.ipynb")
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


def test_student_notebooks_are_clean(release):
    for path in (release / "student").glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code":
                assert cell.execution_count is None and cell.outputs == [], f"{path.name}: stored outputs"
            assert "execution" not in cell.metadata


# --------------------------------------------------------------------------- the website


def test_book_has_every_chapter_executed_with_figures(built_book):
    html = built_book / "html"
    assert (html / "index.html").exists()
    for master in course.master_notebooks():
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
        errors = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
        assert not errors, f"{path.name}: {errors[0]['ename']}: {errors[0]['evalue']}"


def test_website_hides_failing_check_noise(built_book):
    page = (built_book / "html" / "notebooks" / f"{BAYES}.html").read_text()
    assert 'grader.check' in page  # the prompt tells students how to check...
    assert "results:" not in page and "Initialize Otter" not in page  # ...but shows no failing output


# --------------------------------------------------------------------------- grading


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
    "q5": "q5 = 0.01878\n",
    "q6": 'q6 = {"f", "d", "b"}\n',
}


@pytest.fixture(scope="module")
def graded(release, tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    cases = {
        # Whole notebooks, lecture included (tests/test_grader.py grades hostile and broken ones).
        # The instructor's own solutions, as otter assign wrote them.
        "solutions": nbformat.read(release / "assign" / BAYES / "autograder" / f"{BAYES}.ipynb", as_version=4),
        "independent-correct": submission(release, CORRECT),
        "blank": submission(release, {}),
        # q1 passes its public test by hard-coding it but fails the hidden one (0 of 3: public tests
        # give no points);
        # q2 forgets the kK in the denominator (0 of 3); q3 is right (3 of 3).
        "wrong": submission(release, {
            "positive_predictive_value": "def positive_predictive_value(prevalence, sensitivity, specificity):\n"
                                         "    return 0.009 / 0.0585\n",
            "add_k_estimate": "def add_k_estimate(counts, k):\n"
                              "    counts = np.asarray(counts, dtype=float)\n"
                              "    return (counts + k) / counts.sum()\n",
            "classify": CORRECT["classify"],
        }),
    }
    for name, nb in cases.items():
        (folder / name).mkdir()
        nbformat.write(nb, folder / name / f"{BAYES}.ipynb")
    rows = course.grade(folder, folder / "scores.csv", release / "autograder")
    with (folder / "scores.csv").open() as handle:
        table = {row["submission"].split("/")[0]: row for row in csv.DictReader(handle)}
    assert len(rows) == len(cases) == len(table)
    return table


@pytest.mark.parametrize(
    "case, expected",
    [
        ("solutions", {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3, "total": 19}),
        ("independent-correct", {"q1": 3, "q2": 3, "q3": 3, "q4": 4, "q5": 3, "q6": 3, "total": 19}),
        ("blank", {"q1": 0, "q2": 0, "q3": 0, "q4": 0, "q5": 0, "q6": 0, "total": 0}),
        ("wrong", {"q1": 0, "q2": 0, "q3": 3, "q4": 0, "total": 3}),
    ],
)
def test_grading(graded, case, expected):
    row = graded[case]
    assert row["error"] == "", row["error"]
    assert float(row["possible"]) == 19
    got = {key: float(row[key]) for key in expected}
    assert got == expected


def test_grade_reports_a_missing_autograder(tmp_path):
    (tmp_path / "subs").mkdir()
    nb = nbformat.v4.new_notebook()
    nb.metadata["otter"] = {"assignment_name": "no-such-assignment"}
    nbformat.write(nb, tmp_path / "subs" / "x.ipynb")
    rows = course.grade(tmp_path / "subs", tmp_path / "scores.csv", tmp_path)
    assert "make assignments" in rows[0]["error"] and rows[0]["total"] == 0


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
            assert "lecturekit.grading.CellTimeLimit" in config


def test_autograder_zip_is_self_contained_for_a_grading_image(release, tmp_path):
    """What a grading image (Gradescope's, or otter grade's) needs beyond otter: pins, lecturekit, data.

    Otter puts the zip in /autograder/source and copies files/ next to each submission; this test
    does the same into a temporary folder and imports lecturekit from there, not from the checkout.
    """
    import subprocess
    import sys
    import zipfile

    root = course.ROOT
    pins = course.pinned_requirements()
    for master in MASTERS:
        with zipfile.ZipFile(release / "autograder" / f"{master.stem}-autograder.zip") as archive:
            names = set(archive.namelist())
            for path in [*(root / "lecturekit").rglob("*.py"), *(root / "data").iterdir(),
                         root / "pyproject.toml"]:
                name = f"files/{path.relative_to(root).as_posix()}"
                assert name in names, name
                assert archive.read(name) == path.read_bytes(), name
            environment = archive.read("environment.yml").decode()
            assert f"- python={course.course_python()}" in environment
            for pin in pins:
                assert pin.replace("otter-grader", "otter-grader[grading,plugins]") in environment, pin
            assert f"- {course.GRADER_SOURCE}/files" in environment
    with zipfile.ZipFile(release / "autograder" / f"{MASTERS[0].stem}-autograder.zip") as archive:
        archive.extractall(tmp_path / "source")
    submission = tmp_path / "submission"
    shutil.copytree(tmp_path / "source" / "files", submission)
    # Hide the checkout's editable install, as in a grading image where only the zip exists.
    probe = (
        "import sys; sys.meta_path = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]; "
        "sys.path = [p for p in sys.path if p not in ('', '.')]; sys.path.insert(0, '.'); "
        "import lecturekit, lecturekit.grading, lecturekit.datasets as d; "
        "print(lecturekit.__file__); print(d.load_old_faithful().shape, len(d.load_sms_spam()[0]))"
    )
    result = subprocess.run([sys.executable, "-c", probe], cwd=submission, capture_output=True, text=True,
                            check=True)
    where, sizes = result.stdout.splitlines()
    assert Path(where).resolve().is_relative_to(submission.resolve())
    assert sizes.startswith("(272, 2)")
    # pip can build lecturekit from the zip's files/ (what the environment's last line installs).
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path / "wheel"),
                    str(tmp_path / "source" / "files")], check=True, capture_output=True)
    (wheel,) = (tmp_path / "wheel").glob("lecturekit-*.whl")
    with zipfile.ZipFile(wheel) as built:
        assert "lecturekit/grading.py" in built.namelist()


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


def test_public_checks_fail_on_the_blank_website_version(built_book):
    executed = nbformat.read(built_book / "jupyter_execute" / "notebooks" / f"{BAYES}.ipynb", as_version=4)
    outputs = check_outputs(executed)
    assert set(outputs) == {f"q{i}" for i in range(1, 7)}
    for question, text in outputs.items():
        assert "results:" in text and "All test cases passed" not in text, (question, text[:300])


def test_public_checks_pass_for_a_correct_answer(release, tmp_path):
    from nbclient import NotebookClient

    nb = submission(release, CORRECT)
    shutil.copy2(release / "student" / f"{BAYES}.ipynb", tmp_path / f"{BAYES}.ipynb")  # otter reads it
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = check_outputs(nb)
    assert set(outputs) == {f"q{i}" for i in range(1, 7)}
    for question, text in outputs.items():
        assert "All test cases passed" in text, (question, text[:300])


@pytest.mark.parametrize("failures, builds", [(1, 2), (2, 2)])
def test_a_failed_book_build_is_tried_once_more(monkeypatch, tmp_path, failures, builds):
    # A kernel that lost its port to another process fails one build; the second uses the cache.
    # A build that fails twice (a real error) raises.
    calls = []

    def run(command, **kwargs):
        calls.append(command)
        if len(calls) <= failures:
            raise course.subprocess.CalledProcessError(1, command)
        (tmp_path / "_build" / "html").mkdir(parents=True)
        (tmp_path / "_build" / "html" / "index.html").write_text("")

    monkeypatch.setattr(course, "run", run)
    if failures < 2:
        assert course.build_book(tmp_path / "source", tmp_path) == tmp_path / "_build" / "html" / "index.html"
    else:
        with pytest.raises(course.subprocess.CalledProcessError):
            course.build_book(tmp_path / "source", tmp_path)
    assert len(calls) == builds and calls[0] == calls[-1]
