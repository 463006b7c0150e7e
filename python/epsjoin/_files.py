"""join_to: a join written to a file by the library's file writers, for results larger than
memory (the command line's ``--output``), from Python."""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any, Dict, Optional, Union

import numpy.typing as npt

from . import _device, _epsjoin, _progress
from ._metrics import set_geometry
from ._options_doc import _with_run_options
from ._progress import Progress
from ._join import _check_self, _run
from ._validation import Devices, MemorySize, check_eps, check_pair, run_settings

#: The command line's rule: the format follows the extension.
_FORMAT_OF_EXTENSION = {".npy": "npy", ".csv": "csv", ".txt": "csv", ".parquet": "parquet"}


def format_of(path: str, format: Optional[str]) -> str:
    if format is None:
        return _FORMAT_OF_EXTENSION.get(os.path.splitext(path)[1].lower(), "csr")
    if format not in ("csr", "npy", "csv", "parquet"):
        raise ValueError(f"format must be 'csr', 'npy', 'csv' or 'parquet', got {format!r}")
    return format


@_with_run_options
def join_to(
    path: Union[str, "os.PathLike[str]"],
    X: npt.ArrayLike,
    eps: float,
    Y: Optional[npt.ArrayLike] = None,
    *,
    format: Optional[str] = None,
    include_self: bool = False,
    sort: bool = False,
    engine: str = "auto",
    precision: npt.DTypeLike = "float64",
    approximate: bool = False,
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    devices_split: str = "auto",
    params: Optional[Any] = None,
    metric: str = "euclidean",
    boxsize: Any = None,
    progress: Progress = False,
) -> Dict[str, Any]:
    """Writes the join of `X` (with `Y`, or with itself) within `eps` to the file `path`, through
    the library's file writers, as ``epsjoin join --output`` does: the result never has to fit
    in memory. The file appears under `path` only once complete (written beside it under a
    temporary name, then renamed), so an error or Ctrl-C leaves no file that looks complete; a
    device such as ``/dev/null`` or a FIFO is written in place and never replaced; a directory
    is refused before the join.

    Parameters
    ----------
    path : str or path-like
        Where to write.
    X : array-like of shape (n_queries, n_features)
        Query points, in host memory.
    eps : float
        The radius (inclusive).
    Y : array-like of shape (n_points, n_features), default=None
        Points to search; ``None`` joins X with itself.
    format : {"csr", "npy", "csv", "parquet"}, default=None
        ``"csr"``: the binary CSR table, each query's row of neighbour ids (its layout:
        docs/formats.md). ``"npy"``: the
        pairs as a NumPy array of shape (m, 2), dtype uint32; ``"csv"``: one ``i,j`` line a
        pair. Pairs of a self-join are unordered pairs, each once (i < j, and (i, i) with
        include_self), in the order the join finds them. ``None``: from the extension, as the
        command line does (``.npy``, ``.csv`` or ``.txt``, anything else CSR).
    include_self : bool, default=False
        Self-join only: each point is its own neighbour too.
    sort : bool, default=False
        CSR: each row's neighbours in increasing id; Parquet: pairs in lexicographic order.
        Sorted npy or CSV pairs come from :func:`epsjoin.iter_pairs` (``sort=True``).
    {run_options}

    Returns
    -------
    stats : dict
        The run's statistics (as ``return_stats=True`` gives them elsewhere).
    """
    if _device.any_on_device(X, Y):
        raise TypeError("join_to takes points in host memory; copy device arrays to the host "
                        "(.get() for CuPy, .cpu() for torch)")
    target = os.fspath(path)
    kind = format_of(target, format)
    if kind == "parquet":
        if boxsize is not None:
            raise ValueError("boxsize is not taken by format='parquet' (written from iter_pairs)")
        return _write_parquet(target, X, eps, Y, include_self, sort, metric, precision, n_jobs,
                              memory_limit, progress)
    if sort and kind not in ("csr", "parquet"):
        raise ValueError(f"sort applies to format='csr'; {kind} pairs are written as the join "
                         "finds them (epsjoin.iter_pairs(sort=True) gives them sorted)")
    X, Y = check_pair(X, Y)
    _check_self(include_self, Y)
    settings = run_settings(engine, precision, approximate, n_jobs, memory_limit,
                            device_memory_limit, device, params, devices_split, progress)
    set_geometry(settings, metric, boxsize, X.shape[1])
    stats: Dict[str, Any] = _run(_epsjoin.join_to_file, X, Y, check_eps(eps),
                                 bool(include_self), target, kind, bool(sort), settings)
    _progress.done(settings)
    return stats


def _write_parquet(target: str, X: Any, eps: float, Y: Any, include_self: bool, sort: bool,
                   metric: str, precision: Any, n_jobs: Optional[int], memory_limit: MemorySize,
                   progress: Progress) -> Dict[str, Any]:
    from ._stream import iter_pairs

    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError("format='parquet' needs pyarrow: pip install epsjoin[arrow]") from None
    if os.path.isdir(target):
        raise IsADirectoryError(f"{target}: is a directory; name a file for the output")
    start = time.perf_counter()
    blocks = iter_pairs(X, eps, Y, include_self=include_self, sort=sort, metric=metric,
                        precision=precision, n_jobs=n_jobs, memory_limit=memory_limit,
                        progress=progress)
    # A regular file (or a new one) is written beside its name and renamed when complete; a
    # device or FIFO is written in place.
    in_place = os.path.exists(target) and not os.path.isfile(target)
    if in_place:
        written = target
    else:
        handle, written = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".",
                                           suffix=".partial", dir=os.path.dirname(target) or ".")
        os.close(handle)
    pairs = 0
    try:
        with pq.ParquetWriter(written, blocks.arrow_schema()) as writer:
            for batch in blocks.arrow_batches():
                writer.write_batch(batch)
                pairs += batch.num_rows
        if not in_place:
            os.replace(written, target)
    except BaseException:
        if not in_place and os.path.exists(written):
            os.remove(written)
        raise
    return {"format": "parquet", "pairs": pairs, "engine": "cpu-grid",
            "seconds": time.perf_counter() - start}
