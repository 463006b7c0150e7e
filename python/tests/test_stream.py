"""epsjoin.iter_pairs: pairs in blocks of bounded size, concatenating to epsjoin.pairs' array
(issue 46 part 3), on random data of many shapes, lattices with pairs at exactly eps, duplicates,
and results many times the memory limit."""

import os
import tracemalloc

import numpy as np
import pytest
from scipy.spatial import cKDTree

import epsjoin
from conftest import eps_for, lattice, oracle_pairs


def _joined(blocks):
    blocks = list(blocks)
    assert all(b.dtype == np.int64 and b.ndim == 2 and b.shape[1] == 2 for b in blocks)
    return np.concatenate(blocks) if blocks else np.empty((0, 2), np.int64)


def _lexsorted(p):
    return p[np.lexsort((p[:, 1], p[:, 0]))]


@pytest.mark.parametrize("n,d", [(0, 2), (1, 3), (2, 1), (300, 1), (2000, 2), (1500, 3),
                                 (800, 8), (400, 20)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_blocks_concatenate_to_the_oracles_pairs(n, d, dtype, rng):
    X = rng.exponential(1 / 40, (n, d)).astype(dtype)
    eps = eps_for(X, 12, rng) if n > 1 else 0.5
    want = oracle_pairs(X.astype(np.float64), eps)
    for block_bytes in (1, 5000, None):
        got = _joined(epsjoin.iter_pairs(X, eps, sort=True, block_bytes=block_bytes))
        np.testing.assert_array_equal(got, want)
        unsorted = _joined(epsjoin.iter_pairs(X, eps, block_bytes=block_bytes))
        np.testing.assert_array_equal(_lexsorted(unsorted), want)


def test_blocks_stay_within_block_bytes_and_come_in_query_order(rng):
    X = rng.random((5000, 2))
    eps = eps_for(X, 30, rng)
    block_bytes = 40_000
    blocks = list(epsjoin.iter_pairs(X, eps, block_bytes=block_bytes))
    assert len(blocks) > 5
    last = -1
    for b in blocks:
        # 16 bytes a pair and the table's 20 it is cut from (the self pairs' rows included).
        assert b.nbytes <= block_bytes
        assert b[0, 0] > last
        last = b[-1, 0]


def test_ties_self_pairs_duplicates_and_a_join_b(rng):
    L = lattice(9, 2)  # unit spacing: pairs at exactly eps = 1 and sqrt(2)
    L = np.vstack([L, L[:10]])  # exact duplicates
    for eps in (1.0, np.sqrt(2.0), 0.0):
        for include_self in (False, True):
            want = epsjoin.pairs(L, eps, include_self=include_self, sort=True)
            got = _joined(epsjoin.iter_pairs(L, eps, include_self=include_self, sort=True,
                                             block_bytes=600))
            np.testing.assert_array_equal(got, want)
        kd = cKDTree(L).query_pairs(eps, output_type="ndarray")
        np.testing.assert_array_equal(
            _joined(epsjoin.iter_pairs(L, eps, sort=True, block_bytes=600)),
            _lexsorted(kd.astype(np.int64)))
    A, B = rng.random((700, 3)), rng.random((900, 3)).astype(np.float32)
    eps = eps_for(np.vstack([A, B]), 10, rng)
    want = oracle_pairs(A, eps, B.astype(np.float64))
    np.testing.assert_array_equal(
        _joined(epsjoin.iter_pairs(A, eps, B, sort=True, block_bytes=3000)), want)
    every = _joined(epsjoin.iter_pairs(A, np.inf, B, block_bytes=10_000))
    assert every.shape == (700 * 900, 2)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "chebyshev", "cosine"])
def test_distances_are_the_graphs(metric, rng):
    X = rng.random((1200, 3)) + 0.1
    eps = 0.05 if metric == "cosine" else eps_for(X, 10, rng)
    graph = epsjoin.neighbor_graph(X, eps, mode="distance", metric=metric)
    seen = 0
    for pairs, distances in epsjoin.iter_pairs(X, eps, return_distance=True, metric=metric,
                                               block_bytes=20_000):
        assert distances.dtype == np.float64 and distances.shape == (pairs.shape[0],)
        np.testing.assert_array_equal(distances,
                                      np.asarray(graph[pairs[:, 0], pairs[:, 1]]).ravel())
        seen += pairs.shape[0]
    assert seen == graph.nnz // 2


def test_a_result_ten_times_the_memory_limit_stays_under_it(rng):
    X = rng.random((150_000, 2))
    eps = eps_for(X, 80, rng)
    limit = 8 << 20
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        total = 0
        for block in epsjoin.iter_pairs(X, eps, memory_limit=limit):
            total += block.nbytes
            del block
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert total >= 10 * limit
    # numpy's arrays (the blocks, their table and cuts) within the limit; the library charges
    # its own index and tables to it and refuses what does not fit.
    assert peak <= limit
    assert total == epsjoin.pairs(X, eps).nbytes


def test_progress_reports_every_block_and_ends_at_one(rng):
    X = rng.random((3000, 2))
    eps = eps_for(X, 20, rng)
    seen = []
    blocks = list(epsjoin.iter_pairs(X, eps, block_bytes=20_000, progress=seen.append))
    assert len(seen) >= len(blocks) and seen[-1] == 1.0
    assert all(a <= b for a, b in zip(seen, seen[1:]))


def test_refusals_come_at_the_call_not_the_first_block(rng):
    X = rng.random((50, 2))
    with pytest.raises(ValueError, match="include_self"):
        epsjoin.iter_pairs(X, 0.1, X, include_self=True)
    with pytest.raises(ValueError, match="block_bytes"):
        epsjoin.iter_pairs(X, 0.1, block_bytes=0)
    with pytest.raises(ValueError):
        epsjoin.iter_pairs(X, -1.0)
    with pytest.raises(ValueError, match="NaN"):
        epsjoin.iter_pairs(np.array([[0.0, np.nan]]), 0.1)
    with pytest.raises(ValueError):
        epsjoin.iter_pairs(X, 0.1, rng.random((5, 3)))


def test_the_docstring_example_holds():
    import doctest

    import epsjoin._stream

    assert doctest.testmod(epsjoin._stream).failed == 0


def test_the_blocks_are_an_arrow_stream(rng, tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    X = rng.random((4000, 3)).astype(np.float32)
    eps = eps_for(X, 15, rng)
    want = epsjoin.pairs(X, eps, sort=True)
    table = pa.table(epsjoin.iter_pairs(X, eps, sort=True, block_bytes=30_000))
    assert table.schema.names == ["i", "j"] and table.num_rows == len(want)
    np.testing.assert_array_equal(np.stack([table["i"].to_numpy(), table["j"].to_numpy()], 1),
                                  want)
    reader = pa.RecordBatchReader.from_stream(
        epsjoin.iter_pairs(X, eps, return_distance=True, block_bytes=30_000))
    graph = epsjoin.neighbor_graph(X, eps, mode="distance")
    batches = list(reader)
    assert len(batches) > 1
    for batch in batches:
        i, j = batch["i"].to_numpy(), batch["j"].to_numpy()
        np.testing.assert_array_equal(batch["distance"].to_numpy(),
                                      np.asarray(graph[i, j]).ravel())
    # Parquet, through join_to: written from the blocks, renamed only when complete.
    stats = epsjoin.join_to(tmp_path / "p.parquet", X, eps, sort=True)
    written = pq.read_table(tmp_path / "p.parquet")
    assert stats["pairs"] == len(want) and os.listdir(tmp_path) == ["p.parquet"]
    np.testing.assert_array_equal(
        np.stack([written["i"].to_numpy(), written["j"].to_numpy()], 1), want)
    bad = X.copy()
    bad[3, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        epsjoin.join_to(tmp_path / "q.parquet", bad, eps)
    assert os.listdir(tmp_path) == ["p.parquet"]


def test_duckdb_reads_the_stream(rng):
    duckdb = pytest.importorskip("duckdb")
    X = rng.random((3000, 2))
    eps = eps_for(X, 10, rng)
    blocks = epsjoin.iter_pairs(X, eps, block_bytes=20_000)  # noqa: F841 (read by name below)
    assert duckdb.sql("select count(*) from blocks").fetchone()[0] == len(epsjoin.pairs(X, eps))


@pytest.mark.parametrize("engine", ["auto", "super-ego", "cpu-grid-params"])
def test_blocks_of_rows_are_the_tables_rows(engine, rng):
    options = ({"engine": "cpu-grid", "params": {"pattern": "full"}} if engine == "cpu-grid-params"
               else {"engine": engine})
    X = rng.random((2500, 2))
    Y = rng.random((1700, 2))
    eps = eps_for(X, 12, rng)
    for other, include_self in ((None, False), (None, True), (Y, False)):
        indptr, indices = epsjoin.neighbor_table(X, eps, other, include_self=include_self,
                                                 sort_indices=True)
        graph = epsjoin.neighbor_graph(X, eps, other, include_self=include_self,
                                       mode="distance", sort_indices=True)
        first_rows, lengths, ids, distances = [], [], [], []
        for first, ptr, cols, dist in epsjoin.iter_pairs(
                X, eps, other, include_self=include_self, sort=True, rows=True,
                return_distance=True, block_bytes=8_000, **options):
            assert ptr[0] == 0 and ptr[-1] == len(cols) == len(dist)
            first_rows.append(first)
            lengths.append(np.diff(ptr))
            ids.append(cols)
            distances.append(dist)
        assert first_rows[0] == 0 and len(first_rows) > 3
        np.testing.assert_array_equal(np.concatenate(lengths), np.diff(indptr))
        np.testing.assert_array_equal(np.concatenate(ids), indices)
        np.testing.assert_array_equal(np.concatenate(distances), graph.data)
    blocks = epsjoin.iter_pairs(X, eps, rows=True)
    with pytest.raises(TypeError, match="no Arrow form"):
        blocks.arrow_schema()


def test_another_engine_and_a_periodic_box_join_each_run(rng):
    X = rng.random((3000, 3))
    eps = eps_for(X, 10, rng)
    for options in ({"engine": "super-ego"}, {"engine": "cpu-rtree"}, {"boxsize": 1.0},
                    {"metric": "manhattan", "engine": "super-ego"}):
        want = epsjoin.pairs(X, eps, sort=True, **options)
        got = _joined(epsjoin.iter_pairs(X, eps, sort=True, block_bytes=10_000, **options))
        np.testing.assert_array_equal(got, want)
        pairs, distances = zip(*epsjoin.iter_pairs(X, eps, return_distance=True, sort=True,
                                                   block_bytes=10_000, **options))
        graph = epsjoin.neighbor_graph(X, eps, mode="distance", **options)
        p = np.concatenate(pairs)
        np.testing.assert_array_equal(np.concatenate(distances),
                                      np.asarray(graph[p[:, 0], p[:, 1]]).ravel())
