"""Residency: root storages with write versions, and read-only mirrors.

An array holds one *primary* native array on one device. It may also hold a
*mirror*: a copy on another device, valid only while the write version of the
root storage it shares with its views is unchanged. Every write bumps that
version. A storage whose memory escaped autodev (a raw NumPy buffer wrapped
without a copy, or a writable host buffer handed out) can be written behind
autodev's back, so mirrors of it are never trusted.

Read-only arrays (NumPy's ``WRITEABLE`` flag) hold on every device. On the host the
flag is the NumPy array's own. Device memory has no such flag (CuPy's arrays are always
writable), so for a device array the storage keeps it: the views made read-only, and
whether the view owning the memory is. Every write path asks :func:`check_writeable`
before it writes; a view made on the device inherits its base's flag (:func:`inherit`).
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Protocol

import numpy as np

from .._backends import backend_for
from .._device import CPU, Device
from .._trace import STATS


class Storage:
    """What views of one buffer share: a write version, an escape flag, whether any of its
    arrays holds a mirror (so a write knows there is device memory to release), and the
    reuse credit earned towards the other device (see :mod:`autodev._residency.reuse`)."""

    __slots__ = ("version", "escaped", "mirrored", "credit", "credit_at", "credit_calls",
                 "credit_version", "shared", "read_only", "owner_read_only", "arrays",
                 "__weakref__")

    def __init__(self, escaped: bool = False) -> None:
        self.version = 0
        self.escaped = escaped
        self.mirrored = False
        self.credit = 0.0  # seconds the other device would have saved
        self.credit_at = 0  # the priced call that last added to it
        self.credit_calls = 0
        self.credit_version = 0  # the write version it was earned at
        #: Mirrors every view of this geometry may read (made by reuse credit, so that
        #: ``X.T`` made afresh each iteration finds the mirror the last one paid for):
        #: ``(device, shape, strides, dtype, address) -> (version, native)``.
        self.shared: dict[tuple[Any, ...], tuple[int, Any]] | None = None
        #: The device arrays viewing it that are read-only: ``id(array) -> weak reference``.
        self.read_only: dict[int, "weakref.ref[Any]"] | None = None
        #: True while the array owning the memory is read-only: no view of it may then be
        #: made writable (NumPy's rule for ``setflags(write=True)``).
        self.owner_read_only = False
        #: The arrays sharing it while it lives on a device (``id(array) -> weak
        #: reference``), so that it can move to the host with all its views
        #: (:func:`move_to_host`); host arrays are not listed (host memory does not move).
        self.arrays: dict[int, "weakref.ref[Any]"] | None = None


class Resident(Protocol):
    """What residency reads and writes of an array (``autodev.ndarray`` and the sparse
    matrices fit): its native data, the device holding it, its storage and its mirror."""

    _native: Any
    _device: Device
    _storage: Storage | None
    _mirror: tuple[Device, int, Any] | None


#: Arrays currently holding a mirror (id -> weak reference), so memory pressure
#: can drop them all. Not a WeakSet: arrays are unhashable, as NumPy's are.
_MIRRORED: dict[int, "weakref.ref[Any]"] = {}


def _remember(array: Resident) -> None:
    key = id(array)

    def forget(ref: "weakref.ref[Any]") -> None:
        if _MIRRORED.get(key) is ref:
            del _MIRRORED[key]

    _MIRRORED[key] = weakref.ref(array, forget)


def storage_of(array: Resident) -> Storage:
    """The array's storage, created on first need."""
    storage = array._storage
    if storage is None:
        storage = array._storage = Storage()
        if array._device is not CPU:
            track(storage, array)
    return storage


def track(storage: Storage, array: Resident) -> None:
    """Note that device array ``array`` shares ``storage`` (called by whatever gives a
    device array a storage), so that the storage can move to the host with it."""
    if storage.arrays is None:
        storage.arrays = {}
    _hold_weakly(storage.arrays, array)


def _hold_weakly(table: dict[int, "weakref.ref[Any]"], array: Resident) -> None:
    """Add ``array`` to ``table`` (``id -> weak reference``) until it is collected."""
    key = id(array)

    def forget(ref: "weakref.ref[Any]") -> None:
        if table.get(key) is ref:
            del table[key]

    table[key] = weakref.ref(array, forget)


def mirror_on(array: Resident, device: Device) -> Any | None:
    """The array's valid mirror on ``device`` (its own, or one its storage shares), or None."""
    mirror = array._mirror
    storage = array._storage
    if mirror is not None and mirror[0] is device:
        # a mirror is made only for an array with a storage (storage_of)
        if storage.escaped or mirror[1] != storage.version:  # type: ignore[union-attr]
            array._mirror = None
            return None
        return mirror[2]
    if storage is None or not storage.shared:
        return None
    found = storage.shared.get(view_key(array, device))
    if found is None or found[0] != storage.version or storage.escaped:
        return None  # stale, or its memory escaped since: written behind autodev's back
    return found[1]


def has_mirror(array: Resident, device: Device) -> bool:
    """True if ``array`` can be read on ``device`` without a transfer (a valid mirror)."""
    if array._mirror is None and (array._storage is None or not array._storage.shared):
        return False
    return mirror_on(array, device) is not None


def view_key(array: Resident, device: Device) -> tuple[Any, ...]:
    """What names ``array``'s view of its buffer, for a mirror on ``device``."""
    data = array._native
    return (device, data.shape, data.strides, data.dtype.str,
            backend_for(array._device).address(data))



def native_on(array: Resident, device: Device, moves: list[tuple[str, int]] | None = None) -> Any:
    """The array's data as a native array of ``device``, transferring if needed.

    A transfer leaves a mirror behind (unless the storage escaped), so the next
    read on that device is free.
    """
    if array._device is device:
        return array._native
    found = mirror_on(array, device)
    if found is not None:
        return found
    native = transfer(array._native, array._device, device, moves)
    storage = storage_of(array)
    if not storage.escaped:
        array._mirror = (device, storage.version, native)
        storage.mirrored = True
        if id(array) not in _MIRRORED:
            _remember(array)
    return native


def transfer(native: Any, source: Device, target: Device,
             moves: list[tuple[str, int]] | None = None) -> Any:
    """Copy a native array between devices through the host, counting bytes."""
    host = native
    if source is not CPU:
        host = backend_for(source).to_host(native)
        STATS.d2h_count += 1
        STATS.d2h_bytes += host.nbytes
        if moves is not None:
            moves.append(("d2h", host.nbytes))
    if target is CPU:
        return host
    out = backend_for(target).from_host(host)
    STATS.h2d_count += 1
    STATS.h2d_bytes += host.nbytes
    if moves is not None:
        moves.append(("h2d", host.nbytes))
    return out


def host_copy(native: Any, device: Device) -> np.ndarray:
    """A NumPy array with the data of ``native`` (itself if already on the host)."""
    return native if device is CPU else transfer(native, device, CPU)


def drop_mirrors() -> int:
    """Drop every mirror (first thing freed under device-memory pressure)."""
    dropped = 0
    for ref in list(_MIRRORED.values()):
        array = ref()
        if array is not None and array._mirror is not None:
            array._mirror = None
            dropped += 1
    _MIRRORED.clear()
    return dropped


def mark_written(array: Resident) -> None:
    """Record a write through ``array`` (invalidates mirrors of all its views)."""
    storage = array._storage
    if storage is not None:
        storage.version += 1
        if storage.mirrored or storage.shared:
            _drop_stale(storage)
    array._mirror = None


def _drop_stale(storage: Storage) -> None:
    """Release the mirrors a write to ``storage`` made stale, held by any of its views,
    now rather than when each view is next read (they hold device memory)."""
    storage.mirrored = False
    storage.shared = None  # the mirrors reuse credit made for every view of it
    for key, ref in list(_MIRRORED.items()):
        array = ref()
        if array is not None and array._storage is storage:
            array._mirror = None
            del _MIRRORED[key]


# ---------------------------------------------------------------------- for other array types
# Sparse matrices (autodev.scipy.sparse) hold their data as dense arrays do (``_native``,
# ``_device``, ``_storage``, ``_mirror``) but move it by their own copy: these functions
# let them share the rules above instead of repeating them.

def native_via(array: Any, device: Device,
               copy: Callable[[Any, Device, list[tuple[str, int]] | None], Any],
               moves: list[tuple[str, int]] | None = None) -> Any:
    """:func:`native_on` for an array type that moves by its own
    ``copy(array, device, moves)``: its data on ``device``, from the primary, a valid
    mirror, or a copy that stays behind as the mirror."""
    if array._device is device:
        return array._native
    found = mirror_on(array, device)
    if found is not None:
        return found
    native = copy(array, device, moves)
    keep_mirror(array, device, native)
    return native


def keep_mirror(array: Any, device: Device, native: Any) -> None:
    """Keep ``native`` as ``array``'s mirror on ``device``, valid until the next write
    to its storage (none if the storage escaped); memory pressure drops it with the rest."""
    storage = storage_of(array)
    if storage.escaped:
        return
    array._mirror = (device, storage.version, native)
    storage.mirrored = True
    if id(array) not in _MIRRORED:
        _remember(array)


def is_mirror(array: Any, device: Device, native: Any) -> bool:
    """True if ``native`` is ``array``'s mirror on ``device``: read-only, never to be
    handed out as a result's data (copy it first)."""
    return has_mirror(array, device) and mirror_on(array, device) is native


def count_transfer(direction: str, nbytes: int,
                   moves: list[tuple[str, int]] | None = None) -> None:
    """Count one copy of ``nbytes`` (``"h2d"`` or ``"d2h"``) in the stats and ``moves``."""
    if direction == "h2d":
        STATS.h2d_count += 1
        STATS.h2d_bytes += nbytes
    else:
        STATS.d2h_count += 1
        STATS.d2h_bytes += nbytes
    if moves is not None:
        moves.append((direction, nbytes))


def promote(array: Any, device: Device, native: Any) -> None:
    """Make ``native`` (``array``'s data on ``device``, maybe its mirror there) the
    primary, as before a write on ``device``: the mirror it was is gone, and ``array``
    leaves the storage it shared with views of its old primary."""
    if array._mirror is not None and array._mirror[2] is native:
        array._mirror = None
    array._native, array._device, array._storage = native, device, None


# ---------------------------------------------------------------------- read-only arrays

#: NumPy's message for a write into a read-only array (``a[...] = v``, ``copyto``, ...).
READ_ONLY = "assignment destination is read-only"


def is_writeable(array: Resident) -> bool:
    """``array.flags.writeable``: the host array's own flag, or the storage's for a
    device array."""
    if array._device is CPU:
        return bool(array._native.flags.writeable)
    storage = array._storage
    return storage is None or not storage.read_only or id(array) not in storage.read_only


def check_writeable(array: Resident, message: str = READ_ONLY) -> None:
    """Raise NumPy's ``ValueError`` (``message``) if ``array`` is read-only, before a write."""
    if not is_writeable(array):
        raise ValueError(message)


def set_writeable(array: Resident, write: bool) -> None:
    """``array.setflags(write=...)`` for an array living on any device."""
    if array._device is CPU:
        array._native.setflags(write=write)
        return
    storage = storage_of(array)
    owns = getattr(array._native, "base", None) is None
    if write:
        if storage.owner_read_only and not owns:
            raise ValueError("cannot set WRITEABLE flag to True of this array")
        if storage.read_only:
            storage.read_only.pop(id(array), None)
    else:
        _add_read_only(storage, array)
    if owns:
        storage.owner_read_only = not write


def _add_read_only(storage: Storage, array: Resident) -> None:
    if storage.read_only is None:
        storage.read_only = {}
    _hold_weakly(storage.read_only, array)


def inherit(view: Resident, base: Resident) -> None:
    """Make ``view`` (just made from ``base`` on a device) read-only if ``base`` is, as
    NumPy's views take their base's flag."""
    if view._device is not CPU and not is_writeable(base):
        _add_read_only(storage_of(view), view)


def make_read_only(array: Resident) -> None:
    """Make ``array`` read-only, as NumPy's always read-only views are (``diagonal``,
    ``broadcast_to``, ``as_strided(writeable=False)``), on any device."""
    if array._device is CPU:
        array._native.flags.writeable = False
    else:
        _add_read_only(storage_of(array), array)


def host_to_write(array: Resident) -> np.ndarray:
    """The host data a NumPy function writes into for ``array``: its own on the host, else
    a host copy to write back, read-only where ``array`` is (so NumPy refuses the write
    with its own error, as it does on the host)."""
    if array._device is CPU:
        return array._native
    host = transfer(array._native, array._device, CPU)
    if not is_writeable(array):
        host.flags.writeable = False
    return host
