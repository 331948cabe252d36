"""Building the course from its masters: what students, readers and the grader receive.

``assign`` (student notebooks and autograder zips, ``make assignments``), ``book`` (the website,
``make book``), ``pdf`` (the course as one PDF, ``make pdf``) and ``release`` (the student
repository, ``make release``), each a command of ``python -m coursekit``.
"""
