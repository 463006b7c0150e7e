"""The keyword options every join documents: one text, placed into each join's docstring."""

from __future__ import annotations

from typing import Any, Callable, List, Sequence, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

_RUN_OPTIONS_DOC = """\
    engine : str, default="auto"
        An engine name from :func:`epsjoin.engines` (``"cpu-grid"``, ``"super-ego"``,
        ``"lbjoin"``, ...) or ``"auto"``. A GPU engine raises :class:`epsjoin.UnavailableError`
        on a machine without a GPU or in a build without CUDA.
    precision : {"float64", "float32"}, default="float64"
        Arithmetic of the distance computation (the input may be either dtype); engines that
        cannot compute in float32 compute in float64.
    approximate : bool, default=False
        Let the tensor-core engines skip their exactness re-check (the papers' behaviour).
    n_jobs : int, default=None
        CPU threads; ``None`` or ``-1`` means every core (unlike scikit-learn, where ``None``
        means one). ``pairs`` adds one thread that asks the kernel for the result's fresh pages
        ahead of the join's writes (no computing of its own).
    memory_limit, device_memory_limit : int or str, default=None
        Host and GPU memory the join plans within, in bytes or as ``"8G"``, ``"512M"``;
        ``None`` means what the machine (and its cgroup) allows. A result held in memory that
        would not fit raises ``MemoryError`` before it is allocated.
    device : int, list of int, "all" or "auto", default="auto"
        CUDA device ordinal for GPU engines; several (``[0, 1]``, or ``"all"`` visible) spread
        a join of host arrays over them with the one-device result: counts of high-dimensional
        points share the work items, other joins cut one slab of the points a device
        (docs/multi-gpu.md). ``"auto"``: every visible device for a count of at least 1M
        points that a GPU is modelled to take a second or more, device 0 otherwise. Arrays
        already on a device are joined there.
    devices_split : {"auto", "items", "slabs"}, default="auto"
        How several devices divide a join (the CLI's ``--devices-split``): ``"items"`` (counts
        on the row-join engines: every device holds all the points and counts a share of the
        work items; anything else raises ``ValueError``), ``"slabs"`` (one slab of the points a
        device with the points within eps of it), ``"auto"`` (items for a total count; for
        counts per row where slabs would overlap by more than a fifth of the points).
    params : dict, default=None
        Engine parameters (``epsjoin engines()[i]["params"]``), for example
        ``{"pattern": "lid-unicomp"}``; an unknown key raises ``ValueError``.
    metric : str, default="euclidean"
        ``"euclidean"``, ``"manhattan"`` (``"l1"``, ``"cityblock"``), ``"chebyshev"``
        (``"linf"``), ``"cosine"`` (eps a cosine distance ``1 - cos``; no zero rows) or
        ``"haversine"`` (rows of latitude, longitude in radians; eps in radians), as
        scikit-learn names them (docs/metrics.md).
    boxsize : float or array-like of shape (n_features,), default=None
        A periodic box, as scipy's ``cKDTree(boxsize=...)``: coordinates in ``[0, boxsize)``,
        distances by the minimum image, eps at most half the smallest side.
    progress : bool or callable, default=False
        Report progress over the index, count and fill passes and the writing of the result:
        ``True`` shows a tqdm bar when tqdm is installed (``pip install epsjoin[progress]``),
        else a percentage on stderr; a callable is called with the fraction done (0 to 1, never
        going back) now and then from the calling thread. An exception it raises stops the
        join, as Ctrl-C does.
    return_stats : bool, default=False
        Also return the run's statistics: a dict with ``engine``, ``pairs`` (ordered pairs
        i != j), ``seconds`` (the join's wall time), ``stages`` (seconds per stage),
        ``candidates``, ``threads`` and the names of the CLI's ``--json``."""


def _options_doc(skip: Sequence[str]) -> str:
    """_RUN_OPTIONS_DOC without the entries named in `skip` (those a function documents itself,
    with its own defaults)."""
    entries: List[List[str]] = []
    for line in _RUN_OPTIONS_DOC.split("\n"):
        if not line.startswith("        "):
            entries.append([])
        entries[-1].append(line)
    kept = [e for e in entries if e[0].split(" :")[0].strip() not in skip]
    return "\n".join(line for e in kept for line in e)


def _with_run_options(func: F) -> F:
    doc = (func.__doc__ or "").replace("    {run_options}", _RUN_OPTIONS_DOC)
    # scikit-learn's signatures document n_jobs and metric themselves and take no boxsize.
    func.__doc__ = doc.replace("    {engine_options}",
                               _options_doc(("n_jobs", "metric", "boxsize")))
    return func
