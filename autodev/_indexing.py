"""Indexing autodev arrays: ``a[key]`` and ``a[key] = value`` (a direct path on the host,
NumPy's rules checked where a device does not check them), and ``a.flat``.
"""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from . import _operators
from ._residency import buffers as _buffers, storage as R
from ._backends import STATE, backend_for
from ._device import CPU, Device
from ._dispatch import cpu_arg, is_plain_array_like, native_arg, new
from ._fusion import LEAVES, PENDING, WATCHED, assign, before_write
from ._methods import _in_place
from ._parallel import masked_fill
from ._compiled import compiled_method
from ._operators import _PLAIN_OPERANDS, _np_ndarray, _onew
from ._results import _face_result
from ._refcounts import assigned
from ._residency.memory import check_not_view, retrying
from ._trace import STATS
from ._typing import Array

_FAST = False  # mirrors STATE.fast (see autodev._operators._FAST)


def _sync_fast() -> None:
    global _FAST
    _FAST = STATE.fast


STATE.listeners.append(_sync_fast)
_sync_fast()


class _Unbound:
    """Stands for the array class until :mod:`autodev._array` binds it."""


#: The array class (:func:`bind_array`), as in :mod:`autodev._operators`.
ndarray: type[Any] = _Unbound


def bind_array(cls: type[Any]) -> None:
    """Make ``cls`` the array class indexing takes and returns (done once)."""
    global ndarray
    ndarray = cls


#: The index keys NumPy reads alike whatever autodev does: ints, slices, ``...`` and
#: ``None``, alone or as the items of a tuple (``b[1, 2]``, ``a[()]``, ``a[..., 0]``).
#: Such a key goes to NumPy as it is, with no item converted (:func:`is_basic_key`).
_BASIC_KEYS = frozenset({int, slice, type(Ellipsis), type(None)})
_is_basic = _BASIC_KEYS.__contains__
_all_basic = _BASIC_KEYS.issuperset

#: Values a host write passes to NumPy as they are: NumPy's operands, and strings and
#: bytes (``s[1] = 'x'``), which hold no array to bring over.
_PLAIN_VALUES = _PLAIN_OPERANDS | {str, bytes}


def is_basic_key(key: Any) -> bool:
    """Whether ``key`` holds nothing to bring to the host (see ``_BASIC_KEYS``): the rule
    both host paths of indexing (read and write) inline."""
    t = type(key)
    return _is_basic(t) or (t is tuple and (not key or _all_basic(map(type, key))))


@compiled_method("getitem")
def getitem(self: Array, key: Any) -> Any:
    # Indexing runs where the array lives and decides nothing: a host array takes the
    # direct path whether or not a GPU is usable (its index arrays are brought over)
    if _FAST or self._device is CPU:
        t = type(key)
        # (is_basic_key, inlined: a call would cost what the rule saves)
        if _is_basic(t) or (t is tuple and (not key or _all_basic(map(type, key)))):
            result = self._native[key]
        elif t is tuple:
            result = self._native[tuple([cpu_arg(k) for k in key])]
        else:
            result = self._native[cpu_arg(key)]
        if type(result) is not _np_ndarray:
            return _face_result(result, self) if self._face else result
        a = _onew(ndarray)
        a._native = result
        a._device = CPU
        if result.base is None:
            a._storage = None
        else:
            storage = self._storage
            if storage is None:
                storage = self._storage = R.Storage()
            a._storage = storage
        a._mirror = None
        a._scalar = False
        a._pin = self._pin
        a._face = self._face
        return a
    result = _getitem(self, key)
    return _face_result(result, self) if self._face else result

@compiled_method("setitem")
def setitem(self: Array, key: Any, value: Any) -> None:
    if PENDING and id(value) in PENDING and assigned(value) \
            and _assign_pending(self, key, value):
        return
    if WATCHED:  # a pending chain reads memory through views: it runs first
        before_write()
    if _FAST or self._device is CPU:  # a write on the host: no device memory involved
        t = type(key)
        # (is_basic_key, inlined)
        if not (_is_basic(t) or (t is tuple and (not key or _all_basic(map(type, key))))):
            key = tuple([cpu_arg(k) for k in key]) if t is tuple else cpu_arg(key)
            # (a[mask] = 0.0 of a large array: split over threads, NumPy's bits)
            if type(key) is _np_ndarray and key.size >= _operators._SPLIT_FROM \
                    and masked_fill(self._native, key, value):
                _written(self)
                return
        self._native[key] = value if type(value) in _PLAIN_VALUES else cpu_arg(value)
        _written(self)
        return
    _setitem(self, key, value)


def _written(self: Array) -> None:
    """A host write to ``self`` made: its storage's version moves (and mirrors go)."""
    storage = self._storage
    if _FAST or (self._mirror is None and (storage is None or not (
            storage.mirrored or storage.shared))):
        if storage is not None:  # no mirror to release: only the version moves
            storage.version += 1
    else:
        R.mark_written(self)



def _assign_pending(self: Array, key: Any, value: Any) -> bool:
    """``self[key] = value`` for a pending temporary ``value``, its chain written straight
    into ``self``'s host memory (:func:`autodev._fusion.assign`); False (nothing done)
    where that does not apply."""
    if self._device is not CPU or self._mirror is not None or id(self) in PENDING \
            or id(self) in LEAVES or not is_basic_key(key):
        return False
    storage = self._storage
    if storage is not None and (storage.mirrored or storage.shared):
        return False
    dest = self._native[key]
    if type(dest) is not _np_ndarray or not assign(dest, value):
        return False
    if storage is not None:  # (no mirror to release: only the version moves)
        storage.version += 1
    return True


def flat_of(array: Array) -> "_FlatIter":
    """``array.flat`` (made without the class's call: this is the hot path of
    ``numpy.asarray(a.flat)``)."""
    if array._native.ndim > _FLAT_MAXDIMS:  # NumPy's flatiter's limit and words
        raise RuntimeError(f"this function only supports up to {_FLAT_MAXDIMS} dimensions "
                           f"but the array has {array.ndim}.")
    it = _onew(_FlatIter)
    it._array = array
    it._iter = None
    return it


class _FlatIter:
    """``a.flat``: NumPy's ``flatiter`` over an autodev array.

    Reads and writes by flat (C-order) index, with NumPy's rules for the index (its
    errors, warnings and the cycling of values written), writes counted as writes; an
    iterator with ``index`` and ``coords``; ``numpy.asarray(a.flat)`` in one step. On
    the host it is NumPy's own flatiter over the data; on a device the index is
    resolved on the host (a plain int or slice directly, any other key against an
    ``arange`` of the array's size) and the elements are read or written there.
    """

    __slots__ = ("_array", "_iter")

    _array: Array
    _iter: Any  # NumPy's flatiter, made on the first step of iteration

    def __new__(cls, array: Array) -> "_FlatIter":
        return flat_of(array)

    @property
    def base(self) -> Array:
        """The array being iterated over."""
        return self._array

    @property
    def index(self) -> int:
        """The flat index of the next element iteration gives."""
        return 0 if self._iter is None else int(self._iter.index)

    @property
    def coords(self) -> tuple[int, ...]:
        """The N-dimensional index of the next element iteration gives."""
        return (0,) * self._array.ndim if self._iter is None else self._iter.coords

    def _numpy(self) -> Any:
        if self._iter is None:
            self._iter = self._array._host().flat
        return self._iter

    def __iter__(self) -> "_FlatIter":
        return self

    def __next__(self) -> Any:
        return next(self._numpy())

    def __len__(self) -> int:  # (a broadcast's iterator steps over the broadcast shape)
        return self._array.size if self._iter is None else len(self._iter)

    def __array__(self, dtype: Any = None, /, *, copy: bool | None = None) -> np.ndarray:
        """NumPy's flatiter's: the arguments are ignored (``numpy.array`` and
        ``numpy.asarray`` apply ``dtype=`` and ``copy=`` to what it gives); a C-contiguous
        array's memory as one dimension (shared, with its writeable flag), else a
        read-only copy. A device array's memory is shared as ``numpy.asarray(a)``
        shares it (moved to the host with any views of it, :func:`autodev._residency.
        buffers.move_home`; a read-only copy where that memory cannot move)."""
        a = self._array
        if a._device is CPU:
            # (ravel: a view of C-contiguous memory, whose base is the memory's owner, else a
            # copy, whose base is None: NumPy's flatiter gives the same, the copy read-only)
            host = a._native.ravel()
            if host.base is None:
                host.flags.writeable = False
            else:  # (as shared_host: read-only memory keeps its mirrors; memory that escaped
                # once is never a chain's input again, so nothing need run first)
                storage = a._storage
                if (storage is None or not storage.escaped) and host.flags.writeable:
                    _buffers.escape(a)
            return host
        if a.flags.c_contiguous:
            host = _buffers.host_array(a)
        else:  # (the layout NumPy's rule reads is the device array's, not its copy's)
            host = np.ascontiguousarray(R.host_copy(a._native, a._device)).reshape(-1)
            host.flags.writeable = False
            return host
        flat: Any = host.flat
        return flat.__array__()

    def copy(self) -> Array:
        """A flattened copy of the array (``a.flatten()``)."""
        return self._array.flatten()

    def __getitem__(self, key: Any) -> Any:
        a = self._array
        if a._device is CPU:
            result = a._native.flat[_flat_key(key)]
            return new(result, CPU, None, False, a._pin) if type(result) is _np_ndarray \
                else result
        return a.ravel()[_flat_positions(a, key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        a = self._array
        before_write()
        if a._device is CPU:
            a._native.flat[_flat_key(key)] = cpu_arg(value)
        else:
            R.check_writeable(a, "underlying array is read-only")  # NumPy's words
            _set_flat(a, key, value)
        R.mark_written(a)

    def __delitem__(self, key: Any) -> None:
        raise TypeError("Cannot delete iterator elements")

    def _compare(self, other: Any, op: Callable[[Any, Any], Any]) -> Any:
        return op(self.copy(), other)

    def __eq__(self, other: Any) -> Any:  # elementwise, as NumPy's
        return self._compare(other, operator.eq)

    def __ne__(self, other: Any) -> Any:
        return self._compare(other, operator.ne)

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, operator.lt)

    def __le__(self, other: Any) -> Any:
        return self._compare(other, operator.le)

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, operator.gt)

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, operator.ge)

    __hash__ = None  # type: ignore[assignment]


def _set_flat(a: Array, key: Any, value: Any) -> None:
    """``a.flat[key] = value`` for device data. NumPy's own flat assignment, run on an
    array of value numbers (so its rules hold: the key's errors, values cycled over the
    positions, the last write to a repeated position wins), says which value each element
    gets; the device then writes those."""
    values = np.asarray(cpu_arg(value), dtype=a.dtype).ravel()
    taken = np.full(a.size, -1, dtype=np.intp)
    # (one value is written as a scalar, as NumPy's single-item assignment needs)
    taken.flat[cpu_arg(key)] = 0 if values.size == 1 else np.arange(values.size)
    positions = np.flatnonzero(taken >= 0)
    if not positions.size:
        return
    if a.ndim == 0:  # (no index array reads a 0-d array)
        a[()] = values[taken[0]]
    else:
        a[np.unravel_index(positions, a.shape)] = values[taken[positions]]


def _flat_positions(a: Array, key: Any) -> Any:
    """The flat positions ``a.flat[key]`` names: an int, a slice, or an index array."""
    if type(key) is int:
        if not -a.size <= key < a.size:
            raise IndexError(f"index {key} is out of bounds for size {a.size}")
        return key % a.size if a.size else key
    if type(key) is slice:
        return np.arange(*key.indices(a.size), dtype=np.intp)
    return np.arange(a.size, dtype=np.intp).flat[_flat_key(key)]  # NumPy's rules for the key


#: The most dimensions NumPy's flat iterator takes.
_FLAT_MAXDIMS = 32


def _flat_key(key: Any) -> Any:
    """``key`` for NumPy's flatiter: another array's ``.flat`` as NumPy's flatiter over its
    host data (NumPy reads a flatiter key as its own kind, not as an array), else the
    key with autodev arrays as NumPy's."""
    return key._array._host().flat if type(key) is _FlatIter else cpu_arg(key)


# ---------------------------------------------------------------------- general indexing

def _index_native(key: Any, device: Device, shape: tuple[int, ...]) -> Any:
    """Convert an index to ``device``; check integer-array bounds where the device does not."""
    if device is CPU:
        return cpu_arg(key) if type(key) is not tuple else tuple(cpu_arg(k) for k in key)
    parts = key if type(key) is tuple else (key,)
    converted: list[Any] = []
    dim = 0
    n_consuming = sum(_consumes(k) for k in parts)
    for k in parts:
        if k is Ellipsis:
            dim += len(shape) - n_consuming
            converted.append(k)
            continue
        if k is None:
            converted.append(k)
            continue
        t = type(k)
        if t is not int and t is not slice and t is not ndarray and is_plain_array_like(t):
            k = cpu_arg(k)  # an index known by its __array__ (which may give an autodev array)
            t = type(k)
        elif _is_index_object(t):
            k = operator.index(k)  # NumPy reads __index__; CuPy would see an object
            t = int
        elif t is float or t is complex or isinstance(k, np.inexact):
            raise IndexError(_VALID_INDICES)  # CuPy takes a[1.5] as a[1]
        if (t is list and not _field_names(k)) or t is np.ndarray or isinstance(k, ndarray):
            k = _check_index_array(k, shape, dim, device)
        converted.append(k)
        dim += _consumes(k)
    return tuple(converted) if type(key) is tuple else converted[0]


_VALID_INDICES = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and "
                  "integer or boolean arrays are valid indices")


def _is_index_object(t: type) -> bool:
    """Whether an index part of type ``t`` is an integer by its ``__index__`` alone (no
    int, bool, NumPy scalar or array): the device needs the int."""
    return (t not in (int, bool, list, tuple)
            and not issubclass(t, (np.ndarray, ndarray, np.generic)) and hasattr(t, "__index__"))


def _consumes(k: Any) -> int:
    if k is None or k is Ellipsis:
        return 0
    dtype = getattr(k, "dtype", None)
    if dtype is not None and dtype == np.bool_:
        return max(k.ndim, 1)
    if type(k) is list and k and all(isinstance(v, (bool, np.bool_)) for v in k):
        return 1
    return 1


def _check_mask(mask_shape: tuple[int, ...], shape: tuple[int, ...], dim: int) -> None:
    """NumPy's IndexError for a boolean index whose shape differs from the axes it
    indexes (CuPy does not check: a short mask reads past its end)."""
    for axis, m in enumerate(mask_shape, dim):
        if axis < len(shape) and shape[axis] != m:
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; "
                             f"size of axis is {shape[axis]} but size of corresponding "
                             f"boolean axis is {m}")


def _check_index_array(k: Any, shape: tuple[int, ...], dim: int, device: Device) -> Any:
    if isinstance(k, ndarray):  # a subclass of autodev's array too
        dtype = k.dtype
        if dtype.kind == "b":
            _check_mask(k.shape, shape, dim)
        if dtype.kind in "iu" and dim < len(shape) and k.size:
            n = shape[dim]
            bad = ((k < -n) | (k >= n)).any()
            if bool(bad):
                raise IndexError(
                    f"index out of bounds for axis {dim} with size {n}"
                )
        return R.native_on(k, device)
    host = np.asarray(k)
    if host.size == 0 and host.dtype.kind == "f":
        host = host.astype(np.intp)  # ``a[[]]``: NumPy reads an empty list as integers
    if host.dtype.kind in "iu" and dim < len(shape) and host.size:
        n = shape[dim]
        if host.min() < -n or host.max() >= n:
            bad = host[(host < -n) | (host >= n)][0]
            raise IndexError(f"index {bad} is out of bounds for axis {dim} with size {n}")
    if host.dtype.kind not in "iub" and host.size:
        raise IndexError(
            "arrays used as indices must be of integer (or boolean) type"
        )
    if host.dtype.kind == "b":
        _check_mask(host.shape, shape, dim)
    return R.transfer(host, CPU, device)


def _getitem(a: Array, key: Any) -> Any:
    device = a._device
    result = retrying("__getitem__", device, lambda: a._native[_index_native(key, device, a.shape)],
                      lambda: _getitem_on_host(a, key))
    if type(result) is ndarray:  # the host fallback's
        return result
    STATS.calls[str(device)] = STATS.calls.get(str(device), 0) + 1
    if device is CPU:
        if type(result) is np.ndarray:
            return new(result, CPU, R.storage_of(a) if result.base is not None else None,
                       False, a._pin)
        return result
    backend = backend_for(device)
    if not backend.is_native(result):
        return result
    if result.ndim == 0 and not _has_ellipsis(key) and not _is_field(key):
        if not a._face:
            return R.transfer(result, device, CPU)[()]  # a NumPy scalar
        # the face's element: a 0-d array left on the device, not a view of a's memory
        # (NumPy's element is a copy, and so is the face's on the host)
        return new(result.copy(), device, None, False, a._pin)
    scalar = False
    shares = getattr(result, "base", None) is not None
    view = new(result, device, R.storage_of(a) if shares else None, scalar, a._pin)
    if shares:
        R.inherit(view, a)
    return view


def _getitem_on_host(a: Array, key: Any) -> Any:
    """Indexing a device array on the host: a copying index (list, mask) only, since
    a basic index is a view that must keep writing to the device memory."""
    host = a._host()
    result = host[_index_native(key, CPU, a.shape)]
    check_not_view("__getitem__", a._device, (host,), result)
    STATS.calls["cpu"] = STATS.calls.get("cpu", 0) + 1
    return new(result, CPU, None, False, a._pin) if type(result) is np.ndarray else result


def _field_names(key: Any) -> bool:
    """Whether ``key`` is a list of field names (a multi-field index, ``a[['x', 'y']]``)."""
    return bool(key) and all(type(k) is str for k in key)


def _is_field(key: Any) -> bool:
    """Whether ``key`` names fields (``a['x']``, ``a[['x', 'y']]``): NumPy gives an array
    (a view), even 0-d, never a scalar."""
    return type(key) is str or (type(key) is list and _field_names(key))


def _has_ellipsis(key: Any) -> bool:
    return key is Ellipsis or (type(key) is tuple and any(k is Ellipsis for k in key))


def _device_holds(device: Device, value: Any) -> bool:
    """Whether ``device`` holds ``value``'s dtype (True for Python scalars and lists,
    whose conversion is the device's)."""
    dtype = getattr(value, "dtype", None)
    return not isinstance(dtype, np.dtype) or backend_for(device).supports_dtype(dtype)


def _setitem(a: Array, key: Any, value: Any) -> None:
    def assign(data: Any, device: Device) -> None:
        v = value
        if device is not CPU and not _device_holds(device, v):
            # strings, long doubles, ...: NumPy's (unsafe) cast to the array's dtype on
            # the host, since no GPU holds the value to cast it there
            v = np.asarray(cpu_arg(v)).astype(a._native.dtype)
        elif device is not CPU and type(v) in (list, tuple):
            # a sequence becomes an array of the target's dtype as NumPy reads it (CuPy
            # fills a basic index's view with scalars only)
            v = np.asarray(cpu_arg(v), dtype=a._native.dtype)
        data[_index_native(key, device, a.shape)] = native_arg(v, device, None)

    _in_place(a, "__setitem__", assign)
