"""``autodev.ndarray``: NumPy's array API over data living on one device.

Operators and dispatched methods are declared in the class body, each made from
its spec in the function table (:mod:`autodev._capability.specs`). Each has a fast path for
the common case (no GPU usable, data on the host) that calls NumPy directly, and
otherwise goes through :func:`autodev._dispatch.call`. The class binds itself to
the dispatcher (:func:`autodev._dispatch.bind_array`), which sits below it.
"""

from __future__ import annotations

import operator
import sys
from typing import TYPE_CHECKING, Any, Callable, Iterator

import numpy as np

from . import _fusion, _host_buffers, _indexing, _methods, _operators, _threads
from ._residency import buffers as _buffers, storage as R
from ._backends import STATE, active_gpu, backend_for, note_pinned, resolve_device
from ._device import AUTO, CPU, Device
from ._config import MADE_ON_HOST, POLICY, SPEEDUPS
from ._cost.cache import HOST_NOW
from ._dispatch import DEFER_TO, WRAPPER_FINDERS, bind_array, cpu_arg, defers_to_other, \
    found_wrapper, new
from ._indexing import _FlatIter, flat_of as _flat_of
from ._methods import _host_buffer, _own, _view_attr, named_as_methods, numpy_method_signatures
from ._methods import rebuild as _rebuild  # (pickles name it here)
from ._compiled import compiled
from ._operators import PLAIN_SCALARS, PROTOCOLS, _PLAIN_ARGUMENTS, _PLAIN_OPERANDS, \
    _arithmetic, _binary, _comparison, _dispatched, _np_ndarray, _power, _unary_of
from ._capability.specs import ufunc_spec
from ._residency.memory import retrying
from ._overrides import install as install_overrides, overriding
from ._refcounts import _probe_temporary_refcount
from ._subclass import array_wrap, cast, install
from ._typing import Order


#: The array-API versions ``x.__array_namespace__(api_version=...)`` accepts.
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def _buffer_base() -> type:
    """The base class of :class:`ndarray`: ``object``, or, on Python < 3.12 where the
    compiled extension is built, one whose buffer protocol is ``__buffer__`` (PEP 688
    makes Python classes exporters from 3.12 on). It holds no rule, so it is used with
    ``AUTODEV_PURE_PYTHON=1`` too."""
    if sys.version_info >= (3, 12):
        return object
    try:
        from ._speedups import BufferExporter
    except ImportError:  # not built: no buffer protocol before 3.12 (docs/guide.md, Limits)
        return object
    return BufferExporter


def _of_data(name: str, setter: Any = None) -> Any:
    """The attribute ``name`` of the array's data (``a.size`` is ``a._native.size``), read
    without a Python frame: in C where the extension is built, else by a property of
    ``operator.attrgetter``. A pending array's empty slot is evaluated first, as always."""
    doc = f"NumPy's ``ndarray.{name}``."
    if SPEEDUPS is not None:
        return SPEEDUPS.DataAttribute(name, doc, setter)
    return property(operator.attrgetter(f"_native.{name}"), setter, doc=doc)


def _set_shape(a: "ndarray", value: Any) -> None:
    """``a.shape = value``: NumPy's reshape in place (its errors); a mirror has the old shape."""
    a._native.shape = value
    a._mirror = None


if TYPE_CHECKING:
    _BufferBase = object
else:
    _BufferBase = _buffer_base()


class ndarray(_BufferBase):
    """An N-dimensional array whose data lives on the CPU or a GPU.

    It behaves like ``numpy.ndarray``: same attributes, operators, indexing and
    methods, same results. Create arrays with ``autodev.array``, ``zeros``,
    ``asarray`` and the other creation functions, not with this class.

    Attributes
    ----------
    device : Device
        The array's placement: ``auto`` when autodev decides where it lives (the
        default), or the device it was pinned to with ``to_device``/``device=``.
    location : Device
        Where the primary copy lives now (``cpu``, ``cuda:0``, ``sim:0``).
    """

    __slots__ = ("_native", "_device", "_storage", "_mirror", "_scalar", "_pin", "_face",
                 "__weakref__")
    __array_priority__ = 100.0

    _native: Any
    _device: Device
    _storage: R.Storage | None
    _mirror: tuple[Device, int, Any] | None
    _scalar: bool  # True: a NumPy scalar kept on its device
    _pin: Device | None  # None: placed by autodev (auto); else the device it is pinned to
    _face: bool  # made by the array-API face: 0-d results are arrays (docs/array-api.md)

    def __new__(cls, shape: Any, dtype: Any = float, buffer: Any = None, offset: int = 0,
                strides: Any = None, order: Any = None) -> "ndarray":
        """NumPy's low-level constructor: an array of ``shape`` over ``buffer``'s memory.

        Without a buffer the memory is new and uninitialised (as ``empty``). A buffer is
        shared, as in NumPy: an autodev array on the host (writes through either are
        seen by the other), or anything with the buffer protocol (``bytes``,
        ``bytearray``, a NumPy array, ``mmap``). A subclass's ``__array_finalize__``
        runs with ``None``, as NumPy's does. Prefer ``autodev.empty``/``array``/
        ``frombuffer``, which say what they make.
        """
        if isinstance(buffer, ndarray):
            host = np.ndarray(shape, dtype, _host_buffer(buffer), offset, strides, order)
            made = new(host, CPU, R.storage_of(buffer), False, buffer._pin)
        else:
            host = np.ndarray(shape, dtype, buffer, offset, strides, order)
            # memory autodev did not make can be written behind its back: never mirrored
            made = new(host, CPU, None if buffer is None else R.Storage(escaped=True))
        return made if cls is ndarray else cast(made, cls, None)

    # ------------------------------------------------------------------ attributes
    shape: tuple[int, ...] = _of_data("shape", _set_shape)
    dtype: np.dtype = _of_data("dtype")
    ndim: int = _of_data("ndim")
    size: int = _of_data("size")
    itemsize: int = _of_data("itemsize")
    nbytes: int = _of_data("nbytes")

    @property
    def strides(self) -> tuple[int, ...]:
        return self._native.strides

    @strides.setter
    def strides(self, value: Any) -> None:
        _buffers.set_strides(self, value)

    @property
    def flags(self) -> Any:
        return self._native.flags if self._device is CPU else _buffers.DeviceFlags(self)

    @property
    def device(self) -> Device:
        """The array's placement: ``auto`` (autodev decides), or the device it is pinned to."""
        pin = self._pin
        return AUTO if pin is None else pin

    @property
    def location(self) -> Device:
        """The device holding this array's primary copy now (read-only)."""
        return self._device

    @property
    def T(self) -> "ndarray":
        return self.transpose()

    @property
    def mT(self) -> "ndarray":
        return self.swapaxes(-1, -2)

    @property
    def real(self) -> "ndarray":
        return _view_attr(self, "real")

    @real.setter
    def real(self, value: Any) -> None:
        self.real[...] = value

    @property
    def imag(self) -> "ndarray":
        return _view_attr(self, "imag")

    @imag.setter
    def imag(self, value: Any) -> None:
        self.imag[...] = value

    def _set_flat(self, value: Any) -> None:
        # NumPy's rule: the values, cast to the array's dtype, repeated to fill it in C order
        _fusion.before_write()
        if self._device is CPU:
            self._native.flat = cpu_arg(value)
            R.mark_written(self)
        else:
            R.check_writeable(self, "array is read-only")  # NumPy's words
            self.flat[...] = value

    # (the getter is flat_of itself: no frame of a method around it on a.flat's every read)
    flat = property(_flat_of, _set_flat, doc="A flat iterator over the array (NumPy's "
                    "``flatiter``): reads and writes by flat index, ``numpy.asarray(a.flat)``.")

    @property
    def base(self) -> Any:
        """The array whose memory this one views (None if it owns its memory), as NumPy's:
        an autodev array over that memory, sharing this one's storage (writes through
        either are seen by the other and by every mirror's version). It is made when
        asked, so a view keeps alive only the memory NumPy's view would (not the viewed
        wrapper's mirrors), and two reads are equal arrays, not the same object."""
        base = getattr(self._native, "base", None)
        if base is None:
            return None
        device = self._device
        if not backend_for(device).is_native(base):
            return base  # memory NumPy's array views (bytes, a memory map): NumPy's answer
        return new(base, device, R.storage_of(self), False, self._pin)

    # ------------------------------------------------------------------ devices
    def to_device(self, device: Device | str, /, *, stream: Any = None) -> "ndarray":
        """This array pinned to ``device`` (``"cpu"``, ``"gpu"``, ``"cuda:0"``), or placed
        by autodev again (``"auto"``).

        On its own device the result shares this array's memory, as NumPy's does; on
        another it is a copy. Calls whose inputs are pinned run on that device and
        return arrays pinned there. ``"gpu"`` where no GPU is usable places the array
        ``auto`` (warned once, counted in ``stats()``); a named device that is not usable
        raises RuntimeError.
        """
        target = resolve_device(device)
        if target is AUTO or target is self._device:
            pin = None if target is AUTO else target
            if pin is self._pin:
                return self
            if pin is not None:
                note_pinned()
            same = new(self._native, self._device, R.storage_of(self), self._scalar, pin,
                       self._face)
            same._mirror = self._mirror
            R.inherit(same, self)
            return same
        note_pinned()

        def move() -> "ndarray":
            native = R.native_on(self, target)
            storage = self._storage
            kept = self._mirror is not None or (storage is not None and bool(storage.shared))
            return new(_own(native, target) if kept else native, target, None, self._scalar,
                       target, self._face)

        # out of memory on the target: the copy stays on the host (counted, warned), pinned
        return retrying("to_device", target, move,
                        lambda: new(_own(self._host(), CPU), CPU, None, self._scalar, target,
                                    self._face))

    def get(self) -> np.ndarray:
        """A NumPy copy of the data (as ``cupy.ndarray.get`` gives)."""
        return np.array(R.host_copy(self._native, self._device), copy=True)

    # ------------------------------------------------------------------ protocols
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return _buffers.host_array(self, dtype, copy)

    # host memory: shared on the host, read-only copies or refusals on a device (_buffers)
    __array_interface__ = property(_buffers.array_interface)
    __array_struct__ = property(_buffers.array_struct)
    ctypes = property(_buffers.ctypes)
    data = property(_buffers.data)
    setflags = _buffers.set_flags
    __bytes__ = _buffers.to_bytes
    __buffer__ = _buffers.buffer

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if DEFER_TO and defers_to_other(inputs, kwargs):
            return NotImplemented  # a Dask array among the operands runs the ufunc (NEP 13)
        if overriding(inputs, kwargs):
            return NotImplemented  # as NumPy's array's: an override among them runs it
        # (NumPy's ufunc, or autodev's when an override passes it on through super())
        if not callable(ufunc) or not isinstance(method, str):
            raise TypeError(f"__array_ufunc__ takes a ufunc and a method name. Got "
                            f"{ufunc!r} and {method!r} instead.")
        wrapper = PROTOCOLS.ufunc_for(getattr(ufunc, "_np", ufunc))
        if wrapper is None:
            return NotImplemented
        if method == "__call__":
            return wrapper(*inputs, **kwargs)
        return getattr(wrapper, method)(*inputs, **kwargs)

    def __array_function__(self, func: Callable[..., Any], types: Any, args: Any,
                           kwargs: Any) -> Any:
        if DEFER_TO and not DEFER_TO.isdisjoint(types):
            return NotImplemented  # a Dask array among the arguments runs it (NEP 18)
        if WRAPPER_FINDERS and len(types) > 1 and any(map(found_wrapper, types)):
            # a Dask array met for the first time (Dask imported after autodev), which
            # declined before it knew autodev's array: the call again, which it now runs
            return func(*args, **kwargs)
        found = PROTOCOLS.function_for(func)
        if found is None:
            return NotImplemented
        return found(*args, **kwargs)

    def __dask_tokenize__(self) -> Any:
        """What Dask hashes for this array's token (bound by :mod:`autodev._dask`, which
        registers autodev with Dask here where Dask was imported after autodev)."""
        return PROTOCOLS.dask_tokenize(self)

    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        """The array-API face (:mod:`autodev.array_api`): the standard's semantics over
        these same arrays; ``import autodev as np`` stays NumPy."""
        if api_version is not None and api_version not in API_VERSIONS:
            raise ValueError(
                f"api_version must be one of {', '.join(API_VERSIONS)} or None. "
                f"Got {api_version!r} instead."
            )
        return PROTOCOLS.array_namespace()

    def __dlpack__(self, *, stream: Any = None, max_version: tuple[int, int] | None = None,
                   dl_device: tuple[int, int] | None = None, copy: bool | None = None) -> Any:
        _fusion.before_write()  # (a pending chain reading this memory runs first)
        R.storage_of(self).escaped = True  # the consumer may write through it
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self._native.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._native.__dlpack_device__()

    def __reduce__(self) -> tuple[Any, ...]:
        # a host array's own memory, pickled by NumPy as it pickles its arrays (protocol 5
        # with a buffer_callback: out of band, shared, where it is contiguous); a device
        # array's host copy (the flag travels as an argument: a pickled NumPy array keeps
        # it only under protocol 5, and a device array is always writable)
        host = _buffers.shared_host(self) if self._device is CPU else \
            np.array(R.host_copy(self._native, self._device), copy=True)
        return (_rebuild, (host, str(self._device), self._scalar, self.device.__str__(),
                           self._device is not CPU or bool(self._native.flags.writeable),
                           self._face))

    # ------------------------------------------------------------------ conversions
    def _host(self) -> np.ndarray:
        return self._native if self._device is CPU else R.host_copy(self._native, self._device)

    def __bool__(self) -> bool:
        return bool(self._host())

    def __float__(self) -> float:
        return float(self._host())

    def __int__(self) -> int:
        return int(self._host())

    def __complex__(self) -> complex:
        return complex(self._host())

    def __index__(self) -> int:
        return operator.index(self._host()[()] if self.ndim == 0 else self._host())

    def __round__(self, ndigits: int | None = None) -> Any:
        if self._scalar:  # a NumPy scalar left on the device rounds like one
            return round(self._host()[()], ndigits)  # type: ignore[call-overload]
        raise TypeError("type autodev.ndarray doesn't define __round__ method")

    def __len__(self) -> int:
        return len(self._native)

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if self.ndim == 1 and not self._face:  # (the face's elements: 0-d arrays)
            return iter(self._host().copy() if self._device is not CPU else self._native)
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        host = self._host()
        return repr(host[()]) if self._scalar else repr(host)

    def __str__(self) -> str:
        host = self._host()
        return str(host[()]) if self._scalar else str(host)

    def __format__(self, spec: str) -> str:
        host = self._host()
        return format(host[()] if self.ndim == 0 else host, spec)

    def __hash__(self) -> int:
        if self._scalar:
            return hash(self._host()[()])
        raise TypeError("unhashable type: 'autodev.ndarray'")

    def __copy__(self) -> "ndarray":
        return self.copy()

    def __deepcopy__(self, memo: Any) -> "ndarray":
        result = self.copy()
        if self.dtype.hasobject:  # its elements deep-copied too (their errors raised), as
            result[...] = self._host().__deepcopy__(memo)  # NumPy's (on the host)
        return result

    def item(self, *args: Any) -> Any:
        return (self._native if self._device is CPU else self._host()).item(*args)

    item = compiled("method", _np_ndarray.item, item)

    def tolist(self) -> Any:
        return self._host().tolist()

    def tobytes(self, order: Order = "C") -> bytes:
        return self._host().tobytes(order)

    __len__ = compiled("method", len, __len__)  # (the host data's own, in C: no frame)
    __bool__ = compiled("method", bool, __bool__)
    __float__ = compiled("method", float, __float__)
    __int__ = compiled("method", int, __int__)
    __complex__ = compiled("method", complex, __complex__)
    tolist = compiled("method", _np_ndarray.tolist, tolist)
    tobytes = compiled("method", _np_ndarray.tobytes, tobytes)

    # ------------------------------------------------------------------ indexing
    # (autodev._indexing: the direct path on the host, the general one on a device)
    __getitem__ = _indexing.getitem
    __setitem__ = _indexing.setitem

    def __delitem__(self, key: Any) -> None:
        raise ValueError("cannot delete array elements")

    # ------------------------------------------------------------------ method-only calls
    # (autodev._methods: each runs where the array lives)
    astype = compiled("method", _np_ndarray.astype, _methods.astype)
    copy = compiled("method", _np_ndarray.copy, _methods.copy)
    view = compiled("method", _np_ndarray.view, _methods.view)

    __array_wrap__ = array_wrap

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass gets NumPy's subclass behaviour (see :mod:`autodev._subclass`)."""
        super().__init_subclass__(**kwargs)
        install_overrides(cls, PROTOCOLS.ufunc_for)  # before install: it keeps these
        install(cls)

    fill = _methods.fill
    sort = _methods.sort
    partition = _methods.partition
    put = _methods.put
    resize = _methods.resize
    getfield = _methods.getfield
    setfield = _methods.setfield
    dumps = _methods.dumps

    def __setstate__(self, state: Any, /) -> None:
        """Take NumPy's pickled array state (``numpy.ndarray.__reduce__``'s third item)."""
        host = np.ndarray.__new__(np.ndarray, (0,))
        host.__setstate__(state)
        self._native, self._device, self._storage = host, CPU, None
        self._mirror, self._scalar = None, False
        if not hasattr(self, "_pin"):
            self._pin = None

    def __array_finalize__(self, obj: Any, /) -> None:
        """Nothing, as NumPy's: a subclass's runs when one of its arrays is made."""

    flatten = _methods.flatten
    byteswap = _methods.byteswap

    def dump(self, file: Any) -> None:
        self._host().dump(file)

    def tofile(self, *args: Any, **kwargs: Any) -> None:
        self._host().tofile(*args, **kwargs)

    def __contains__(self, value: Any) -> bool:
        return bool((self == value).any())

    # ------------------------------------------------------------------ operators
    # Declared here, in NumPy's lib/mixins.py style, so that type checkers see them; each
    # is made from its ufunc's spec. ``==``/``!=`` run on the host as NumPy's own
    # operators (all False/True against a string).
    __add__, __radd__, __iadd__ = _arithmetic("add")
    __sub__, __rsub__, __isub__ = _arithmetic("subtract")
    __mul__, __rmul__, __imul__ = _arithmetic("multiply")
    __truediv__, __rtruediv__, __itruediv__ = _arithmetic("true_divide")
    __floordiv__, __rfloordiv__, __ifloordiv__ = _arithmetic("floor_divide")
    __mod__, __rmod__, __imod__ = _arithmetic("remainder")
    __pow__, __rpow__, __ipow__ = _arithmetic("power")
    __pow__, __ipow__ = _power(__pow__, False), _power(__ipow__, True)
    __matmul__, __rmatmul__, __imatmul__ = _arithmetic("matmul")
    __and__, __rand__, __iand__ = _arithmetic("bitwise_and")
    __or__, __ror__, __ior__ = _arithmetic("bitwise_or")
    __xor__, __rxor__, __ixor__ = _arithmetic("bitwise_xor")
    __lshift__, __rlshift__, __ilshift__ = _arithmetic("left_shift")
    __rshift__, __rrshift__, __irshift__ = _arithmetic("right_shift")
    __divmod__ = _binary(np.divmod, ufunc_spec("divmod"), False, "__rdivmod__")
    __rdivmod__ = _binary(np.divmod, ufunc_spec("divmod"), True, "__divmod__")
    __lt__ = _comparison("less")
    __le__ = _comparison("less_equal")
    __gt__ = _comparison("greater")
    __ge__ = _comparison("greater_equal")
    __eq__ = _comparison("equal", operator.eq)
    __ne__ = _comparison("not_equal", operator.ne)
    __neg__ = _unary_of("negative")
    __pos__ = _unary_of("positive")
    __abs__ = _unary_of("absolute")
    __invert__ = _unary_of("invert")

    # ------------------------------------------------------------------ dispatched methods
    # Each runs like its function (the function table's ``METHOD_SPECS``).
    sum = _dispatched("sum")
    prod = _dispatched("prod")
    mean = _dispatched("mean")
    std = _dispatched("std")
    var = _dispatched("var")
    min = _dispatched("min")
    max = _dispatched("max")
    argmin = _dispatched("argmin")
    argmax = _dispatched("argmax")
    any = _dispatched("any")
    all = _dispatched("all")
    cumsum = _dispatched("cumsum")
    cumprod = _dispatched("cumprod")
    trace = _dispatched("trace")
    dot = _dispatched("dot")
    argsort = _dispatched("argsort")
    argpartition = _dispatched("argpartition")
    searchsorted = _dispatched("searchsorted")
    nonzero = _dispatched("nonzero")
    clip = _dispatched("clip")
    round = _dispatched("round")
    conj = _dispatched("conj")
    conjugate = _dispatched("conjugate")
    take = _dispatched("take")
    repeat = _dispatched("repeat")
    compress = _dispatched("compress")
    choose = _dispatched("choose")
    reshape = _dispatched("reshape")
    ravel = _dispatched("ravel")
    transpose = _dispatched("transpose")
    swapaxes = _dispatched("swapaxes")
    squeeze = _dispatched("squeeze")
    diagonal = _dispatched("diagonal")


bind_array(ndarray)
_operators.bind_array(ndarray)
_indexing.bind_array(ndarray)


def _set_pending(active: bool) -> None:
    """A chain became pending, or none is left (:mod:`autodev._fusion`): the class gets
    ``__getattr__`` (which evaluates the chains when an empty ``_native`` slot is read) only
    while one is, since with it Python no longer specialises the reads of any attribute
    of the class."""
    if active:
        ndarray.__getattr__ = _pending_getattr  # type: ignore[attr-defined]
    elif "__getattr__" in ndarray.__dict__:
        del ndarray.__getattr__  # type: ignore[attr-defined]


def _pending_getattr(self: ndarray, name: str) -> Any:
    """``ndarray.__getattr__`` while a chain is pending: called only when an attribute is
    not found, so for an empty ``_native`` slot (a pending array, or an input of a pending
    chain) it returns the value, evaluated now; any other name raises Python's own error."""
    if name == "_native":
        return _fusion.force(self)
    return object.__getattribute__(self, name)


_fusion.LISTENERS.append(_set_pending)


# NumPy's signatures; the methods of _methods and _indexing named as the class's own
numpy_method_signatures(ndarray)
named_as_methods(ndarray, (_methods.__name__, _indexing.__name__), __name__)


def _bind_compiled(speedups: Any) -> None:
    """Bind the compiled fast paths to the array class and keep their flags in step with
    ``STATE.fast`` and ``STATE.host_fast``, as the Python paths' ``_FAST``/``_HOST_FAST``."""
    temporary = _probe_temporary_refcount(speedups.refcount_probe)
    speedups.configure(ndarray, _np_ndarray, CPU, _PLAIN_OPERANDS, PLAIN_SCALARS, R.Storage,
                       -1 if temporary is None else temporary, HOST_NOW, MADE_ON_HOST,
                       POLICY, _indexing._PLAIN_VALUES, _indexing._BASIC_KEYS)

    def sync() -> None:
        speedups.set_fast(STATE.fast, STATE.host_fast, STATE.host_made)

    STATE.listeners.append(sync)
    sync()
    speedups.set_arguments(_PLAIN_ARGUMENTS)

    def tell_floors(least: int) -> None:
        # The compiled paths run calls that need only the host pool's scope themselves
        # (set_pool); larger ones, to split or defer, go to the general path.
        floors = _threads.split_floors()  # (None's: general_from(pooled=False))
        speedups.set_split_from(floors[None], _threads.total_from(), floors)
        pool = _host_buffers.POOL
        if _host_buffers.POOLED_FROM == _host_buffers.NEVER or pool is None:
            speedups.set_pool(None, None, 0, 0)
        else:
            speedups.set_pool(pool.swap, pool.handler, _host_buffers.POOLED_FROM,
                              _host_buffers.THRESHOLD)

    _threads.on_floor(tell_floors)
    _fusion.WATCH_LISTENERS.append(speedups.set_watching)
    _fusion.LISTENERS.append(speedups.set_pending)


if SPEEDUPS is not None:
    _bind_compiled(SPEEDUPS)
