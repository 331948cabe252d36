"""The course's figure style, and pictures for the Gaussian chapters: densities, ellipses, regions.

:func:`use_course_style` sets, once per notebook (its setup cell calls it), the colour cycle every
figure draws from: the eight colours of Okabe and Ito's palette, which readers with any of the
three common colour-vision deficiencies can still tell apart, in an order that keeps ``C0`` blue
and ``C1`` orange and puts the first two colours far apart in lightness, so two classes stay
distinct in greyscale too. Colour is never the only cue: :data:`MARKERS` and :data:`LINESTYLES`
give each class or curve a second one, and :func:`decision_regions` draws class ``k`` with
``MARKERS[k]``.

Each picture function draws on a Matplotlib ``Axes`` that the caller gives it and returns the artist it
drew, so that a notebook can style, label or test it. Nothing here fits a model: the caller
passes a model that is already fitted, or a plain function of the points. The Gaussian density
behind the contours and surfaces is evaluated here with a Cholesky factor (a few lines of NumPy),
so this module depends on no model module.

Used in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``,
``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb`` and
``notebooks/02.05-GDA-Against-Logistic-Regression.ipynb``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import matplotlib as mpl
import numpy as np
from cycler import cycler
from matplotlib.colors import BoundaryNorm, Colormap, ListedColormap, to_rgba_array
from matplotlib.contour import QuadContourSet
from matplotlib.patches import Ellipse
from numpy.typing import ArrayLike, NDArray

from lecturekit._arrays import as_float_array
from lecturekit.gaussian import log_density

__all__ = [
    "LINESTYLES",
    "MARKERS",
    "OKABE_ITO",
    "covariance_ellipse",
    "decision_boundary",
    "decision_regions",
    "gaussian_contours",
    "gaussian_surface",
    "use_course_style",
]


# --------------------------------------------------------------------------- the course's style

#: Okabe and Ito's colour-blind-safe palette (https://jfly.uni-koeln.de/color/), as ``C0``-``C7``:
#: blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black. Blue and
#: orange lead because they differ most in lightness (two classes stay apart in greyscale); yellow
#: is faint on white, so it comes late.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")

#: One marker per class, in the order of the colours: class ``k`` is ``C{k}`` with ``MARKERS[k]``.
MARKERS = ("o", "^", "s", "D", "v", "P", "X", "*")

#: One line style per curve, for figures where colour alone would tell curves apart.
LINESTYLES = ("-", "--", "-.", ":")

_COURSE_RC = {
    "axes.prop_cycle": cycler(color=list(OKABE_ITO)),
    "figure.dpi": 100,
    "image.cmap": "viridis",  # perceptually uniform and readable in greyscale
}


def use_course_style() -> None:
    """Set Matplotlib's colour cycle to :data:`OKABE_ITO` (and the course's figure resolution).

    Call it once, after importing ``matplotlib.pyplot``, in a notebook's setup cell; every colour
    given as ``"C0"``, ``"C1"``, ... or taken from the cycle then comes from the palette.

    Returns
    -------
    None
        ``matplotlib.rcParams`` is changed in place: ``axes.prop_cycle`` (the palette),
        ``figure.dpi`` (100) and ``image.cmap`` (viridis). Inside ``matplotlib.rc_context()``
        the change ends with the block.

    Examples
    --------
    >>> import matplotlib as mpl
    >>> from matplotlib.colors import to_hex
    >>> with mpl.rc_context():
    ...     use_course_style()
    ...     print(to_hex("C0"), to_hex("C1"))
    #0072b2 #e69f00
    """
    mpl.rcParams.update(_COURSE_RC)


# --------------------------------------------------------------------------- validation helpers


def _as_points(X: ArrayLike, name: str = "X") -> NDArray[np.float64]:
    X = as_float_array(X, name, min_ndim=0)
    if X.ndim != 2 or X.shape[1] != 2 or X.shape[0] == 0:
        raise ValueError(
            f"{name} must have shape (n_points, 2) with n_points >= 1; got shape {X.shape}. "
            f"These pictures are in the plane: select two features, e.g. X[:, [0, 1]]."
        )
    return X


def _as_gaussian(mean: ArrayLike, cov: ArrayLike, *, strict: bool) -> tuple[NDArray, NDArray]:
    """Check a 2-D mean and covariance; ``strict`` demands positive definiteness (for a density)."""
    mean = np.asarray(mean, dtype=float)
    cov = np.asarray(cov, dtype=float)
    if mean.shape != (2,) or cov.shape != (2, 2):
        raise ValueError(
            f"mean must have shape (2,) and cov shape (2, 2); got {mean.shape} and {cov.shape}. "
            f"Select the two coordinates to draw, e.g. mean[[0, 1]] and cov[np.ix_([0, 1], [0, 1])]."
        )
    if not (np.all(np.isfinite(mean)) and np.all(np.isfinite(cov))):
        raise ValueError("mean and cov must be finite; remove NaN or infinite values.")
    if not np.allclose(cov, cov.T, rtol=1e-10, atol=1e-12 * np.abs(cov).max(initial=0.0)):
        raise ValueError(f"cov must be symmetric; got {cov.tolist()}. Use (cov + cov.T) / 2.")
    smallest = np.linalg.eigvalsh(cov)[0]
    scale = np.abs(cov).max(initial=0.0)
    if smallest <= 0 if strict else smallest < -1e-12 * scale:
        need = "positive definite" if strict else "positive semi-definite"
        raise ValueError(
            f"cov must be {need}; its smallest eigenvalue is {smallest:.3g}. "
            f"Add a small multiple of the identity, e.g. cov + 1e-6 * np.eye(2)."
        )
    return mean, cov


def _as_limits(limits: ArrayLike, name: str) -> tuple[float, float]:
    try:
        values = np.asarray(limits, dtype=float).ravel()
    except (TypeError, ValueError):
        values = np.array([np.nan])
    if values.shape != (2,) or not np.all(np.isfinite(values)) or values[0] >= values[1]:
        raise ValueError(f"{name} must be a pair (low, high) of finite numbers with low < high; got {limits!r}.")
    return float(values[0]), float(values[1])


def _check_resolution(resolution: int) -> int:
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 2:
        raise ValueError(f"resolution is the number of grid points per axis: an integer >= 2; got {resolution!r}.")
    return int(resolution)


def _grid(xlim, ylim, resolution):
    """``resolution x resolution`` grid; returns the two mesh arrays and the points as (m, 2)."""
    xx, yy = np.meshgrid(np.linspace(*xlim, resolution), np.linspace(*ylim, resolution))
    return xx, yy, np.column_stack([xx.ravel(), yy.ravel()])


def _grid_around(X, padding, resolution):
    padding = float(padding)
    if not np.isfinite(padding) or padding < 0:
        raise ValueError(f"padding is a margin in data units around X: a number >= 0; got {padding!r}.")
    low, high = X.min(axis=0) - padding, X.max(axis=0) + padding
    high = np.where(high > low, high, low + 1.0)  # all points on one line: still draw a square
    return _grid((low[0], high[0]), (low[1], high[1]), _check_resolution(resolution))


def _method_or_callable(model: Any, method: str, name: str) -> Callable[[NDArray], ArrayLike]:
    function = getattr(model, method, None)
    if callable(function):
        return function
    if callable(model):
        return model
    raise TypeError(
        f"{name} must be a fitted model with a .{method} method or a function of an (m, 2) array; "
        f"got {type(model).__name__}. Fit the model first, then pass it."
    )


def _evaluate(function, points, name):
    values = np.asarray(function(points))
    if values.shape != (points.shape[0],):
        raise ValueError(
            f"{name} must map an (m, 2) array to m values, one per point; got shape {values.shape} "
            f"for m = {points.shape[0]}. For class probabilities pass one column, e.g. "
            f"lambda P: model.predict_proba(P)[:, 1]."
        )
    return values


def _gaussian_density(points: NDArray, mean: NDArray, cov: NDArray) -> NDArray[np.float64]:
    """Density of N(mean, cov) at each row of ``points`` (through lecturekit.gaussian's Cholesky)."""
    return np.exp(log_density(points, mean, cov))


# --------------------------------------------------------------------------- classifiers


def decision_regions(
    ax,
    predict: Any,
    X: ArrayLike,
    y: ArrayLike | None = None,
    *,
    resolution: int = 300,
    padding: float = 0.5,
    alpha: float = 0.25,
    cmap: str | Colormap | None = None,
) -> QuadContourSet:
    """Colour the plane by predicted class, and scatter the data on top.

    The predictor is evaluated on a ``resolution x resolution`` grid that covers ``X`` plus
    ``padding``; each class gets one colour, used both for its region and for its points, and
    its points get a marker of their own (class ``k``: ``MARKERS[k]``), so that the classes can
    be told apart without colour.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    predict : fitted classifier or callable
        Anything with a ``.predict`` method (it is called, never fitted), or a function that maps
        an (m, 2) array to m labels.
    X : array_like of shape (n, 2)
        The points to scatter; they also set the extent of the grid.
    y : array_like of shape (n,), optional
        Their labels; points are coloured and marked by class if given (one scatter per class
        present, in sorted order), black dots otherwise.
    resolution : int, default 300
        Grid points per axis.
    padding : float, default 0.5
        Margin around ``X``, in data units.
    alpha : float, default 0.25
        Opacity of the regions.
    cmap : str or Colormap, optional
        Colours of the classes, in sorted label order; default the colour cycle C0, C1, ...
        (so class ``k`` matches ``color=f"C{k}"`` elsewhere).

    Returns
    -------
    matplotlib.contour.QuadContourSet
        The filled regions; region ``k`` (``get_paths()[k]``) is the ``k``-th class in sorted
        order of all labels seen (predicted, in ``y`` or in ``predict.classes_``).

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> X = np.array([[-1.0, 0.0], [1.0, 0.0]])
    >>> regions = decision_regions(ax, lambda P: P[:, 0] > 0, X, [False, True], resolution=50)
    >>> len(regions.get_paths())
    2

    Used in ``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb`` and
    ``notebooks/02.05-GDA-Against-Logistic-Regression.ipynb``.
    """
    X = _as_points(X)
    labeller = _method_or_callable(predict, "predict", "predict")
    xx, yy, grid = _grid_around(X, padding, resolution)
    labels = _evaluate(labeller, grid, "predict")
    seen = [labels]
    if y is not None:
        y = np.asarray(y)
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must hold one label per row of X: shape ({X.shape[0]},); got {y.shape}.")
        seen.append(y)
    if getattr(predict, "classes_", None) is not None:
        seen.append(np.asarray(predict.classes_))
    try:
        classes = np.unique(np.concatenate(seen))
    except TypeError as exc:
        raise ValueError(
            f"The predicted labels and y cannot be compared ({exc}); give y the label type that the predictor returns."
        ) from exc
    n_classes = classes.size
    if cmap is None:
        colours = ListedColormap(to_rgba_array([f"C{k}" for k in range(n_classes)]))
    else:
        colours = (mpl.colormaps[cmap] if isinstance(cmap, str) else cmap).resampled(n_classes)
    bounds = np.arange(n_classes + 1) - 0.5
    norm = BoundaryNorm(bounds, n_classes)
    codes = np.searchsorted(classes, labels).reshape(xx.shape)
    regions = ax.contourf(xx, yy, codes, levels=bounds, cmap=colours, norm=norm, alpha=alpha)
    if y is None:
        ax.scatter(X[:, 0], X[:, 1], s=12, color="k")
        return regions
    codes = np.searchsorted(classes, y)
    for k in np.unique(codes):  # one marker per class: colour is not the only cue
        ax.scatter(
            X[codes == k, 0],
            X[codes == k, 1],
            color=colours(norm(k)),
            marker=MARKERS[k % len(MARKERS)],
            s=18,
            edgecolors="k",
            linewidths=0.5,
        )
    return regions


def decision_boundary(
    ax,
    score: Any,
    X: ArrayLike,
    level: float = 0.0,
    *,
    resolution: int = 300,
    padding: float = 0.5,
    **kwargs: Any,
) -> QuadContourSet:
    """Draw the curve where a score equals ``level``: the decision boundary.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    score : callable or fitted model
        A function that maps an (m, 2) array to m numbers, such as ``model.decision_function``
        (boundary at 0) or ``lambda P: model.predict_proba(P)[:, 1]`` (boundary at 0.5); a
        model with a ``.decision_function`` method may be passed as is. It is never fitted here.
    X : array_like of shape (n, 2)
        Sets the extent of the grid (the points are not drawn).
    level : float, default 0.0
        The value of the score on the boundary.
    resolution : int, default 300
        Grid points per axis.
    padding : float, default 0.5
        Margin around ``X``, in data units.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.contour` (default ``colors="k"``).

    Returns
    -------
    matplotlib.contour.QuadContourSet
        The boundary; empty (with Matplotlib's warning) if the score never crosses ``level``.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> line = decision_boundary(ax, lambda P: P[:, 0] + P[:, 1], [[-1, -1], [1, 1]])
    >>> line.levels.tolist()
    [0.0]

    Used in ``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb`` and
    ``notebooks/02.05-GDA-Against-Logistic-Regression.ipynb``.
    """
    X = _as_points(X)
    scorer = _method_or_callable(score, "decision_function", "score")
    level = float(level)
    if not np.isfinite(level):
        raise ValueError(f"level must be a finite number; got {level!r}.")
    xx, yy, grid = _grid_around(X, padding, resolution)
    values = _evaluate(scorer, grid, "score").astype(float).reshape(xx.shape)
    if "colors" not in kwargs and "cmap" not in kwargs:
        kwargs["colors"] = "k"
    return ax.contour(xx, yy, values, levels=[level], **kwargs)


# --------------------------------------------------------------------------- Gaussians


def covariance_ellipse(ax, mean: ArrayLike, cov: ArrayLike, n_std: float = 2.0, **patch_kwargs: Any) -> Ellipse:
    r"""Draw the ellipse :math:`(x-\mu)^\top \Sigma^{-1} (x-\mu) = k^2` with :math:`k` = ``n_std``.

    With :math:`\Sigma = \sum_i \lambda_i u_i u_i^\top`, the semi-axes point along the
    eigenvectors :math:`u_i` and have lengths :math:`k\sqrt{\lambda_i}`.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    mean : array_like of shape (2,)
        Centre :math:`\mu`.
    cov : array_like of shape (2, 2)
        Covariance :math:`\Sigma`, symmetric positive semi-definite.
    n_std : float, default 2.0
        Mahalanobis radius :math:`k`, in standard deviations.
    **patch_kwargs
        Passed to :class:`matplotlib.patches.Ellipse`, e.g. ``color``, ``lw``, ``ls``,
        ``label``. Without ``fill=True`` or a ``facecolor`` the ellipse is an outline (in
        ``color``, if given).

    Returns
    -------
    matplotlib.patches.Ellipse
        The patch, already added to ``ax``; ``width`` lies along the principal eigenvector,
        whose direction is ``angle`` degrees anticlockwise from the x axis.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> e = covariance_ellipse(ax, [0, 0], [[4, 0], [0, 1]], n_std=2)
    >>> float(e.width), float(e.height)
    (8.0, 4.0)

    Used in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb`` and
    ``notebooks/02.02-Gaussian-Discriminant-Analysis.ipynb``.
    """
    mean, cov = _as_gaussian(mean, cov, strict=False)
    n_std = float(n_std)
    if not np.isfinite(n_std) or n_std <= 0:
        raise ValueError(f"n_std is a radius in standard deviations and must be > 0; got {n_std!r}.")
    eigenvalues, eigenvectors = np.linalg.eigh(cov)  # ascending
    eigenvalues = np.clip(eigenvalues, 0.0, None)  # rounding may make a zero slightly negative
    major = eigenvectors[:, 1]
    angle = np.degrees(np.arctan2(major[1], major[0])) % 180.0
    if not {"fill", "facecolor", "fc"} & patch_kwargs.keys():  # an outline unless asked to fill
        patch_kwargs["fill"] = False
    ellipse = Ellipse(
        xy=tuple(mean),
        width=2 * n_std * np.sqrt(eigenvalues[1]),
        height=2 * n_std * np.sqrt(eigenvalues[0]),
        angle=angle,
        **patch_kwargs,
    )
    ax.add_patch(ellipse)
    ax.autoscale_view()
    return ellipse


def gaussian_contours(
    ax,
    mean: ArrayLike,
    cov: ArrayLike,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    levels: int | ArrayLike = 6,
    resolution: int = 200,
    *,
    filled: bool = False,
    **kwargs: Any,
) -> QuadContourSet:
    r"""Contours of the density of :math:`\mathcal N(\mu, \Sigma)` in the plane.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    mean : array_like of shape (2,)
    cov : array_like of shape (2, 2)
        Symmetric positive definite.
    xlim, ylim : (float, float)
        The rectangle to cover.
    levels : int or array_like, default 6
        Number of contour levels, or the density values to draw.
    resolution : int, default 200
        Grid points per axis.
    filled : bool, default False
        Filled bands (``contourf``) instead of lines.
    **kwargs
        Passed to :meth:`~matplotlib.axes.Axes.contour` or ``contourf``.

    Returns
    -------
    matplotlib.contour.QuadContourSet
        Ellipses centred on ``mean``, the highest level innermost.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax = Figure().add_subplot()
    >>> lines = gaussian_contours(ax, [0, 0], np.eye(2), (-3, 3), (-3, 3), levels=[0.05, 0.1])
    >>> lines.levels.tolist()
    [0.05, 0.1]

    Used in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
    """
    mean, cov = _as_gaussian(mean, cov, strict=True)
    xx, yy, grid = _grid(_as_limits(xlim, "xlim"), _as_limits(ylim, "ylim"), _check_resolution(resolution))
    density = _gaussian_density(grid, mean, cov).reshape(xx.shape)
    draw = ax.contourf if filled else ax.contour
    return draw(xx, yy, density, levels=levels, **kwargs)


def gaussian_surface(
    ax3d,
    mean: ArrayLike,
    cov: ArrayLike,
    xlim: tuple[float, float],
    ylim: tuple[float, float],
    resolution: int = 80,
    **kwargs: Any,
):
    r"""The density of :math:`\mathcal N(\mu, \Sigma)` as a surface over the plane.

    Parameters
    ----------
    ax3d : mpl_toolkits.mplot3d.axes3d.Axes3D
        A 3-D Axes, from ``fig.add_subplot(projection="3d")``.
    mean : array_like of shape (2,)
    cov : array_like of shape (2, 2)
        Symmetric positive definite.
    xlim, ylim : (float, float)
        The rectangle to cover.
    resolution : int, default 80
        Grid points per axis; every one is drawn (``rstride = cstride = 1`` unless given).
    **kwargs
        Passed to ``plot_surface`` (defaults ``cmap="viridis"``, ``linewidth=0``).

    Returns
    -------
    mpl_toolkits.mplot3d.art3d.Poly3DCollection
        The surface.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> ax3d = Figure().add_subplot(projection="3d")
    >>> surface = gaussian_surface(ax3d, [0, 0], np.eye(2), (-3, 3), (-3, 3), resolution=21)
    >>> round(float(ax3d.zz_dataLim.intervalx[1]), 4)  # the peak, 1 / (2 pi)
    0.1592

    Used in ``notebooks/02.01-The-Multivariate-Gaussian.ipynb``.
    """
    if not callable(getattr(ax3d, "plot_surface", None)):
        raise ValueError(
            f"ax3d must be a 3-D Axes; got {type(ax3d).__name__}. Create it with fig.add_subplot(projection='3d')."
        )
    mean, cov = _as_gaussian(mean, cov, strict=True)
    xx, yy, grid = _grid(_as_limits(xlim, "xlim"), _as_limits(ylim, "ylim"), _check_resolution(resolution))
    density = _gaussian_density(grid, mean, cov).reshape(xx.shape)
    if not {"rstride", "cstride", "rcount", "ccount"} & kwargs.keys():
        kwargs.update(rstride=1, cstride=1)
    kwargs.setdefault("linewidth", 0)
    if "color" not in kwargs and "facecolors" not in kwargs:
        kwargs.setdefault("cmap", "viridis")
    return ax3d.plot_surface(xx, yy, density, **kwargs)
