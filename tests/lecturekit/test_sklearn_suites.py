"""scikit-learn's own tests of its naive Bayes and Gaussian mixture estimators, run on lecturekit's.

The suites are those of the installed scikit-learn (``sklearn/tests/test_naive_bayes.py``,
``sklearn/mixture/tests/test_gaussian_mixture.py`` and ``sklearn/mixture/tests/test_mixture.py``),
loaded by ``tests/lecturekit/sklearn_suites.py`` with their ``from sklearn.naive_bayes import ...`` and
``from sklearn.mixture import ...`` bound to lecturekit's classes. Every test function of a suite,
parametrised ones with their marks and fixtures included, is collected here under a class named
after the suite (``TestNaiveBayes::test_gnb``), so a test scikit-learn adds in a new release runs
here too, and fails if lecturekit does not behave the same.

A test is left out only by its name (a pattern over pytest's node name, ``test_x[param-ids]``),
in one of the tables below, each entry with its reason:

* ``PRIVATE`` and ``ARRAY_API`` (skipped): tests of scikit-learn's private helpers, which run
  scikit-learn's code and not ours; tests of the array API, which lecturekit does not support.
* ``MESSAGE`` (strict xfail): tests that fail only because our error message is worded otherwise.
  In them ``pytest.raises(..., match=...)`` and ``pytest.warns(..., match=...)`` still demand the
  exception or warning and its type, but a message that does not match is noted and the test
  goes on to its end; it xfails if it then finished with at least one message noted. Any other
  failure, or no message differing any more, fails here.
* ``ON_PURPOSE`` (strict xfail): behaviour where lecturekit differs from scikit-learn on purpose,
  with the exception our code raises instead (matched by type and message).
* ``PENDING`` (strict xfail): features lecturekit does not have yet. Empty it as they land: a
  pending test that passes fails here (XPASS strict) until its entry is removed.

Tests parametrised with a scikit-learn estimator that lecturekit does not implement
(``BayesianGaussianMixture`` in test_mixture.py) are skipped for that parameter. A lecturekit
class that ``lecturekit.naive_bayes`` does not have (every name of ``sklearn.naive_bayes.__all__`` is
looked up there) is a placeholder whose construction skips the test, so its tests start running
once lecturekit provides it.
The random seed (``global_random_seed``, 42 by default, ``SKLEARN_TESTS_GLOBAL_RANDOM_SEED``
as in scikit-learn) and ``global_dtype`` are scikit-learn's fixtures, defined here as its
conftest.py defines them, except that the float32 tests always run (scikit-learn runs them only
with ``SKLEARN_RUN_FLOAT32_TESTS=1``): lecturekit computes in float64 but stores the fitted
attributes of GaussianNB and GaussianMixture, and their scores, in X's float type, as those tests
check.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import warnings
from dataclasses import dataclass, field

import numpy as np
import pytest
import sklearn.mixture
import sklearn.naive_bayes

from lecturekit.mixture import GaussianMixture
from sklearn_suites import load_suite, missing_class, suite_tests


def lecturekit_class(name: str, module: str) -> type:
    """lecturekit's class ``name`` from ``module``, else a placeholder whose construction skips the test."""
    found = getattr(importlib.import_module(module), name, None)
    if found is not None:
        return found
    return missing_class(name, f"lecturekit has no {name} yet (looked in {module}); its tests run once it does.")


# Every estimator of sklearn.naive_bayes, taken from lecturekit.naive_bayes under the same name: a
# model added to that subpackage (and to its __all__) is run through scikit-learn's suite with no
# change here.
NAIVE_BAYES = {name: lecturekit_class(name, "lecturekit.naive_bayes") for name in sklearn.naive_bayes.__all__}
MIXTURE = {
    "GaussianMixture": GaussianMixture,
    "BayesianGaussianMixture": sklearn.mixture.BayesianGaussianMixture,
}  # not ours: skipped below

SUITES = {
    "TestNaiveBayes": load_suite("tests/test_naive_bayes.py", "naive_bayes", {"sklearn.naive_bayes": NAIVE_BAYES}),
    "TestGaussianMixture": load_suite(
        "mixture/tests/test_gaussian_mixture.py", "gaussian_mixture", {"sklearn.mixture": MIXTURE}
    ),
    "TestMixture": load_suite("mixture/tests/test_mixture.py", "mixture", {"sklearn.mixture": MIXTURE}),
}


# --------------------------------------------------------------------------- what is left out, and why

NOT_OURS = "runs scikit-learn's private helper {} and none of lecturekit's code"
PRIVATE = {  # skipped
    "test_suffstat_sk_full": NOT_OURS.format("_estimate_gaussian_covariances_full"),
    "test_suffstat_sk_tied": NOT_OURS.format("_estimate_gaussian_covariances_tied"),
    "test_suffstat_sk_diag": NOT_OURS.format("_estimate_gaussian_covariances_diag"),
    "test_gaussian_suffstat_sk_spherical": NOT_OURS.format("_estimate_gaussian_covariances_spherical"),
    "test_compute_log_det_cholesky": NOT_OURS.format("_compute_log_det_cholesky"),
    "test_gaussian_mixture_log_probabilities": NOT_OURS.format("_estimate_log_gaussian_prob"),
    "test_gnb_check_update_with_no_data": "calls scikit-learn's private GaussianNB._update_mean_variance",
    "test_check_alpha": "calls scikit-learn's private _BaseDiscreteNB._check_alpha",
    "test_gaussian_mixture_precisions_init": (
        "calls scikit-learn's private GaussianMixture._set_parameters and _initialize"
    ),
    "test_gaussian_mixture_all_init_does_not_estimate_gaussian_parameters": (
        "counts the calls to scikit-learn's private _estimate_gaussian_parameters (by a mock)"
    ),
}
ARRAY_API = {  # skipped
    "test_gnb_array_api_compliance": "array API inputs (SCIPY_ARRAY_API); lecturekit takes NumPy and SciPy arrays",
    "test_gaussian_mixture_array_api_compliance": "array API inputs (SCIPY_ARRAY_API); lecturekit takes NumPy arrays",
    "test_gaussian_mixture_raises_where_array_api_not_implemented": (
        "array API dispatch (SCIPY_ARRAY_API); lecturekit takes NumPy arrays"
    ),
}
OUR_WORDING = "our error message names the problem and the fix in other words"
MESSAGE = {  # strict xfail: every pytest.raises/warns passes except for its `match`
    "test_gnb": OUR_WORDING + " (a label not among partial_fit's classes)",
    "test_gnb_neg_priors": OUR_WORDING + " (negative priors)",
    "test_gnb_wrong_nb_priors": OUR_WORDING + " (one prior per class)",
    "test_gnb_prior_greater_one": OUR_WORDING + " (priors that do not sum to one)",
    "test_NB_partial_fit_no_first_classes[*]": OUR_WORDING + " (no classes on the first partial_fit, other "
    "classes later; ours names the estimator)",
    "test_discretenb_provide_prior[*]": OUR_WORDING + " (one prior per class; a label listed twice in "
    "partial_fit's classes)",
    "test_alpha_vector": OUR_WORDING + " (a negative entry or the wrong length of an alpha array)",
    "test_categoricalnb[*]": OUR_WORDING + " (negative category codes; for the one-class y of the same "
    "test, lecturekit refuses the one class first: see ON_PURPOSE)",
    "test_categoricalnb_min_categories_errors[*]": OUR_WORDING + " (min_categories of the wrong shape)",
    "test_check_weights": OUR_WORDING + " (weights_init's shape, range and sum)",
    "test_check_means": OUR_WORDING + " (means_init's shape)",
    "test_check_precisions": OUR_WORDING + " (precisions_init's shape and definiteness, every covariance_type)",
    "test_gaussian_mixture_fit_convergence_warning": OUR_WORDING + " (the ConvergenceWarning)",
    "test_regularisation": OUR_WORDING + " (a singular covariance with reg_covar=0)",
    "test_sample": OUR_WORDING + " (n_samples < 1)",
    "test_mixture_n_components_greater_than_n_samples_error[*]": OUR_WORDING + " (fewer points than components)",
}
ON_PURPOSE = {  # strict xfail: the test fails by raising this instead
    "test_discretenb_degenerate_one_class_case[True-*]": (
        "one class in y is an error in lecturekit: with one class there is nothing to classify",
        ValueError,
        r"needs at least two classes",
    ),
    "test_discretenb_provide_prior_with_partial_fit[CategoricalNB]": (
        (
            "CategoricalNB refuses category codes that are not integers (iris's 5.1), where scikit-learn "
            "truncates them to 5 without a word"
        ),
        ValueError,
        r"is not a category code",
    ),
    "test_gaussian_mixture_setting_best_params": (
        (
            "with reg_covar=0 a covariance that collapses in an M-step is an error in lecturekit, where "
            "scikit-learn keeps the variance of about 1e-16 that rounding leaves to a component holding "
            "one point"
        ),
        ValueError,
        r"is singular",
    ),
}

# ---- PENDING: features being added to lecturekit (strict xfail). Remove an entry once its test passes. ----
PENDING: dict[str, str] = {  # e.g. "test_warm_start[*]": "pending: GaussianMixture warm_start"
}
# ---- end of PENDING ----


# --------------------------------------------------------------------------- scikit-learn's fixtures


def pytest_generate_tests(metafunc):
    """``global_random_seed``: 42, or the seeds ``SKLEARN_TESTS_GLOBAL_RANDOM_SEED`` names (as in scikit-learn)."""
    if "global_random_seed" in metafunc.fixturenames:
        seeds = os.environ.get("SKLEARN_TESTS_GLOBAL_RANDOM_SEED", "42")
        if seeds == "all":
            seeds = "0-99"
        first, _, last = seeds.partition("-")
        metafunc.parametrize("global_random_seed", range(int(first), int(last or first) + 1))


@pytest.fixture(params=[np.float32, np.float64])
def global_dtype(request):
    return request.param


# --------------------------------------------------------------------------- running a test as classified


class KnownDifference(Exception):
    """A test failed exactly the way its entry in MESSAGE or ON_PURPOSE says it does."""


@dataclass
class Running:
    """What the running test may fail with: reworded messages (MESSAGE) or an exception (ON_PURPOSE)."""

    lenient: bool = False
    reworded: list[str] = field(default_factory=list)
    raises: tuple[type[BaseException], str] | None = None


RUNNING = Running()


def entry(table: dict, name: str):
    """The value of the first pattern in ``table`` that matches the node name ``name``, or None.

    In a pattern only ``*`` is special (any characters); ``[`` and ``]`` are pytest's brackets.
    """
    return next(
        (value for pattern, value in table.items() if re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), name)), None
    )


class SuitePytest:
    """``pytest`` as the suites see it: in a MESSAGE test, ``raises`` and ``warns`` check ``match`` after the fact.

    The exception or warning must still come, of the right type; a message that does not match
    is recorded in ``RUNNING.reworded`` instead of failing at once, so the rest of the test runs.
    """

    def __getattr__(self, name):
        return getattr(pytest, name)

    @staticmethod
    def raises(expected, *args, match=None, **kwargs):
        if args or match is None or not RUNNING.lenient:
            return pytest.raises(expected, *args, match=match, **kwargs)
        return SuitePytest._raises(expected, match, **kwargs)

    @staticmethod
    def warns(expected=Warning, *args, match=None, **kwargs):
        if args or match is None or not RUNNING.lenient:
            return pytest.warns(expected, *args, match=match, **kwargs)
        return SuitePytest._warns(expected, match, **kwargs)

    @staticmethod
    @contextlib.contextmanager
    def _raises(expected, match, **kwargs):
        with pytest.raises(expected, **kwargs) as info:
            yield info
        if re.search(match, str(info.value)) is None:
            RUNNING.reworded.append(f"expected {match!r}, raised {type(info.value).__name__}: {info.value}")

    @staticmethod
    @contextlib.contextmanager
    def _warns(expected, match, **kwargs):
        with pytest.warns(expected, **kwargs) as record:
            yield record
        messages = [str(w.message) for w in record if issubclass(w.category, expected)]
        if not any(re.search(match, message) for message in messages):
            RUNNING.reworded.append(f"expected a warning matching {match!r}, warned {messages}")


@pytest.fixture(autouse=True)
def classified(request):
    """Skip or mark the running test as the tables say, and tell its wrapper what it may fail with."""
    name = request.node.name
    for value in getattr(getattr(request.node, "callspec", None), "params", {}).values():
        cls = value if isinstance(value, type) else type(value)
        if cls.__module__.startswith("sklearn."):
            pytest.skip(f"{cls.__name__} is scikit-learn's; lecturekit does not implement it.")
    RUNNING.lenient, RUNNING.reworded, RUNNING.raises = False, [], None
    if (reason := entry(MESSAGE, name)) is not None:
        RUNNING.lenient = True
    elif (found := entry(ON_PURPOSE, name)) is not None:
        reason, *RUNNING.raises = found
    elif (reason := entry(PENDING, name)) is not None:
        request.node.add_marker(pytest.mark.xfail(strict=True, reason=reason))
    if RUNNING.lenient or RUNNING.raises:
        request.node.add_marker(pytest.mark.xfail(strict=True, raises=KnownDifference, reason=reason))
    yield
    RUNNING.lenient, RUNNING.reworded, RUNNING.raises = False, [], None


def expose(name: str, test):
    """``test`` as ours: raises :class:`KnownDifference` when it fails the way its entry expects.

    A test PRIVATE or ARRAY_API names is replaced by a skipped stub (its parameters not even
    generated: scikit-learn builds the array API ones from a generator).
    """
    if (reason := PRIVATE.get(name, ARRAY_API.get(name))) is not None:

        def skipped():
            pass

        skipped.__name__ = skipped.__qualname__ = name
        return staticmethod(pytest.mark.skip(reason=reason)(skipped))

    @functools.wraps(test)
    def run(*args, **kwargs):
        try:
            result = test(*args, **kwargs)
        except Exception as error:
            if RUNNING.raises and isinstance(error, RUNNING.raises[0]) and re.search(RUNNING.raises[1], str(error)):
                raise KnownDifference(f"{type(error).__name__}: {error}") from error
            raise
        if RUNNING.reworded:
            raise KnownDifference("; ".join(RUNNING.reworded))
        return result

    return staticmethod(run)


for _suite, _module in SUITES.items():
    _module.pytest = SuitePytest()
    globals()[_suite] = type(_suite, (), {name: expose(name, test) for name, test in suite_tests(_module).items()})


def test_every_entry_names_a_test_of_a_suite():
    """An entry whose test scikit-learn renamed or removed would leave nothing out: remove or rename it."""
    names = {name for module in SUITES.values() for name in suite_tests(module)}
    for table in (PRIVATE, ARRAY_API, MESSAGE, ON_PURPOSE, PENDING):
        for pattern in table:
            assert pattern.split("[")[0] in names, f"{pattern!r} names no test of scikit-learn's suites"


def test_the_suites_bind_lecturekit_classes():
    """The rewritten imports give each suite lecturekit's classes, and everything else scikit-learn's."""
    import sklearn.utils._testing

    from lecturekit import naive_bayes

    suite = SUITES["TestNaiveBayes"]
    for name in sklearn.naive_bayes.__all__:
        assert getattr(suite, name) is getattr(naive_bayes, name)
    assert SUITES["TestGaussianMixture"].GaussianMixture is GaussianMixture
    assert SUITES["TestMixture"].GaussianMixture is GaussianMixture
    assert suite.assert_allclose is sklearn.utils._testing.assert_allclose


def test_a_suite_importing_a_name_not_substituted_is_refused():
    with pytest.raises(RuntimeError, match=r"imports \['CategoricalNB'\] from sklearn.naive_bayes"):
        load_suite(
            "tests/test_naive_bayes.py",
            "incomplete",
            {"sklearn.naive_bayes": {k: v for k, v in NAIVE_BAYES.items() if k != "CategoricalNB"}},
        )


def test_message_tests_demand_the_exception_and_note_other_wording():
    suite_pytest = SuitePytest()
    RUNNING.lenient = True
    with suite_pytest.raises(ValueError, match="Priors must be non-negative"):
        raise ValueError("priors must hold non-negative probabilities")
    with suite_pytest.warns(UserWarning, match="did not converge"):
        warnings.warn("EM stopped early", UserWarning, stacklevel=2)
    assert len(RUNNING.reworded) == 2
    with pytest.raises(TypeError), suite_pytest.raises(ValueError, match="anything"):  # wrong type: fails
        raise TypeError("not a ValueError")
    with pytest.raises(pytest.fail.Exception), suite_pytest.raises(ValueError, match="anything"):  # none: fails
        pass
    RUNNING.lenient = False
    with (
        pytest.raises(AssertionError, match="Regex pattern did not match"),  # outside MESSAGE tests: strict
        suite_pytest.raises(ValueError, match="Priors must be non-negative"),
    ):
        raise ValueError("priors must hold non-negative probabilities")
