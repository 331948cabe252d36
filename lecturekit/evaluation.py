r"""Learning curves: test error against the number of training examples, over repeated splits.

The question of generative against discriminative learning (Ng and Jordan, 2002) is a question
about learning curves: which model is better with *few* examples, and which with many.
:func:`learning_curve` answers it for any set of scikit-learn-style classifiers on one data set,
with the spread over random splits that tells a real difference from noise. Every model sees the
same training sets, so the comparison is paired.

Splits, cloning and the losses come from scikit-learn, the progress bar from tqdm; nothing here
fits a model of its own or draws a figure (plot the arrays of the result, e.g. with
``ax.errorbar(curve.train_sizes, curve.mean[i], yerr=curve.sem[i])``).

It runs the experiment of notebook 02.05 (GDA against logistic regression, there on fresh
draws from known distributions) on a fixed data set, so that any chapter can call it. Used in
notebooks/04.03-Generative-Against-Discriminative.ipynb (naive Bayes against logistic regression).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from numbers import Integral
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import clone
from sklearn.metrics import zero_one_loss
from sklearn.model_selection import ShuffleSplit, StratifiedShuffleSplit
from sklearn.utils import _safe_indexing, check_random_state
from sklearn.utils.validation import column_or_1d, indexable
from tqdm.auto import tqdm

__all__ = ["LearningCurve", "learning_curve"]


@dataclass(frozen=True, eq=False)
class LearningCurve:
    """The test errors of a :func:`learning_curve` run, with their mean and spread.

    Attributes
    ----------
    names : tuple of str
        The estimators, in the order of the first axis of every array.
    train_sizes : ndarray of shape (n_sizes,)
        The numbers of training examples.
    errors : ndarray of shape (n_estimators, n_sizes, n_repeats)
        ``errors[i, j, r]``: the test loss of estimator ``names[i]`` trained on
        ``train_sizes[j]`` examples in repeat ``r``.
    n_test : int
        The size of each repeat's held-out test set.

    Examples
    --------
    >>> curve = LearningCurve(("model",), np.array([10, 20]), np.array([[[0.3, 0.1], [0.2, 0.2]]]), 50)
    >>> curve.mean, curve.std.round(3)
    (array([[0.2, 0.2]]), array([[0.141, 0.   ]]))

    Used in notebooks/04.03-Generative-Against-Discriminative.ipynb.
    """

    names: tuple[str, ...]
    train_sizes: NDArray[np.intp]
    errors: NDArray[np.float64]
    n_test: int

    @property
    def mean(self) -> NDArray[np.float64]:
        """Mean test error over the repeats, shape (n_estimators, n_sizes)."""
        return self.errors.mean(axis=-1)

    @property
    def std(self) -> NDArray[np.float64]:
        """Sample standard deviation (``ddof=1``) over the repeats: the spread of one split."""
        return self.errors.std(axis=-1, ddof=1)

    @property
    def sem(self) -> NDArray[np.float64]:
        """Standard error of the mean, ``std / sqrt(n_repeats)``: the error bar of ``mean``."""
        return self.std / np.sqrt(self.errors.shape[-1])


def _make(template: Any, name: str) -> Any:
    """A fresh unfitted estimator: ``clone`` of an instance, or a call of a class or factory."""
    if isinstance(template, type) or (callable(template) and not hasattr(template, "fit")):
        estimator = template()
    else:  # safe=False: an object without get_params is deep-copied (and checked below)
        estimator = clone(template, safe=False)
    if not (hasattr(estimator, "fit") and hasattr(estimator, "predict")):
        raise ValueError(
            f"estimators[{name!r}] is {template!r}, which is neither a classifier with fit and "
            f"predict nor a class or function that makes one; pass e.g. MultinomialNB() or "
            f"lambda: MultinomialNB(alpha=0.1)."
        )
    return estimator


def _check_sizes(train_sizes: ArrayLike) -> NDArray[np.intp]:
    sizes = np.asarray(train_sizes)
    if (
        sizes.ndim != 1
        or sizes.size == 0
        or sizes.dtype.kind not in "iuf"
        or not np.all(np.isfinite(sizes))
        or np.any(sizes != np.round(sizes))
        or np.any(sizes < 1)
    ):
        raise ValueError(
            f"train_sizes must be a non-empty list of whole numbers of training examples, each "
            f">= 1; got {train_sizes!r}. For fractions of the data, multiply by the number of "
            f"training examples and round."
        )
    if np.any(np.diff(sizes) <= 0):
        raise ValueError(f"train_sizes must increase strictly; got {sizes.tolist()}. Use np.unique(train_sizes).")
    return sizes.astype(np.intp)


def _training_order(codes: NDArray[np.intp], stratify: bool, random_state: np.random.RandomState) -> NDArray[np.intp]:
    """A random order of the training pool, whose prefixes are the training sets.

    Stratified: one example of every class comes first, then the classes interleave in
    proportion to their sizes (the r-th example of a class of n sorts at (r + 1/2) / n), so every
    prefix of at least n_classes examples holds every class and about the class proportions.
    """
    order = random_state.permutation(codes.size)
    if not stratify:
        return order
    shuffled = codes[order]
    class_size = np.bincount(shuffled)
    by_class = np.argsort(shuffled, kind="stable")
    rank = np.empty(codes.size, dtype=np.intp)  # position of each example within its class
    rank[by_class] = np.arange(codes.size) - (np.cumsum(class_size) - class_size)[shuffled[by_class]]
    key = (rank + 0.5) / class_size[shuffled]
    key[rank == 0] = -1.0
    return order[np.argsort(key, kind="stable")]


def learning_curve(
    estimators: Mapping[str, Any],
    X: Any,
    y: ArrayLike,
    train_sizes: ArrayLike,
    *,
    n_repeats: int = 20,
    test_size: float = 0.25,
    stratify: bool = True,
    random_state: int | np.random.RandomState | None = 0,
    loss: Callable[[NDArray[Any], NDArray[Any]], float] = zero_one_loss,
    progress: bool = False,
) -> LearningCurve:
    r"""Test error of each estimator against the training-set size, over repeated random splits.

    Each repeat holds out a random test set (``test_size``), puts the rest (the training pool)
    in a random order, and trains every estimator on the first :math:`m` examples of that order
    for each :math:`m` in ``train_sizes``; so within a repeat the training sets are nested, as in
    :func:`sklearn.model_selection.learning_curve`, and all estimators see the same ones.

    Parameters
    ----------
    estimators : dict of str to estimator or factory
        The classifiers to compare, by name. A value is an unfitted estimator (cloned with
        :func:`sklearn.base.clone` for every fit), or a class or function with no arguments
        that returns one.
    X : {array_like, sparse matrix} of shape (n_samples, n_features)
        The data; sparse matrices stay sparse (rows are selected, never densified).
    y : array_like of shape (n_samples,)
        Class labels; at least two classes.
    train_sizes : array_like of int
        Strictly increasing numbers of training examples, each at most the size of the
        training pool (``n_samples`` minus the test set); with ``stratify=True`` each at least
        the number of classes.
    n_repeats : int, default 20
        Random splits (at least 2: the spread needs two).
    test_size : float or int, default 0.25
        The held-out test set: a fraction of the data or a number of examples, as in
        :class:`sklearn.model_selection.ShuffleSplit`.
    stratify : bool, default True
        Keep the class proportions in the test set (:class:`StratifiedShuffleSplit`) and make
        every training set hold every class: the order of the pool starts with one example of
        each class, then interleaves the classes in proportion to their sizes. With False, the
        splits and orders are plain random; a training set may then miss a class, and an
        estimator that cannot fit it raises (with a note naming the estimator, size and repeat).
    random_state : int, RandomState or None, default 0
        Seed of the splits and orders; an int makes the result reproducible. The estimators'
        own ``random_state`` parameters are left as given.
    loss : callable, default :func:`sklearn.metrics.zero_one_loss`
        ``loss(y_true, y_pred)`` of the predictions on the test set; lower is better. The
        default is the error rate.
    progress : bool, default False
        Show a :func:`tqdm.auto.tqdm` progress bar over the fits: a widget in Jupyter, a line on
        stderr in a terminal. Off by default because a bar is output that changes from run to
        run: a notebook cell that calls this with the default prints nothing, so its stored
        outputs stay comparable by nbval.

    Returns
    -------
    LearningCurve
        ``errors`` of shape (n_estimators, n_sizes, n_repeats), with ``mean``, ``std`` and
        ``sem`` over the repeats.

    Raises
    ------
    ValueError
        For an empty or invalid ``estimators``, fewer than two classes or repeats, or train
        sizes that are not increasing whole numbers, exceed the training pool, or (stratified)
        are smaller than the number of classes.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> from lecturekit.naive_bayes import GaussianNB
    >>> from lecturekit.logistic import LogisticRegression
    >>> X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    >>> curve = learning_curve({"naive Bayes": GaussianNB(), "logistic": LogisticRegression()},
    ...                        X, y, train_sizes=[10, 40, 160], n_repeats=5)
    >>> curve.errors.shape
    (2, 3, 5)
    >>> bool(np.all((curve.errors >= 0) & (curve.errors <= 1)))
    True

    Used in notebooks/04.03-Generative-Against-Discriminative.ipynb.
    """
    if not isinstance(estimators, Mapping) or not estimators:
        raise ValueError(
            f"estimators must be a non-empty dict from a name to a classifier, e.g. "
            f"{{'naive Bayes': MultinomialNB(), 'logistic': LogisticRegression()}}; got "
            f"{estimators!r}."
        )
    names = tuple(str(name) for name in estimators)
    for name, template in estimators.items():
        _make(template, str(name))  # fail before the first fit, not after minutes of them
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, Integral) or n_repeats < 2:
        raise ValueError(f"n_repeats must be an integer >= 2 (a spread needs two repeats); got {n_repeats!r}.")
    sizes = _check_sizes(train_sizes)
    X, y = indexable(X, y)  # sparse X becomes CSR, whose rows can be selected
    y = column_or_1d(y)
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < 2:
        raise ValueError(f"y holds {classes.size} class(es); a learning curve of a classifier needs at least two.")
    if stratify and sizes[0] < classes.size:
        raise ValueError(
            f"The smallest training size {sizes[0]} is below the number of classes "
            f"{classes.size}, so a training set cannot hold every class; start train_sizes at "
            f"{classes.size} or more, or pass stratify=False."
        )

    random_state = check_random_state(random_state)
    split = StratifiedShuffleSplit if stratify else ShuffleSplit
    splits = list(
        split(n_splits=n_repeats, test_size=test_size, random_state=random_state).split(np.zeros((y.size, 1)), codes)
    )
    n_pool, n_test = splits[0][0].size, splits[0][1].size
    if sizes[-1] > n_pool:
        raise ValueError(
            f"The largest training size {sizes[-1]} exceeds the {n_pool} examples left for "
            f"training after holding out {n_test} of {y.size} for testing; use train sizes up to "
            f"{n_pool} or a smaller test_size."
        )
    if stratify and any(np.unique(codes[pool]).size < classes.size for pool, _ in splits):
        raise ValueError(
            "A class is so rare that some training pool has none of it after the test set is "
            "held out; use a smaller test_size, drop the rare class, or pass stratify=False."
        )

    errors = np.empty((len(names), sizes.size, n_repeats))
    with tqdm(total=errors.size, disable=not progress, desc="learning curve", unit="fit") as bar:
        for r, (pool, test) in enumerate(splits):
            X_test, y_test = _safe_indexing(X, test), y[test]
            ordered = pool[_training_order(codes[pool], stratify, random_state)]
            for j, size in enumerate(sizes):
                X_train, y_train = _safe_indexing(X, ordered[:size]), y[ordered[:size]]
                for i, (name, template) in enumerate(estimators.items()):
                    try:
                        estimator = _make(template, str(name)).fit(X_train, y_train)
                        errors[i, j, r] = loss(y_test, estimator.predict(X_test))
                    except Exception as exc:
                        exc.add_note(
                            f"learning_curve: while fitting and testing {name!r} on "
                            f"{size} training examples in repeat {r}."
                        )
                        raise
                    bar.update(1)
    if not np.all(np.isfinite(errors)):
        raise ValueError(
            "loss returned NaN or an infinite value; pass a loss that is finite for "
            "every prediction (the default zero_one_loss is)."
        )
    return LearningCurve(names=names, train_sizes=sizes, errors=errors, n_test=n_test)
