"""The counts, without forming any pair: within one eps (per query or in total) and within
several radii from one join (scipy's count_neighbors with an array r)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Mapping, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

from . import _device, _edge_radii, _epsjoin, _progress
from ._progress import Progress
from ._join import (Boxsize, HostPoints, JoinOptions, PointsLike, Stats, _check_self,
                    _device_eps, _on_device, _run, _with_run_options)
from ._metrics import set_geometry
from ._validation import Devices, MemorySize, check_eps, check_pair, run_settings

if TYPE_CHECKING:
    from typing_extensions import Unpack

Counts = npt.NDArray[np.int64]


@overload
def count(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *,
          per_row: Literal[False] = ..., include_self: bool = ...,
          return_stats: Literal[False] = ..., **options: Unpack[JoinOptions]) -> int: ...
@overload
def count(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *, per_row: Literal[True],
          include_self: bool = ..., return_stats: Literal[False] = ...,
          **options: Unpack[JoinOptions]) -> Counts: ...
@overload
def count(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *,
          per_row: Literal[False] = ..., include_self: bool = ..., return_stats: Literal[True],
          **options: Unpack[JoinOptions]) -> Tuple[int, Stats]: ...
@overload
def count(X: HostPoints, eps: float, Y: Optional[HostPoints] = ..., *, per_row: Literal[True],
          include_self: bool = ..., return_stats: Literal[True],
          **options: Unpack[JoinOptions]) -> Tuple[Counts, Stats]: ...
@overload
def count(X: Any, eps: float, Y: Any = ..., *, per_row: bool = ..., include_self: bool = ...,
          return_stats: bool = ..., **options: Unpack[JoinOptions]) -> Any: ...
@_with_run_options
def count(
    X: PointsLike,
    eps: float,
    Y: Optional[PointsLike] = None,
    *,
    per_row: bool = False,
    include_self: bool = False,
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
    """Counts of neighbours within `eps`, without forming any pair.

    The total counts ordered pairs: for a self-join ``(i, j)`` and ``(j, i)`` both, so twice
    the number of unique pairs, plus ``n`` with ``include_self=True`` (which is what
    ``cKDTree(X).count_neighbors(cKDTree(X), eps)`` counts). Per row, ``counts[i]`` is the
    number of neighbours of ``X[i]``; with ``include_self=True`` (or against ``Y``) this is
    ``cKDTree(Y).query_ball_point(X, eps, return_length=True)``.

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
        Query points (see :func:`neighbor_table` for the dtypes used without a copy).
    eps : float
        The radius (inclusive).
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself.
    per_row : bool, default=False
        Return each query's count instead of the total. The total alone is cheaper on a GPU:
        it is summed on the device, and several GPUs (``device``) then share the work items
        whatever the dimension.
    include_self : bool, default=False
        Self-join only: count each point as its own neighbour.
    {run_options}

    Returns
    -------
    count : int, or ndarray of shape (n_queries,) and dtype int64 when ``per_row``
        (on the points' device for device input).
    stats : dict
        Only with ``return_stats=True``.
    """
    if _device.any_on_device(X, Y):  # CuPy arrays, CUDA tensors: joined on their device
        b, X, Y, settings = _on_device(X, Y, include_self, metric, boxsize,
                                       (engine, precision, approximate, n_jobs, memory_limit,
                                        device_memory_limit, device, params, devices_split, progress))
        result, stats = _device.count(b, X, Y, _device_eps(eps), bool(include_self),
                                      bool(per_row), settings)
        return (result, stats) if return_stats else result
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split, progress)
    set_geometry(settings, metric, boxsize, X.shape[1])
    total, rows, stats = _run(_epsjoin.neighbor_counts, X, Y, check_eps(eps),
                              bool(include_self), bool(per_row), settings)
    result = int(total) if rows is None else rows.view(np.int64)  # rows only per row
    _progress.done(settings)
    return (result, stats) if return_stats else result


# Host points only (device arrays are refused), so no overload needs to take Any.
@overload
def count_radii(X: npt.ArrayLike, radii: npt.ArrayLike, Y: Optional[npt.ArrayLike] = ..., *,
                include_self: bool = ..., return_stats: Literal[False] = ...,
                **options: Unpack[JoinOptions]) -> Counts: ...
@overload
def count_radii(X: npt.ArrayLike, radii: npt.ArrayLike, Y: Optional[npt.ArrayLike] = ..., *,
                include_self: bool = ..., return_stats: Literal[True],
                **options: Unpack[JoinOptions]) -> Tuple[Counts, Stats]: ...
@overload
def count_radii(X: npt.ArrayLike, radii: npt.ArrayLike, Y: Optional[npt.ArrayLike] = ..., *,
                include_self: bool = ..., return_stats: bool = ...,
                **options: Unpack[JoinOptions]) -> Union[Counts, Tuple[Counts, Stats]]: ...
@_with_run_options
def count_radii(
    X: npt.ArrayLike,
    radii: npt.ArrayLike,
    Y: Optional[npt.ArrayLike] = None,
    *,
    include_self: bool = False,
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
    """Each query's neighbour count within every radius of `radii`, from one join at the largest.

    ``counts[i, k]`` is the number of points within ``radii[k]`` of ``X[i]`` (self excluded
    unless ``include_self``): the same as :func:`count` with ``per_row=True`` at each radius, and
    ``counts.sum(axis=0)`` is what scipy's ``cKDTree(X).count_neighbors(cKDTree(Y), radii)``
    returns (with ``include_self=True`` for a self-join).

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
    radii : array-like of shape (n_radii,)
        Radii, each >= 0, in any order: 0 counts exact duplicates, inf every point.
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself.
    include_self : bool, default=False
        Self-join only: count each point as its own neighbour.
    {run_options}

    Returns
    -------
    counts : ndarray of shape (n_queries, n_radii), dtype int64
    stats : dict
        Only with ``return_stats=True``.
    """
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    r = np.ascontiguousarray(np.atleast_1d(np.asarray(radii, dtype=np.float64))) + 0.0
    if r.ndim != 1 or r.size == 0:
        raise ValueError(f"radii must be a non-empty 1-D list of numbers, got shape {r.shape}")
    if np.isnan(r).any() or (r < 0).any():
        raise ValueError("radii must be numbers >= 0 (0 finds exact duplicates, inf every pair)")
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split, progress)
    set_geometry(settings, metric, boxsize, X.shape[1])
    if settings.box and Y is not None:
        X = _edge_radii.wrap(X, settings.box)  # queries outside the box, as scipy's
    counts, stats = _run(_edge_radii.count_radii, X, Y, r, bool(include_self), settings,
                         _epsjoin.neighbor_counts_radii)
    _progress.done(settings)
    return (counts, stats) if return_stats else counts
