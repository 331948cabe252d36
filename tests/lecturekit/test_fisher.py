"""Tests of lecturekit.fisher (notebook 02.03: Fisher's linear discriminant and reduced-rank LDA)."""

import numpy as np
import pytest
from scipy.linalg import eigh
from scipy.optimize import minimize
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.fisher import FisherDiscriminant, fisher_direction, scatter_matrices
from lecturekit.gda import GDA

DATASETS = {"breast_cancer": load_breast_cancer, "iris": load_iris, "wine": load_wine}


def load(name):
    X, y = DATASETS[name](return_X_y=True)
    return StandardScaler().fit_transform(X), y


def blobs(n=300, d=5, n_classes=4, seed=0):
    """Gaussian classes with a shared covariance and unequal class sizes."""
    rng = np.random.default_rng(seed)
    y = rng.choice(n_classes, size=n, p=np.arange(1, n_classes + 1) / np.arange(1, n_classes + 1).sum())
    mixing = rng.normal(size=(d, d)) / np.sqrt(d) + np.eye(d)
    X = rng.normal(size=(n, d)) @ mixing.T + 2.0 * rng.normal(size=(n_classes, d))[y]
    return X, y


def same_up_to_sign_and_scale(A, B, rtol=1e-7):
    """Each column of A is a non-zero multiple of the same column of B."""
    for a, b in zip(A.T, B.T, strict=True):
        scale = (a @ b) / (b @ b)
        assert abs(scale) > 0
        assert np.allclose(a, scale * b, rtol=rtol, atol=rtol * np.abs(a).max())
    return True


# --------------------------------------------------------------------------- the estimator protocol


@parametrize_with_checks([FisherDiscriminant()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


# --------------------------------------------------------------------------- scatter matrices


@pytest.mark.parametrize("name", DATASETS)
def test_scatters_add_up_to_the_total_covariance(name):
    X, y = load(name)
    within, between = scatter_matrices(X, y)
    assert np.allclose(within + between, np.cov(X.T, bias=True), atol=1e-12)
    assert np.allclose(within, GDA().fit(X, y).covariance_, atol=1e-12)  # S_W is GDA's pooled MLE
    assert np.linalg.matrix_rank(between, tol=1e-10) == min(np.unique(y).size - 1, X.shape[1])


def test_between_scatter_has_the_rank_of_the_span_of_the_means():
    # Four classes whose means lie exactly on one line: one useful direction, not K - 1 = 3.
    rng = np.random.default_rng(3)
    y = np.repeat(np.arange(4), 50)
    noise = rng.normal(size=(200, 6))
    noise -= np.array([noise[y == k].mean(axis=0) for k in range(4)])[y]
    X = noise + np.outer(y, [1.0, 2.0, 0.0, 0.0, -1.0, 0.5])
    _, between = scatter_matrices(X, y)
    assert np.linalg.matrix_rank(between, tol=1e-9 * np.abs(between).max()) == 1
    values = FisherDiscriminant().fit(X, y).eigenvalues_
    assert values[0] > 1 and np.allclose(values[1:], 0, atol=1e-10)


# --------------------------------------------------------------------------- against scikit-learn


@pytest.mark.parametrize("name", DATASETS)
def test_transform_matches_sklearn_eigen_solver(name):
    X, y = load(name)
    ours = FisherDiscriminant().fit(X, y)
    theirs = LinearDiscriminantAnalysis(solver="eigen").fit(X, y)
    mine, reference = ours.transform(X), theirs.transform(X)
    # scikit-learn's eigen solver does not centre; ours subtracts the overall mean.
    reference = reference - reference.mean(axis=0)
    assert mine.shape == reference.shape == (X.shape[0], min(np.unique(y).size - 1, X.shape[1]))
    assert same_up_to_sign_and_scale(mine, reference)
    assert np.allclose(ours.explained_variance_ratio_, theirs.explained_variance_ratio_, atol=1e-10)


@pytest.mark.parametrize("n_components", [1, 2, 3])
def test_leading_components_match_sklearn(n_components):
    X, y = blobs()
    ours = FisherDiscriminant(n_components=n_components).fit(X, y).transform(X)
    theirs = LinearDiscriminantAnalysis(solver="eigen", n_components=n_components).fit(X, y).transform(X)
    assert same_up_to_sign_and_scale(ours, theirs - theirs.mean(axis=0))


# --------------------------------------------------------------------------- the eigenproblem


@pytest.mark.parametrize("seed", range(4))
def test_directions_solve_the_generalised_eigenproblem(seed):
    X, y = blobs(seed=seed)
    fisher = FisherDiscriminant().fit(X, y)
    V, S_W, S_B = fisher.scalings_, fisher.within_scatter_, fisher.between_scatter_
    assert V.shape == (5, 3)
    assert np.allclose(V.T @ S_W @ V, np.eye(3), atol=1e-10)
    assert np.allclose(V.T @ S_B @ V, np.diag(fisher.eigenvalues_), atol=1e-10)
    assert np.all(np.diff(fisher.eigenvalues_) <= 0)
    assert np.allclose(fisher.eigenvalues_, eigh(S_B, S_W, eigvals_only=True)[::-1][:3], rtol=1e-9)
    # the sign convention: each column's largest entry is positive
    assert np.all(V[np.argmax(np.abs(V), axis=0), np.arange(3)] > 0)


def test_projected_classes_have_unit_within_class_covariance():
    X, y = load("wine")
    Z = FisherDiscriminant().fit(X, y).transform(X)
    residuals = Z - np.array([Z[y == k].mean(axis=0) for k in range(3)])[y]
    assert np.allclose(residuals.T @ residuals / len(y), np.eye(2), atol=1e-10)


def test_gda_on_all_discriminant_coordinates_predicts_like_gda():
    # With K - 1 coordinates nothing that separates the classes is lost.
    X, y = blobs(seed=5)
    Z = FisherDiscriminant().fit(X, y).transform(X)
    assert np.array_equal(GDA().fit(Z, y).predict(Z), GDA().fit(X, y).predict(X))


# --------------------------------------------------------------------------- two classes


@pytest.mark.parametrize("seed", range(3))
def test_two_class_direction_maximises_the_rayleigh_quotient(seed):
    X, y = blobs(n=200, d=4, n_classes=2, seed=seed)
    w = fisher_direction(X, y)
    within, _ = scatter_matrices(X, y)
    delta = X[y == 1].mean(axis=0) - X[y == 0].mean(axis=0)

    def negative_quotient(v):
        return -((v @ delta) ** 2) / (v @ within @ v)

    def gradient(v):
        along, spread = v @ delta, v @ within @ v
        return -(2 * along * spread * delta - 2 * along**2 * (within @ v)) / spread**2

    # With its exact gradient BFGS finds the direction to about 1e-9 on every CPU's BLAS (with
    # finite differences only to about 1e-4, a bound that one CPU's rounding crossed); the value
    # it reaches can never exceed Fisher's.
    best = minimize(negative_quotient, np.ones(4), jac=gradient, method="BFGS", options={"gtol": 1e-12}).x
    best /= np.linalg.norm(best) * np.sign(best @ delta)
    assert np.isclose(np.linalg.norm(w), 1.0) and w @ delta > 0
    assert np.allclose(w, best, atol=1e-6)
    assert -negative_quotient(w) >= -negative_quotient(best) * (1 - 1e-12)


@pytest.mark.parametrize("name", ["breast_cancer"])
def test_two_class_direction_is_gdas_weight_vector(name):
    X, y = load(name)
    theta, _ = GDA().fit(X, y).logistic_parameters()
    assert np.allclose(fisher_direction(X, y), theta / np.linalg.norm(theta), atol=1e-10)
    one = FisherDiscriminant().fit(X, y).scalings_[:, 0]
    assert same_up_to_sign_and_scale(one[:, None], theta[:, None])


def test_labels_of_any_type():
    X, y = blobs(n=120, d=3, n_classes=3, seed=2)
    words = np.array(["oak", "ash", "elm"])[y]
    a = FisherDiscriminant().fit(X, words)
    assert list(a.classes_) == ["ash", "elm", "oak"]
    b = FisherDiscriminant().fit(X, y)
    assert np.allclose(a.transform(X), b.transform(X))


# --------------------------------------------------------------------------- errors


def test_errors_say_what_to_do():
    X, y = blobs(n=60, d=3, n_classes=3)
    with pytest.raises(ValueError, match="between 1 and min"):
        FisherDiscriminant(n_components=3).fit(X, y)
    with pytest.raises(ValueError, match="between 1 and min"):
        FisherDiscriminant(n_components=0).fit(X, y)
    with pytest.raises(ValueError, match="at least two classes"):
        FisherDiscriminant().fit(X, np.zeros(60))
    with pytest.raises(ValueError, match="exactly two classes"):
        fisher_direction(X, y)
    with pytest.raises(ValueError, match="reg_covar"):
        FisherDiscriminant(reg_covar=-1.0).fit(X, y)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        FisherDiscriminant().fit(bad, y)
    collinear = np.column_stack([X, X[:, 0] + X[:, 1]])
    with pytest.raises(ValueError, match="reg_covar"):
        FisherDiscriminant().fit(collinear, y)
    assert FisherDiscriminant(reg_covar=1e-6).fit(collinear, y).transform(collinear).shape == (60, 2)
    with pytest.raises(NotFittedError):
        FisherDiscriminant().transform(X)
    with pytest.raises(ValueError, match="features"):
        FisherDiscriminant().fit(X, y).transform(X[:, :2])
    with pytest.raises(ValueError, match="one label per row"):
        FisherDiscriminant().fit(X, y[:-1])
