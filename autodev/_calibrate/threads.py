"""Measuring where threads pay: one call per family, single-threaded and split.

For each family :mod:`autodev._parallel` splits (elementwise ``a + b``, transcendental
``sin(a)``, a row-wise ``sum(m, axis=1)``), float64 arrays of growing size are timed
both ways with the one timing primitive, alternating the two at each size so that a
burst of load on a shared machine slows both. The crossover is the smallest measured size
from which the split call was faster by :data:`MARGIN` at that size and every larger
one; None (never split) where it never was, or where one thread is all there is.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from .. import _parallel, _threads
from .timing import measure

#: The split call must be this much faster to count as paying.
MARGIN = 1.10
#: Sizes measured (elements), from two blocks up.
SIZES = tuple(2 ** k for k in range(16, 24))
QUICK_SIZES = tuple(2 ** k for k in range(16, 24, 2))


def _calls(family: str, n: int, threads: int) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """The family's call on ``n`` elements as NumPy's one call and split in ``threads``."""
    rng = np.random.default_rng(0)
    if family == "reduction":
        m = rng.random((n // 64, 64))
        return (lambda: np.add.reduce(m, axis=1),
                lambda: _parallel.split_reduce(np.add, m, 1, threads))
    a, b = rng.random(n), rng.random(n)
    if family == "transcendental":
        return lambda: np.sin(a), lambda: _parallel.split_ufunc(np.sin, (a,), threads)
    return lambda: np.add(a, b), lambda: _parallel.split_ufunc(np.add, (a, b), threads)


def measure_threads(budget: float, quick: bool = False,
                    threads: int | None = None) -> dict[str, Any]:
    """The profile's ``threads`` section: the thread count measured with, the crossover
    per family, and the measured points (seconds single-threaded and split)."""
    count = _threads.POOL.threads if threads is None else threads
    section: dict[str, Any] = {"count": count, "crossover": {}, "measurements": {}}
    deadline = time.perf_counter() + budget
    share = budget / len(_threads.FAMILIES)
    for family in _threads.FAMILIES:
        points: dict[str, list[float]] = {"n": [], "single": [], "split": []}
        if count >= 2:
            _ladder(family, count, quick, min(deadline, time.perf_counter() + share), points)
        section["measurements"][family] = points
        section["crossover"][family] = crossover(points)
    return section


def _ladder(family: str, count: int, quick: bool, deadline: float,
            points: dict[str, list[float]]) -> None:
    for n in QUICK_SIZES if quick else SIZES:
        if time.perf_counter() > deadline:
            break
        single, split = _calls(family, n, count)
        times: dict[str, list[float]] = {"single": [], "split": []}
        for _ in range(3):  # alternated: load on a shared machine slows both alike
            for name, call in (("single", single), ("split", split)):
                times[name].append(measure(call, warmup=1, min_repeats=3, max_repeats=20,
                                           budget=0.02).median)
        points["n"].append(float(n))
        for name in ("single", "split"):
            points[name].append(sorted(times[name])[1])


def crossover(points: dict[str, list[float]]) -> float | None:
    """The smallest size from which the split call paid at every larger size measured."""
    found = None
    for n, single, split in zip(reversed(points["n"]), reversed(points["single"]),
                                reversed(points["split"])):
        if split * MARGIN >= single:
            break
        found = n
    return found
