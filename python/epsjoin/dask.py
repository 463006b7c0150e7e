"""epsjoin on Dask: joins of points partitioned across workers, never replicated (issue 47).

``import epsjoin.dask`` (needs ``pip install epsjoin[dask]``: dask, distributed, pandas).

The points, a ``dask.array`` of shape (n, d) (numpy or CuPy chunks) or a ``dask.dataframe`` of
coordinates, are cut into slabs of like estimated work along one coordinate by the library's
planner (:func:`epsjoin.plan_slabs`, the cuts ``epsjoin mpi-join`` takes, from one sample of the
points). Each chunk sends every slab the rows it owns and the rows in its halo (within eps of
it), tagged with their global ids; each slab's task joins its own points against its own and
halo points on the worker that holds it and keeps the pairs whose smaller id it owns, so every
pair is found once and the result equals the one-node functions'. A slab's pairs come in blocks
of its own points, each its own task (_dask_pairs.py). No worker holds more than one slab with
its halo, the chunks routed to it, and one result block. CuPy chunks (dask-cuda) stay on their
device from chunk to slab, and each slab is joined there by a GPU engine.
"""

from __future__ import annotations

import importlib
import operator
import threading
import warnings
from collections import OrderedDict
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _radii
from ._device import any_on_device, array_module, to_host
from ._metrics import metric_name
from ._partition import SlabPlan, plan_slabs
from ._validation import check_eps, run_settings

try:
    # Any: the package's hints must not depend on dask's and pandas' own (partly untyped).
    dask: Any = importlib.import_module("dask")
    da: Any = importlib.import_module("dask.array")
    dd: Any = importlib.import_module("dask.dataframe")
    pd: Any = importlib.import_module("pandas")
except ImportError as missing:  # pragma: no cover - the message is the point
    raise ImportError("epsjoin.dask needs dask, distributed and pandas: pip install "
                      f"epsjoin[dask] ({missing})") from None

_DEFAULT_SAMPLE = 200_000


def _points(X: Any) -> Any:
    """X as a 2-D float dask array with known chunk sizes."""
    if isinstance(X, dd.DataFrame):
        X = X.to_dask_array(lengths=True)
    if not isinstance(X, da.Array):
        raise TypeError(f"epsjoin.dask takes a dask.array or dask.dataframe of points, got "
                        f"{type(X).__name__}; use epsjoin's own functions for numpy arrays")
    if X.ndim != 2:
        raise ValueError(f"Expected a 2D array of points (n, n_features), got {X.ndim}-D")
    if any(np.isnan(c) for c in X.chunks[0]):
        X = X.compute_chunk_sizes()
    if X.dtype.kind not in "fiu":
        raise ValueError(f"points must be numbers, got dtype {X.dtype}")
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    return X.rechunk({1: -1})


def plan(X: Any, eps: float, n_slabs: Optional[int] = None, *,
         sample_size: int = _DEFAULT_SAMPLE) -> SlabPlan:
    """The slabs the joins of this module cut `X` into: :func:`epsjoin.plan_slabs` on rows
    spread evenly through `X` (at most `sample_size`, computed on the cluster), standing for all
    of them. `n_slabs` defaults to the number of row chunks."""
    return _plan_on_sample(_points(X), eps, n_slabs, sample_size)[0]


#: Plans of recent calls, by the points' dask name (a hash of their graph), eps and slabs: a
#: call again on the same (persisted) points skips the sample's trip from the cluster and the
#: estimate. Cuts only balance the work, so a plan can never change a result.
_RECENT_PLANS: "OrderedDict[Tuple[Any, ...], Tuple[SlabPlan, np.ndarray, np.ndarray, float]]" = \
    OrderedDict()
#: The most bytes of samples the recent plans keep (a sample is up to 200,000 rows).
_KEPT_BYTES = 64 << 20
#: Graphs may be built from several threads of one client.
_PLANS_LOCK = threading.Lock()


def _plan_on_sample(X: Any, eps: float, n_slabs: Optional[int],
                    sample_size: int = _DEFAULT_SAMPLE
                    ) -> Tuple[SlabPlan, np.ndarray, np.ndarray]:
    """:func:`plan`'s slabs, the sample they were planned on and its rows' global ids (kept
    read-only: recent plans are shared between calls)."""
    if not 0 < check_eps(eps) < np.inf:
        raise ValueError(f"eps must be a finite number > 0 for slabs, got {eps!r}")
    n = int(X.shape[0])
    slabs = int(X.numblocks[0]) if n_slabs is None else n_slabs
    if n == 0:
        return SlabPlan(0, [], eps), np.zeros((0, X.shape[1])), np.zeros(0, np.int64)
    key = (X.name, X.shape, X.dtype.str, float(eps), slabs, sample_size)
    with _PLANS_LOCK:
        kept = _RECENT_PLANS.get(key)
        if kept is not None:
            _RECENT_PLANS.move_to_end(key)
    if kept is None:
        kept = _fresh_plan(X, eps, slabs, sample_size)
        with _PLANS_LOCK:
            _RECENT_PLANS[key] = kept
            while sum(k[1].nbytes + k[2].nbytes for k in _RECENT_PLANS.values()) > _KEPT_BYTES:
                _RECENT_PLANS.popitem(last=False)
    planned, sample, sample_ids, extent = kept
    if eps > extent and slabs > 1:
        warnings.warn(f"eps {eps} is wider than the points' extent ({extent}): every slab's "
                      "halo would hold every point, so the join runs as one slab, on one worker",
                      stacklevel=3)
    return planned, sample, sample_ids


def _fresh_plan(X: Any, eps: float, slabs: int, sample_size: int
                ) -> Tuple[SlabPlan, np.ndarray, np.ndarray, float]:
    """(slabs, sample, its rows' global ids, the sample's widest extent), planned from rows
    spread through X; the arrays read-only."""
    n = int(X.shape[0])
    step = max(1, n // max(1, sample_size))
    sample = np.asarray(to_host(X[::step].compute()))
    extent = float(np.ptp(sample, axis=0).max())
    # Every slab's halo would hold every point where eps is wider: one slab is the plan.
    parts = max(1, slabs if eps <= extent else 1)
    planned = plan_slabs(sample, eps, parts, n_points=max(n, sample.shape[0]))
    sample_ids = np.arange(sample.shape[0], dtype=np.int64) * step
    sample.flags.writeable = sample_ids.flags.writeable = False
    return planned, sample, sample_ids, extent


def _take_rows(array: Any, rows: np.ndarray) -> Any:
    """`array[rows]` for a numpy or a CuPy array (`rows` a host index; a CuPy chunk's rows are
    gathered on its device)."""
    return array[array_module(array).asarray(rows)]


def _route(block: Any, offset: int, plan: SlabPlan,
           *columns: np.ndarray) -> List[Tuple[Any, ...]]:
    """For each slab: (global ids, points, owned by the slab[, each of `columns`]) of this
    chunk's rows it needs (`columns`: per-row values that travel with the points, weights).
    A CuPy chunk is routed on its device and its points stay there; only the rows' numbers and
    owners (8 and 1 bytes a row) come to the host."""
    home, first, last = plan.routes(block)
    xp = array_module(first)
    pieces: List[Tuple[Any, ...]] = []
    for r in range(plan.n_slabs):
        rows = xp.nonzero((first <= r) & (r <= last))[0]
        at = to_host(rows)
        pieces.append((offset + at, block[rows], to_host(home[rows] == r),
                       *(c[at] for c in columns)))
    return pieces


def _gathered(pieces: List[Tuple[Any, ...]]) -> Tuple[Any, ...]:
    """A slab's pieces from every chunk, column by column (ids, points, owned[, ...]); CuPy
    points are joined on their device."""
    return tuple(array_module(pieces[0][k]).concatenate([p[k] for p in pieces])
                 for k in range(len(pieces[0])))


def _slab_counts(pieces: List[Tuple[Any, ...]], eps: float, include_self: bool,
                 options: Dict[str, Any]) -> Tuple[np.ndarray, np.ndarray]:
    """(global ids, neighbour counts) of the slab's own points: their rows of the slab's
    self-join, whole because the halo holds every neighbour."""
    ids, points, own = _gathered(pieces)
    mine = np.nonzero(own)[0]
    return ids[mine], _own_counts(points, mine, eps, include_self, options)


def _own_counts(points: Any, mine: np.ndarray, eps: float, include_self: bool,
                options: Dict[str, Any]) -> np.ndarray:
    if mine.size == 0:
        return np.zeros(0, np.int64)
    counts = np.asarray(to_host(_radii.count(points, eps, per_row=True,
                                             include_self=include_self, **options)))
    return np.asarray(counts[mine], dtype=np.int64)


def _slab_total(pieces: List[Tuple[Any, ...]], eps: float, include_self: bool,
                options: Dict[str, Any]) -> int:
    """The ordered pairs of the slab's own points (each own point's neighbours, summed): a
    self-join's total where the slab has no halo; else, on the device, its own points against
    all its points, less each own point found as its own neighbour (the library's device
    counts per row pass through the host: 10-25x a total's time at 20M points); on the host,
    the per-row counts summed."""
    _, points, own = _gathered(pieces)
    mine = np.nonzero(own)[0]
    if mine.size == len(own):
        return int(_radii.count(points, eps, include_self=include_self, **options)) \
            if mine.size else 0
    if not any_on_device(points):
        return int(_own_counts(points, mine, eps, include_self, options).sum())
    found = int(_radii.count(_take_rows(points, mine), eps, points, **options))
    return found - (0 if include_self else mine.size)


def _total(*totals: int) -> np.ndarray:
    return np.asarray(sum(totals), dtype=np.int64)


def _to_chunks(ids: np.ndarray, values: np.ndarray, offsets: np.ndarray
               ) -> List[Tuple[np.ndarray, np.ndarray]]:
    """A slab's results for its own points, cut by the chunk that holds each row: (offsets in
    the chunk, values) a chunk, so no task ever gathers every slab's whole result. The ids
    ascend (a slab's pieces come in chunk order, each in row order), so each chunk's are a run."""
    bounds = np.searchsorted(ids, offsets)
    return [(ids[b:e] - offsets[k], values[b:e])
            for k, (b, e) in enumerate(zip(bounds[:-1], bounds[1:]))]


def _chunk_values(size: int, fill: int, *pieces: Tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    out = np.full(size, fill, dtype=np.int64)
    for at, values in pieces:
        out[at] = values
    return out


def _back_to_chunks(X: Any, per_slab: List[Any], assemble: Any, *extra: Any) -> Any:
    """A dask array chunked as X's rows from each slab's (own ids, values): every slab's
    results cut by chunk (one task a slab), then each chunk assembled from its pieces."""
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])]).astype(np.int64)
    cut = [dask.delayed(_to_chunks)(dask.delayed(operator.getitem)(r, 0),
                                    dask.delayed(operator.getitem)(r, 1), offsets)
           for r in per_slab]
    chunks = []
    for k, size in enumerate(X.chunks[0]):
        pieces = [dask.delayed(operator.getitem)(c, k) for c in cut]
        chunks.append(da.from_delayed(dask.delayed(assemble)(int(size), *extra, *pieces),
                                      shape=(int(size),), dtype=np.int64))
    return da.concatenate(chunks)


def _routed(X: Any, slabs: SlabPlan, *columns: Any) -> List[List[Any]]:
    """pieces[r]: the delayed pieces of every chunk that slab r needs, with the rows of
    `columns` (1-D dask arrays chunked as X's rows)."""
    offsets = np.concatenate([[0], np.cumsum(X.chunks[0])])[:-1]
    blocks = X.to_delayed().ravel()
    extra = [c.to_delayed().ravel() for c in columns]
    routed = [dask.delayed(_route)(b, int(o), slabs, *(e[k] for e in extra))
              for k, (b, o) in enumerate(zip(blocks, offsets))]
    return [[dask.delayed(operator.getitem)(piece, r) for piece in routed]
            for r in range(slabs.n_slabs)]


def _options(engine: str, precision: Any, n_jobs: Optional[int], memory_limit: Any,
             metric: str) -> Dict[str, Any]:
    name = metric_name(metric)
    if name not in ("euclidean", "manhattan", "chebyshev"):
        # A slab's halo is cut along one coordinate, which bounds only these distances from
        # below (a cosine or a great-circle distance does not bound a coordinate's difference).
        raise ValueError(f"epsjoin.dask cuts slabs along a coordinate, which holds for the "
                         f"euclidean, manhattan and chebyshev metrics only; got {metric!r}")
    return dict(engine=engine, precision=precision, n_jobs=n_jobs, memory_limit=memory_limit,
                metric=name)


def _settings(options: Dict[str, Any]) -> Any:
    """The extension's RunSettings of `_options`' dict, for the steps that call it directly."""
    settings = run_settings(options["engine"], options["precision"], False, options["n_jobs"],
                            options["memory_limit"])
    settings.metric = options["metric"]
    return settings


def pairs(X: Any, eps: float, *, include_self: bool = False, return_distance: bool = False,
          n_slabs: Optional[int] = None, block_pairs: Optional[int] = None,
          split: str = "auto", engine: str = "auto", precision: Any = "float64",
          n_jobs: Optional[int] = 1, memory_limit: Any = None, metric: str = "euclidean",
          return_stats: bool = False) -> Any:
    """A self-join's pairs within `eps` as a ``dask.dataframe.DataFrame`` of columns ``i``,
    ``j`` (int64, global row ids, i < j; i <= j with include_self) and, with
    `return_distance`, ``distance`` (float64), computed lazily (``.compute()``,
    ``.to_parquet(...)``). Sorted by (i, j) it equals ``epsjoin.pairs(X, eps, sort=True)`` on
    one node. `engine`, `precision`, `n_jobs` (threads on each worker; 1 by default, as each
    worker runs one task a thread), `memory_limit` (each task's join) and `metric` as the joins
    take them; `n_slabs` as :func:`plan`.

    `block_pairs` (int >= 1) is the most pairs a partition should hold: each slab's own points
    are cut, by ranges of ids, into blocks of about that many estimated pairs, each its own task
    and partition, so a worker holds its slab, its halo and one block (with the join's table of
    about as many pairs while it runs). ``None``: 2**24 pairs (256 MiB of i, j), or a quarter
    of `memory_limit` at 24 bytes a pair where that is smaller. The estimate comes from the
    sample the slabs are planned on: each sampled point's neighbours with larger ids in the
    sample, scaled to the whole. It sets only how the blocks are cut, never the result. A slab
    is cut no finer than its sampled points (at most 200,000 of all, spread by id), and a block
    can exceed `block_pairs` where the sample misjudges it: a dense spot few sampled points fall
    in, or blocks so small that each holds only a few of them (up to 3x with about 15 in
    the tests). Partitions are fixed when the graph is built, so such a block is not cut again.

    `split`: ``"slabs"`` (as above), ``"items"`` (one slab of every point, shared by at least
    `n_slabs` blocks of queries (default: the row chunks), each a task that holds every point:
    the library shares its engines' work items for counts only, so pairs share ranges of
    queries, cut at equal estimated pairs), or ``"auto"``: items where the slabs would put more
    than half of the sampled points in halos (high d), as :func:`count` decides. With
    `return_stats`, also a dict as :func:`count` gives it (``tasks``: the partitions)."""
    from . import _dask_items, _dask_pairs  # _dask_pairs imports this module's pandas

    X = _points(X)
    eps = check_eps(eps)
    options = _options(engine, precision, n_jobs, memory_limit, metric)  # refused before work
    _dask_items.check_split(split)
    most = _dask_pairs.checked_block_pairs(block_pairs, memory_limit)
    slabs, sample, sample_ids = _plan_on_sample(X, eps, n_slabs)
    shared, stats = _dask_items.chosen_split(split, slabs, sample, True)
    tasks = max(1, int(X.numblocks[0]) if n_slabs is None else n_slabs)
    if shared:
        slabs = SlabPlan(slabs.dim, [], eps)  # every point in one slab, shared by its blocks
    blocks = _dask_pairs.query_blocks(slabs, sample, sample_ids, int(X.shape[0]), eps,
                                      include_self, most, options, tasks if shared else 1)
    parts = [dask.delayed(_dask_pairs.slab_pairs)(pieces, block, eps, include_self,
                                                  return_distance, options)
             for pieces, slab_blocks in zip(_routed(X, slabs), blocks) for block in slab_blocks]
    meta: Dict[str, Any] = {"i": np.int64, "j": np.int64}
    if return_distance:
        meta["distance"] = np.float64
    frame = dd.from_delayed(parts, meta=pd.DataFrame({k: np.empty(0, v)
                                                      for k, v in meta.items()}),
                            verify_meta=False)
    if not return_stats:
        return frame
    stats["tasks"] = len(parts)
    return frame, stats


def _graph(n: int, mode: str, include_self: bool, *parts: Any) -> Any:
    import scipy.sparse

    frame = pd.concat(parts) if parts else pd.DataFrame({"i": [], "j": []})
    i, j = frame["i"].to_numpy(np.int64), frame["j"].to_numpy(np.int64)
    if mode == "distance":
        values = frame["distance"].to_numpy(np.float64)
    else:
        values = np.ones(i.shape[0])
    off = i != j  # with include_self, (i, i) once: the diagonal
    rows = np.concatenate([i, j[off]])
    cols = np.concatenate([j, i[off]])
    data = np.concatenate([values, values[off]])
    graph = scipy.sparse.csr_matrix((data, (rows, cols)), shape=(n, n))
    graph.sort_indices()
    return graph


def neighbor_graph(X: Any, eps: float, *, mode: str = "connectivity", include_self: bool = False,
                   n_slabs: Optional[int] = None, block_pairs: Optional[int] = None,
                   split: str = "auto", engine: str = "auto",
                   precision: Any = "float64", n_jobs: Optional[int] = 1,
                   memory_limit: Any = None, metric: str = "euclidean") -> Any:
    """The self-join's neighbourhood graph as a ``dask.delayed`` object: ``.compute()`` gives
    the ``scipy.sparse.csr_matrix`` that ``epsjoin.neighbor_graph(X, eps, mode=...,
    include_self=..., sort_indices=True)`` gives on one node, assembled on one worker from
    :func:`pairs`' partitions (`block_pairs` and `split` as it takes them; the whole graph is
    held there: compute it only where it fits)."""
    if mode not in ("connectivity", "distance"):
        raise ValueError(f"mode must be 'connectivity' or 'distance', got {mode!r}")
    frame = pairs(X, eps, include_self=include_self, return_distance=mode == "distance",
                  n_slabs=n_slabs, block_pairs=block_pairs, split=split, engine=engine,
                  precision=precision, n_jobs=n_jobs, memory_limit=memory_limit, metric=metric)
    n = int(_points(X).shape[0])
    return dask.delayed(_graph)(n, mode, include_self, *frame.to_delayed())


def count(X: Any, eps: float, *, per_row: bool = False, include_self: bool = False,
          n_slabs: Optional[int] = None, split: str = "auto", engine: str = "auto",
          precision: Any = "float64", n_jobs: Optional[int] = 1, memory_limit: Any = None,
          metric: str = "euclidean", return_stats: bool = False) -> Any:
    """The ordered pairs of a self-join within `eps` as a 0-d ``dask.array`` (int64), or with
    `per_row` each point's neighbour count as a ``dask.array`` chunked as X's rows: equal to
    ``epsjoin.count(X, eps, per_row=..., include_self=...)`` on one node.

    `split`: ``"slabs"`` (each worker its slab and halo), ``"items"`` (each of `n_slabs` tasks
    holds every point and counts its share of the join's work items; Euclidean, on an engine
    that shares them: cpu-grid, lbjoin, gds-join, ted-join, meta-16q, meta-1q), or ``"auto"``:
    items where the slabs would put more than half of the sampled points in halos (high d),
    as mpi-join decides. With `return_stats`, also a dict: ``split``, ``halo_fraction`` (of the
    sample, under slabs), ``tasks`` and ``reason``."""
    from . import _dask_items  # it imports this module's dask

    X = _points(X)
    eps = check_eps(eps)
    options = _options(engine, precision, n_jobs, memory_limit, metric)  # refused before work
    _dask_items.check_split(split)
    if split == "items" and options["metric"] != "euclidean":
        raise ValueError("split='items' shares a Euclidean join's work items; got metric "
                         f"{metric!r} (use split='slabs')")
    slabs, sample, _ = _plan_on_sample(X, eps, n_slabs)
    by_items, stats = _dask_items.chosen_split(split, slabs, sample,
                                               options["metric"] == "euclidean")
    tasks = max(1, int(X.numblocks[0]) if n_slabs is None else n_slabs)
    if X.shape[0] == 0:
        rows = da.zeros(0, dtype=np.int64)
    elif by_items:
        rows = _dask_items.item_counts(X, eps, include_self, options, tasks)
    elif per_row:
        counted = [dask.delayed(_slab_counts)(pieces, eps, include_self, options)
                   for pieces in _routed(X, slabs)]
        rows = _back_to_chunks(X, counted, _chunk_values, 0)
    else:
        totals = [dask.delayed(_slab_total)(pieces, eps, include_self, options)
                  for pieces in _routed(X, slabs)]
        rows = da.from_delayed(dask.delayed(_total)(*totals), shape=(), dtype=np.int64)
    result = rows if per_row or rows.ndim == 0 else rows.sum()
    if not return_stats:
        return result
    stats["tasks"] = tasks if by_items else slabs.n_slabs
    return result, stats


def dbscan(X: Any, eps: float, min_samples: int = 5, *, sample_weight: Any = None,
           n_slabs: Optional[int] = None, split: str = "auto", engine: str = "auto",
           precision: Any = "float64", n_jobs: Optional[int] = 1, memory_limit: Any = None,
           metric: str = "euclidean", return_stats: bool = False) -> Any:
    """DBSCAN's labels of `X` (a ``dask.array`` of int64 chunked as X's rows; -1 for noise),
    equal to ``epsjoin.DBSCAN(eps, min_samples=min_samples).fit(X, sample_weight=...).labels_``
    on one node: clusters numbered by their smallest core point, a border point in the cluster
    of its smallest-id core neighbour. `sample_weight` (scikit-learn's meaning: a point is core
    when the weights within eps, its own included, sum to at least `min_samples`; they may be 0
    or negative) is a 1-D ``dask.array`` or ``dask.dataframe`` column as long as X (rechunked
    as X's rows where it is not), an array-like, or a number; its length is checked at once
    and its values (finite, not all 0) in one pass on the cluster. Core flags are exact on each
    slab (the halo, with its weights, holds every neighbour); only the edges that cross slabs
    meet on one task.

    `split` as :func:`count` takes it: under ``"items"`` (Euclidean, unweighted) every task
    holds every point; the core flags come from the shared count, and ranges of ids, one a
    task, find the core-core edges whose smaller end they hold and their border points' core
    neighbours, merged two forests at a time (_dask_dbscan_items.py). With `return_stats`,
    also the dict :func:`count` gives."""
    from . import _dask_dbscan as steps
    from . import _dask_dbscan_items, _dask_items

    X = _points(X)
    eps = check_eps(eps)
    if isinstance(min_samples, bool) or not isinstance(min_samples, (int, np.integer)) or \
            min_samples < 1:
        raise ValueError(f"min_samples must be an integer >= 1, got {min_samples!r}")
    weights = steps.checked_weights(sample_weight, X)
    options = _options(engine, precision, n_jobs, memory_limit, metric)  # refused before work
    _dask_items.check_split(split)
    if split == "items" and (options["metric"] != "euclidean" or weights is not None):
        raise ValueError("split='items' shares a Euclidean join's work items and counts "
                         "unweighted neighbours; use split='slabs' for other metrics or "
                         "sample_weight")
    slabs, sample, _ = _plan_on_sample(X, eps, n_slabs)
    shared, stats = _dask_items.chosen_split(
        split, slabs, sample, options["metric"] == "euclidean" and weights is None)
    tasks = max(1, int(X.numblocks[0]) if n_slabs is None else n_slabs)
    stats["tasks"] = tasks if shared else slabs.n_slabs
    labels = (da.zeros(0, dtype=np.int64) if X.shape[0] == 0 else
              _dask_dbscan_items.item_labels(X, eps, min_samples, options, tasks) if shared else
              _slab_labels(X, eps, int(min_samples), weights, slabs, options))
    return (labels, stats) if return_stats else labels


def _slab_labels(X: Any, eps: float, min_samples: int, weights: Any, slabs: SlabPlan,
                 options: Dict[str, Any]) -> Any:
    """dbscan's labels by slabs, each with its halo (_dask_dbscan.py)."""
    from . import _dask_dbscan as steps

    routed = _routed(X, slabs, *([] if weights is None else [weights]))
    cores = [dask.delayed(steps.slab_core)(pieces, eps, min_samples, options)
             for pieces in routed]
    flags = _back_to_chunks(X, cores, _chunk_values, 0).to_delayed().ravel()
    routes = [dask.delayed(steps.route_flags)(f, b, slabs)
              for f, b in zip(flags, X.to_delayed().ravel())]
    components = [
        dask.delayed(steps.slab_components)(
            routed[r], [dask.delayed(operator.getitem)(route, r) for route in routes], slabs, eps,
            options)
        for r in range(slabs.n_slabs)
    ]
    crossings = [dask.delayed(operator.getitem)(c, slice(2, 5)) for c in components]
    numbered = dask.delayed(steps.union)(*crossings)
    return _back_to_chunks(X, components, steps.chunk_labels, numbered)
