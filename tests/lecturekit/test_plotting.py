"""Tests of lecturekit.plotting: the course's colour-blind-safe style, and the Gaussian and
decision-boundary pictures of chapters 02.01, 02.02 and 02.05."""

import ast
import inspect

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl
import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_hex, to_rgb, to_rgba
from matplotlib.figure import Figure
from matplotlib.patches import Ellipse
from mpl_toolkits.mplot3d.art3d import Poly3DCollection
from scipy.stats import multivariate_normal

from lecturekit import plotting
from lecturekit.plotting import (
    LINESTYLES,
    MARKERS,
    OKABE_ITO,
    _gaussian_density,
    covariance_ellipse,
    decision_boundary,
    decision_regions,
    gaussian_contours,
    gaussian_surface,
    use_course_style,
)


@pytest.fixture
def ax():
    figure = Figure(figsize=(4, 4), dpi=100)
    FigureCanvasAgg(figure)
    return figure.add_subplot()


def rotation(degrees):
    t = np.radians(degrees)
    return np.array([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])


class FittedOnly:
    """A fitted three-class model that must not be refitted: fit raises."""

    classes_ = np.array(["left", "middle", "right"])

    def fit(self, *args, **kwargs):
        raise AssertionError("plotting must never fit a model")

    def predict(self, P):
        return self.classes_[np.digitize(P[:, 0], [-1.0, 1.0])]

    def decision_function(self, P):
        return P[:, 0] + P[:, 1]


# --------------------------------------------------------------------------- the course's style

# Machado, Oliveira and Fernandes (2009), severity 1: what a reader with each dichromacy sees,
# as a matrix on linear RGB.
DICHROMACY = {
    "protanopia": [[0.152286, 1.052583, -0.204868], [0.114503, 0.786281, 0.099216], [-0.003882, -0.048116, 1.051998]],
    "deuteranopia": [[0.367322, 0.860646, -0.227968], [0.280085, 0.672501, 0.047413], [-0.011820, 0.042940, 0.968881]],
    "tritanopia": [[1.255528, -0.076749, -0.178779], [-0.078411, 0.930809, 0.147602], [0.004733, 0.691367, 0.303900]],
}


def linear_rgb(colours):
    c = np.array([to_rgb(colour) for colour in colours])
    return np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)


def cielab(linear):
    """CIE L*a*b* (D65) of linear sRGB rows."""
    to_xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]])
    xyz = linear @ to_xyz.T / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.column_stack([116 * f[:, 1] - 16, 500 * (f[:, 0] - f[:, 1]), 200 * (f[:, 1] - f[:, 2])])


def closest_pair(colours, vision=None):
    """The smallest colour difference (CIE76 Delta E) between two of ``colours`` as ``vision`` sees them."""
    linear = linear_rgb(colours)
    if vision is not None:
        linear = np.clip(linear @ np.array(DICHROMACY[vision]).T, 0, 1)
    lab = cielab(linear)
    i, j = np.triu_indices(len(colours), 1)
    return np.linalg.norm(lab[i] - lab[j], axis=1).min()


def test_use_course_style_sets_the_palette_as_the_colour_cycle():
    before = mpl.rcParams["axes.prop_cycle"]
    with mpl.rc_context():
        mpl.rcParams["axes.prop_cycle"] = mpl.cycler(color=["red", "green"])
        use_course_style()
        assert [to_hex(f"C{k}") for k in range(len(OKABE_ITO))] == [c.lower() for c in OKABE_ITO]
        figure = Figure()
        ax = figure.add_subplot()
        lines = [ax.plot([0, 1], [k, k])[0] for k in range(3)]  # colours taken from the cycle
        assert [to_hex(line.get_color()) for line in lines] == [c.lower() for c in OKABE_ITO[:3]]
    assert mpl.rcParams["axes.prop_cycle"] == before  # nothing leaks out of rc_context


@pytest.mark.parametrize("vision", [None, *DICHROMACY])
def test_palette_colours_stay_apart_for_colour_blind_readers(vision):
    # Delta E of about 10 is a difference seen at a glance; Matplotlib's former default, tab10,
    # drops to about 5 (orange against green) for a protanope, which the same check rejects.
    assert closest_pair(OKABE_ITO, vision) > 15
    if vision in ("protanopia", "deuteranopia"):
        assert closest_pair(mpl.colormaps["tab10"].colors[:8], vision) < 10


def test_the_first_two_colours_differ_in_greyscale():
    # Two classes are drawn in C0 and C1: their lightness L* must differ visibly when printed grey.
    lightness = cielab(linear_rgb(OKABE_ITO[:2]))[:, 0]
    assert abs(lightness[0] - lightness[1]) > 20


def test_markers_and_line_styles_are_distinct():
    assert len(set(MARKERS)) == len(MARKERS) == len(OKABE_ITO)
    assert len(set(LINESTYLES)) == len(LINESTYLES) >= 4


# --------------------------------------------------------------------------- covariance ellipse


def test_ellipse_of_diag_4_1_at_two_sigma(ax):
    ellipse = covariance_ellipse(ax, [1.0, -2.0], np.diag([4.0, 1.0]), n_std=2.0)
    assert isinstance(ellipse, Ellipse) and ellipse in ax.patches
    assert ellipse.width == pytest.approx(8.0, abs=1e-12)
    assert ellipse.height == pytest.approx(4.0, abs=1e-12)
    assert ellipse.angle % 180 == pytest.approx(0.0, abs=1e-9)
    assert tuple(ellipse.center) == (1.0, -2.0)
    assert not ellipse.get_fill()  # an outline unless a fill is asked for
    # The taller axis along y: diag(1, 4) gives the same ellipse turned by 90 degrees.
    turned = covariance_ellipse(ax, [0, 0], np.diag([1.0, 4.0]), n_std=2.0)
    assert (turned.width, turned.height) == pytest.approx((8.0, 4.0))
    assert turned.angle % 180 == pytest.approx(90.0)


@pytest.mark.parametrize("degrees", [0.0, 30.0, 75.0, 120.0])
def test_ellipse_axes_and_angle_follow_the_eigendecomposition(ax, degrees):
    mean = np.array([0.5, 1.5])
    cov = rotation(degrees) @ np.diag([9.0, 1.0]) @ rotation(degrees).T
    ellipse = covariance_ellipse(ax, mean, cov, n_std=1.5)
    assert (ellipse.width, ellipse.height) == pytest.approx((2 * 1.5 * 3.0, 2 * 1.5 * 1.0))
    assert ellipse.angle == pytest.approx(degrees % 180, abs=1e-9)
    # Every point of the drawn curve lies at Mahalanobis distance n_std from the mean.
    t = np.linspace(0, 2 * np.pi, 50)
    curve = ellipse.get_patch_transform().transform(np.column_stack([np.cos(t), np.sin(t)]))
    offsets = curve - mean
    distances = np.einsum("ij,jk,ik->i", offsets, np.linalg.inv(cov), offsets)
    np.testing.assert_allclose(distances, 1.5**2, rtol=1e-10)


def test_ellipse_passes_patch_options(ax):
    ellipse = covariance_ellipse(ax, [0, 0], np.eye(2), n_std=1, color="C3", lw=2, ls=":", label="2 sigma")
    assert ellipse.get_linewidth() == 2 and ellipse.get_label() == "2 sigma"
    assert ellipse.get_edgecolor() == pytest.approx(to_rgba("C3"))
    assert not ellipse.get_fill()  # a colour alone still draws an outline
    assert covariance_ellipse(ax, [0, 0], np.eye(2), color="C1", fill=True).get_fill()
    filled = covariance_ellipse(ax, [0, 0], np.eye(2), facecolor="red")
    assert filled.get_fill()


# --------------------------------------------------------------------------- Gaussian contours and surface


def test_density_helper_matches_scipy():
    rng = np.random.default_rng(0)
    points = rng.normal(size=(100, 2)) * 3
    mean, cov = np.array([0.3, -1.0]), np.array([[2.0, 1.2], [1.2, 1.0]])
    np.testing.assert_allclose(
        _gaussian_density(points, mean, cov), multivariate_normal(mean, cov).pdf(points), rtol=1e-12
    )


def test_gaussian_contours_peak_at_the_mean(ax):
    mean, cov = np.array([1.0, -0.5]), np.array([[2.0, 1.2], [1.2, 1.0]])
    contours = gaussian_contours(ax, mean, cov, (-4, 6), (-5, 4), levels=6, resolution=201)
    peak = 1 / (2 * np.pi * np.sqrt(np.linalg.det(cov)))
    drawn = [
        (path, level) for path, level in zip(contours.get_paths(), contours.levels, strict=True) if len(path.vertices)
    ]
    assert len(drawn) >= 4
    assert all(0 < level < peak for _, level in drawn)  # Matplotlib's nice levels above the peak stay empty
    # The innermost (highest) contour is a closed curve around the mean, centred on it.
    innermost = drawn[-1][0]
    assert innermost.contains_point(mean)
    np.testing.assert_allclose(innermost.vertices.mean(axis=0), mean, atol=0.02)
    # The density really is largest at the mean: every contour encloses it.
    for path in contours.get_paths():
        if len(path.vertices):
            assert path.contains_point(mean)


def test_gaussian_contours_filled_and_explicit_levels(ax):
    bands = gaussian_contours(
        ax, [0, 0], np.eye(2), (-3, 3), (-3, 3), levels=[0.02, 0.08, 0.15], filled=True, cmap="Blues"
    )
    assert bands.filled and bands.levels.tolist() == [0.02, 0.08, 0.15]


def test_gaussian_surface_peaks_at_the_mean():
    figure = Figure()
    FigureCanvasAgg(figure)
    ax3d = figure.add_subplot(projection="3d")
    mean, cov = np.array([0.0, 0.0]), np.diag([2.0, 0.5])
    surface = gaussian_surface(ax3d, mean, cov, (-4, 4), (-4, 4), resolution=81)  # mean on the grid
    assert isinstance(surface, Poly3DCollection)
    low, high = ax3d.zz_dataLim.intervalx
    assert high == pytest.approx(1 / (2 * np.pi * np.sqrt(np.linalg.det(cov))), rel=1e-12)
    assert 0 < low < 1e-3
    figure.canvas.draw()  # renders without error


def test_gaussian_surface_needs_3d_axes(ax):
    with pytest.raises(ValueError, match="3-D Axes.*projection='3d'"):
        gaussian_surface(ax, [0, 0], np.eye(2), (-1, 1), (-1, 1))


# --------------------------------------------------------------------------- decision regions and boundary


def test_decision_regions_colours_match_the_predictor(ax):
    model = FittedOnly()  # fit raises: the picture must only call predict
    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(60, 2))
    y = model.predict(X)
    regions = decision_regions(ax, model, X, y, resolution=200, alpha=0.4)
    paths, facecolours = regions.get_paths(), regions.get_facecolor()
    assert len(paths) == 3
    # Region k is class k (sorted), coloured C0, C1, C2, and holds exactly the points predicted k.
    for k in range(3):
        np.testing.assert_allclose(facecolours[k][:3], to_rgba(f"C{k}")[:3])
        assert facecolours[k][3] == pytest.approx(0.4)
    probes = rng.uniform(X.min(axis=0), X.max(axis=0), size=(300, 2))
    probes = probes[np.min(np.abs(probes[:, :1] - [-1.0, 1.0]), axis=1) > 0.1]  # off the boundaries
    expected = np.searchsorted(model.classes_, model.predict(probes))
    inside = np.array([[path.contains_point(p) for path in paths] for p in probes])
    assert np.array_equal(inside.argmax(axis=1), expected) and np.all(inside.sum(axis=1) == 1)
    # The scattered points have the colour of their class's region, and a marker of their own.
    scatters = ax.collections[-3:]
    markers = set()
    for k, scatter in enumerate(scatters):
        np.testing.assert_allclose(scatter.get_offsets(), X[y == model.classes_[k]])
        face = scatter.get_facecolors()[:, :3]
        np.testing.assert_allclose(face, np.broadcast_to(facecolours[k][:3], face.shape))
        markers.add(scatter.get_paths()[0].vertices.tobytes())
    assert len(markers) == 3  # three different marker shapes


def test_decision_regions_pixels_on_the_canvas(ax):
    """End to end: the rendered colour at a point is the predicted class's colour over white."""
    X = np.array([[-2.0, -2.0], [2.0, 2.0]])
    decision_regions(ax, lambda P: np.where(P[:, 0] > 0, "b", "a"), X, resolution=100, alpha=0.5)
    ax.set_axis_off()
    canvas = ax.figure.canvas
    canvas.draw()
    image = np.asarray(canvas.buffer_rgba())[..., :3] / 255
    height = image.shape[0]
    for point, k in (((-1.0, 0.5), 0), ((1.0, -0.5), 1), ((-0.5, -1.2), 0), ((1.5, 1.0), 1)):
        px, py = ax.transData.transform(point)
        pixel = image[int(round(height - py)), int(round(px))]
        expected = 0.5 * np.array(to_rgba(f"C{k}")[:3]) + 0.5  # alpha 0.5 over a white figure
        np.testing.assert_allclose(pixel, expected, atol=2 / 255)


def test_decision_regions_accepts_a_colormap_and_no_labels(ax):
    X = np.array([[0.0, 0.0], [1.0, 1.0]])
    regions = decision_regions(ax, lambda P: P[:, 0] > 0.5, X, cmap="coolwarm", resolution=20)
    assert len(regions.get_paths()) == 2
    assert np.allclose(ax.collections[-1].get_facecolors()[:, :3], 0)  # black points without y


def test_decision_boundary_lies_on_the_level_set(ax):
    model = FittedOnly()
    X = np.array([[-2.0, -1.0], [3.0, 2.0]])
    line = decision_boundary(ax, model.decision_function, X, level=1.0, resolution=101)
    vertices = np.concatenate([p.vertices for p in line.get_paths()])
    assert len(vertices) > 10
    # Linear interpolation of a linear score is exact: every vertex has x + y = level.
    np.testing.assert_allclose(vertices.sum(axis=1), 1.0, atol=1e-12)
    # A fitted model may be passed as is (its decision_function is used), never refitted.
    again = decision_boundary(ax, model, X, colors="r")
    assert again.levels.tolist() == [0.0]


def test_decision_boundary_of_a_posterior_at_one_half(ax):
    centre = np.array([0.5, 0.0])
    posterior = lambda P: 1 / (1 + np.exp(-3 * (P[:, 0] - centre[0])))  # noqa: E731
    line = decision_boundary(ax, posterior, [[-1, -1], [1, 1]], level=0.5)
    vertices = np.concatenate([p.vertices for p in line.get_paths()])
    np.testing.assert_allclose(vertices[:, 0], 0.5, atol=1e-3)


def test_plotting_never_fits_and_imports_no_model():
    source = inspect.getsource(plotting)
    assert ".fit(" not in source
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module)
    # Layers point down: plotting may use the Gaussian density and the numeric input checks, but no
    # estimator module.
    allowed = {"lecturekit.gaussian", "lecturekit._arrays"}
    assert not any(name.startswith(("lecturekit", "sklearn")) and name not in allowed for name in imported), imported


# --------------------------------------------------------------------------- bad input


EYE, SQUARE, LIMITS = np.eye(2), [[0, 0], [1, 1]], (-1, 1)


def right_half(P):
    return P[:, 0] > 0


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda ax: covariance_ellipse(ax, [0, 0, 0], EYE), ValueError, "shape \\(2,\\)"),
        (lambda ax: covariance_ellipse(ax, [0, 0], [[1, 2], [0, 1]]), ValueError, "symmetric"),
        (lambda ax: covariance_ellipse(ax, [0, 0], [[1, 0], [0, -1]]), ValueError, "positive semi-definite.*identity"),
        (lambda ax: covariance_ellipse(ax, [0, 0], EYE, n_std=0), ValueError, "n_std"),
        (lambda ax: gaussian_contours(ax, [0, 0], np.zeros((2, 2)), LIMITS, LIMITS), ValueError, "positive definite"),
        (lambda ax: gaussian_contours(ax, [0, 0], EYE, (1, -1), LIMITS), ValueError, "xlim must be a pair"),
        (lambda ax: gaussian_contours(ax, [0, 0], EYE, LIMITS, LIMITS, resolution=1), ValueError, "resolution"),
        (
            lambda ax: decision_regions(ax, right_half, np.zeros((3, 3))),
            ValueError,
            "shape \\(n_points, 2\\).*two features",
        ),
        (lambda ax: decision_regions(ax, right_half, [[0, np.nan]]), ValueError, "NaN"),
        (lambda ax: decision_regions(ax, lambda P: P > 0, SQUARE), ValueError, "one per point"),
        (lambda ax: decision_regions(ax, right_half, SQUARE, [1]), ValueError, "one label per row"),
        (lambda ax: decision_regions(ax, "model", SQUARE), TypeError, "Fit the model first"),
        (
            lambda ax: decision_boundary(ax, lambda P: np.ones((len(P), 2)), SQUARE),
            ValueError,
            "predict_proba\\(P\\)\\[:, 1\\]",
        ),
    ],
)
def test_bad_input_gets_a_clear_error(ax, call, error, message):
    with pytest.raises(error, match=message):
        call(ax)
