"""Pairs on Dask in blocks of bounded size (epsjoin.dask.pairs; issue 47).

A slab with many pairs would be held whole by one worker if it were one partition. Its own
points are therefore cut into blocks of queries, ranges of global ids, each its own task and
partition: a block joins its queries against the slab's own and halo points and keeps the pairs
whose smaller id is one of its queries. Every own point is in exactly one block and every pair is
kept by the owner of its smaller id, so the blocks together give each pair once, whatever the
cuts. The cuts come from the sample the slabs are planned on: they only set how many blocks
there are and where, never what is found.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _join, _radii
from ._device import array_module, to_host
from ._metrics import pair_distances
from ._partition import SlabPlan
from ._validation import MemorySize, memory_bytes
from .dask import _gathered, _take_rows, pd

#: The most pairs a partition holds when neither `block_pairs` nor `memory_limit` says: 256 MiB
#: of (i, j), 384 MiB with distances.
DEFAULT_BLOCK_PAIRS = 2**24
#: A pair's bytes in a block's frame (i, j, distance).
_PAIR_BYTES = 24
#: The planner's floor for a sample's mean neighbour count (core/partition.cpp): below it the
#: few sampled points that have a neighbour would carry every estimate, so a wider radius counts.
_ENOUGH_NEIGHBOURS = 8.0
#: Above this mean neighbour count, every k-th sampled row estimates the blocks (k = the mean
#: over it): their pairs are found, and so many rows add nothing to the blocks' cuts.
_DENSE_NEIGHBOURS = 64.0
#: The planner's own sample sizes (plan_slabs): the estimate joins no more than it does.
_COUNTED_LOW_D, _COUNTED_HIGH_D = 200_000, 20_000
#: The most pairs the estimate finds in one join of the sample (64 MiB of them).
_FOUND_AT_ONCE = 2**22


def checked_block_pairs(block_pairs: Any, memory_limit: MemorySize) -> int:
    """`block_pairs` as an int >= 1; None: a quarter of `memory_limit` in pairs (the rest is
    the join's table and index), at most DEFAULT_BLOCK_PAIRS."""
    if block_pairs is None:
        limit = memory_bytes(memory_limit, "memory_limit")
        if limit == 0:
            return DEFAULT_BLOCK_PAIRS
        return max(1, min(DEFAULT_BLOCK_PAIRS, limit // (4 * _PAIR_BYTES)))
    if isinstance(block_pairs, (bool, np.bool_)) or not isinstance(block_pairs, numbers.Integral):
        raise TypeError(f"block_pairs must be an integer or None, got "
                        f"{type(block_pairs).__name__} {block_pairs!r}")
    if block_pairs < 1:
        raise ValueError(f"block_pairs must be an integer >= 1 or None, got {block_pairs!r}")
    return int(block_pairs)


def _greater_neighbours(sample: np.ndarray, radius: float, counts: np.ndarray,
                        options: Dict[str, Any]) -> np.ndarray:
    """Each sampled point's neighbours after it (the pairs it keeps as the smaller id), from
    joins of runs of rows against the rows from the run on: at most _FOUND_AT_ONCE pairs found
    at a time (`counts`, each row's neighbours, cut the runs)."""
    greater = np.zeros(len(sample), dtype=np.int64)
    running = np.cumsum(counts + 1)  # a row finds at most its neighbours and itself
    runs = np.arange(1, running[-1] // _FOUND_AT_ONCE + 1)
    cuts = np.searchsorted(running, _FOUND_AT_ONCE * runs, side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [len(sample)]]))
    for start, stop in zip(bounds[:-1], bounds[1:]):
        found = _join.pairs(sample[start:stop], radius, sample[start:], **options)
        after = found[found[:, 1] > found[:, 0], 0]
        greater[start:stop] = np.bincount(after, minlength=stop - start)
    return greater


def _kept_by_sampled_point(sample: np.ndarray, n: int, eps: float, include_self: bool,
                           block_pairs: int, options: Dict[str, Any]
                           ) -> Optional[Tuple[np.ndarray, np.ndarray]]:
    """(rows of the sample, each one's estimated pairs in the result in the whole data's
    numbers: its neighbours with larger ids, as a pair is kept by its smaller id and the rows
    are in id order, and itself with include_self); None where the whole result is estimated
    at half a block or less, so no slab is cut."""
    m, d = int(sample.shape[0]), int(sample.shape[1])
    radius = eps
    counts = np.asarray(_radii.count(sample, eps, per_row=True, **options))
    # A sampled point's neighbours among m stand for (n - 1) / (m - 1) times as many among n.
    scale = (n - 1) / max(1, m - 1)
    mean = float(counts.mean())
    if n * (mean * scale / 2 + include_self) <= block_pairs / 2:
        return None
    rows = np.arange(m)
    if m < n and mean < _ENOUGH_NEIGHBOURS and m > 1:
        # The planner's remedy for a thin sample: the same density, measured over a wider ball.
        widen = min(64.0, (_ENOUGH_NEIGHBOURS / max(mean, 0.5 / m)) ** (1.0 / d))
        radius = eps * widen
        counts = np.asarray(_radii.count(sample, radius, per_row=True, **options))
        scale /= widen**d
    elif mean > _DENSE_NEIGHBOURS:
        # Where every point has many neighbours, fewer rows tell as much, and their pairs, which
        # the estimate finds, cost less than all the rows' (the whole data's when n <= m).
        rows = rows[::int(mean // _DENSE_NEIGHBOURS)]
        sample = np.ascontiguousarray(sample[rows])
        counts = np.asarray(_radii.count(sample, eps, per_row=True, **options))
        scale = (n - 1) / max(1, len(rows) - 1)
    greater = _greater_neighbours(sample, radius, counts, options)
    return rows, greater * scale + (1.0 if include_self else 0.0)


def query_blocks(plan: SlabPlan, sample: np.ndarray, sample_ids: np.ndarray, n: int, eps: float,
                 include_self: bool, block_pairs: int, options: Dict[str, Any],
                 at_least: int = 1) -> List[List[Optional[Tuple[int, int]]]]:
    """For each slab, its blocks: [lo, hi) ranges of global ids whose own points a task takes as
    queries, each of about `block_pairs` estimated pairs (cut at equal shares of the sampled
    points' estimates, in id order), and at least `at_least` of them where the slab has as many
    sampled points (the tasks that share one slab of every point); [None] where one block holds
    the whole slab."""
    blocks: List[List[Optional[Tuple[int, int]]]] = [[None] for _ in range(plan.n_slabs)]
    if n == 0 or len(sample) == 0:
        return blocks
    limit = _COUNTED_LOW_D if sample.shape[1] <= 3 else _COUNTED_HIGH_D
    every = max(1, len(sample) // limit)
    sample, sample_ids = np.ascontiguousarray(sample[::every]), sample_ids[::every]
    # The planner's settings, not the tasks': memory_limit is each task's, not the client's.
    estimate = _kept_by_sampled_point(sample, n, eps, include_self, block_pairs,
                                      {"metric": options["metric"]})
    if estimate is None:
        if at_least <= 1:
            return blocks
        # Too few pairs to cut by: equal numbers of sampled points, at_least blocks.
        estimate = np.arange(len(sample)), np.zeros(len(sample))
    rows, kept = estimate
    sample, sample_ids = sample[rows], sample_ids[rows]
    stands_for = n / len(sample)
    home = plan.slab_of(sample)
    for r in range(plan.n_slabs):
        mine = np.nonzero(home == r)[0]  # ascending ids, as the sample is taken
        weights = kept[mine]
        expected = stands_for * float(weights.sum())
        # No finer than the sample: a cut falls on a sampled point.
        k = min(len(mine), max(at_least, math.ceil(expected / block_pairs)))
        if k <= 1:
            continue
        # Where no pair is expected, each sampled point weighs alike.
        running = np.cumsum(weights if expected > 0 else np.ones(len(mine)))
        at = np.searchsorted(running, running[-1] * np.arange(1, k) / k, side="left")
        cuts = np.unique(sample_ids[mine[at]])
        cuts = cuts[(cuts > 0) & (cuts < n)]
        bounds = np.concatenate([[0], cuts, [n]]).astype(np.int64)
        blocks[r] = [(int(lo), int(hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]
    return blocks


def _local_pairs(points: Any, own: np.ndarray, queries: np.ndarray, whole: bool, eps: float,
                 include_self: bool, options: Dict[str, Any]) -> Tuple[Any, Any]:
    """(a, b): the slab's local ids of the pairs its `queries` keep, where the points lie (CuPy
    points: on their device, where the join leaves its pairs)."""
    xp = array_module(points)
    if whole:
        # Its points self-joined (each pair once), the pairs whose smaller id it owns kept.
        # Pairs of two halo points are found and dropped, which costs little where the halo is
        # thin (low d; high d wants work items).
        found = _join.pairs(points, eps, include_self=include_self, **options)
        found = found[xp.asarray(own)[found[:, 0]]]
        return found[:, 0], found[:, 1]
    # The queries against the points from the first query on: a kept pair's larger id is never
    # below it. Pairs of two of the block's points are found from both ends, kept from one.
    start = int(queries[0])
    found = _join.pairs(_take_rows(points, queries), eps, points[start:], **options)
    a = xp.asarray(queries)[found[:, 0]]
    b = found[:, 1]
    b += start  # in place: the join's pairs are this call's own
    keep = a <= b if include_self else a < b
    return a[keep], b[keep]


def _id_columns(ids: np.ndarray, a: Any, b: Any) -> Any:
    """A frame of the global ids (i, j) of local pairs (a, b), built around one host array:
    pandas keeps a 2-D array as its block, where columns given apart are copied into one."""
    out = np.empty((2, a.shape[0]), np.int64)
    if isinstance(a, np.ndarray):
        np.take(ids, a, out=out[0])
        np.take(ids, b, out=out[1])
    else:  # on the device: the ids go there, and the pairs come back once, as global ids
        device_ids = array_module(a).asarray(ids)
        device_ids[a].get(out=out[0])
        device_ids[b].get(out=out[1])
    return pd.DataFrame(out.T, columns=["i", "j"], copy=False)


def slab_pairs(pieces: List[Tuple[np.ndarray, ...]], block: Optional[Tuple[int, int]],
               eps: float, include_self: bool, return_distance: bool,
               options: Dict[str, Any]) -> Any:
    """One partition: the pairs (i, j), i < j (i <= j with include_self), whose i is an own point
    of the slab with an id in `block` ([lo, hi); None: all of them)."""
    ids, points, own = _gathered(pieces)  # local ids ascend with the global ones
    queries = np.nonzero(own if block is None else own & (ids >= block[0]) & (ids < block[1]))[0]
    if queries.size == 0:
        frame = pd.DataFrame({"i": np.empty(0, np.int64), "j": np.empty(0, np.int64)})
        if return_distance:
            frame["distance"] = np.empty(0, np.float64)
        return frame
    a, b = _local_pairs(points, own, queries, block is None, eps, include_self, options)
    frame = _id_columns(ids, a, b)
    if return_distance:
        # CuPy points: the distances are computed from a host copy of the slab, as the frame
        # they go into lives on the host.
        host = to_host(points)
        frame["distance"] = pair_distances(host, host, to_host(a), to_host(b),
                                           options["metric"], None)
    return frame
