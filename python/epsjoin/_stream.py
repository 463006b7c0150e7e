"""Results that need not fit in memory, from Python: pairs (or rows) in blocks (iter_pairs).

Each query's neighbour count comes first; the queries are then cut into runs of consecutive ids
whose rows fit a block, and each run is joined against all the points in turn. A block is that
run's pairs, in query order: concatenated, the blocks are ``epsjoin.pairs``' array (its rows
sorted when `sort` asks). With the default engine the points are indexed once (an EpsIndex) and
every run queries that index; another engine joins each run afresh (a GPU engine uploads the
points again for each). Memory holds the points, one count a query and one block, whatever the
whole result.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _device, _progress
from ._index import EpsIndex
from ._join import _check_self, neighbor_graph, neighbor_table
from ._metrics import pair_distances
from ._progress import Progress
from ._radii import count
from ._validation import Devices, MemorySize, check_eps, check_pair, memory_bytes

#: Bytes a pair takes in a block beyond its 16 (i, j): the run's table (4-byte id, 8-byte
#: offset share) and the query ids it is cut with (8).
_TABLE_BYTES_A_PAIR = 20
_DEFAULT_BLOCK_BYTES = 64 << 20

Block = Union[np.ndarray, Tuple[Any, ...]]
#: (indptr int64, neighbour ids int64, distances float64 or None) of queries [begin, end).
RunTable = Callable[[int, int], Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]]


def _runs(counts: np.ndarray, pairs_a_block: int) -> Iterator[Tuple[int, int]]:
    """[begin, end) runs of consecutive queries whose counts add up to at most pairs_a_block
    (a query with more neighbours than that is a run of its own)."""
    ends = np.cumsum(counts, dtype=np.int64)
    begin, n = 0, counts.shape[0]
    while begin < n:
        before = int(ends[begin - 1]) if begin > 0 else 0
        end = int(np.searchsorted(ends, before + pairs_a_block, side="right"))
        end = max(end, begin + 1)
        yield begin, min(end, n)
        begin = end


def iter_pairs(
    X: npt.ArrayLike,
    eps: float,
    Y: Optional[npt.ArrayLike] = None,
    *,
    include_self: bool = False,
    sort: bool = False,
    return_distance: bool = False,
    rows: bool = False,
    block_bytes: MemorySize = None,
    engine: str = "auto",
    metric: str = "euclidean",
    boxsize: Any = None,
    precision: npt.DTypeLike = "float64",
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    params: Optional[Any] = None,
    progress: Progress = False,
) -> "PairBlocks":
    """The pairs within `eps`, in blocks of bounded size: what ``epsjoin.pairs`` returns (or,
    with ``rows=True``, ``neighbor_table``'s rows), for results larger than memory.

    Yields int64 arrays of shape (m, 2), m > 0, each row a pair (i, j): for a self-join
    (``Y=None``) each unordered pair once, i < j (``include_self`` adds (i, i)); against `Y`
    every pair of ``X[i]`` and ``Y[j]``. Blocks come in query order: concatenated they equal
    ``epsjoin.pairs(X, eps, Y, include_self=..., sort=...)``, lexicographically sorted with
    ``sort=True``. Ties at exactly eps are pairs.

    Parameters
    ----------
    X : array-like of shape (n_queries, n_features)
        The points (float32 or float64 used as they are, other numbers converted); host memory.
    eps : float
        The radius (inclusive).
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself.
    include_self : bool, default=False
        Self-join only: also yield each point's pair with itself.
    sort : bool, default=False
        Each query's neighbours in increasing id (the blocks are then in lexicographic order).
    return_distance : bool, default=False
        Each pair's (or row entry's) distance in `metric` too, float64, as
        ``neighbor_graph(mode="distance")`` gives it.
    rows : bool, default=False
        Yield blocks of the neighbour table's rows instead of pairs: ``(first, indptr,
        indices)`` (``(first, indptr, indices, distances)`` with `return_distance`), the rows
        of queries ``first`` to ``first + len(indptr) - 2``, indptr from 0 and indices int64;
        every neighbour of each query, as ``neighbor_table(X, eps, Y, include_self=...,
        sort_indices=sort)`` has them. No Arrow form.
    block_bytes : int or str, default=None
        The most a block (pairs, distances and the table it is cut from) takes: bytes or
        ``"64M"``. ``None``: 64 MiB, or an eighth of `memory_limit` when that is smaller. A
        query with more neighbours than a block holds is a block of its own.
    engine : str, default="auto"
        ``"auto"`` (or ``"cpu-grid"``): one index of the points, every run a query of it. Any
        other engine (``epsjoin.engines()``) joins each run as queries against all the points,
        building its index again each time.
    metric, boxsize, precision, n_jobs, device_memory_limit, device, params
        As the joins take them (``help(epsjoin.pairs)``); a periodic box or params take the
        engine's runs.
    memory_limit : int or str, default=None
        Host memory the index and each block plan within; the whole result may exceed it.
    progress : bool or callable, default=False
        ``True``: a bar (tqdm when installed) over the blocks; a callable gets the fraction
        done.

    Returns
    -------
    blocks : PairBlocks
        An iterator of the blocks, each ``pairs``, an ndarray of shape (m, 2) and dtype int64,
        or with ``return_distance=True`` the tuple ``(pairs, distances)``, distances an ndarray
        of shape (m,), float64. Also an Arrow C stream (``__arrow_c_stream__``) of the same
        blocks as record batches ``i``, ``j`` [, ``distance``]: ``pyarrow.table(blocks)`` or
        DuckDB read it (needs pyarrow). The blocks are computed as they are read, once.

    Examples
    --------
    >>> import numpy as np, epsjoin
    >>> X = np.array([[0.0], [1.0], [2.0], [5.0]])
    >>> for block in epsjoin.iter_pairs(X, 1.0, sort=True):
    ...     print(block.tolist())
    [[0, 1], [1, 2]]
    """
    if _device.any_on_device(X, Y):
        raise TypeError("iter_pairs takes points in host memory; a device result is whole in "
                        "device memory (epsjoin.pairs on the device arrays), or copy them to "
                        "the host (.get() for CuPy, .cpu() for torch)")
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    eps = check_eps(eps)
    limit = memory_bytes(memory_limit, "memory_limit")
    if block_bytes is None:
        block = _DEFAULT_BLOCK_BYTES if limit == 0 else min(_DEFAULT_BLOCK_BYTES, limit // 8)
    else:
        block = memory_bytes(block_bytes, "block_bytes")
        if block <= 0:
            raise ValueError(f"block_bytes must be positive, got {block_bytes!r}")
    searched = X if Y is None else Y
    # A distance also takes the two points' float64 copies it is computed from.
    per_pair = 16 + (8 + 16 * X.shape[1] if return_distance else 0) + _TABLE_BYTES_A_PAIR
    if engine in ("auto", "cpu-grid") and boxsize is None and not params:
        counts, table = _index_runs(X, searched, eps, sort, return_distance, metric, precision,
                                    n_jobs, memory_limit, per_pair)
    else:
        options = dict(engine=engine, metric=metric, boxsize=boxsize, precision=precision,
                       n_jobs=n_jobs, memory_limit=memory_limit,
                       device_memory_limit=device_memory_limit, device=device, params=params)
        counts, table = _engine_runs(X, searched, eps, sort, return_distance, options)
    report = _progress.reporter(progress, "epsjoin.iter_pairs")
    cut = _pair_columns if not rows else _row_blocks
    return PairBlocks(cut(counts, table, Y is None, include_self, max(1, block // per_pair),
                          report), return_distance, rows)


def _index_runs(X: np.ndarray, searched: np.ndarray, eps: float, sort: bool,
                return_distance: bool, metric: str, precision: Any, n_jobs: Optional[int],
                memory_limit: MemorySize, per_pair: int) -> Tuple[np.ndarray, RunTable]:
    # eps 0 and inf are answered beside the grid (exact duplicates, every pair): any grid
    # width serves them.
    grid_eps = eps if 0 < eps < np.inf else 1.0
    index = EpsIndex(searched, grid_eps, metric=metric, precision=precision, n_jobs=n_jobs,
                     memory_limit=memory_limit)
    # Each run is joined as queries against the index, so a self-join's rows hold the query's
    # own point too: counted here, and cut below.
    counts = index.count(X, eps, per_row=True, n_jobs=n_jobs)

    def table(begin: int, end: int) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        settings = index._settings_for(n_jobs, end - begin)
        # The pairs and distances cut from the table are charged with it.
        indptr, indices, _ = index._checked_table(X[begin:end], eps, False, sort, settings,
                                                  per_pair - _TABLE_BYTES_A_PAIR, False)
        # The ids stay uint32 until a block is assembled: half the bytes for the cut to move.
        indptr, cols = indptr.view(np.int64), indices
        distances = None
        if return_distance:
            queries = np.repeat(np.arange(begin, end, dtype=np.int64), np.diff(indptr))
            distances = pair_distances(X, index.data, queries, cols, metric, None)
        return indptr, cols, distances

    return counts, table


def _engine_runs(X: np.ndarray, searched: np.ndarray, eps: float, sort: bool,
                 return_distance: bool, options: Any) -> Tuple[np.ndarray, RunTable]:
    counts = count(X, eps, searched, per_row=True, **options)

    def table(begin: int, end: int) -> Tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        if return_distance:
            graph = neighbor_graph(X[begin:end], eps, searched, mode="distance",
                                   sort_indices=sort, **options)
            return (graph.indptr.astype(np.int64), graph.indices.astype(np.int64),
                    graph.data)
        indptr, indices = neighbor_table(X[begin:end], eps, searched, sort_indices=sort,
                                         **options)
        return indptr.astype(np.int64), indices.astype(np.int64), None

    return np.asarray(counts, dtype=np.int64), table


class PairBlocks:
    """What :func:`iter_pairs` returns: an iterator of blocks, and an Arrow C stream of them.

    Iterating yields ``(m, 2)`` int64 arrays (``(pairs, distances)`` with
    ``return_distance=True``). ``__arrow_c_stream__`` hands the same blocks to Arrow readers
    (``pyarrow.table(blocks)``, ``pyarrow.RecordBatchReader.from_stream``, DuckDB, Polars) as
    record batches of columns ``i``, ``j`` (int64) and ``distance`` (float64, when asked); it needs pyarrow (``pip install epsjoin[arrow]``). Either
    way the blocks are computed as they are read, once: a second read finds none. Blocks of
    rows (``rows=True``) have no Arrow form.
    """

    def __init__(self, columns: Iterator[Tuple[Any, ...]], with_distance: bool,
                 rows: bool = False) -> None:
        self._columns = columns
        self._with_distance = with_distance
        self._rows = rows

    def __iter__(self) -> "PairBlocks":
        return self

    def __next__(self) -> Block:
        if self._rows:
            return next(self._columns)
        rows, cols, *distances = next(self._columns)
        pairs = np.empty((rows.shape[0], 2), dtype=np.int64)
        pairs[:, 0] = rows
        pairs[:, 1] = cols
        return (pairs, distances[0]) if self._with_distance else pairs

    def arrow_schema(self) -> Any:
        """The pyarrow schema of the record batches."""
        if self._rows:
            raise TypeError("blocks of rows (rows=True) have no Arrow form; iterate them, or "
                            "ask iter_pairs for pairs")
        pa = _pyarrow()
        fields = [pa.field("i", pa.int64(), nullable=False), pa.field("j", pa.int64(), nullable=False)]
        if self._with_distance:
            fields.append(pa.field("distance", pa.float64(), nullable=False))
        return pa.schema(fields)

    def arrow_batches(self) -> Iterator[Any]:
        """The blocks as pyarrow record batches (int64 ids, converted once from the index's
        uint32)."""
        pa = _pyarrow()
        schema = self.arrow_schema()
        for rows, cols, *distances in self._columns:
            columns = [rows.astype(np.int64, copy=False), cols.astype(np.int64, copy=False),
                       *distances]
            yield pa.record_batch([pa.array(c) for c in columns], schema=schema)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        pa = _pyarrow()
        reader = pa.RecordBatchReader.from_batches(self.arrow_schema(), self.arrow_batches())
        return reader.__arrow_c_stream__(requested_schema)


def _pyarrow() -> Any:
    try:
        import pyarrow
    except ImportError:
        raise ImportError("pairs as Arrow record batches need pyarrow: pip install "
                          "epsjoin[arrow] (or pyarrow); iterating the blocks does not") from None
    return pyarrow


def _pair_columns(counts: np.ndarray, table: RunTable, self_join: bool, include_self: bool,
                  pairs_a_block: int, report: Any) -> Iterator[Tuple[np.ndarray, ...]]:
    """(query ids, neighbour ids[, distances]) of each block: columns, which the pairs stack
    and Arrow takes as they are."""
    total, done = max(1, int(counts.sum())), 0
    for begin, end in _runs(counts, pairs_a_block):
        indptr, cols, distances = table(begin, end)
        ids = np.uint32 if cols.dtype == np.uint32 else np.int64
        rows = np.repeat(np.arange(begin, end, dtype=ids), np.diff(indptr))
        if self_join:
            kept = cols >= rows if include_self else cols > rows
            rows, cols = rows[kept], cols[kept]
            distances = None if distances is None else distances[kept]
        done += int(counts[begin:end].sum())
        if report is not None:
            report(done / total)
        if rows.shape[0] == 0:  # every pair of the run was below its query (a self-join)
            continue
        yield (rows, cols) if distances is None else (rows, cols, distances)
    if report is not None:
        report.finish()


def _row_blocks(counts: np.ndarray, table: RunTable, self_join: bool, include_self: bool,
                pairs_a_block: int, report: Any) -> Iterator[Tuple[Any, ...]]:
    """(first query, indptr, indices[, distances]) of each run: its rows, a self-join's own
    point taken out unless include_self keeps it."""
    total, done = max(1, int(counts.sum())), 0
    for begin, end in _runs(counts, pairs_a_block):
        indptr, cols, distances = table(begin, end)
        if self_join and not include_self:
            lengths = np.diff(indptr)
            own = np.repeat(np.arange(begin, end, dtype=np.int64), lengths) == cols
            lengths = lengths - np.bincount(np.repeat(np.arange(end - begin), np.diff(indptr))[own],
                                            minlength=end - begin)
            cols = cols[~own]
            distances = None if distances is None else distances[~own]
            indptr = np.zeros(end - begin + 1, dtype=np.int64)
            np.cumsum(lengths, out=indptr[1:])
        done += int(counts[begin:end].sum())
        if report is not None:
            report(done / total)
        cols = cols.astype(np.int64, copy=False)
        yield (begin, indptr, cols) if distances is None else (begin, indptr, cols, distances)
    if report is not None:
        report.finish()


