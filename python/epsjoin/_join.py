"""The joins: CSR neighbour tables, sparse graphs and unique pairs."""

from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Callable, Dict, List, Literal, Mapping, Optional, Sequence,
                    Tuple, TypedDict, Union, overload)

import numpy as np
import numpy.typing as npt
import scipy.sparse

from . import _device, _edge_radii, _epsjoin, _progress
from ._options_doc import _with_run_options as _with_run_options
from ._progress import Progress
from ._metrics import pair_distances, set_geometry
from ._validation import (
    Devices,
    MemorySize,
    check_eps,
    check_pair,
    raise_if_not_finite,
    run_settings,
)

if TYPE_CHECKING:  # typing's own from Python 3.11; only type checkers read it
    from typing_extensions import Unpack


# The hints type a join of host points precisely: numpy arrays and nested sequences give numpy
# and scipy results. Points on a CUDA device give CuPy or torch results, and no static type can
# tell them apart (CuPy arrays and torch tensors implement __array__, so they are numpy
# ArrayLikes too): every join's last overload takes Any and returns Any, which device points and a
# return_stats that is not a literal reach. The overloads spell out the keywords that shape the
# result and take the others as **options: Unpack[JoinOptions], which types them once.
HostPoints = Union[npt.NDArray[Any], Sequence[Sequence[float]]]
# Any array-like of host points, or a CUDA array (__dlpack__ or __cuda_array_interface__).
PointsLike = Union[npt.ArrayLike, Any]
Boxsize = Optional[npt.ArrayLike]  # a number, or one side per feature
Stats = Dict[str, Any]
IntArray = npt.NDArray[np.integer[Any]]
Indptr = npt.NDArray[np.int64]


class RunOptions(TypedDict, total=False):
    """The keyword options every join takes (see any join's help for their meaning)."""

    engine: str
    precision: npt.DTypeLike
    approximate: bool
    n_jobs: Optional[int]
    memory_limit: MemorySize
    device_memory_limit: MemorySize
    device: Devices
    devices_split: str
    params: Optional[Mapping[str, Any]]
    progress: Progress


class JoinOptions(RunOptions, total=False):
    """RunOptions and the geometry of the joins that take any metric."""

    metric: str
    boxsize: Boxsize


# The core's calls and their answers for the radii it does not take (_edge_radii.py).
_EDGE_CALLS: Dict[Any, Callable[..., Any]] = {
    _epsjoin.neighbor_table: _edge_radii.neighbor_table,
    _epsjoin.neighbor_counts: _edge_radii.neighbor_counts,
    _epsjoin.pairs_from_rows: _edge_radii.pairs_from_rows,
}


def _run(core: Callable[..., Any], X: np.ndarray, Y: Optional[np.ndarray], *args: Any) -> Any:
    # args: eps, include_self, a flag, the settings[, ...] for every call _EDGE_CALLS holds.
    if core in _EDGE_CALLS:
        kind = _edge_radii.kind_of(args[0], list(args[3].box), args[3].metric)
        if kind is not None:
            return _EDGE_CALLS[core](kind, X, Y, *args)
        if args[3].box and Y is not None:
            X = _edge_radii.wrap(X, args[3].box)  # queries outside the box, as scipy's
    try:
        return core(X, Y, *args)
    except ValueError:
        raise_if_not_finite(X, Y)  # scikit-learn's words when that was the reason
        raise


# Values (pairs x dimensions) a chunk of pair_distances: its float64 temporaries (the chunk's
# coordinates of both points, their differences) stay near 32 MiB an array whatever the
# table's size.
_DISTANCE_CHUNK_VALUES = 1 << 22


def _chunked_pair_distances(X: np.ndarray, Y: np.ndarray, indptr: np.ndarray,
                            indices: np.ndarray, metric: str, box: List[float]) -> np.ndarray:
    data = np.empty(indices.shape[0], dtype=np.float64)
    step = max(1, _DISTANCE_CHUNK_VALUES // max(1, X.shape[1]))
    for start in range(0, data.shape[0], step):
        stop = min(start + step, data.shape[0])
        # The row of each entry of [start, stop): the last row starting at or before it.
        rows = np.searchsorted(indptr, np.arange(start, stop), side="right") - 1
        data[start:stop] = pair_distances(X, Y, rows, indices[start:stop].astype(np.int64),
                                          metric, box)
    return data


# Rows a chunk of _converted: 32 MiB of int64 pairs, some milliseconds.
_CONVERT_CHUNK_ROWS = 1 << 21


def _converted(a: np.ndarray, dtype: npt.DTypeLike) -> np.ndarray:
    """a.astype(dtype) in chunks of rows: Ctrl-C is heard between them (one astype of a billion
    pairs is seconds in one C call, which no signal interrupts)."""
    out = np.empty(a.shape, dtype=dtype)
    for start in range(0, a.shape[0], _CONVERT_CHUNK_ROWS):
        out[start:start + _CONVERT_CHUNK_ROWS] = a[start:start + _CONVERT_CHUNK_ROWS]
    return out


def _euclidean_only_on_device(metric: str, boxsize: Any) -> None:
    # The other metrics and periodic boxes transform or re-check the points on the host.
    if metric != "euclidean" or boxsize is not None:
        raise ValueError(
            "arrays on a CUDA device are joined in the euclidean metric without boxsize; "
            f"got metric={metric!r}, boxsize={boxsize!r}: copy them to the host for that"
        )


def _device_eps(eps: Any) -> float:
    """eps of a join on a device: 0 and inf are answered on the host (_edge_radii.py)."""
    value = check_eps(eps)
    if value == 0 or value == float("inf"):
        raise ValueError(f"eps={value!r} (exact duplicates, every pair) is answered for host "
                         "arrays only; copy the points to the host (cupy.asnumpy(X), "
                         "X.cpu().numpy())")
    return value


def _check_self(include_self: bool, Y: Any) -> None:
    if include_self and Y is not None:
        raise ValueError("include_self applies to a self-join (Y=None) only")


def _on_device(X: Any, Y: Any, include_self: bool, metric: str, boxsize: Any,
               run_args: Tuple[Any, ...]) -> Tuple[Any, Any, Any, Any]:
    """What every join of arrays on a CUDA device starts with: the euclidean metric only, both
    arrays of one kind on one device, include_self for a self-join only, and the run settings
    (``run_args`` as :func:`run_settings` takes them). Returns the array kind, X, Y and them."""
    _euclidean_only_on_device(metric, boxsize)
    b, X, Y = _device.check_device_pair(X, Y)
    _check_self(include_self, Y)
    return b, X, Y, run_settings(*run_args)


def _index_views(indptr: np.ndarray, indices: np.ndarray, n_cols: int) -> Tuple[np.ndarray, np.ndarray]:
    # The library's ids are uint32 and its offsets uint64; scipy takes signed ones. Same bits
    # while ids stay below 2**31, so these are views, not copies.
    indptr = indptr.view(np.int64)
    indices = indices.view(np.int32) if n_cols <= np.iinfo(np.int32).max else indices.astype(np.int64)
    return indptr, indices


@overload
def neighbor_table(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *,
                   include_self: bool = ..., sort_indices: bool = ...,
                   return_stats: Literal[False] = ...,
                   **options: Unpack[JoinOptions]) -> Tuple[Indptr, IntArray]: ...
@overload
def neighbor_table(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *,
                   include_self: bool = ..., sort_indices: bool = ..., return_stats: Literal[True],
                   **options: Unpack[JoinOptions]) -> Tuple[Indptr, IntArray, Stats]: ...
@overload
def neighbor_table(X: Any, eps: float, Y: Any = ..., *, include_self: bool = ...,
                   sort_indices: bool = ..., return_stats: bool = ...,
                   **options: Unpack[JoinOptions]) -> Any: ...
@_with_run_options
def neighbor_table(
    X: PointsLike,
    eps: float,
    Y: Optional[PointsLike] = None,
    *,
    include_self: bool = False,
    sort_indices: bool = False,
    engine: str = "auto",
    precision: npt.DTypeLike = "float64",
    approximate: bool = False,
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    devices_split: str = "auto",
    params: Optional[Mapping[str, Any]] = None,
    return_stats: bool = False,
    metric: str = "euclidean",
    boxsize: Boxsize = None,
    progress: Progress = False,
) -> Any:
    """Every point's neighbours within `eps` as the two arrays of a CSR table, without a copy.

    The neighbours of query ``i`` are ``indices[indptr[i]:indptr[i + 1]]``. This is the
    library's table itself (numpy owns it); :func:`neighbor_graph` wraps it in a sparse matrix.

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
        Query points. float32 and float64 C-contiguous arrays are used where they lie; other
        dtypes and layouts are converted once, to float64 (or made C-contiguous). Arrays on a
        CUDA device (CuPy, PyTorch, ``__cuda_array_interface__``) are joined where they lie by
        a GPU engine, and every result is then on that device too: CuPy arrays and a
        ``cupyx.scipy.sparse.csr_matrix``, or torch tensors for torch input.
    eps : float
        The radius: ``j`` is a neighbour of ``i`` when ``||X[i] - Y[j]|| <= eps`` (inclusive).
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself (pairs ``i != j``).
    include_self : bool, default=False
        Self-join only: each point is also its own neighbour.
    sort_indices : bool, default=False
        Sort each row by index (otherwise the order within a row is unspecified).
    {run_options}

    Returns
    -------
    indptr : ndarray of shape (n_queries + 1,), dtype int64
    indices : ndarray of shape (indptr[-1],), dtype int32 (int64 when Y has 2**31 points or more)
        On the device for device input (CuPy arrays or torch tensors, int64 and int32).
    stats : dict
        Only with ``return_stats=True``.
    """
    if _device.any_on_device(X, Y):  # CuPy arrays, CUDA tensors: joined on their device
        b, X, Y, settings = _on_device(X, Y, include_self, metric, boxsize,
                                       (engine, precision, approximate, n_jobs, memory_limit,
                                        device_memory_limit, device, params, devices_split, progress))
        indptr, indices, _, stats = _device.table(b, X, Y, _device_eps(eps), bool(include_self),
                                                  settings, sort=bool(sort_indices))
        return (indptr, indices, stats) if return_stats else (indptr, indices)
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split, progress)
    set_geometry(settings, metric, boxsize, X.shape[1])
    indptr, indices, stats = _run(_epsjoin.neighbor_table, X, Y, check_eps(eps),
                                  bool(include_self), bool(sort_indices), settings)
    indptr, indices = _index_views(indptr, indices, (X if Y is None else Y).shape[0])
    _progress.done(settings)
    return (indptr, indices, stats) if return_stats else (indptr, indices)


@overload
def neighbor_graph(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *, mode: str = ...,
                   include_self: bool = ..., sort_indices: bool = ...,
                   return_stats: Literal[False] = ...,
                   **options: Unpack[JoinOptions]) -> scipy.sparse.csr_matrix: ...
@overload
def neighbor_graph(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *, mode: str = ...,
                   include_self: bool = ..., sort_indices: bool = ..., return_stats: Literal[True],
                   **options: Unpack[JoinOptions]) -> Tuple[scipy.sparse.csr_matrix, Stats]: ...
@overload
def neighbor_graph(X: Any, eps: float, Y: Any = ..., *, mode: str = ..., include_self: bool = ...,
                   sort_indices: bool = ..., return_stats: bool = ...,
                   **options: Unpack[JoinOptions]) -> Any: ...
@_with_run_options
def neighbor_graph(
    X: PointsLike,
    eps: float,
    Y: Optional[PointsLike] = None,
    *,
    mode: str = "connectivity",
    include_self: bool = False,
    sort_indices: bool = False,
    engine: str = "auto",
    precision: npt.DTypeLike = "float64",
    approximate: bool = False,
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    devices_split: str = "auto",
    params: Optional[Mapping[str, Any]] = None,
    return_stats: bool = False,
    metric: str = "euclidean",
    boxsize: Boxsize = None,
    progress: Progress = False,
) -> Any:
    """The eps-neighbourhood graph as a ``scipy.sparse.csr_matrix``: rows are queries.

    ``A[i, j]`` is stored when ``||X[i] - Y[j]|| <= eps``; its value is 1.0
    (``mode="connectivity"``) or that distance (``mode="distance"``, not squared, float64,
    explicit zeros kept for duplicate points), as in scikit-learn's
    ``radius_neighbors_graph`` and scipy's ``cKDTree.sparse_distance_matrix``.

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
        Query points (see :func:`neighbor_table` for the dtypes used without a copy).
    eps : float
        The radius (inclusive).
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself (the matrix is then symmetric).
    mode : {"connectivity", "distance"}, default="connectivity"
        What the stored values are.
    include_self : bool, default=False
        Self-join only: store the diagonal too (1.0, or an explicit 0.0 distance).
    sort_indices : bool, default=False
        Sort each row's column indices (``has_sorted_indices`` is then True). Unsorted rows are
        a valid CSR matrix too (scipy's and scikit-learn's are unsorted), and sorting can cost
        more than the join (``graph.sort_indices()`` does it later).
    {run_options}

    Returns
    -------
    graph : scipy.sparse.csr_matrix of shape (n_queries, n_points), dtype float64
        For device input ``cupyx.scipy.sparse.csr_matrix`` (CuPy and other arrays) or a
        ``torch.sparse_csr_tensor`` (torch tensors), on the points' device.
    stats : dict
        Only with ``return_stats=True``.

    Examples
    --------
    >>> import numpy as np, epsjoin
    >>> X = np.array([[0.0], [3.0], [1.0]])
    >>> epsjoin.neighbor_graph(X, 1.5).toarray()
    array([[0., 0., 1.],
           [0., 0., 0.],
           [1., 0., 0.]])
    """
    if mode not in ("connectivity", "distance"):
        raise ValueError(f"mode must be 'connectivity' or 'distance', got {mode!r}")
    if _device.any_on_device(X, Y):  # CuPy arrays, CUDA tensors: joined on their device
        b, X, Y, settings = _on_device(X, Y, include_self, metric, boxsize,
                                       (engine, precision, approximate, n_jobs, memory_limit,
                                        device_memory_limit, device, params, devices_split, progress))
        graph, stats = _device.graph(b, X, Y, _device_eps(eps), mode, bool(include_self),
                                     bool(sort_indices), settings)
        return (graph, stats) if return_stats else graph
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split, progress)
    set_geometry(settings, metric, boxsize, X.shape[1])
    if settings.box and Y is not None:
        X = _edge_radii.wrap(X, settings.box)  # queries outside the box, as scipy's
    eps = check_eps(eps)
    n_cols = (X if Y is None else Y).shape[0]
    euclidean = settings.metric == "euclidean" and not settings.box
    if mode == "distance" and euclidean and _edge_radii.kind_of(eps, [], "euclidean") is None:
        # The library's table with its distances: written by the engine as it finds each
        # neighbour (cpu-grid), or by its sink from the points afterwards.
        raw_indptr, raw_indices, data, stats = _run(
            _epsjoin.neighbor_distance_table, X, Y, eps, bool(include_self), bool(sort_indices),
            settings)
        return _graph_of(raw_indptr, raw_indices, data, X, n_cols, sort_indices, settings,
                         stats if return_stats else None)
    # What the graph adds to the table, held to the memory limit with it before the join
    # allocates anything: the float64 data array (and pair_distances's temporaries, which are
    # bounded by its chunks).
    added = 8.0
    raw_indptr, raw_indices, stats = _run(_epsjoin.neighbor_table, X, Y, eps,
                                          bool(include_self), bool(sort_indices), settings, added)
    if mode == "distance":  # other metrics and boxes; eps 0 or inf (_edge_radii.py)
        data = _chunked_pair_distances(X, X if Y is None else Y, raw_indptr.view(np.int64),
                                       raw_indices, settings.metric, list(settings.box))
    else:
        # scikit-learn's float64 ones: 8 bytes an entry, twice the table's ids, and at 2M
        # points and S = 50 about a quarter of the join's time in np.ones (page faults, not the
        # fill), hence filled on the join's threads.
        data = _epsjoin.filled_ones(raw_indices.shape[0], settings.threads)
    return _graph_of(raw_indptr, raw_indices, data, X, n_cols, sort_indices, settings,
                     stats if return_stats else None)


def _graph_of(raw_indptr: np.ndarray, raw_indices: np.ndarray, data: np.ndarray, X: np.ndarray,
              n_cols: int, sort_indices: bool, settings: Any,
              stats: Optional[Dict[str, Any]]) -> Any:
    if settings.metric == "cosine" and X.dtype == np.float32:
        data = data.astype(np.float32)  # scikit-learn's cosine distances keep float32
    indptr, indices = _index_views(raw_indptr, raw_indices, n_cols)
    graph = scipy.sparse.csr_matrix((data, indices, indptr), shape=(X.shape[0], n_cols))
    if sort_indices:
        graph.has_sorted_indices = True
    _progress.done(settings)
    return graph if stats is None else (graph, stats)


@overload
def pairs(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *, include_self: bool = ...,
          sort: bool = ..., dtype: npt.DTypeLike = ..., return_stats: Literal[False] = ...,
          **options: Unpack[JoinOptions]) -> IntArray: ...
@overload
def pairs(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *, include_self: bool = ...,
          sort: bool = ..., dtype: npt.DTypeLike = ..., return_stats: Literal[True],
          **options: Unpack[JoinOptions]) -> Tuple[IntArray, Stats]: ...
@overload
def pairs(X: Any, eps: float, Y: Any = ..., *, include_self: bool = ..., sort: bool = ...,
          dtype: npt.DTypeLike = ..., return_stats: bool = ...,
          **options: Unpack[JoinOptions]) -> Any: ...
@_with_run_options
def pairs(
    X: PointsLike,
    eps: float,
    Y: Optional[PointsLike] = None,
    *,
    include_self: bool = False,
    sort: bool = False,
    dtype: npt.DTypeLike = np.intp,
    engine: str = "auto",
    precision: npt.DTypeLike = "float64",
    approximate: bool = False,
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    devices_split: str = "auto",
    params: Optional[Mapping[str, Any]] = None,
    return_stats: bool = False,
    metric: str = "euclidean",
    boxsize: Boxsize = None,
    progress: Progress = False,
) -> Any:
    """Pairs within `eps` as an (m, 2) array.

    For a self-join (``Y=None``) each unordered pair once, as ``(i, j)`` with ``i < j``: the
    rows of ``cKDTree(X).query_pairs(eps, output_type="ndarray")``. For ``X`` against ``Y``,
    every ``(i, j)`` with ``||X[i] - Y[j]|| <= eps``.

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
        Points (see :func:`neighbor_table` for the dtypes used without a copy).
    eps : float
        The radius (inclusive).
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself.
    include_self : bool, default=False
        Self-join only: also list ``(i, i)``.
    sort : bool, default=False
        Sort by ``(i, j)``. Otherwise the pairs are in no particular order (scipy's is arbitrary
        too): the engines that find pairs (cpu-grid, super-ego) write them in place as they find
        them, which is fastest; the others give them in order of ``i``. Sorting can take longer
        than the join.
    dtype : numpy integer dtype, default=numpy.intp
        Of the result, like scipy's; int64 (intp) costs no copy, others one conversion.
    {run_options}

    Returns
    -------
    pairs : ndarray of shape (m, 2)
        A CuPy array or torch tensor on the points' device for device input.
    stats : dict
        Only with ``return_stats=True``.
    """
    dtype = np.dtype(dtype)
    if dtype.kind not in "iu":
        raise ValueError(f"dtype must be an integer dtype, got {dtype}")
    if _device.any_on_device(X, Y):  # CuPy arrays, CUDA tensors: joined on their device
        b, X, Y, settings = _on_device(X, Y, include_self, metric, boxsize,
                                       (engine, precision, approximate, n_jobs, memory_limit,
                                        device_memory_limit, device, params, devices_split, progress))
        result, stats = _device.pairs(b, X, Y, _device_eps(eps), bool(include_self), bool(sort),
                                      dtype, settings)
        return (result, stats) if return_stats else result
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split, progress)
    set_geometry(settings, metric, boxsize, X.shape[1])
    # Cut from the CSR table (its in-place fill is the engines' fastest output), not collected
    # as pairs and sorted afterwards.
    result, stats = _run(_epsjoin.pairs_from_rows, X, Y, check_eps(eps), bool(include_self),
                         bool(sort), settings)
    if result.dtype != dtype:
        result = _converted(result, dtype)
    _progress.done(settings)
    return (result, stats) if return_stats else result


def engines() -> List[Dict[str, Any]]:
    """Every engine this build knows, as dicts: ``name``, ``processor``, ``available`` (and
    ``unavailable_reason``), ``description``, ``error_band`` and ``params`` (the keys
    ``params=`` accepts)."""
    return _epsjoin.engines()


def build_info() -> Dict[str, Any]:
    """How the extension was built (``version``, ``cuda``, ``cuda_architectures``, ...) and the
    CUDA devices it sees (``cuda_devices``)."""
    return _epsjoin.build_info()
