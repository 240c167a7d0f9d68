"""Host-memory protocols of autodev arrays: ``__array__``, the buffer protocol,
``__array_interface__``, ``ctypes``, ``data``, ``setflags`` and ``bytes()``.

The rule, in every mode: an array living on the host *shares* its memory, as NumPy's
does (and its storage is marked escaped, since it may now be written behind autodev's
back, so no mirror of it is trusted any more). An array living on a device never hands
out a *writable* host copy, since writes to it would be lost without a word.
A consumer of host memory (``numpy.asarray(x)``, the buffer protocol: ``memoryview(x)``,
``numpy.frombuffer(x)``; ``__array_interface__``, ``__array_struct__``, ``.ctypes``,
``ndarray(buffer=x)``) given a device array moves its memory to the host first (a counted
transfer, as any move: ``autodev.stats()`` shows it) and shares that memory, so it gets
what it would get from a host array (writable unless the array is read-only, with the
same strides and address offsets), and its writes are the array's. Memory that views
share moves with all of them, as one block: they view one host copy as they viewed the
device memory. Only memory that escaped autodev (a native device array shares it) cannot
move: there ``numpy.asarray`` gives a read-only copy, and the consumers that keep a pointer
are refused. ``bytes`` and ``.data`` give a read-only copy (a copy is what they hold).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import storage as R
from .._backends import backend_for
from .._device import CPU
from .._fusion import before_write
from .._refcounts import holders


def shared_host(a: R.Resident) -> np.ndarray:
    """The host memory of a host-resident array, marked escaped if writable."""
    data = a._native
    if data.flags.writeable:
        escape(a)
    return data


def escape(a: R.Resident) -> None:
    """Mark the host-resident ``a``'s memory as handed out: it may be written behind our
    back (a pending chain reading it runs first)."""
    before_write()
    R.storage_of(a).escaped = True


def read_only_copy(a: R.Resident) -> np.ndarray:
    """A read-only host copy of a device-resident array (a write raises ValueError)."""
    host = R.host_copy(a._native, a._device)
    host.flags.writeable = False
    return host


def host_array(a: R.Resident, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``numpy.asarray(a)`` / ``numpy.array(a)``: shared on the host; a device array moves
    to the host and shares it too (``copy=None``, :func:`move_home`); else a copy that is
    read-only unless the caller asked for a copy (``copy=True``)."""
    if a._device is CPU:
        if copy:
            return np.array(a._native, dtype=dtype, copy=True)
        data = shared_host(a)
        # copy=False with another dtype: NumPy's ValueError (a cast cannot share memory)
        return data if dtype is None else np.asarray(data, dtype=dtype, copy=copy)
    if copy is False:
        raise ValueError(
            f"Unable to avoid a copy: this array lives on {a._device}. "
            "Use x.to_device('cpu') or numpy.asarray(x) (which copies)."
        )
    if copy is None and move_home(a):
        # the device memory (with any views of it) moved: the host copy is the array's data,
        # as writable as NumPy's asarray of a host array (compiled kernels such as
        # SciPy's sosfilt need a writable buffer), and a write to it is the array's
        data = shared_host(a)
        return data if dtype is None else np.asarray(data, dtype=dtype)
    host = R.host_copy(a._native, a._device)
    if dtype is not None:
        host = host.astype(dtype, copy=False)
    if not copy:
        host.flags.writeable = False  # numpy.asarray's result must not lose writes
    return host


def move_home(a: R.Resident, alone: bool = False) -> bool:
    """Make the host memory ``a``'s own, for a consumer that shares it (a counted transfer).
    A device array that owns its memory and shares it with no view moves alone; device
    memory that views share moves with all of them (:func:`_move_shared`); a view held
    alone of memory that cannot move so moves alone, as a copy. Keeps each array's
    read-only flag. False, with ``a`` left where it is, where others share memory that
    cannot move (it escaped autodev, or is not laid out as one array of the device), or,
    with ``alone``, where any other array shares it."""
    if a._device is CPU:
        return True
    held_alone = _held_alone(a)
    if not held_alone and alone:
        return False
    if not (held_alone and _owns_its_memory(a._native)) and _move_shared(a):
        return True
    if held_alone:  # (a view of memory that is not one array of the device: as_strided's)
        writeable = R.is_writeable(a)
        host = R.host_copy(a._native, a._device)
        R.promote(a, CPU, host)
        if not writeable:
            host.flags.writeable = False
        return True
    return False


def _owns_its_memory(native: Any) -> bool:
    """True for a device array laid out as the memory it owns, whose host copy is its
    memory: not a view (CuPy's ``as_strided`` makes views with no base, so contiguity
    tells those apart)."""
    flags = native.flags
    return getattr(native, "base", None) is None and (flags.c_contiguous or flags.f_contiguous)


def _move_shared(a: R.Resident) -> bool:
    """Move the device memory ``a`` views to the host with every array sharing it: the
    array owning that memory is copied once (or, where that owner is not an array of the
    device they all view, as with ``as_strided``'s views, the bytes they read), and each array
    becomes the view of the copy it was of the original (same offset, strides and flags),
    so writes through any of them are seen by all, as before. Mirrors of the memory are
    dropped (they mirrored the host)."""
    arrays = _sharing(a)
    if arrays is None:
        return False
    backend = backend_for(a._device)
    owner = backend.owner(a._native)  # (views of one storage are of one allocation)
    found = backend.owner_to_host(a._native) if all(
        backend.owner(b._native) is owner for b in arrays) else None
    owned = found is not None
    if found is None:
        found = backend.span_to_host([b._native for b in arrays])
        if found is None:
            return False
    host_owner, start = found
    R.count_transfer("d2h", host_owner.nbytes)
    read_only = [not R.is_writeable(b) for b in arrays]
    hosts = [_host_view(backend, b._native, host_owner, start, owned) for b in arrays]
    for b, host, frozen in zip(arrays, hosts, read_only):
        if frozen:
            host.flags.writeable = False
        b._native, b._device, b._mirror = host, CPU, None
    storage = a._storage
    if storage is not None:  # now a host storage: no device arrays, flags or mirrors
        if storage.owner_read_only:  # NumPy's rule: no view of it may become writable
            host_owner.flags.writeable = False
        storage.arrays = storage.read_only = storage.shared = None
        storage.owner_read_only = storage.mirrored = False
        storage.version += 1  # (mirrors made of any of them before are stale)
    return True


def _host_view(backend: Any, native: Any, host_owner: np.ndarray, start: int,
               owned: bool) -> np.ndarray:
    """The view of ``host_owner`` (the host copy of device memory starting at ``start``:
    of the array owning it, if ``owned``) that device array ``native`` is of that memory."""
    if owned and getattr(native, "base", None) is None:
        return host_owner  # the owner itself
    offset = backend.address(native) - start if native.size else 0
    return np.ndarray(native.shape, native.dtype, host_owner, offset, native.strides)


def _sharing(a: R.Resident) -> list[Any] | None:
    """The arrays sharing ``a``'s device memory (``a`` among them), or None if they are not
    all known: its storage escaped autodev (a native array of the device views it too), or
    something that is not a noted array of this device shares the storage."""
    storage = a._storage
    if storage is None:
        return [a]
    if storage.escaped or not storage.arrays:
        return None
    arrays = [b for b in (ref() for ref in list(storage.arrays.values()))
              if b is not None and b._storage is storage]
    if not any(b is a for b in arrays) or any(b._device is not a._device for b in arrays):
        return None
    # held by each array's slot; one more is a holder autodev did not note, which would go
    # on viewing the device memory
    return arrays if holders(storage) == len(arrays) else None


def shared_views_message(what: str, a: R.Resident) -> str:
    """The message refusing ``what`` on a device array whose memory cannot move."""
    return (f"{what}: this array lives on {a._device}, where its memory is shared outside "
            "autodev (a native device array views it), so it cannot move to the host; "
            "use numpy.asarray(x) for a read-only copy, or x = x.to_device('cpu') for a "
            "copy of it on the host")


def _held_alone(a: R.Resident) -> bool:
    """True if no other array shares ``a``'s memory: it has no storage, or holds the only
    reference to it (the views that shared it are gone) and it never escaped autodev."""
    storage = a._storage
    if storage is None:
        return True
    return not storage.escaped and holders(storage) <= 1  # (a's slot)


def array_interface(a: R.Resident) -> dict[str, Any]:
    """``__array_interface__``: the host memory (:func:`move_home`); AttributeError
    where the device memory cannot move, so NumPy takes ``__array__``'s read-only copy."""
    if not move_home(a):
        raise AttributeError(shared_views_message("__array_interface__", a))
    return shared_host(a).__array_interface__


def array_struct(a: R.Resident) -> Any:
    """``__array_struct__`` (a capsule of NumPy's C array interface) of the host
    memory; AttributeError where the device memory cannot move, as
    :func:`array_interface`."""
    if a._native.dtype.names is None and not move_home(a):
        raise AttributeError(shared_views_message("__array_struct__", a))
    if a._native.dtype.names is not None:  # the capsule drops the fields (a V dtype is read)
        raise AttributeError("__array_struct__: a structured array is read through "
                             "__array_interface__, which keeps its fields")
    return shared_host(a).__array_struct__


def ctypes(a: R.Resident) -> Any:
    """``a.ctypes`` of the host memory (:func:`move_home`); ValueError where the device
    memory cannot move (a host pointer would miss writes to it)."""
    if not move_home(a):
        raise ValueError(shared_views_message("x.ctypes", a))
    return shared_host(a).ctypes


def data(a: R.Resident) -> memoryview:
    """``a.data``: the host memory as a memoryview (read-only for a device array)."""
    # NumPy's stubs declare ndarray.__buffer__ for Python 3.12+ only
    return memoryview(shared_host(a) if a._device is CPU else read_only_copy(a))  # type: ignore[arg-type]


def set_flags(a: R.Resident, write: bool | None = None, align: bool | None = None,
              uic: bool | None = None) -> None:
    """``a.setflags``: NumPy's on the host; on a device, ``write`` as NumPy's (kept by the
    storage, :func:`autodev._residency.storage.set_writeable`)."""
    if a._device is CPU:
        a._native.setflags(write=write, align=align, uic=uic)
        return
    if uic:
        raise ValueError("cannot set WRITEBACKIFCOPY flag to True")
    if align is False:
        raise ValueError(
            f"cannot clear the ALIGNED flag of an array living on {a._device} (device "
            "memory is always aligned). Move it first with x = x.to_device('cpu')."
        )
    if write is not None:
        R.set_writeable(a, bool(write))


def set_strides(a: R.Resident, strides: Any) -> None:
    """``a.strides = ...`` (deprecated since NumPy 2.4): NumPy's, with its checks against
    the memory ``a`` views and its DeprecationWarning. No device library re-views memory
    in place, so a device array moves to the host first (:func:`move_home`), as for any
    consumer of its host memory."""
    if not move_home(a):
        raise AttributeError(shared_views_message("setting the strides", a))
    a._native.strides = strides
    a._mirror = None  # it has the old strides


class DeviceFlags:
    """``x.flags`` of an array living on a device: NumPy's flags object, read from the
    array's geometry and its storage (a device array has no NumPy flags of its own, and
    CuPy's lack ``WRITEABLE``). ``writeable`` is set as on NumPy's."""

    __slots__ = ("_array",)

    #: NumPy's keys, long and short, for each flag.
    _KEYS = {
        "C_CONTIGUOUS": "c_contiguous", "C": "c_contiguous", "CONTIGUOUS": "c_contiguous",
        "F_CONTIGUOUS": "f_contiguous", "F": "f_contiguous", "FORTRAN": "f_contiguous",
        "OWNDATA": "owndata", "O": "owndata", "WRITEABLE": "writeable", "W": "writeable",
        "ALIGNED": "aligned", "A": "aligned", "WRITEBACKIFCOPY": "writebackifcopy",
        "X": "writebackifcopy", "FNC": "fnc", "FORC": "forc", "BEHAVED": "behaved",
        "B": "behaved", "CARRAY": "carray", "CA": "carray", "FARRAY": "farray", "FA": "farray",
    }

    def __init__(self, array: R.Resident) -> None:
        self._array = array

    def _geometry(self) -> Any:
        """NumPy's flags of an array of this shape, strides and dtype (no memory read)."""
        data = self._array._native
        probe = np.lib.stride_tricks.as_strided(np.zeros(1, data.dtype), data.shape,
                                                data.strides)
        return probe.flags

    c_contiguous = property(lambda self: self._geometry().c_contiguous)
    f_contiguous = property(lambda self: self._geometry().f_contiguous)
    contiguous = c_contiguous  # NumPy's older names of the two
    fortran = f_contiguous
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    owndata = property(lambda self: getattr(self._array._native, "base", None) is None)

    @property
    def aligned(self) -> bool:
        """NumPy's rule: the first element's address, and the stride of each axis longer
        than one, are multiples of the dtype's alignment (an empty array is aligned)."""
        array = self._array
        data = array._native
        alignment = data.dtype.alignment
        if alignment <= 1 or 0 in data.shape:
            return True
        bits = backend_for(array._device).address(data)
        for n, stride in zip(data.shape, data.strides):
            if n > 1:
                bits |= stride
        return bits % alignment == 0
    writebackifcopy = property(lambda self: False)
    behaved = property(lambda self: self.aligned and self.writeable)
    carray = property(lambda self: self.c_contiguous and self.behaved)
    # NumPy's getter tests that *any* of F_CONTIGUOUS, ALIGNED, WRITEABLE is set (so a
    # strided, writable array answers True): read as NumPy answers
    farray = property(lambda self: not self.c_contiguous and (
        self.f_contiguous or self.aligned or self.writeable))

    @property
    def _warn_on_write(self) -> bool:
        """NumPy's private flag (a first write warns: its deprecations set it); unset on
        a device array, which takes it by moving to the host (where NumPy warns)."""
        return False

    @_warn_on_write.setter
    def _warn_on_write(self, value: bool) -> None:
        array = self._array
        if not move_home(array):
            raise AttributeError(shared_views_message("flags._warn_on_write", array))
        array._native.flags._warn_on_write = value

    @property
    def writeable(self) -> bool:
        return R.is_writeable(self._array)

    @writeable.setter
    def writeable(self, value: bool) -> None:
        set_flags(self._array, write=value)

    @property
    def num(self) -> int:
        """The flags as NumPy's bit mask (``NPY_ARRAY_C_CONTIGUOUS`` ...)."""
        return sum(bit for name, bit in _BITS if getattr(self, name))

    def __getitem__(self, key: str) -> bool:
        try:
            name = self._KEYS[key]
        except KeyError:
            raise KeyError("Unknown flag") from None
        return bool(getattr(self, name))

    def __setitem__(self, key: str, value: bool) -> None:
        name = self._KEYS.get(key)
        if name == "writeable":
            set_flags(self._array, write=value)
        elif name == "aligned":
            set_flags(self._array, align=value)
        elif name == "writebackifcopy":
            set_flags(self._array, uic=value)
        else:
            raise KeyError("Unknown flag")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, DeviceFlags):
            return NotImplemented
        return all(self[k] == other[k] for k in _SHOWN)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "".join(f"  {k} : {self[k]}\n" for k in _SHOWN)


#: NumPy's bit of each flag in ``flags.num`` (numpy/ndarraytypes.h, ``NPY_ARRAY_*``).
_BITS = (("c_contiguous", 0x1), ("f_contiguous", 0x2), ("owndata", 0x4),
         ("aligned", 0x100), ("writeable", 0x400), ("writebackifcopy", 0x2000))

#: The flags NumPy's ``repr(x.flags)`` shows, in its order.
_SHOWN = ("C_CONTIGUOUS", "F_CONTIGUOUS", "OWNDATA", "WRITEABLE", "ALIGNED", "WRITEBACKIFCOPY")


def to_bytes(a: Any) -> bytes:
    """``bytes(a)``: the raw data in C order, as for a NumPy array."""
    return a.tobytes()


def _exact_format(view: memoryview, dtype: np.dtype) -> bool:
    """Whether NumPy reads ``view``'s PEP 3118 format back as ``dtype``."""
    try:
        return bool(np.asarray(view).dtype == dtype)
    except RuntimeError:  # NumPy: "Item size ... does not match the dtype ... item size"
        return False


def buffer(a: R.Resident, flags: int) -> memoryview:
    """PEP 688 ``__buffer__`` (Python 3.12+): the host memory (:func:`move_home`).
    BufferError where the device memory cannot move: NumPy reads the buffer protocol before
    ``__array__`` and cannot tell a buffer that is a copy (``numpy.asarray(x, copy=False)``
    would take a copy without the ValueError NumPy promises); refused, NumPy goes on to
    ``__array__``."""
    if not move_home(a):
        raise BufferError(shared_views_message("the buffer protocol", a))
    # NumPy's stubs declare ndarray.__buffer__ for Python 3.12+ only
    view = memoryview(shared_host(a))  # type: ignore[arg-type]
    if a._native.dtype.names is not None and not _exact_format(view, a._native.dtype):
        # this structured dtype's PEP 3118 format loses padding or fields, and NumPy,
        # reading the buffer before __array_interface__, would take the wrong dtype:
        # refused, NumPy goes on to __array_interface__, which is exact
        raise BufferError(f"the buffer format of {a._native.dtype} does not describe it "
                          "exactly; use numpy.asarray(x), which reads it exactly")
    return view
