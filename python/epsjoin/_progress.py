"""progress=: a bar (tqdm when installed, else a line on stderr) or the caller's callable, fed
the fraction done by the library's passes (index, count, fill) and by the Python side's writing
of the result."""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, Optional, Union

Progress = Union[bool, Callable[[float], Any], None]

# The share of the bar the library's join fills; the rest is the writing of the Python result
# (lists, distances, conversions), reported done by done().
_JOIN_SHARE = 0.95


class _Line:
    """A percentage on stderr, rewritten in place at most ten times a second: the bar of a
    machine without tqdm."""

    def __init__(self, desc: str) -> None:
        self.desc, self.shown, self.last = desc, -1, 0.0

    def __call__(self, fraction: float) -> None:
        percent = int(fraction * 100)
        now = time.monotonic()
        if percent == self.shown or (percent < 100 and now - self.last < 0.1):
            return
        self.shown, self.last = percent, now
        sys.stderr.write(f"\r{self.desc}: {percent:3d}%" + ("\n" if percent >= 100 else ""))
        sys.stderr.flush()


class _Bar:
    def __init__(self, desc: str) -> None:
        from tqdm.auto import tqdm  # optional: epsjoin[progress]

        self.bar = tqdm(total=100, desc=desc, unit="%", leave=True,
                        bar_format="{l_bar}{bar}| {n:.0f}/{total:.0f}% [{elapsed}<{remaining}]")

    def __call__(self, fraction: float) -> None:
        target = min(100.0, fraction * 100)
        if target > self.bar.n:
            self.bar.update(target - self.bar.n)
        if fraction >= 1.0:
            self.bar.close()

    def __del__(self) -> None:  # a join that failed leaves no bar open
        bar = getattr(self, "bar", None)  # None when tqdm could not be imported
        if bar is not None:
            bar.close()


def reporter(progress: Progress, desc: str = "epsjoin") -> Optional[Callable[[float], Any]]:
    """What the library calls with the fraction done (0 to 1), or None for no report."""
    if progress is None or progress is False:
        return None
    if callable(progress):
        sink: Callable[[float], Any] = progress
    elif progress is True:
        try:
            sink = _Bar(desc)
        except ImportError:
            sink = _Line(desc)
    else:
        raise TypeError(f"progress must be a bool or a callable taking the fraction done, "
                        f"got {type(progress).__name__}")
    shown = [0.0]

    def report(fraction: float) -> None:
        # Never back, and the join's 1.0 only as far as its share: done() says 1.
        at = max(shown[0], min(1.0, float(fraction)))
        shown[0] = at
        sink(at)

    def scaled(fraction: float) -> None:
        report(fraction * _JOIN_SHARE)

    scaled.finish = lambda: report(1.0)  # type: ignore[attr-defined]
    return scaled


def done(settings: Any) -> None:
    """The result is written: the bar ends at 100%."""
    report = getattr(settings, "progress", None)
    finish = getattr(report, "finish", None)
    if finish is not None:
        finish()
