"""Metrics and periodic boxes against scipy (cKDTree with p = 1, inf and boxsize) and
scikit-learn's brute force (cosine, haversine, manhattan, chebyshev)."""

import numpy as np
import pytest
from scipy.spatial import cKDTree

import epsjoin
from conftest import CPU_ENGINES, lattice

PERIODIC_ENGINES = CPU_ENGINES


def scipy_pairs(X, eps, p=2.0, boxsize=None):
    tree = cKDTree(X, boxsize=boxsize)
    out = tree.query_pairs(eps, p=p, output_type="ndarray").astype(np.int64).reshape(-1, 2)
    return out[np.lexsort((out[:, 1], out[:, 0]))]


@pytest.mark.parametrize("engine", PERIODIC_ENGINES)
@pytest.mark.parametrize("p,metric", [(2.0, "euclidean"), (1.0, "manhattan"), (np.inf, "chebyshev")])
@pytest.mark.parametrize("n,d", [(0, 2), (1, 3), (500, 2), (400, 3), (200, 5)])
def test_periodic_against_cKDTree_boxsize(engine, p, metric, n, d, rng):
    if engine == "super-ego" or engine == "cpu-rtree":
        if metric != "euclidean":
            pytest.skip(f"{engine} computes euclidean only")
    box = np.linspace(1.0, 2.0, d)
    X = rng.random((n, d)) * box
    eps = 0.12 * d
    eps = min(eps, box.min() / 2)
    got = epsjoin.pairs(X, eps, boxsize=box, metric=metric, engine=engine, sort=True)
    np.testing.assert_array_equal(got, scipy_pairs(X, eps, p, box))
    counts = epsjoin.count(X, eps, boxsize=box, metric=metric, engine=engine, per_row=True)
    want = cKDTree(X, boxsize=box).query_ball_point(X, eps, p=p, return_length=True) - 1 if n else []
    np.testing.assert_array_equal(counts[1] if isinstance(counts, tuple) else counts, want)


@pytest.mark.parametrize("metric,p", [("manhattan", 1.0), ("chebyshev", np.inf)])
def test_lattice_ties_at_eps_in_a_box(metric, p):
    # Multiples of 1 in a box of side 6: pairs at exactly eps, across the wrap too; eps = side / 2.
    X = lattice(6, 2)
    for eps in (1.0, 2.0, 3.0):
        got = epsjoin.pairs(X, eps, boxsize=6.0, metric=metric, sort=True)
        np.testing.assert_array_equal(got, scipy_pairs(X, eps, p, 6.0))


@pytest.mark.parametrize("engine", ["cpu-grid", "brute-cpu"])
@pytest.mark.parametrize("metric,p", [("manhattan", 1.0), ("chebyshev", np.inf)])
def test_minkowski_p1_pinf_against_scipy(engine, metric, p, rng):
    X = np.vstack([rng.random((600, 3)), lattice(4, 3) / 4])
    for eps in (0.25, 0.1):
        got = epsjoin.pairs(X, eps, metric=metric, engine=engine, sort=True)
        np.testing.assert_array_equal(got, scipy_pairs(X, eps, p))


def sklearn_graph(X, radius, metric):
    neighbors = pytest.importorskip("sklearn.neighbors")
    return neighbors.radius_neighbors_graph(X, radius, metric=metric, mode="distance",
                                            include_self=False)


def edges(graph):
    """{(i, j): stored value} of a CSR matrix."""
    graph = graph.tocsr()
    rows = np.repeat(np.arange(graph.shape[0]), np.diff(graph.indptr))
    return {(int(i), int(j)): float(v) for i, j, v in zip(rows, graph.indices, graph.data)}


def assert_same_graph_off_band(got, want, radius, band):
    """The same edges, but for ones within `band` of the radius (scikit-learn's own rounding),
    and the same distances."""
    g, w = edges(got), edges(want)
    for pair in g.keys() ^ w.keys():
        d = g.get(pair, w.get(pair))
        assert abs(d - radius) <= band, f"{pair} at {d}, radius {radius}"
    for pair in g.keys() & w.keys():
        assert g[pair] == pytest.approx(w[pair], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("engine", ["cpu-grid", "super-ego", "brute-cpu"])
def test_cosine_against_sklearn(engine, rng):
    X = rng.standard_normal((600, 16))
    for radius in (0.05, 0.3, 1.0):
        got = epsjoin.neighbor_graph(X, radius, metric="cosine", mode="distance", engine=engine)
        assert_same_graph_off_band(got, sklearn_graph(X, radius, "cosine"), radius, 1e-12)


@pytest.mark.parametrize("engine", ["cpu-grid", "cpu-rtree", "brute-cpu"])
def test_haversine_against_sklearn_poles_and_antimeridian(engine, rng):
    lat = np.concatenate([rng.uniform(-np.pi / 2, np.pi / 2, 400),
                          np.full(10, np.pi / 2), np.pi / 2 - rng.random(50) * 1e-3,
                          rng.uniform(-0.01, 0.01, 100)])
    lon = np.concatenate([rng.uniform(-np.pi, np.pi, 400), rng.uniform(-np.pi, np.pi, 60),
                          np.where(rng.random(100) < 0.5, np.pi, -np.pi) - rng.uniform(-1e-3, 1e-3, 100)])
    lon = np.clip(lon, -np.pi, np.pi)
    X = np.stack([lat, lon], axis=1)
    for radius in (1e-3, 0.05, 0.5):
        got = epsjoin.neighbor_graph(X, radius, metric="haversine", mode="distance", engine=engine)
        assert_same_graph_off_band(got, sklearn_graph(X, radius, "haversine"), radius, 1e-10)
    # Points at a pole are one point whatever their longitude.
    pole = epsjoin.count(np.array([[np.pi / 2, 0.0], [np.pi / 2, 3.0]]), 1e-9, metric="haversine")
    assert pole == 2


@pytest.mark.parametrize("metric", ["manhattan", "chebyshev"])
def test_l1_linf_against_sklearn(metric, rng):
    X = np.vstack([rng.random((500, 4)), lattice(3, 4) / 2])
    got = epsjoin.neighbor_graph(X, 0.5, metric=metric, mode="distance")
    assert_same_graph_off_band(got, sklearn_graph(X, 0.5, metric), 0.5, 0.0)


def test_radius_neighbors_graph_takes_minkowski_p():
    X = lattice(4, 2)
    for p, metric in ((1, "manhattan"), (np.inf, "chebyshev"), (2, "euclidean")):
        got = epsjoin.radius_neighbors_graph(X, 1.0, metric="minkowski", p=p)
        want = epsjoin.neighbor_graph(X, 1.0, metric=metric)
        assert (got != want).nnz == 0
    with pytest.raises(ValueError, match="p = 1, 2 and inf"):
        epsjoin.radius_neighbors_graph(X, 1.0, p=3)


def test_errors_are_clear():
    X = np.random.default_rng(0).random((20, 2))
    with pytest.raises(ValueError, match="metric must be one of"):
        epsjoin.count(X, 0.1, metric="mahalanobis")
    # eps above half the box is exact (test_scipy_contract.py); points outside it are not.
    with pytest.raises(ValueError, match=r"must lie in \[0, 0.5\)"):
        epsjoin.count(X, 0.3, boxsize=0.5)
    with pytest.raises(ValueError, match=r"must lie in \[0, 0.5\)"):
        epsjoin.count(X, 0.1, boxsize=0.5)
    with pytest.raises(ValueError, match="one side per feature"):
        epsjoin.count(X, 0.1, boxsize=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match="does not run the manhattan metric in a periodic box"):
        epsjoin.count(X, 0.1, metric="manhattan", boxsize=1.0, engine="super-ego")
    with pytest.raises(ValueError, match="zero vector"):
        epsjoin.count(np.zeros((3, 2)), 0.1, metric="cosine")
    with pytest.raises(ValueError, match="2 columns"):
        epsjoin.count(np.zeros((3, 3)), 0.1, metric="haversine")
    info = {e["name"]: e for e in epsjoin.engines()}
    assert info["cpu-grid"]["metrics"] == ["euclidean", "manhattan", "chebyshev", "cosine", "haversine"]


@pytest.mark.parametrize("metric,p", [("euclidean", 2.0), ("manhattan", 1.0), ("chebyshev", np.inf)])
def test_count_radii_against_count_neighbors(metric, p, rng):
    X = np.vstack([rng.random((400, 3)), lattice(4, 3) / 4])
    radii = [0.25, 0.1, 0.5, 0.25]
    counts = epsjoin.count_radii(X, radii, metric=metric, include_self=True)
    assert counts.shape == (len(X), len(radii)) and counts.dtype == np.int64
    tree = cKDTree(X)
    np.testing.assert_array_equal(counts.sum(axis=0), tree.count_neighbors(tree, radii, p=p))
    for k, r in enumerate(radii):
        np.testing.assert_array_equal(counts[:, k], tree.query_ball_point(X, r, p=p, return_length=True))
    # In a periodic box, and A against B.
    Y = rng.random((300, 3))
    got = epsjoin.count_radii(X, [0.2, 0.4], Y, metric=metric, boxsize=1.0)
    want = cKDTree(Y, boxsize=1.0).query_ball_point(X, 0.4, p=p, return_length=True)
    np.testing.assert_array_equal(got[:, 1], want)
    with pytest.raises(ValueError, match="radii must be numbers >= 0"):
        epsjoin.count_radii(X, [0.1, -1.0])
