"""Inputs: dtypes and layouts used without a copy or converted once; sklearn's ValueErrors."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse

import epsjoin

FUNCTIONS = [
    lambda X, **kw: epsjoin.neighbor_graph(X, 0.1, **kw),
    lambda X, **kw: epsjoin.pairs(X, 0.1, **kw),
    lambda X, **kw: epsjoin.count(X, 0.1, **kw),
    lambda X, **kw: epsjoin.neighbor_table(X, 0.1, **kw),
]


def sorted_pairs(*args, **kwargs):
    return epsjoin.pairs(*args, sort=True, **kwargs)


def peak_numpy_bytes(call):
    # numpy reports its allocations to tracemalloc; the library's own (C++) ones are not seen.
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_contiguous_floats_are_used_without_a_copy(dtype, rng):
    X = rng.random((200_000, 4)).astype(dtype) * 1000  # no pairs within 0.1 to speak of
    assert peak_numpy_bytes(lambda: epsjoin.count(X, 1e-6)) < X.nbytes / 8
    read_only = X.copy()
    read_only.flags.writeable = False
    assert epsjoin.count(read_only, 1e-6) == epsjoin.count(X, 1e-6)


def test_other_layouts_are_converted_once_with_the_same_answer(rng):
    X = rng.random((3000, 3))
    want = sorted_pairs(X, 0.05)
    fortran = np.asfortranarray(X)
    assert peak_numpy_bytes(lambda: epsjoin.count(fortran, 1e-9)) >= X.nbytes
    np.testing.assert_array_equal(sorted_pairs(fortran, 0.05), want)
    np.testing.assert_array_equal(sorted_pairs(X[:, ::-1][:, ::-1], 0.05), want)  # strided view
    np.testing.assert_array_equal(sorted_pairs(X.tolist(), 0.05), want)
    np.testing.assert_array_equal(sorted_pairs(X.astype(">f8"), 0.05), want)  # big-endian


def test_integers_and_mixed_dtypes(rng):
    L = rng.integers(0, 30, (2000, 2))
    np.testing.assert_array_equal(sorted_pairs(L, 1), sorted_pairs(L.astype(np.float64), 1))
    A = rng.random((300, 2)).astype(np.float32)
    B = rng.random((400, 2))
    np.testing.assert_array_equal(sorted_pairs(A, 0.05, B),
                                  sorted_pairs(A.astype(np.float64), 0.05, B))


@pytest.mark.parametrize("func", FUNCTIONS)
def test_bad_inputs_raise_sklearns_errors(func):
    with pytest.raises(ValueError, match="Input X contains NaN"):
        func(np.array([[0.0, 1.0], [np.nan, 0.0]]))
    with pytest.raises(ValueError, match="Input X contains infinity"):
        func(np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float32))
    with pytest.raises(ValueError, match="Expected 2D array, got 1D array"):
        func(np.zeros(5))
    with pytest.raises(ValueError, match="Expected 2D array, got scalar array"):
        func(np.float64(3))
    with pytest.raises(ValueError, match="Found array with dim 3"):
        func(np.zeros((2, 2, 2)))
    with pytest.raises(ValueError, match="0 feature"):
        func(np.zeros((4, 0)))
    with pytest.raises(ValueError, match="numeric"):
        func(np.array([["a", "b"]]))
    with pytest.raises(TypeError, match="sparse"):
        func(scipy.sparse.random(5, 2, format="csr"))


def test_bad_arguments(rng):
    X = rng.random((10, 2))
    Y = rng.random((10, 3))
    for eps in (0, -1.0, np.nan, np.inf):
        with pytest.raises(ValueError, match="eps"):
            epsjoin.count(X, eps)
    with pytest.raises(TypeError):
        epsjoin.count(X, "0.1")
    with pytest.raises(ValueError, match="features"):
        epsjoin.count(X, 0.1, Y)
    with pytest.raises(ValueError, match="Input Y contains NaN"):
        epsjoin.count(X, 0.1, np.full((3, 2), np.nan))
    with pytest.raises(ValueError, match="self-join"):
        epsjoin.count(X, 0.1, X, include_self=True)
    with pytest.raises(ValueError, match="unknown engine"):
        epsjoin.count(X, 0.1, engine="kd-tree")
    with pytest.raises(ValueError, match="precision"):
        epsjoin.count(X, 0.1, precision="float16")
    with pytest.raises(ValueError, match="memory_limit"):
        epsjoin.count(X, 0.1, memory_limit="lots")
    with pytest.raises(ValueError):
        epsjoin.count(X, 0.1, engine="cpu-grid", params={"no-such-key": "1"})
    with pytest.raises(ValueError, match="n_jobs"):
        epsjoin.count(X, 0.1, n_jobs=0)


def test_empty_inputs_give_empty_results():
    empty = np.empty((0, 3))
    g = epsjoin.neighbor_graph(empty, 0.5)
    assert g.shape == (0, 0) and g.nnz == 0
    assert sorted_pairs(empty, 0.5).shape == (0, 2)
    assert epsjoin.count(empty, 0.5) == 0
    assert epsjoin.count(empty, 0.5, per_row=True).shape == (0,)
    g = epsjoin.neighbor_graph(np.ones((4, 3)), 0.5, empty)
    assert g.shape == (4, 0) and g.nnz == 0


def test_pairs_dtypes(rng):
    X = rng.random((500, 2))
    want = sorted_pairs(X, 0.1)
    for dtype in (np.uint32, np.int32, np.int64, np.uint64):
        got = sorted_pairs(X, 0.1, dtype=dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="integer"):
        sorted_pairs(X, 0.1, dtype=np.float64)
