"""Measuring where deferring pays: one chain of elementwise calls, eager and fused.

``((a * b + 1.0) * a - b) * 0.5`` (five calls) on float64 arrays of growing size is timed
as autodev runs it with deferral off (each call at once) and on (one blocked pass,
:mod:`autodev._fusion`), alternating the two at each size so that a burst of load on a
shared machine slows both. The floor is the smallest measured size from which the fused
chain was faster by :data:`MARGIN` at that size and every larger one; None (never
deferred) where it never was.

First, the same chain, fused, on :data:`BLOCK_SIZE` elements, on one thread and with
every thread the pool has, is timed with each block size of :data:`BLOCK_CANDIDATES`,
alternated round by round: for each, a block size other than the default is kept only
where it was faster by :data:`MARGIN`. The two differ: on one thread, blocks small enough
for a core's cache pay; split over threads, each block's Python time is spent holding the
GIL, and fewer, larger blocks pay. The floor is then measured with the block sizes kept.
Every block size gives the same results, bit for bit.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, Callable

import numpy

from .. import _blocked, _fusion, _threads
from .._config import policy
from .timing import measure

#: The fused chain must be this much faster to count as paying.
MARGIN = 1.10
#: Sizes measured (elements).
SIZES = tuple(2 ** k for k in range(14, 23))
QUICK_SIZES = tuple(2 ** k for k in range(14, 23, 2))
#: Block sizes tried (elements), and the chain's size while they are.
BLOCK_CANDIDATES = tuple(2 ** k for k in range(14, 19))
QUICK_BLOCK_CANDIDATES = (2 ** 14, 2 ** 16)
BLOCK_SIZE = 2 ** 22
QUICK_BLOCK_SIZE = 2 ** 20
#: The share of the budget the floor's sizes get (the block sizes, measured first, the rest).
FLOOR_SHARE = 0.7


def _chain(n: int) -> Callable[[], Any]:
    """The chain on ``n`` elements, its result read (so a deferred chain runs inside)."""
    from .._namespace import array

    rng = numpy.random.default_rng(0)
    a: Any = array(rng.random(n))
    b: Any = array(rng.random(n))
    return lambda: numpy.asarray(((a * b + 1.0) * a - b) * 0.5)


def measure_fusion(budget: float, quick: bool = False) -> dict[str, Any]:
    """The profile's ``fusion`` section: the floor, the block sizes, and the measured
    points (seconds eager and fused; seconds per block size, on one thread and on every
    thread)."""
    points: dict[str, list[float]] = {"n": [], "eager": [], "fused": []}
    blocks: dict[str, list[float]] = {"block": [], "seconds": [], "threaded_seconds": []}
    start = time.perf_counter()
    before, block = _fusion.floor(), (_blocked.BLOCK, _blocked.THREADED_BLOCK)
    try:
        with policy("cpu"):  # the host's blocked pass (with a GPU usable, a chain could move)
            _measure_blocks(blocks, start + (1 - FLOOR_SHARE) * budget, quick)
            # (the floor is where chains pay so run)
            _blocked.set_block(block_of(blocks), block_of(blocks, threaded=True))
            _measure_sizes(points, start + budget, quick)
    finally:
        _fusion.set_floor(before)
        _blocked.BLOCK, _blocked.THREADED_BLOCK = block
    return {"floor": floor_of(points), "measurements": points, "block": block_of(blocks),
            "threaded_block": block_of(blocks, threaded=True), "block_measurements": blocks}


def _measure_blocks(points: dict[str, list[float]], deadline: float, quick: bool) -> None:
    """Time the fused chain with each candidate block size, on one thread and on every
    thread (where the pool has more than one), alternated: one round at least, three
    where the budget allows."""
    from threadpoolctl import threadpool_limits

    candidates = QUICK_BLOCK_CANDIDATES if quick else BLOCK_CANDIDATES
    call = _chain(QUICK_BLOCK_SIZE if quick else BLOCK_SIZE)
    _fusion.set_floor(2)
    ways = [(1, "seconds")] + ([(0, "threaded_seconds")] if _threads.POOL.threads > 1 else [])
    times: dict[tuple[str, int], list[float]] = {(key, block): [] for _, key in ways
                                                 for block in candidates}
    for _ in range(3):
        if time.perf_counter() > deadline and all(times.values()):
            break
        for limit, key in ways:
            with threadpool_limits(limit) if limit else contextlib.nullcontext():
                for block in candidates:
                    _blocked.set_block(block, block)
                    times[key, block].append(measure(call, warmup=1, min_repeats=3,
                                                     max_repeats=10, budget=0.02).median)
    for block in candidates:
        points["block"].append(float(block))
        for _, key in ways:
            seconds = times[key, block]
            points[key].append(sorted(seconds)[len(seconds) // 2])


def block_of(points: dict[str, list[float]], threaded: bool = False) -> int:
    """The block size to run chains with, on one thread or (``threaded``) split over
    threads: the fastest measured, where it beat the default
    (:data:`autodev._blocked.DEFAULT_BLOCK`, :data:`autodev._blocked.DEFAULT_THREADED_BLOCK`)
    by :data:`MARGIN`; else the default (also where nothing was measured)."""
    default = _blocked.DEFAULT_THREADED_BLOCK if threaded else _blocked.DEFAULT_BLOCK
    seconds = points.get("threaded_seconds" if threaded else "seconds") or []
    measured = dict(zip(points["block"], seconds))
    if not measured:
        return default
    best = min(measured, key=measured.__getitem__)
    if float(default) in measured and measured[best] * MARGIN > measured[float(default)]:
        return default
    return int(best)


def _measure_sizes(points: dict[str, list[float]], deadline: float, quick: bool) -> None:
    for n in QUICK_SIZES if quick else SIZES:
        if points["n"] and time.perf_counter() > deadline:  # (one size at least)
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
