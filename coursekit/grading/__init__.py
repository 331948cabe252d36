"""Grading: a submission's code in a confined worker, the checks in the grader's own process.

================================  =====================================================================
Module                            What it does
================================  =====================================================================
``grader``                        grades one submission against an autograder zip (``python -m
                                  coursekit.grading.grader``, what the zip's ``run_autograder`` runs)
``sandbox``                       the grader's side of the worker: zygotes, workers, limits, messages
``worker``                        the worker itself, forked per submission from a zygote (a script)
``isolation``                     what the worker sees: an allowlist built by bubblewrap
``plain_data``                    values as plain data (no pickle) between worker and grader
``time_limit``                    otter-grader's plugin: a time limit per cell (``CellTimeLimit``)
``fanout``                        one Dask task per submission, on a local or an existing cluster
``gradebook``                     a folder graded into ``scores.csv`` and ``summary.csv`` (``make grade``)
================================  =====================================================================

Nothing is imported here: the worker runs ``worker.py`` and ``plain_data.py`` as scripts, and the
grader's start stays cheap.
"""
