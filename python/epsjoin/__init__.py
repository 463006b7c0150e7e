"""epsjoin: every pair of points within distance eps, on CPU cores and NVIDIA GPUs.

The Python front end of the epsjoin C++/CUDA library (the same engines as the ``epsjoin``
program). Functions:

- :func:`neighbor_graph`: the eps-graph as a ``scipy.sparse.csr_matrix`` (connectivity or
  distances), self-join or X against Y.
- :func:`radius_neighbors_graph`: scikit-learn's function of that name, same arguments and
  result.
- :func:`pairs`: unique pairs ``i < j`` as an (m, 2) array, like
  ``cKDTree.query_pairs(output_type="ndarray")``.
- :func:`count`: the number of pairs, or of each point's neighbours.
- :func:`neighbor_table`: the library's CSR arrays themselves, without a copy.
- :class:`DBSCAN`: scikit-learn's DBSCAN estimator (``fit``, ``labels_``, ...) on two joins,
  without storing any neighbourhood; :func:`dbscan`, scikit-learn's function of that name.
- :class:`OPTICS`: scikit-learn's OPTICS estimator on one join and the library's ordering.
- :class:`RadiusNeighbors`, :class:`RadiusNeighborsTransformer`: scikit-learn's
  ``NearestNeighbors`` radius queries and ``RadiusNeighborsTransformer``.
- :class:`EpsIndex`: the points' grid built once at a largest eps and queried many times, at
  any eps up to it (scipy's ``cKDTree`` style: ``query_ball_point``, ``count``,
  ``neighbor_graph``).
- :func:`engines`, :func:`build_info`: what this build has.

Every join takes the radius ``eps`` (never its square; within means ``distance <= eps``) and
the options ``engine``, ``precision``, ``n_jobs``, ``memory_limit``, ``device``, ``params`` and
``return_stats``. The GIL is released while the library works, and Ctrl-C stops a join.
"""

from typing import TYPE_CHECKING, Any, List

from ._epsjoin import CudaError, UnavailableError
from ._epsjoin import __version__ as __version__
from ._index import EpsIndex
from ._join import build_info, engines, neighbor_graph, neighbor_table, pairs
from ._radii import count, count_radii
from ._sklearn import radius_neighbors_graph
from ._files import join_to
from ._partition import SlabPlan, plan_slabs
from ._stream import PairBlocks, iter_pairs

if TYPE_CHECKING:
    from ._dbscan import DBSCAN, dbscan
    from ._neighbors import RadiusNeighbors, RadiusNeighborsTransformer
    from ._optics import OPTICS

# The estimators' module imports scikit-learn's base classes where it is installed, which costs
# more than the rest of the package: loaded on first use, so `import epsjoin` does not pay it.
_ESTIMATORS = {"DBSCAN": "_dbscan", "dbscan": "_dbscan", "OPTICS": "_optics",
               "RadiusNeighbors": "_neighbors",
               "RadiusNeighborsTransformer": "_neighbors"}


def __getattr__(name: str) -> Any:
    if name not in _ESTIMATORS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module("." + _ESTIMATORS[name], __name__), name)


def __dir__() -> List[str]:
    return sorted([*globals(), *_ESTIMATORS])


__all__ = [
    "CudaError",
    "DBSCAN",
    "EpsIndex",
    "OPTICS",
    "PairBlocks",
    "UnavailableError",
    "build_info",
    "count",
    "count_radii",
    "dbscan",
    "engines",
    "iter_pairs",
    "join_to",
    "neighbor_graph",
    "neighbor_table",
    "pairs",
    "plan_slabs",
    "RadiusNeighbors",
    "RadiusNeighborsTransformer",
    "SlabPlan",
    "radius_neighbors_graph",
]
