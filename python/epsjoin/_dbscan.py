"""DBSCAN clustering with scikit-learn's estimator interface, on the library's two joins."""

from __future__ import annotations

import inspect
import numbers
from typing import Any, Dict, List, Mapping, Optional, overload

import numpy as np
import numpy.typing as npt

from . import _device, _epsjoin
from ._join import HostPoints, PointsLike
from ._validation import MemorySize, check_points, raise_if_not_finite, run_settings


def _check_parameters(eps: Any, min_samples: Any) -> None:
    # scikit-learn's words; its InvalidParameterError is a ValueError, so is this.
    real = isinstance(eps, numbers.Real) and not isinstance(eps, bool)
    if not real or not 0 < eps < float("inf"):
        raise ValueError(
            "The 'eps' parameter of DBSCAN must be a float in the range (0.0, inf). "
            f"Got {eps!r} instead."
        )
    integral = isinstance(min_samples, numbers.Integral) and not isinstance(min_samples, bool)
    if not integral or min_samples < 1:
        raise ValueError(
            "The 'min_samples' parameter of DBSCAN must be an int in the range [1, inf). "
            f"Got {min_samples!r} instead."
        )


class DBSCAN:
    """Density-based clustering (DBSCAN) of Euclidean points, computed by epsjoin.

    A drop-in for ``sklearn.cluster.DBSCAN`` with the Euclidean metric: the same parameters
    ``eps`` and ``min_samples``, the same ``fit``/``fit_predict`` and the same fitted
    attributes. A point is a core sample when at least ``min_samples`` points, itself included,
    lie within ``eps`` (inclusive: ``distance <= eps``); core samples within ``eps`` of each
    other share a cluster; a non-core point with a core sample within ``eps`` is a border point
    of that cluster; other points are noise (label ``-1``).

    Unlike scikit-learn, no neighbourhood is ever stored: two joins (a count, then a merge into
    a concurrent union-find) run in memory linear in the number of points beyond the join's own
    index; cpu-grid in one to three dimensions (``"auto"`` on the CPU) runs no join but
    clusters on its own cells of side ``eps / sqrt(d)``. The core samples, the noise and the clusters as sets of core samples are the same
    as scikit-learn's. A border point within ``eps`` of core samples of two clusters joins the
    cluster of its core neighbour of smallest index, the same on every engine and every run
    (scikit-learn's choice depends on its search order). Clusters are numbered ``0, 1, ...`` in
    the order of their first point in ``X``.

    Parameters
    ----------
    eps : float, default=0.5
        The neighbourhood radius (never its square); finite and > 0.
    min_samples : int, default=5
        Points within ``eps`` (the point itself included) that make a core sample; at least 1.
    engine : str, default="auto"
        An engine name from :func:`epsjoin.engines` or ``"auto"``; both joins run on it. A GPU
        engine raises :class:`epsjoin.UnavailableError` where there is no GPU or no CUDA build.
    precision : {"float64", "float32"}, default="float64"
        Arithmetic of the distance computation (``X`` may be either dtype).
    n_jobs : int, default=None
        CPU threads; ``None`` or ``-1`` means every core (unlike scikit-learn, where ``None``
        means one).
    memory_limit, device_memory_limit : int or str, default=None
        Host and GPU memory the joins plan within, in bytes or as ``"8G"``, ``"512M"``;
        ``None`` means what the machine allows. Too little raises ``MemoryError``.
    device : int, default=0
        CUDA device ordinal for GPU engines. A CuPy array or CUDA tensor is clustered on its
        own device, with a GPU engine that merges there (``"auto"``, lbjoin, gds-join,
        ted-join, meta-16q, meta-1q); the points never leave it.
    params : dict, default=None
        Engine parameters (see :func:`epsjoin.engines`); an unknown key raises ``ValueError``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,), dtype int64
        Cluster of each point, ``-1`` for noise. For device input (CuPy, torch) these three
        attributes are arrays of the same kind on the same device, as cuML returns them.
    core_sample_indices_ : ndarray of shape (n_core_samples,), dtype int64
        Indices of the core samples, ascending.
    components_ : ndarray of shape (n_core_samples, n_features)
        A copy of each core sample (``X`` as used: float32 stays float32, other dtypes become
        float64).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Only when ``X`` has string column names (a pandas DataFrame).
    stats_ : dict
        The run: ``engine``, ``merge`` (``"device"`` where the GPU engine merged on the GPU,
        ``"cells"`` where cpu-grid clustered on its cells, else ``"host"``), ``n_clusters``,
        ``n_core``, ``n_border``, ``n_noise``, ``pairs`` (ordered neighbour pairs ``i != j``;
        0 for ``"cells"``, whose counts stop at ``min_samples``), ``stages`` (seconds of ``count``, ``merge``,
        ``label``), ``seconds``, ``notes`` (the engine's notes as strings; for the device merge
        ``h2d_point_bytes``, 0 for points already on the device) and the inputs ``n``, ``d``,
        ``eps``, ``min_samples``, ``precision``.

    Examples
    --------
    >>> import numpy as np, epsjoin
    >>> X = np.array([[1, 2], [2, 2], [2, 3], [8, 7], [8, 8], [25, 80]])
    >>> clustering = epsjoin.DBSCAN(eps=3, min_samples=2).fit(X)
    >>> clustering.labels_
    array([ 0,  0,  0,  1,  1, -1])
    """

    def __init__(
        self,
        eps: float = 0.5,
        min_samples: int = 5,
        *,
        engine: str = "auto",
        precision: npt.DTypeLike = "float64",
        n_jobs: Optional[int] = None,
        memory_limit: MemorySize = None,
        device_memory_limit: MemorySize = None,
        device: int = 0,
        params: Optional[Mapping[str, Any]] = None,
    ) -> None:
        # Stored as given and checked in fit, as scikit-learn's estimators do (clone and
        # set_params rely on it).
        self.eps = eps
        self.min_samples = min_samples
        self.engine = engine
        self.precision = precision
        self.n_jobs = n_jobs
        self.memory_limit = memory_limit
        self.device_memory_limit = device_memory_limit
        self.device = device
        self.params = params

    def fit(self, X: PointsLike, y: Any = None, sample_weight: Any = None) -> "DBSCAN":
        """Cluster `X`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Points; at least one, finite. float32 and float64 C-contiguous arrays are used where
            they lie; other dtypes are converted once, to float64.
        y : Ignored
            Not used, present for API consistency.
        sample_weight : None
            Weighted samples are not supported; anything but ``None`` raises
            ``NotImplementedError``.

        Returns
        -------
        self : DBSCAN
            The fitted estimator.
        """
        if sample_weight is not None:
            raise NotImplementedError(
                "epsjoin.DBSCAN does not support sample_weight; use sklearn.cluster.DBSCAN "
                "for weighted samples"
            )
        _check_parameters(self.eps, self.min_samples)
        if _device.any_on_device(X):
            return self._fit_on_device(X)
        columns = getattr(X, "columns", None)
        points = check_points(X, min_samples=1, estimator="DBSCAN")  # scikit-learn's words
        settings = run_settings(self.engine, self.precision, False, self.n_jobs, self.memory_limit,
                                self.device_memory_limit, self.device, self.params)
        try:
            labels, core, stats = _epsjoin.dbscan(points, float(self.eps), int(self.min_samples),
                                                  settings)
        except ValueError:
            raise_if_not_finite(points, None, estimator="DBSCAN")  # scikit-learn's words
            raise
        self.labels_ = labels.view(np.int64)  # numpy's own int64 type, not C's long long
        self.core_sample_indices_ = np.flatnonzero(core).astype(np.int64, copy=False)
        self.components_ = points[self.core_sample_indices_]  # fancy indexing copies
        self.n_features_in_ = points.shape[1]
        if columns is not None and len(columns) and all(isinstance(c, str) for c in columns):
            self.feature_names_in_ = np.asarray(columns, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.stats_ = stats
        return self

    def _fit_on_device(self, X: Any) -> "DBSCAN":
        b, A, _ = _device.check_device_pair(X, None, min_samples=1, estimator="DBSCAN")
        settings = run_settings(self.engine, self.precision, False, self.n_jobs, self.memory_limit,
                                self.device_memory_limit, self.device, self.params)
        labels, core, stats = _epsjoin.dbscan_device(A, float(self.eps), int(self.min_samples),
                                                     _device.settings_on(settings, b, A))
        self.labels_ = b.upload(labels.view(np.int64), A)
        self.core_sample_indices_ = b.upload(np.flatnonzero(core).astype(np.int64), A)
        self.components_ = A[self.core_sample_indices_]
        self.n_features_in_ = int(A.shape[1])
        if hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        self.stats_ = stats
        return self

    # Labels of device points are on their device (CuPy, torch), as the joins' results are: the
    # last overload takes and returns Any for them (_join.py says why).
    @overload
    def fit_predict(self, X: HostPoints, y: Any = ...,
                    sample_weight: Any = ...) -> npt.NDArray[np.int64]: ...
    @overload
    def fit_predict(self, X: Any, y: Any = ..., sample_weight: Any = ...) -> Any: ...
    def fit_predict(self, X: PointsLike, y: Any = None, sample_weight: Any = None) -> Any:
        """Cluster `X` and return the labels (see :meth:`fit`).

        Returns
        -------
        labels : ndarray of shape (n_samples,), dtype int64
            Cluster of each point, ``-1`` for noise.
        """
        return self.fit(X, sample_weight=sample_weight).labels_

    # scikit-learn's parameter protocol, without importing scikit-learn: clone(), Pipeline
    # and GridSearchCV need no more.
    @classmethod
    def _get_param_names(cls) -> List[str]:
        signature = inspect.signature(cls.__init__)
        return sorted(name for name in signature.parameters if name != "self")

    def get_params(self, deep: bool = True) -> Dict[str, Any]:
        """The constructor's parameters as a dict (``deep`` is accepted and has no effect:
        no parameter is an estimator)."""
        return {name: getattr(self, name) for name in self._get_param_names()}

    def set_params(self, **params: Any) -> "DBSCAN":
        """Set constructor parameters by name; an unknown name raises ``ValueError``."""
        valid = self._get_param_names()
        for name, value in params.items():
            if name not in valid:
                raise ValueError(
                    f"Invalid parameter {name!r} for estimator {self!r}. "
                    f"Valid parameters are: {valid!r}."
                )
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        signature = inspect.signature(type(self).__init__)
        defaults = {name: p.default for name, p in signature.parameters.items()}
        changed = [f"{name}={value!r}" for name, value in self.get_params().items()
                   if value is not defaults.get(name) and value != defaults.get(name)]
        return f"{type(self).__name__}({', '.join(changed)})"
