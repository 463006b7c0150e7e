"""EpsIndex: the points' grid built once, queried many times (scipy's cKDTree style)."""

from __future__ import annotations

import math
from typing import Any, Dict, Literal, Mapping, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt
import scipy.sparse

from . import _edge_radii, _epsjoin, _index_queries, _nearest, _progress
from ._join import Stats, _converted, _index_views, neighbor_table
from ._metrics import set_geometry
from ._progress import Progress
from ._radii import count_radii
from ._validation import MemorySize, check_eps, check_points, raise_if_not_finite, run_settings

# Host bytes a result adds per pair after its table, charged with the table against
# memory_limit: a graph's float64 data; query_ball_point's intp copy, list slot and int object.
_GRAPH_DATA_BYTES = 8
_LIST_BYTES = 8 + 8 + 28
# Queries a call answers on one thread when n_jobs is None.
_FEW_QUERIES = 64
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))

Counts = npt.NDArray[np.int64]


def _not_complex(X: Any) -> Any:
    # scipy's KDTree refuses complex points with a TypeError (scikit-learn's checks, which
    # check_points follows, with a ValueError).
    if np.iscomplexobj(X):
        raise TypeError("EpsIndex does not work with complex data")
    return X


class EpsIndex:
    """The eps-grid of `data`, built once at `max_eps` and queried at any eps up to it.

    Like ``scipy.spatial.cKDTree(data)``: build once, then ask for the points near other points
    (:meth:`query_ball_point`), the neighbourhood graph (:meth:`neighbor_graph`) or counts
    (:meth:`count`), each time at any ``eps <= max_eps``. Every answer equals a fresh join's
    (``epsjoin.neighbor_graph(X, eps, data, engine="cpu-grid")``), ties at exactly eps included;
    a query at a larger eps raises ``ValueError`` (docs/index.md).

    The index keeps its own copies: `data` may be changed or freed afterwards.

    Parameters
    ----------
    data : array-like of shape (n_points, n_features)
        The points to index (float32 and float64 arrays are used as they are).
    max_eps : float
        The largest radius any query will use.
    metric : str, default="euclidean"
        ``"euclidean"``, ``"manhattan"``, ``"chebyshev"``, ``"cosine"`` or ``"haversine"``
        (rows of latitude, longitude in radians), fixed for the index.
    precision : {"float64", "float32"}, default="float64"
        Arithmetic of the distances (float32 results equal float64's).
    n_jobs : int, default=None
        Threads of the build; every query takes its own (``None`` or ``-1``: every core).
    memory_limit : int or str, default=None
        Host memory the build and the queries plan within (bytes, or ``"8G"``). A query's
        whole result is held to it before any of it is allocated: a graph's table with its
        data array, ``query_ball_point``'s table with its lists.
    params : dict, default=None
        cpu-grid's parameters (``epsjoin.engines()``).
    finer_grids : int, default=0
        Also keep up to this many grids at ``max_eps / 2``, ``/ 4``, ... (each while its cells
        hold 8 points on average); a query takes the finest as wide as its eps. Pays for queries
        well below ``max_eps`` with many neighbours within it (docs/index.md).

    Examples
    --------
    >>> import numpy as np, epsjoin
    >>> index = epsjoin.EpsIndex(np.array([[0.0], [1.0], [3.0]]), max_eps=2.0)
    >>> index.query_ball_point([[0.5], [2.5]], 1.0)
    array([list([0, 1]), list([2])], dtype=object)
    >>> index.count([[0.5]], 2.0, per_row=True)
    array([2])
    """

    def __init__(
        self,
        data: npt.ArrayLike,
        max_eps: float,
        *,
        metric: str = "euclidean",
        precision: npt.DTypeLike = "float64",
        n_jobs: Optional[int] = None,
        memory_limit: MemorySize = None,
        params: Optional[Mapping[str, Any]] = None,
        finer_grids: int = 0,
    ) -> None:
        X = check_points(_not_complex(data), "data")
        if (isinstance(finer_grids, bool) or not isinstance(finer_grids, int)
                or not 0 <= finer_grids <= 8):
            raise ValueError(f"finer_grids must be an integer from 0 to 8, got {finer_grids!r}")
        self._settings = run_settings("cpu-grid", precision, False, n_jobs, memory_limit,
                                      None, 0, params)
        set_geometry(self._settings, metric, None, X.shape[1])
        try:
            self._index = _epsjoin.EpsIndex(X, check_eps(max_eps, "max_eps"), finer_grids,
                                            self._settings)
        except ValueError:
            raise_if_not_finite(X, None)
            raise
        self._d: int = X.shape[1]
        # Kept for the queries the grid does not answer (eps 0 or inf, several radii, counts
        # against another index) and for pickling: cKDTree keeps its data too.
        self._data = np.array(X, copy=True)
        self._data.flags.writeable = False
        self._one_thread: Any = None
        self._args: Dict[str, Any] = dict(max_eps=max_eps, metric=metric, precision=precision, n_jobs=n_jobs,
                          memory_limit=memory_limit, params=params, finer_grids=finer_grids)

    def __getstate__(self) -> Any:
        # The grid is rebuilt from the points: the same index, and results, after unpickling.
        return {"data": self._data, **self._args}

    def __setstate__(self, state: Any) -> None:
        state = dict(state)
        self.__init__(state.pop("data"), **state)  # type: ignore[misc]

    @property
    def data(self) -> np.ndarray:
        """The indexed points (a read-only copy, in the dtype given; cKDTree's ``data``)."""
        return self._data

    @property
    def max_eps(self) -> float:
        """The radius the index was built for: the largest eps a query may use."""
        return float(self._index.max_eps)

    @property
    def n(self) -> int:
        """The number of indexed points (cKDTree's ``n``)."""
        return int(self._index.n)

    @property
    def m(self) -> int:
        """The number of features (cKDTree's ``m``)."""
        return self._d

    @property
    def memory_bytes(self) -> int:
        """Host bytes the index holds (its grid and its copy of the points)."""
        return int(self._index.memory_bytes) + self._data.nbytes

    def _queries(self, X: Optional[npt.ArrayLike]) -> Optional[np.ndarray]:
        if X is None:
            return None
        Q = check_points(_not_complex(X), "X")
        if Q.shape[1] != self._d:
            raise ValueError(f"X has {Q.shape[1]} features, but the index has {self._d}")
        return Q

    def _eps(self, eps: Optional[float]) -> float:
        return self.max_eps if eps is None else check_eps(eps)

    def _settings_for(self, n_jobs: Optional[int], rows: Optional[int] = None,
                      progress: Progress = False) -> Any:
        # Waking every core costs more than a few queries take (the single-point query).
        few = n_jobs is None and rows is not None and rows <= _FEW_QUERIES
        if progress is None or progress is False:  # the index's own settings, kept
            if few:
                if self._one_thread is None:
                    self._one_thread = self._settings_for(1)
                return self._one_thread
            if n_jobs is None:
                return self._settings
        s = run_settings("cpu-grid", self._settings.precision, False, 1 if few else n_jobs, None,
                         None, 0, self._settings.params, progress=progress)
        s.host_memory_bytes = self._settings.host_memory_bytes
        s.metric = self._settings.metric
        return s

    def _self_join_queries(self, X: Optional[npt.ArrayLike], include_self: bool
                           ) -> Optional[np.ndarray]:
        Q = self._queries(X)
        if include_self and Q is not None:
            raise ValueError("include_self applies to the index's self-join (X=None) only")
        return Q

    def _checked_table(self, Q: Optional[np.ndarray], eps: float, include_self: bool, sort: bool,
                       settings: Any, added_per_pair: float, with_stats: bool = True) -> Any:
        kind = _edge_radii.kind_of(eps, [], settings.metric)
        if kind is not None:  # eps 0 or inf: not the grid's (_edge_radii.py)
            X, Y = (self._data, None) if Q is None else (Q, self._data)
            indptr, indices = _edge_radii.table(kind, X, Y, eps, include_self, settings,
                                                added_per_pair)
            return indptr, indices, _edge_radii._stats(kind, len(indices), 0.0, settings)
        # What the caller builds from the table is charged with it, before any is allocated.
        return self._index.table(Q, eps, bool(include_self), bool(sort), float(added_per_pair),
                                 settings, with_stats)

    # The index holds host points and takes host queries only: no overload needs to take Any.
    @overload
    def neighbor_graph(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
                       include_self: bool = ..., sort_indices: bool = ...,
                       n_jobs: Optional[int] = ..., return_stats: Literal[False] = ...,
                       progress: Progress = ...
                       ) -> scipy.sparse.csr_matrix: ...
    @overload
    def neighbor_graph(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
                       include_self: bool = ..., sort_indices: bool = ...,
                       n_jobs: Optional[int] = ..., return_stats: Literal[True],
                       progress: Progress = ...
                       ) -> Tuple[scipy.sparse.csr_matrix, Stats]: ...
    @overload
    def neighbor_graph(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
                       include_self: bool = ..., sort_indices: bool = ...,
                       n_jobs: Optional[int] = ..., return_stats: bool = ...,
                       progress: Progress = ...
                       ) -> Union[scipy.sparse.csr_matrix,
                                  Tuple[scipy.sparse.csr_matrix, Stats]]: ...
    def neighbor_graph(
        self,
        X: Optional[npt.ArrayLike] = None,
        eps: Optional[float] = None,
        *,
        include_self: bool = False,
        sort_indices: bool = False,
        n_jobs: Optional[int] = None,
        return_stats: bool = False,
        progress: Progress = False,
    ) -> Any:
        """The connectivity graph of `X` against the indexed points within `eps` (default
        ``max_eps``) as a ``scipy.sparse.csr_matrix`` of shape (n_queries, n): rows are the
        queries; ``X=None`` joins the indexed points with themselves (``include_self`` adds the
        diagonal). Equal to ``epsjoin.neighbor_graph(X, eps, data)``. `progress` as the
        joins take it (``epsjoin.pairs``)."""
        Q = self._self_join_queries(X, include_self)
        rows = self.n if Q is None else Q.shape[0]
        settings = self._settings_for(n_jobs, None if Q is None else rows, progress)
        # The graph's float64 data array, 8 bytes a pair.
        raw_indptr, raw_indices, stats = self._checked_table(
            Q, self._eps(eps), include_self, sort_indices, settings, _GRAPH_DATA_BYTES)
        indptr, indices = _index_views(raw_indptr, raw_indices, self.n)
        data = _epsjoin.filled_ones(indices.shape[0], self._settings_for(n_jobs).threads)
        graph = scipy.sparse.csr_matrix((data, indices, indptr), shape=(rows, self.n))
        if sort_indices:
            graph.has_sorted_indices = True
        _progress.done(settings)
        return (graph, stats) if return_stats else graph

    # Any: the result's kind follows the shape of x (a list for one point, an object array of
    # lists for many), which no hint can see.
    def query_ball_point(
        self,
        x: npt.ArrayLike,
        r: Union[float, npt.ArrayLike],
        p: Optional[float] = None,
        *,
        return_sorted: Optional[bool] = None,
        return_length: bool = False,
        n_jobs: Optional[int] = None,
        progress: Progress = False,
    ) -> Any:
        """The indexed points within distance `r` of each point of `x`, as scipy's
        ``cKDTree.query_ball_point``: one point (shape (m,)) gives a list of indices; many
        (shape (..., m)) an object array of lists of that shape. `r` is a number or an array
        that broadcasts to ``x.shape[:-1]`` (a radius per query); 0 finds exact duplicates, inf
        every point. `p` (scipy's), when given, must name the index's metric (2: euclidean).
        Lists are sorted unless ``return_sorted=False``; ``return_length=True`` gives the counts
        instead (``numpy.int64`` for one point). `progress` as the joins take it."""
        # The overhead of one call is what a one-point query costs: each check runs once here,
        # and a float point array of the index's features is used as it is (the core checks
        # that it is finite).
        points = x if type(x) is np.ndarray else np.asarray(_not_complex(x))
        if points.dtype.kind == "c":
            _not_complex(points)
        if p is not None:
            _index_queries.check_p(p, self._settings.metric)
        single = points.ndim == 1
        shape = points.shape[:-1]
        if single and points.dtype in _FLOATS and points.shape[0] == self._d:
            Q: Optional[np.ndarray] = np.ascontiguousarray(points).reshape(1, self._d)
        else:
            Q = self._queries(points.reshape(-1, points.shape[-1]) if points.ndim else points)
        assert Q is not None
        settings = self._settings_for(n_jobs, Q.shape[0], progress)
        result = self._ball_point(Q, r, single, shape, return_sorted, return_length, settings)
        _progress.done(settings)
        return result

    def _ball_point(self, Q: np.ndarray, r: Any, single: bool, shape: Tuple[int, ...],
                    return_sorted: Optional[bool], return_length: bool, settings: Any) -> Any:
        if type(r) is float and 0 < r < math.inf:
            eps = r
        elif np.ndim(r) == 0:
            eps = check_eps(r, "r")
        if np.ndim(r) == 0:
            if return_length:
                counts = self._counts(Q, eps, False, True, settings, False)[1]
                assert counts is not None  # per row
                return counts[0] if single else counts.reshape(shape)
            indptr, indices, _ = self._checked_table(Q, eps, False, return_sorted is not False,
                                                     settings, _LIST_BYTES, False)
            if single:
                return indices.tolist()  # Python ints, as from intp
            offsets, ids = indptr.view(np.int64), _converted(indices, np.intp)
        else:
            radius = _index_queries.broadcast_radii(r, shape)
            offsets, ids = _index_queries.rows_by_radius(
                Q, radius, lambda q, e: self._rows(q, e, settings), self._data,
                self._settings.metric)
            if return_length:
                counts = np.diff(offsets)
                return counts[0] if single else counts.reshape(shape)
        lists = [ids[offsets[i]:offsets[i + 1]].tolist() for i in range(len(offsets) - 1)]
        if single:
            return lists[0]
        out = np.empty(len(lists), dtype=object)
        out[:] = lists
        return out.reshape(shape)

    def _rows(self, Q: np.ndarray, eps: float, settings: Any) -> Tuple[np.ndarray, np.ndarray]:
        indptr, indices, _ = self._checked_table(Q, eps, False, True, settings, _LIST_BYTES)
        return indptr.view(np.int64), _converted(indices, np.intp)

    def count_neighbors(
        self,
        other: Union["EpsIndex", npt.ArrayLike],
        r: Union[float, npt.ArrayLike],
        p: Optional[float] = None,
        weights: Any = None,
        cumulative: bool = True,
        *,
        n_jobs: Optional[int] = None,
    ) -> Any:
        """scipy's ``cKDTree.count_neighbors``: the pairs (i, j), i indexed here and j in
        `other` (an EpsIndex or points), with ``distance <= r``; pairs (i, i) count when other
        is this index. `r` is a number or a 1-D array (one count each, from one join at the
        largest; any r, not bounded by ``max_eps``). `weights`: one array (other must be this
        index) or a pair ``(self_weights, other_weights)``, either None; a weighted count sums
        the pairs' weight products. ``cumulative=False`` counts pairs in the bins
        ``r[k-1] < distance <= r[k]`` (r non-decreasing). Returns an int (weighted: a
        numpy.float64) for a number r, an int64 (float64) array for an array."""
        _index_queries.check_p(p, self._settings.metric)
        same = other is self
        theirs = other._data if isinstance(other, EpsIndex) else check_points(other, "other")
        if theirs.shape[1] != self._d:
            raise ValueError(f"other has {theirs.shape[1]} features, but the index has {self._d}")
        metric, limit = self._settings.metric, self._args["memory_limit"]

        def counts(X: np.ndarray, radii: np.ndarray, Y: np.ndarray) -> np.ndarray:
            return count_radii(X, radii, Y, metric=metric, n_jobs=n_jobs, memory_limit=limit)

        def table(X: np.ndarray, eps: float, Y: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
            indptr, indices = neighbor_table(X, eps, Y, metric=metric, n_jobs=n_jobs,
                                             memory_limit=limit)
            return indptr, indices.astype(np.intp)

        return _index_queries.count_neighbors(self._data, theirs, same, r, weights,
                                              bool(cumulative), counts, table)

    def kneighbors(self, X: Optional[npt.ArrayLike] = None, k: int = 1,
                   max_radius: Optional[float] = None, *, return_distance: bool = True,
                   n_jobs: Optional[int] = None, progress: Progress = False) -> Any:
        """Each query's `k` nearest indexed points within `max_radius` (default ``max_eps``,
        at most it; inclusive), nearest first, equal distances by index, as scipy's
        ``cKDTree.query(x, k, distance_upper_bound=...)`` answers: arrays of shape (m, k),
        float64 distances and int64 indices, a missing neighbour at distance ``inf`` with
        index ``n`` (one point, shape (d,), gives shape (k,)). ``X=None`` asks for the
        indexed points' neighbours, each without itself (scikit-learn's ``kneighbors()``).
        Exact: the distances are a distance graph's, ties at ``max_radius`` included. Memory:
        k neighbours a query, whatever the number within the radius. Returns
        ``(distances, indices)``, or the indices alone without `return_distance`."""
        k = _nearest.check_k(k)
        eps = self._eps(max_radius)
        if _edge_radii.kind_of(eps, [], self._settings.metric) is not None:
            raise ValueError(f"max_radius must be a finite number > 0, got {eps!r}")
        single = X is not None and np.ndim(X) == 1
        Q = None if X is None else self._queries(np.reshape(np.asarray(X), (1, -1)) if single
                                                 else X)
        settings = self._settings_for(n_jobs, None if Q is None else Q.shape[0], progress)
        distances, indices, _ = self._index.nearest(Q, eps, k, False, self._data, settings,
                                                    False)
        _progress.done(settings)
        if single:
            distances, indices = distances[0], indices[0]
        return (distances, indices) if return_distance else indices

    @overload
    def count(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
              include_self: bool = ..., per_row: Literal[False] = ..., n_jobs: Optional[int] = ...,
              return_stats: Literal[False] = ..., progress: Progress = ...) -> int: ...
    @overload
    def count(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
              include_self: bool = ..., per_row: Literal[True], n_jobs: Optional[int] = ...,
              return_stats: Literal[False] = ..., progress: Progress = ...) -> Counts: ...
    @overload
    def count(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
              include_self: bool = ..., per_row: Literal[False] = ..., n_jobs: Optional[int] = ...,
              return_stats: Literal[True], progress: Progress = ...) -> Tuple[int, Stats]: ...
    @overload
    def count(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
              include_self: bool = ..., per_row: Literal[True], n_jobs: Optional[int] = ...,
              return_stats: Literal[True], progress: Progress = ...
              ) -> Tuple[Counts, Stats]: ...
    @overload
    def count(self, X: Optional[npt.ArrayLike] = ..., eps: Optional[float] = ..., *,
              include_self: bool = ..., per_row: bool = ..., n_jobs: Optional[int] = ...,
              return_stats: bool = ..., progress: Progress = ...
              ) -> Union[int, Counts, Tuple[Union[int, Counts], Stats]]: ...
    def count(
        self,
        X: Optional[npt.ArrayLike] = None,
        eps: Optional[float] = None,
        *,
        include_self: bool = False,
        per_row: bool = False,
        n_jobs: Optional[int] = None,
        return_stats: bool = False,
        progress: Progress = False,
    ) -> Any:
        """The number of ordered pairs of `X` against the indexed points within `eps` (default
        ``max_eps``), or with ``per_row=True`` each query's neighbour count (int64);
        ``X=None`` counts the indexed points among themselves. `progress` as the joins take
        it."""
        Q = self._self_join_queries(X, include_self)
        settings = self._settings_for(n_jobs, None if Q is None else Q.shape[0], progress)
        total, rows, stats = self._counts(Q, self._eps(eps), include_self, per_row, settings)
        result = total if rows is None else rows
        _progress.done(settings)
        return (result, stats) if return_stats else result

    def _counts(self, Q: Optional[np.ndarray], eps: float, include_self: bool, per_row: bool,
                settings: Any, with_stats: bool = True) -> Tuple[int, Optional[Counts], Stats]:
        """(total, int64 counts per row or None, stats) of checked queries and eps."""
        kind = _edge_radii.kind_of(eps, [], settings.metric)
        if kind is not None:  # eps 0 or inf: not the grid's (_edge_radii.py)
            X, Y = (self._data, None) if Q is None else (Q, self._data)
            lens = _edge_radii.lens_of(kind, X, Y, eps, include_self, settings)
            stats = _edge_radii._stats(kind, int(lens.sum()), 0.0, settings)
            return int(lens.sum()), (lens if per_row else None), stats
        total, rows, stats = self._index.counts(Q, eps, bool(include_self), bool(per_row),
                                                settings, with_stats)
        # The extension returns rows only per row.
        return int(total), (None if rows is None else rows.astype(np.int64)), stats
