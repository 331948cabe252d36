"""Timing helper shared by the benchmarks: best of several runs, ours over the reference's."""

from __future__ import annotations

import time
from collections.abc import Callable


def best_time(function: Callable[[], object], repeat: int = 5) -> float:
    """Smallest wall time of ``repeat`` calls (the least disturbed by the rest of the machine)."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def report(
    name: str,
    ours: Callable[[], object],
    reference: Callable[[], object],
    repeat: int = 5,
    against: str = "scikit-learn",
) -> float:
    """Time both, alternating warm-up, and print one line with the ratio (``against`` names the reference)."""
    ours(), reference()  # warm up caches and lazy imports
    t_ours, t_ref = best_time(ours, repeat), best_time(reference, repeat)
    ratio = t_ours / t_ref
    print(f"{name:<58} ours {t_ours * 1e3:9.2f} ms   {against} {t_ref * 1e3:9.2f} ms   ratio {ratio:5.2f}")
    return ratio
