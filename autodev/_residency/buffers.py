"""Host-memory protocols of autodev arrays: ``__array__``, the buffer protocol,
``__array_interface__``, ``ctypes``, ``data``, ``setflags`` and ``bytes()``.

The rule, in every mode: an array living on the host *shares* its memory, as NumPy's
does (and its storage is marked escaped, since it may now be written behind autodev's
back, so no mirror of it is trusted any more). An array living on a device never hands
out a *writable* host copy, since writes to it would be lost without a word.
A consumer of host memory (``numpy.asarray(x)``, the buffer protocol: ``memoryview(x)``,
``numpy.frombuffer(x)``; ``__array_interface__``, ``__array_struct__``, ``.ctypes``,
``ndarray(buffer=x)``) given a device array whose memory no view shares moves it to the
host first (a counted transfer, as any move: ``autodev.stats()`` shows it) and shares
that memory, so it gets what it would get from a host array (writable unless the array
is read-only), and its writes are the array's. Where live views share the device memory
``numpy.asarray`` gives a read-only copy (a write there would miss them), and the
consumers that keep a pointer are refused: autodev could not keep that memory in step
with the views. ``bytes`` and ``.data`` give a read-only copy (a copy is what they hold).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from . import storage as R
from .._backends import backend_for
from .._device import CPU
from .._fusion import before_write


def shared_host(a: R.Resident) -> np.ndarray:
    """The host memory of a host-resident array, marked escaped if writable."""
    data = a._data
    if data.flags.writeable:
        before_write()  # (a pending chain reading this memory runs first)
        R.storage_of(a).escaped = True  # may be written behind our back
    return data


def read_only_copy(a: R.Resident) -> np.ndarray:
    """A read-only host copy of a device-resident array (a write raises ValueError)."""
    host = R.host_copy(a._data, a._device)
    host.flags.writeable = False
    return host


def host_array(a: R.Resident, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
    """``numpy.asarray(a)`` / ``numpy.array(a)``: shared on the host; a device array with
    no views moves to the host and shares it too (``copy=None``); else a copy that is
    read-only unless the caller asked for a copy (``copy=True``)."""
    if a._device is CPU:
        if copy:
            return np.array(a._data, dtype=dtype, copy=True)
        data = shared_host(a)
        # copy=False with another dtype: NumPy's ValueError (a cast cannot share memory)
        return data if dtype is None else np.asarray(data, dtype=dtype, copy=copy)
    if copy is False:
        raise ValueError(
            f"Unable to avoid a copy: this array lives on {a._device}. "
            "Use x.to_device('cpu') or numpy.asarray(x) (which copies)."
        )
    if copy is None and move_home(a):
        # no view shared the device memory: the host copy became the array's own data,
        # as writable as NumPy's asarray of a host array (compiled kernels such as
        # SciPy's sosfilt need a writable buffer), and a write to it is the array's
        data = shared_host(a)
        return data if dtype is None else np.asarray(data, dtype=dtype)
    host = R.host_copy(a._data, a._device)
    if dtype is not None:
        host = host.astype(dtype, copy=False)
    if not copy:
        host.flags.writeable = False  # numpy.asarray's result must not lose writes
    return host


def move_home(a: R.Resident) -> bool:
    """Make the host memory ``a``'s own, for a consumer that shares it: a device array
    whose memory no view shares moves to the host (a counted transfer), keeping its
    read-only flag. False, with ``a`` left where it is, if views share its device memory."""
    if a._device is CPU:
        return True
    if not _held_alone(a):
        return False
    writeable = R.is_writeable(a)
    host = R.host_copy(a._data, a._device)
    if _views_all_of(a._data):  # (a subclass's s[[0, 1]]): still a view, as NumPy's
        host = host.view()
    R.promote(a, CPU, host)
    if not writeable:
        host.flags.writeable = False
    return True


def _views_all_of(native: Any) -> bool:
    """Whether device array ``native`` views the whole of its base array, as it laid it
    out: its host copy is then a view of a copy of that base."""
    base = native.base
    return (base is not None and base.base is None and base.shape == native.shape
            and base.strides == native.strides and base.dtype == native.dtype)


def _shared_views(what: str, a: R.Resident) -> str:
    """The message refusing ``what`` on a device array whose memory views share."""
    return (f"{what}: this array lives on {a._device} and views share its memory there, "
            "so it has no host memory to share; use numpy.asarray(x) for a read-only "
            "copy, or x = x.to_device('cpu') to move it")


def _held_alone(a: R.Resident) -> bool:
    """True if no other array shares ``a``'s memory: it has no storage, or holds the only
    reference to it (the views that shared it are gone) and never handed it out."""
    storage = a._storage
    if storage is None:
        return True
    # references: a's slot, ``storage`` here, getrefcount's argument
    return not storage.escaped and sys.getrefcount(storage) <= 3


def array_interface(a: R.Resident) -> dict[str, Any]:
    """``__array_interface__``: the host memory (:func:`move_home`); AttributeError
    where views share device memory, so NumPy takes ``__array__``'s read-only copy."""
    if not move_home(a):
        raise AttributeError(_shared_views("__array_interface__", a))
    return shared_host(a).__array_interface__


def array_struct(a: R.Resident) -> Any:
    """``__array_struct__`` (a capsule of NumPy's C array interface) of the host
    memory; AttributeError where views share device memory, as :func:`array_interface`."""
    if a._data.dtype.names is None and not move_home(a):
        raise AttributeError(_shared_views("__array_struct__", a))
    if a._data.dtype.names is not None:  # the capsule drops the fields (a V dtype is read)
        raise AttributeError("__array_struct__: a structured array is read through "
                             "__array_interface__, which keeps its fields")
    return shared_host(a).__array_struct__


def ctypes(a: R.Resident) -> Any:
    """``a.ctypes`` of the host memory (:func:`move_home`); ValueError where views
    share device memory (a host pointer would miss their writes)."""
    if not move_home(a):
        raise ValueError(_shared_views("x.ctypes", a))
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
        a._data.setflags(write=write, align=align, uic=uic)
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
    the memory ``a`` views and its DeprecationWarning, on the host. A device array's
    memory is not re-viewed in place: refused, as CuPy refuses it."""
    if a._device is not CPU:
        raise AttributeError(
            f"cannot set the strides of an array living on {a._device}. Use "
            "autodev.lib.stride_tricks.as_strided(x, strides=...) for a new view.")
    a._data.strides = strides
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
        data = self._array._data
        probe = np.lib.stride_tricks.as_strided(np.zeros(1, data.dtype), data.shape,
                                                data.strides)
        return probe.flags

    c_contiguous = property(lambda self: self._geometry().c_contiguous)
    f_contiguous = property(lambda self: self._geometry().f_contiguous)
    contiguous = c_contiguous  # NumPy's older names of the two
    fortran = f_contiguous
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)
    owndata = property(lambda self: getattr(self._array._data, "base", None) is None)

    @property
    def aligned(self) -> bool:
        """NumPy's rule: the first element's address, and the stride of each axis longer
        than one, are multiples of the dtype's alignment (an empty array is aligned)."""
        array = self._array
        data = array._data
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
    BufferError where views share device memory: NumPy reads the buffer protocol before
    ``__array__`` and cannot tell a buffer that is a copy (``numpy.asarray(x, copy=False)``
    would take a copy without the ValueError NumPy promises); refused, NumPy goes on to
    ``__array__``."""
    if not move_home(a):
        raise BufferError(_shared_views("the buffer protocol", a))
    # NumPy's stubs declare ndarray.__buffer__ for Python 3.12+ only
    view = memoryview(shared_host(a))  # type: ignore[arg-type]
    if a._data.dtype.names is not None and not _exact_format(view, a._data.dtype):
        # this structured dtype's PEP 3118 format loses padding or fields, and NumPy,
        # reading the buffer before __array_interface__, would take the wrong dtype:
        # refused, NumPy goes on to __array_interface__, which is exact
        raise BufferError(f"the buffer format of {a._data.dtype} does not describe it "
                          "exactly; use numpy.asarray(x), which reads it exactly")
    return view
