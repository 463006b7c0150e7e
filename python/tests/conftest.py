"""Shared data makers and oracles: scipy's cKDTree is the exact reference."""

import os
import signal
import zlib

import numpy as np
import pytest
from scipy.spatial import cKDTree

import epsjoin

SEED = int(os.environ.get("EPSJOIN_TEST_SEED", "20251125"))


def pytest_report_header(config):
    return f"epsjoin {epsjoin.__version__} from {os.path.dirname(epsjoin.__file__)}; seed {SEED} (EPSJOIN_TEST_SEED)"


@pytest.fixture
def rng(request):
    # One stream per test, reproducible from the printed seed and the test's name (crc32, not
    # hash(), which changes from one Python process to the next).
    return np.random.default_rng([SEED, zlib.crc32(request.node.name.encode())])


CPU_ENGINES = [e["name"] for e in epsjoin.engines() if e["processor"] == "cpu" and e["available"]]
GPU_ENGINES = [e["name"] for e in epsjoin.engines() if e["processor"] != "cpu"]


def eps_for(X, neighbours, rng):
    """A radius giving about `neighbours` neighbours a point, from sampled pair distances."""
    n = X.shape[0]
    if n < 2:
        return 0.5
    a = rng.integers(0, n, 4000)
    b = rng.integers(0, n, 4000)
    d = np.sqrt(((X[a].astype(np.float64) - X[b]) ** 2).sum(axis=1))
    eps = float(np.quantile(d, min(1.0, neighbours / n))) or 1.0
    # The quantile may be a sampled pair's own distance: move off it, beyond the 1e-12 band in
    # which engines may legitimately differ (ties are tested on lattices, where they are exact).
    return eps * (1 + 1e-9)


def lattice(side, d, dtype=np.float64):
    """Integer grid points: with eps an integer, many pairs lie at exactly eps."""
    axes = np.meshgrid(*[np.arange(side)] * d, indexing="ij")
    return np.stack([a.ravel() for a in axes], axis=1).astype(dtype)


def oracle_pairs(X, eps, Y=None):
    """Sorted (i, j) pairs: i < j for a self-join, every (i, j) against Y."""
    if Y is None:
        p = cKDTree(X).query_pairs(eps, output_type="ndarray").astype(np.int64).reshape(-1, 2)
    else:
        rows = cKDTree(Y).query_ball_point(X, eps) if len(X) else []
        p = np.array([(i, j) for i, r in enumerate(rows) for j in r], dtype=np.int64).reshape(-1, 2)
    return p[np.lexsort((p[:, 1], p[:, 0]))] if len(p) else p


def oracle_table(X, eps, Y=None, include_self=False):
    """(indptr, indices, distances) from cKDTree's ball queries: rows sorted, exact."""
    X = np.asarray(X, dtype=np.float64)
    Z = X if Y is None else np.asarray(Y, dtype=np.float64)
    rows = cKDTree(Z).query_ball_point(X, eps, return_sorted=True) if len(X) and len(Z) else [[] for _ in X]
    if Y is None and not include_self:
        rows = [[j for j in r if j != i] for i, r in enumerate(rows)]
    indptr = np.zeros(len(X) + 1, dtype=np.int64)
    indptr[1:] = np.cumsum([len(r) for r in rows])
    indices = np.array([j for r in rows for j in r], dtype=np.int64)
    queries = np.repeat(np.arange(len(X)), np.diff(indptr))
    sum_sq = np.zeros(len(indices))
    for k in range(X.shape[1]):  # dimension by dimension, the order epsjoin sums in
        diff = X[queries, k] - Z[indices, k]
        sum_sq += diff * diff
    return indptr, indices, np.sqrt(sum_sq)


def assert_same_csr(got, indptr, indices, data=None):
    """Same rows, same columns (sorted first when the rows are not); `data` compared exactly."""
    assert got.shape[0] == len(indptr) - 1
    if not got.has_sorted_indices:
        got = got.sorted_indices()
    np.testing.assert_array_equal(got.indptr, indptr)
    np.testing.assert_array_equal(got.indices, indices)
    if data is not None:
        np.testing.assert_array_equal(got.data, data)


@pytest.fixture
def sigint_raises():
    """SIGINT raises KeyboardInterrupt during the test, as in an interactive Python, also where the
    test run was started with SIGINT ignored (a background job of a non-interactive shell, where
    Python leaves the signal ignored and a Ctrl-C test could never see it)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def refusal(call, *args):
    """(exception type, message) of what `call(*args)` refuses with, or None when it accepts."""
    try:
        call(*args)
    except (ValueError, TypeError) as error:
        return type(error), str(error)
    return None


KIB = 1024


def smallest_limit(call):
    """The smallest memory limit (to a KiB) under which `call(limit)` does not raise MemoryError."""
    lo, hi = KIB, 1 << 30
    assert call(hi) is not None
    while hi - lo > KIB:
        mid = (lo + hi) // 2
        try:
            call(mid)
            hi = mid
        except MemoryError:
            lo = mid
    return hi


COAST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "fuzz", "corpus",
                     "raw", "gshhg_coast_2d_sample.f64")


def dask_cases(rng):
    """{name: (points, eps or None)}: the shapes the Dask joins are checked on (None: pick eps
    for the test's neighbour count)."""
    skewed = np.vstack([rng.random((1500, 2)), rng.random((1500, 2)) * 0.1])
    dup = rng.random((800, 3))
    # The GSHHG shoreline sample (../shared/data/README.md: eps 0.2789 for about 10 neighbours).
    coast = np.fromfile(COAST, dtype="<f8").reshape(-1, 2)[::4]
    return {
        "coastline": (coast, 0.2789 * 2),
        "uniform-2d": (rng.random((3000, 2)), None),
        "skewed-2d": (skewed, None),
        "expo-4d": (rng.exponential(1 / 40, (1200, 4)), None),
        "lattice ties": (lattice(15, 2), 1.0),
        "duplicates": (np.vstack([dup, dup[:200]]), None),
    }


def sorted_pairs(frame):
    """A frame of pairs' (i, j) as an (m, 2) int64 array sorted by i, then j."""
    p = frame[["i", "j"]].to_numpy().astype(np.int64)
    return p[np.lexsort((p[:, 1], p[:, 0]))] if len(p) else p.reshape(0, 2)


def gpu_missing(*modules):
    """Why the GPU tests cannot run here ("" when they can): a build without CUDA, no device,
    or one of `modules` (e.g. "cupy") not importable. With EPSJOIN_REQUIRE_GPU=1 (as
    scripts/device-check.sh and scripts/device-python.sh set) any reason is an error."""
    info = epsjoin.build_info()
    why = ("this build of the package has no CUDA (EPSJOIN_CUDA=OFF)" if not info["cuda"] else
           "no CUDA device" if not info["cuda_devices"] else "")
    for module in modules:
        if not why:
            try:
                __import__(module)
            except ImportError:
                why = f"no {module}"
    if why and os.environ.get("EPSJOIN_REQUIRE_GPU") == "1":
        raise RuntimeError(f"EPSJOIN_REQUIRE_GPU=1 but {why}")
    return why


def skip_without_gpu(*modules):
    """A skipif mark for gpu_missing(*modules)."""
    why = gpu_missing(*modules)
    return pytest.mark.skipif(bool(why), reason=why or "GPU present")


def bridged_clusters(d, rng):
    """Pairs of clusters on lines, each pair joined by a point that is not core (at eps 0.25
    and min_samples 4) but within eps of a core point of both: a border point whose cluster is
    its smallest-id core neighbour's. Ids shuffled, so that is either cluster."""
    line = np.concatenate([np.arange(11) * 0.1, [1.2], 1.4 + np.arange(11) * 0.1])
    points = np.zeros((20 * line.size, d))
    for k in range(20):
        points[k * line.size:(k + 1) * line.size, 0] = line
        points[k * line.size:(k + 1) * line.size, 1] = 10.0 * k
    return points[rng.permutation(len(points))]
