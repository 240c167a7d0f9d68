"""Creation: ``zeros``, ``arange``, ..., ``array``, ``asarray`` and ``from_dlpack``, made on
the host or on ``device=`` (or the GPU policy's device), pinned where ``device=`` asks.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ._residency import storage as R
from ._array import ndarray
from ._compiled import compiled
from ._operators import PLAIN_SCALARS
from ._backends import STATE, active_gpu, backend_for, note_pinned, resolve_device
from ._config import MADE_ON_HOST, SPEEDUPS, get_policy, policy_now
from ._device import AUTO, CPU, Device
from ._dispatch import check_array, cpu_arg, is_plain_array_like, new, placed
from ._residency.memory import retrying
from ._subclass import SUBCLASSES, keep_class
from ._typing import DeviceLike, Order
from ._ufuncs import _NO_ARGUMENT
# (creation functions by their rows: the shaped ones, those taking arrays, dtype's place)
from ._names import ARRAY_ARGUMENTS as _ARRAY_ARGUMENTS, DTYPE_AT as _DTYPE_AT, SHAPED as _SHAPED

_np_ndarray = np.ndarray
_onew = object.__new__
_FAST = False  # mirrors STATE.fast (see autodev._operators._FAST)
#: Mirrors STATE.host_made: a GPU usable, or none probed yet, and nothing watching or
#: pinned; MADE_ON_HOST then says whether the policy makes new arrays on the host.
_HOST_MADE = False


def _sync_fast() -> None:
    global _FAST, _HOST_MADE
    _FAST = STATE.fast
    _HOST_MADE = STATE.host_made


STATE.listeners.append(_sync_fast)
_sync_fast()



def creation_device(device: DeviceLike | None) -> Device:
    """Where a creation call puts its array: ``device=``, else the policy's choice."""
    if device is not None:
        target = resolve_device(device)
        if target is not AUTO:
            return target
    if get_policy() == "gpu":
        gpu = active_gpu()
        if gpu is not None:
            return gpu.device
    return CPU


def make_creation(name: str) -> Callable[..., Any]:
    """``zeros``, ``arange``, ...: made on the host, or on ``device=`` / the GPU policy's device."""
    np_func = getattr(np, name)
    takes_arrays = name in _ARRAY_ARGUMENTS

    public: Callable[..., Any] | None
    if name in _SHAPED:
        def shaped(shape: Any, dtype: Any = None, order: str = "C", *, device: Any = None,
                   like: Any = None) -> Any:
            # NumPy's own signature, so that the common call needs no argument packing;
            # with a GPU usable, only the GPU policy (or device=) makes arrays elsewhere
            if device is None and like is None and (
                    _FAST or (_HOST_MADE and MADE_ON_HOST[policy_now()])):
                result = np_func(shape, dtype, order)
                a = _onew(ndarray)
                a._native = result
                a._device = CPU
                a._storage = None
                a._mirror = None
                a._scalar = False
                a._pin = None
                a._face = False
                return a
            return general(shape, dtype, order, device=device)

        public = shaped
    elif not takes_arrays:
        def plain(*args: Any, **kwargs: Any) -> Any:
            # with a GPU usable, only the GPU policy (or device=) makes arrays elsewhere
            if (_FAST or (_HOST_MADE and MADE_ON_HOST[policy_now()])) and "device" not in kwargs \
                    and "like" not in kwargs:
                result = np_func(*args, **kwargs)
                if type(result) is _np_ndarray:
                    a = _onew(ndarray)
                    a._native, a._device, a._storage, a._mirror, a._scalar, a._pin, a._face = \
                        result, CPU, None, None, False, None, False
                    return a
                return _created(result, CPU)
            return general(*args, **kwargs)

        public = plain
    else:
        public = None

    def general(*args: Any, **kwargs: Any) -> Any:
        if takes_arrays and (ndarray in map(type, args)
                             or (kwargs and ndarray in map(type, kwargs.values()))):
            args = tuple(_creation_arg(a) for a in args)
            kwargs = {k: _creation_arg(v) for k, v in kwargs.items()}
        if (_FAST or (_HOST_MADE and MADE_ON_HOST[policy_now()])) and "device" not in kwargs \
                and "like" not in kwargs:  # (made on the host: where creation_device puts it)
            return _created(np_func(*args, **kwargs), CPU)
        device = kwargs.pop("device", None)
        kwargs.pop("like", None)
        target = creation_device(device)
        if target is CPU:
            return _pinned(_created(np_func(*args, **kwargs), CPU), device)
        func = backend_for(target).resolve(name)
        if func is None or not _device_holds(target, name, args, kwargs) or (
                takes_arrays and any(type(a) is np.ndarray for a in (*args, *kwargs.values()))):
            return _pinned(place(name, np_func(*args, **kwargs), target), device)
        return _pinned(retrying(name, target, lambda: _created(func(*args, **kwargs), target),
                                lambda: _created(np_func(*args, **kwargs), CPU)), device)

    result: Any = public or general
    result.__name__ = name
    result.__qualname__ = name
    result.__doc__ = np_func.__doc__
    result.__module__ = "autodev"
    result.__wrapped__ = np_func  # NumPy's signature
    binds = hasattr(type(np_func), "__get__")
    if name in _SHAPED:
        return compiled("create", np_func, result, binds=binds)
    return compiled("made", np_func, result, other=_created_on_host, binds=binds)


def _created_on_host(result: Any) -> Any:
    """:func:`_created` on the host: what the compiled *made* path gives a result that is
    not one NumPy array."""
    return _created(result, CPU)


def _device_holds(target: Device, name: str, args: tuple[Any, ...],
                  kwargs: dict[str, Any]) -> bool:
    """Whether ``target`` holds the dtype creation call ``name`` makes (a long double or a
    string array is made on the host instead: capability, as :func:`place`)."""
    at = _DTYPE_AT[name]
    dtype = kwargs.get("dtype", args[at] if len(args) > at else None)
    if dtype is None:
        if name != "full":
            return True  # NumPy's defaults: float64, or the integers of arange
        dtype = np.asarray(kwargs.get("fill_value", args[1] if len(args) > 1 else 0)).dtype
    return backend_for(target).supports_dtype(np.dtype(dtype))


def _creation_arg(value: Any) -> Any:
    """An autodev array argument as host data (a NumPy scalar when 0-d)."""
    if type(value) is not ndarray:
        return value
    host = cpu_arg(value)
    return host[()] if host.ndim == 0 else host


def _pinned(result: Any, device: DeviceLike | None) -> Any:
    """A created array pinned where ``device=`` asked (None or ``"auto"``: not pinned)."""
    if device is None:
        return result
    target = resolve_device(device, counted=True)  # creation_device resolved it first
    if target is AUTO:
        return result
    note_pinned()
    for a in result if type(result) is tuple else (result,):
        if type(a) is ndarray:
            a._pin = target
    return result


def place(op: str, host: Any, target: Device, storage: R.Storage | None = None) -> ndarray:
    """A new array with the data of NumPy ``host`` on ``target``; out of memory there,
    it stays on the host (counted, warned: :func:`autodev._residency.memory.retrying`)."""
    if type(host) is tuple:  # linspace(retstep=True)
        array, step = host
        return place(op, array, target), step  # type: ignore[return-value]  # retstep's pair
    if target is CPU or not backend_for(target).supports_dtype(host.dtype):
        return new(host, CPU, storage)  # (a dtype the device cannot hold: capability)
    return retrying(op, target, lambda: new(R.transfer(host, CPU, target), target),
                    lambda: new(host, CPU, storage))


def _created(result: Any, device: Device) -> Any:
    """Wrap a creation result; ``linspace(..., retstep=True)`` gives ``(array, step)``."""
    if type(result) is tuple:
        array, step = result
        if backend_for(device).is_native(step):  # a step is a NumPy scalar, as NumPy gives
            step = R.transfer(step, device, CPU)[()]
        elif not isinstance(step, np.generic):  # CuPy's is a Python float (or complex)
            step = np.asarray(step)[()]
        return new(array, device), step
    return new(result, device)


def array(object: Any, dtype: Any = None, *, copy: bool | None = True,  # noqa: A002
          order: Order = "K", subok: bool = False, ndmin: int = 0, ndmax: Any = _NO_ARGUMENT,
          like: Any = None, device: DeviceLike | None = None) -> ndarray:
    """Create an array (NumPy's ``array``), on ``device=`` or where ``object`` lives."""
    if copy is True and device is None and ndmax is _NO_ARGUMENT and plain_sequence(object) \
            and (_FAST or (_HOST_MADE and MADE_ON_HOST[policy_now()])):
        # numbers in lists: new memory on the host, as the general path makes it below
        return new(np.array(object, dtype, copy=True, order=order, ndmin=ndmin), CPU)
    if ndmax is not _NO_ARGUMENT:  # a limit on the dimensions of nested sequences: NumPy's
        host = np.array(cpu_arg(object), dtype=dtype, copy=copy, order=order, ndmin=ndmin,
                        ndmax=ndmax)
        return _array(host, copy=None, device=device)
    return _array(object, dtype, copy=copy, order=order, ndmin=ndmin, device=device)


#: How deep :func:`plain_sequence` looks into nested lists (NumPy's own limit is 64
#: dimensions); the compiled path (``sequence``, autodev/_speedups.c) is told the same.
SEQUENCE_DEPTH = 32
#: The keywords :func:`array`'s fast path gives NumPy's ``array`` as they are (the
#: compiled path passes every other call on).
ARRAY_KEYWORDS = ("dtype", "order", "ndmin")


def plain_sequence(obj: Any, depth: int = SEQUENCE_DEPTH) -> bool:
    """True for a list or tuple of Python and NumPy numbers (:data:`PLAIN_SCALARS`'
    types), or of such lists and tuples, nested at most ``depth`` deep: what NumPy reads
    alike whatever autodev does (no array, nothing with ``__array__``)."""
    t = type(obj)
    if (t is not list and t is not tuple) or depth == 0:
        return False
    for item in obj:
        if type(item) not in PLAIN_SCALARS and not plain_sequence(item, depth - 1):
            return False
    return True


array.__module__ = "autodev"  # (as NumPy's twin reads: autodev.array)
array = compiled("sequence", np.array, array, binds=False)
if SPEEDUPS is not None:
    SPEEDUPS.set_sequence(SEQUENCE_DEPTH, ARRAY_KEYWORDS)


def _array(obj: Any, dtype: Any = None, *, copy: bool | None = True, order: Order = "K",
           ndmin: int = 0, device: DeviceLike | None = None) -> ndarray:
    copy = _copy_flag(copy)
    if type(obj) is ndarray and device is None:
        data = obj._native
        if copy is not True and _kept_as_is(data, dtype, order):
            return obj if ndmin <= obj.ndim else new(_ndmin(data, ndmin), obj._device,
                                                     R.storage_of(obj), False, obj._pin)
        if copy is False:
            raise ValueError(_NO_COPY)
        backend = backend_for(obj._device)

        def on_host() -> ndarray:
            return new(np.array(obj._host(), dtype=dtype, copy=True, order=order, ndmin=ndmin),
                       CPU, None, False, obj._pin)

        if dtype is not None and not backend.supports_dtype(np.dtype(dtype)):
            return on_host()  # (object, strings, datetimes: the host's, as any array of them)
        xp = backend.xp
        return retrying("array", obj._device, lambda: new(xp.array(
            data, dtype=dtype, copy=True, order=order, ndmin=ndmin), obj._device, None, False,
            obj._pin), on_host)
    if type(obj) is ndarray:  # to another device, or placed as ``device=`` says
        return placed(_array(obj, dtype, copy=copy, order=order, ndmin=ndmin), device)
    if is_plain_array_like(type(obj)):
        result, copied = _from_array_method(obj, dtype, copy)
        return _array(result, dtype, copy=None if copied else copy, order=order, ndmin=ndmin,
                      device=device)
    host = np.array(cpu_arg(obj), dtype=dtype, copy=copy, order=order, ndmin=ndmin)
    if _FAST and device is None and copy is not False and host.base is None \
            and host is not obj:
        return new(host, CPU)  # memory NumPy just made, shared with nothing: the host's
    escaped = copy is False or (copy is None and type(obj) is np.ndarray and host is obj)
    # memory shared with ``obj`` (copy=False, or a buffer NumPy did not need to copy)
    # stays where it is: moving it would be the copy NumPy's caller asked not to make
    shared = escaped or (copy not in (True, np._CopyMode.ALWAYS) and host.base is not None)
    target = CPU if shared and device is None else creation_device(device)
    return _pinned(place("array", host, target, R.Storage(escaped=True) if shared else None),
                   device)


_NO_COPY = ("Unable to avoid copy while creating an array as requested.\nIf using "
            "`np.array(obj, copy=False)` replace it with `np.asarray(obj)` to allow a copy "
            "when needed (no behavior change in NumPy 1.x).\nFor more details, see "
            "https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
            "#adapting-to-changes-in-the-copy-keyword.")


_NO_COPY_KEYWORD = (
    "__array__ implementation doesn't accept a copy keyword, so passing copy=False failed. "
    "__array__ must implement 'dtype' and 'copy' keyword arguments. To learn more, see the "
    "migration guide https://numpy.org/devdocs/numpy_2_0_migration_guide.html"
    "#adapting-to-changes-in-the-copy-keyword")


def _from_array_method(obj: Any, dtype: Any, copy: bool | None) -> tuple[Any, bool]:
    """``obj.__array__`` called as NumPy's ``array`` calls it, and whether it copied.

    ``copy=`` is passed unless None, and a copy made for ``copy=True`` is trusted (not
    made again). An ``__array__`` without the keyword is called without it, with NumPy's
    DeprecationWarning, and refused for ``copy=False``.
    """
    args = () if dtype is None else (dtype,)
    if copy is None:
        return check_array(obj.__array__(*args)), False
    try:
        return check_array(obj.__array__(*args, copy=copy)), copy
    except TypeError as err:
        if "copy" not in str(err):
            raise
    warnings.warn(_NO_COPY_KEYWORD, DeprecationWarning, stacklevel=4)
    if copy is False:
        raise ValueError(_NO_COPY)
    return check_array(obj.__array__(*args)), False


def _copy_flag(copy: Any) -> bool | None:
    """``copy=`` as True (always), None (if needed) or False (never), as NumPy reads it:
    ``numpy._CopyMode`` members by their meaning, anything else by its truth."""
    if copy is True:  # (the default)
        return True
    if copy is None or isinstance(copy, np._CopyMode):
        return {None: None, np._CopyMode.ALWAYS: True, np._CopyMode.IF_NEEDED: None,
                np._CopyMode.NEVER: False}[copy]
    if isinstance(copy, str):
        raise ValueError("strings are not allowed for 'copy' keyword. Use True/False/None "
                         "instead.")
    return bool(copy)


def _order_of(order: Any) -> str:
    """``order=`` as NumPy reads it: "C", "F", "A" or "K", in either case, bytes too (None:
    "K"); NumPy's own error for anything else."""
    if order is None:
        return "K"
    if type(order) is bytes:
        order = order.decode("latin-1")
    if type(order) is not str or len(order) != 1 or order.upper() not in "CFAK":
        np.empty(0, order=order)  # (raises NumPy's ValueError or TypeError)
    return str(order).upper()


def _kept_as_is(data: Any, dtype: Any, order: Order | None) -> bool:
    """Whether ``array(x, dtype=dtype, order=order)`` can be ``x``'s own memory: the same
    dtype, and the contiguity ``order`` asks for ("A" and "K" take any), as NumPy's."""
    order = _order_of(order)  # type: ignore[assignment]
    if dtype is not None and np.dtype(dtype) != data.dtype:
        return False
    if order == "C":
        return bool(data.flags.c_contiguous)
    if order == "F":
        return bool(data.flags.f_contiguous)
    return True


def _ndmin(data: Any, ndmin: int) -> Any:
    return data.reshape((1,) * (ndmin - data.ndim) + data.shape)


def asarray(a: Any, dtype: Any = None, order: Order | None = None, *,
            device: DeviceLike | None = None, copy: bool | None = None,
            like: Any = None) -> ndarray:
    """Convert to an autodev array without copying where possible (NumPy's ``asarray``)."""
    obj = a
    if type(obj) is ndarray and dtype is None and order is None and device is None \
            and not copy:
        return obj  # (the commonest call: nothing to convert)
    if type(obj) in SUBCLASSES:
        obj = obj.view(ndarray)  # its base-class view (same data, same device), as NumPy's
    if type(obj) is ndarray:
        moved = obj if device is None else obj.to_device(device)
        if (dtype is None or np.dtype(dtype) == obj.dtype) and not copy \
                and _order_of(order) == "K":
            return moved
        # (NumPy's order: "C" or "F" lays the data out so, copying where it is not;
        # "A" keeps Fortran order where the data has it)
        return array(moved, dtype=dtype, copy=False if copy is False else bool(copy) or None,
                     order="K" if order is None else order)
    gpu = STATE.gpu
    if gpu is not None and gpu.is_native(obj):
        return new(obj, gpu.device, R.Storage(escaped=True))
    if is_plain_array_like(type(obj)):
        obj = cpu_arg(obj)  # its __array__ may give an autodev array, which NumPy refuses
    host = np.asarray(obj, dtype=dtype, order=order, copy=copy)
    shared = host is obj or host.base is not None
    storage = R.Storage(escaped=True) if shared else None
    target = creation_device(device) if device is not None else CPU
    return _pinned(place("asarray", host, target, storage), device)


_DLPACK_CPU = 1  # DLDeviceType.kDLCPU


def from_dlpack(x: Any, /, *, device: DeviceLike | None = None,
                copy: bool | None = None) -> ndarray:
    """An autodev array sharing (or, if it must or ``copy=True``, copying) ``x``'s data.

    Parameters
    ----------
    x : object
        Anything with ``__dlpack__`` and ``__dlpack_device__``.
    device : Device or str, optional
        Where the result must live; default: where the producer's data is.
    copy : bool, optional
        True: always copy. False: never (ValueError if it would have to).
        None: copy only if needed.
    """
    if isinstance(x, ndarray):
        return asarray(x, device=device, copy=copy)
    kind = x.__dlpack_device__()[0]
    gpu = active_gpu() if kind != _DLPACK_CPU else None
    if gpu is not None and gpu.device.kind == "cuda":  # a CUDA producer, CUDA usable here
        array = asarray(gpu.xp.from_dlpack(x, copy=copy))
    elif kind == _DLPACK_CPU:
        array = asarray(np.from_dlpack(x, copy=copy))
    else:  # device data and no usable device here: the producer copies it out
        array = asarray(np.from_dlpack(x, device="cpu", copy=copy))
    if device is None:
        return array
    if copy is False and device != "auto" and array.location != device:
        raise ValueError(f"from_dlpack(copy=False) cannot move data from {array.location} to "
                         f"{device}. Use copy=None to allow the copy.")
    return array.to_device(device)


def asanyarray(a: Any, dtype: Any = None, order: Order | None = None, **kwargs: Any) -> ndarray:
    """:func:`asarray`, keeping a subclass of ``autodev.ndarray`` (``class A(np.ndarray)``
    under ``import autodev as np``) as NumPy's keeps its own."""
    obj = a
    cls = type(obj)
    if cls in SUBCLASSES and (dtype is None or np.dtype(dtype) == obj.dtype) \
            and kwargs.get("device") is None and not kwargs.get("copy"):
        return obj  # nothing to convert: the very array, as NumPy returns it
    result = asarray(obj, dtype=dtype, order=order, **kwargs)
    return keep_class(result, cls, obj) if cls in SUBCLASSES else result
