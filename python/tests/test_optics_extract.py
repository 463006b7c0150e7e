"""epsjoin._optics_extract against scikit-learn's OPTICS extraction: the same labels and the
same cluster hierarchy, on plots its OPTICS computed and on hand-made ones."""

import functools
import itertools
import re
import warnings
import zlib

import numpy as np
import pytest

pytest.importorskip("sklearn")
from sklearn.cluster import OPTICS, cluster_optics_dbscan, cluster_optics_xi  # noqa: E402

from conftest import SEED  # noqa: E402
from epsjoin._optics_extract import dbscan_labels, xi_clusters  # noqa: E402

XIS = (0.01, 0.03, 0.05, 0.1, 0.2, 0.3)
CLUSTER_SIZES = (None, 2, 5, 0.03, 0.1)


def _stream(*key):
    return np.random.default_rng([SEED, zlib.crc32(repr(key).encode())])


def _points(kind, n, dim, rng):
    if kind == "uniform":
        return rng.uniform(0, 10, (n, dim))
    # Blobs of different spreads and sizes, and a sprinkling of uniform noise.
    k = int(rng.integers(1, 5))
    sizes = rng.multinomial(n, rng.dirichlet(np.ones(k + 1)))
    parts = [rng.normal(rng.uniform(0, 10, dim), rng.choice([0.05, 0.2, 0.6, 1.5]),
                        (size, dim)) for size in sizes[:k]]
    parts.append(rng.uniform(0, 10, (sizes[k], dim)))
    X = np.concatenate(parts)
    if kind == "duplicates":
        # Coarse values and repeated rows: reachabilities of 0 and many exact ties.
        X = np.round(X, 1)
        X[rng.integers(0, n, n // 3)] = X[rng.integers(0, n, n // 3)]
    elif kind == "lattice":
        X = np.round(X)
    return rng.permutation(X)


# kind, n, dim, min_samples, max_eps (None: a finite one from the data, so that some
# reachabilities are inf)
CASES = [
    ("uniform", 2, 1, 2, np.inf), ("blobs", 3, 2, 2, np.inf), ("duplicates", 5, 1, 3, np.inf),
    ("blobs", 12, 3, 2, None), ("uniform", 40, 1, 3, None), ("blobs", 60, 2, 5, np.inf),
    ("duplicates", 80, 2, 4, None), ("lattice", 100, 2, 3, np.inf), ("blobs", 150, 5, 4, None),
    ("uniform", 200, 3, 10, np.inf), ("blobs", 300, 1, 2, np.inf), ("duplicates", 300, 3, 6, None),
    ("blobs", 400, 2, 8, None), ("lattice", 500, 3, 5, None), ("blobs", 600, 4, 3, np.inf),
    ("uniform", 700, 2, 2, None), ("duplicates", 900, 2, 15, np.inf), ("blobs", 1000, 2, 5, None),
    ("blobs", 1500, 3, 10, np.inf), ("duplicates", 1500, 2, 4, None),
]


@functools.lru_cache(maxsize=None)
def _fitted(case):
    kind, n, dim, min_samples, max_eps = CASES[case]
    rng = _stream("points", case)
    X = _points(kind, n, dim, rng)
    if max_eps is None:
        a, b = rng.integers(0, n, (2, 2000))
        max_eps = float(np.quantile(np.linalg.norm(X[a] - X[b], axis=1), 0.03)) or 0.5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "All reachability values are inf"
        return OPTICS(min_samples=min_samples, max_eps=max_eps).fit(X), max_eps


def _sklearn_xi(reach, pred, order, min_samples, min_cluster_size, xi, correction):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its division by a reachability of 0
        labels, clusters = cluster_optics_xi(
            reachability=reach, predecessor=pred, ordering=order, min_samples=min_samples,
            min_cluster_size=min_cluster_size, xi=xi, predecessor_correction=correction)
    return labels, np.asarray(clusters).reshape(-1, 2)


def _assert_xi_agrees(reach, pred, order, min_samples, min_cluster_size, xi, correction):
    try:
        expected = _sklearn_xi(reach, pred, order, min_samples, min_cluster_size, xi, correction)
    except ValueError as error:  # a size above n: refused alike, in the same words
        with pytest.raises(ValueError, match=re.escape(str(error))):
            xi_clusters(reach, pred, order, min_samples, min_cluster_size, xi, correction)
        return np.empty((0, 2), dtype=np.int64)
    labels, clusters = xi_clusters(reach, pred, order, min_samples, min_cluster_size, xi,
                                   correction)
    assert labels.dtype == np.int64 and clusters.dtype == np.int64 and clusters.shape[1] == 2
    where = f"min_samples={min_samples} min_cluster_size={min_cluster_size} xi={xi} " \
            f"predecessor_correction={correction}"
    np.testing.assert_array_equal(clusters, expected[1], err_msg=where)
    np.testing.assert_array_equal(labels, expected[0], err_msg=where)
    return clusters


@pytest.mark.parametrize("case", range(len(CASES)))
def test_xi_agrees_with_sklearn_on_optics_plots(case):
    optics, _ = _fitted(case)
    n = optics.reachability_.shape[0]
    arrays = (optics.reachability_, optics.predecessor_, optics.ordering_)
    found = 0
    for xi, size, correction in itertools.product(XIS, CLUSTER_SIZES, (True, False)):
        if isinstance(size, int) and size > n:
            continue
        found += len(_assert_xi_agrees(*arrays, optics.min_samples, size, xi, correction))
    # min_samples as a fraction of n too, which also sets the steep areas' gaps.
    for fraction, correction in itertools.product((0.004, 0.02, 0.1), (True, False)):
        _assert_xi_agrees(*arrays, fraction, None, 0.05, correction)
    assert n < 100 or found  # the larger plots do have clusters to compare


def test_the_optics_plots_cover_inf_and_tied_reachabilities():
    # What the comparisons above rest on: plots with inf past the first point, with ties,
    # with reachabilities of 0 (0/0 ratios), and the predecessor correction changing things.
    plots = [_fitted(case)[0] for case in range(len(CASES))]
    assert any(np.isinf(o.reachability_[o.ordering_][1:]).any() for o in plots)
    assert any((o.reachability_ == 0).sum() > 2 for o in plots)
    r = [o.reachability_[np.isfinite(o.reachability_)] for o in plots]
    assert any(np.unique(x).size < x.size - 10 for x in r)
    differs = 0
    for o in plots[10:]:
        arrays = (o.reachability_, o.predecessor_, o.ordering_, o.min_samples, None, 0.05)
        on, off = xi_clusters(*arrays, True)[1], xi_clusters(*arrays, False)[1]
        differs += on.shape != off.shape or bool((on != off).any())
    assert differs


@pytest.mark.parametrize("case", range(len(CASES)))
def test_dbscan_agrees_with_sklearn_on_optics_plots(case):
    optics, max_eps = _fitted(case)
    reach, core = optics.reachability_, optics.core_distances_
    values = np.unique(np.concatenate([reach, core]))
    values = values[np.isfinite(values)]
    rng = _stream("eps", case)
    # The plot's own values, where > and <= decide, and points between them.
    eps_grid = {0.0, max_eps, np.inf, *rng.choice(values, min(12, values.size)),
                *(rng.uniform(0, max(values.max(initial=1.0), 1e-3), 6))}
    for eps in sorted(eps_grid):
        if eps == np.inf and max_eps < np.inf:
            continue
        expected = cluster_optics_dbscan(reachability=reach, core_distances=core,
                                         ordering=optics.ordering_, eps=eps)
        labels = dbscan_labels(reach, core, optics.ordering_, eps)
        assert labels.dtype == np.int64
        np.testing.assert_array_equal(labels, expected, err_msg=f"eps={eps}")


def test_dbscan_at_max_eps_is_the_optics_cut():
    X = np.array([[1, 2], [2, 5], [3, 6], [8, 7], [8, 8], [7, 3]], dtype=float)
    optics = OPTICS(min_samples=2).fit(X)
    labels = dbscan_labels(optics.reachability_, optics.core_distances_, optics.ordering_, 4.5)
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1, 1])
    # No point is core at 0.5: all noise; at 100 one cluster.
    assert (dbscan_labels(optics.reachability_, optics.core_distances_, optics.ordering_,
                          0.5) == -1).all()
    assert (dbscan_labels(optics.reachability_, optics.core_distances_, optics.ordering_,
                          100) == 0).all()


def test_xi_on_scikit_learns_example():
    X = np.array([[1, 2], [2, 5], [3, 6], [8, 7], [8, 8], [7, 3]], dtype=float)
    optics = OPTICS(min_samples=2).fit(X)
    labels, clusters = xi_clusters(optics.reachability_, optics.predecessor_,
                                   optics.ordering_, 2)
    np.testing.assert_array_equal(labels, [0, 0, 0, 1, 1, 1])
    np.testing.assert_array_equal(clusters, [[0, 2], [3, 5], [0, 5]])


# ---------------------------------------------------------------------------------------------
# Hand-made plots
# ---------------------------------------------------------------------------------------------

def _chain(n, rng=None):
    """An ordering (random when rng is given) and predecessors: each point's the one before."""
    order = np.arange(n) if rng is None else rng.permutation(n)
    pred = np.full(n, -1)
    pred[order[1:]] = order[:-1]
    return order, pred


def _by_point(plot, order):
    reach = np.empty(len(plot))
    reach[order] = plot
    return reach


def test_all_inf_is_all_noise():
    for n in (2, 5, 30):
        order, pred = _chain(n, _stream("inf", n))
        reach = np.full(n, np.inf)
        for xi, correction in itertools.product((0.01, 0.5), (True, False)):
            clusters = _assert_xi_agrees(reach, np.full(n, -1), order, 2, None, xi, correction)
            assert clusters.shape == (0, 2)
        assert (xi_clusters(reach, pred, order, 2)[0] == -1).all()
        assert (dbscan_labels(reach, np.full(n, np.inf), order, 1.0) == -1).all()
        # Each point is core and unreachable from the ones before: a cluster each, in order.
        assert (dbscan_labels(reach, np.ones(n), order, 1.0)[order] == np.arange(n)).all()


def test_a_single_point():
    labels, clusters = xi_clusters(np.array([np.inf]), np.array([-1]), np.array([0]), 0.5, 0.5)
    np.testing.assert_array_equal(labels, [-1])
    assert clusters.shape == (0, 2)
    _assert_xi_agrees(np.array([np.inf]), np.array([-1]), np.array([0]), 0.5, 0.5, 0.05, True)
    np.testing.assert_array_equal(dbscan_labels([np.inf], [0.0], [0], 0.0), [0])
    np.testing.assert_array_equal(dbscan_labels([np.inf], [np.inf], [0], 0.0), [-1])
    # The fraction rounds up to 2 points, more than there are: scikit-learn refuses it too.
    with pytest.raises(ValueError, match="min_cluster_size must be no greater"):
        xi_clusters(np.array([np.inf]), np.array([-1]), np.array([0]), 0.5)


PLATEAUS = [
    [np.inf, 1, 1, 1, 1, 1, 3, 3, 3, 1, 1, 1, 1, 3, 0.5, 0.5, 0.5, np.inf, 2, 2, 2],
    [np.inf, 4, 4, 2, 2, 1, 1, 1, 2, 2, 4, 4, 8, 8, 1, 1, 1, 8],
    [np.inf, 0, 0, 0, 1, 1, 0, 0, 2, 2, 2, 0, 0, np.inf, 0, 0],
    [np.inf, 5, 5, 5, 5, 5, 5, 5],
    [np.inf, 10, 9.5, 9, 8.5, 1, 1, 1, 1, 8.5, 9, 9.5, 10, 1, 1, 1, 1, 1],
    [np.inf, 1, 2, 4, 8, 16, 8, 4, 2, 1, 2, 4, 8, 16, 32, np.inf, 1, 1],
]


@pytest.mark.parametrize("plot", PLATEAUS, ids=range(len(PLATEAUS)))
def test_plateaus_with_exactly_equal_reachabilities(plot):
    n = len(plot)
    for shuffled in (None, _stream("plateau", n)):
        order, pred = _chain(n, shuffled)
        reach = _by_point(np.asarray(plot, dtype=float), order)
        for xi, ms, size, correction in itertools.product(
                (1e-9, 0.05, 0.4, 0.5, 0.75, 0.9, 1 - 1e-9), (2, 3), (None, 2, 4),
                (True, False)):
            _assert_xi_agrees(reach, pred, order, ms, size, xi, correction)


def test_two_valleys_by_hand():
    # Two dense runs split by a jump: two leaves, and the whole plot as their parent.
    order, pred = _chain(8)
    reach = np.array([np.inf, 1, 1, 1, 10, 1, 1, 1])
    labels, clusters = xi_clusters(reach, pred, order, 2, xi=0.1)
    np.testing.assert_array_equal(clusters, [[0, 3], [4, 7], [0, 7]])
    np.testing.assert_array_equal(labels, [0, 0, 0, 0, 1, 1, 1, 1])
    # Three points a cluster at least: still both; five: only the parent, one label.
    assert xi_clusters(reach, pred, order, 2, 4, 0.1)[1].shape == (3, 2)
    np.testing.assert_array_equal(xi_clusters(reach, pred, order, 2, 5, 0.1)[0], [0] * 8)


def test_predecessor_correction_trims_an_end_reached_from_outside():
    # The dip [2, 4] ends at point 4, no lower than its start, and OPTICS reached 4 from point
    # 0, outside the dip: the correction ends the cluster at point 3, below the start.
    order = np.arange(5)
    pred = np.array([-1, 0, 4, 4, 0])
    reach = np.array([np.inf, 1, 2, 1, 2])
    with_correction = xi_clusters(reach, pred, order, 2, xi=0.3)
    without = xi_clusters(reach, pred, order, 2, xi=0.3, predecessor_correction=False)
    np.testing.assert_array_equal(without[1], [[0, 1], [2, 4], [0, 4]])
    np.testing.assert_array_equal(with_correction[1], [[0, 1], [2, 3], [0, 4]])
    np.testing.assert_array_equal(with_correction[0], [0, 0, 1, 1, -1])
    # Reached from inside (point 2), point 4 stays.
    pred[4] = 2
    np.testing.assert_array_equal(xi_clusters(reach, pred, order, 2, xi=0.3)[1], without[1])
    for correction in (True, False):
        _assert_xi_agrees(reach, pred, order, 2, None, 0.3, correction)


@pytest.mark.parametrize("seed", range(40))
def test_random_plots_agree_with_sklearn(seed):
    # Few distinct values (ties, zeros, infs), any ordering, predecessors earlier in it or
    # anywhere, so that every branch of the extraction is taken somewhere.
    rng = _stream("random plot", seed)
    for _ in range(10):
        n = int(rng.integers(2, 70))
        levels = [np.array([0, 0.5, 1, 1.5, 2, 4, 8, np.inf]), np.array([1, 1.02, 1.05, 1.1, 1.3]),
                  rng.exponential(size=5)][int(rng.integers(3))]
        plot = rng.choice(levels, n)
        plot[0] = np.inf if rng.random() < 0.8 else plot[0]
        order = rng.permutation(n)
        earlier = (rng.random(n) * np.arange(n)).astype(int)
        pred_plot = np.where(rng.random(n) < 0.8, order[earlier], rng.integers(-1, n, n))
        pred_plot[0] = -1
        pred = np.empty(n, dtype=np.int64)
        pred[order] = pred_plot
        reach = _by_point(plot, order)
        ms = int(rng.integers(2, max(3, n // 4)))
        for xi in rng.choice([1e-6, 0.01, 0.05, 0.1, 0.3, 0.6, 0.95], 3, replace=False):
            size = [None, 2, 3, 0.1, 0.3][int(rng.integers(5))]
            for correction in (True, False):
                _assert_xi_agrees(reach, pred, order, ms, size, float(xi), correction)
        core = rng.choice(levels, n)
        for eps in (0.0, *rng.choice(levels, 3)):
            expected = cluster_optics_dbscan(reachability=reach, core_distances=core,
                                             ordering=order, eps=eps)
            np.testing.assert_array_equal(dbscan_labels(reach, core, order, eps), expected)


def test_fractions_are_rounded_down_to_at_least_two():
    optics, _ = _fitted(6)  # 80 points
    arrays = (optics.reachability_, optics.predecessor_, optics.ordering_)
    for fraction, count in ((0.01, 2), (0.05, 4), (0.0999, 7), (1.0, 80)):
        a = xi_clusters(*arrays, fraction, xi=0.02)
        b = xi_clusters(*arrays, count, xi=0.02)
        np.testing.assert_array_equal(a[1], b[1])
        a = xi_clusters(*arrays, 2, fraction, xi=0.02)
        b = xi_clusters(*arrays, 2, count, xi=0.02)
        np.testing.assert_array_equal(a[1], b[1])


def test_inputs_as_lists_and_other_dtypes():
    optics, _ = _fitted(5)
    reach, pred, order = optics.reachability_, optics.predecessor_, optics.ordering_
    expected = xi_clusters(reach, pred, order, 3)
    got = xi_clusters(list(reach.astype(np.float32).astype(float)), list(pred),
                      order.astype(np.int32), 3)
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(
        dbscan_labels(list(reach), list(optics.core_distances_), list(order), 0.5),
        dbscan_labels(reach, optics.core_distances_, order, 0.5))


# ---------------------------------------------------------------------------------------------
# Argument errors
# ---------------------------------------------------------------------------------------------

R, P, O = np.array([np.inf, 1.0, 1.0, 2.0]), np.array([-1, 0, 1, 2]), np.array([0, 1, 2, 3])


@pytest.mark.parametrize("xi", [0, 0.0, 1, 1.0, -0.1, 1.5, np.nan, "0.1", None, True])
def test_xi_out_of_range(xi):
    with pytest.raises(ValueError, match="'xi' parameter"):
        xi_clusters(R, P, O, 2, xi=xi)


@pytest.mark.parametrize("name", ["min_samples", "min_cluster_size"])
@pytest.mark.parametrize("value", [1, 0, -3, 0.0, -0.5, 1.5, 2.0, np.nan, True, "3"])
def test_sizes_out_of_range(name, value):
    kwargs = {"min_samples": 2, name: value}
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        xi_clusters(R, P, O, **kwargs)


@pytest.mark.parametrize("name", ["min_samples", "min_cluster_size"])
def test_sizes_above_n(name):
    kwargs = {"min_samples": 2, name: 5}
    with pytest.raises(ValueError, match=f"{name} must be no greater than the number of "
                                         r"samples \(4\). Got 5"):
        xi_clusters(R, P, O, **kwargs)
    assert xi_clusters(R, P, O, **{**kwargs, name: 4})[1].shape[1] == 2


def test_predecessor_correction_must_be_a_bool():
    for value in (1, "yes", None):
        with pytest.raises(ValueError, match="'predecessor_correction' parameter"):
            xi_clusters(R, P, O, 2, predecessor_correction=value)
    xi_clusters(R, P, O, 2, predecessor_correction=np.bool_(False))


@pytest.mark.parametrize("eps", [-1, -1e-300, np.nan, "1", None, True])
def test_dbscan_eps_out_of_range(eps):
    with pytest.raises(ValueError, match="'eps' parameter"):
        dbscan_labels(R, R, O, eps)


BAD_ARRAYS = [
    ({"reachability": R[:3]}, "has 4 entries, but reachability has 3"),
    ({"reachability": R.reshape(2, 2)}, "reachability must be a 1-D array"),
    ({"reachability": np.array([np.inf, 1, np.nan, 2])}, "reachability must not contain NaN"),
    ({"reachability": np.array([np.inf, 1, -1, 2])}, "reachability must not be negative"),
    ({"reachability": np.array(["a", "b", "c", "d"])}, "reachability must hold real numbers"),
    ({"ordering": np.array([0, 1, 1, 3])}, "ordering must be a permutation"),
    ({"ordering": np.array([0, 1, 2, 4])}, "ordering must be a permutation"),
    ({"ordering": np.array([0, 1, 2, -1])}, "ordering must be a permutation"),
    ({"ordering": np.array([0.0, 1, 2, 3])}, "ordering must hold integers"),
    ({"ordering": O[:3]}, "ordering has 3 entries, but reachability has 4"),
    ({"predecessor": np.array([-1, 0, 1, 4])}, "predecessor must hold point indices"),
    ({"predecessor": np.array([-2, 0, 1, 2])}, "predecessor must hold point indices"),
    ({"predecessor": P[:3]}, "predecessor has 3 entries"),
]


@pytest.mark.parametrize("bad, message", BAD_ARRAYS)
def test_bad_arrays(bad, message):
    arrays = {"reachability": R, "predecessor": P, "ordering": O, **bad}
    with pytest.raises(ValueError, match=message):
        xi_clusters(arrays["reachability"], arrays["predecessor"], arrays["ordering"], 2)
    if "predecessor" not in bad:
        with pytest.raises(ValueError, match=message):
            core = np.ones(np.asarray(arrays["reachability"]).shape[0])
            dbscan_labels(arrays["reachability"], core, arrays["ordering"], 1.0)


def test_dbscan_bad_core_distances():
    with pytest.raises(ValueError, match="core_distances has 3 entries"):
        dbscan_labels(R, R[:3], O, 1.0)
    with pytest.raises(ValueError, match="core_distances must not contain NaN"):
        dbscan_labels(R, np.array([1, np.nan, 1, 1]), O, 1.0)
