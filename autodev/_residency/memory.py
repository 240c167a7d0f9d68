"""Device faults: one mechanism for every place that allocates on a device.

Every device allocation (a dispatched call, a move, a mirror made by reuse credit, a
transfer, creation, indexing, a write, a method) runs through :func:`retrying`. On the
backend's *named* out-of-memory error it drops every mirror, frees the cached blocks and
tries once more; a second one runs the host fallback, counted in
``stats()["fallbacks"]`` and warned as ``AUTODEV_FALLBACK`` says (``raise`` re-raises
instead). ``NotImplementedError`` (a case the GPU library lacks that no capability-table
row foresaw) takes the host fallback at once, counted and warned the same way. No other
exception is caught, and an error the host fallback raises is its own.

The host: a large host call runs in the host buffer pool's scope (:func:`host_pooled`);
a ``MemoryError`` there releases what autodev holds on the host (:func:`free` of the CPU:
mirrors, and the CPU backend's ``free_memory()`` empties the pool) and runs the call once
more, unless it may have written into an ``out=``.

Views: a call whose result is a view of its input must stay a view of the same
storage. A host fallback cannot give that (its result would view a host *copy*, and
writes through it would be lost), so such a fallback refuses instead
(:func:`check_not_view`): ``MemoryError`` after out-of-memory, ``NotImplementedError``
where the device declined. CuPy allocates nothing for a view, so out-of-memory only
happens there where the device had to copy.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any, Callable, NoReturn, TypeVar

import numpy as np

from . import storage as R
from .. import _blocked
from .._backends import backend_for
from .._config import ENV
from .._host_buffers import large_buffers
from .._device import CPU, Device
from .._trace import STATS, note_fallback

T = TypeVar("T")


def retrying(op: str, device: Device, attempt: Callable[[], T],
             fallback: Callable[[], T] | None = None) -> T:
    """Run ``attempt()``; on out-of-memory on ``device`` free, retry, then ``fallback()``;
    on NotImplementedError, ``fallback()`` at once.

    Parameters
    ----------
    op : str
        The operation's name (in the fallback warning and ``stats()["fallback_reasons"]``).
    device : Device
        Where ``attempt`` allocates.
    attempt : callable
        Does the work on ``device``.
    fallback : callable, optional
        Does the same work on the host (or, for a cache such as a mirror, does without
        it); None means there is none, so the error propagates.
    """
    if device is CPU:
        return attempt()
    try:
        return attempt()
    except backend_for(device).oom_errors:
        pass  # (retried outside the handler: a second error does not chain to the first)
    except NotImplementedError as declined:
        return after_declined(op, device, declined, fallback)
    return after_oom(op, device, attempt, fallback)


def after_oom(op: str, device: Device, attempt: Callable[[], T],
              fallback: Callable[[], T] | None = None) -> T:
    """:func:`retrying` once its first attempt has run out of memory on ``device``: free,
    retry, then ``fallback()`` (for a caller that made the first attempt itself)."""
    free(device)
    try:
        return attempt()
    except backend_for(device).oom_errors as second:
        return _on_host(op, device, second, fallback, "out of memory")
    except NotImplementedError as declined:
        return _on_host(op, device, declined, fallback, "not implemented")


def after_declined(op: str, device: Device, declined: NotImplementedError,
                   fallback: Callable[[], T] | None = None) -> T:
    """:func:`retrying` once an attempt on ``device`` raised ``declined``: ``fallback()``,
    counted and warned (for a caller that made the attempt itself)."""
    return _on_host(op, device, declined, fallback, "not implemented")


def _on_host(op: str, device: Device, error: BaseException, fallback: Callable[[], T] | None,
             reason: str) -> T:
    """Run ``fallback()`` in place of what failed on ``device`` with ``error``; count it
    once it has worked (a refused view raises instead). Without a fallback, or under
    ``AUTODEV_FALLBACK=raise``, ``error`` propagates."""
    if fallback is None or ENV.fallback == "raise":
        raise error
    token = _FAILED.set(error)  # (what a refused view reports: :func:`refuse_view`)
    try:
        result = fallback()
    finally:
        _FAILED.reset(token)
    note_fallback(op, str(device), error, reason=reason)
    return result


#: The device error whose host fallback is running in this context, if one is.
_FAILED: ContextVar[BaseException | None] = ContextVar("autodev_failed", default=None)


#: What else holds memory autodev can give up, each released by calling it
#: (:mod:`autodev._residency.reuse` adds the mirrors it shares through storages; the fused
#: chains' pass keeps scratch buffers on the host).
RELEASERS: list[Callable[[], object]] = [_blocked.release_spare]


def free(device: Device) -> None:
    """Release what autodev can on ``device``: every mirror, then the pool's cached blocks."""
    R.drop_mirrors()
    for release in RELEASERS:
        release()
    backend_for(device).free_memory()


def host_pooled(attempt: Callable[[], T], repeatable: bool) -> T:
    """Run the large host call ``attempt()`` with its buffers from the host pool
    (:func:`autodev._host_buffers.large_buffers`); on ``MemoryError``, release what autodev
    holds on the host (:func:`free`) and, if the call is ``repeatable`` (it wrote into no
    ``out=``), run it once more."""
    with large_buffers():
        try:
            return attempt()
        except MemoryError:
            if not repeatable:
                raise
        free(CPU)  # (outside the handler: a second error does not chain to the first)
        return attempt()


def write_back(native: Any, device: Device, host: np.ndarray,
               moves: list[tuple[str, int]] | None = None) -> None:
    """Copy ``host`` into the existing array ``native`` on ``device``, counted as a
    transfer (a host fallback of an in-place call ends here: it must not need a new
    device array, since the device has just run out of memory)."""
    if device is CPU:
        native[...] = host
        return
    backend_for(device).write_host(native, host)
    STATS.h2d_count += 1
    STATS.h2d_bytes += host.nbytes
    if moves is not None:
        moves.append(("h2d", host.nbytes))


def in_place_on_host(op: str, array: Any, apply: Callable[[np.ndarray], T]) -> T:
    """The host fallback of an in-place call on a device ``array``: ``apply`` to a
    host copy, written back into the same device memory (so views keep seeing it)."""
    host = R.host_copy(array._native, array._device)
    result = apply(host)
    write_back(array._native, array._device, host)
    return result


def check_not_view(op: str, device: Device, host_inputs: tuple[Any, ...], result: Any) -> None:
    """Refuse a host fallback whose result views a host copy of a device input."""
    for r in result if isinstance(result, (tuple, list)) else (result,):
        if type(r) is not np.ndarray or r.base is None:
            continue
        if any(type(h) is np.ndarray and np.may_share_memory(r, h) for h in host_inputs):
            refuse_view(op, device)


def refuse_view(op: str, device: Device) -> NoReturn:
    """Refuse the host fallback of a view call that cannot stay a view: ``MemoryError``
    after out-of-memory, the device's own ``NotImplementedError`` where it declined."""
    failed = _FAILED.get()
    if isinstance(failed, NotImplementedError):
        raise NotImplementedError(
            f"{op} is not implemented on {device} ({failed}), and on the CPU it would "
            "return a copy where NumPy returns a view (writes through it would be lost). "
            "Move the array first with x.to_device('cpu')."
        ) from failed
    raise MemoryError(
        f"{op} ran out of memory on {device}, and on the CPU it would return a copy "
        "where NumPy returns a view (writes through it would be lost). Free device "
        "memory (drop references to large arrays) or move the array first with "
        "x.to_device('cpu')."
    )
