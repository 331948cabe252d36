"""Tests of lecturekit.naive_bayes, one file per module of the subpackage.

This file makes the folder a package, so that pytest can import test files with the same name in
other folders (test_gaussian.py tests lecturekit/gaussian.py, naive_bayes/gaussian.py and
mixture/gaussian.py).
"""
