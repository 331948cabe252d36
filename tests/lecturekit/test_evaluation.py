"""Tests of lecturekit.evaluation (learning curves, chapter 4)."""

import nbformat
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.datasets import make_classification
from sklearn.dummy import DummyClassifier
from sklearn.metrics import zero_one_loss
from sklearn.tree import DecisionTreeClassifier

from lecturekit.evaluation import LearningCurve, _training_order, learning_curve
from lecturekit.logistic import LogisticRegression
from lecturekit.naive_bayes import GaussianNB, MultinomialNB


@pytest.fixture(scope="module")
def data():
    return make_classification(n_samples=300, n_features=6, n_informative=3, n_clusters_per_class=1, random_state=0)


def small_curve(X, y, **kwargs):
    options = {"train_sizes": [10, 40, 120], "n_repeats": 4}
    options.update(kwargs)
    return learning_curve({"naive Bayes": GaussianNB(), "logistic": LogisticRegression()}, X, y, **options)


def test_shape_range_and_summaries(data):
    curve = small_curve(*data)
    assert isinstance(curve, LearningCurve)
    assert curve.names == ("naive Bayes", "logistic")
    np.testing.assert_array_equal(curve.train_sizes, [10, 40, 120])
    assert curve.errors.shape == (2, 3, 4)
    assert np.all((curve.errors >= 0) & (curve.errors <= 1))
    assert curve.n_test == 75
    # the errors are multiples of 1/n_test: counts of mistakes on the held-out set
    np.testing.assert_allclose(curve.errors * 75, np.round(curve.errors * 75), atol=1e-9)
    np.testing.assert_allclose(curve.mean, curve.errors.mean(axis=2))
    np.testing.assert_allclose(curve.std, np.std(curve.errors, axis=2, ddof=1))
    np.testing.assert_allclose(curve.sem, curve.std / 2.0)
    assert curve.mean[:, -1].max() < 0.2  # the models learn from this data


def test_deterministic_for_a_fixed_random_state(data):
    first, second = small_curve(*data, random_state=3), small_curve(*data, random_state=3)
    np.testing.assert_array_equal(first.errors, second.errors)
    assert not np.array_equal(first.errors, small_curve(*data, random_state=4).errors)


def test_perfect_classifier_has_zero_error_and_constant_one_the_minority_rate():
    # 70 of class "a", 30 of class "b"; the only feature is the label itself
    y = np.array(["a"] * 70 + ["b"] * 30)
    X = (y == "b").astype(float)[:, None]
    curve = learning_curve(
        {"tree": DecisionTreeClassifier(), "majority": DummyClassifier(strategy="most_frequent")},
        X,
        y,
        train_sizes=[2, 5, 60],
        n_repeats=10,
        test_size=20,
    )
    # stratify=True puts both classes in every training set, even of two examples
    np.testing.assert_array_equal(curve.errors[0], 0.0)
    # a stratified test set of 20 holds exactly 6 of the minority class, at every size >= 5
    np.testing.assert_allclose(curve.errors[1, 1:], 0.3)


def test_sparse_input_stays_sparse_and_matches_dense(monkeypatch):
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, size=200)
    dense = rng.poisson(np.where(y[:, None] == np.arange(20) % 3, 2.0, 0.3)).astype(float)
    expected = learning_curve({"nb": MultinomialNB()}, dense, y, [6, 30, 100], n_repeats=3)

    def densify(*args, **kwargs):
        raise AssertionError("a sparse matrix was densified")

    for cls in (sp.csr_matrix, sp.csr_array):
        monkeypatch.setattr(cls, "toarray", densify)
        monkeypatch.setattr(cls, "todense", densify)
    for matrix in (sp.csr_matrix(dense), sp.csr_array(dense), sp.coo_matrix(dense)):
        curve = learning_curve({"nb": MultinomialNB()}, matrix, y, [6, 30, 100], n_repeats=3)
        np.testing.assert_array_equal(curve.errors, expected.errors)


def test_every_model_sees_the_same_training_sets(data):
    """Two copies of one deterministic model have identical curves: the comparison is paired."""
    X, y = data
    curve = learning_curve(
        {"one": LogisticRegression(), "two": lambda: LogisticRegression()}, X, y, [20, 80], n_repeats=3
    )
    np.testing.assert_array_equal(curve.errors[0], curve.errors[1])


def test_factories_and_custom_losses(data):
    X, y = data

    def mistakes(y_true, y_pred):
        return zero_one_loss(y_true, y_pred, normalize=False)

    curve = learning_curve(
        {"class": GaussianNB, "lambda": lambda: GaussianNB(var_smoothing=1e-9)},
        X,
        y,
        [20, 80],
        n_repeats=3,
        loss=mistakes,
    )
    assert curve.errors.max() > 1  # numbers of mistakes, not rates
    np.testing.assert_array_equal(curve.errors[0], curve.errors[1])


def test_no_output_by_default_and_a_bar_when_asked(data, capsys):
    small_curve(*data)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""
    small_curve(*data, progress=True)
    captured = capsys.readouterr()
    assert captured.out == "" and "learning curve" in captured.err and "24/24" in captured.err


def test_a_notebook_cell_with_the_default_has_no_output(tmp_path):
    """What nbval compares: the stored outputs of a cell that draws a learning curve."""
    from nbclient import NotebookClient

    source = (
        "from sklearn.datasets import make_classification\n"
        "from lecturekit.evaluation import learning_curve\n"
        "from lecturekit.naive_bayes import GaussianNB\n"
        "X, y = make_classification(n_samples=200, random_state=0)\n"
        "curve = learning_curve({'nb': GaussianNB()}, X, y, [10, 50], n_repeats=3)"
    )
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(source)])
    client = NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    assert nb.cells[0].outputs == []


def test_without_stratification_a_one_class_training_set_names_the_fit():
    X, y = make_classification(n_samples=100, random_state=0)
    with pytest.raises(ValueError, match="at least two classes") as info:
        learning_curve({"nb": GaussianNB()}, X, y, [1, 10], n_repeats=2, stratify=False)
    assert any("'nb' on 1 training examples in repeat 0" in note for note in info.value.__notes__)
    curve = learning_curve({"nb": GaussianNB()}, X, y, [10, 50], n_repeats=2, stratify=False)
    assert curve.errors.shape == (1, 2, 2)


# --------------------------------------------------------------------------- the stratified order


@settings(max_examples=200, deadline=None)
@given(
    codes=hnp.arrays(np.intp, st.integers(1, 120), elements=st.integers(0, 4)),
    seed=st.integers(0, 2**31 - 1),
)
def test_stratified_order_puts_every_class_early_and_keeps_proportions(codes, seed):
    codes = np.unique(codes, return_inverse=True)[1].ravel()  # classes 0..C-1, all present
    n_classes = codes.max() + 1
    order = _training_order(codes, True, np.random.RandomState(seed))
    np.testing.assert_array_equal(np.sort(order), np.arange(codes.size))  # a permutation
    np.testing.assert_array_equal(np.sort(codes[order[:n_classes]]), np.arange(n_classes))
    share = np.bincount(codes) / codes.size
    counts = np.cumsum(np.eye(n_classes)[codes[order]], axis=0)  # class counts of every prefix
    prefix = np.arange(1, codes.size + 1)[:, None]
    assert np.all(np.abs(counts - prefix * share) <= n_classes + 1)


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"train_sizes": [10, 300]}, "exceeds the 225 examples left for training"),
        ({"train_sizes": [10, 10]}, "must increase strictly"),
        ({"train_sizes": [40, 10]}, "must increase strictly"),
        ({"train_sizes": [0, 10]}, "whole numbers"),
        ({"train_sizes": [0.5, 10]}, "whole numbers"),
        ({"train_sizes": []}, "non-empty"),
        ({"train_sizes": [[10, 20]]}, "whole numbers"),
        ({"train_sizes": [1, 10]}, "below the number of classes 2"),
        ({"n_repeats": 1}, "n_repeats must be an integer >= 2"),
        ({"estimators": {}}, "non-empty dict"),
        ({"estimators": [GaussianNB()]}, "non-empty dict"),
        ({"estimators": {"x": "GaussianNB"}}, r"estimators\['x'\] is 'GaussianNB'"),
        ({"loss": lambda t, p: np.nan}, "loss returned NaN"),
    ],
)
def test_bad_input_gets_a_clear_error(data, kwargs, message):
    X, y = data
    options = {"estimators": {"nb": GaussianNB()}, "train_sizes": [10, 40], "n_repeats": 2}
    options.update(kwargs)
    with pytest.raises(ValueError, match=message):
        learning_curve(options.pop("estimators"), X, y, options.pop("train_sizes"), **options)


def test_one_class_and_rare_classes_get_clear_errors(data):
    X, _ = data
    with pytest.raises(ValueError, match="at least two"):
        learning_curve({"nb": GaussianNB()}, X, np.zeros(300), [10, 20])
    y = np.array([0] * 297 + [1] * 3)
    with pytest.raises(ValueError, match="so rare"):
        learning_curve({"nb": GaussianNB()}, X, y, [10, 20], test_size=0.9)
