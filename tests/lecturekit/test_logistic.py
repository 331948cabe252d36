"""Tests of lecturekit.logistic (chapter 02.05: GDA against logistic regression)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy.optimize import check_grad
from scipy.special import expit
from sklearn.datasets import load_breast_cancer, make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression as SklearnLogisticRegression
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.logistic import LogisticRegression


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    return StandardScaler().fit_transform(X), y


@pytest.fixture(scope="module")
def synthetic():
    # n_redundant=0: with C=np.inf a redundant (collinear) feature would make the optimum non-unique.
    return make_classification(n_samples=400, n_features=6, n_informative=4, n_redundant=0, flip_y=0.1, random_state=0)


def penalised_objective(theta, X, y, C, fit_intercept):
    """C * sum of log-losses + ||w||^2 / 2, written independently of the module under test."""
    w, b = (theta[:-1], theta[-1]) if fit_intercept else (theta, 0.0)
    margins = (2 * y - 1) * (X @ w + b)
    return C * np.logaddexp(0.0, -margins).sum() + 0.5 * w @ w


def penalised_gradient(theta, X, y, C, fit_intercept):
    w, b = (theta[:-1], theta[-1]) if fit_intercept else (theta, 0.0)
    residual = expit(X @ w + b) - y
    grad_w = C * X.T @ residual + w
    return np.append(grad_w, C * residual.sum()) if fit_intercept else grad_w


def parameters(model):
    return np.append(model.coef_[0], model.intercept_) if model.fit_intercept else model.coef_[0]


# --------------------------------------------------------------------------- against scikit-learn


@pytest.mark.parametrize("data", ["cancer", "synthetic"])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C", [0.1, 1.0, 100.0])
def test_newton_matches_sklearn(data, fit_intercept, C, request):
    X, y = request.getfixturevalue(data)
    ours = LogisticRegression(C=C, fit_intercept=fit_intercept).fit(X, y)
    # newton-cholesky is scikit-learn's tightest solver here (lbfgs stops ~1e-4 away at C=100).
    reference = SklearnLogisticRegression(
        C=C, fit_intercept=fit_intercept, solver="newton-cholesky", tol=1e-12, max_iter=10_000
    ).fit(X, y)
    # The two agree to ~1e-13 on this machine; 1e-5 leaves room for other BLAS builds.
    np.testing.assert_allclose(ours.coef_, reference.coef_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, reference.intercept_, rtol=0, atol=1e-5)
    np.testing.assert_allclose(ours.predict_proba(X), reference.predict_proba(X), rtol=0, atol=1e-6)
    assert np.array_equal(ours.predict(X), reference.predict(X))
    assert ours.coef_.shape == (1, X.shape[1]) and ours.intercept_.shape == (1,)
    assert 1 <= ours.n_iter_ <= 20 and ours.n_features_in_ == X.shape[1]


def test_no_penalty_matches_sklearn_maximum_likelihood(synthetic):
    X, y = synthetic
    ours = LogisticRegression(C=np.inf).fit(X, y)
    reference = SklearnLogisticRegression(C=np.inf, solver="newton-cholesky", tol=1e-12).fit(X, y)
    np.testing.assert_allclose(parameters(ours), np.append(reference.coef_, reference.intercept_), atol=1e-5)


def test_gradient_vanishes_at_the_newton_solution(cancer):
    X, y = cancer
    C = 1.0
    # First make sure the test's own gradient is the gradient of the test's objective.
    theta = np.random.default_rng(0).normal(scale=0.1, size=X.shape[1] + 1)
    error = check_grad(penalised_objective, penalised_gradient, theta, X, y, C, True)
    assert error < 1e-4 * np.linalg.norm(penalised_gradient(theta, X, y, C, True))

    model = LogisticRegression(C=C).fit(X, y)
    assert np.linalg.norm(penalised_gradient(parameters(model), X, y, C, True)) < 1e-8
    # The check can fail: the optimum for another C is not a stationary point of this objective.
    other = parameters(LogisticRegression(C=10 * C).fit(X, y))
    assert np.linalg.norm(penalised_gradient(other, X, y, C, True)) > 1e-1


def test_newton_loss_history_falls_from_log_two(cancer):
    X, y = cancer
    model = LogisticRegression(C=1.0, keep_history=True).fit(X, y)
    losses = model.loss_history_
    assert losses.shape == (model.n_iter_,) and len(model.history_) == model.n_iter_
    assert losses[0] < np.log(2)  # below the start, where all parameters are zero and p = 1/2
    assert np.all(np.diff(losses) <= 1e-15)
    # The last entry is the penalised negative log-likelihood per example at the solution.
    expected = penalised_objective(parameters(model), X, y, 1.0, True) / (1.0 * len(y))
    assert losses[-1] == pytest.approx(expected, rel=1e-12)
    coef, intercept = model.history_[-1]
    np.testing.assert_array_equal(coef, model.coef_)
    np.testing.assert_array_equal(intercept, model.intercept_)


# --------------------------------------------------------------------------- gradient ascent


@pytest.fixture(scope="module")
def blobs():
    """Two overlapping, nearly round classes in the plane: a well-conditioned problem."""
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 100)
    X = rng.normal(size=(200, 2)) + np.where(y[:, None] == 1, 0.75, -0.75)
    return X, y


def test_gradient_ascent_reaches_the_newton_solution_monotonically(blobs):
    X, y = blobs
    C, max_iter = 1.0, 400
    design = np.column_stack([X, np.ones(len(X))])
    lipschitz = (0.25 * np.linalg.eigvalsh(design.T @ design)[-1] + 1 / C) / len(X)
    newton = LogisticRegression(C=C).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # tol=0 asks for exactly max_iter steps: no warning
        ascent = LogisticRegression(
            C=C, solver="gradient", learning_rate=1 / lipschitz, max_iter=max_iter, tol=0.0, keep_history=True
        ).fit(X, y)
    assert ascent.n_iter_ == max_iter and len(ascent.history_) == max_iter
    assert ascent.loss_history_.shape == (max_iter,)
    np.testing.assert_allclose(ascent.coef_, newton.coef_, atol=1e-4)
    np.testing.assert_allclose(ascent.intercept_, newton.intercept_, atol=1e-4)
    # The log-likelihood never decreases (the loss never rises), up to rounding of the last digits.
    log_likelihood = np.append(-np.log(2), -ascent.loss_history_)  # from the start, theta = 0
    assert np.all(np.diff(log_likelihood) >= -4 * np.finfo(float).eps)
    assert log_likelihood[-1] > log_likelihood[0] + 0.1
    # The history holds copies: the boundary really moves between snapshots.
    first, last = ascent.history_[0], ascent.history_[-1]
    assert first[0].shape == (1, 2) and first[1].shape == (1,)
    assert not np.allclose(first[0], last[0])
    np.testing.assert_array_equal(last[0], ascent.coef_)


def test_gradient_ascent_with_too_large_a_step_is_not_monotone(blobs):
    """The monotonicity above depends on the step size: the check could fail."""
    X, y = blobs
    with pytest.warns(ConvergenceWarning, match="did not reach tol"):
        ascent = LogisticRegression(solver="gradient", learning_rate=60.0, max_iter=50).fit(X, y)
    assert np.any(np.diff(ascent.loss_history_) > 1e-3)


def test_gradient_ascent_stops_early_when_the_gradient_vanishes(blobs):
    X, y = blobs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = LogisticRegression(solver="gradient", learning_rate=5.0, max_iter=5_000, tol=1e-8).fit(X, y)
    assert model.n_iter_ < 5_000 and not hasattr(model, "history_")


# --------------------------------------------------------------------------- separable data


def test_separable_data_without_penalty_warns_and_names_the_fix():
    X = np.array([[-2.0], [-1.0], [1.0], [2.0]])
    y = np.array([0, 0, 1, 1])
    for solver in ("newton", "gradient"):
        with pytest.warns(ConvergenceWarning, match=r"linearly separable.*finite C"):
            model = LogisticRegression(C=np.inf, solver=solver).fit(X, y)
        assert np.all(np.isfinite(model.coef_)) and np.array_equal(model.predict(X), y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a finite C has a finite optimum: no warning at all
        model = LogisticRegression(C=1.0).fit(X, y)
    assert np.array_equal(model.predict(X), y)


def test_newton_out_of_iterations_warns(cancer):
    X, y = cancer
    with pytest.warns(ConvergenceWarning, match="did not reach tol.*Increase max_iter"):
        model = LogisticRegression(max_iter=1).fit(X, y)
    assert model.n_iter_ == 1


def test_labels_of_any_type_and_order():
    X, y = make_classification(n_samples=200, n_features=3, n_redundant=0, random_state=1)
    base = LogisticRegression().fit(X, y)
    named = LogisticRegression().fit(X, np.where(y == 1, "spam", "ham"))
    assert named.classes_.tolist() == ["ham", "spam"]
    np.testing.assert_allclose(named.coef_, base.coef_, atol=1e-12)
    # Swapping which class is "positive" flips the sign of every parameter.
    swapped = LogisticRegression().fit(X, np.where(y == 1, -1, 7))
    assert swapped.classes_.tolist() == [-1, 7]
    np.testing.assert_allclose(swapped.coef_, -base.coef_, atol=1e-10)
    np.testing.assert_allclose(swapped.intercept_, -base.intercept_, atol=1e-10)
    proba = named.predict_proba(X)
    assert np.array_equal(named.predict(X), named.classes_[proba.argmax(axis=1)])
    np.testing.assert_allclose(np.exp(named.predict_log_proba(X)), proba, rtol=1e-12)


# --------------------------------------------------------------------------- scikit-learn protocol

# Every check passes. scikit-learn itself skips one, which is therefore listed neither here nor as
# an xfail: check_array_api_input runs only with SCIPY_ARRAY_API=1, and this model is NumPy-only.
# The estimator declares itself binary-only (tags.classifier_tags.multi_class = False), so the
# checks train it on two classes and check_classifier_not_supporting_multiclass checks the refusal.
EXPECTED_FAILED_CHECKS: dict[str, str] = {}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # gradient ascent on tiny data
@parametrize_with_checks(
    [
        LogisticRegression(),
        LogisticRegression(fit_intercept=False),
        LogisticRegression(solver="gradient", max_iter=2_000, tol=1e-6),
    ],
    expected_failed_checks=lambda estimator: EXPECTED_FAILED_CHECKS,
    xfail_strict=True,
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_binary_only_tag():
    assert LogisticRegression().__sklearn_tags__().classifier_tags.multi_class is False


# --------------------------------------------------------------------------- invariants


@st.composite
def binary_problems(draw):
    n = draw(st.integers(4, 30))
    d = draw(st.integers(1, 4))
    X = draw(hnp.arrays(np.float64, (n, d), elements=st.floats(-10, 10, allow_subnormal=False)))
    y = draw(hnp.arrays(np.int8, n, elements=st.integers(0, 1)).filter(lambda v: 0 < v.sum() < v.size))
    return X, y


@settings(max_examples=60, deadline=None)
@given(problem=binary_problems(), scale=st.sampled_from([1.0, 1e3, 1e6, -1e6]))
def test_predict_proba_is_a_distribution_even_for_huge_inputs(problem, scale):
    X, y = problem
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error", RuntimeWarning)
        model = LogisticRegression(C=1.0).fit(X, y)
        proba = model.predict_proba(X * scale)
        log_proba = model.predict_log_proba(X * scale)
    assert proba.shape == (len(y), 2)
    assert np.all(np.isfinite(proba)) and np.all((proba >= 0) & (proba <= 1))
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert np.all(np.isfinite(log_proba)) and np.all(log_proba <= 0)


def test_huge_margins_are_exact_and_silent():
    model = LogisticRegression(C=1.0).fit([[-1.0], [1.0], [-2.0], [2.0]], [0, 1, 0, 1])
    w = model.coef_[0, 0]
    x = np.array([[1e6], [-1e6]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        proba, log_proba = model.predict_proba(x), model.predict_log_proba(x)
    np.testing.assert_array_equal(proba, [[0.0, 1.0], [1.0, 0.0]])
    z = model.decision_function(x)
    np.testing.assert_allclose(log_proba, [[-z[0], 0.0], [0.0, z[1]]], rtol=1e-12)
    assert z[0] == pytest.approx(1e6 * w + model.intercept_[0], rel=1e-12)
    # Fitting on inputs scaled by 1e6 is silent as well (and the weights shrink by 1e6).
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        LogisticRegression(C=1.0).fit([[-1e6], [1e6], [-2e6], [2e6], [0.5e6]], [0, 1, 0, 1, 0])


# --------------------------------------------------------------------------- bad input


X3 = [[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 2.0, 0.0]]


@pytest.fixture(scope="module")
def fitted():
    return LogisticRegression().fit(X3, [0, 1, 1])


def fit(**params):
    """Fit a fresh model with ``params`` to labels ``y`` on the three points X3."""
    return lambda y: LogisticRegression(**params).fit(X3, y)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda m: LogisticRegression().fit([[np.nan, 1.0], [0.0, 1.0]], [0, 1]), "NaN or infinite.*impute"),
        (lambda m: LogisticRegression().fit([[np.inf, 1.0], [0.0, 1.0]], [0, 1]), "NaN or infinite"),
        (lambda m: m.predict([[np.nan, 0.0, 0.0]]), "NaN or infinite.*impute"),
        (lambda m: fit()([1, 1, 1]), "only one class.*other class"),
        (lambda m: fit()([0, 1, 2]), "Only binary classification.*softmax"),
        (lambda m: m.predict([[0.0, 1.0]]), "X has 2 features.*expecting 3.*same columns"),
        (lambda m: m.predict_proba([[0.0, 1.0, 2.0, 3.0]]), "expecting 3.*same columns"),
        (lambda m: fit(C=0)([0, 1, 1]), "C must be a positive number or np.inf"),
        (lambda m: fit(C=-1.0)([0, 1, 1]), "C must be a positive number.*small positive C"),
        (lambda m: fit(C="big")([0, 1, 1]), "C must be a positive number"),
        (lambda m: fit(solver="lbfgs")([0, 1, 1]), "solver must be 'newton' or 'gradient'"),
        (lambda m: fit(max_iter=0)([0, 1, 1]), "max_iter must be an integer >= 1"),
        (lambda m: fit(tol=-1.0)([0, 1, 1]), "tol must be a finite number >= 0"),
        (lambda m: fit(learning_rate=0)([0, 1, 1]), "learning_rate must be a finite number > 0"),
        (lambda m: fit()([0.5, 1.5, 2.5]), "Unknown label type"),
    ],
)
def test_bad_input_gets_a_clear_error(fitted, call, message):
    with pytest.raises(ValueError, match=message):
        call(fitted)


def test_predict_before_fit_raises():
    with pytest.raises(NotFittedError):
        LogisticRegression().predict(X3)


def test_constructor_stores_arguments_unchanged():
    model = LogisticRegression(C=np.inf, solver="gradient", tol=0.0)
    assert model.get_params()["C"] == np.inf and model.solver == "gradient" and model.tol == 0.0
