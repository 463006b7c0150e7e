"""epsjoin.join_to: a join written to a file by the library's writers (issue 46 part 3): the CSR
table equals neighbor_table's, the pairs files hold pairs()' set, and nothing that looks complete
is left by a failure."""

import os
import stat

import numpy as np
import pytest

import epsjoin
from conftest import eps_for, lattice


def read_csr(path):
    raw = open(path, "rb").read()
    assert raw[:8] == b"EPSJCSR1"
    n, m = np.frombuffer(raw[8:24], "<u8")
    offsets = np.frombuffer(raw, "<u8", int(n) + 1, 24)
    neighbors = np.frombuffer(raw, "<u4", int(m), 24 + 8 * (int(n) + 1))
    assert len(raw) == 24 + 8 * (int(n) + 1) + 4 * int(m)
    return offsets.astype(np.int64), neighbors.astype(np.int64)


def pair_set(p):
    p = np.asarray(p, dtype=np.int64).reshape(-1, 2)
    return p[np.lexsort((p[:, 1], p[:, 0]))]


@pytest.mark.parametrize("n,d", [(0, 2), (1, 2), (500, 1), (2000, 2), (800, 5)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_every_format_holds_the_join(n, d, dtype, rng, tmp_path):
    X = rng.random((n, d)).astype(dtype)
    eps = eps_for(X, 10, rng) if n > 1 else 0.5
    for include_self in (False, True):
        indptr, indices = epsjoin.neighbor_table(X, eps, include_self=include_self,
                                                 sort_indices=True)
        epsjoin.join_to(tmp_path / "t.csr", X, eps, include_self=include_self, sort=True)
        offsets, neighbors = read_csr(tmp_path / "t.csr")
        np.testing.assert_array_equal(offsets, indptr)
        np.testing.assert_array_equal(neighbors, indices)
        want = epsjoin.pairs(X, eps, include_self=include_self, sort=True)
        epsjoin.join_to(tmp_path / "p.npy", X, eps, include_self=include_self)
        got = np.load(tmp_path / "p.npy")
        assert got.dtype == np.uint32 and got.shape == want.shape
        np.testing.assert_array_equal(pair_set(got), want)
        epsjoin.join_to(tmp_path / "p.txt", X, eps, include_self=include_self)
        text = (tmp_path / "p.txt").read_text().split()
        np.testing.assert_array_equal(pair_set([line.split(",") for line in text]), want)


def test_ties_and_a_join_b(rng, tmp_path):
    L = lattice(8, 2)
    for eps in (1.0, np.sqrt(2.0)):
        stats = epsjoin.join_to(tmp_path / "l.bin", L, eps, sort=True, engine="super-ego")
        offsets, neighbors = read_csr(tmp_path / "l.bin")
        indptr, indices = epsjoin.neighbor_table(L, eps, sort_indices=True)
        np.testing.assert_array_equal(neighbors, indices)
        assert stats["engine"] == "super-ego" and stats["pairs"] == len(indices)
    A, B = rng.random((300, 3)), rng.random((500, 3))
    eps = eps_for(np.vstack([A, B]), 8, rng)
    epsjoin.join_to(tmp_path / "ab.npy", A, eps, B, format="npy")
    np.testing.assert_array_equal(pair_set(np.load(tmp_path / "ab.npy")),
                                  epsjoin.pairs(A, eps, B, sort=True))


def test_failures_leave_nothing_that_looks_complete(rng, tmp_path):
    X = rng.random((200, 2))
    with pytest.raises(OSError, match="directory"):
        epsjoin.join_to(tmp_path, X, 0.1)
    bad = X.copy()
    bad[7, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        epsjoin.join_to(tmp_path / "nan.csr", bad, 0.1)
    with pytest.raises(ValueError, match="format"):
        epsjoin.join_to(tmp_path / "x.csr", X, 0.1, format="parquet!")
    with pytest.raises(ValueError, match="sort applies"):
        epsjoin.join_to(tmp_path / "x.npy", X, 0.1, sort=True)
    with pytest.raises(ValueError, match="include_self"):
        epsjoin.join_to(tmp_path / "x.csr", X, 0.1, X, include_self=True)
    with pytest.raises(MemoryError):  # the table is collected for a CSR stream, within the limit
        epsjoin.join_to("/dev/null", X, 10.0, memory_limit=1)
    assert os.listdir(tmp_path) == []


def test_a_device_file_is_written_in_place(rng):
    before = os.stat("/dev/null")
    epsjoin.join_to("/dev/null", rng.random((300, 2)), 0.1)
    epsjoin.join_to("/dev/null", rng.random((300, 2)), 0.1, format="csv")
    # A .npy's header holds the pair count, known only at the end: a stream cannot take it.
    with pytest.raises(OSError, match="csv"):
        epsjoin.join_to("/dev/null", rng.random((300, 2)), 0.1, format="npy")
    after = os.stat("/dev/null")
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev


class _OnDevice:
    """Looks like an array in CUDA memory to the package's dispatch, and has no data at all."""

    __cuda_array_interface__ = {"shape": (4, 2), "typestr": "<f8", "data": (0, True), "version": 3}


def test_device_arrays_are_refused_by_name(tmp_path):
    with pytest.raises(TypeError, match="host memory"):
        epsjoin.iter_pairs(_OnDevice(), 0.1)
    with pytest.raises(TypeError, match="host memory"):
        epsjoin.join_to(tmp_path / "x.csr", _OnDevice(), 0.1)
    assert os.listdir(tmp_path) == []
