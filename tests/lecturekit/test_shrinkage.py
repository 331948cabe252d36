"""Tests of lecturekit.shrinkage (chapter 02.04: Ledoit-Wolf shrinkage and regularised discriminant analysis)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.covariance import LedoitWolf, empirical_covariance
from sklearn.covariance import ledoit_wolf as sk_ledoit_wolf
from sklearn.covariance import ledoit_wolf_shrinkage as sk_ledoit_wolf_shrinkage
from sklearn.datasets import load_breast_cancer, load_iris, load_wine
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from lecturekit.gaussian import log_density
from lecturekit.gda import GDA
from lecturekit.shrinkage import RDA, ledoit_wolf, ledoit_wolf_shrinkage, rda_covariances


def gaussian_data(n, d, seed, scale=None):
    """n points of a correlated d-dimensional Gaussian, features on different scales."""
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(d, d)) / np.sqrt(d) + np.eye(d)
    scale = rng.uniform(0.1, 10.0, size=d) if scale is None else scale
    return (rng.normal(size=(n, d)) @ mixing.T) * scale + rng.normal(size=d)


def labelled(n, d, n_classes, seed):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % n_classes  # every class present
    rng.shuffle(y)
    X = gaussian_data(n, d, seed) + 3.0 * rng.normal(size=(n_classes, d))[y]
    return X, y


def class_covariances(X, y):
    """Maximum-likelihood class and pooled covariances, the textbook way (np.cov with bias)."""
    classes = np.unique(y)
    own = np.array([np.atleast_2d(np.cov(X[y == c].T, bias=True)) for c in classes])
    counts = np.array([np.sum(y == c) for c in classes])
    pooled = np.einsum("k,kij->ij", counts, own) / counts.sum()
    return own, pooled, counts


# --------------------------------------------------------------------------- Ledoit-Wolf


@pytest.mark.parametrize("n, d", [(5, 3), (20, 30), (30, 30), (40, 30), (200, 10), (3, 50), (1000, 4)])
@pytest.mark.parametrize("assume_centered", [False, True])
def test_ledoit_wolf_matches_sklearn(n, d, assume_centered):
    X = gaussian_data(n, d, seed=n * d)
    covariance, shrinkage = ledoit_wolf(X, assume_centered=assume_centered)
    reference = LedoitWolf(assume_centered=assume_centered).fit(X)
    assert np.isclose(shrinkage, reference.shrinkage_, rtol=0, atol=1e-10)
    assert np.allclose(covariance, reference.covariance_, rtol=1e-10, atol=1e-10 * np.abs(covariance).max())
    assert np.isclose(
        ledoit_wolf_shrinkage(X, assume_centered=assume_centered),
        sk_ledoit_wolf_shrinkage(X, assume_centered=assume_centered),
        rtol=0,
        atol=1e-10,
    )
    sk_covariance, sk_shrinkage = sk_ledoit_wolf(X, assume_centered=assume_centered)
    assert np.isclose(shrinkage, sk_shrinkage, rtol=0, atol=1e-10)
    assert np.allclose(covariance, sk_covariance, rtol=1e-10, atol=1e-10 * np.abs(covariance).max())


@pytest.mark.parametrize("loader", [load_iris, load_wine, load_breast_cancer])
def test_ledoit_wolf_matches_sklearn_on_real_data(loader):
    X, y = loader(return_X_y=True)
    for data in (X, X[y == 0], X[:25]):  # whole, one class, fewer rows than breast cancer's 30 features
        covariance, shrinkage = ledoit_wolf(data)
        reference = LedoitWolf().fit(data)
        assert np.isclose(shrinkage, reference.shrinkage_, rtol=0, atol=1e-10)
        assert np.allclose(covariance, reference.covariance_, rtol=1e-10, atol=1e-10 * np.abs(covariance).max())


def test_ledoit_wolf_by_hand():
    # Four centred points: S = diag(1/2, 2), mu = 5/4, d^2 = ((3/4)^2 + (3/4)^2) / 2 = 9/16.
    # |x_i|^2 = 1, 1, 4, 4, so sum |x_i|^4 / n = 34/4, ||S||_F^2 = 17/4 and
    # b_bar^2 = (34/4 - 17/4) / (4 * 2) = 17/32; delta = (17/32) / (9/16) = 17/18.
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0], [0.0, -2.0]])
    covariance, shrinkage = ledoit_wolf(X)
    assert np.isclose(shrinkage, 17 / 18, rtol=1e-14)
    expected = (1 - 17 / 18) * np.diag([0.5, 2.0]) + 17 / 18 * 1.25 * np.eye(2)
    assert np.allclose(covariance, expected, rtol=1e-14)
    assert np.allclose(covariance, np.diag([29 / 24, 31 / 24]), rtol=1e-14)


def test_ledoit_wolf_special_cases():
    rng = np.random.default_rng(3)
    # one feature: nothing to shrink towards but itself
    x = rng.normal(size=(10, 1))
    covariance, shrinkage = ledoit_wolf(x)
    assert shrinkage == 0.0 and np.allclose(covariance, np.var(x))
    # a sample covariance that is already a multiple of the identity: d^2 = 0, no shrinkage
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 1.0], [0.0, -1.0]])
    covariance, shrinkage = ledoit_wolf(X)
    assert shrinkage == 0.0 and np.allclose(covariance, 0.5 * np.eye(2))
    assert shrinkage == sk_ledoit_wolf_shrinkage(X)
    # one point with a known mean (scikit-learn warns that there is only one sample)
    covariance, shrinkage = ledoit_wolf([[1.0, 2.0]], assume_centered=True)
    with pytest.warns(UserWarning, match="Only one sample"):
        reference = sk_ledoit_wolf_shrinkage(np.array([[1.0, 2.0]]), assume_centered=True)
    assert np.isclose(shrinkage, reference)


def test_ledoit_wolf_is_positive_definite_when_the_sample_covariance_is_singular():
    X = gaussian_data(10, 40, seed=4)  # rank <= 9 in 40 dimensions
    assert np.linalg.matrix_rank(empirical_covariance(X)) <= 9
    covariance, shrinkage = ledoit_wolf(X)
    eigenvalues = np.linalg.eigvalsh(covariance)
    mu = np.trace(empirical_covariance(X)) / 40
    assert 0 < shrinkage <= 1
    assert eigenvalues.min() >= shrinkage * mu * (1 - 1e-12)  # each eigenvalue moves towards mu


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 40), d=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_ledoit_wolf_properties(n, d, seed):
    X = gaussian_data(n, d, seed)
    covariance, shrinkage = ledoit_wolf(X)
    S = empirical_covariance(X)
    assert 0.0 <= shrinkage <= 1.0
    assert np.isclose(np.trace(covariance), np.trace(S), rtol=1e-10)  # the trace is kept
    assert np.allclose(covariance, covariance.T)
    # shifting the data changes nothing; scaling it scales the covariance and keeps the intensity
    shifted, shifted_shrinkage = ledoit_wolf(X + 100.0)
    assert np.isclose(shifted_shrinkage, shrinkage, atol=1e-6)
    scaled, scaled_shrinkage = ledoit_wolf(3.0 * X)
    assert np.isclose(scaled_shrinkage, shrinkage, atol=1e-10)
    assert np.allclose(scaled, 9.0 * covariance, rtol=1e-9, atol=1e-12 * np.abs(scaled).max())


@pytest.mark.parametrize(
    "bad, message",
    [
        ([1.0, 2.0, 3.0], "two-dimensional"),
        ([[1.0, np.nan], [0.0, 1.0]], "NaN or infinite"),
        ([[1.0, 2.0]], "at least two observations"),
        (np.empty((0, 3)), "at least one row"),
        ([["a", "b"], ["c", "d"]], "numeric"),
    ],
)
def test_ledoit_wolf_rejects_bad_input(bad, message):
    with pytest.raises(ValueError, match=message):
        ledoit_wolf(bad)
    with pytest.raises(ValueError, match=message):
        ledoit_wolf_shrinkage(bad)


# --------------------------------------------------------------------------- rda_covariances


def test_rda_covariances_by_hand():
    # class 0: (0, 0), (2, 0): mean (1, 0), covariance diag(1, 0); scatter diag(2, 0)
    # class 1: (10, 0), (10, 4), (10, 2): mean (10, 2), covariance diag(0, 8/3); scatter diag(0, 8)
    # pooled: (diag(2, 0) + diag(0, 8)) / 5 = diag(0.4, 1.6)
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [10.0, 4.0], [10.0, 2.0]])
    y = np.array([0, 0, 1, 1, 1])
    assert np.allclose(rda_covariances(X, y, 1.0, 0.0), [np.diag([1.0, 0.0]), np.diag([0.0, 8 / 3])])
    assert np.allclose(rda_covariances(X, y, 0.0, 0.0), [np.diag([0.4, 1.6])] * 2)
    # alpha = 1/2: class 0 -> diag(0.7, 0.8), trace/d = 0.75; gamma = 0.2 -> diag(0.71, 0.79)
    assert np.allclose(rda_covariances(X, y, 0.5, 0.2)[0], np.diag([0.71, 0.79]))
    # Friedman's weighting, lambda = 1/2: (S_0 + S) / (n_0 + n) = (diag(2, 0) + diag(2, 8)) / 7
    assert np.allclose(rda_covariances(X, y, 0.5, 0.0, weighting="scatter")[0], np.diag([4 / 7, 8 / 7]))
    # ... the simple form with alpha_0 = n_0 / (n_0 + n) = 2/7
    own, pooled, _ = class_covariances(X, y)
    assert np.allclose(rda_covariances(X, y, 0.5, 0.0, weighting="scatter")[0], 2 / 7 * own[0] + 5 / 7 * pooled)
    # gamma = 1 keeps only the trace: class 1 at alpha = 1 has trace 8/3, so (4/3) I
    assert np.allclose(rda_covariances(X, y, 1.0, 1.0)[1], 4 / 3 * np.eye(2))


@pytest.mark.parametrize("seed", range(5))
def test_rda_covariances_against_the_textbook_formulas(seed):
    rng = np.random.default_rng(seed)
    X, y = labelled(60, 4, n_classes=3, seed=seed)
    y = np.array(["a", "b", "c"])[y]  # string labels, sorted order
    own, pooled, counts = class_covariances(X, y)
    n = counts.sum()
    for alpha, gamma in [(1, 0), (0, 0), (1, 1), (0, 1), *rng.uniform(size=(4, 2))]:
        for k, result in enumerate(rda_covariances(X, y, alpha, gamma)):
            blended = alpha * own[k] + (1 - alpha) * pooled
            expected = (1 - gamma) * blended + gamma * np.mean(np.linalg.eigvalsh(blended)) * np.eye(4)
            assert np.allclose(result, expected, rtol=1e-10, atol=1e-12)
        lam = 1 - alpha
        for k, result in enumerate(rda_covariances(X, y, alpha, gamma, weighting="scatter")):
            blended = ((1 - lam) * counts[k] * own[k] + lam * n * pooled) / ((1 - lam) * counts[k] + lam * n)
            expected = (1 - gamma) * blended + gamma * np.trace(blended) / 4 * np.eye(4)
            assert np.allclose(result, expected, rtol=1e-10, atol=1e-12)


def test_rda_endpoints_are_gda():
    X, y = load_wine(return_X_y=True)
    assert np.allclose(rda_covariances(X, y, 1.0, 0.0), GDA(shared_covariance=False).fit(X, y).covariances_)
    lda = GDA().fit(X, y)
    assert np.allclose(rda_covariances(X, y, 0.0, 0.0), lda.covariance_[np.newaxis])
    assert np.allclose(rda_covariances(X, y, 0.0, 0.0, weighting="scatter"), lda.covariance_[np.newaxis])


@settings(max_examples=50, deadline=None)
@given(alpha=st.floats(0, 1), gamma=st.floats(0, 1), seed=st.integers(0, 1000))
def test_rda_covariances_properties(alpha, gamma, seed):
    X, y = labelled(24, 5, n_classes=2, seed=seed)
    own, pooled, _ = class_covariances(X, y)
    for weighting in ("covariance", "scatter"):
        result = rda_covariances(X, y, alpha, gamma, weighting=weighting)
        assert result.shape == (2, 5, 5)
        assert np.allclose(result, np.swapaxes(result, 1, 2))
        blended = rda_covariances(X, y, alpha, 0.0, weighting=weighting)
        # the second step keeps the trace and lifts every eigenvalue to at least gamma * trace / d
        assert np.allclose(np.trace(result, axis1=1, axis2=2), np.trace(blended, axis1=1, axis2=2))
        for k in range(2):
            floor = gamma * np.trace(blended[k]) / 5
            assert np.linalg.eigvalsh(result[k]).min() >= floor - 1e-9 * np.trace(blended[k])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"alpha": 1.5, "gamma": 0.0}, "alpha must be a number between 0 and 1"),
        ({"alpha": -0.1, "gamma": 0.0}, "alpha must be"),
        ({"alpha": 0.5, "gamma": 2}, "gamma must be"),
        ({"alpha": True, "gamma": 0.0}, "alpha must be"),
        ({"alpha": "half", "gamma": 0.0}, "alpha must be"),
        ({"alpha": 0.5, "gamma": 0.5, "weighting": "friedman"}, "weighting must be"),
    ],
)
def test_rda_covariances_rejects_bad_parameters(kwargs, message):
    X, y = labelled(20, 3, n_classes=2, seed=0)
    with pytest.raises(ValueError, match=message):
        rda_covariances(X, y, **kwargs)


def test_rda_covariances_rejects_bad_data():
    X, y = labelled(20, 3, n_classes=2, seed=0)
    with pytest.raises(ValueError, match="one label per row"):
        rda_covariances(X, y[:-1], 0.5, 0.5)
    with pytest.raises(ValueError, match="only one class"):
        rda_covariances(X, np.zeros(20), 0.5, 0.5)
    with pytest.raises(ValueError, match="NaN or infinite"):
        rda_covariances(np.where(X > 2, np.inf, X), y, 0.5, 0.5)
    with pytest.raises(ValueError, match="two-dimensional"):
        rda_covariances(X[:, 0], y, 0.5, 0.5)


# --------------------------------------------------------------------------- the RDA classifier


def test_rda_classifier_endpoints_equal_qda_and_lda():
    X, y = load_iris(return_X_y=True)
    qda, lda = GDA(shared_covariance=False).fit(X, y), GDA().fit(X, y)
    assert np.allclose(RDA(alpha=1.0).fit(X, y).predict_proba(X), qda.predict_proba(X), atol=1e-10)
    assert np.allclose(RDA(alpha=0.0).fit(X, y).predict_proba(X), lda.predict_proba(X), atol=1e-10)
    assert np.array_equal(RDA(alpha=0.0).fit(X, y).predict(X), lda.predict(X))


def test_rda_classifier_is_bayes_rule_on_its_covariances():
    X, y = labelled(90, 4, n_classes=3, seed=7)
    model = RDA(alpha=0.4, gamma=0.3).fit(X, y)
    assert np.allclose(model.covariances_, rda_covariances(X, y, 0.4, 0.3))
    joint = np.column_stack(
        [np.log(np.mean(y == k)) + log_density(X, X[y == k].mean(axis=0), model.covariances_[k]) for k in range(3)]
    )
    assert np.allclose(model.predict_joint_log_proba(X), joint, rtol=1e-10)
    assert np.allclose(model.predict_proba(X).sum(axis=1), 1.0)
    assert np.array_equal(model.predict(X), joint.argmax(axis=1))
    binary = RDA(alpha=0.4, gamma=0.3).fit(X[y < 2], y[y < 2])
    joint = binary.predict_joint_log_proba(X)
    assert np.allclose(binary.decision_function(X), joint[:, 1] - joint[:, 0])
    assert np.allclose(binary.predict_log_proba(X), joint - np.logaddexp(joint[:, :1], joint[:, 1:]))


def test_rda_ledoit_wolf_gives_each_class_its_ledoit_wolf_covariance():
    X, y = load_breast_cancer(return_X_y=True)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    rows = np.concatenate([np.flatnonzero(y == 0)[:20], np.flatnonzero(y == 1)[:25]])  # fewer than 30 each
    model = RDA(gamma="ledoit-wolf").fit(X[rows], y[rows])
    for k in (0, 1):
        reference = LedoitWolf().fit(X[rows][y[rows] == k])
        assert np.isclose(model.gamma_[k], reference.shrinkage_, atol=1e-10)
        assert np.allclose(model.covariances_[k], reference.covariance_, atol=1e-10)
    assert model.score(X, y) > 0.8


def test_rda_classifier_errors():
    X, y = labelled(20, 30, n_classes=2, seed=1)  # 10 points per class in 30 dimensions
    with pytest.raises(ValueError, match="raise gamma above 0"):
        RDA(alpha=1.0, gamma=0.0).fit(X, y)
    RDA(alpha=1.0, gamma=0.1).fit(X, y)  # any gamma > 0 makes it positive definite
    with pytest.raises(ValueError, match="together with alpha=1.0"):
        RDA(alpha=0.5, gamma="ledoit-wolf").fit(X, y)
    with pytest.raises(ValueError, match="together with alpha=1.0"):
        RDA(gamma="auto").fit(X, y)
    with pytest.raises(NotFittedError):
        RDA().predict(X)
    model = RDA(gamma=0.5).fit(X, y)
    with pytest.raises(ValueError, match="expecting 30 features"):
        model.predict(X[:, :3])
    with pytest.raises(ValueError, match="NaN or infinite"):
        model.predict(np.full((1, 30), np.nan))


@parametrize_with_checks(
    [RDA(alpha=0.5, gamma=0.1), RDA(gamma="ledoit-wolf"), RDA(alpha=0.3, gamma=0.2, weighting="scatter")]
)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)
