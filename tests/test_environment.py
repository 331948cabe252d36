"""One source of truth for versions, and the two commands the README promises."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def pins(lines) -> dict[str, str]:
    found = {}
    for line in lines:
        line = line.split("#")[0].strip().lstrip("- ").strip()
        match = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if match:
            found[match.group(1).lower().replace("_", "-")] = match.group(2)
    return found


def requirement_pins() -> dict[str, str]:
    return pins((ROOT / "requirements.txt").read_text().splitlines())


def test_requirements_pin_the_course_toolchain():
    required = requirement_pins()
    for package in [
        "jupyter-book",
        "sphinx",
        "myst-nb",
        "nbval",
        "jupyterlab",
        "otter-grader",
        "numpy",
        "matplotlib",
        "scipy",
        "scikit-learn",
        "pytest",
        "hypothesis",
    ]:
        assert package in required, f"{package} is not pinned in requirements.txt"
    assert required["jupyter-book"].startswith("1."), "the course is a Jupyter Book 1 book"


def test_environment_yml_agrees_with_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    conda = [d for d in deps if isinstance(d, str)]
    pip_section = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert {d.split("=")[0] for d in conda} == {"python", "pip"}, "conda installs only python and pip"
    assert pins(pip_section) == requirement_pins()
    python = next(d for d in conda if d.startswith("python"))
    assert tuple(int(x) for x in python.split("=")[1].split(".")) >= (3, 11)


def test_constraints_freeze_the_same_versions():
    frozen = pins((ROOT / "constraints.txt").read_text().splitlines())
    for package, version in requirement_pins().items():
        assert frozen.get(package) == version, f"constraints.txt has {package}=={frozen.get(package)}"


def test_installed_versions_are_the_pinned_ones():
    from importlib.metadata import version

    for package, pinned in requirement_pins().items():
        assert version(package) == pinned, f"{package} {version(package)} is installed, {pinned} is pinned"


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    commands = re.findall(r"^\s*(make \w+)\s*$", readme, flags=re.M)
    assert "make test" in commands and "make book" in commands, "README must show both commands"
    assert re.search(r"^make test$", ci, flags=re.M), ".ci/run must call the README's `make test`"
    # The two commands come first: before any other section of the README.
    first_section = readme.split("\n## ", 2)[:2]
    assert "make book" in "\n".join(first_section) and "make test" in "\n".join(first_section)


def test_binder_install_keeps_the_corpora_reachable():
    # lecturekit.datasets reads data/ next to lecturekit/ in the checkout: a regular install into
    # site-packages would leave the chapter 3 notebooks without their data on Binder.
    from lecturekit.datasets import DATA_DIR

    post_build = (ROOT / "postBuild").read_text()
    assert "pip install --no-deps -e ." in post_build
    assert DATA_DIR == ROOT / "data" and (DATA_DIR / "README.md").is_file()
