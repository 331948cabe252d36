"""Gradescope's side: the submission's owner from its metadata, and results.json."""

from __future__ import annotations

import json

import pytest

from coursekit.grading.gradescope import gradescope_results, gradescope_seed
from coursekit.variants import variant_seed


def test_gradescope_grades_the_variant_of_the_submissions_owner(tmp_path):
    """run_autograder passes submission_metadata.json and the zip's secret: the owner is the first user's SID."""
    secret = tmp_path / "variant-secret"
    secret.write_bytes(b"s" * 32)
    metadata = tmp_path / "submission_metadata.json"
    metadata.write_text(json.dumps({"users": [{"email": "ann@example.org", "sid": "s042"}, {"sid": "s043"}]}))
    seed = gradescope_seed(metadata, secret, "04.02-MAP-Estimation")
    assert seed == variant_seed(b"s" * 32, "s042", "04.02-MAP-Estimation") != 0
    metadata.write_text(json.dumps({"users": [{"email": "ann@example.org", "sid": ""}]}))
    with pytest.raises(SystemExit, match="set the students' SIDs to the roster's ids"):
        gradescope_seed(metadata, secret, "04.02-MAP-Estimation")


def test_results_give_each_question_its_score_and_reason_and_a_failure_its_error():
    graded = {"questions": {"q1": {"score": 2.0, "possible": 4, "reason": "failed 1 of 2 tests"}}, "confinement": "x"}
    results = gradescope_results(graded)
    assert results["score"] == 2.0 and results["tests"][0]["max_score"] == 4
    assert results["tests"][0]["output"] == "failed 1 of 2 tests" and results["extra_data"] == {"confinement": "x"}
    failed = gradescope_results({"error": "not a readable notebook"})
    assert failed["score"] == 0 and "not a readable notebook" in failed["output"] and failed["tests"] == []
