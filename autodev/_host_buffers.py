"""Large host buffers from a pool: NumPy's data-memory handler (NEP 49), scoped to autodev.

On Linux, glibc gives every freed block above its mmap threshold (32 MiB at most) back to
the operating system and maps a fresh one for the next allocation, whose every page
then costs a fault (1–2 µs per 4 KiB page) before NumPy writes a single value: a chain
such as ``a * b + c`` on 1e7 elements spends a third of its time there. Under
:func:`large_buffers`, NumPy allocates array data through autodev's handler
(:mod:`autodev._hostpool`, compiled), which keeps freed blocks of
:data:`THRESHOLD` bytes or more in a pool and hands them out again: no fault, and the
same values (only where the memory comes from changes).

Scope: NumPy keeps the handler in a context variable, so only what runs inside
:func:`large_buffers` allocates from the pool: autodev's own large host calls (a
dispatched call with an operand of :data:`THRESHOLD` bytes or more; calls split over
threads allocate their result on the calling thread, inside the scope). Code that is not
autodev's, and autodev's tiny calls, keep NumPy's default allocator. An array allocated
in the scope holds the handler (NumPy stores it in the array) and gives its block back
to the pool whenever it is freed, on any thread, after the scope too.

Bounds: the pool holds at most :data:`LIMIT` bytes of free blocks (``AUTODEV_HOST_POOL``;
default the smaller of 1 GiB and an eighth of physical memory; ``0`` turns the pool
off), giving back its oldest blocks first. Memory pressure: an allocation that fails
empties the pool and is tried once more before NumPy raises ``MemoryError``; a host call
that raises ``MemoryError`` anyway empties it and runs once more
(:func:`autodev._residency.memory.on_host`); the CPU backend's ``free_memory()`` empties
it. On Linux an allocation rarely fails (memory is overcommitted), so the bound is what
keeps the pool from crowding out other processes; its free blocks count in this
process's resident memory.

Absent (``stats()["host_pool"]["status"]`` says why) where the extension is not built,
with ``AUTODEV_PURE_PYTHON=1`` and with ``AUTODEV_HOST_POOL=0``: then
:func:`large_buffers` does nothing and NumPy's allocator serves every call.
"""

from __future__ import annotations

import contextlib
import os
import sys
from types import ModuleType, TracebackType
from typing import Any, Callable, ContextManager

import numpy as np

from ._config import ENV

#: Least bytes of a pooled block, and of the largest operand of a call that runs in the
#: scope: NumPy's own bound for reusing a temporary's buffer (its temporary elision). From
#: there glibc maps freed blocks anew (its mmap threshold starts at 128 KiB) or trims its
#: heap, and NumPy's temporaries of 32,768 float64s and more pay their pages' faults again
#: (measured on a 2-vCPU VM: docs/performance.md); below it a block stays in the heap,
#: and the scope would cost a small call more than it saves.
DEFAULT_THRESHOLD = THRESHOLD = 1 << 18
#: What :data:`POOLED_FROM` is where the pool is absent: no size.
NEVER = sys.maxsize


def default_limit() -> int:
    """The pool's bound unless ``AUTODEV_HOST_POOL`` sets one: the smaller of 1 GiB and an
    eighth of physical memory (1 GiB where that is unknown)."""
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return 1 << 30
    return min(1 << 30, physical // 8)


def _load() -> tuple[ModuleType | None, int, str]:
    """The compiled pool, configured, with its bound; or None, 0 and why it is absent."""
    if ENV.pure_python:
        return None, 0, "off (AUTODEV_PURE_PYTHON=1)"
    limit = default_limit() if ENV.host_pool is None else ENV.host_pool
    if limit == 0:
        return None, 0, "off (AUTODEV_HOST_POOL=0)"
    try:
        import autodev._hostpool as hostpool
    except ImportError as error:  # not built here (no compiler at install) or not loadable
        return None, 0, f"not built ({error}); NumPy's allocator serves every call"
    hostpool.configure(limit, THRESHOLD, _numpy_hugepages())
    return hostpool, limit, "on"


def _numpy_hugepages() -> bool:
    """Whether NumPy's own allocator advises large blocks to use huge pages (Linux; the
    pool's fresh blocks follow it, so that a miss costs what NumPy's allocation costs)."""
    multiarray: Any = np._core.multiarray  # type: ignore[attr-defined]
    getter = getattr(multiarray, "_get_madvise_hugepage", None)
    return bool(getter()) if getter is not None else False


#: ``autodev._hostpool`` (autodev/_hostpool.c), or None where the pool is absent.
POOL, LIMIT, STATUS = _load()
#: Elements of an operand from which a call is a candidate for the scope
#: (:data:`THRESHOLD` over 8 bytes, float64's and int64's size): the hot paths send calls
#: with an operand this large to the general path (:func:`autodev._threads.least_floor`).
POOLED_FROM = NEVER if POOL is None else THRESHOLD // 8
#: Whether large calls run in the pool's scope (the pool is there, its bound above 0).
_ON = POOL is not None


#: Called whenever :data:`POOLED_FROM` may have changed (:mod:`autodev._threads`
#: registers, so that the hot paths learn the new size).
LISTENERS: list[Callable[[], None]] = []


def configure(limit: int | None = None, threshold: int | None = None) -> None:
    """Set the pool's bound and the least bytes of a pooled block (and so of a call's
    largest operand for the scope); None keeps the value in force. A lower bound gives
    the free blocks back; a bound of 0 turns the pool off (as ``AUTODEV_HOST_POOL=0``
    does, but only until a later call turns it on again). Does nothing where the pool
    is absent."""
    global LIMIT, THRESHOLD, POOLED_FROM, _ON
    if POOL is None:
        return
    LIMIT = LIMIT if limit is None else limit
    THRESHOLD = THRESHOLD if threshold is None else threshold
    _ON = LIMIT > 0
    POOLED_FROM = max(1, THRESHOLD // 8) if _ON else NEVER
    POOL.configure(LIMIT, THRESHOLD, _numpy_hugepages())
    for listener in LISTENERS:
        listener()


class _Scope:
    """The handler in force for one block (restored on exit, even after an error)."""

    __slots__ = ("previous",)

    def __enter__(self) -> None:
        self.previous = POOL.swap(POOL.handler)  # type: ignore[union-attr]

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        POOL.swap(self.previous)  # type: ignore[union-attr]


_NOTHING = contextlib.nullcontext()


def large_buffers() -> ContextManager[None]:
    """Allocate the host arrays made in the block from autodev's pool of large buffers.

    Blocks of :data:`THRESHOLD` bytes or more come from the pool and go back to it when
    their arrays are freed; smaller ones, and everything where the pool is absent, come
    from NumPy's allocator as usual. Results are unchanged. Use it around host work on
    large arrays whose temporaries come and go (autodev's dispatcher does, for each
    large host call); it applies to this thread or task only.

    Examples
    --------
    >>> from autodev._host_buffers import large_buffers
    >>> with large_buffers():
    ...     result = a * b + c  # doctest: +SKIP
    """
    return _Scope() if _ON else _NOTHING


def is_large(args: Any) -> bool:
    """True if a NumPy array among ``args`` (a sequence) holds :data:`THRESHOLD` bytes
    or more (always False where the pool is absent or off)."""
    if not _ON:
        return False
    for a in args:
        if type(a) is np.ndarray and a.nbytes >= THRESHOLD:
            return True
    return False


def release() -> int:
    """Give every free block of the pool back to the system; return the bytes given."""
    return 0 if POOL is None else int(POOL.release())


def counters() -> dict[str, Any]:
    """The pool's counters: ``status``, ``held_bytes`` and ``held_blocks`` (free blocks
    in the pool now), ``hits`` and ``misses`` (allocations of pooled size served from
    the pool, and from the system), ``released`` (blocks given back to the system: over
    the bound, or emptied), ``limit`` and ``threshold`` (bytes)."""
    if POOL is None:
        return {"status": STATUS, "held_bytes": 0, "held_blocks": 0, "hits": 0,
                "misses": 0, "released": 0, "limit": 0, "threshold": THRESHOLD}
    return {"status": STATUS if _ON else "off (its bound set to 0)", **POOL.stats()}

