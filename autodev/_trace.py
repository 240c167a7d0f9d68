"""Visibility: per-device call counts, transfer counters, and decision records."""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import warnings
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, cast

from ._config import ENV, SPEEDUPS
from ._host_buffers import counters as _pool_counters
from ._refcounts import user_stacklevel



class FallbackWarning(RuntimeWarning):
    """A call that was to run on a GPU ran on the CPU instead (out of memory there, or the
    GPU library does not implement it). ``AUTODEV_FALLBACK`` says how often it is shown;
    ``autodev.stats()["fallback_reasons"]`` counts every one."""

    __module__ = "autodev"


#: How many things watch the calls now: active ``trace()`` blocks, and AUTODEV_TRACE.
_WATCHERS = [1 if ENV.trace else 0]
#: Called with the new count whenever it changes (the backend registry subscribes: the
#: hot path's flags depend on it; this module knows nothing of them).
_WATCH_LISTENERS: list[Callable[[int], None]] = []


def watchers() -> int:
    """How many trace blocks (and AUTODEV_TRACE) watch the calls now."""
    return _WATCHERS[0]


def on_watchers(listener: Callable[[int], None]) -> None:
    """Call ``listener(count)`` now and whenever the number of watchers changes."""
    _WATCH_LISTENERS.append(listener)
    listener(_WATCHERS[0])


def _watch(delta: int) -> None:
    _WATCHERS[0] += delta
    for listener in _WATCH_LISTENERS:
        listener(_WATCHERS[0])


class _Stats:
    """Counters since start or the last ``stats(reset=True)``."""

    __slots__ = ("calls", "fast_base", "h2d_count", "h2d_bytes", "d2h_count",
                 "d2h_bytes", "fallbacks", "fallback_reasons", "warned", "reuse_moves",
                 "reuse_bytes", "threaded_calls", "threaded_blocks", "fused_chains", "fused_ops",
                 "fused_sums", "fused_on", "fused_kernels", "unfused")

    def __init__(self) -> None:
        self.reset()
        self.warned = False

    def reset(self) -> None:
        self.calls: dict[str, int] = {}
        self.fast_base = fast_calls()
        self.h2d_count = 0
        self.h2d_bytes = 0
        self.d2h_count = 0
        self.d2h_bytes = 0
        self.fallbacks = 0
        self.fallback_reasons: dict[str, int] = {}
        self.reuse_moves = 0
        self.reuse_bytes = 0
        self.threaded_calls = 0
        self.threaded_blocks = 0
        self.fused_chains = 0
        self.fused_ops = 0
        self.fused_sums = 0
        self.fused_on: dict[str, int] = {}
        self.fused_kernels = 0
        self.unfused: dict[str, int] = {}


#: CPU calls made on the hot path, counted by a C-level counter (``tick()``)
#: because a Python attribute increment would cost a tenth of a tiny call.
_FAST_CALLS = itertools.count()
tick = _FAST_CALLS.__next__


def fast_calls() -> int:
    """How many hot-path calls ran: ``tick()``'s count, and the compiled hot path's own
    (:mod:`autodev._speedups` counts in C, which saves a call to ``tick`` per call)."""
    return int(repr(_FAST_CALLS)[6:-1]) + (SPEEDUPS.calls() if SPEEDUPS is not None else 0)


STATS = _Stats()


def stats(reset: bool = False) -> dict[str, Any]:
    """Return call and transfer counters; with ``reset=True`` also zero them.

    Keys: ``calls`` (device name -> dispatched calls), ``h2d_count``,
    ``h2d_bytes``, ``d2h_count``, ``d2h_bytes`` (host<->device transfers),
    ``fallbacks`` (calls that had to leave the GPU: after an out-of-memory, or because
    the GPU library raised NotImplementedError; and requests for device ``"gpu"`` where
    no GPU is usable), ``fallback_reasons`` (``"op: reason"``
    -> count), ``reuse_moves`` and ``reuse_bytes`` (arrays mirrored on the other device
    because their reuse paid for the move; those bytes are in the transfer counters too),
    ``threaded_calls`` and ``threaded_blocks`` (host calls split over threads, and the
    blocks they were split into; see docs/performance.md, "Threads"), ``host_pool``
    (the pool of large host buffers: ``status``, ``held_bytes``, ``held_blocks``,
    ``hits``, ``misses``, ``released``, ``limit``, ``threshold``; see
    docs/performance.md, "Host buffer pool"), ``fused_chains``
    and ``fused_ops`` (deferred elementwise chains evaluated in one pass, and the
    operations they held; docs/performance.md, "Fusion"), ``fused_sums`` (sums made as
    a chain ran, its last step), ``fused_on`` (device name ->
    chains evaluated there), ``fused_kernels`` (fused kernels a GPU ran for them: one per
    result shape of a chain) and ``unfused`` (reason -> groups of a chain that ran on a
    GPU as its calls in order instead).
    """
    calls = dict(STATS.calls)
    fast = fast_calls() - STATS.fast_base
    if fast:
        calls["cpu"] = calls.get("cpu", 0) + fast
    out = {
        "calls": calls,
        "h2d_count": STATS.h2d_count,
        "h2d_bytes": STATS.h2d_bytes,
        "d2h_count": STATS.d2h_count,
        "d2h_bytes": STATS.d2h_bytes,
        "fallbacks": STATS.fallbacks,
        "fallback_reasons": dict(STATS.fallback_reasons),
        "reuse_moves": STATS.reuse_moves,
        "reuse_bytes": STATS.reuse_bytes,
        "threaded_calls": STATS.threaded_calls,
        "threaded_blocks": STATS.threaded_blocks,
        "host_pool": _host_pool(reset),
        "fused_chains": STATS.fused_chains,
        "fused_ops": STATS.fused_ops,
        "fused_sums": STATS.fused_sums,
        "fused_on": dict(STATS.fused_on),
        "fused_kernels": STATS.fused_kernels,
        "unfused": dict(STATS.unfused),
    }
    if reset:
        STATS.reset()
    return out


#: The host pool's hits, misses and released blocks at the last ``stats(reset=True)``
#: (the pool counts from its start; ``stats`` reports the difference).
_POOL_BASE: dict[str, int] = {"hits": 0, "misses": 0, "released": 0}


def _host_pool(reset: bool) -> dict[str, Any]:
    """``stats()["host_pool"]``: :func:`autodev._host_buffers.counters`, its counts since
    the last reset."""
    found = _pool_counters()
    out = {k: v - _POOL_BASE[k] if k in _POOL_BASE else v for k, v in found.items()}
    if reset:
        _POOL_BASE.update({k: found[k] for k in _POOL_BASE})
    return out


@dataclass
class Record:
    """One dispatch decision.

    ``device`` is where the call ran (a location); ``placement`` is the placement
    of its results: ``auto``, or the device its inputs were pinned to.
    ``costs`` maps device name to predicted seconds (compute + transfers); it is
    empty when no prediction was needed (policy, capability or ``out=``).
    ``transfers`` lists ``(direction, nbytes)`` moves the call made. A reuse move is
    a record of its own, op ``"move"``, whose reason gives the credit. ``threads`` is
    how many threads ran a host call (more than 1: split into blocks, see
    :mod:`autodev._parallel`).
    """

    op: str
    shapes: tuple[tuple[int, ...], ...]
    dtype: str
    device: str
    reason: str
    costs: dict[str, float] = field(default_factory=dict)
    transfers: list[tuple[str, int]] = field(default_factory=list)
    placement: str = "auto"
    threads: int = 1

    def line(self) -> str:
        """The one-line form used by ``AUTODEV_TRACE=1``."""
        shapes = " ".join("x".join(map(str, s)) or "()" for s in self.shapes)
        costs = " ".join(f"{d}={t * 1e6:.1f}us" for d, t in self.costs.items())
        moved = " ".join(f"{d}:{n}B" for d, n in self.transfers) or "none"
        placed = "" if self.placement == "auto" else f" pinned {self.placement}"
        placed += f" threads {self.threads}" if self.threads > 1 else ""
        return (f"{self.op} [{shapes}] {self.dtype} -> {self.device}{placed} ({self.reason})"
                f"{' predicted ' + costs if costs else ''} transfers {moved}")


_collectors: ContextVar[tuple[list[Record], ...]] = ContextVar("autodev_trace", default=())


def emit(record: Record, sinks: tuple[list[Record], ...] | None = None) -> None:
    """Hand a finished record to the active trace blocks (or to ``sinks``, those active
    when a deferred call was made: see :func:`sinks`) and the logger."""
    for sink in _collectors.get() if sinks is None else sinks:
        sink.append(record)
    if ENV.trace:
        trace_logger().info(record.line())


def sinks() -> tuple[list[Record], ...]:
    """The trace blocks active now (a deferred call's record goes to them later)."""
    return _collectors.get()


#: Called when a trace block ends (fusion evaluates its pending chains, so that the
#: block's records are complete when it ends).
ON_TRACE_EXIT: list[Callable[[], None]] = []


@contextlib.contextmanager
def trace() -> Iterator[list[Record]]:
    """Collect the dispatch decisions made in this block (in this context).

    Examples
    --------
    >>> import autodev as np
    >>> with np.trace() as t:
    ...     _ = np.ones(3) + 1
    >>> t[-1].op
    'add'
    """
    records: list[Record] = []
    token = _collectors.set(_collectors.get() + (records,))
    _watch(+1)
    try:
        yield records
    finally:
        for hook in ON_TRACE_EXIT:
            hook()
        _collectors.reset(token)
        _watch(-1)


def note_fallback(op: str, device: str, err: BaseException,
                  reason: str = "out of memory") -> None:
    """Count a GPU -> CPU fallback (and why) and warn as AUTODEV_FALLBACK says."""
    if _count_fallback(op, reason):
        what = "ran out of memory" if reason == "out of memory" else "is not implemented"
        warn_user(
            f"autodev: {op} {what} on {device} ({err}); it ran on the CPU "
            "instead. Set AUTODEV_FALLBACK=warn to see every fallback, or raise to stop.",
            FallbackWarning,
        )


def note_no_gpu(why: str) -> None:
    """Count a request for device ``"gpu"`` where no GPU is usable (autodev places the
    array instead) and warn as AUTODEV_FALLBACK says (its ``raise`` is the caller's)."""
    if _count_fallback("device 'gpu'", "no GPU usable"):
        warn_user(
            f"autodev: device 'gpu' was asked for, but no GPU is usable here ({why}); autodev "
            "places the array instead (device 'auto', which is the CPU here). Run `autodev "
            "doctor` to see what to install; AUTODEV_FALLBACK=raise makes this an error.",
            FallbackWarning,
        )


def _count_fallback(op: str, reason: str) -> bool:
    """Count one fallback; True when AUTODEV_FALLBACK says to warn about it."""
    STATS.fallbacks += 1
    key = f"{op}: {reason}"
    STATS.fallback_reasons[key] = STATS.fallback_reasons.get(key, 0) + 1
    if ENV.fallback == "warn" or (ENV.fallback == "once" and not STATS.warned):
        STATS.warned = True
        return True
    return False


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_user(message: str, category: type[Warning], at_call: Any = None) -> None:
    """Warn at the user's line: the first frame outside autodev (NumPy's stacklevel rule),
    so the user sees where, and a second warning from another of their lines is shown.
    ``at_call``: the ``warnings`` state of a deferred call (:func:`warnings_at_call`),
    under which the warning is given if the state has changed since, as the eager call
    would have given it (``catch_warnings`` and ``simplefilter("ignore")`` around the call
    alone silence it; a ``record=True`` around the call alone records it)."""
    level = user_stacklevel(_PACKAGE)
    if at_call is None or at_call == _warnings_state(tuple(warnings.filters)):
        warnings.warn(message, category, stacklevel=level)
        return
    filters, show, show_message = at_call
    with warnings.catch_warnings():  # (restores the filters and both hooks as they are)
        cast(list, warnings.filters)[:] = filters
        warnings.showwarning = show
        if show_message is not None:
            setattr(warnings, "_showwarnmsg_impl", show_message)
        warnings.warn(message, category, stacklevel=level)


def _warnings_state(filters: tuple[Any, ...]) -> tuple[Any, ...]:
    # (where a shown warning goes: ``showwarning``, and the hook that ``record=True``
    # replaces, which Python names ``_showwarnmsg_impl`` from 3.6 on)
    return filters, warnings.showwarning, getattr(warnings, "_showwarnmsg_impl", None)


def warnings_at_call(category: type[Warning]) -> tuple[Any, ...] | None:
    """The ``warnings`` state in force (its filters and where a warning is shown), for a
    warning of ``category`` that a deferred call gives later (:func:`warn_user`); None if a
    filter in force may turn such a warning into an exception (any ``error`` filter for
    it or a base class, whatever its message or module: such a call runs at once, as
    NumPy raises where it is made)."""
    filters = tuple(warnings.filters)
    for action, _message, kind, _module, _line in filters:
        if action == "error" and issubclass(category, kind):
            return None
    return _warnings_state(filters)


#: AUTODEV_TRACE=1 at import: the logger gets a stderr handler when first used
_HANDLER_WANTED = ENV.trace
_HANDLER_SET: list[bool] = []


def trace_logger() -> Any:
    """The ``autodev`` logger that ``AUTODEV_TRACE=1`` writes to (stderr, set up on first
    use: ``logging`` loads only then, ~2 ms that ``import autodev`` otherwise saves)."""
    import logging

    logger = logging.getLogger("autodev")
    if _HANDLER_WANTED and not _HANDLER_SET:
        _HANDLER_SET.append(True)
        if logger.handlers:
            return logger
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("autodev: %(message)s"))
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    return logger
