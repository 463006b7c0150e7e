"""scikit-learn's radius_neighbors_graph, computed by epsjoin."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Literal, Mapping, Optional, Tuple, Union, overload

import numpy as np
import numpy.typing as npt
import scipy.sparse

from . import _device
from ._join import HostPoints, PointsLike, RunOptions, Stats, _with_run_options, neighbor_graph
from ._metrics import metric_name
from ._validation import Devices, MemorySize, check_points, raise_if_not_finite

# scikit-learn's radius_neighbors_graph fits this estimator, whose name its refusals carry.
_ESTIMATOR = "NearestNeighbors"

if TYPE_CHECKING:
    from typing_extensions import Unpack


# Device points reach the last overload, as the joins' do (_join.py says why).
@overload
def radius_neighbors_graph(X: HostPoints, radius: float, *, mode: str = ..., metric: str = ...,
                           p: float = ..., metric_params: Optional[Mapping[str, Any]] = ...,
                           include_self: Union[bool, str] = ...,
                           return_stats: Literal[False] = ...,
                           **options: Unpack[RunOptions]) -> scipy.sparse.csr_matrix: ...
@overload
def radius_neighbors_graph(X: HostPoints, radius: float, *, mode: str = ..., metric: str = ...,
                           p: float = ..., metric_params: Optional[Mapping[str, Any]] = ...,
                           include_self: Union[bool, str] = ..., return_stats: Literal[True],
                           **options: Unpack[RunOptions]
                           ) -> Tuple[scipy.sparse.csr_matrix, Stats]: ...
@overload
def radius_neighbors_graph(X: Any, radius: float, *, mode: str = ..., metric: str = ...,
                           p: float = ..., metric_params: Optional[Mapping[str, Any]] = ...,
                           include_self: Union[bool, str] = ..., return_stats: bool = ...,
                           **options: Unpack[RunOptions]) -> Any: ...
@_with_run_options
def radius_neighbors_graph(
    X: PointsLike,
    radius: float,
    *,
    mode: str = "connectivity",
    metric: str = "minkowski",
    p: float = 2,
    metric_params: Optional[Mapping[str, Any]] = None,
    include_self: Union[bool, str] = False,
    n_jobs: Optional[int] = None,
    engine: str = "auto",
    precision: npt.DTypeLike = "float64",
    approximate: bool = False,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    devices_split: str = "auto",
    params: Optional[Mapping[str, Any]] = None,
    return_stats: bool = False,
    progress: Any = False,
) -> Any:
    """``sklearn.neighbors.radius_neighbors_graph`` by epsjoin.

    Takes scikit-learn's arguments and returns what it returns: a float64
    ``scipy.sparse.csr_matrix`` whose ``[i, j]`` is stored when
    ``||X[i] - X[j]|| <= radius``, valued 1.0 or the distance, element for element equal to
    scikit-learn's (within a row the order is unspecified, as in scikit-learn's; after
    ``sort_indices()`` on both, their arrays are equal too). Where
    scikit-learn computes distances by the expanded formula (its brute-force path, which
    ``algorithm="auto"`` takes above 15 features or below 12 samples) its values differ from
    the exact ones in the last bits (identical points about 1e-8 apart), and pairs within about
    1e-8 relative of ``radius`` may differ; epsjoin's are exact.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Sample data; at least one sample. Checked as scikit-learn checks it (2-D, finite).
        A CuPy array or CUDA tensor is joined on its device (see :func:`neighbor_graph`).
    radius : float
        Radius of neighbourhoods (inclusive).
    mode : {"connectivity", "distance"}, default="connectivity"
        1.0 for each edge, or its length.
    metric : str, default="minkowski"
        ``"minkowski"`` (with ``p``), ``"euclidean"``, ``"manhattan"``, ``"chebyshev"``,
        ``"cosine"`` or ``"haversine"`` (radians), or their aliases (docs/metrics.md).
    p : float, default=2
        Minkowski's power: 1, 2 or inf.
    metric_params : dict, default=None
        Must be empty.
    include_self : bool or "auto", default=False
        Mark each sample as its own neighbour; ``"auto"``: True for connectivity, False for
        distance.
    n_jobs : int, default=None
        CPU threads; ``None`` or ``-1`` means every core (scikit-learn's ``None`` means one).
    {engine_options}

    Returns
    -------
    A : scipy.sparse.csr_matrix of shape (n_samples, n_samples)
        (``cupyx.scipy.sparse.csr_matrix`` or a torch sparse CSR tensor for device input)
    stats : dict
        Only with ``return_stats=True``.
    """
    if metric == "minkowski":
        if p not in (1, 2, float("inf")):
            raise ValueError(f"epsjoin computes minkowski distances for p = 1, 2 and inf only, "
                             f"got p={p!r}")
        by_p: Dict[float, str] = {1: "manhattan", 2: "euclidean"}
        metric = by_p.get(p, "chebyshev")
    metric = metric_name(metric)  # ValueError for a metric epsjoin does not compute
    if metric_params:
        raise ValueError(f"metric_params are not supported, got {metric_params!r}")
    if mode not in ("connectivity", "distance"):
        raise ValueError(f"mode must be 'connectivity' or 'distance', got {mode!r}")
    if include_self == "auto":
        include_self = mode == "connectivity"
    on_device = _device.any_on_device(X)
    if on_device:  # joined on its device; the graph is a cupyx/torch one
        _, X, _ = _device.check_device_pair(X, None, min_samples=1, estimator=_ESTIMATOR)
    else:
        X = check_points(X, min_samples=1, estimator=_ESTIMATOR)
    try:
        result = neighbor_graph(
            X, radius, mode=mode, include_self=bool(include_self), sort_indices=False,
            engine=engine, precision=precision, approximate=approximate, n_jobs=n_jobs,
            memory_limit=memory_limit, device_memory_limit=device_memory_limit, device=device,
            devices_split=devices_split, params=params, return_stats=return_stats,
            metric=metric, progress=progress,
        )
    except ValueError:
        if not on_device:  # NaN gets scikit-learn's paragraph for estimators here
            raise_if_not_finite(X, None, estimator=_ESTIMATOR)
        raise
    graph = result[0] if return_stats else result
    if isinstance(graph, scipy.sparse.csr_matrix) and graph.indices.dtype != np.int64:
        # scikit-learn 1.9's index dtype (scipy had cut the indptr to the indices' int32).
        graph.indices = graph.indices.astype(np.int64)
        graph.indptr = graph.indptr.astype(np.int64)
    return result
