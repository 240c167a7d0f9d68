"""The one timing primitive, shared by calibration, benchmarks and the demo.

Warm-up, device synchronisation inside the timed region, repeats until a time
budget or a repeat cap, and robust statistics (median, with outliers beyond a
MAD band rejected: multithreaded BLAS on small VMs has 100-1000x outliers).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass
class Timing:
    """Result of :func:`measure`: seconds per call."""

    median: float
    best: float
    times: list[float] = field(repr=False)
    rejected: int = 0

    @property
    def repeats(self) -> int:
        return len(self.times)


def reject_outliers(times: list[float], k: float = 5.0) -> tuple[list[float], int]:
    """Drop samples more than ``k`` scaled MADs above the median; return (kept, dropped)."""
    if len(times) < 4:
        return list(times), 0
    med = statistics.median(times)
    mad = statistics.median(abs(t - med) for t in times) * 1.4826
    limit = med + k * max(mad, med * 0.05)
    kept = [t for t in times if t <= limit]
    return kept, len(times) - len(kept)


def measure(func: Callable[[], Any], sync: Callable[[], None] | None = None, *,
            warmup: int = 1, min_repeats: int = 3, max_repeats: int = 50,
            budget: float = 0.2, clock: Callable[[], float] = time.perf_counter) -> Timing:
    """Time ``func()`` per call.

    Parameters
    ----------
    func : callable
        The call to time (no arguments).
    sync : callable, optional
        Waits for queued device work; called after ``func`` inside the timed
        region (and once before it), so asynchronous GPU work is counted.
    warmup : int
        Untimed calls first (JIT, caches, plan creation, lazy imports).
    min_repeats, max_repeats : int
        Bounds on the timed calls.
    budget : float
        Seconds of timed calls after which no further repeat starts once
        ``min_repeats`` is reached.
    clock : callable
        The time source (the simulated GPU passes its virtual clock).
    """
    wait = sync or (lambda: None)
    for _ in range(warmup):
        func()
    wait()
    times: list[float] = []
    spent = 0.0
    while len(times) < max_repeats and (len(times) < min_repeats or spent < budget):
        start = clock()
        func()
        wait()
        elapsed = clock() - start
        times.append(elapsed)
        spent += elapsed
    kept, dropped = reject_outliers(times)
    return Timing(median=statistics.median(kept), best=min(kept), times=times,
                  rejected=dropped)
