"""Dispatch: choose the device for a call, run it there, wrap the results.

Per call: inputs pinned to a device run there (two pins raise); otherwise which
devices can run it (the capability table: the function exists on the backend and
the backend holds the dtypes) -> predicted cost on each (compute curve + moving
every input not already there; reuse credit may mirror an input first, see
:mod:`autodev._residency.reuse`) -> cheapest wins, ties to the CPU -> run -> wrap results on
the device that computed them, placed ``auto`` or pinned as their inputs were.
"""

from __future__ import annotations

import datetime
import numbers
from typing import Any, Callable, Iterable

import numpy as np

from . import _parallel
from ._residency import storage as R
from ._residency import reuse as _reuse
from ._backends import STATE, Backend, backend_for, cpu_backend, resolve_device
from ._cost.model import PROFILE_WRITTEN
from ._fusion import WATCHED, before_write
from ._device import CPU, Device
from ._residency.memory import after_declined, after_oom, check_not_view, host_pooled, write_back
from ._host_buffers import is_large
from ._capability.specs import OpSpec
from ._capability.table import TABLE
from ._names import READ_ONLY_RESULTS  # NumPy's read-only views; CuPy's are writable
from ._trace import STATS, Record, emit, tick
from . import _chains, _decide  # (_chains: where deferred chains run, bound at import)
from ._cost.cache import bind_state, reset as reset_model
from ._decide import _DECISIONS, _GPU_DTYPES, all_on_host, alone_on_host, choose


#: Families whose GPU calls must raise LinAlgError on singular input.
LINALG_FAMILIES = frozenset({"solve", "cholesky", "svd", "eigh"})


# --------------------------------------------------------------------------- CPU path

#: Array types besides ndarray that calls take (autodev's sparse matrices), each with
#: its ``native_on(obj, device, moves)``; registered by the modules defining them.
FOREIGN_ARRAYS: dict[type, Callable[[Any, Device, Any], Any]] = {}
#: Native result types besides arrays (SciPy/cupyx sparse matrices), each with its
#: ``wrap(result, device, args)`` returning the autodev object.
FOREIGN_RESULTS: dict[type, Callable[[Any, Device, tuple[Any, ...]], Any]] = {}
#: Array types that hold autodev arrays as their chunks (Dask's, once autodev is registered
#: with Dask): a call given one of them is theirs to run (NEP 13/18), see :func:`hand_over`.
DEFER_TO: set[type] = set()
#: Finders of such types that autodev meets before it knows them (their library was
#: imported after autodev, so nothing registered them at ``import autodev``): each is
#: given the type of an operand that overrides NumPy's protocols and is no ``DEFER_TO``
#: type, and says whether it made it one (registering autodev with that library).
#: autodev._dask's waits for Dask's array and leaves once autodev is registered with
#: Dask. Only operands of a foreign type that overrides NumPy reach them.
WRAPPER_FINDERS: list[Callable[[type], bool]] = []


def found_wrapper(t: type) -> bool:
    """True if ``t`` has just become a ``DEFER_TO`` type: a finder knew it."""
    return any(find(t) for find in tuple(WRAPPER_FINDERS))


def cpu_arg(obj: Any) -> Any:
    """``obj`` with autodev arrays replaced by NumPy arrays (lists/tuples walked)."""
    t = type(obj)
    if t is ndarray:
        return obj._native if obj._device is CPU else R.native_on(obj, CPU)
    if t is tuple or t is list:
        if _all_not_array_like(map(type, obj)):  # ([True, False], (1, 2)): nothing to walk
            return obj
        # (a host array's data read inline, the commonest item; a list, not a generator)
        found = [o._native if type(o) is ndarray and o._device is CPU else cpu_arg(o)
                 for o in obj]
        return found if t is list else tuple(found)
    if t in FOREIGN_ARRAYS:
        return FOREIGN_ARRAYS[t](obj, CPU, None)
    if t not in _NOT_ARRAY_LIKE and is_plain_array_like(t):
        return cpu_arg(_array_of(obj))
    return obj


def _array_of(obj: Any) -> Any:
    """``obj.__array__()``, which must be an array (NumPy's ValueError if it is not)."""
    return check_array(obj.__array__())


def check_array(result: Any) -> Any:
    """``result`` of an ``__array__``, which must be an array (NumPy's ValueError if not)."""
    if not isinstance(result, (np.ndarray, ndarray)):
        raise ValueError("object __array__ method not producing an array")
    return result


#: Operand types that are never array-likes (the commonest, checked first).
_NOT_ARRAY_LIKE = frozenset({int, float, complex, bool, str, type(None), slice, type(...),
                             np.float64, np.float32, np.int64, np.int32, np.bool_, np.dtype})
_all_not_array_like = _NOT_ARRAY_LIKE.issuperset


def is_plain_array_like(t: type) -> bool:
    """Whether ``t`` is an array-like known by its ``__array__`` alone, which autodev
    calls itself: in a program written for ``import autodev as np`` it returns
    ``np.asarray(...)``, an autodev array, which NumPy would refuse (it requires a
    ``numpy.ndarray``). Classes with NumPy's overrides (``__array_ufunc__``,
    ``__array_function__``) are left to them."""
    if issubclass(t, (np.ndarray, np.generic)) or not hasattr(t, "__array__") \
            or hasattr(t, "__array_ufunc__") or hasattr(t, "__array_function__"):
        return False
    return True


def cpu_call(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run on NumPy with no cost model (no GPU usable, or the decision is the CPU)."""
    func = spec.impl(_CPU)
    nargs = tuple([cpu_arg(a) for a in args])
    tick()
    if is_large(nargs):  # (False at once where there is no host buffer pool)
        return _cpu_pooled(func, args, nargs, kwargs)
    if not kwargs:
        return cpu_result(func(*nargs), args, nargs)  # type: ignore[misc]
    nkwargs = {k: cpu_arg(v) for k, v in kwargs.items()}
    result = func(*nargs, **nkwargs)  # type: ignore[misc]
    return wrap(result, CPU, args, kwargs, nkwargs.get("out"), False)


def cpu_result(result: Any, args: tuple[Any, ...], nargs: tuple[Any, ...]) -> Any:
    """NumPy's ``result`` of a host call given ``args`` (``nargs`` as NumPy got them, no
    keywords), as autodev returns it: memory NumPy just made (none of ``nargs``) as a new
    host array, NumPy scalars and Python values as they are, anything else wrapped (an
    argument's data: that argument; views share storage)."""
    t = type(result)
    if t is np.ndarray and result.base is None and id(result) not in map(id, nargs):
        return new(result, CPU)
    if t is not list and t is not np.ndarray and not isinstance(result, tuple) \
            and t not in FOREIGN_RESULTS:
        return result  # NumPy scalars and Python values (namedtuples are wrapped)
    return wrap(result, CPU, args, {}, None, False)


def host_impl(spec: OpSpec) -> Any:
    """The callable that runs ``spec`` on the host (NumPy's, or its correction)."""
    return spec.impl(_CPU)


def _cpu_pooled(func: Any, args: tuple[Any, ...], nargs: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
    """:func:`cpu_call` of a large call: its buffers from the host pool."""
    nkwargs = {k: cpu_arg(v) for k, v in kwargs.items()} if kwargs else {}
    result = host_pooled(lambda: func(*nargs, **nkwargs), "out" not in nkwargs)
    return wrap(result, CPU, args, kwargs, nkwargs.get("out"), False)


# --------------------------------------------------------------------------- general path

def call(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Dispatch one call of ``spec``."""
    if WATCHED:  # a pending chain reads memory through views: it runs first (the call
        before_write()  # may write, through out= or into an argument)
    if DEFER_TO and defers_to_other(args, kwargs):
        return hand_over(spec, args, kwargs)
    if STATE.fast:
        return cpu_call(spec, args, kwargs)
    if STATE.host_fast and len(args) == 1 and not kwargs and alone_on_host(spec, args[0]):
        return cpu_call(spec, args, kwargs)
    arrays: list[Any] = []
    _collect(args, arrays)
    if kwargs:
        _collect(kwargs.values(), arrays)
    if STATE.host_fast and "out" not in kwargs and all_on_host(spec, arrays):
        return cpu_call(spec, args, kwargs)  # (the decision choose() would make)
    pin = pin_of(arrays) if STATE.pinned else None
    host_only = _host_only(spec, args)
    device, record = choose(spec, arrays, kwargs, pin, host_only)
    result = execute(spec, device, args, kwargs, record)
    if pin is not None:
        result = _label(result, pin, arrays)
    return result


#: The capability rule of NumPy's ufuncs (their specs' ``gpu_ok``): it marks the calls whose
#: positional arguments are all operands, each of which a GPU must hold.
_UFUNC_RULE = TABLE["ufunc"].rule
#: Python scalars every GPU takes as operands.
_GPU_SCALARS = frozenset({int, float, complex, bool})


def gpu_operand(obj: Any) -> bool:
    """False for an operand no GPU holds (capability table, row ``ufunc``): one that NumPy
    reads as an object, string or datetime array (None, a Fraction, a ``str``,
    ``numpy.datetime64``, any other Python object) or a NumPy array or scalar of a dtype
    the GPU lacks. A call given one runs on the CPU, where NumPy gives its result (an
    object array) or its error; lists and tuples are converted on the device where each
    of their items is such an operand (a list holding a string or a long double makes an
    array no GPU holds)."""
    t = type(obj)
    if t in _GPU_SCALARS or t is ndarray or t in FOREIGN_ARRAYS:
        return True
    if t is tuple or t is list:
        return all(map(gpu_operand, obj))
    if t is np.ndarray or isinstance(obj, np.generic):
        gpu = STATE.gpu
        return gpu is None or gpu.supports_dtype(obj.dtype)
    return False


#: Python objects NumPy reads as one element of an array: numbers (a Fraction, a Decimal:
#: object arrays), dates and durations (datetime arrays).
_ARRAY_SCALARS = (numbers.Number, datetime.date, datetime.timedelta)


def _host_only(spec: OpSpec, args: tuple[Any, ...]) -> bool:
    """True if an argument keeps the call on the CPU: an instance of a subclass of NumPy's
    array (``numpy.matrix``, a masked array: NumPy's own code defines what they give), a
    NumPy array or scalar, list or tuple that makes an array of a dtype no GPU holds (the
    call would upload it), a number NumPy holds as an object (a Fraction, a Decimal), a
    Python date or duration, or,
    for a ufunc, any operand no GPU holds
    (:func:`gpu_operand`)."""
    ufunc = spec.gpu_ok is _UFUNC_RULE
    for a in args:
        t = type(a)
        if t is ndarray or t in _GPU_SCALARS:
            continue
        if t is not np.ndarray and isinstance(a, np.ndarray):
            return True
        if (ufunc or t is np.ndarray or t is list or t is tuple or isinstance(a, np.generic)
                or isinstance(a, _ARRAY_SCALARS)) and not gpu_operand(a):
            return True
    return False


def placed(result: Any, device: Any) -> Any:
    """``result`` placed as a ``device=`` keyword asks: None leaves it, ``"auto"`` unpins,
    any other device pins (moving the data there)."""
    if device is None:
        return result
    target = resolve_device(device)
    if type(result) is ndarray:
        return result.to_device(target)
    if type(result) is tuple:
        return tuple(placed(r, target) for r in result)
    return result


def pin_of(arrays: list[Any]) -> Device | None:
    """The device the call's inputs are pinned to (None: all placed by autodev)."""
    pin = None
    for a in arrays:
        p = getattr(a, "_pin", None)
        if p is not None and p is not pin:
            if pin is not None:
                raise ValueError(
                    f"Arrays pinned to different devices meet in one call: {pin} and {p}. "
                    f"Move one with x.to_device({str(pin)!r}), or unpin with "
                    "x.to_device('auto') to let autodev place them."
                )
            pin = p
    return pin


def _label(result: Any, pin: Device, inputs: list[Any]) -> Any:
    """Pin the fresh arrays of a pinned call's result (an input returned as is keeps its
    own placement). The data stays where it was computed: the next call moves it if it
    must, so a CPU-only function on GPU-pinned data costs no extra copy back."""
    t = type(result)
    if t is ndarray:
        if result._pin is None and not any(result is a for a in inputs):
            result._pin = pin
    elif t is tuple or t is list or hasattr(result, "_fields"):
        for r in result:
            _label(r, pin, inputs)
    return result


def defers_to_other(args: Iterable[Any], kwargs: dict[str, Any] | None = None) -> bool:
    """True if an argument (or an item of a list/tuple argument) is of a ``DEFER_TO`` type."""
    for obj in (*args, *kwargs.values()) if kwargs else args:
        t = type(obj)
        if t in DEFER_TO or ((t is tuple or t is list) and defers_to_other(obj)):
            return True
    return False


def hand_over(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a call that involves a wrapping array type through NumPy's function, arguments
    untouched: NumPy's protocols then give it to the wrapper (autodev's own overrides
    decline, see ``ndarray.__array_function__``), e.g. ``autodev.add(a, dask_array)`` is a
    Dask array of autodev chunks. A method runs as the NumPy function of its name."""
    func = getattr(np, spec.path[1:]) if spec.path.startswith(".") else spec.impl(_CPU)
    return wrap(func(*args, **kwargs), CPU, args, kwargs, None, spec.scalar)  # type: ignore[misc]


def _collect(items: Iterable[Any], found: list[Any]) -> None:
    for obj in items:
        t = type(obj)
        if t is ndarray or t in FOREIGN_ARRAYS:
            found.append(obj)
        elif t is tuple or t is list:
            _collect(obj, found)


def execute(spec: OpSpec, device: Device, args: tuple[Any, ...], kwargs: dict[str, Any],
            record: Record | None) -> Any:
    """Run ``spec`` on ``device``; on out-of-memory free, retry, then fall back
    (:func:`autodev._residency.memory.retrying`'s rule, the first attempt made here)."""
    moves: list[tuple[str, int]] | None = record.transfers if record is not None else None
    if kwargs and "out" in kwargs:
        _check_outputs(kwargs["out"])
    if device is CPU:
        run = _fallback_cpu if kwargs and "out" in kwargs else _run_cpu
        if record is not None:  # how many threads ran it (autodev._parallel sets it)
            _parallel.LAST.threads = 1
        result = run(spec, args, kwargs, moves)
        if record is not None:
            record.threads = _parallel.LAST.threads
    else:
        backend = backend_for(device)
        out_of_memory = False
        try:
            result = _run(spec, backend, args, kwargs, moves)
        except backend.oom_errors:
            out_of_memory = True  # (handled outside: the retry's errors chain to nothing)
        except NotImplementedError as declined:
            result, device = _declined(spec, device, declined, args, kwargs, record, moves)
        if out_of_memory:
            result, device = _retried(spec, device, backend, args, kwargs, record, moves)
    STATS.calls[str(device)] = STATS.calls.get(str(device), 0) + 1
    if record is not None:
        emit(record)
    return result


def _check_outputs(out: Any) -> None:
    """Refuse read-only ``out=`` arrays before the call runs, with NumPy's error, wherever
    they live (device memory takes any write)."""
    for o in out if type(out) is tuple else (out,):
        if isinstance(o, ndarray):
            R.check_writeable(o, "output array is read-only")


def _retried(spec: OpSpec, device: Device, backend: Backend, args: tuple[Any, ...],
             kwargs: dict[str, Any], record: Record | None,
             moves: list[tuple[str, int]] | None) -> tuple[Any, Device]:
    """A device call after its first attempt ran out of memory: free and retry, then run
    on the host (:func:`autodev._residency.memory.after_oom`). Returns the result and
    where it ran."""
    fell_back: list[bool] = []

    def on_host() -> Any:
        fell_back.append(True)
        if record is not None:
            record.reason += f"; out of memory on {device}, ran on cpu"
            record.device = "cpu"
        return _fallback_cpu(spec, args, kwargs, moves, device)

    result = after_oom(spec.name, device, lambda: _run(spec, backend, args, kwargs, moves),
                       on_host)
    return result, CPU if fell_back else device


def _declined(spec: OpSpec, device: Device, declined: NotImplementedError,
              args: tuple[Any, ...], kwargs: dict[str, Any], record: Record | None,
              moves: list[tuple[str, int]] | None) -> tuple[Any, Device]:
    """Declared safety net: CuPy raises NotImplementedError for a case it lacks that no
    table row foresaw. The call runs on the CPU, counted and traced
    (:func:`autodev._residency.memory.after_declined`); anything else (TypeError,
    ValueError, device errors) propagates."""
    def on_host() -> Any:
        if record is not None:
            record.reason += f"; {device} does not implement it ({declined}), ran on cpu"
            record.device = "cpu"
        return _fallback_cpu(spec, args, kwargs, moves, device)  # (a view stays a view)

    return after_declined(spec.name, device, declined, on_host), CPU


def _run_cpu(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
             moves: list[tuple[str, int]] | None) -> Any:
    return _run(spec, _CPU, args, kwargs, moves)


def _run(spec: OpSpec, backend: Backend, args: tuple[Any, ...], kwargs: dict[str, Any],
         moves: list[tuple[str, int]] | None) -> Any:
    device = backend.device
    func = spec.impl(backend)
    if func is None:
        raise NotImplementedError(f"{spec.name} has no implementation on {device}")
    # (an input living there already is its own data: the common case, read inline)
    nargs = [a._native if type(a) is ndarray and a._device is device
             else native_arg(a, device, moves) for a in args]
    nkwargs = {k: native_arg(v, device, moves) for k, v in kwargs.items()} if kwargs else {}
    if backend.is_gpu and spec.family in LINALG_FAMILIES:
        with backend.linalg_errors():
            result = func(*nargs, **nkwargs)
    elif backend is _CPU and is_large(nargs):
        result = host_pooled(lambda: func(*nargs, **nkwargs), "out" not in nkwargs)
    else:
        result = func(*nargs, **nkwargs)
    wrapped = _wrap_one(result, device, backend, args, kwargs, nkwargs.get("out"),
                        spec.scalar)
    if backend.is_gpu and spec.name in READ_ONLY_RESULTS and type(wrapped) is ndarray \
            and wrapped._storage is not None:  # a view of an input (diag of a matrix)
        R.make_read_only(wrapped)  # NumPy's view is read-only; CuPy's is writable
    return wrapped


def _fallback_cpu(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                  moves: list[tuple[str, int]] | None, left: Device | None = None) -> Any:
    """Run on the CPU; ``out=`` arrays living on a device get written through host copies
    (``left``: the device that failed the call, if one did)."""
    out = kwargs.get("out") if kwargs else None
    outs = out if type(out) is tuple else (out,)
    if spec.where == "primary" and left is not None:
        return _view_fallback(spec, args, kwargs, moves, left)
    # (isinstance: an out= may be an instance of a user's subclass, autodev._subclass)
    if not any(isinstance(o, ndarray) and o._device is not CPU for o in outs):
        return _run(spec, _CPU, args, kwargs, moves)
    # write into host copies (``where=`` keeps the untouched elements), then copy them back
    # into the same device memory (no new device array: the device may be out of memory)
    hosts = tuple(new(R.transfer(o._native, o._device, CPU, moves), CPU)
                  if isinstance(o, ndarray) and o._device is not CPU else o for o in outs)
    result = _run(spec, _CPU, args, {**kwargs, "out": hosts if type(out) is tuple else hosts[0]},
                  moves)
    for o, h in zip(outs, hosts):
        if h is not o:
            write_back(o._native, o._device, h._native, moves)
            R.mark_written(o)
    back = {id(h): o for o, h in zip(outs, hosts)}
    if type(result) is tuple:
        return tuple(back.get(id(r), r) for r in result)
    return back.get(id(result), result)


def _view_fallback(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any],
                   moves: list[tuple[str, int]] | None, left: Device) -> Any:
    """A ``primary`` call (reshape, transpose, ...) on the host after an out-of-memory:
    allowed only where its result is a copy anyway; a view of a host copy is refused."""
    func = spec.impl(_CPU)
    nargs = tuple(native_arg(a, CPU, moves) for a in args)
    nkwargs = {k: native_arg(v, CPU, moves) for k, v in kwargs.items()} if kwargs else {}
    result = func(*nargs, **nkwargs)  # type: ignore[misc]
    check_not_view(spec.name, left, (*nargs, *nkwargs.values()), result)
    return wrap(result, CPU, args, kwargs, None, spec.scalar)


def native_arg(obj: Any, device: Device, moves: list[tuple[str, int]] | None) -> Any:
    """``obj`` with autodev arrays replaced by native arrays of ``device``."""
    t = type(obj)
    if t is ndarray:
        return R.native_on(obj, device, moves)
    if t is tuple or t is list:
        return t(native_arg(o, device, moves) for o in obj)
    if t is np.ndarray and device is not CPU:
        return R.transfer(obj, CPU, device, moves)
    if t in FOREIGN_ARRAYS:
        return FOREIGN_ARRAYS[t](obj, device, moves)
    if t not in _NOT_ARRAY_LIKE and is_plain_array_like(t):
        return native_arg(obj.__array__(), device, moves)
    return obj


# --------------------------------------------------------------------------- results

def wrap(result: Any, device: Device, args: tuple[Any, ...], kwargs: dict[str, Any],
         out_native: Any, scalar: bool) -> Any:
    """Turn native results into autodev arrays living on ``device``."""
    backend = backend_for(device) if device is not CPU else _CPU
    return _wrap_one(result, device, backend, args, kwargs, out_native, scalar)


def _wrap_one(result: Any, device: Device, backend: Backend, args: tuple[Any, ...],
              kwargs: dict[str, Any], out_native: Any, scalar: bool) -> Any:
    if scalar and kwargs.get("out") is Ellipsis:
        scalar = False  # ``out=...``: NumPy's way to ask for an array, 0-d ones included
    if backend.is_native(result):
        if out_native is not None:
            out = _match_out(result, kwargs.get("out"), out_native)
            if out is not None:
                if isinstance(out, ndarray):
                    R.mark_written(out)
                return out
        if result.ndim == 0 and scalar:
            return result[()] if device is CPU else R.transfer(result, device, CPU)[()]
        # a device result owning its memory may be an input's own (CuPy gives a new
        # object for it): what owns it is compared with what owns each input's data
        owner = backend.owner(result) if device is not CPU and result.base is None else None
        for a in args:  # an input returned as is (ascontiguousarray, atleast_1d, ...)
            if a is result:  # a NumPy array: written behind autodev's back
                return new(result, device, R.Storage(escaped=True))
            if type(a) is ndarray:
                if a._native is result or (owner is not None and a._device is device
                                         and backend.owner(a._native) is owner):
                    return a  # the very array, as NumPy returns it
                if a._device is not device and R.has_mirror(a, device) \
                        and R.mirror_on(a, device) is result:  # never hand out a mirror
                    return new(backend.xp.array(result, copy=True), device)
        storage, result, base = _storage_for(result, device, backend, args)
        view = new(result, device, storage, scalar and result.ndim == 0)
        if base is not None:
            R.inherit(view, base)
        return view
    t = type(result)
    if t is tuple or t is list:
        items = [_wrap_one(r, device, backend, args, kwargs, out_native, scalar) for r in result]
        return t(items) if t is list or not hasattr(result, "_fields") else t(*items)
    if hasattr(result, "_fields"):  # namedtuple results (SVDResult, EighResult, ...)
        return type(result)(*(_wrap_one(r, device, backend, args, kwargs, out_native, scalar)
                              for r in result))
    if t in FOREIGN_RESULTS:
        return FOREIGN_RESULTS[t](result, device, args)
    return result


def _match_out(result: Any, out: Any, out_native: Any) -> Any:
    if type(out) is tuple:
        for o, n in zip(out, out_native):
            if n is result:
                return o
        return None
    return out if result is out_native else None


def _storage_for(result: Any, device: Device, backend: Backend, args: tuple[Any, ...]
                 ) -> tuple[R.Storage | None, Any, Any]:
    """The storage a fresh result shares, if it is a view of an input, and that input."""
    if getattr(result, "base", None) is None:
        return None, result, None
    owner = backend.owner(result)
    inputs: list[Any] = []
    _collect(args, inputs)
    for a in inputs:
        if not isinstance(a, ndarray):  # subclasses of ndarray (autodev._subclass) too
            continue  # sparse inputs: a dense result never views them
        if a._device is device and backend.owner(a._native) is owner:
            return R.storage_of(a), result, a
        mirror = R.mirror_on(a, device)
        if mirror is not None and backend.owner(mirror) is owner:
            # a view of a read-only mirror must not alias it: give it its own copy
            return None, backend.xp.array(result, copy=True), None
    if any(type(a) is np.ndarray or (device is not CPU and backend.is_native(a)) for a in args):
        return R.Storage(escaped=True), result, None
    return None, result, None


def new(data: Any, device: Device, storage: R.Storage | None = None, scalar: bool = False,
        pin: Device | None = None, face: bool = False) -> Any:
    """Make an autodev array around native ``data`` living on ``device`` (the private
    constructor); ``pin``: the device it is pinned to, None for autodev's placement;
    ``face``: an array of the array-API face (its 0-d results are arrays, not scalars)."""
    a = _object_new(ndarray)
    a._native = data
    a._device = device
    a._storage = storage
    a._mirror = None
    a._scalar = scalar
    a._pin = pin
    a._face = face
    if storage is not None and device is not CPU:
        R.track(storage, a)  # device memory views share: it moves to the host with them all
    return a


_object_new = object.__new__
_CPU = cpu_backend()

def reset_cost_model() -> None:
    """Forget the cached model (after calibration or a profile change)."""
    reset_model()
    _GPU_DTYPES.clear()
    _DECISIONS.clear()


bind_state(STATE)  # the cost model is made for the GPU in use
STATE.listeners.append(reset_cost_model)
PROFILE_WRITTEN.append(reset_cost_model)  # a new profile (calibration) means a new model




class _Unbound:
    """Stands for the array class until :mod:`autodev._array` binds it."""


#: The array class, :class:`autodev._array.ndarray`. It is defined a floor above this
#: module (its operators and methods call :func:`call`), so it binds itself here once it
#: exists (:func:`bind_array`): the dispatcher makes and recognises arrays through this
#: name, a module global, read as fast as an imported one.
ndarray: type[Any] = _Unbound


def bind_array(cls: type[Any]) -> None:
    """Make ``cls`` the array class calls take and return (done once, by autodev._array)."""
    global ndarray
    ndarray = cls
    _reuse._NATIVE_ON[cls] = R.native_on
    _reuse.SHARED_BY_VIEWS.add(cls)
    _decide.bind_array(cls)
