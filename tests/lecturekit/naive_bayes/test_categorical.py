"""Tests of lecturekit.naive_bayes.categorical: scikit-learn agreement, streaming, weights, invariants, bad input.

scikit-learn's estimator checks run on CategoricalNB with the other models, in test_base.py.
"""

from __future__ import annotations

import warnings

import hypothesis.strategies as st
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from sklearn import naive_bayes as reference
from sklearn.exceptions import NotFittedError

from lecturekit.naive_bayes import CategoricalNB as ReExported
from lecturekit.naive_bayes import MultinomialNB
from lecturekit.naive_bayes.categorical import CategoricalNB

from .nb_agreement import assert_keeps_column_names, clear_winner
from .nb_data import bad_inputs

SIZES = (2, 5, 3, 7)  # categories of each feature


def categories(n: int = 200, n_classes: int = 3, sizes=SIZES, seed: int = 0):
    """Rows of categorical features whose distributions depend on the class.

    Every class is present, and (for n >= max(sizes)) every category of every feature.
    """
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(n_classes), rng.integers(0, n_classes, n - n_classes)])
    columns = []
    for size in sizes:
        cumulative = np.cumsum(rng.dirichlet(np.full(size, 0.7), n_classes), axis=1)
        draws = (cumulative[y] < rng.random((n, 1))).sum(axis=1)
        draws[:size] = np.arange(size)  # every category appears
        columns.append(np.minimum(draws, size - 1))
    return np.column_stack(columns), y


X_CAT, Y_CAT = categories()
X_TEST, _ = categories(n=50, seed=1)
LABELS = np.array(["no", "maybe", "yes"])

SETTINGS = [
    {},
    {"alpha": 0.5},
    {"alpha": 0.01, "fit_prior": False},
    {"alpha": 1.0, "class_prior": [0.2, 0.3, 0.5]},
    {"min_categories": 9},
    {"alpha": 0.3, "min_categories": [3, 9, 1, 8]},
    {"min_categories": np.array([1, 1, 4, 1])},
]


def assert_same_model(ours, theirs, data_sets, atol=1e-8, n_categories=True):
    """Every fitted attribute and every prediction of ours equals scikit-learn's to ``atol``."""
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    assert ours.n_features_in_ == theirs.n_features_in_
    if n_categories:
        np.testing.assert_array_equal(ours.n_categories_, theirs.n_categories_)
        assert ours.n_categories_.dtype == theirs.n_categories_.dtype
    for name in ("class_count_", "class_log_prior_"):
        np.testing.assert_allclose(getattr(ours, name), getattr(theirs, name), rtol=1e-12, atol=atol, err_msg=name)
    for name in ("category_count_", "feature_log_prob_"):
        assert len(getattr(ours, name)) == len(getattr(theirs, name))
        for mine, other in zip(getattr(ours, name), getattr(theirs, name), strict=True):
            np.testing.assert_allclose(mine, other, rtol=1e-12, atol=atol, err_msg=name)
    for X in data_sets:
        np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=atol)
        np.testing.assert_allclose(ours.predict_log_proba(X), theirs.predict_log_proba(X), rtol=1e-10, atol=atol)
        np.testing.assert_allclose(
            ours.predict_joint_log_proba(X), theirs.predict_joint_log_proba(X), rtol=1e-10, atol=atol
        )
        np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


# --------------------------------------------------------------------------- agreement with scikit-learn


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64])
@pytest.mark.parametrize("params", SETTINGS, ids=range(len(SETTINGS)))
def test_equals_scikit_learn(params, dtype):
    X, X_test, labels = X_CAT.astype(dtype), X_TEST.astype(dtype), LABELS[Y_CAT]
    ours, theirs = CategoricalNB(**params).fit(X, labels), reference.CategoricalNB(**params).fit(X, labels)
    assert_same_model(ours, theirs, [X, X_test])
    assert ours.score(X, labels) == theirs.score(X, labels)


@pytest.mark.parametrize("params", [{}, {"alpha": 0.2, "min_categories": 8}], ids=range(2))
def test_sample_weight_equals_scikit_learn(params):
    weights = np.random.default_rng(3).uniform(0, 3, len(Y_CAT))
    weights[:10] = 0.0  # rows that do not count at all
    ours = CategoricalNB(**params).fit(X_CAT, Y_CAT, sample_weight=weights)
    theirs = reference.CategoricalNB(**params).fit(X_CAT, Y_CAT, sample_weight=weights)
    assert_same_model(ours, theirs, [X_CAT, X_TEST])
    assert ours.score(X_CAT, Y_CAT, sample_weight=weights) == pytest.approx(
        theirs.score(X_CAT, Y_CAT, sample_weight=weights), abs=1e-12
    )


def test_integer_weights_equal_repeated_rows():
    repeats = np.random.default_rng(4).integers(0, 4, len(Y_CAT))
    repeats[:7] = 1  # every class and category keeps a row
    weighted = CategoricalNB(alpha=0.3).fit(X_CAT, Y_CAT, sample_weight=repeats)
    repeated = CategoricalNB(alpha=0.3).fit(np.repeat(X_CAT, repeats, axis=0), np.repeat(Y_CAT, repeats))
    np.testing.assert_allclose(weighted.class_count_, repeated.class_count_, rtol=1e-12)
    for mine, other in zip(
        weighted.feature_log_prob_ + weighted.category_count_,
        repeated.feature_log_prob_ + repeated.category_count_,
        strict=True,
    ):
        np.testing.assert_allclose(mine, other, rtol=1e-12)


def test_tiny_alpha_is_clipped_with_a_warning_unless_forced():
    with pytest.warns(UserWarning, match="alpha too small.*force_alpha=True"):
        ours = CategoricalNB(alpha=0.0, force_alpha=False).fit(X_CAT, Y_CAT)
    with pytest.warns(UserWarning, match="alpha too small"):
        theirs = reference.CategoricalNB(alpha=0.0, force_alpha=False).fit(X_CAT, Y_CAT)
    assert_same_model(ours, theirs, [X_TEST])


def test_a_dataframe_keeps_its_column_names():
    assert_keeps_column_names(CategoricalNB, reference.CategoricalNB, X_CAT, Y_CAT)


def test_the_package_gives_the_class():
    assert ReExported is CategoricalNB


def test_the_estimate_is_add_alpha_per_feature_and_class():
    X = np.array([[0, 2], [0, 1], [1, 0], [2, 0], [1, 0]])
    model = CategoricalNB(alpha=0.5).fit(X, [0, 0, 1, 1, 1])
    # feature 0, class 1 saw categories 1, 2, 1: (0 + .5, 2 + .5, 1 + .5) / (3 + .5 * 3)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_[0][1]), np.array([0.5, 2.5, 1.5]) / 4.5, rtol=1e-14)
    np.testing.assert_allclose(np.exp(model.feature_log_prob_[1][0]), np.array([0.5, 1.5, 1.5]) / 3.5, rtol=1e-14)
    # a row scores log pi_c + sum_i log theta_{c, i, x_i}
    joint = np.log([0.4, 0.6]) + [model.feature_log_prob_[0][c, 2] + model.feature_log_prob_[1][c, 1] for c in (0, 1)]
    np.testing.assert_allclose(model.predict_joint_log_proba([[2, 1]])[0], joint, rtol=1e-14)


# --------------------------------------------------------------------------- partial_fit


def test_partial_fit_in_batches_equals_fit():
    # The first batch lacks class 2 and the highest categories; later batches widen the tables.
    weights = np.random.default_rng(5).uniform(0.5, 2.0, len(Y_CAT))
    rows = np.arange(len(Y_CAT))
    first = rows[(Y_CAT != 2) & np.all(X_CAT < [2, 3, 2, 4], axis=1)][:15]
    batches = [first] + np.array_split(np.setdiff1d(rows, first), 4)
    for params in ({"alpha": 0.3}, {"min_categories": 6}):
        whole = CategoricalNB(**params).fit(X_CAT, Y_CAT, sample_weight=weights)
        streamed, theirs = CategoricalNB(**params), reference.CategoricalNB(**params)
        for i, batch in enumerate(batches):
            classes = np.arange(3) if i == 0 else None
            streamed.partial_fit(X_CAT[batch], Y_CAT[batch], classes=classes, sample_weight=weights[batch])
            theirs.partial_fit(X_CAT[batch], Y_CAT[batch], classes=classes, sample_weight=weights[batch])
            # scikit-learn's n_categories_ is that of the latest batch; ours that of all so far,
            # which is the width of category_count_ in both
            np.testing.assert_array_equal(streamed.n_categories_, [c.shape[1] for c in theirs.category_count_])
            seen = X_TEST[np.all(streamed.n_categories_ > X_TEST, axis=1)]
            assert_same_model(streamed, theirs, [seen], n_categories=False)
        assert_same_model(streamed, whole, [X_CAT, X_TEST], atol=1e-10)


def test_partial_fit_before_every_class_is_seen_predicts_finite_probabilities():
    for alpha in (1.0, 0.0):
        model = CategoricalNB(alpha=alpha).partial_fit(X_CAT[Y_CAT < 2], Y_CAT[Y_CAT < 2], classes=[0, 1, 2])
        seen = X_TEST[np.all(model.n_categories_ > X_TEST, axis=1)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # alpha = 0: rows impossible under both classes
            proba = model.predict_proba(seen)
        assert np.all(np.isfinite(proba))
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(proba[:, 2], 0.0)


def test_fit_forgets_earlier_partial_fits():
    model = CategoricalNB().partial_fit(X_CAT, Y_CAT, classes=[0, 1, 2])
    model.fit(X_CAT[:30] % 2, Y_CAT[:30])
    np.testing.assert_array_equal(model.n_categories_, [2, 2, 2, 2])
    np.testing.assert_array_equal(
        model.category_count_[1], CategoricalNB().fit(X_CAT[:30] % 2, Y_CAT[:30]).category_count_[1]
    )


# --------------------------------------------------------------------------- the estimator protocol


# --------------------------------------------------------------------------- invariants (hypothesis)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    alpha=st.sampled_from([1e-10, 0.01, 1.0, 3.0]),
    n_classes=st.integers(2, 5),
    sizes=st.lists(st.integers(1, 12), min_size=1, max_size=30),
)
def test_probabilities_are_distributions(seed, alpha, n_classes, sizes):
    X, y = categories(n=40, n_classes=n_classes, sizes=sizes, seed=seed % 1000)
    model = CategoricalNB(alpha=alpha, min_categories=max(sizes)).fit(X, y)
    X_new = np.random.default_rng(seed).integers(0, max(sizes), (10, len(sizes)))
    for data in (X, X_new):
        proba = model.predict_proba(data)
        assert np.all(np.isfinite(proba)) and np.all(proba >= 0)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-12)
        np.testing.assert_allclose(np.exp(model.predict_log_proba(data)), proba, rtol=1e-9, atol=1e-300)
    for log_prob in model.feature_log_prob_:  # every theta_ci is a distribution over the categories
        np.testing.assert_allclose(np.exp(log_prob).sum(axis=1), 1.0, rtol=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_renaming_the_classes_permutes_the_columns(seed):
    X, y = categories(n=60, n_classes=3, seed=seed % 1000)
    names = np.random.default_rng(seed).permutation(np.array(["p", "q", "r"]))  # class c is called names[c]
    model, renamed = CategoricalNB().fit(X, y), CategoricalNB().fit(X, names[y])
    order = np.argsort(names)  # renamed.classes_[k] is original class order[k]
    np.testing.assert_array_equal(renamed.classes_, names[order])
    np.testing.assert_allclose(renamed.class_log_prior_, model.class_log_prior_[order], rtol=1e-12)
    for mine, other in zip(renamed.feature_log_prob_, model.feature_log_prob_, strict=True):
        np.testing.assert_allclose(mine, other[order], rtol=1e-12)
    proba = model.predict_proba(X_TEST)
    np.testing.assert_allclose(renamed.predict_proba(X_TEST), proba[:, order], rtol=1e-10, atol=1e-15)
    clear = clear_winner(proba)  # ties go to the first label in sorted order
    np.testing.assert_array_equal(renamed.predict(X_TEST[clear]), names[model.predict(X_TEST[clear])])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_recoding_the_categories_permutes_the_tables_and_keeps_predictions(seed):
    # Feature order and category codes are arbitrary: permuting the features permutes the
    # lists, and recoding the categories of a feature permutes the columns of its tables.
    X, y = categories(n=60, seed=seed % 1000)
    rng = np.random.default_rng(seed)
    features = rng.permutation(len(SIZES))
    codes = [rng.permutation(size) for size in SIZES]  # category k of feature i becomes codes[i][k]

    def recode(data):
        return np.column_stack([codes[i][data[:, i]] for i in range(len(SIZES))])[:, features]

    model, recoded = CategoricalNB(alpha=0.7).fit(X, y), CategoricalNB(alpha=0.7).fit(recode(X), y)
    for position, i in enumerate(features):
        inverse = np.argsort(codes[i])  # recoded column m is original category inverse[m]
        np.testing.assert_allclose(
            recoded.feature_log_prob_[position], model.feature_log_prob_[i][:, inverse], rtol=1e-12
        )
        np.testing.assert_array_equal(recoded.category_count_[position], model.category_count_[i][:, inverse])
    np.testing.assert_allclose(recoded.predict_proba(recode(X_TEST)), model.predict_proba(X_TEST), rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.01, 0.5, 1.0, 2.0]), size=st.integers(2, 9))
def test_one_feature_is_multinomial_nb_on_its_one_hot_columns(seed, alpha, size):
    # With one feature, theta_ck = (N_ck + a) / (N_c + a n) and a one-hot row holds one 1:
    # exactly the multinomial model of the one-hot columns.
    # (A log-probability near 0 may differ in its last bit: hence the absolute tolerance.)
    X, y = categories(n=50, sizes=(size,), seed=seed % 1000)
    one_hot = np.eye(size)[X[:, 0]]
    categorical, multinomial = CategoricalNB(alpha=alpha).fit(X, y), MultinomialNB(alpha=alpha).fit(one_hot, y)
    np.testing.assert_allclose(categorical.feature_log_prob_[0], multinomial.feature_log_prob_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(categorical.predict_proba(X), multinomial.predict_proba(one_hot), rtol=1e-10)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), alpha=st.sampled_from([0.01, 0.5, 2.0]))
def test_doubling_the_weights_equals_halving_alpha(seed, alpha):
    # (2 N + a) / (2 N_c + a n) = (N + a/2) / (N_c + a n / 2); duplicating the rows doubles the counts.
    X, y = categories(n=40, seed=seed % 1000)
    doubled = CategoricalNB(alpha=alpha).fit(X, y, sample_weight=np.full(40, 2.0))
    duplicated = CategoricalNB(alpha=alpha).fit(np.vstack([X, X]), np.concatenate([y, y]))
    half = CategoricalNB(alpha=alpha / 2).fit(X, y)
    for other in (duplicated, half):
        np.testing.assert_allclose(doubled.class_log_prior_, other.class_log_prior_, rtol=1e-12)
        for mine, theirs in zip(doubled.feature_log_prob_, other.feature_log_prob_, strict=True):
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-14)


# --------------------------------------------------------------------------- special inputs


def test_min_categories_gives_unseen_categories_the_smoothed_probability():
    X, y = np.array([[0, 1], [1, 1], [0, 0], [1, 0]]), [0, 0, 1, 1]
    model = CategoricalNB(alpha=0.5, min_categories=[4, 2]).fit(X, y)
    np.testing.assert_array_equal(model.n_categories_, [4, 2])
    np.testing.assert_allclose(np.exp(model.feature_log_prob_[0][:, 3]), 0.5 / (2 + 0.5 * 4), rtol=1e-14)
    assert np.all(np.isfinite(model.predict_proba([[3, 1]])))
    with pytest.raises(ValueError, match="category 3 of feature 0 .*categories 0..1 .*min_categories"):
        CategoricalNB().fit(X, y).predict([[3, 1]])


def test_alpha_zero_gives_impossible_rows_no_nan():
    X, y = np.array([[0, 0], [0, 1], [1, 1], [1, 2]]), [0, 0, 1, 1]
    model = CategoricalNB(alpha=0.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # rows possible under some class: no warning
        np.testing.assert_array_equal(model.predict_proba([[0, 0], [1, 2], [0, 1]]), [[1, 0], [0, 1], [1, 0]])
    # category 0 of feature 0 only in class 0, category 2 of feature 1 only in class 1: impossible
    # under both, so the prior decides, with a warning
    with pytest.warns(RuntimeWarning, match="probability zero under every class.*alpha > 0"):
        np.testing.assert_allclose(model.predict_proba([[0, 2]]), [[0.5, 0.5]])


def test_sparse_input_is_refused_as_scikit_learn_does():
    # One value per cell: an implicit zero would be category 0, so there is nothing to save.
    for model in (CategoricalNB(), reference.CategoricalNB()):
        with pytest.raises(TypeError, match="Sparse data was passed.*dense data is required"):
            model.fit(sp.csr_matrix(X_CAT), Y_CAT)
    with pytest.raises(TypeError, match="dense data is required"):
        CategoricalNB().fit(X_CAT, Y_CAT).predict(sp.csr_matrix(X_TEST))


# --------------------------------------------------------------------------- bad input

FITTED = CategoricalNB().fit(X_CAT, Y_CAT)
HALVES = X_CAT + 0.5
NEGATIVE, WITH_NAN = bad_inputs(X_CAT)
BEYOND = np.array([[1, 4, 2, 9]])  # feature 3 has 7 categories


@pytest.mark.parametrize(
    "call, message",
    [
        (
            lambda: CategoricalNB().fit(NEGATIVE, Y_CAT),
            "Negative values in data passed to CategoricalNB.*integers 0, 1, ..., n - 1.*OrdinalEncoder",
        ),
        (lambda: FITTED.predict(NEGATIVE), "Negative values in data passed to CategoricalNB"),
        (
            lambda: CategoricalNB().fit(HALVES, Y_CAT),
            "CategoricalNB.fit holds .*0.5 \\(row 0, feature 0\\), which is not a category code.*OrdinalEncoder",
        ),
        (lambda: FITTED.predict_proba(HALVES), "CategoricalNB.predict holds .*0.5"),
        (lambda: FITTED.partial_fit(HALVES, Y_CAT), "CategoricalNB.fit holds"),
        (lambda: CategoricalNB().fit(WITH_NAN, Y_CAT), "contains NaN or infinite values.*impute"),
        (lambda: FITTED.predict(np.full((1, 4), np.inf)), "CategoricalNB.predict contains NaN or inf"),
        (
            lambda: CategoricalNB().fit(np.array([["red", "big"], ["blue", "small"]]), [0, 1]),
            "not compatible with arrays of bytes/strings.*numeric",
        ),
        (
            lambda: FITTED.predict(BEYOND),
            "category 9 of feature 3 \\(row 0\\).*categories 0..6 of that feature "
            "\\(n_categories_\\[3\\] = 7\\).*min_categories",
        ),
        (lambda: FITTED.predict_proba([[1.0, 4.0, 2.0, 1e20]]), "category 1e\\+20 of feature 3"),
        (
            lambda: CategoricalNB().fit(np.where(X_CAT == 6, 2**40, X_CAT), Y_CAT),
            "category code 1099511627776: every feature gets one table column per code.*OrdinalEncoder",
        ),
        (lambda: CategoricalNB(min_categories=0).fit(X_CAT, Y_CAT), "min_categories .* integer >= 1.*got 0"),
        (lambda: CategoricalNB(min_categories=2.0).fit(X_CAT, Y_CAT), "min_categories .*got 2.0"),
        (lambda: CategoricalNB(min_categories=True).fit(X_CAT, Y_CAT), "min_categories .*got True"),
        (
            lambda: CategoricalNB(min_categories=[3, 3]).fit(X_CAT, Y_CAT),
            "4 integers >= 1 \\(one per feature\\); got an array of shape \\(2,\\)",
        ),
        (lambda: CategoricalNB(min_categories=[3, 3, 0, 3]).fit(X_CAT, Y_CAT), "min_categories"),
        (lambda: CategoricalNB(alpha=-1.0).fit(X_CAT, Y_CAT), "alpha .* must be a finite number >= 0"),
        (
            lambda: CategoricalNB(alpha=np.ones(4)).fit(X_CAT, Y_CAT),
            "CategoricalNB takes one alpha .*not an array of shape \\(4,\\).*alpha=1.0",
        ),
        (lambda: CategoricalNB().fit(X_CAT, np.zeros(200)), "at least two classes.*only one class"),
        (lambda: FITTED.predict(X_CAT[:, :3]), "X has 3 features, but CategoricalNB is expecting 4.*same columns"),
        (lambda: FITTED.partial_fit(X_CAT[:2], [0, 9]), "label\\(s\\) \\[9\\] that are not among the classes"),
        (lambda: CategoricalNB().partial_fit(X_CAT, Y_CAT), "classes must be passed on the first call"),
        (lambda: CategoricalNB(class_prior=[0.5, 0.5]).fit(X_CAT, Y_CAT), "class_prior has shape \\(2,\\)"),
        (
            lambda: CategoricalNB().fit(X_CAT, Y_CAT, sample_weight=np.ones(3)),
            "sample_weight passed to CategoricalNB.fit has 3 weights but X has 200 rows",
        ),
        (lambda: CategoricalNB().fit(X_CAT, Y_CAT, sample_weight=-np.ones(200)), "negative weights"),
        (lambda: CategoricalNB().fit(X_CAT, Y_CAT[:-1]), "inconsistent numbers of samples"),
    ],
)
def test_bad_input_gets_a_clear_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_predict_before_fit():
    with pytest.raises(NotFittedError):
        CategoricalNB().predict(X_CAT)
