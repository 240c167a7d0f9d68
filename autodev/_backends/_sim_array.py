"""The simulated GPU's arrays: :class:`SimArray` plays a ``cupy.ndarray``.

A NumPy array behind a wall: it refuses implicit conversion to NumPy, as CuPy's
arrays do, so any code path that forgets a transfer fails loudly. The backend
(:mod:`autodev._backends._sim`) and its sparse module build on these.
"""

from __future__ import annotations

import functools
import operator
from typing import (TYPE_CHECKING, Any, Callable, Collection, Iterator, Protocol, Sequence,
                    SupportsIndex)

import numpy as np

from ._sim_cupy import IMITATIONS

if TYPE_CHECKING:  # numpy.typing is not loaded at run time (``import autodev`` stays lean)
    from numpy.typing import DTypeLike


class Clock(Protocol):
    """What charges a device call: the simulated backend (its virtual clock, faults)."""

    def _tick(self, name: str = "", args: tuple[Any, ...] = ()) -> None: ...

_NO_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed for simulated GPU arrays. "
    "Use autodev's transfers (x.to_device('cpu')) instead."
)


class SimOutOfMemoryError(MemoryError):
    """Raised by the simulated GPU when an out-of-memory fault is injected."""


class SimDeviceError(RuntimeError):
    """Raised by the simulated GPU when a device fault is injected."""


class SimArray:
    """An array on the simulated GPU: a NumPy array behind a wall."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100.0

    def __init__(self, array: np.ndarray) -> None:
        self._a = array

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        raise TypeError(_NO_IMPLICIT)

    __array_ufunc__ = None  # NumPy ufuncs must not see through the wall

    def __array_function__(self, func: Callable[..., Any], types: Collection[type],
                           args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        raise TypeError(_NO_IMPLICIT)

    def get(self) -> np.ndarray:
        """Explicit copy to the host (like ``cupy.ndarray.get``)."""
        return self._a.copy()

    @property
    def base(self) -> Any:
        """The device array this one views, as CuPy's; None, as in CuPy, for an array made
        on a pointer into device memory (``as_strided``'s) that no array of ours owns."""
        base = self._a.base
        return SimArray(base) if type(base) is np.ndarray else None

    @property
    def flags(self) -> "SimFlags":
        """CuPy's flags: contiguity and ownership, no ``writeable`` (device memory is)."""
        flags = self._a.flags
        return SimFlags(flags.c_contiguous, flags.f_contiguous, self.base is None)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @shape.setter
    def shape(self, value: SupportsIndex | Sequence[SupportsIndex]) -> None:
        self._a.shape = value  # in place, without copying, as CuPy allows

    # plain attributes, as on cupy.ndarray (not through __getattr__: the cost
    # model reads them on every decision)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._a, name)
        if not callable(value):
            return _wrap(value)
        imitation = IMITATIONS.get("ndarray." + name)
        if imitation is not None:
            value = imitation(value)
        return _wrap_method(self, name, value)

    def __getitem__(self, key: Any) -> Any:
        return _wrap(self._a[_index(_unwrap(key), self._a.shape)])

    def __setitem__(self, key: Any, value: Any) -> None:
        key = _index(_unwrap(key), self._a.shape)
        if type(value) in (list, tuple) and _is_basic(key):
            # CuPy fills a basic index's view with a scalar only (an array-like value
            # must be a device array), as its ``fill`` does
            raise ValueError("non-scalar numpy.ndarray cannot be used for fill")
        self._a[key] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[Any]:
        return (_wrap(row) for row in self._a)

    def __repr__(self) -> str:
        return f"SimArray({self._a!r})"

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __index__(self) -> int:
        return operator.index(self._a)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        # a CUDA device, as CuPy reports (kDLCUDA = 2): a consumer must not read it as host memory
        return (2, 0)


class SimFlags:
    """``cupy.ndarray.flags``: ``c_contiguous``, ``f_contiguous``, ``owndata`` and their
    keys, nothing else: no ``writeable`` flag to read, and (stricter than CuPy, which
    takes any attribute silently) none to set, so that code believing it made device
    memory read-only fails here rather than doing nothing on CuPy."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")
    _KEYS = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
             "OWNDATA": "owndata"}

    def __init__(self, c_contiguous: bool, f_contiguous: bool, owndata: bool) -> None:
        self.c_contiguous = c_contiguous
        self.f_contiguous = f_contiguous
        self.owndata = owndata

    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)

    def __getitem__(self, key: str) -> bool:
        if key not in self._KEYS:
            raise KeyError(f"{key} is not defined for cupy.ndarray.flags")
        return bool(getattr(self, self._KEYS[key]))

    def __repr__(self) -> str:
        return "".join(f"  {k} : {self[k]}\n" for k in self._KEYS)


def _make_operator(name: str) -> Callable[..., Any]:
    def method(self: SimArray, *args: Any) -> Any:
        return _wrap(getattr(self._a, name)(*(_unwrap(a) for a in args)))

    method.__name__ = name
    return method


for _name in (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow "
    "matmul rmatmul and rand or ror xor rxor lshift rlshift rshift rrshift "
    "lt le gt ge eq ne neg pos abs invert iadd isub imul itruediv ifloordiv imod ipow "
    "iand ior ixor ilshift irshift imatmul"
).split():
    setattr(SimArray, f"__{_name}__", _make_operator(f"__{_name}__"))
SimArray.__hash__ = None  # type: ignore[assignment]


#: Index parts CuPy reads (any other object, one with ``__index__`` alone included,
#: becomes an object array it refuses).
_INDEX_PARTS = (int, float, slice, type(None), type(Ellipsis), list, tuple, np.ndarray,
                np.generic)


def _is_basic(key: Any) -> bool:
    """Whether ``key`` is a basic index (integers, slices, None, Ellipsis): a view."""
    parts = key if type(key) is tuple else (key,)
    return all(type(k) in (int, slice, type(None), type(Ellipsis))
               or isinstance(k, np.integer) for k in parts)


def _index(key: Any, shape: tuple[int, ...]) -> Any:
    """The index the sim applies: ``key`` as CuPy would read it (the table's
    ``ndarray.__getitem__`` row: out-of-bounds integer-array indices wrap). A float is
    taken as the integer it truncates to, as CuPy does (NumPy refuses it)."""
    parts = key if type(key) is tuple else (key,)
    for k in parts:
        if not isinstance(k, _INDEX_PARTS):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis "
                             "(`None`) and integer or boolean arrays are valid indices")
    if any(type(k) is float for k in parts):
        parts = tuple(int(k) if type(k) is float else k for k in parts)
        key = parts if type(key) is tuple else parts[0]
    imitation = IMITATIONS.get("ndarray.__getitem__")
    return imitation(_same_key)(key, shape) if imitation is not None else key


def _same_key(key: Any, shape: tuple[int, ...]) -> Any:
    return key


def _unwrap(obj: Any) -> Any:
    if type(obj) is SimArray:
        return obj._a
    if type(obj) is np.ndarray:
        raise TypeError(
            "Unsupported type <class 'numpy.ndarray'>: the simulated GPU refuses host "
            "arrays, as CuPy does. Move the data first."
        )
    if type(obj) in (list, tuple):
        return type(obj)(_unwrap(o) for o in obj)
    if type(obj) is dict:
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


#: The dtypes CuPy's arrays hold (by character): bool, integers, float16/32/64 and
#: complex64/128. ``cupy.asarray`` of any other (strings, datetimes, structured, object,
#: long double) and any call making one raise ValueError("Unsupported dtype ...").
DEVICE_DTYPES = frozenset("?bhilqBHILQefdFD")


def _wrap(obj: Any) -> Any:
    if type(obj) is np.ndarray:
        if obj.dtype.char not in DEVICE_DTYPES:
            raise ValueError(f"Unsupported dtype {obj.dtype}")
        return SimArray(obj)
    if isinstance(obj, np.generic):
        return SimArray(np.asarray(obj))  # CuPy returns 0-d arrays, not scalars
    if isinstance(obj, tuple):
        items = [_wrap(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if type(obj) is list:
        return [_wrap(o) for o in obj]
    return obj


def _wrap_out(result: Any, kwargs: dict[str, Any]) -> Any:
    """Wrap ``result``, returning the caller's own ``out=`` array where it is one (as CuPy)."""
    out = kwargs.get("out")
    outs = out if type(out) is tuple else (out,)
    for o in outs:
        if type(o) is SimArray and result is o._a:
            return o
    if type(result) is tuple and out is not None:
        return tuple(_wrap_out(r, kwargs) for r in result)
    return _wrap(result)


def _wrap_callable(func: Callable[..., Any], backend: Clock | None = None,
                   name: str = "") -> Any:
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        if backend is not None:
            backend._tick(name, args)
        return _wrap_out(func(*_unwrap(args), **_unwrap(kwargs)), kwargs)

    return call


#: The simulated GPU made last; array methods (``x.sum()``) run "on" it.
_LATEST: list[Clock] = []


def _wrap_method(array: SimArray, name: str, method: Callable[..., Any]) -> Any:
    """A method of a device array: a device call, counted, timed and open to faults."""
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _LATEST:
            _LATEST[0]._tick(name, (array, *args))
        return _wrap_out(method(*_unwrap(args), **_unwrap(kwargs)), kwargs)

    return call
