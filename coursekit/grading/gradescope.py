"""Gradescope's side of the grader: whose a submission is, and the results in Gradescope's format.

An autograder zip's ``run_autograder`` (:mod:`coursekit.build.assign`) grades ``/autograder/submission``
with :mod:`coursekit.grading.grader`; with the course secret in the zip (``make assignments ... GRADESCOPE=1``)
it grades the owner's own variant, the owner being the first user of ``submission_metadata.json``
(:func:`gradescope_seed`), and writes ``results.json`` (:func:`gradescope_results`).

Derived for the grading pipeline described in the instructor guide; not part of the lecture.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["gradescope_results", "gradescope_seed"]


def gradescope_seed(metadata: Path, secret_path: Path, assignment: str) -> int:
    """The seed of the owner of a Gradescope submission: its first user's ``sid`` (the roster's id)."""
    from coursekit.variants import variant_seed

    users = json.loads(metadata.read_text()).get("users") or [{}]
    student = str(users[0].get("sid") or "").strip()
    if not student:
        raise SystemExit(f"{metadata} names no student id (users[0].sid): set the students' SIDs to the roster's ids")
    return variant_seed(secret_path.read_bytes(), student, assignment)


def gradescope_results(result: dict) -> dict:
    """A grading result in Gradescope's ``results.json`` format.

    Parameters
    ----------
    result : dict
        What :func:`grade_submission` returned.

    Returns
    -------
    dict
        One test per question (its score, points and the reason points were lost), and the total.
    """
    if result.get("error"):
        return {
            "score": 0,
            "output": f"This submission could not be graded: {result['error']}",
            "tests": [],
            "extra_data": {"confinement": result.get("confinement", "")},
        }
    tests = [
        {"name": q, "score": e["score"], "max_score": e["possible"], "output": e["reason"], "visibility": "visible"}
        for q, e in result["questions"].items()
    ]
    # How the code was confined is for the course's staff (extra_data), not for the student.
    return {
        "score": sum(t["score"] for t in tests),
        "tests": tests,
        "output": "Your notebook's cells ran first, then each question's tests.",
        "extra_data": {"confinement": result.get("confinement", "")},
    }
