"""The small things a Python user trips on (issue 46, part 2): scikit-learn's index dtype and
cosine dtype, memory advice in Python's terms, pandas' NA, radius_neighbors_graph's docstring."""

import numpy as np
import pytest
from sklearn.neighbors import radius_neighbors_graph as sklearn_graph

import epsjoin


def test_radius_neighbors_graph_indices_are_int64_as_scikit_learns(rng):
    X = rng.random((200, 3))
    want = sklearn_graph(X, 0.2)
    got = epsjoin.radius_neighbors_graph(X, 0.2)
    assert got.indices.dtype == want.indices.dtype == np.int64
    assert got.indptr.dtype == want.indptr.dtype
    got.sort_indices()
    want.sort_indices()
    np.testing.assert_array_equal(got.indices, want.indices)
    graph, stats = epsjoin.radius_neighbors_graph(X, 0.2, return_stats=True)
    assert graph.indices.dtype == np.int64 and stats["pairs"] == want.nnz


@pytest.mark.parametrize("metric", ["cosine", "euclidean", "manhattan", "chebyshev"])
def test_distance_dtypes_follow_scikit_learn_for_float32(metric, rng):
    X = rng.random((150, 4)).astype(np.float32)
    want = sklearn_graph(X, 0.3, mode="distance", metric=metric)
    got = epsjoin.radius_neighbors_graph(X, 0.3, mode="distance", metric=metric)
    assert got.dtype == want.dtype
    got.sort_indices()
    want.sort_indices()
    np.testing.assert_array_equal(got.indices, want.indices)
    np.testing.assert_allclose(got.data, want.data, rtol=1e-5, atol=1e-6)


def test_memory_errors_speak_python(rng):
    X = rng.random((20000, 2))
    for call in (lambda: epsjoin.neighbor_graph(X, 0.5, memory_limit="16M", engine="cpu-grid"),
                 lambda: epsjoin.pairs(X, 0.5, memory_limit="16M"),
                 lambda: epsjoin.pairs(X, 0.0 * X[0, 0], memory_limit="1K")):
        try:
            call()
        except MemoryError as e:
            message = str(e)
        else:  # eps = 0 of distinct points has no pair: nothing to refuse
            continue
        assert "memory_limit=" in message, message
        assert "--" not in message, message
        assert "iter_pairs" not in message and "join_to" not in message


def test_pandas_na_reads_as_scikit_learns_nan():
    pd = pytest.importorskip("pandas")
    X = np.array([[0.0, 1.0], [pd.NA, 2.0], [3.0, 4.0]], dtype=object)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        epsjoin.neighbor_graph(X, 0.5)
    with pytest.raises(ValueError, match="Input X contains NaN"):
        epsjoin.radius_neighbors_graph(X, 0.5)
    # Nullable columns: scikit-learn's own message, word for word (for the object array above,
    # scikit-learn 1.9.1 itself lets float()'s TypeError out).
    for dtype in ("Float64", "Int64"):
        frame = pd.DataFrame({"a": pd.array([0, None, 1], dtype=dtype), "b": [1.0, 2.0, 3.0]})
        with pytest.raises(ValueError) as ours:
            epsjoin.radius_neighbors_graph(frame, 0.5)
        with pytest.raises(ValueError) as theirs:
            sklearn_graph(frame, 0.5)
        assert str(ours.value) == str(theirs.value)
        with pytest.raises(ValueError, match="Input X contains NaN"):
            epsjoin.count(frame, 0.5)


def test_objects_that_are_not_numbers_still_fail_as_numpy_says():
    with pytest.raises((TypeError, ValueError)):
        epsjoin.count(np.array([[object(), 1.0]], dtype=object), 0.5)


def test_radius_neighbors_graph_documents_what_it_takes():
    doc = epsjoin.radius_neighbors_graph.__doc__
    assert "boxsize" not in doc
    assert doc.count("    n_jobs :") == 1 and doc.count("    metric :") == 1
    assert 'metric : str, default="minkowski"' in doc
    with pytest.raises(TypeError):
        epsjoin.radius_neighbors_graph(np.zeros((3, 2)), 0.5, boxsize=1.0)
    # The joins that take a box still document it.
    assert "boxsize :" in epsjoin.neighbor_graph.__doc__
    assert "progress :" in doc and "progress :" in epsjoin.pairs.__doc__
