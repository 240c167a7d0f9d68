"""The array's method-only calls (``astype``, ``copy``, ``view``, ``sort``, ``put``, ...)
and the helpers they share: each runs where the array lives and, out of device memory,
on the host. :class:`autodev._array.ndarray` takes them as its methods.
"""

from __future__ import annotations

import inspect
import pickle
from typing import Any, Callable

import numpy as np

from . import _dispatch as D
from ._residency import buffers as _buffers, storage as R
from ._backends import active_gpu, backend_for
from ._device import CPU, Device
from ._dispatch import cpu_arg, native_arg, new
from ._fusion import WATCHED, before_write
from ._capability.corrections import check_select_kind, check_sort_kind, plain_kth
from ._residency.memory import in_place_on_host, refuse_view, retrying
from ._refcounts import resize_refused
from ._subclass import cast
from ._typing import Array, Casting, Order


def astype(self: Array, dtype: Any, order: Order = "K", casting: Casting = "unsafe",
           subok: bool = True, copy: bool = True) -> Array:
    if not copy and order in ("K", "A") and self._native.dtype == dtype:
        return self  # as NumPy does (a device backend may hand back a new wrapper)
    if self._device is not CPU and not np.can_cast(self.dtype, dtype, casting):
        raise TypeError(f"Cannot cast array data from {self.dtype!r} to "
                        f"{np.dtype(dtype)!r} according to the rule {casting!r}")

    if self._device is not CPU and not backend_for(self._device).supports_dtype(
            np.dtype(dtype)):  # object, strings, long double: made on the host (capability)
        host = self._host().astype(dtype, order=order, casting=casting, copy=True)
        return new(host, CPU, None, False, self._pin, self._face)

    def cast(data: Any) -> Any:
        if type(data) is np.ndarray:
            return data.astype(dtype, order=order, casting=casting, copy=copy)
        # CuPy raises TypeError for any casting= (capability table: ndarray.astype)
        return data.astype(dtype, order=order, copy=copy)

    result = _allocating(self, "astype", cast)
    return self if result._native is self._native else result

def copy(self: Array, order: str = "C") -> Array:
    if self._device is CPU:  # (nothing to retry: the host's memory error is NumPy's)
        return new(self._native.copy(order), CPU, None, False, self._pin, self._face)
    return _allocating(self, "copy", lambda data: data.copy(order=order))

#: ``view()``'s dtype when none is given (NumPy's own default is no argument at all).
_SAME_DTYPE: Any = object()


def view(self: Array, dtype: Any = _SAME_DTYPE, type: Any = None) -> Array:  # noqa: A002
    cls = type  # NumPy's names: a.view(dtype, type), a.view(type=...), a.view(ndarray_class)
    if isinstance(dtype, _type) and issubclass(dtype, D.ndarray):
        cls, dtype = dtype, _SAME_DTYPE
    elif cls is not None and not (isinstance(cls, _type) and issubclass(cls, (D.ndarray,
                                                                              np.ndarray))):
        raise ValueError("Type must be a sub-type of ndarray type")  # NumPy's words
    device = self._device
    if device is not CPU and dtype is not _SAME_DTYPE and not backend_for(device).supports_dtype(
            np.dtype(dtype)) and _buffers.move_home(self):
        device = CPU  # a dtype the device does not hold (bytes, str): its memory moves home
    if device is CPU:  # a host view takes its base's flag from NumPy; nothing to retry
        data = self._native
        result = new(data.view() if dtype is _SAME_DTYPE else data.view(dtype), CPU,
                     R.storage_of(self), False, self._pin)
    else:
        result = retrying("view", device, lambda: new(
            self._native.view() if dtype is _SAME_DTYPE else self._native.view(dtype), device,
            R.storage_of(self), False, self._pin), lambda: refuse_view("view", device))
        R.inherit(result, self)
    if cls is None:
        cls = _type(self)
    if cls is not D.ndarray:  # view casting to a subclass (autodev._subclass)
        return cast(result, cls, self)
    return result


_type = type

def fill(self: Array, value: Any) -> None:
    value = _scalar_arg(value)
    _in_place(self, "fill", lambda data, device: data.fill(value))

def sort(self: Array, axis: int = -1, kind: str | None = None, order: Any = None) -> None:
    extra = {"order": order} if order is not None else {}
    if self._device is not CPU:
        check_sort_kind(kind)  # CuPy's sort is stable, a valid result for every kind

    def sort(data: Any, device: Device) -> None:
        if device is CPU:
            data.sort(axis=axis, kind=kind, **extra)
        elif data.flags.c_contiguous:
            data.sort(axis=axis, kind="stable")
        else:  # CuPy sorts only C-contiguous arrays in place (table: ndarray.sort)
            data[...] = backend_for(device).xp.sort(data, axis=axis)

    _in_place(self, "sort", sort)

def partition(self: Array, kth: Any, axis: int = -1, kind: str = "introselect",
              order: Any = None) -> None:
    extra = {} if order is None else {"order": order}
    if self._device is not CPU:
        check_select_kind(kind)

    def partition(data: Any, device: Device) -> None:
        if device is CPU:
            data.partition(cpu_arg(kth), axis=axis, kind=kind, **extra)
            return
        # CuPy: kth as Python ints, C-contiguous arrays only (ndarray.partition)
        k = plain_kth(R.host_copy(kth._native, kth._device) if type(kth) is D.ndarray else kth)
        if data.flags.c_contiguous:
            data.partition(k, axis=axis)
        else:
            data[...] = backend_for(device).xp.partition(data, k, axis=axis)

    _in_place(self, "partition", partition)

def put(self: Array, indices: Any, values: Any, mode: str = "raise") -> None:
    if self._device is not CPU and mode == "raise":
        _check_flat_bounds(native_arg(indices, CPU, None), self.size)
    _in_place(self, "put", lambda data, device: data.put(
        native_arg(indices, device, None), native_arg(values, device, None), mode=mode))

def resize(self: Array, *shape: Any, refcheck: bool = True) -> None:
    # NumPy refuses to resize memory something else may still refer to: its own check
    # sees views of the data; this one, other references to this array (``y = x``)
    if refcheck and resize_refused(self):
        raise ValueError(
            "cannot resize an array that references or is referenced\nby another "
            "array in this way.\nUse the np.resize function or refcheck=False")
    before_write()
    # (a counted transfer; never with views: refcheck=False would leave them dangling)
    if self._device is CPU or _buffers.move_home(self, alone=True):
        self._native.resize(*shape, refcheck=refcheck)  # no device library resizes
    else:
        _resize_shared(self, shape, refcheck)
    R.mark_written(self)

def getfield(self: Array, dtype: Any, offset: int = 0) -> Array:
    """A field of each element: ``dtype`` at byte ``offset`` (a view on the host; a
    copy on a device, whose libraries have no ``getfield``)."""
    if self._device is CPU:
        return _view_attr_call(self, "getfield", dtype, offset)
    return new(self._host().getfield(dtype, offset).copy(), CPU, None, False, self._pin)

def setfield(self: Array, val: Any, dtype: Any, offset: int = 0) -> None:
    """Write ``val`` into the field ``dtype`` at byte ``offset`` of each element."""
    value = cpu_arg(val)
    before_write()
    if self._device is CPU:
        self._native.setfield(value, dtype, offset)
        R.mark_written(self)
    else:
        in_place_on_host("setfield", self,
                         lambda host: host.setfield(value, dtype, offset))
        R.mark_written(self)

def dumps(self: Array) -> bytes:
    """This array pickled (``pickle.loads`` gives it back), as NumPy's ``dumps``."""
    return pickle.dumps(self, protocol=2)

def flatten(self: Array, order: str = "C") -> Array:
    return _allocating(self, "flatten", lambda data: data.flatten(order))

def byteswap(self: Array, inplace: bool = False) -> Array:
    if inplace:
        _in_place(self, "byteswap", lambda data, device: data.byteswap(True))
        return self
    return _allocating(self, "byteswap", lambda data: data.byteswap(False))


def _resize_shared(a: Array, shape: tuple[Any, ...], refcheck: bool) -> None:
    """``a.resize(*shape)`` for a device array whose memory views share: NumPy's rules
    (a new shape of no more bytes of an empty array reshapes it in place; else a view,
    or, with ``refcheck``, an array views refer to, cannot be resized); with
    ``refcheck=False`` the views keep the old memory and ``a`` moves to the host."""
    if a.size == 0:
        probe = np.empty(a.shape, a.dtype)  # NumPy reads the arguments, on no memory
        probe.resize(*shape, refcheck=False)
        if probe.size == 0:
            a._native = a._native.reshape(probe.shape)
            return
    if getattr(a._native, "base", None) is not None:
        raise ValueError("cannot resize this array: it does not own its data")
    if refcheck:
        raise ValueError(
            "cannot resize an array that references or is referenced\nby another "
            "array in this way.\nUse the np.resize function or refcheck=False")
    R.promote(a, CPU, R.host_copy(a._native, a._device))
    a._native.resize(*shape, refcheck=False)


def _host_buffer(buffer: Array) -> np.ndarray:
    """The host memory of ``buffer`` for ``ndarray(..., buffer=buffer)`` to share (a
    device array moves to the host first, :func:`autodev._residency.buffers.move_home`)."""
    if not _buffers.move_home(buffer):
        raise ValueError(
            f"ndarray(..., buffer=x) shares x's memory, and x lives on {buffer._device}, "
            "where its memory is shared outside autodev (a native device array views it). "
            "Use x.to_device('cpu') as the buffer, or "
            "autodev.lib.stride_tricks.as_strided for a view on the device.")
    return buffer._native  # the new array shares buffer's storage: its writes are seen


def _own(native: Any, device: Device) -> Any:
    """A private copy when ``native`` is a mirror someone else may still use (keeping its
    memory layout, as a transfer does: the layout decides whether a reshape is a view)."""
    if device is CPU:
        return native.copy(order="K")
    return backend_for(device).xp.array(native, copy=True, order="K")


def _view_attr_call(a: Array, name: str, *args: Any) -> Array:
    """``a._native.<name>(*args)``, a view of ``a``'s memory, as an array sharing its storage."""
    result = getattr(a._native, name)(*args)
    return new(result, a._device, R.storage_of(a), False, a._pin)


def _view_attr(a: Array, name: str) -> Array:
    result = getattr(a._native, name)
    owner = backend_for(a._device).owner
    shares = owner(result) is owner(a._native)  # a view (or the array itself), not a copy
    view = new(result, a._device, R.storage_of(a) if shares else None, False, a._pin, a._face)
    if shares:
        R.inherit(view, a)
    return view


def _allocating(a: Array, op: str, make: Callable[[Any], Any]) -> Array:
    """``make(data)`` as a new array where ``a`` lives; out of device memory, on the host."""
    device, pin, face = a._device, a._pin, a._face
    return retrying(op, device, lambda: new(make(a._native), device, None, False, pin, face),
                    lambda: new(make(a._host()), CPU, None, False, pin, face))


def _in_place(a: Array, op: str, apply: Callable[[Any, Device], Any]) -> None:
    """``apply(data, device)`` writes into ``a``; out of device memory, it runs on a host
    copy written back into the same device memory (views of ``a`` see the write).
    A read-only ``a`` refuses with NumPy's error for ``op``, on every device."""
    R.check_writeable(a, _READ_ONLY_MESSAGES.get(op, R.READ_ONLY))
    if WATCHED:  # a pending chain reads memory through views: it runs first
        before_write()
    device = a._device
    retrying(op, device, lambda: apply(a._native, device),
             lambda: in_place_on_host(op, a, lambda host: apply(host, CPU)))
    R.mark_written(a)


#: NumPy's message where a method refuses to write into a read-only array (others say
#: ``R.READ_ONLY``, "assignment destination is read-only").
_READ_ONLY_MESSAGES = {
    "sort": "sort array is read-only", "partition": "partition array is read-only",
    "byteswap": "array to be byte-swapped is read-only", "put": "put: output array is read-only",
}


def _scalar_arg(value: Any) -> Any:
    return value.item() if type(value) is D.ndarray else value


def _check_flat_bounds(indices: Any, size: int) -> None:
    host = np.asarray(indices)
    if host.size and (host.min() < -size or host.max() >= size):
        raise IndexError(f"index out of bounds for size {size}")


# --------------------------------------------------------------------------- the class's setup, unpickling

def numpy_method_signatures(cls: type) -> None:
    """Give ``cls``'s array methods NumPy's signatures (``self`` positional-only, NumPy's
    parameter names), so ``inspect.signature(np.ndarray.sum)`` reads as NumPy's."""
    for name, attr in vars(cls).items():
        numpy_method = getattr(np.ndarray, name, None)
        if not callable(attr) or isinstance(attr, type) or numpy_method is None:
            continue
        try:
            attr.__signature__ = inspect.signature(numpy_method)
        except (ValueError, TypeError):  # NumPy's has none to read
            continue


def named_as_methods(cls: type, modules: tuple[str, ...], module: str) -> None:
    """Name the methods ``cls`` takes from ``modules`` as its own, of ``module``
    (``ndarray.sort``), as they read and pickle."""
    for name, attr in vars(cls).items():
        func = getattr(attr, "fallback", attr)  # (a compiled fast path: the function behind)
        if inspect.isfunction(func) and func.__module__ in modules:
            func.__module__, func.__name__, func.__qualname__ = module, name, \
                f"{cls.__name__}.{name}"


def rebuild(host: np.ndarray, device: str, scalar: bool, placement: str = "auto",
             writeable: bool = True, face: bool = False) -> Any:
    """Unpickle: the data goes back where it lived when that device is usable here, and
    the placement (``auto`` or a pin) and the face are kept; a pin to a device this
    process lacks raises, as ``to_device`` would. A read-only array (on the host) stays
    read-only."""
    if not writeable:
        host.flags.writeable = False
    arr = new(host, CPU, None, scalar, None, face)
    if placement != "auto":
        return arr.to_device(placement)
    if device != "cpu":
        gpu = active_gpu()
        if gpu is not None and str(gpu.device) == device:  # moved back, never pinned
            target = gpu.device
            return retrying("unpickle", target,
                            lambda: new(R.transfer(host, CPU, target), target, None, scalar,
                                        None, face),
                            lambda: arr)
    return arr
