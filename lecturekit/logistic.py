"""Binary logistic regression, the discriminative partner of Gaussian discriminant analysis.

Logistic regression models :math:`p(y = 1 \\mid x) = \\sigma(w^\\top x + w_0)` directly instead of
modelling :math:`p(x \\mid y)`. This module fits it from scratch in NumPy in two ways: Newton's
method (iteratively reweighted least squares, a handful of steps to machine precision) and plain
gradient ascent (hundreds of small steps, kept step by step so that the notebook can draw the
decision boundary moving).

Derived in ``notebooks/02.05-GDA-Against-Logistic-Regression.ipynb``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.linalg import LinAlgError, cho_factor, cho_solve, lstsq
from scipy.special import expit, log_expit
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from lecturekit._checks import check_finite
from lecturekit._classifier import _ScoredClassifier

__all__ = ["LogisticRegression"]

_SOLVERS = ("newton", "gradient")


def _check_finite(X: NDArray[np.float64]) -> None:
    check_finite(
        X,
        "X contains NaN or infinite values; remove or impute them first "
        "(for example with sklearn.impute.SimpleImputer).",
    )


def _mean_objective(z, sign, theta, penalty) -> float:
    r"""Penalised negative log-likelihood per example.

    :math:`\frac1m\bigl[\sum_i \log(1 + e^{-s_i a_i}) + \tfrac12 \sum_j \text{penalty}_j
    \theta_j^2\bigr]` with :math:`s_i = \pm 1`, the log-odds :math:`a_i` of example :math:`i` (``z``)
    and the parameters :math:`\theta = (w, w_0)`. ``log_expit`` (:math:`\log\sigma`) never
    overflows and keeps full precision whatever the margin.
    """
    return float((0.5 * penalty @ theta**2 - log_expit(sign * z).sum()) / z.shape[0])


class LogisticRegression(_ScoredClassifier):
    r"""Binary logistic regression with an L2 penalty, fitted by Newton's method or gradient ascent.

    The model is :math:`p(y = 1 \mid x) = \sigma(w^\top x + w_0)` with the logistic function
    :math:`\sigma(a) = 1 / (1 + e^{-a})`. Fitting minimises, as scikit-learn's
    :class:`sklearn.linear_model.LogisticRegression` does,

    .. math::

        C \sum_{i=1}^{m} \log\bigl(1 + e^{-s_i (w^\top x^{(i)} + w_0)}\bigr) + \tfrac12 \lVert w \rVert^2,
        \qquad s_i = 2y^{(i)} - 1 = \pm 1,

    where the intercept :math:`w_0` is not penalised. Dividing by :math:`C` shows that this is the
    maximum a posteriori (MAP) estimate under the Gaussian prior :math:`w \sim \mathcal N(0, C I)`:
    the penalty is the negative log prior, so a small ``C`` is a narrow prior and a strong pull of
    the weights towards zero. ``C=np.inf`` is a flat prior, i.e. maximum likelihood.

    :meth:`decision_function` returns the log-odds :math:`a = w^\top x + w_0 = \log \frac{p(y=1
    \mid x)}{p(y=0 \mid x)}`, :meth:`predict_proba` the pair :math:`(\sigma(-a), \sigma(a))` and
    :meth:`predict_log_proba` :math:`(\log\sigma(-a), \log\sigma(a))`, each without cancellation
    however large the margin, and :meth:`predict` ``classes_[1]`` where :math:`a > 0`.

    Parameters
    ----------
    C : float, default 1.0
        Inverse regularisation strength, the prior variance of each weight; ``> 0``, or
        ``np.inf`` for no penalty (the maximum-likelihood estimate, which does not exist when the
        classes are linearly separable).
    fit_intercept : bool, default True
        Fit an (unpenalised) intercept :math:`w_0`; if False, :math:`w_0 = 0`.
    solver : {"newton", "gradient"}, default "newton"
        ``"newton"``: Newton's method, also called iteratively reweighted least squares (IRLS),
        with the exact Hessian :math:`X^\top S X + I / C` (:math:`S = \operatorname{diag}(p_i (1 -
        p_i))`), a Cholesky solve and a backtracking line search. ``"gradient"``: plain gradient
        ascent on the penalised *average* log-likelihood with a fixed step ``learning_rate``.
    max_iter : int, default 100
        Most Newton steps, or exactly the number of gradient steps unless ``tol`` stops it early.
    tol : float, default 1e-10
        ``"newton"`` stops when half the squared Newton decrement :math:`\tfrac12 g^\top H^{-1} g`
        (an estimate of the distance to the optimum of the per-example objective) or the largest
        change of a parameter falls below ``tol``; ``"gradient"`` stops when the Euclidean norm of
        the gradient of the average objective falls below ``tol``. ``tol=0`` runs gradient ascent
        for exactly ``max_iter`` steps, without a warning for not converging.
    learning_rate : float, default 1.0
        Step size of gradient ascent (ignored by ``"newton"``). Ascent never decreases the
        objective when it is at most :math:`1 / L` with
        :math:`L = (\tfrac14 \lambda_{\max}(\tilde X^\top \tilde X) + 1/C) / n`
        (:math:`\tilde X` is ``X`` with a column of ones if ``fit_intercept``).
    keep_history : bool, default False
        Store the parameters after every iteration in ``history_``.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        The two class labels, sorted; ``classes_[1]`` is the positive class (:math:`y = 1`).
    coef_ : ndarray of shape (1, n_features)
        The weights :math:`w`.
    intercept_ : ndarray of shape (1,)
        The intercept :math:`w_0` (0 if ``fit_intercept=False``).
    n_iter_ : int
        Number of Newton or gradient steps taken.
    n_features_in_ : int
        Number of features seen in :meth:`fit`.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Column names, only when ``X`` in :meth:`fit` was a data frame with string column names.
    loss_history_ : ndarray of shape (n_iter_,)
        The penalised negative log-likelihood per example,
        :math:`\frac1m\bigl[\sum_i \log(1 + e^{-s_i a_i}) + \lVert w\rVert^2 / (2C)\bigr]` (the
        objective above divided by :math:`mC`), after each iteration: ``loss_history_[k]`` after
        step ``k + 1``. (Before the first step all parameters are zero and it equals
        :math:`\log 2`.) For ``"gradient"`` it is minus the quantity that is ascended.
    history_ : list of (ndarray of shape (1, n_features), ndarray of shape (1,))
        Only with ``keep_history=True``: ``(coef, intercept)`` copies after each of the
        ``n_iter_`` iterations; ``history_[k]`` goes with ``loss_history_[k]``.

    Warns
    -----
    sklearn.exceptions.ConvergenceWarning
        If ``C=np.inf`` and the training data are linearly separable (the maximum-likelihood
        weights are infinite; use a finite ``C``), or if ``max_iter`` iterations did not reach
        ``tol > 0``.

    See Also
    --------
    sklearn.linear_model.LogisticRegression : the reference implementation; the same ``C`` gives
        the same weights.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [2.0], [3.0]])
    >>> model = LogisticRegression(C=np.inf).fit(X, ["no", "yes", "no", "yes"])
    >>> model.classes_.tolist(), model.coef_.round(4).tolist(), model.intercept_.round(4).tolist()
    (['no', 'yes'], [[0.9082]], [-1.3623])
    >>> model.predict_proba([[1.5]]).round(3)
    array([[0.5, 0.5]])

    Gradient ascent reaches the same optimum, one small step at a time:

    >>> slow = LogisticRegression(C=np.inf, solver="gradient", max_iter=1000, tol=1e-9)
    >>> slow.fit(X, ["no", "yes", "no", "yes"]).coef_.round(4).tolist()
    [[0.9082]]

    Derived in ``notebooks/02.05-GDA-Against-Logistic-Regression.ipynb``.
    """

    def __init__(
        self,
        C: float = 1.0,
        fit_intercept: bool = True,
        solver: str = "newton",
        max_iter: int = 100,
        tol: float = 1e-10,
        learning_rate: float = 1.0,
        keep_history: bool = False,
    ):
        self.C = C
        self.fit_intercept = fit_intercept
        self.solver = solver
        self.max_iter = max_iter
        self.tol = tol
        self.learning_rate = learning_rate
        self.keep_history = keep_history

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False  # binary only: fit refuses three or more classes
        return tags

    # ----------------------------------------------------------------------- validation

    def _check_params(self) -> float:
        """Validate the constructor arguments; return the penalty weight ``1 / C`` (0 for inf)."""
        C = self.C
        if isinstance(C, bool) or not isinstance(C, numbers.Real) or np.isnan(C) or C <= 0:
            raise ValueError(
                f"C must be a positive number or np.inf (no penalty); got {C!r}. C is the prior "
                f"variance of the weights: use a small positive C for a strong penalty."
            )
        if self.solver not in _SOLVERS:
            raise ValueError(
                f"solver must be 'newton' or 'gradient'; got {self.solver!r}. Use 'newton' "
                f"(IRLS, the default) or 'gradient' (plain gradient ascent)."
            )
        max_iter = self.max_iter
        if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
            raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
        for name, value, positive in (("tol", self.tol, False), ("learning_rate", self.learning_rate, True)):
            if (
                isinstance(value, bool)
                or not isinstance(value, numbers.Real)
                or not np.isfinite(value)
                or value < 0
                or (positive and value == 0)
            ):
                bound = "> 0" if positive else ">= 0"
                raise ValueError(f"{name} must be a finite number {bound}; got {value!r}.")
        return 0.0 if np.isinf(C) else 1.0 / float(C)

    def _predict_input(self, X: ArrayLike) -> NDArray[np.float64]:
        """Check ``X`` for prediction against what :meth:`fit` saw."""
        check_is_fitted(self)
        try:
            X = validate_data(self, X, reset=False, dtype=np.float64, ensure_all_finite=False)
        except ValueError as exc:
            if "is expecting" in str(exc):  # scikit-learn names the problem; we add the fix
                raise ValueError(f"{exc} Pass X with the same columns, in the same order, as in fit.") from None
            raise
        _check_finite(X)
        return X

    # ----------------------------------------------------------------------- fitting

    def fit(self, X: ArrayLike, y: ArrayLike) -> LogisticRegression:
        """Fit the weights and intercept.

        Parameters
        ----------
        X : array_like of shape (n_samples, n_features)
            Training inputs (dense; sparse matrices are refused).
        y : array_like of shape (n_samples,)
            Labels; exactly two distinct values, of any type.

        Returns
        -------
        LogisticRegression
            ``self``, fitted.

        Raises
        ------
        ValueError
            For invalid constructor arguments, NaN or infinite values, or ``y`` that does not hold
            exactly two classes.

        Derived in ``notebooks/02.05-GDA-Against-Logistic-Regression.ipynb``.
        """
        penalty_weight = self._check_params()
        X, y = validate_data(self, X, y, dtype=np.float64, ensure_all_finite=False)
        _check_finite(X)
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"y holds only one class ({classes.tolist()[0]!r}); logistic regression needs examples of "
                f"both classes. Add examples of the other class."
            )
        if classes.size > 2:
            raise ValueError(
                f"Only binary classification is supported; y holds {classes.size} classes "
                f"{classes[:5].tolist()}. Recode y into two classes, or for more classes use "
                f"sklearn.linear_model.LogisticRegression (softmax regression)."
            )
        self.classes_ = classes
        y01 = (y == classes[1]).astype(np.float64)

        n_samples, n_features = X.shape
        # The intercept is the weight of a column of ones; it gets no penalty.
        design = np.hstack([X, np.ones((n_samples, 1))]) if self.fit_intercept else X
        penalty = np.full(design.shape[1], penalty_weight)
        if self.fit_intercept:
            penalty[-1] = 0.0

        run = self._newton if self.solver == "newton" else self._gradient_ascent
        theta, losses, history, converged, separated = run(design, y01, penalty)

        self.coef_, self.intercept_ = self._snapshot(theta, n_features)
        self.n_iter_ = len(losses)
        self.loss_history_ = np.asarray(losses, dtype=float)
        if self.keep_history:
            self.history_ = history
        elif hasattr(self, "history_"):
            del self.history_  # from an earlier fit; it would not describe this one
        if separated:
            warnings.warn(
                f"The training data are linearly separable, so with C=np.inf (no penalty) the "
                f"likelihood keeps growing as the weights grow: the maximum-likelihood weights are "
                f"infinite, and the {self.solver!r} solver stopped after {self.n_iter_} iterations "
                f"with one separating direction. Use a finite C (for example C=1.0), the MAP "
                f"estimate under a Gaussian prior, to get finite weights.",
                ConvergenceWarning,
                stacklevel=2,
            )
        elif not converged and self.tol > 0:  # tol=0 asks for exactly max_iter iterations
            warnings.warn(
                f"The {self.solver!r} solver did not reach tol={self.tol} in max_iter={self.max_iter} "
                f"iterations. Increase max_iter"
                + (" or learning_rate (if the loss falls steadily)" if self.solver == "gradient" else "")
                + ", or use a finite C if the classes are (nearly) separable.",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def _snapshot(self, theta, n_features):
        """``(coef, intercept)`` of shapes (1, n_features) and (1,), copied out of ``theta``."""
        coef = theta[:n_features].reshape(1, -1).copy()
        return coef, np.array([theta[n_features] if self.fit_intercept else 0.0])

    def _start(self, design, y01):
        """What both solvers start from: n, n_features, the signs 2y - 1, theta = 0 and z = X theta."""
        n, p = design.shape
        return n, (p - 1 if self.fit_intercept else p), 2.0 * y01 - 1.0, np.zeros(p), np.zeros(n)

    def _newton(self, design, y01, penalty):
        """Newton's method with a backtracking line search on the per-example objective."""
        n, n_features, sign, theta, z = self._start(design, y01)
        loss = _mean_objective(z, sign, theta, penalty)
        losses, history = [], []
        rows = np.empty_like(design)  # sqrt(S) X, reused every iteration
        diagonal = np.diag_indices(theta.size)
        converged = separated = False
        for _ in range(self.max_iter):
            prob = expit(z)
            gradient = (design.T @ (prob - y01) + penalty * theta) / n
            # S = p (1 - p), written so that it does not cancel to 0 when p rounds to 1.
            np.multiply(design, np.sqrt(prob * expit(-z))[:, None], out=rows)
            hessian = rows.T @ rows  # X^T S X in one BLAS call (syrk: A^T A)
            hessian[diagonal] += penalty
            hessian /= n
            try:
                step = -cho_solve(cho_factor(hessian, lower=True, check_finite=False), gradient, check_finite=False)
            except LinAlgError:
                # Singular Hessian (C=np.inf with collinear features, or nearly separable data):
                # take the minimum-norm Newton step instead.
                step = -lstsq(hessian, gradient, check_finite=False)[0]
            slope = float(gradient @ step)  # = -(Newton decrement)^2 <= 0
            # Backtracking (Armijo) line search; the allowance absorbs rounding in the loss.
            roundoff = 64 * np.finfo(float).eps * loss
            t = 1.0
            while True:
                theta_new = theta + t * step
                z_new = design @ theta_new
                loss_new = _mean_objective(z_new, sign, theta_new, penalty)
                if loss_new <= loss + 1e-4 * t * slope + roundoff:
                    break
                t *= 0.5
                if t < 1e-12:  # no decrease possible: we are at the optimum to rounding error
                    theta_new, z_new, loss_new, t = theta, z, loss, 0.0
                    break
            theta, z, loss = theta_new, z_new, loss_new
            losses.append(loss)
            if self.keep_history:
                history.append(self._snapshot(theta, n_features))
            if not penalty.any() and np.all(sign * z > 0):
                # Every training point strictly on its side: scaling theta up lowers the loss
                # without end, so no maximum-likelihood estimate exists.
                separated = True
                break
            if -slope / 2 <= self.tol or t * np.abs(step).max(initial=0.0) <= self.tol:
                converged = True
                break
        return theta, losses, history, converged, separated

    def _gradient_ascent(self, design, y01, penalty):
        """Plain gradient ascent on the penalised average log-likelihood, fixed step size."""
        n, n_features, sign, theta, z = self._start(design, y01)
        losses, history = [], []
        converged = False
        for _ in range(self.max_iter):
            ascent = (design.T @ (y01 - expit(z)) - penalty * theta) / n
            if np.linalg.norm(ascent) < self.tol:
                converged = True
                break
            theta = theta + self.learning_rate * ascent
            z = design @ theta
            losses.append(_mean_objective(z, sign, theta, penalty))
            if self.keep_history:
                history.append(self._snapshot(theta, n_features))
        else:
            prob = expit(z)
            converged = np.linalg.norm((design.T @ (y01 - prob) - penalty * theta) / n) < self.tol
        separated = not penalty.any() and bool(np.all(sign * z > 0))
        return theta, losses, history, converged, separated

    # ----------------------------------------------------------------------- prediction
    # predict, predict_proba, predict_log_proba and decision_function come from
    # _ScoredClassifier, as the logistic function of the log-odds below.

    def _log_odds(self, X: NDArray[np.float64], where: str) -> NDArray[np.float64]:
        """The log-odds :math:`a = w^\\top x + w_0` of the checked ``X``."""
        return X @ self.coef_[0] + self.intercept_[0]
