"""What the k-nearest calls share (EpsIndex.kneighbors, RadiusNeighbors.kneighbors): the check
of k. The arrays themselves come padded from the extension (python/src/nearest_calls.cpp)."""

from __future__ import annotations

import numbers
from typing import Any


def check_k(k: Any, name: str = "k") -> int:
    """k as an int >= 1, or ValueError / TypeError in scikit-learn's words."""
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{name} does not take {type(k).__name__} value, enter integer value")
    if k < 1:
        raise ValueError(f"Expected {name} > 0. Got {k}")
    return int(k)
