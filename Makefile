# Generative Learning Algorithms: every command a reader, a student or an instructor needs.
# Each target sets up the virtual environment first if it is missing or out of date, then runs a
# command of the course's machinery, `python -m coursekit COMMAND` (`python -m coursekit --help`).
#
#   make book          set up, generate the student notebooks, execute them, build _build/html and,
#                      where Chromium is installed, the PDF the website links to
#   make pdf           the same, failing without Chromium: the whole course as one PDF,
#                      _build/pdf/generative-learning-algorithms.pdf, also copied beside the website
#   make test          set up, lint, and run the whole test suite (what CI runs)
#   make lint          ruff check and ruff format --check over the whole tree, notebooks included
#   make check-release what only a release needs besides `make test`: the whole course printed as a
#                      PDF and checked (the tests marked `release`), and every catalogued wrong
#                      answer of every notebook graded, on variant 0 and three drawn variants
#                      (python -m coursekit exercises check --variants 3)
#   make lab           JupyterLab on the student notebooks
#   make assignments   student notebooks (dist/student) and autograder zips (dist/autograder);
#                      ROSTER=roster.csv SECRET=~/.config/course-secret: also each student's own
#                      notebooks, their own numbers and option orders (dist/student/<id>/);
#                      GRADESCOPE=1 puts the secret in the zips, for Gradescope to grade each own variant
#   make release       the student repository to publish (dist/student-repository)
#   REPOSITORY_URL=... (with book or release) the published student repository: launch buttons,
#                      Binder badge; REPOSITORY_BRANCH (default main), JUPYTERHUB_URL optional
#   make grade SUBMISSIONS=folder   grade every .ipynb under folder into folder/scores.csv, each
#                      student's code confined by bubblewrap (it stops where bubblewrap cannot run;
#                      UNISOLATED=1 grades anyway, unconfined), each sandbox bounded as a whole by a
#                      cgroup (UNBOUNDED=1 grades where none can be made), on a Dask cluster of this machine;
#                      SCHEDULER=tcp://host:8786 grades on an existing Dask cluster instead; then writes
#                      the report below; ROSTER=... SECRET=... (as for make assignments, the notebooks
#                      in SUBMISSIONS/<id>/): each graded on its owner's variant, flagged if it carries another's
#   make report SUBMISSIONS=folder  folder/report.html from folder/scores.csv (per assignment the
#                      totals, each question's facility, discrimination and most frequent named
#                      mistakes, pairs sharing unusual wrong answers) and folder/gradebook.csv
#                      (each student's totals, for Canvas or Moodle)
#   make bench         benchmarks against scikit-learn
#   make lock          re-freeze constraints.txt after changing requirements.txt

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
SUBMISSIONS ?= submissions
SCHEDULER ?=
ROSTER ?=
SECRET ?=

.PHONY: setup book pdf lint test check-release lab assignments release grade report bench lock clean

setup: $(STAMP)

$(STAMP): requirements.txt constraints.txt pyproject.toml package.json package-lock.json
	@echo "[course] set up: MathJax (npm), the virtual environment and the pinned packages ..."
	@start=$$(date +%s) && set -x && \
	npm ci --no-audit --no-fund --loglevel=error && \
	$(PYTHON) -m venv $(VENV) && \
	$(PY) -m pip install --quiet -r requirements.txt -c constraints.txt && \
	$(PY) -m pip install --quiet --no-deps -e . && \
	touch $(STAMP) && { set +x; } 2>/dev/null && \
	echo "[course] set up: done in $$(( $$(date +%s) - start )) s"

book: $(STAMP)
	$(PY) -m coursekit book
	$(PY) -m coursekit pdf --if-chromium

pdf: $(STAMP)
	$(PY) -m coursekit book
	$(PY) -m coursekit pdf

# ruff (pinned in requirements.txt) with the rules of pyproject.toml's [tool.ruff] and, for the master
# notebooks, notebooks/ruff.toml: lecturekit/, coursekit/, tests/, benchmarks/, _ext/ and notebooks/ are
# linted and formatted as ruff formats them (ruff skips .venv, _build, dist and what .gitignore names).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

# `make test` lints first: CI (.ci/run) fails in seconds on a lint error, before the suite's minutes.
# -rs: say why a test skipped (the browser tests say how to install Chromium). One BLAS thread per
# process: the suite already runs two test processes and the book build side by side, and BLAS
# threads on top of them made the mixture tests several times slower.
test: lint
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -rs

check-release: $(STAMP)
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m pytest -rs -m release
	$(PY) -m coursekit exercises check notebooks/*.ipynb --variants 3

assignments: $(STAMP)
	$(PY) -m coursekit assign $(if $(ROSTER),--roster $(ROSTER)) $(if $(SECRET),--secret $(SECRET)) \
		$(if $(filter 1 yes true,$(GRADESCOPE)),--secret-in-zips)

release: $(STAMP)
	$(PY) -m coursekit release

lab: assignments
	$(VENV)/bin/jupyter lab dist/student

grade: $(STAMP)
	$(PY) -m coursekit grade $(SUBMISSIONS) $(if $(filter 1 yes true,$(UNISOLATED)),--unisolated) \
		$(if $(filter 1 yes true,$(UNBOUNDED)),--unbounded) \
		$(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
		$(if $(ROSTER),--roster $(ROSTER)) $(if $(SECRET),--secret $(SECRET))

report: $(STAMP)
	$(PY) -m coursekit report $(SUBMISSIONS)

bench: $(STAMP)
	$(PY) benchmarks/run.py

lock: requirements.txt
	rm -rf .lock-venv && $(PYTHON) -m venv .lock-venv
	.lock-venv/bin/pip install --quiet -r requirements.txt
	{ sed -n '1,2p' constraints.txt; .lock-venv/bin/pip freeze --exclude-editable; } > constraints.tmp
	mv constraints.tmp constraints.txt && rm -rf .lock-venv

clean:
	rm -rf _build dist .pytest_cache .hypothesis node_modules
