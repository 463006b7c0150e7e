"""Joins of points already on a CUDA device: CuPy arrays, CUDA tensors, anything with
``__cuda_array_interface__`` or ``__dlpack__`` on a CUDA device.

The points stay where they are: the library builds its index from them on the device (the
statistics' ``h2d_point_bytes`` is 0), the CSR table is left in device memory, and what comes
back lives on the device too: CuPy arrays and ``cupyx.scipy.sparse.csr_matrix`` for CuPy (and
other) inputs, torch tensors (DLPack arrays) and a sparse CSR tensor for torch inputs, so
PyTorch alone is enough for torch inputs and CuPy for the others. Checks (NaN,
infinity, shapes) and conversions (dtypes, layouts) run on the device, refusing in the words
scikit-learn's check_array has for the host copy of the array; that copy is made only to print a
refused array in its message.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple, cast

import numpy as np

from . import _epsjoin
from ._validation import (_is_device_array, features_disagree, raise_if_bad_form,
                          raise_if_not_finite_by, raise_if_too_few)

#: Device ids are the library's 32-bit ids read as int32 (CuPy's sparse matrices take no other).
_MAX_POINTS = np.iinfo(np.int32).max


def any_on_device(X: Any, Y: Any = None) -> bool:
    """Whether X (or Y) is an array in CUDA device memory."""
    return _is_device_array(X) or (Y is not None and _is_device_array(Y))


def array_module(X: Any) -> Any:
    """numpy, or cupy for a CuPy array: the two kinds of chunk a Dask array of points holds."""
    if type(X).__module__.split(".")[0] == "cupy":
        import cupy

        return cupy
    return np


class _Cupy:
    """The array operations the device paths need, in CuPy."""

    name = "cupy"

    def __init__(self) -> None:
        import cupy

        # Any: the checks of this package's hints must not depend on whether CuPy or torch (and
        # their own hints) happen to be installed where mypy runs.
        self.xp: Any = cupy

    def asarray(self, X: Any) -> Any:
        if isinstance(X, self.xp.ndarray):
            return X
        if hasattr(X, "__cuda_array_interface__"):
            return self.xp.asarray(X)  # a view, no copy
        return self.xp.from_dlpack(X)

    def from_dlpack(self, array: Any) -> Any:
        return self.xp.from_dlpack(array)

    def dtype_of(self, A: Any) -> np.dtype:
        return cast(np.dtype, np.dtype(A.dtype))

    def astype(self, A: Any, dtype: Any) -> Any:
        return A.astype(dtype)

    def contiguous(self, A: Any) -> Any:
        return self.xp.ascontiguousarray(A)

    def device_of(self, A: Any) -> int:
        return int(A.device.id)

    def synchronize(self, A: Any) -> None:
        # The library reads the points from its own streams: the work writing them must be done.
        with self.xp.cuda.Device(self.device_of(A)):
            self.xp.cuda.get_current_stream().synchronize()

    def has_nan(self, A: Any) -> bool:
        return bool(self.xp.isnan(A).any())

    def all_finite(self, A: Any) -> bool:
        return bool(self.xp.isfinite(A).all())

    def to_host(self, A: Any) -> np.ndarray:
        return cast(np.ndarray, self.xp.asnumpy(A))

    def upload(self, host: np.ndarray, like: Any) -> Any:
        with self.xp.cuda.Device(self.device_of(like)):
            return self.xp.asarray(host)

    def ones(self, n: int, like: Any) -> Any:
        return self.xp.ones(n, dtype=self.xp.float64)

    def graph(self, data: Any, indices: Any, indptr: Any, shape: Tuple[int, int],
              sorted_rows: bool) -> Any:
        import cupyx.scipy.sparse

        sparse: Any = cupyx.scipy.sparse  # Any, as xp
        xp = self.xp
        if indices.shape[0] > _MAX_POINTS:
            raise MemoryError(
                f"the graph has {indices.shape[0]} entries; cupyx.scipy.sparse.csr_matrix holds "
                f"at most {_MAX_POINTS} (int32 indptr): use neighbor_table or count instead"
            )
        graph = sparse.csr_matrix(
            (data, indices.astype(xp.int32, copy=False), indptr.astype(xp.int32)), shape=shape)
        if sorted_rows:
            graph.has_sorted_indices = True
        return graph


class _Torch:
    """The array operations the device paths need, in PyTorch (for CUDA tensor inputs)."""

    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch: Any = torch  # Any, as _Cupy.xp

    def asarray(self, X: Any) -> Any:
        return X

    def from_dlpack(self, array: Any) -> Any:
        try:
            return self.torch.from_dlpack(array)
        except TypeError:  # an exporter whose __dlpack__ takes no stream: hand the capsule over
            return self.torch.utils.dlpack.from_dlpack(array.__dlpack__())

    def dtype_of(self, A: Any) -> np.dtype:
        names = {self.torch.float64: "float64", self.torch.float32: "float32",
                 self.torch.float16: "float16", self.torch.bool: "bool",
                 self.torch.complex64: "complex64", self.torch.complex128: "complex128"}
        if A.dtype in names:
            return np.dtype(names[A.dtype])
        if A.dtype == self.torch.bfloat16:  # numpy has none: any other float is converted alike
            return np.dtype("float16")
        return np.dtype(str(A.dtype).replace("torch.", ""))

    def astype(self, A: Any, dtype: Any) -> Any:
        return A.to(getattr(self.torch, np.dtype(dtype).name))

    def contiguous(self, A: Any) -> Any:
        return A.contiguous()

    def device_of(self, A: Any) -> int:
        return int(A.device.index or 0)

    def synchronize(self, A: Any) -> None:
        self.torch.cuda.current_stream(A.device).synchronize()

    def has_nan(self, A: Any) -> bool:
        return bool(self.torch.isnan(A).any())

    def all_finite(self, A: Any) -> bool:
        return bool(self.torch.isfinite(A).all())

    def to_host(self, A: Any) -> np.ndarray:
        # numpy() refuses tensors that need grad, carry a lazy conjugate or negation, or are
        # bfloat16 (numpy has no such dtype; float32 holds its values exactly).
        if A.dtype == self.torch.bfloat16:
            A = A.float()
        return cast(np.ndarray, A.detach().resolve_conj().resolve_neg().cpu().numpy())

    def upload(self, host: np.ndarray, like: Any) -> Any:
        return self.torch.from_numpy(host).to(like.device)

    def ones(self, n: int, like: Any) -> Any:
        return self.torch.ones(n, dtype=self.torch.float64, device=like.device)

    def graph(self, data: Any, indices: Any, indptr: Any, shape: Tuple[int, int],
              sorted_rows: bool) -> Any:
        # The library's table is a valid CSR table: torch's checks of it would only cost time.
        return self.torch.sparse_csr_tensor(indptr, indices.to(self.torch.int64), data,
                                            size=shape, check_invariants=False)


def to_host(values: Any) -> Any:
    """`values` copied to a numpy array where they lie in device memory (CuPy, torch), else
    as given (None, numbers and host arrays pass through)."""
    return _backend_for(values).to_host(values) if _is_device_array(values) else values


def _backend_for(X: Any) -> Any:
    if type(X).__module__.startswith("torch"):
        return _Torch()
    try:
        return _Cupy()
    except ImportError:
        raise TypeError(
            f"{type(X).__name__} is an array on a GPU; epsjoin takes device arrays through CuPy "
            "or PyTorch, and neither can be imported here. Install CuPy, or copy the array to "
            "the host (numpy)."
        ) from None


def _check_device_points(b: Any, X: Any, name: str, min_samples: int,
                         estimator: Optional[str]) -> Any:
    """X as a C-contiguous float32/float64 (n, d) device array. Refusals are check_array's for
    the host copy of X, in its order, then the device joins' own limit."""
    A = b.asarray(X)
    dtype = b.dtype_of(A)
    raise_if_bad_form(dtype, A.ndim, estimator, lambda: b.to_host(A))
    if dtype.kind == "f":
        # On the dtype given, before a conversion loses the name scikit-learn's message gives
        # (float16); integers hold neither NaN nor infinity, so are not read for it.
        raise_if_not_finite_by(lambda: b.has_nan(A), lambda: b.all_finite(A), dtype, name,
                               estimator)
    shape = tuple(int(n) for n in A.shape)
    raise_if_too_few(shape, min_samples, estimator)
    if shape[0] > _MAX_POINTS:
        raise ValueError(f"{name} has {shape[0]} points; device joins take at most {_MAX_POINTS}")
    if dtype not in (np.float32, np.float64):
        A = b.astype(A, np.float64)  # on the device, once (exact for ints below 2**53)
    return b.contiguous(A)


def check_device_pair(X: Any, Y: Any, *, min_samples: int = 0, estimator: Optional[str] = None
                      ) -> Tuple[Any, Any, Optional[Any]]:
    """(backend, X, Y) with both point sets checked and converted on their device; X wholly
    before Y, as scikit-learn checks a pair. ``estimator`` as check_points takes it."""
    if Y is not None and (_is_device_array(X) != _is_device_array(Y)):
        raise ValueError(
            "X and Y must both be on the host or both on a CUDA device; copy one of them over"
        )
    b = _backend_for(X)
    A = _check_device_points(b, X, "X", min_samples, estimator)
    B = None
    if Y is not None:
        B = _check_device_points(b, Y, "Y", min_samples, estimator)
        if A.shape[1] != B.shape[1]:
            raise ValueError(features_disagree(A.shape[1], B.shape[1]))
        if b.device_of(A) != b.device_of(B):
            raise ValueError("X and Y lie on different CUDA devices")
        if b.dtype_of(A) != b.dtype_of(B):
            A, B = b.astype(A, np.float64), b.astype(B, np.float64)
    b.synchronize(A)
    return b, A, B


def settings_on(settings: Any, b: Any, A: Any) -> Any:
    ordinal = b.device_of(A)
    if settings.device not in (0, ordinal):
        raise ValueError(f"device={settings.device}, but the points lie on CUDA device {ordinal}")
    settings.device = ordinal
    return settings


def table(b: Any, A: Any, B: Optional[Any], eps: float, include_self: bool, settings: Any,
          sort: bool = False, distances: bool = False
          ) -> Tuple[Any, Any, Optional[Any], Dict[str, Any]]:
    """(indptr int64, indices int32, distances float64 or None, stats): the library's table,
    left on the device, its rows sorted and its distances computed there when asked (the same
    values, to the last bit, as the host table's)."""
    indptr, indices, values, stats = _epsjoin.device_neighbor_table(
        A, B, eps, include_self, sort, distances, settings_on(settings, b, A))
    return (b.from_dlpack(indptr), b.from_dlpack(indices),
            None if values is None else b.from_dlpack(values), stats)


def graph(b: Any, A: Any, B: Optional[Any], eps: float, mode: str, include_self: bool,
          sort_indices: bool, settings: Any) -> Tuple[Any, Dict[str, Any]]:
    indptr, indices, values, stats = table(b, A, B, eps, include_self, settings,
                                           sort=sort_indices, distances=mode == "distance")
    n_cols = (A if B is None else B).shape[0]
    data = values if values is not None else b.ones(indices.shape[0], indptr)
    return b.graph(data, indices, indptr, (A.shape[0], n_cols), sort_indices), stats


def pairs(b: Any, A: Any, B: Optional[Any], eps: float, include_self: bool, sort: bool,
          dtype: np.dtype, settings: Any) -> Tuple[Any, Dict[str, Any]]:
    """A self-join's unique pairs (i < j), or every (query, point) pair of X x Y, as the
    library's device assembly cuts them from its table."""
    result, stats = _epsjoin.device_neighbor_pairs(A, B, eps, include_self, sort,
                                                   settings_on(settings, b, A))
    return b.astype(b.from_dlpack(result), dtype), stats


def count(b: Any, A: Any, B: Optional[Any], eps: float, include_self: bool, per_row: bool,
          settings: Any) -> Tuple[Any, Dict[str, Any]]:
    """The total, or each query's count as a device array (the counts are uploaded: no table is
    ever formed, so there is none on the device to count from)."""
    total, rows, stats = _epsjoin.device_neighbor_counts(
        A, B, eps, include_self, per_row, settings_on(settings, b, A))
    if not per_row:
        return int(total), stats
    assert rows is not None  # the extension returns the counts whenever per_row asks for them
    return b.upload(rows.view(np.int64), A), stats
