"""Argument checks and conversions shared by every function, in scikit-learn's words."""

from __future__ import annotations

import math
import numbers
import operator
import re
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

import numpy as np

from . import _epsjoin, _progress

MemorySize = Union[int, str, None]
# A CUDA ordinal, several (one join spread over them), or "all".
Devices = Union[int, Sequence[int], str]

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _is_device_array(X: Any) -> bool:
    if hasattr(X, "__cuda_array_interface__"):
        return True
    device = getattr(X, "__dlpack_device__", None)
    if device is None or isinstance(X, np.ndarray):
        return False
    try:
        kind, _ = device()
    except Exception:  # an object whose __dlpack_device__ fails is no device array we know
        return False
    return int(kind) not in (1, 3)  # kDLCPU, kDLCUDAHost: host memory


_RESHAPE = ("Reshape your data either using array.reshape(-1, 1) if your data has a single "
            "feature or array.reshape(1, -1) if it contains a single sample.")


def _by(estimator: Optional[str]) -> str:
    return f" by {estimator}" if estimator else ""


def _objects_as_floats(array: np.ndarray) -> np.ndarray:
    try:
        return array.astype(np.float64)
    except TypeError:
        # pandas' NA, which float() refuses, is a missing value: scikit-learn's NaN.
        is_na = np.frompyfunc(lambda v: type(v).__name__ == "NAType", 1, 1)(array).astype(bool)
        if not is_na.any():
            raise
        return np.where(is_na, np.nan, array).astype(np.float64)


def check_points(
    X: Any, name: str = "X", *, min_samples: int = 0, estimator: Optional[str] = None
) -> np.ndarray:
    """X as a C-contiguous float32 or float64 (n, d) array; no copy when it already is one.

    Refusals are ``sklearn.utils.check_array(X, input_name=name, estimator=estimator)``'s,
    word for word and in its order (complex, scalar, 1-D, strings, n-D, non-finite, samples,
    features), so that whichever check fails first reports as scikit-learn would."""
    if _is_device_array(X):
        raise TypeError(
            f"{name} is an array on a GPU; this function takes host arrays only (the joins and "
            "DBSCAN take device arrays). Copy it to the host first "
            "(cupy.asnumpy(X), X.cpu().numpy())."
        )
    if hasattr(X, "tocsr") and hasattr(X, "nnz"):
        raise TypeError(
            f"Sparse data was passed for {name}, but dense data is required. "
            "Use '.toarray()' to convert to a dense numpy array."
        )
    array = np.asarray(X)
    if array.dtype.kind == "O":
        # scikit-learn converts objects before any other check (None becomes NaN), and lets
        # numpy's own errors out.
        array = _objects_as_floats(array)
    raise_if_bad_form(array.dtype, array.ndim, estimator, lambda: array)
    if array.dtype not in (np.float32, np.float64) or not array.dtype.isnative:
        if array.dtype.kind == "f":
            # float16, big-endian, long double: scikit-learn names the dtype given, which the
            # copy below loses; the copy reads every value anyway.
            _raise_if_not_finite(array, name, estimator)
        if array.dtype not in (np.float32, np.float64):
            # Integers, booleans, float16, long double: converted once, to float64 (exact for
            # ints below 2**53).
            array = np.ascontiguousarray(array, dtype=np.float64)
        else:
            array = np.ascontiguousarray(array.astype(array.dtype.newbyteorder("=")))
    else:
        array = np.ascontiguousarray(array)
    raise_if_too_few(array.shape, min_samples, estimator)
    return array


def check_pair(
    X: Any, Y: Any, *, min_samples: int = 0
) -> Tuple[np.ndarray, Optional[np.ndarray]]:
    """Both point sets checked; A x B needs one dtype, so float32 meets float64 as float64."""
    X = check_points(X, "X", min_samples=min_samples)
    if Y is None:
        return X, None
    Y = check_points(Y, "Y", min_samples=min_samples)
    if X.shape[1] != Y.shape[1]:
        raise ValueError(features_disagree(X.shape[1], Y.shape[1]))
    if X.dtype != Y.dtype:
        # Checked before the float32 one's copy loses the dtype scikit-learn's message names;
        # X first, as scikit-learn checks it.
        raise_if_not_finite(X, Y)
        X, Y = np.asarray(X, dtype=np.float64), np.asarray(Y, dtype=np.float64)
    return X, Y


def raise_if_bad_form(dtype: np.dtype, ndim: int, estimator: Optional[str],
                      host: Callable[[], np.ndarray]) -> None:
    """check_array's refusals that precede its finiteness check, in its order (complex, scalar,
    1-D, strings, n-D). ``host()`` is called only to print the array, so that a device array is
    copied over only when it is refused."""
    if dtype.kind == "c":
        raise ValueError(f"Complex data not supported\n{host()}\n")
    # scikit-learn prints the array with str(), numpy's abbreviated form, not repr().
    if ndim < 2:
        kind = "scalar" if ndim == 0 else "1D"
        raise ValueError(f"Expected 2D array, got {kind} array instead:\narray={host()}.\n"
                         + _RESHAPE)
    if dtype.kind in "USV":
        raise ValueError(
            "dtype='numeric' is not compatible with arrays of bytes/strings."
            "Convert your data to numeric values explicitly instead."
        )
    if ndim > 2:
        raise ValueError(
            f"Found array with dim {ndim}, while dim <= 2 is required{_by(estimator)}."
        )


def raise_if_too_few(shape: Tuple[int, ...], min_samples: int, estimator: Optional[str]) -> None:
    """check_array's last refusals: too few samples, then no feature, for a 2-D shape."""
    if shape[0] < min_samples:
        raise ValueError(
            f"Found array with {shape[0]} sample(s) (shape={shape}) while a "
            f"minimum of {min_samples} is required{_by(estimator)}."
        )
    if shape[1] < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is "
            f"required{_by(estimator)}."
        )


def features_disagree(x_features: int, y_features: int) -> str:
    return f"X has {x_features} features, but Y has {y_features} features; they must agree."


def raise_if_not_finite_by(any_nan: Callable[[], bool], all_finite: Callable[[], bool],
                           dtype: np.dtype, name: str, estimator: Optional[str]) -> None:
    """scikit-learn's NaN or infinity message, ``dtype`` being the one the caller was given.
    The tests are callables so that a device array is reduced where it lies, and the second
    pass runs only when the first finds nothing."""
    # NaN first: scikit-learn reports NaN wherever the array also holds an infinity.
    if any_nan():
        message = f"Input {name} contains NaN."
        if estimator and name == "X":  # the paragraph scikit-learn adds for estimators
            message += (
                f"\n{estimator} does not accept missing values encoded as NaN natively. For "
                "supervised learning, you might want to consider "
                "sklearn.ensemble.HistGradientBoostingClassifier and Regressor which accept "
                "missing values encoded as NaNs natively. Alternatively, it is possible to "
                "preprocess the data, for instance by using an imputer transformer in a "
                "pipeline or drop samples with missing values. See "
                "https://scikit-learn.org/stable/modules/impute.html You can find a list of "
                "all estimators that handle NaN values at the following page: "
                "https://scikit-learn.org/stable/modules/impute.html"
                "#estimators-that-handle-nan-values"
            )
        raise ValueError(message)
    if not all_finite():
        raise ValueError(f"Input {name} contains infinity or a value too large for {dtype!r}.")


def _raise_if_not_finite(array: np.ndarray, name: str, estimator: Optional[str]) -> None:
    raise_if_not_finite_by(lambda: bool(np.isnan(array).any()),
                           lambda: bool(np.isfinite(array).all()), array.dtype, name, estimator)


def raise_if_not_finite(
    X: np.ndarray, Y: Optional[np.ndarray], *, estimator: Optional[str] = None
) -> None:
    """scikit-learn's message for NaN or infinity; called only once the core has refused, so
    that arrays used in place are not read an extra time."""
    _raise_if_not_finite(X, "X", estimator)
    if Y is not None:
        _raise_if_not_finite(Y, "Y", estimator)


def check_eps(eps: Any, name: str = "eps", *, positive: bool = False) -> float:
    """eps as a float: 0 (exact duplicates) and inf (every pair) included unless `positive`.
    A 0-d array is a number, as numpy and scikit-learn take it."""
    if isinstance(eps, np.ndarray) and eps.ndim == 0:
        eps = eps[()]
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(eps).__name__}")
    value = float(eps) + 0.0  # -0.0 is 0.0
    if positive and not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {eps!r}")
    if math.isnan(value) or value < 0:
        raise ValueError(f"{name} must be a number >= 0 (0 finds exact duplicates, inf every "
                         f"pair), got {eps!r}")
    return value


def memory_bytes(limit: MemorySize, name: str) -> int:
    """Bytes from an int or a size such as '8G' or '512M' (binary units, as the CLI's)."""
    if limit is None:
        return 0
    if isinstance(limit, numbers.Integral) and not isinstance(limit, bool):
        if limit <= 0:
            raise ValueError(f"{name} must be > 0 bytes, got {limit}")
        return int(limit)
    if isinstance(limit, str):
        match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)I?B?\s*", limit.upper())
        if match and float(match.group(1)) > 0:
            return int(float(match.group(1)) * _UNITS[match.group(2)])
    raise ValueError(f"{name} must be a number of bytes or a size such as '8G', got {limit!r}")


_PRECISIONS = {"f64": "f64", "float64": "f64", "f32": "f32", "float32": "f32"}


def _devices(device: Any) -> Tuple[List[int], bool]:
    """device: an ordinal, a sequence of distinct ordinals, "all" (every visible GPU) or "auto"
    (every visible GPU, each join deciding whether spreading pays; device 0 when none is
    visible). The ordinals, and whether each join decides."""
    if isinstance(device, str):
        if device not in ("all", "auto"):
            raise ValueError(f"device must be an ordinal, a list of ordinals, 'auto' or 'all', "
                             f"got {device!r}")
        found = [d["ordinal"] for d in _epsjoin.build_info()["cuda_devices"]]
        if device == "auto":
            return (found or [0]), True
        if not found:
            raise ValueError("device='all': no CUDA device is visible")
        return found, False
    ordinals = [device] if isinstance(device, numbers.Integral) else device
    try:
        ordinals = list(ordinals)
    except TypeError:
        ordinals = None
    if (not ordinals or
            not all(isinstance(d, numbers.Integral) and not isinstance(d, bool)
                    and operator.index(d) >= 0 for d in ordinals)):
        raise ValueError(f"device must be a CUDA device ordinal >= 0, a list of them, 'auto' or "
                         f"'all', got {device!r}")
    if len(set(ordinals)) != len(ordinals):
        raise ValueError(f"device lists an ordinal twice: {device!r}")
    return [int(d) for d in ordinals], False


def run_settings(
    engine: str = "auto",
    precision: Any = "float64",
    approximate: bool = False,
    n_jobs: Optional[int] = None,
    memory_limit: MemorySize = None,
    device_memory_limit: MemorySize = None,
    device: Devices = "auto",
    params: Optional[Mapping[str, Any]] = None,
    devices_split: str = "auto",
    progress: Any = False,
) -> Any:
    """The core's RunSettings from the keyword options every join takes."""
    settings = _epsjoin.RunSettings()
    if not isinstance(engine, str):
        raise TypeError(f"engine must be a string, got {type(engine).__name__}")
    settings.engine = engine
    key = np.dtype(precision).name if not isinstance(precision, str) else precision
    if key not in _PRECISIONS:
        raise ValueError(f"precision must be 'float64' or 'float32', got {precision!r}")
    settings.precision = _PRECISIONS[key]
    settings.approximate = bool(approximate)
    if n_jobs is None or n_jobs == -1:
        settings.threads = 0
    elif isinstance(n_jobs, numbers.Integral) and n_jobs > 0:
        settings.threads = int(n_jobs)
    else:
        raise ValueError(f"n_jobs must be None, -1 or a positive integer, got {n_jobs!r}")
    settings.host_memory_bytes = memory_bytes(memory_limit, "memory_limit")
    settings.device_memory_bytes = memory_bytes(device_memory_limit, "device_memory_limit")
    devices, automatic = _devices(device)
    settings.device = devices[0]
    settings.devices = devices
    settings.devices_automatic = automatic
    # Checked by the core (resources' device_split_named, the CLI's parser too) before any work.
    settings.devices_split = str(devices_split)
    settings.params = {str(k): str(v) for k, v in (params or {}).items()}
    report = _progress.reporter(progress)
    if report is not None:  # None is the core's default (nanobind takes no None here)
        settings.progress = report
    return settings
