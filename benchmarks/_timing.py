"""Shared timing for the benchmark scripts: median wall time over repeats and tracemalloc peak memory."""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

__all__ = ["measure"]


def measure(fn, repeats: int) -> tuple[float, int]:
    """Median seconds of ``fn()`` over ``repeats`` calls, then the peak traced memory (bytes) of one more call."""
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return float(np.median(times)), peak
