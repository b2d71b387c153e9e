"""Small helpers shared by the benchmark scripts (not a test: prints numbers)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(fn: Callable[[], Any]) -> float:
    """Wall-clock milliseconds of one call."""
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000.0


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def ratio(ours: float, peer: float) -> str:
    return f"{peer / ours:.1f}x faster" if ours < peer else f"{ours / peer:.1f}x slower"
