"""The memory limit covers what the package makes of a join's table, not only the table: a graph's
float64 data array and the int64 pairs are held to it with the table, so a result that could
not be completed raises MemoryError before anything of it is allocated. Each limit is found by
bisection (the join's own working memory is in it too), then the figures are compared."""
import numpy as np
import pytest

import epsjoin
from epsjoin import _epsjoin
from epsjoin._validation import run_settings

from conftest import CPU_ENGINES, KIB, lattice, smallest_limit

X = lattice(60, 2)  # 3,600 points; eps = 3 spacings: ties at exactly eps, ~27 neighbours each
EPS = 3.0
def rows_path_pairs(limit, engine):
    # The rows cut to pairs (the path of the engines that fill rows), whatever the engine.
    settings = run_settings(engine, "float64", False, 1, limit, None, 0, {})
    return _epsjoin.pairs_from_rows(X, None, EPS, False, False, settings, False)[0]


@pytest.mark.parametrize("engine", CPU_ENGINES)
def test_the_graph_and_the_pairs_are_held_to_the_limit_with_the_table(engine):
    nnz = epsjoin.neighbor_table(X, EPS, engine=engine)[1].shape[0]
    assert nnz > 20 * len(X)
    table = smallest_limit(lambda m: epsjoin.neighbor_table(X, EPS, engine=engine, n_jobs=1,
                                                            memory_limit=m))
    graph = smallest_limit(lambda m: epsjoin.neighbor_graph(X, EPS, engine=engine, n_jobs=1,
                                                            memory_limit=m))
    # The graph needs its 8-byte data entries beyond the table, to within the bisection's KiB.
    assert abs(graph - table - 8 * nnz) <= 2 * KIB
    # Halfway, the refusal names what does not fit (just below, whatever the join asks for last).
    with pytest.raises(MemoryError, match=r"^(the neighbour table and the arrays made from it|"
                                          r"the result) needs .* \(the memory limit"):
        epsjoin.neighbor_graph(X, EPS, engine=engine, n_jobs=1, memory_limit=graph - 4 * nnz)
    # The unique pairs: 16 bytes each, nnz / 2 of them, however they are made.
    for call in (lambda m: epsjoin.pairs(X, EPS, engine=engine, n_jobs=1, memory_limit=m),
                 lambda m: epsjoin.pairs(X, EPS, engine=engine, n_jobs=1, memory_limit=m,
                                         sort=True),
                 lambda m: rows_path_pairs(m, engine)):
        limit = smallest_limit(call)
        assert limit >= 8 * nnz
        with pytest.raises(MemoryError):
            call(limit - 2 * KIB)
        assert call(limit).shape == (nnz // 2, 2)


def test_other_metrics_compute_distances_in_bounded_chunks(monkeypatch):
    # Chunks of a few pairs: the distances must be those of one pass.
    rng = np.random.default_rng(3)
    P = rng.random((500, 3))
    whole = epsjoin.neighbor_graph(P, 0.2, mode="distance", metric="manhattan", sort_indices=True)
    import epsjoin._join as join_module
    monkeypatch.setattr(join_module, "_DISTANCE_CHUNK_VALUES", 7)
    chunked = epsjoin.neighbor_graph(P, 0.2, mode="distance", metric="manhattan",
                                     sort_indices=True)
    assert whole.nnz > 1000
    np.testing.assert_array_equal(chunked.indptr, whole.indptr)
    np.testing.assert_array_equal(chunked.indices, whole.indices)
    np.testing.assert_array_equal(chunked.data, whole.data)


def test_an_eps_index_graph_is_held_to_the_limit_with_its_data():
    # EpsIndex's memory_limit used to cover its table only; the graph's data array then took the
    # process over it (7.3 GiB allowed, 21.9 GiB used at 3M points).
    def limited(m):
        return epsjoin.EpsIndex(X, EPS, memory_limit=m)

    nnz = epsjoin.neighbor_table(X, EPS)[1].shape[0]
    # The table alone: what the graph was held to before.
    def table_alone(index):
        return index._checked_table(None, EPS, False, False, index._settings_for(None), 0)

    table = smallest_limit(lambda m: table_alone(limited(m)))
    graph = smallest_limit(lambda m: limited(m).neighbor_graph())
    assert abs(graph - table - 8 * nnz) <= 2 * KIB
    with pytest.raises(MemoryError):
        limited(graph - 4 * nnz).neighbor_graph()
    assert limited(graph).neighbor_graph().nnz == nnz
