"""Every GPU engine against the CPU oracle, from numpy inputs. Skipped without a CUDA build and a
device, unless EPSJOIN_REQUIRE_GPU=1 (as scripts/device-check.sh sets), which makes that a
failure. On the GPU machine: EPSJOIN_CUDA=AUTO scripts/setup-python.sh, then pytest here."""

import os

import numpy as np
import pytest

import epsjoin
from conftest import GPU_ENGINES, assert_same_csr, eps_for, lattice, oracle_pairs, oracle_table


def _gpu_missing():
    info = epsjoin.build_info()
    if not info["cuda"]:
        return "this build of the package has no CUDA (EPSJOIN_CUDA=OFF)"
    if not info["cuda_devices"]:
        return "no CUDA device"
    return ""


_MISSING = _gpu_missing()
if _MISSING and os.environ.get("EPSJOIN_REQUIRE_GPU") == "1":
    raise RuntimeError(f"EPSJOIN_REQUIRE_GPU=1 but {_MISSING}")
pytestmark = pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "GPU present")

SHAPES = [(1, 2), (700, 2), (900, 3), (600, 8), (400, 16), (300, 64), (20_000, 2)]


@pytest.mark.parametrize("engine", GPU_ENGINES)
@pytest.mark.parametrize("n,d", SHAPES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_engine_equals_the_oracle(engine, n, d, dtype, rng):
    X = rng.exponential(1 / 40, (n, d)).astype(dtype)
    eps = eps_for(X, 8, rng)
    indptr, indices, dist = oracle_table(X, eps)
    assert_same_csr(epsjoin.neighbor_graph(X, eps, mode="distance", engine=engine), indptr,
                    indices, dist)
    np.testing.assert_array_equal(epsjoin.pairs(X, eps, engine=engine, sort=True),
                                  oracle_pairs(X, eps))
    np.testing.assert_array_equal(epsjoin.count(X, eps, per_row=True, engine=engine),
                                  np.diff(indptr))


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_gpu_engine_ties_and_a_join_b(engine, rng):
    X = lattice(20, 3)
    for eps in (1.0, 2.0):
        indptr, indices, _ = oracle_table(X, eps)
        assert_same_csr(epsjoin.neighbor_graph(X, eps, engine=engine), indptr, indices)
    A, B = rng.random((500, 4)), rng.random((800, 4))
    eps = eps_for(np.vstack([A, B]), 8, rng)
    indptr, indices, dist = oracle_table(A, eps, B)
    assert_same_csr(epsjoin.neighbor_graph(A, eps, B, mode="distance", engine=engine), indptr,
                    indices, dist)


@pytest.mark.parametrize("engine", GPU_ENGINES)
def test_gpu_engine_stats_name_it(engine, rng):
    X = rng.random((2000, 2))
    _, stats = epsjoin.count(X, 0.02, engine=engine, return_stats=True)
    assert stats["engine"] == engine and stats["seconds"] > 0


@pytest.mark.parametrize("engine", GPU_ENGINES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_engine_dbscan_labels_equal_the_cpus(engine, dtype, rng):
    # Border points go to the core neighbour of smallest index on every engine, so the labels
    # themselves must agree, not only the partition (test_dbscan.py checks cpu-grid against
    # scikit-learn).
    X = rng.exponential(1 / 40, (20_000, 2)).astype(dtype)
    for neighbours, min_samples in ((8, 5), (40, 30)):
        eps = eps_for(X, neighbours, rng)
        want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine="cpu-grid").fit(X)
        got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine=engine).fit(X)
        assert got.stats_["engine"] == engine
        np.testing.assert_array_equal(got.labels_, want.labels_)
        np.testing.assert_array_equal(got.core_sample_indices_, want.core_sample_indices_)
    lattice_points = lattice(20, 3)
    for eps, min_samples in ((1.0, 7), (2.0, 20)):
        want = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine="cpu-grid")
        want.fit(lattice_points)
        got = epsjoin.DBSCAN(eps=eps, min_samples=min_samples, engine=engine).fit(lattice_points)
        np.testing.assert_array_equal(got.labels_, want.labels_)
