"""Grading: a submission's code in a confined worker, the checks in processes of the grader's own.

================================  =====================================================================
Module                            What it does
================================  =====================================================================
``grader``                        grades one submission against an autograder zip (``python -m
                                  coursekit.grading.grader``, what the zip's ``run_autograder`` runs)
``submission``                    a submitted notebook, read within bounds: its cells, whose answer each is
``untrusted``                     bytes from a submission: JSON parsed within bounds, text made plain
``checking``                      a question's check in a process of its own, killed at its deadline
``sandbox``                       the grader's end of one submission's worker: requests, limits, replies
``zygote``                        where workers come from: a zygote per sandbox, bounded, kept by a pool
``worker``                        the worker itself, forked per submission from a zygote (a script)
``isolation``                     what the worker sees: an allowlist built by bubblewrap
``syscalls``                      what the worker may not ask of the kernel: a seccomp filter
``limits``                        a sandbox bounded as a whole: memory, tasks and CPU, by a cgroup
``cgroupfs``                      which cgroups a machine offers (v1, v2, systemd scopes), and where
``unprivileged``                  where bubblewrap cannot run: the worker as a user of its own
``plain_data``                    values as plain data (no pickle) between worker and grader
``time_limit``                    otter-grader's plugin: a time limit per cell (``CellTimeLimit``)
``fanout``                        one Dask task per submission, on a local or an existing cluster
``variant``                       a student's variant: each question's numbers and option order, from a seed
``owners``                        whose a submission is, which variant it is graded on, whose it carries
``gradescope``                    Gradescope's side: a submission's owner from its metadata, ``results.json``
``gradebook``                     a folder graded into ``scores.csv`` and ``summary.csv`` (``make grade``)
``item_analysis``                 the numbers of the report: facility, discrimination, named mistakes, pairs
``export``                        the totals as ``gradebook.csv``, which Canvas and Moodle import
``report``                        the instructor's report, ``report.html`` (``make report``)
================================  =====================================================================

Nothing is imported here: the worker runs ``worker.py`` and ``plain_data.py`` as scripts, and the
grader's start stays cheap.
"""
