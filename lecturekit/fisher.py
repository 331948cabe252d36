r"""Fisher's linear discriminant: the projections that separate classes best (reduced-rank LDA).

Fisher (1936) looked for the direction :math:`w` along which the projected class means lie far
apart compared with the spread of the projected points inside each class, that is the maximiser
of the Rayleigh quotient

.. math::

    J(w) = \frac{w^\top S_B\, w}{w^\top S_W\, w},

with the within-class scatter :math:`S_W` (the pooled covariance of Gaussian discriminant
analysis, divided by m) and the between-class scatter
:math:`S_B = \sum_k \pi_k (\mu_k - \bar\mu)(\mu_k - \bar\mu)^\top`. The stationary points solve
the generalised symmetric eigenproblem :math:`S_B v = \lambda S_W v`; at most
:math:`\min(K - 1, d)` eigenvalues are non-zero, so K classes in d dimensions have at most that
many useful directions. For two classes the best direction is
:math:`w \propto S_W^{-1}(\mu_1 - \mu_0)`, the weight vector of GDA's logistic posterior.

The eigenproblem is solved through the Cholesky factor :math:`S_W = LL^\top` (whiten, then an
ordinary symmetric eigenproblem), so :math:`S_W` is never inverted. Nothing here assumes Gaussian
classes; the module only projects, and classification is left to :mod:`lecturekit.gda`.

Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
"""

from __future__ import annotations

import numbers
from numbers import Real
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import cho_solve, eigh, solve_triangular
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import validate_data

from lecturekit._checks import check_finite, class_codes, fitted_input
from lecturekit.gaussian import cholesky

__all__ = ["FisherDiscriminant", "fisher_direction", "scatter_matrices"]


def _check_reg_covar(reg_covar: Any, owner: str) -> float:
    if isinstance(reg_covar, bool) or not isinstance(reg_covar, Real) or not np.isfinite(reg_covar) or reg_covar < 0:
        raise ValueError(
            f"reg_covar of {owner} is added to the diagonal of the within-class scatter and must "
            f"be a finite number >= 0; got {reg_covar!r}. Use 0.0 for the plain scatter, or a small "
            f"value such as 1e-6 when features are collinear."
        )
    return float(reg_covar)


def _class_statistics(X: NDArray[np.float64], y: Any, where: str):
    """Classes, counts, means, overall mean and the two scatter matrices of validated ``X``."""
    if y is None:
        raise ValueError(f"{where} requires y, one class label per row of X; got None.")
    check_finite(
        X,
        f"X passed to {where} contains NaN or infinite values; remove those rows or "
        f"impute the values first (e.g. sklearn.impute.SimpleImputer).",
    )
    classes, codes = class_codes(
        y,
        X.shape[0],
        where,
        f"{where} needs at least two classes, but y "
        f"holds only {{}}: with one class there is no between-class "
        f"scatter to maximise. Add examples of another class.",
    )
    n = X.shape[0]
    counts = np.bincount(codes, minlength=classes.size)
    priors = counts / n
    means = np.zeros((classes.size, X.shape[1]))
    np.add.at(means, codes, X)
    means /= counts[:, np.newaxis]
    overall = priors @ means  # equals X.mean(axis=0)
    residuals = X - means[codes]
    within = residuals.T @ residuals / n
    centred_means = means - overall
    between = (centred_means.T * priors) @ centred_means
    return classes, counts, priors, means, overall, 0.5 * (within + within.T), 0.5 * (between + between.T)


def scatter_matrices(X: ArrayLike, y: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Within-class and between-class scatter matrices (both divided by m).

    .. math::

        S_W = \frac1m \sum_{i=1}^m (x^{(i)} - \mu_{y^{(i)}})(x^{(i)} - \mu_{y^{(i)}})^\top, \qquad
        S_B = \sum_{k} \pi_k (\mu_k - \bar\mu)(\mu_k - \bar\mu)^\top,

    with class frequencies :math:`\pi_k = m_k / m` and overall mean :math:`\bar\mu`. Their sum is
    the total covariance :math:`\frac1m \sum_i (x^{(i)} - \bar\mu)(x^{(i)} - \bar\mu)^\top`, and
    :math:`S_W` is the pooled covariance that :class:`lecturekit.gda.GDA` estimates.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Finite real inputs.
    y : array_like of shape (n_samples,)
        Class labels; at least two classes.

    Returns
    -------
    within : ndarray of shape (n_features, n_features)
        :math:`S_W`.
    between : ndarray of shape (n_features, n_features)
        :math:`S_B`, of rank at most :math:`\min(K - 1, d)`.

    Examples
    --------
    >>> X = np.array([[0.0, 0.0], [2.0, 0.0], [4.0, 2.0], [6.0, 2.0]])
    >>> within, between = scatter_matrices(X, [0, 0, 1, 1])
    >>> within
    array([[1., 0.],
           [0., 0.]])
    >>> between
    array([[4., 2.],
           [2., 1.]])

    Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n_samples, n_features); got shape {X.shape}.")
    *_, within, between = _class_statistics(X, y, "scatter_matrices")
    return within, between


def fisher_direction(X: ArrayLike, y: ArrayLike, reg_covar: float = 0.0) -> NDArray[np.float64]:
    r"""Fisher's discriminant direction for two classes, as a unit vector.

    The maximiser of :math:`J(w) = (w^\top(\mu_1 - \mu_0))^2 / (w^\top S_W w)` is
    :math:`w \propto S_W^{-1}(\mu_1 - \mu_0)`, the same direction as the weight vector
    :math:`w` of GDA's logistic posterior. The result has length one and points towards the
    second class: :math:`w^\top(\mu_1 - \mu_0) > 0`, with classes in sorted order.

    Parameters
    ----------
    X : array_like of shape (n_samples, n_features)
        Finite real inputs.
    y : array_like of shape (n_samples,)
        Labels of exactly two classes.
    reg_covar : float, default 0.0
        Non-negative number added to the diagonal of :math:`S_W` (needed when features are
        collinear).

    Returns
    -------
    ndarray of shape (n_features,)
        The unit vector :math:`w`.

    Raises
    ------
    ValueError
        For another number of classes than two, NaN or infinite values, or a singular
        :math:`S_W` (the message suggests ``reg_covar``).

    Examples
    --------
    The class means differ along the first feature only, but the features are correlated within
    the classes, so the best direction leans away from the second feature:

    >>> X = np.array([[0.0, 0.0], [2.0, 2.0], [0.0, 2.0], [3.0, 0.0], [5.0, 2.0], [3.0, 2.0]])
    >>> np.round(fisher_direction(X, [0, 0, 0, 1, 1, 1]), 4)
    array([ 0.8944, -0.4472])

    Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n_samples, n_features); got shape {X.shape}.")
    reg_covar = _check_reg_covar(reg_covar, "fisher_direction")
    classes, _, _, means, _, within, _ = _class_statistics(X, y, "fisher_direction")
    if classes.size != 2:
        raise ValueError(
            f"fisher_direction needs exactly two classes; y has {classes.size}. For more classes "
            f"use FisherDiscriminant, whose scalings_ hold min(K - 1, d) directions."
        )
    within.flat[:: X.shape[1] + 1] += reg_covar
    chol = cholesky(within, name="the within-class scatter S_W")
    w = cho_solve((chol, True), means[1] - means[0])
    return w / np.linalg.norm(w)


class FisherDiscriminant(TransformerMixin, BaseEstimator):
    r"""Reduced-rank linear discriminant analysis: project onto Fisher's discriminant directions.

    Fitting solves :math:`S_B v = \lambda S_W v` and keeps the eigenvectors of the
    ``n_components`` largest eigenvalues, scaled so that :math:`v^\top S_W v = 1`: in the new
    coordinates the pooled within-class covariance is the identity. That is an average over the
    classes; one class's own covariance need not be the identity. :meth:`transform` returns
    :math:`(x - \bar\mu)^\top V`.

    Parameters
    ----------
    n_components : int, optional
        Number of directions to keep, between 1 and :math:`\min(K - 1, d)`; by default all
        :math:`\min(K - 1, d)` of them (the other eigenvalues are zero).
    reg_covar : float, default 0.0
        Non-negative number added to the diagonal of :math:`S_W` (as in
        :class:`lecturekit.gda.GDA`), for collinear features.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    priors_ : ndarray of shape (n_classes,)
        Class frequencies :math:`\pi_k = m_k / m`.
    means_ : ndarray of shape (n_classes, n_features)
        Class means :math:`\mu_k`.
    xbar_ : ndarray of shape (n_features,)
        Overall mean :math:`\bar\mu`, subtracted by :meth:`transform`.
    within_scatter_ : ndarray of shape (n_features, n_features)
        :math:`S_W` (plus ``reg_covar`` on the diagonal).
    between_scatter_ : ndarray of shape (n_features, n_features)
        :math:`S_B`.
    eigenvalues_ : ndarray of shape (n_components,)
        The kept eigenvalues, largest first: the ratio of between- to within-class variance
        along each direction.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        Each kept eigenvalue over the sum of all of them (as in scikit-learn's
        ``LinearDiscriminantAnalysis``).
    scalings_ : ndarray of shape (n_features, n_components)
        The directions :math:`V`, with :math:`V^\top S_W V = I`; the sign of each column is fixed
        so that its entry of largest magnitude is positive.
    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> fisher = FisherDiscriminant().fit(X, y)
    >>> fisher.transform(X).shape
    (150, 2)
    >>> np.round(fisher.explained_variance_ratio_, 4)
    array([0.9912, 0.0088])

    Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
    """

    def __init__(self, n_components: int | None = None, reg_covar: float = 0.0):
        self.n_components = n_components
        self.reg_covar = reg_covar

    def fit(self, X: ArrayLike, y: ArrayLike) -> FisherDiscriminant:
        """Scatter matrices and the leading generalised eigenvectors.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training inputs (finite real numbers), at least two rows.
        y : array_like of shape (n_samples,)
            Their class labels, of at least two classes.

        Returns
        -------
        self : FisherDiscriminant
            The fitted transformer.

        Raises
        ------
        ValueError
            For invalid parameters, NaN or infinite values, fewer than two classes, more
            components than :math:`\\min(K - 1, d)`, or a singular :math:`S_W`.

        Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
        """
        reg_covar = _check_reg_covar(self.reg_covar, "FisherDiscriminant")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite=False, ensure_min_samples=2)
        classes, _, priors, means, overall, within, between = _class_statistics(X, y, "FisherDiscriminant.fit")
        d = X.shape[1]
        most = min(classes.size - 1, d)
        n_components = self._check_n_components(most, classes.size, d)
        within.flat[:: d + 1] += reg_covar
        # Notebook 2.3 prints the lines from here to `total` (inspect.getsource) and compares them with its
        # stored output: they keep their layout.
        # fmt: off
        chol = cholesky(within, name="the within-class scatter S_W")
        # S_B v = lambda L L^T v; with u = L^T v this is (L^{-1} S_B L^{-T}) u = lambda u.
        half = solve_triangular(chol, between, lower=True, check_finite=False)
        whitened = solve_triangular(chol, half.T, lower=True, check_finite=False)
        values, vectors = eigh(0.5 * (whitened + whitened.T))
        order = np.argsort(values)[::-1]
        values = np.clip(values[order], 0.0, None)
        # v = L^{-T} u; orthonormal u gives V^T S_W V = U^T U = I.
        scalings = solve_triangular(chol, vectors[:, order[:n_components]], lower=True, trans="T",
                                    check_finite=False)
        biggest = np.argmax(np.abs(scalings), axis=0)
        scalings *= np.sign(scalings[biggest, np.arange(n_components)])
        total = values.sum()
        # fmt: on

        self.classes_ = classes
        self.priors_ = priors
        self.means_ = means
        self.xbar_ = overall
        self.within_scatter_ = within
        self.between_scatter_ = between
        self.eigenvalues_ = values[:n_components]
        self.explained_variance_ratio_ = values[:n_components] / total if total > 0 else np.zeros(n_components)
        self.scalings_ = scalings
        return self

    def _check_n_components(self, most: int, n_classes: int, d: int) -> int:
        if self.n_components is None:
            return most
        if (
            isinstance(self.n_components, bool)
            or not isinstance(self.n_components, numbers.Integral)
            or not 1 <= self.n_components <= most
        ):
            raise ValueError(
                f"n_components must be an integer between 1 and min(n_classes - 1, n_features) = "
                f"min({n_classes - 1}, {d}) = {most}: the between-class scatter of {n_classes} "
                f"class means has rank at most {most}; got {self.n_components!r}. Use None for all."
            )
        return int(self.n_components)

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Discriminant coordinates :math:`(x - \bar\mu)^\top V`.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)

        Derived in ``notebooks/02.03-From-GDA-to-the-Logistic-Function.ipynb``.
        """
        X = fitted_input(self, X)
        check_finite(
            X, "X passed to FisherDiscriminant.transform contains NaN or infinite values; remove or impute them first."
        )
        return (X - self.xbar_) @ self.scalings_
