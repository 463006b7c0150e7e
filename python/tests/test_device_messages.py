"""The device arrays' refusals against scikit-learn's for their host copy, without a GPU: the
checks of epsjoin._device run here on a numpy-backed stand-in for CuPy and torch, which also
counts the host copies made (only a refused array may be copied, to print it)."""

import numpy as np
import pytest

import epsjoin
from epsjoin import _device
from conftest import refusal

validation = pytest.importorskip("sklearn.utils.validation")


class OnDevice:
    """A numpy array posing as one in device memory (epsjoin looks for this attribute)."""

    def __init__(self, array):
        self.array = np.asarray(array)

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.array.shape, "typestr": self.array.dtype.str, "version": 3}


class NumpyBackend:
    """What _device needs of _Cupy and _Torch for its checks and conversions, in numpy."""

    name = "numpy"

    def __init__(self):
        self.host_copies = 0
        self.finiteness_passes = 0

    def asarray(self, X):
        return X.array

    def dtype_of(self, A):
        return A.dtype

    def astype(self, A, dtype):
        return A.astype(dtype)

    def contiguous(self, A):
        return np.ascontiguousarray(A)

    def device_of(self, A):
        return 0

    def synchronize(self, A):
        pass

    def has_nan(self, A):
        self.finiteness_passes += 1
        return bool(np.isnan(A).any())

    def all_finite(self, A):
        self.finiteness_passes += 1
        return bool(np.isfinite(A).all())

    def to_host(self, A):
        self.host_copies += 1
        return A.copy()


@pytest.fixture
def backend(monkeypatch):
    b = NumpyBackend()
    monkeypatch.setattr(_device, "_backend_for", lambda X: b)
    return b


# What a CuPy array or a CUDA tensor can hold among the inputs check_array refuses (no strings,
# objects or byte orders there), in every form its messages differ by.
BAD_ON_DEVICE = {
    "nan": np.array([[0.0, 1.0], [np.nan, 0.0]]),
    "nan-and-inf": np.array([[np.inf, 1.0], [np.nan, 0.0]], dtype=np.float32),
    "nan-float16": np.array([[0.0, np.nan]], dtype=np.float16),
    "inf-float64": np.array([[0.0, 1.0], [-np.inf, 0.0]]),
    "inf-float32": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float32),
    "inf-float16": np.array([[0.0, 1.0], [np.inf, 0.0]], dtype=np.float16),
    "inf-fortran": np.asfortranarray([[0.0, 1.0], [np.inf, 0.0]]),
    "inf-strided": np.array([[0.0, 9.0, 1.0], [np.inf, 9.0, 0.0]])[:, ::2],
    "1-D": np.zeros(5),
    "1-D-long": np.arange(2000.0),
    "1-D-int": np.arange(3, dtype=np.int32),
    "1-D-float16": np.array([0.5, np.inf], dtype=np.float16),
    "0-D": np.array(3.0),
    "0-D-int": np.array(7),
    "3-D": np.zeros((2, 2, 2)),
    "3-D-nan": np.full((2, 2, 2), np.nan),
    "0-features": np.zeros((4, 0)),
    "0-samples": np.empty((0, 3)),
    "0-samples-int": np.empty((0, 3), dtype=np.int64),
    "complex": np.array([[1 + 2j, 3]]),
    "complex-1-D": np.array([1j, 2]),
    "complex64-3-D": np.zeros((2, 1, 2), dtype=np.complex64),
}
# Zero points is an empty result for the joins (min_samples=0), where check_array refuses it.
EMPTY_IS_LEGAL = {"0-samples", "0-samples-int"}

JOINS = [
    lambda X, Y=None: epsjoin.neighbor_graph(X, 0.1, Y),
    lambda X, Y=None: epsjoin.neighbor_table(X, 0.1, Y),
    lambda X, Y=None: epsjoin.pairs(X, 0.1, Y),
    lambda X, Y=None: epsjoin.count(X, 0.1, Y),
]


def sklearn_refusal(X, name="X", estimator=None):
    want = refusal(lambda A: validation.check_array(A, input_name=name, estimator=estimator), X)
    assert want is not None, "scikit-learn accepts it: not a bad input"
    return want


@pytest.mark.parametrize("kind", BAD_ON_DEVICE)
@pytest.mark.parametrize("estimator", [None, "DBSCAN", "NearestNeighbors"])
def test_device_check_refuses_as_check_array_does_for_the_host_copy(kind, estimator, backend):
    X = BAD_ON_DEVICE[kind]
    got = refusal(lambda A: _device.check_device_pair(A, None, min_samples=1,
                                                      estimator=estimator), OnDevice(X))
    assert got == sklearn_refusal(X, estimator=estimator)


@pytest.mark.parametrize("kind", BAD_ON_DEVICE)
def test_a_refused_array_is_copied_over_only_to_be_printed(kind, backend):
    X = BAD_ON_DEVICE[kind]
    refusal(lambda A: _device.check_device_pair(A, None, min_samples=1), OnDevice(X))
    printed = X.dtype.kind == "c" or X.ndim < 2  # the messages that hold the array
    assert backend.host_copies == int(printed)


@pytest.mark.parametrize("join", JOINS)
@pytest.mark.parametrize("kind", sorted(set(BAD_ON_DEVICE) - EMPTY_IS_LEGAL))
def test_device_joins_refuse_in_check_arrays_words(join, kind, backend):
    X = BAD_ON_DEVICE[kind]
    assert refusal(join, OnDevice(X)) == sklearn_refusal(X)


@pytest.mark.parametrize("kind", ["nan", "inf-float32", "inf-float16", "1-D", "0-D", "3-D",
                                  "0-features", "complex"])
def test_bad_y_on_the_device_is_named_y(kind, backend):
    Y = BAD_ON_DEVICE[kind]
    want = sklearn_refusal(Y, name="Y")
    width = Y.shape[-1] if Y.ndim and Y.shape[-1] else 2  # X itself acceptable
    X = np.random.default_rng(0).random((3, width))
    for dtype in (np.float64, np.float32):  # float32 meeting float64: Y named as given
        assert refusal(lambda A: epsjoin.count(OnDevice(X.astype(dtype)), 0.1, A),
                       OnDevice(Y)) == want


def test_x_is_checked_wholly_before_y(backend):
    # As scikit-learn's pairwise checks: X's NaN, not Y's shape, nor their disagreeing widths.
    X = BAD_ON_DEVICE["nan"]
    for Y in (np.zeros(5), np.zeros((3, 5))):
        assert refusal(lambda A, B: epsjoin.count(A, 0.1, B), OnDevice(X), OnDevice(Y)) == \
            sklearn_refusal(X)
    # And Y's NaN before the widths, which only then are compared, in the host path's words.
    Y = np.full((3, 5), np.nan)
    assert refusal(lambda B: epsjoin.count(OnDevice(np.zeros((3, 2))), 0.1, B),
                   OnDevice(Y)) == sklearn_refusal(Y, name="Y")
    want = refusal(lambda B: epsjoin.count(np.zeros((3, 2)), 0.1, B), np.zeros((3, 5)))
    assert refusal(lambda B: epsjoin.count(OnDevice(np.zeros((3, 2))), 0.1, B),
                   OnDevice(np.zeros((3, 5)))) == want


@pytest.mark.parametrize("X", [np.ones((5, 2)), np.ones((5, 2), dtype=np.float32),
                               np.ones((5, 2), dtype=np.float16), np.ones((5, 2), dtype=np.int64),
                               np.asfortranarray(np.ones((5, 3))), np.ones((0, 3))],
                         ids=["float64", "float32", "float16", "int64", "fortran", "empty"])
def test_accepted_arrays_stay_on_the_device(X, backend):
    _, A, _ = _device.check_device_pair(OnDevice(X), None)
    assert backend.host_copies == 0
    assert A.dtype in (np.float32, np.float64) and A.flags.c_contiguous
    np.testing.assert_array_equal(A, X)
    # Integers hold neither NaN nor infinity: they are not read for them.
    assert backend.finiteness_passes == (0 if X.dtype.kind == "i" else 2)


def test_device_only_refusals_are_kept(backend):
    # No scikit-learn counterpart: these keep the device paths' own words.
    with pytest.raises(ValueError, match="both be on the host or both on a CUDA device"):
        _device.check_device_pair(OnDevice(np.zeros((2, 2))), np.zeros((2, 2)))
    # 2**31 rows without the memory: a broadcast view, of integers so that nothing is read.
    huge = np.broadcast_to(np.zeros((1, 2), dtype=np.int32), (_device._MAX_POINTS + 1, 2))
    with pytest.raises(ValueError, match=r"X has 2147483648 points; device joins take at most"):
        _device.check_device_pair(OnDevice(huge), None)
