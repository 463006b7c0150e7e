"""Inputs: dtypes and layouts used without a copy or converted once; sklearn's ValueErrors."""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse

import epsjoin
from conftest import CPU_ENGINES, refusal

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


# Each bad kind of input scikit-learn's validation refuses, in every form its messages differ by
# (numpy's abbreviated str of a long array, the dtype named for infinity, objects converted
# first).
BAD_INPUTS = {
    "nan": np.array([[0.0, 1.0], [np.nan, 0.0]]),
    "nan-and-inf": np.array([[np.inf, 1.0], [np.nan, 0.0]], dtype=np.float32),
    "nan-list": [[0.0, 1.0], [float("nan"), 0.0]],
    "none-object": np.array([[0.0, None]], dtype=object),
    "inf-float64": np.array([[0.0, 1.0], [-np.inf, 0.0]]),
    "inf-float32": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float32),
    "inf-float16": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float16),
    "inf-big-endian": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=">f8"),
    "inf-fortran": np.asfortranarray([[0.0, 1.0], [np.inf, 0.0]]),
    "1-D": np.zeros(5),
    "1-D-long": np.arange(2000.0),
    "1-D-list": [1, 2, 3],
    "1-D-strings": ["a", "b"],
    "0-D": np.array(3.0),
    "3-D": np.zeros((2, 2, 2)),
    "0-features": np.zeros((4, 0)),
    "0-samples": np.empty((0, 3)),
    "strings": np.array([["a", "b"]]),
    "bytes": np.array([[b"1", b"2"]]),
    "complex": np.array([[1 + 2j, 3]]),
    "complex-1-D": np.array([1j, 2]),
}
# Zero points is an empty result for the epsjoin functions, as for cKDTree
# (test_empty_inputs_give_empty_results), where check_array refuses it.
EMPTY_IS_LEGAL = {"0-samples"}


def sklearn_refusal(X, reference=None):
    """What scikit-learn says: its radius_neighbors_graph's words when that is the reference,
    else check_array's without an estimator, naming X as its own estimators do."""
    validation = pytest.importorskip("sklearn.utils.validation")
    want = refusal(reference or (lambda A: validation.check_array(A, input_name="X")), X)
    if want is None:
        pytest.skip("scikit-learn accepts it")
    return want


def sklearn_rng(X):
    return pytest.importorskip("sklearn.neighbors").radius_neighbors_graph(X, 0.1)


@pytest.mark.parametrize("kind", BAD_INPUTS)
def test_radius_neighbors_graph_refuses_in_sklearns_words(kind):
    # Its drop-in: the estimator suffix (" by NearestNeighbors") and the NaN paragraph too.
    X = BAD_INPUTS[kind]
    assert refusal(lambda A: epsjoin.radius_neighbors_graph(A, 0.1), X) == \
        sklearn_refusal(X, sklearn_rng)


@pytest.mark.parametrize("func", FUNCTIONS)
@pytest.mark.parametrize("kind", sorted(set(BAD_INPUTS) - EMPTY_IS_LEGAL))
def test_joins_refuse_in_check_arrays_words(func, kind):
    X = BAD_INPUTS[kind]
    assert refusal(func, X) == sklearn_refusal(X)


@pytest.mark.parametrize("func", FUNCTIONS)
def test_joins_refuse_sparse_input_in_check_arrays_words(func):
    X = scipy.sparse.random(5, 2, format="csr")
    assert refusal(func, X) == sklearn_refusal(X)


@pytest.mark.parametrize("kind", ["nan", "inf-float32", "inf-float16", "1-D", "3-D", "strings",
                                  "complex"])
def test_bad_y_is_named_y(kind, rng):
    validation = pytest.importorskip("sklearn.utils.validation")
    Y = BAD_INPUTS[kind]
    want = refusal(lambda A: validation.check_array(A, input_name="Y"), Y)
    X = rng.random((3, np.shape(Y)[-1]))
    assert refusal(lambda A: epsjoin.neighbor_graph(X, 0.1, A), Y) == want
    # float32 meeting float64 is joined as float64, but named as given.
    assert refusal(lambda A: epsjoin.count(X.astype(np.float32), 0.1, A), Y) == want


@pytest.mark.parametrize("engine", CPU_ENGINES)
@pytest.mark.parametrize("kind", ["nan", "inf-float64", "inf-float32"])
def test_every_cpu_engine_refuses_non_finite_input_in_sklearns_words(engine, kind):
    X = np.vstack([np.random.default_rng(0).random((300, 2)), BAD_INPUTS[kind]])
    X = X.astype(BAD_INPUTS[kind].dtype)
    want = sklearn_refusal(X)
    for call in (lambda A: epsjoin.neighbor_graph(A, 0.1, engine=engine),
                 lambda A: epsjoin.neighbor_table(A, 0.1, engine=engine),
                 lambda A: epsjoin.pairs(A, 0.1, engine=engine),
                 lambda A: epsjoin.count(A, 0.1, engine=engine),
                 lambda A: epsjoin.count(A, 0.1, per_row=True, engine=engine)):
        assert refusal(call, X) == want
    assert refusal(lambda A: epsjoin.radius_neighbors_graph(A, 0.1, engine=engine), X) == \
        sklearn_refusal(X, sklearn_rng)


def test_a_scalar_is_refused_as_check_array_refuses_it():
    # Deliberately not sklearn.neighbors.radius_neighbors_graph's words for a bare number: its
    # parameter check's text lists what it accepts (sparse matrices, fitted estimators), which
    # epsjoin's does not; check_array's is the message for the same mistake.
    for X in (np.float64(3), 3.0):
        want = sklearn_refusal(X)
        for func in FUNCTIONS + [lambda A: epsjoin.radius_neighbors_graph(A, 0.1)]:
            assert refusal(func, X) == want


def test_bad_arguments(rng):
    X = rng.random((10, 2))
    Y = rng.random((10, 3))
    for eps in (-1.0, np.nan, -np.inf):  # 0 and inf are legal (test_scipy_contract.py)
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
