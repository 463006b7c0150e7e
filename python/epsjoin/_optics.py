"""OPTICS with scikit-learn's estimator interface, on the library's ordering (issue 48)."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, Mapping, Optional, Union

import numpy as np
import numpy.typing as npt

from . import _epsjoin, _optics_extract, _progress
from ._estimator import (HAVE_SKLEARN, BaseEstimator, ClusterMixin, check_search_parameters,
                         is_sparse, library_metric, validated)
from ._progress import Progress
from ._validation import MemorySize, raise_if_not_finite, run_settings

_METHODS = ("xi", "dbscan")


class OPTICS(ClusterMixin, BaseEstimator):
    """OPTICS clustering (Ordering Points To Identify the Clustering Structure), computed by
    epsjoin: a drop-in for ``sklearn.cluster.OPTICS``, the same parameters, fitted attributes
    and clusters.

    One self-join at ``max_eps`` gives every point's neighbours (a table of 4 bytes a pair in
    host memory, within ``memory_limit``); each row's distances give its core distance; then
    the points are ordered by a priority queue of reachabilities in the library, not the
    O(n^2) scan scikit-learn runs. The order is scikit-learn's: the next point is the
    unprocessed one of smallest reachability, equal reachabilities by smallest index, a new
    start the unprocessed point of smallest index. Distances are exact; scikit-learn rounds its
    own to 15 decimals, so ``reachability_`` agrees to about 1e-15 and ``ordering_`` is the
    same on data without such near-ties.

    Parameters
    ----------
    min_samples : int > 1 or float in (0, 1], default=5
        Points within the neighbourhood, the point itself included, that make it a core point;
        a float is a fraction of the samples (at least 2).
    max_eps : float, default=inf
        The largest radius considered (inclusive). ``inf`` joins every pair (a table of n^2
        entries): a finite ``max_eps`` is what makes OPTICS scale.
    metric : str, default="minkowski"
        As :class:`epsjoin.DBSCAN` takes it (``"minkowski"`` with ``p`` 1, 2 or inf,
        ``"euclidean"``, ``"manhattan"``, ``"chebyshev"``, ``"cosine"``, ``"haversine"`` and
        their aliases); ``"precomputed"`` and callables raise ``ValueError``.
    p : float, default=2
        Minkowski's power: 1, 2 or inf.
    metric_params : dict, default=None
        Only ``{"p": ...}``.
    cluster_method : {"xi", "dbscan"}, default="xi"
        How the clusters are read off the reachability plot (scikit-learn's
        ``cluster_optics_xi`` or ``cluster_optics_dbscan``, with the same results).
    eps : float, default=None
        ``"dbscan"``'s radius, at most ``max_eps`` (``None``: ``max_eps``).
    xi : float in (0, 1), default=0.05
        ``"xi"``'s minimum steepness.
    predecessor_correction : bool, default=True
        ``"xi"``'s correction of cluster ends by the predecessors.
    min_cluster_size : int > 1 or float in (0, 1], default=None
        ``"xi"``'s smallest cluster (``None``: ``min_samples``).
    algorithm, leaf_size, memory
        Accepted for scikit-learn's sake (``algorithm`` and ``leaf_size`` checked as it checks
        them); they change nothing: the engine decides how to search.
    n_jobs : int, default=None
        CPU threads of the join; ``None`` or ``-1`` means every core.
    engine, precision, memory_limit, params, progress
        The join's options, as :class:`epsjoin.DBSCAN` takes them.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), dtype int64
        Cluster of each point, -1 for noise.
    reachability_ : ndarray of shape (n_samples,)
        Reachability distance of each point, by index; ``inf`` for each start.
    ordering_ : ndarray of shape (n_samples,), dtype int64
        The points in OPTICS order.
    core_distances_ : ndarray of shape (n_samples,)
        Distance of each point's ``min_samples``-th nearest point (itself the first), ``inf``
        beyond ``max_eps``.
    predecessor_ : ndarray of shape (n_samples,), dtype int64
        The point each was reached from, -1 for none.
    cluster_hierarchy_ : ndarray of shape (n_clusters, 2)
        ``"xi"`` only: each cluster's first and last position in ``ordering_``.
    n_features_in_, feature_names_in_
        As scikit-learn's estimators set them.
    stats_ : dict
        The run: ``engine``, ``pairs`` (ordered pairs within ``max_eps``), ``stages``
        (seconds of ``join``, ``core``, ``order``), ``seconds``, ``max_eps`` (the radius
        joined: for ``max_eps=inf``, one holding every pair).
    """

    def __init__(
        self,
        *,
        min_samples: Union[int, float] = 5,
        max_eps: float = np.inf,
        metric: str = "minkowski",
        p: float = 2,
        metric_params: Optional[Mapping[str, Any]] = None,
        cluster_method: str = "xi",
        eps: Optional[float] = None,
        xi: float = 0.05,
        predecessor_correction: bool = True,
        min_cluster_size: Optional[Union[int, float]] = None,
        algorithm: str = "auto",
        leaf_size: int = 30,
        memory: Any = None,
        n_jobs: Optional[int] = None,
        engine: str = "auto",
        precision: npt.DTypeLike = "float64",
        memory_limit: MemorySize = None,
        params: Optional[Mapping[str, Any]] = None,
        progress: Progress = False,
    ) -> None:
        self.min_samples = min_samples
        self.max_eps = max_eps
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.cluster_method = cluster_method
        self.eps = eps
        self.xi = xi
        self.predecessor_correction = predecessor_correction
        self.min_cluster_size = min_cluster_size
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.memory = memory
        self.n_jobs = n_jobs
        self.engine = engine
        self.precision = precision
        self.memory_limit = memory_limit
        self.params = params
        self.progress = progress

    def fit(self, X: Any, y: Any = None) -> "OPTICS":
        """Order `X` (array-like or sparse matrix of shape (n_samples, n_features); a sparse
        matrix is made dense) and extract its clusters; returns the estimator."""
        check_search_parameters(self)
        if self.cluster_method not in _METHODS:
            raise ValueError(f"The 'cluster_method' parameter of OPTICS must be a str among "
                             f"{set(_METHODS)}. Got {self.cluster_method!r} instead.")
        metric = library_metric(self.metric, self.p, self.metric_params)
        X = validated(self, X, reset=True, sparse=True)
        points = X.toarray() if is_sparse(X) else X
        n = points.shape[0]
        if n < 2:  # scikit-learn's check and words
            raise ValueError(f"Found array with {n} sample(s) (shape={points.shape}) while a "
                             "minimum of 2 is required by OPTICS.")
        min_samples = _optics_extract._sample_count(self.min_samples, "min_samples", n, "OPTICS")
        max_eps = _max_eps(self.max_eps)
        radius = max_eps if math.isfinite(max_eps) else _covering_radius(points, metric)
        settings = run_settings(self.engine, self.precision, False, self.n_jobs,
                                self.memory_limit, params=self.params, progress=self.progress)
        settings.metric = metric
        ordering, reach, core, pred, stats = self._ordered(points, radius, min_samples, settings)
        self.ordering_ = ordering.astype(np.int64)
        self.reachability_ = reach
        self.core_distances_ = core
        self.predecessor_ = pred
        stats["max_eps"] = radius
        self.stats_ = stats
        if np.all(np.isinf(reach)):
            warnings.warn("All reachability values are inf. Set a larger max_eps or all data "
                          "will be considered outliers.", UserWarning, stacklevel=2)
        self._extract(max_eps)
        return self

    def _ordered(self, points: np.ndarray, radius: float, min_samples: int, settings: Any) -> Any:
        try:
            result = _epsjoin.optics(points, radius, min_samples, settings)
        except ValueError:
            raise_if_not_finite(points, None, estimator="OPTICS")  # scikit-learn's words
            raise
        except MemoryError as e:
            raise MemoryError(f"{e} (OPTICS keeps every pair within max_eps: a smaller max_eps "
                              "needs less)") from e
        _progress.done(settings)
        return result

    def _extract(self, max_eps: float) -> None:
        if self.cluster_method == "xi":
            self.labels_, self.cluster_hierarchy_ = _optics_extract.xi_clusters(
                self.reachability_, self.predecessor_, self.ordering_, self.min_samples,
                self.min_cluster_size, self.xi, self.predecessor_correction)
            return
        eps = max_eps if self.eps is None else self.eps
        if eps > max_eps:
            raise ValueError(f"Specify an epsilon smaller than {max_eps}. Got {eps}.")
        self.labels_ = _optics_extract.dbscan_labels(self.reachability_, self.core_distances_,
                                                     self.ordering_, eps)


    if HAVE_SKLEARN:
        def __sklearn_tags__(self) -> Any:
            tags = super().__sklearn_tags__()  # type: ignore[misc]
            tags.input_tags.sparse = True
            return tags


def _max_eps(value: Any) -> float:
    real = isinstance(value, numbers.Real) and not isinstance(value, bool)
    if not real or not value >= 0 or math.isnan(value):
        raise ValueError("The 'max_eps' parameter of OPTICS must be a float in the range "
                         f"[0.0, inf]. Got {value!r} instead.")
    if value == 0:
        raise ValueError("max_eps must be > 0 for epsjoin's OPTICS (at 0 no point reaches "
                         "another), got 0")
    return float(value)


def _covering_radius(points: np.ndarray, metric: str) -> float:
    """A radius holding every pair of `points` in `metric` (max_eps=inf), with a margin far
    beyond any rounding of the distances."""
    if metric == "cosine":
        return 2.0
    if metric == "haversine":
        return math.pi
    extent = (points.max(axis=0) - points.min(axis=0)).astype(np.float64) if len(points) else 0
    span = {"manhattan": float(np.sum(extent)), "chebyshev": float(np.max(extent, initial=0))}
    wide = span.get(metric, float(np.sqrt(np.sum(np.square(extent)))))
    return wide * (1 + 1e-9) + 1e-300 if wide > 0 else 1.0
