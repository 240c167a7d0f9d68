"""Measuring where deferring pays: one chain of elementwise calls, eager and fused.

``((a * b + 1.0) * a - b) * 0.5`` (five calls) on float64 arrays of growing size is timed
as autodev runs it with deferral off (each call at once) and on (one blocked pass,
:mod:`autodev._fusion`), alternating the two at each size so that a burst of load on a
shared machine slows both. The floor is the smallest measured size from which the fused
chain was faster by :data:`MARGIN` at that size and every larger one; None (never
deferred) where it never was.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy

from .. import _fusion
from .._config import policy
from .timing import measure

#: The fused chain must be this much faster to count as paying.
MARGIN = 1.10
#: Sizes measured (elements).
SIZES = tuple(2 ** k for k in range(14, 23))
QUICK_SIZES = tuple(2 ** k for k in range(14, 23, 2))


def _chain(n: int) -> Callable[[], Any]:
    """The chain on ``n`` elements, its result read (so a deferred chain runs inside)."""
    from .._namespace import array

    rng = numpy.random.default_rng(0)
    a: Any = array(rng.random(n))
    b: Any = array(rng.random(n))
    return lambda: numpy.asarray(((a * b + 1.0) * a - b) * 0.5)


def measure_fusion(budget: float, quick: bool = False) -> dict[str, Any]:
    """The profile's ``fusion`` section: the floor, and the measured points (seconds eager
    and fused)."""
    points: dict[str, list[float]] = {"n": [], "eager": [], "fused": []}
    deadline = time.perf_counter() + budget
    before = _fusion.floor()
    try:
        with policy("cpu"):  # the host's blocked pass (with a GPU usable, a chain could move)
            _measure_sizes(points, deadline, quick)
    finally:
        _fusion.set_floor(before)
    return {"floor": floor_of(points), "measurements": points}


def _measure_sizes(points: dict[str, list[float]], deadline: float, quick: bool) -> None:
    for n in QUICK_SIZES if quick else SIZES:
        if time.perf_counter() > deadline:
            break
        call = _chain(n)
        times: dict[str, list[float]] = {"eager": [], "fused": []}
        for _ in range(3):  # alternated: load on a shared machine slows both alike
            for name, floor in (("eager", _fusion.NEVER), ("fused", 2)):
                _fusion.set_floor(floor)
                times[name].append(measure(call, warmup=1, min_repeats=3, max_repeats=20,
                                           budget=0.02).median)
        points["n"].append(float(n))
        for name in ("eager", "fused"):
            points[name].append(sorted(times[name])[1])


def floor_of(points: dict[str, list[float]]) -> int | None:
    """The smallest size from which the fused chain paid at every larger size measured."""
    found = None
    for n, eager, fused in zip(reversed(points["n"]), reversed(points["eager"]),
                               reversed(points["fused"])):
        if fused * MARGIN >= eager:
            break
        found = int(n)
    return found
