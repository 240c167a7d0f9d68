"""The host's threads: how many a call may use (``AUTODEV_NUM_THREADS``, else
``OMP_NUM_THREADS``, else the cores this process may run on; ``threadpoolctl`` lowers it),
the pool they run on, and each family's floor, the work at or above which a call is split
over them (:mod:`autodev._parallel` splits it).
"""

from __future__ import annotations

import math
import os
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from ._config import ENV, VERSION
from . import _host_buffers
from ._cost import cache as _cache
from ._cost.families import broadcast_elements
from ._cost.model import PROFILE_WRITTEN

#: No block is smaller than this many elements: below it the hand-over to a thread
#: costs more than the loop it saves.
MIN_BLOCK = 32768
#: Families whose calls may be split (the profile's ``threads`` section has a crossover,
#: the work at or above which a call is split, for each).
FAMILIES = ("elementwise", "transcendental", "reduction")
#: The floor of a family that is never split (an int, so the hot paths compare ints).
NEVER = sys.maxsize


# --------------------------------------------------------------------------- thread count

def default_threads() -> int:
    """Threads a call may use unless limited: ``AUTODEV_NUM_THREADS``, else the first
    value of ``OMP_NUM_THREADS``, else the cores this process may run on."""
    if ENV.num_threads is not None:
        return ENV.num_threads
    omp = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if omp.isdigit() and int(omp) >= 1:
        return int(omp)
    affinity = getattr(os, "sched_getaffinity", None)
    return len(affinity(0)) if affinity is not None else (os.cpu_count() or 1)


class _Pool:
    """The worker threads, made on first need, and the limit threadpoolctl sets."""

    def __init__(self) -> None:
        self.default = default_threads()
        self.limit: int | None = None
        self.executor: ThreadPoolExecutor | None = None
        self.workers = 0
        self.lock = threading.Lock()

    @property
    def threads(self) -> int:
        return self.default if self.limit is None else max(1, min(self.limit, self.default))

    def submit(self, n: int, fn: Callable[[], Any]) -> Future[Any]:
        if self.executor is None or self.workers < n:
            with self.lock:
                if self.executor is None or self.workers < n:
                    old, self.executor = self.executor, ThreadPoolExecutor(
                        n, thread_name_prefix="autodev-block")
                    self.workers = n
                    if old is not None:
                        old.shutdown(wait=False)
        return self.executor.submit(fn)

    def after_fork(self) -> None:
        self.executor, self.workers, self.lock = None, 0, threading.Lock()


POOL = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=POOL.after_fork)

_MAIN = threading.main_thread()


def threads_for(work: float, family: str) -> int:
    """How many threads a call of ``family`` with ``work`` units runs on here: 1 below
    the family's floor, on any thread but the main one, or with one thread allowed."""
    if work < floor(family) or threading.current_thread() is not _MAIN:
        return 1
    return POOL.threads


def set_limit(n: int | None) -> None:
    """Allow at most ``n`` threads (None: no limit; threadpoolctl's controller calls it)."""
    POOL.limit = n
    _changed()


# --------------------------------------------------------------------------- floors

#: family -> the work at or above which its calls are split (:data:`NEVER`: never).
FLOORS: dict[str, int] = {}
#: Called with :func:`general_from` whenever it may have changed (the hot
#: paths keep it as an int and send calls at or above it here).
LISTENERS: list[Callable[[int], None]] = []
_CROSSOVER: list[dict[str, float | None]] = []


def crossovers() -> dict[str, float | None]:
    """The per-family crossovers in force: the profile's ``threads`` section (measured
    by ``autodev calibrate``), else the embedded default's; None means never."""
    if not _CROSSOVER:
        from ._cost.profile import embedded_default, resolve

        measured = resolve().profile.get("threads") or embedded_default()["threads"]
        _CROSSOVER.append({f: measured["crossover"].get(f) for f in FAMILIES})
    return _CROSSOVER[0]


def broadcast_reaches(x: Any, y: Any, least: int) -> bool:
    """True if the NumPy arrays ``x`` and ``y`` broadcast to ``least`` elements or more
    (``x[:, None] - c``: a result larger than either operand, as the compiled path's
    ``may_split`` counts it; never larger than their product, looked at first)."""
    return x.size * y.size >= least and x.shape != y.shape \
        and broadcast_elements([x.shape, y.shape]) >= least


def floor(family: str) -> int:
    """The least work a call of ``family`` is split at (:data:`NEVER` if it never is: a
    family that has no floor, ``copy`` or ``matmul``, once the floors are computed)."""
    found = FLOORS.get(family)
    if found is None:
        if not FLOORS:  # (filled, it holds every family of FAMILIES: no other is split)
            _fill()
        found = FLOORS.get(family, NEVER)
    return found


def _fill() -> None:
    """Compute every family's floor (from the crossovers and the threads allowed)."""
    FLOORS.update(floors_for(crossovers(), POOL.threads))
    _tell()


def floors_for(crossover: dict[str, float | None], threads: int) -> dict[str, int]:
    """Each family's floor given its crossover and the threads allowed: :data:`NEVER`
    with one thread or no crossover, else the crossover, and never below two blocks."""
    return {family: NEVER if threads < 2 or crossover.get(family) is None
            else max(2 * MIN_BLOCK, math.ceil(crossover[family]))  # type: ignore[arg-type]
            for family in FAMILIES}


def least_floor(pooled: bool = True) -> int:
    """The least floor over all families: the hot paths send calls at or above it here.
    Before the profile is read it is a safe lower bound (every split needs two blocks).
    Where ``pooled``, calls large enough for the host buffer pool come here too, split or
    not (they run in its scope: :data:`autodev._host_buffers.POOLED_FROM`); the compiled
    hot path enters that scope itself, and asks without it."""
    pool_from = _host_buffers.POOLED_FROM if pooled else NEVER
    if POOL.threads < 2:
        return pool_from
    if not FLOORS:
        return min(2 * MIN_BLOCK, pool_from)
    return min(min(FLOORS.values()), pool_from)


#: A reduction over every axis is split from this many times the reduction family's floor
#: (:func:`total_from`): its parts' results are added up in Python after the threads join,
#: and at the floor itself such a split measured 0.8-0.9x NumPy's time on the 2-vCPU VM
#: (a sum of 2^20 float64s), against 1.4x and more from twice it.
TOTAL_FLOORS = 2


def total_from() -> int:
    """The least size from which a reduction over every axis may be split
    (:func:`autodev._parallel.total_call`), and the fast paths send it to the general path:
    :data:`TOTAL_FLOORS` times the reduction family's floor (a safe lower bound until the
    profile is read)."""
    if POOL.threads < 2:
        return NEVER
    if not FLOORS:
        return 2 * MIN_BLOCK
    found = FLOORS.get("reduction", NEVER)
    return NEVER if found == NEVER else TOTAL_FLOORS * found


#: The least result size at which :mod:`autodev._fusion` defers a call (it sets it).
FUSE_FLOOR = [NEVER]


def general_from(pooled: bool = True) -> int:
    """The least size the hot paths send to the general path: the least thread (or, where
    ``pooled``, host pool) floor or fusion's floor, whichever is lower."""
    return min(least_floor(pooled), FUSE_FLOOR[0])


def set_fuse_floor(elements: int) -> None:
    """Fusion's floor changed: tell the hot paths."""
    FUSE_FLOOR[0] = elements
    _tell()


#: The key of :func:`split_floors` for calls that are never split nor deferred, whatever
#: their size (a ufunc with a signature or several outputs: :func:`autodev._threaded.floor_key`).
UNSPLIT = "unsplit"


def split_floors() -> dict[str | None, int]:
    """For each family, the least size from which the general path may split a call of it
    or defer it (its thread floor or fusion's floor, whichever is lower), and for None, of
    any family (:func:`general_from` without the host pool): a hot path that knows a call's
    family runs it below that family's size itself (the compiled one in the host pool's
    scope where the call is large enough for it); for :data:`UNSPLIT`, never. Until the
    floors are computed, None's alone."""
    found: dict[str | None, int] = {None: general_from(pooled=False)}
    for family, least in FLOORS.items():
        found[family] = min(least, FUSE_FLOOR[0])
    if FLOORS:
        found[UNSPLIT] = NEVER
    return found


def _tell() -> None:
    least = general_from()
    for listener in LISTENERS:
        listener(least)


def _changed() -> None:
    """Forget the floors (a new limit or profile): computed again on next use."""
    FLOORS.clear()
    _tell()


def reset_profile() -> None:
    """Read the crossovers again (after ``autodev calibrate`` wrote a profile)."""
    _CROSSOVER.clear()
    _changed()


def on_floor(listener: Callable[[int], None]) -> None:
    """Call ``listener(general_from())`` now and whenever it may change."""
    LISTENERS.append(listener)
    listener(general_from())


#: The families of the calls :mod:`autodev._fusion` defers.
_FUSED_FAMILIES = frozenset({"elementwise", "transcendental"})


def cap(family: str) -> int:
    """The work from which the CPU backend may split a call of ``family`` over threads or
    defer it (fusion): the cost model's host floor of the family is capped there, so that
    the tiny-call paths send such calls to the general path."""
    found = floor(family)
    return min(found, FUSE_FLOOR[0]) if family in _FUSED_FAMILIES else found


_cache.bind_cap(cap)
on_floor(lambda least: _cache.HOST_FLOOR_WORK.clear())  # a new thread limit or profile




# --------------------------------------------------------------------------- threadpoolctl

def _register_threadpoolctl() -> None:
    """Register the pool with threadpoolctl: ``threadpool_limits(n)`` (scikit-learn's and
    Dask's way of limiting every library's threads) limits it, ``threadpool_info()``
    lists it. threadpoolctl finds libraries by the shared objects loaded; the pool runs
    NumPy's loops, so it is listed against NumPy's ``_multiarray_umath``."""
    import threadpoolctl

    class AutodevController(threadpoolctl.LibController):
        user_api = "autodev"
        internal_api = "autodev"
        filename_prefixes = ("_multiarray_umath",)

        def get_num_threads(self) -> int:
            return POOL.threads

        def set_num_threads(self, num_threads: int) -> None:
            set_limit(num_threads)

        def get_version(self) -> str:
            return VERSION

    threadpoolctl.register(AutodevController)


_register_threadpoolctl()
PROFILE_WRITTEN.append(reset_profile)
_host_buffers.LISTENERS.append(_changed)
