"""Reuse credit: move an array that calls keep reusing, once, when reuse has paid for it.

A per-call choice never moves a large host array used many times: each call alone
pays the whole transfer, so the CPU wins every time (the README's power iteration).
This is the ski-rental problem. Renting is running a call on the device where the
data is although the other device would have been faster *had the data been
there*; buying is copying the data there (a read-only mirror). The rule:

* on every call the cost model prices, each input on device A whose absence from
  device B is what keeps the call on A earns *credit*: the time the call would have
  saved on B had that input already been there (``t_A - (t_B - move)``);
* when an input's credit reaches the cost of moving it, it is mirrored on B (paying
  the move once) and the call runs there.

So rent paid never exceeds the move's price before the move is made: whatever the
future holds, the time spent is at most twice that of the best fixed placement
(all on A, or move first and stay on B), and after the move a loop runs at B's speed.

Credit belongs to the root storage (views share it), is reset by any write (a
written array would have to move again), and halves every ``HALF_LIFE`` priced
calls without this storage being credited, so reuse that stopped long ago does not
move an array now. Mirrors made this way stay within a device-memory budget
(``AUTODEV_MIRROR_BUDGET``), oldest evicted first, and are dropped first under
out-of-memory with every other mirror.
"""

from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable

from . import memory as _memory
from . import storage as R
from .._backends._base import Backend
from .._config import ENV
from .._cost.model import CostModel
from .._device import CPU, Device
from .._trace import STATS, Record, emit

#: Priced calls after which unused credit is worth half: long enough that a loop body
#: of hundreds of calls keeps nearly all of it between two uses of an array.
HALF_LIFE = 4096.0
#: Device memory assumed when a backend cannot say (bytes).
_UNKNOWN_MEMORY = 8 << 30

_CLOCK = itertools.count(1)
#: GPU mirrors made by credit, oldest first: (array, storage, shared key, bytes), the
#: first two as weak references; keyed by a counter, in the order they were made.
_CREDITED: dict[int, tuple[Any, ...]] = {}
_IDS = itertools.count()


def decayed(storage: R.Storage, now: int) -> float:
    """The storage's credit at priced call ``now`` (0 after a write)."""
    if storage.credit_version != storage.version:
        storage.credit = 0.0
        storage.credit_calls = 0
        storage.credit_version = storage.version
        return 0.0
    if storage.credit and now > storage.credit_at:
        return storage.credit * 0.5 ** ((now - storage.credit_at) / HALF_LIFE)
    return storage.credit


def candidates(arrays: list[Any], t_cpu: float, t_gpu: float, winner: Device, gdev: Device,
               model: CostModel) -> list[tuple[Any, Device, float, float]]:
    """The inputs a priced call credits: ``(array, other device, move cost, time saved)``
    for each input whose absence from the other device is what keeps the call where it
    runs and that has no valid mirror there.

    It reads only what prices the call (devices, sizes, mirrors, the predicted times), so
    a call with none credits nothing and is decided again the same way while those stay
    (:mod:`autodev._dispatch` caches such decisions, calling :func:`passed` instead)."""
    found = []
    for a in arrays:
        if a._device is CPU:
            if winner is gdev:
                continue  # the call moves it anyway (and leaves a mirror)
            target, cost = gdev, model.h2d(a.nbytes)
            saved = t_cpu - (t_gpu - cost)
        else:
            if winner is CPU:
                continue
            target, cost = CPU, model.d2h(a.nbytes)
            saved = t_gpu - (t_cpu - cost)
        if saved > 0.0 and not R.has_mirror(a, target):
            found.append((a, target, cost, saved))
    return found


def passed() -> None:
    """Count a priced call that credits nothing (credit decays by priced calls)."""
    next(_CLOCK)


def credit(found: list[tuple[Any, Device, float, float]], gpu: Backend,
           watched: bool) -> str | None:
    """Credit a priced call's :func:`candidates`; mirror the first whose credit paid its
    move.

    Returns the reason of the move made (the call should be priced again), or None.
    """
    now = next(_CLOCK)
    for a, target, cost, saved in found:
        storage = R.storage_of(a)
        if storage.escaped:
            continue  # a mirror of memory others may write is never trusted
        total = decayed(storage, now) + saved
        storage.credit, storage.credit_at = total, now
        storage.credit_calls += 1
        if total >= cost:
            reason = (f"reuse credit {total * 1e3:.3g} ms >= move {cost * 1e3:.3g} ms "
                      f"after {storage.credit_calls} calls")
            if _mirror(a, target, gpu, reason, watched):
                storage.credit, storage.credit_calls = 0.0, 0
                return reason
    return None


def _mirror(a: Any, target: Device, gpu: Backend, reason: str, watched: bool) -> bool:
    """Mirror ``a`` on ``target`` within the budget; trace and count the move.

    An array's mirror is shared through its storage with every later view of the
    same geometry (``X.T`` is a new array each time it is written, the same view).

    Returns whether it was made: not when it does not fit the budget, nor when the
    device cannot make it (out of memory after a retry, or not implemented). A mirror
    is a cache, so the move is then simply not made, counted as a fallback and traced
    (:func:`autodev._residency.memory.retrying`), and the array's credit starts over.
    """
    nbytes = a.nbytes
    if target is not CPU and not _make_room(nbytes, gpu):
        return False
    record = Record(op="move", shapes=(a.shape,), dtype=str(a.dtype), device=str(target),
                    reason=reason) if watched else None
    moves = record.transfers if record is not None else None
    copy = _copier(type(a))
    native = _memory.retrying("reuse move", target, lambda: copy(a, target, moves), _not_made)
    if native is _NOT_MADE:
        a._storage.credit, a._storage.credit_calls = 0.0, 0
        if record is not None:
            record.device = str(a._device)
            record.reason += (f"; {target} failed to make the mirror, the data stays on "
                              f"{a._device}")
            emit(record)
        return False
    STATS.reuse_moves += 1
    STATS.reuse_bytes += nbytes
    storage = a._storage
    key = None
    if issubclass(type(a), tuple(SHARED_BY_VIEWS)):  # an ndarray (or a subclass instance):
        # views of its geometry may read the mirror
        key = R.view_key(a, target)
        if storage.shared is None:
            storage.shared = {}
        storage.shared[key] = (storage.version, native)
    if target is not CPU:
        _CREDITED[next(_IDS)] = (weakref.ref(a), weakref.ref(storage), key, nbytes)
    if record is not None:
        emit(record)
    return True


def _copier(cls: type) -> Callable[[Any, Device, Any], Any]:
    """How to materialise an array of type ``cls`` on a device: its own entry in
    ``_NATIVE_ON``, or its nearest base class's (a user's subclass of ``autodev.ndarray``)."""
    for base in cls.__mro__:
        found = _NATIVE_ON.get(base)
        if found is not None:
            return found
    raise TypeError(f"no way to move a {cls.__name__} is registered (reuse._NATIVE_ON)")


#: What a mirror the device could not make is, in :func:`_mirror`.
_NOT_MADE: Any = object()


def _not_made() -> Any:
    return _NOT_MADE


def budget(gpu: Backend) -> int:
    """Bytes of device memory that credit-made mirrors may hold."""
    info = gpu.memory_info()
    total = info[1] if info is not None else _UNKNOWN_MEMORY
    return int(ENV.mirror_budget * total)


def _live(entry: tuple[Any, ...]) -> bool:
    array_ref, storage_ref, key, _ = entry
    storage = storage_ref()
    if key is not None:
        return storage is not None and bool(storage.shared) and key in storage.shared
    array = array_ref()
    return array is not None and array._mirror is not None


def _evict(entry: tuple[Any, ...]) -> None:
    array_ref, storage_ref, key, _ = entry
    array, storage = array_ref(), storage_ref()
    if storage is not None and key is not None and storage.shared:
        storage.shared.pop(key, None)
    if array is not None:
        array._mirror = None


def _make_room(nbytes: int, gpu: Backend) -> bool:
    """Evict the oldest credit-made mirrors until ``nbytes`` more fit the budget."""
    limit = budget(gpu)
    if nbytes > limit:
        return False
    for k in [k for k, entry in _CREDITED.items() if not _live(entry)]:
        del _CREDITED[k]
    used = sum(entry[3] for entry in _CREDITED.values())
    for k in list(_CREDITED):
        if used + nbytes <= limit:
            break
        entry = _CREDITED.pop(k)
        _evict(entry)
        used -= entry[3]
    return True


def forget_all() -> None:
    """Drop the credit-made mirrors (device memory is short, or a test ends)."""
    for entry in _CREDITED.values():
        _evict(entry)
    _CREDITED.clear()


_memory.RELEASERS.append(forget_all)  # under out-of-memory, with every other mirror


def credited_bytes() -> int:
    """Bytes held by live credit-made mirrors on the GPU."""
    return sum(entry[3] for entry in _CREDITED.values() if _live(entry))


#: How to materialise an input on a device (leaving a mirror), by type; the array
#: classes register themselves (ndarray in autodev._dispatch, sparse matrices in theirs).
_NATIVE_ON: dict[type, Callable[[Any, Device, Any], Any]] = {}
#: Types whose mirrors later views of the same geometry may read (``autodev.ndarray``).
SHARED_BY_VIEWS: set[type] = set()
