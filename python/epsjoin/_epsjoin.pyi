# Types of the nanobind extension (python/src/module.cpp); the public API is in _join.py.
from typing import Any, Dict, List, Optional, Tuple

import numpy as np
import numpy.typing as npt

__version__: str

class UnavailableError(RuntimeError): ...
class CudaError(RuntimeError): ...

class RunSettings:
    engine: str
    precision: str
    approximate: bool
    threads: int
    device: int
    devices: List[int]
    devices_automatic: bool
    devices_split: str
    host_memory_bytes: int
    device_memory_bytes: int
    params: Dict[str, str]
    metric: str
    angles: str
    sphere_radius: float
    box: List[float]
    share_index: int
    share_count: int
    progress: Any
    def __init__(self) -> None: ...

def neighbor_table(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]], eps: float,
    include_self: bool, sort_indices: bool, settings: RunSettings,
    added_bytes_per_pair: float = 0.0
) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], Dict[str, Any]]: ...
def pairs_from_rows(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]], eps: float,
    include_self: bool, sort: bool, settings: RunSettings, once: bool = True
) -> Tuple[npt.NDArray[np.int64], Dict[str, Any]]: ...
def neighbor_counts(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]], eps: float,
    include_self: bool, per_row: bool, settings: RunSettings
) -> Tuple[int, Optional[npt.NDArray[np.uint64]], Dict[str, Any]]: ...
def filled_ones(n: int, threads: int) -> npt.NDArray[np.float64]: ...
def nearest(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]], eps: float,
    k: int, include_self: bool, settings: RunSettings
) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], Optional[Dict[str, Any]]]: ...
def optics(
    points: npt.NDArray[np.floating], max_eps: float, min_samples: int, settings: RunSettings
) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.float64], npt.NDArray[np.float64],
           npt.NDArray[np.int64], Dict[str, Any]]: ...
def neighbor_distance_table(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]], eps: float,
    include_self: bool, sort_indices: bool, settings: RunSettings
) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], npt.NDArray[np.float64],
           Dict[str, Any]]: ...
def plan_slabs(
    points: npt.NDArray[np.floating], sample_size: int, n_points: int, eps: float, slabs: int,
    point_cost: float, settings: RunSettings
) -> Tuple[int, List[float], float, int, float]: ...
def join_to_file(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]], eps: float,
    include_self: bool, path: str, format: str, sort: bool, settings: RunSettings
) -> Dict[str, Any]: ...
# Points on a CUDA device (anything with __dlpack__ there); the results are DLPack arrays on it.
def device_neighbor_table(
    queries: Any, data: Optional[Any], eps: float, include_self: bool, sort: bool,
    distances: bool, settings: RunSettings
) -> Tuple[Any, Any, Optional[Any], Dict[str, Any]]: ...
def device_neighbor_pairs(
    queries: Any, data: Optional[Any], eps: float, include_self: bool, sort: bool,
    settings: RunSettings
) -> Tuple[Any, Dict[str, Any]]: ...
def device_neighbor_counts(
    queries: Any, data: Optional[Any], eps: float, include_self: bool, per_row: bool,
    settings: RunSettings
) -> Tuple[int, Optional[npt.NDArray[np.uint64]], Dict[str, Any]]: ...
def dbscan(
    points: npt.NDArray[np.floating], eps: float, min_samples: int, settings: RunSettings,
    weights: Optional[npt.NDArray[np.float64]] = None
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8], Dict[str, Any]]: ...
def dbscan_device(
    points: Any, eps: float, min_samples: int, settings: RunSettings,
    weights: Optional[npt.NDArray[np.float64]] = None
) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.uint8], Dict[str, Any]]: ...
def engines() -> List[Dict[str, Any]]: ...
def build_info() -> Dict[str, Any]: ...

def neighbor_counts_radii(
    queries: npt.NDArray[np.floating], data: Optional[npt.NDArray[np.floating]],
    radii: npt.NDArray[np.float64], include_self: bool, settings: RunSettings,
) -> Tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint64], Dict[str, Any]]: ...

class EpsIndex:
    max_eps: float
    n: int
    d: int
    memory_bytes: int
    def __init__(
        self, data: npt.NDArray[np.floating], max_eps: float, finer_grids: int,
        settings: RunSettings
    ) -> None: ...
    def table(
        self, queries: Optional[npt.NDArray[np.floating]], eps: float, include_self: bool,
        sort_indices: bool, added_per_pair: float, settings: RunSettings,
        with_stats: bool = True
    ) -> Tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint32], Dict[str, Any]]: ...
    def counts(
        self, queries: Optional[npt.NDArray[np.floating]], eps: float, include_self: bool,
        per_row: bool, settings: RunSettings, with_stats: bool = True
    ) -> Tuple[int, Optional[npt.NDArray[np.uint64]], Dict[str, Any]]: ...
    def nearest(
        self, queries: Optional[npt.NDArray[np.floating]], eps: float, k: int,
        include_self: bool, data: npt.NDArray[np.floating], settings: RunSettings,
        with_stats: bool = True
    ) -> Tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], Optional[Dict[str, Any]]]: ...
