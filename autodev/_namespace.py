"""The function namespace: every public NumPy name, as autodev runs it.

Dispatched names become functions over their specs in the function table
(:mod:`autodev._capability.specs`), NumPy's ufuncs become :class:`ufunc` objects, creation
functions place their results, and everything else NumPy has is either run on the
CPU (its inputs moved to the host once) or handed out as NumPy's own object.
:func:`resolve_name` is what ``autodev.X``, ``autodev.linalg.X`` and
``autodev.fft.X`` are; NumPy's protocols on an array find their callables here
(:data:`autodev._array.PROTOCOLS`).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from . import _parallel
from ._residency import storage as R
from ._array import PLAIN_SCALARS as _PLAIN, PROTOCOLS, _in_place, _index_native, compiled, \
    ndarray
from ._backends import STATE, active_gpu, backend_for, note_pinned, resolve_device
from ._config import get_policy, policy_now
from ._device import AUTO, CPU, Device
from ._dispatch import HOST_FLOOR_WORK, call, cpu_arg, host_floor_work, is_plain_array_like, \
    native_arg, new, placed
from ._capability.table import scipy_special_ufunc, ufunc_at_ok
from ._capability.specs import NUMPY_UFUNCS, SPECS, OpSpec, ufunc_specs
from ._residency.memory import in_place_on_host, retrying, write_back
from ._overrides import normalized, overriding, run
from ._subclass import SUBCLASSES, keep_class, of_inputs
from ._trace import tick
from ._typing import Casting, DeviceLike, Order

CREATION = frozenset(
    "zeros ones empty full arange linspace logspace geomspace eye identity tri".split()
)

_np_ndarray = np.ndarray
_onew = object.__new__
_FAST = False  # mirrors STATE.fast (see autodev._array._FAST)
_HOST_FAST = False  # mirrors STATE.host_fast (see autodev._array._HOST_FAST)


def _sync_fast() -> None:
    global _FAST, _HOST_FAST
    _FAST = STATE.fast
    _HOST_FAST = STATE.host_fast


STATE.listeners.append(_sync_fast)
_sync_fast()
#: With no GPU usable, an operand this large sends the call to the general path, where
#: the CPU backend may split it over threads (see autodev._array._SPLIT_FROM).
_SPLIT_FROM = _parallel.NEVER


def _set_split_from(least: int) -> None:
    global _SPLIT_FROM
    _SPLIT_FROM = least


_parallel.on_floor(_set_split_from)  # the flags as they are now (refresh tells it of every change after)


# ---------------------------------------------------------------------- ufuncs

#: A ufunc operand not given (``sin(x)`` leaves the second one out).
_NO_ARGUMENT: Any = object()


class _UfuncType(type):
    """``isinstance(f, autodev.ufunc)`` holds for NumPy's ufuncs too (SciPy's special
    functions, ``numpy.frompyfunc``'s): under ``import autodev as np`` they are ufuncs."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return type.__instancecheck__(cls, obj) or (cls is ufunc and isinstance(obj, np.ufunc))

    def __subclasscheck__(cls, sub: type) -> bool:
        return type.__subclasscheck__(cls, sub) or (cls is ufunc and issubclass(sub, np.ufunc))


class ufunc(functools.partial, metaclass=_UfuncType):
    """A NumPy ufunc that dispatches: calling it, ``reduce``, ``accumulate``,
    ``reduceat``, ``outer`` and ``at``, with NumPy's attributes (``nin``, ``nout``,
    ``identity``, ``types``, ...)."""

    # A functools.partial over its own call function (:func:`_ufunc_call`): CPython calls
    # a partial in C, where a Python class's ``__call__`` costs a method lookup and an
    # argument re-pack first (~0.1 us of a 0.3 us tiny ufunc call). ``func``, ``args`` and
    # ``keywords`` are the partial's; everything else NumPy's ufunc has is forwarded.

    __name__: str
    _np: Any
    _spec: OpSpec
    _methods: dict[str, OpSpec]
    _tiny: str | None

    def __new__(cls, np_ufunc: Any, path: str, family: str, *, numpy: bool = True,
                where: str = "dispatch", gpu_ok: Any = None) -> "ufunc":
        # NumPy's own ufuncs share the function table's specs (the operators use them too)
        own = NUMPY_UFUNCS.get(np_ufunc.__name__) if numpy else None
        spec, methods = (own[1], own[2]) if own is not None and own[0] is np_ufunc \
            else ufunc_specs(np_ufunc, path, family, numpy=numpy, where=where, gpu_ok=gpu_ok)
        #: the family whose floor lets a tiny call on host data skip the decision (None: never)
        tiny = family if where == "dispatch" and family in (
            "elementwise", "transcendental") else None
        self = super().__new__(cls, compiled("ufunc", np_ufunc, _ufunc_call(np_ufunc, spec, tiny),
                                             _fast_other, family=tiny))
        self._np = np_ufunc
        self._spec, self._methods, self._tiny = spec, methods, tiny
        self.__name__ = np_ufunc.__name__
        self.__doc__ = np_ufunc.__doc__
        return self

    def __get__(self, obj: Any, objtype: Any = None) -> "ufunc":
        """Not a method when held by a class (``class Layer: act = np.tanh``), as NumPy's
        ufuncs are not: Python 3.14 makes ``functools.partial`` a method descriptor."""
        return self

    def __eq__(self, other: object) -> bool:
        """Equal to the NumPy ufunc it stands for, so a list or dict of NumPy's ufuncs
        finds it (``ufuncs.remove(np.bitwise_count)``, ``{numpy.sin: ...}[np.sin]``)."""
        # (isinstance(numpy.sin, ufunc) holds too: the NumPy ufunc has no _np of its own)
        return getattr(other, "_np", other) is self._np

    def __hash__(self) -> int:
        return hash(self._np)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return self._method("reduce", args, kwargs)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        return self._method("accumulate", args, kwargs)

    def reduceat(self, *args: Any, **kwargs: Any) -> Any:
        return self._method("reduceat", args, kwargs)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        return self._method("outer", args, kwargs)

    def _method(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``self.<name>(*args, **kwargs)``: an override's (NEP 13) where an operand has
        one, else dispatched, with the result of the inputs' subclass."""
        if _may_override(args, kwargs):
            inputs, given = normalized(name, args, kwargs)
            found = overriding(inputs, given)
            if found:
                return run(self, name, inputs, given, found)
        result = call(self._methods[name], args, kwargs)
        return of_inputs(args, result, kwargs, name) if SUBCLASSES else result

    def at(self, a: ndarray, indices: Any, b: Any = None) -> None:
        """Unbuffered in-place operation on ``a`` at ``indices`` (runs where ``a`` lives).

        A read-only ``a`` is refused on every device (NumPy 2.4's own ``at`` writes into
        it regardless, against its flag).
        """
        inputs = (a, indices) if b is None else (a, indices, b)
        found = overriding(inputs, {}) if _may_override(inputs, {}) else None
        if found:
            run(self, "at", inputs, {}, found)
            return
        R.check_writeable(a, "output array is read-only")
        device = a._device
        func = None if device is CPU or not ufunc_at_ok(self.__name__, a.dtype) \
            else backend_for(device).resolve(self._spec.path + ".at")
        on_host = (lambda host: self._np.at(host, cpu_arg(indices),
                                            *(cpu_arg(b),) if b is not None else ()))
        if device is CPU:
            on_host(a._data)
        elif func is None:  # declared: this ufunc has no device ``at``; apply it on the host
            in_place_on_host(self.__name__ + ".at", a, on_host)
        else:
            def on_device() -> None:
                key = _index_native(indices, device, a.shape)  # bounds checked as NumPy does
                func(a._data, key, *(() if b is None else (_native(b, device),)))

            retrying(self.__name__ + ".at", device, on_device,
                     lambda: in_place_on_host(self.__name__ + ".at", a, on_host))
        R.mark_written(a)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return f"<autodev ufunc '{self.__name__}'>"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by the NumPy ufunc it stands for
        return ufunc_for, (self._np,)


def _ufunc_call(np_ufunc: Any, spec: OpSpec, family: str | None) -> Callable[..., Any]:
    """What calling the autodev ufunc of ``np_ufunc`` runs (``family``: see ``ufunc._tiny``)."""
    # a one-input ufunc's second positional argument is ``out``: the general path's
    one_input = np_ufunc.nin == 1
    general = functools.partial(_general, spec, np_ufunc)

    def call_ufunc(x: Any = _NO_ARGUMENT, y: Any = _NO_ARGUMENT, /, *rest: Any,
                   **kwargs: Any) -> Any:
        # Operands named, not packed: the one- and two-operand calls without keywords
        # (nearly all calls) never build an argument tuple on the fast paths.
        if type(x) is ndarray and not rest and not kwargs and not (
                one_input and y is not _NO_ARGUMENT):
            data = x._data
            if _FAST:
                if y is _NO_ARGUMENT or type(y) in _PLAIN:
                    other = y
                elif type(y) is ndarray:
                    other = y._data
                else:
                    return general(x, y, rest, kwargs)
                if data.size >= _SPLIT_FROM or (type(other) is _np_ndarray
                                                and other.size >= _SPLIT_FROM):
                    return general(x, y, rest, kwargs)  # the CPU backend may split it
            elif _HOST_FAST and family is not None and x._device is CPU:
                # below the model's floor with host operands under ``auto``, the full
                # decision is the CPU (see autodev._dispatch.host_floor_work)
                size = data.size
                if y is _NO_ARGUMENT or type(y) in _PLAIN:
                    other = y
                elif type(y) is ndarray and y._device is CPU:
                    other = y._data
                    if other.size > size:
                        size = other.size
                else:
                    return general(x, y, rest, kwargs)
                try:
                    floor = HOST_FLOOR_WORK[family]
                except KeyError:
                    floor = host_floor_work(family)
                if not (size < floor and policy_now() == "auto"):
                    return general(x, y, rest, kwargs)
            else:
                return general(x, y, rest, kwargs)
            # NumPy on the host data: inlined new(), this is the hottest path there is
            tick()
            result = np_ufunc(data) if other is _NO_ARGUMENT else np_ufunc(data, other)
            if type(result) is not _np_ndarray:
                return _fast_other(result)
            a = _onew(ndarray)
            a._data = result
            a._device = CPU
            a._storage = None
            a._mirror = None
            a._scalar = False
            a._pin = None
            a._face = False
            return a
        return general(x, y, rest, kwargs)

    return call_ufunc


def _may_override(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """False if no argument can override ``__array_ufunc__`` (every one a plain autodev
    array or a Python scalar): the check that keeps NEP 13 off the common calls."""
    return bool(kwargs) or any(type(a) is not ndarray and type(a) not in _PLAIN for a in args)


def _general(spec: OpSpec, np_ufunc: Any, x: Any, y: Any, rest: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """A ufunc call dispatched through the cost model, or handed to an operand overriding
    ``__array_ufunc__`` (NEP 13)."""
    nin, nout = np_ufunc.nin, np_ufunc.nout
    if x is _NO_ARGUMENT:
        args: tuple[Any, ...] = rest
    elif y is _NO_ARGUMENT:
        args = (x, *rest)
    else:
        args = (x, y, *rest)
    if nin < len(args) <= nin + nout and "out" not in kwargs:
        # outputs given by position, as NumPy takes them, become ``out=``: the one way the
        # dispatcher writes into an output, returns it and marks it written
        outs = args[nin:]
        args = args[:nin]
        kwargs = {**kwargs, "out": outs[0] if nout == 1 else
                  (*outs, *(None,) * (nout - len(outs)))}
    found = overriding(args, kwargs)
    if found:
        return run(ufunc_for(np_ufunc), "__call__", args, kwargs, found)
    result = call(spec, args, kwargs)
    return of_inputs(args, result, kwargs) if SUBCLASSES else result


def _floor(family: str) -> int:
    """:func:`autodev._dispatch.host_floor_work`, read from its cache where it is there."""
    try:
        return HOST_FLOOR_WORK[family]
    except KeyError:
        return host_floor_work(family)


def _fast_other(result: Any) -> Any:
    """A fast-path result that is not an array: a scalar, or a tuple (``frexp``, ``divmod``)."""
    if type(result) is tuple:
        return tuple(new(r, CPU) if type(r) is _np_ndarray else r for r in result)
    return result


def _native(obj: Any, device: Device) -> Any:
    return native_arg(obj, device, None)


UFUNCS: dict[str, ufunc] = {}


def _build_ufuncs() -> None:
    for name, (np_ufunc, _, _) in NUMPY_UFUNCS.items():
        UFUNCS[name] = ufunc(np_ufunc, name, NUMPY_UFUNCS[name][1].family)


_FOREIGN_UFUNCS: dict[Any, ufunc] = {}


def ufunc_for(np_ufunc: Any) -> ufunc | None:
    """The autodev ufunc standing for ``np_ufunc`` (NumPy's or ``scipy.special``'s)."""
    found = UFUNCS.get(np_ufunc.__name__)
    if found is not None and found._np is np_ufunc:
        return found
    found = _FOREIGN_UFUNCS.get(np_ufunc)
    if found is None:
        import scipy.special

        name = np_ufunc.__name__
        public = getattr(scipy.special, name, None)
        # SCIPY_ARRAY_API=1 wraps each scipy.special ufunc in a function (__wrapped__)
        if public is np_ufunc or getattr(public, "__wrapped__", None) is np_ufunc:
            found = ufunc(np_ufunc, f"scipy.special.{name}", "transcendental", numpy=False,
                          **scipy_special_ufunc(name))
        else:  # a ufunc only NumPy can run (e.g. numpy.frompyfunc)
            found = ufunc(np_ufunc, name, "elementwise", numpy=False, where="cpu")
        _FOREIGN_UFUNCS[np_ufunc] = found
    return found


# ---------------------------------------------------------------------- functions

def _named(function: Callable[..., Any], np_func: Any, name: str) -> Callable[..., Any]:
    """Give a public wrapper NumPy's name and docstring, in module ``autodev``."""
    function.__name__ = getattr(np_func, "__name__", name)
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(np_func, "__doc__", None)
    function.__module__ = "autodev"
    function.__wrapped__ = np_func  # type: ignore[attr-defined]  # inspect.signature, help()
    return function


#: For each NumPy function, the position of ``out`` and the names of its parameters from
#: ``out`` on, where ``out`` can be given by position (``np.outer(a, b, o)``,
#: ``np.sum(a, 0, None, o)``), else None; read from its signature on first use.
_OUT_ON: dict[Any, tuple[int, tuple[str, ...]] | None] = {}


def _out_by_keyword(np_func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
                    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args``/``kwargs`` with an ``out=`` given by position (and the arguments after it)
    passed by keyword, as the dispatcher reads ``out=`` (the output it writes and returns,
    on whichever device runs the call)."""
    try:
        found = _OUT_ON[np_func]
    except KeyError:
        found = _OUT_ON[np_func] = _out_onwards(np_func)
    if found is None or len(args) <= found[0]:
        return args, kwargs
    at, names = found
    if any(n in kwargs for n in names[:len(args) - at]):
        return args, kwargs  # given twice: NumPy's own TypeError
    return args[:at], {**kwargs, **dict(zip(names, args[at:]))}


def _out_onwards(np_func: Any) -> tuple[int, tuple[str, ...]] | None:
    """Where ``np_func`` takes ``out`` by position, and its parameters from there on."""
    try:
        params = list(inspect.signature(np_func).parameters.values())
    except (TypeError, ValueError):
        return None
    names = [p.name for p in params]
    if "out" not in names:
        return None
    at = names.index("out")
    rest = []
    for p in params[at:]:
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            break  # keyword-only from here (clip's min=, max=, **kwargs)
        rest.append(p.name)
    return (at, tuple(rest)) if rest else None


def make_function(spec: OpSpec, np_func: Any) -> Callable[..., Any]:
    """A public function that dispatches ``spec`` (with ``np_func``'s name and doc)."""

    name = spec.name

    def function(*args: Any, **kwargs: Any) -> Any:
        if len(args) > 2:  # (out= is never among the first two)
            args, kwargs = _out_by_keyword(np_func, args, kwargs)
        result = call(spec, args, kwargs)
        return of_inputs(args, result, kwargs, name) if SUBCLASSES else result

    return _named(function, np_func, spec.name)


#: Reductions that NumPy itself implements as ``ufunc.reduce(a, axis=None, ...)`` for
#: ndarray input; called so directly, they skip ``numpy.sum``'s Python-level wrapper.
_REDUCE_AS: dict[str, tuple[Any, frozenset[str]]] = {
    "sum": (np.add, frozenset({"axis", "dtype", "keepdims"})),
    "prod": (np.multiply, frozenset({"axis", "dtype", "keepdims"})),
    "max": (np.maximum, frozenset({"axis", "keepdims"})),
    "amax": (np.maximum, frozenset({"axis", "keepdims"})),
    "min": (np.minimum, frozenset({"axis", "keepdims"})),
    "amin": (np.minimum, frozenset({"axis", "keepdims"})),
}


def make_reduction(spec: OpSpec, np_func: Any, reducer: Any,
                   fast_keys: frozenset[str]) -> Callable[..., Any]:
    """``sum``, ``max``, ...: on the fast path ``a`` alone (or with ``axis``, ``dtype``,
    ``keepdims``) goes straight to ``ufunc.reduce``, as ``numpy.sum`` itself ends up doing."""
    reduce = reducer.reduce
    family = spec.family

    def function(a: Any = _NO_ARGUMENT, /, *args: Any, **kwargs: Any) -> Any:
        if not args:
            if type(a) is ndarray and (_FAST or (
                    _HOST_FAST and a._device is CPU and a._data.size < _floor(family)
                    and policy_now() == "auto")):
                if not kwargs:
                    tick()
                    result = reduce(a._data, None)  # axis=None, passed by position
                elif fast_keys.issuperset(kwargs) and not (
                        kwargs.get("axis") is not None and a._data.size >= _SPLIT_FROM):
                    tick()
                    result = reduce(a._data, **({"axis": None} | kwargs))
                else:
                    return call(spec, (a,), kwargs)
                if type(result) is not _np_ndarray:
                    return result
                return new(result, CPU)
        args = args if a is _NO_ARGUMENT else (a, *args)
        if len(args) > 2:  # (out= is never among the first two)
            args, kwargs = _out_by_keyword(np_func, args, kwargs)
        result = call(spec, args, kwargs)
        return of_inputs(args, result, kwargs, spec.name) if SUBCLASSES else result

    return compiled("reduce", reduce, _named(function, np_func, spec.name), family=family)


def cpu_function(np_func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A public function NumPy alone runs: inputs move to the host, results are wrapped."""
    spec = OpSpec(name, name, "copy", where="cpu", cpu_impl=np_func)
    return make_function(spec, np_func)


def _copies(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``nan_to_num``'s ``copy`` argument (False: it writes into ``x``)."""
    return bool(kwargs.get("copy", args[1] if len(args) > 1 else True))


#: NumPy functions that write into their first argument (its name), and for those that
#: do so only sometimes, the rule saying when they do not.
WRITES_INTO: dict[str, tuple[str, Callable[..., bool] | None]] = {
    "put": ("a", None), "place": ("arr", None), "putmask": ("a", None),
    "fill_diagonal": ("a", None), "put_along_axis": ("arr", None),
    "nan_to_num": ("x", _copies),
}


def writing_function(np_func: Callable[..., Any], param: str,
                     skip: Callable[..., bool] | None,
                     other: Callable[..., Any] | None) -> Callable[..., Any]:
    """``put``, ``place``, ...: NumPy writes into the host data of the target, wherever it
    lives (a device array through a host copy, copied back), and the write is recorded.
    ``other`` runs the calls that ``skip`` says write nothing."""

    def function(*args: Any, **kwargs: Any) -> Any:
        if skip is not None and skip(args, kwargs):
            return other(*args, **kwargs)  # type: ignore[misc]
        target = args[0] if args else kwargs.get(param)
        if type(target) is not ndarray:
            return np_func(*cpu_arg(args), **{k: cpu_arg(v) for k, v in kwargs.items()})
        device = target._device
        host = R.host_to_write(target)  # read-only as target is: NumPy refuses the write
        if args:
            args = (host, *cpu_arg(args[1:]))
        kwargs = {k: host if k == param else cpu_arg(v) for k, v in kwargs.items()}
        tick()
        result = np_func(*args, **kwargs)
        if device is not CPU:
            write_back(target._data, device, host)
        R.mark_written(target)
        return target if result is host else result

    function.__name__ = getattr(np_func, "__name__", param)
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(np_func, "__doc__", None)
    function.__module__ = "autodev"
    function.__wrapped__ = np_func  # type: ignore[attr-defined]  # NumPy's signature
    return function


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
                    _FAST or (_HOST_FAST and policy_now() != "gpu")):
                result = np_func(shape, dtype, order)
                a = _onew(ndarray)
                a._data = result
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
            if (_FAST or (_HOST_FAST and policy_now() != "gpu")) and "device" not in kwargs \
                    and "like" not in kwargs:
                result = np_func(*args, **kwargs)
                if type(result) is _np_ndarray:
                    a = _onew(ndarray)
                    a._data, a._device, a._storage, a._mirror, a._scalar, a._pin, a._face = \
                        result, CPU, None, None, False, None, False
                    return a
                return _created(result, CPU)
            return general(*args, **kwargs)

        public = plain
    else:
        public = None

    def general(*args: Any, **kwargs: Any) -> Any:
        if takes_arrays:
            args = tuple(_creation_arg(a) for a in args)
            kwargs = {k: _creation_arg(v) for k, v in kwargs.items()}
        if _FAST and "device" not in kwargs and "like" not in kwargs:
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
    return compiled("create", np_func, result, binds=hasattr(type(np_func), "__get__")) \
        if name in _SHAPED else result


#: Creation functions taking NumPy's ``(shape, dtype=None, order="C", *, device=None,
#: like=None)``.
_SHAPED = frozenset({"zeros", "ones", "empty"})
#: Creation functions whose arguments may be arrays (``linspace(start, stop)``).
_ARRAY_ARGUMENTS = frozenset({"linspace", "logspace", "geomspace", "full"})


#: Where each creation function takes ``dtype`` positionally.
_DTYPE_AT = {"zeros": 1, "ones": 1, "empty": 1, "identity": 1, "full": 2, "arange": 3,
             "eye": 3, "tri": 3, "linspace": 5, "logspace": 5, "geomspace": 4}


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
        return new(array, device), step
    return new(result, device)


def array(object: Any, dtype: Any = None, *, copy: bool | None = True,  # noqa: A002
          order: Order = "K", subok: bool = False, ndmin: int = 0, ndmax: Any = _NO_ARGUMENT,
          like: Any = None, device: DeviceLike | None = None) -> ndarray:
    """Create an array (NumPy's ``array``), on ``device=`` or where ``object`` lives."""
    if ndmax is not _NO_ARGUMENT:  # a limit on the dimensions of nested sequences: NumPy's
        host = np.array(cpu_arg(object), dtype=dtype, copy=copy, order=order, ndmin=ndmin,
                        ndmax=ndmax)
        return _array(host, copy=None, device=device)
    return _array(object, dtype, copy=copy, order=order, ndmin=ndmin, device=device)


def _array(obj: Any, dtype: Any = None, *, copy: bool | None = True, order: Order = "K",
           ndmin: int = 0, device: DeviceLike | None = None) -> ndarray:
    if type(obj) is ndarray and device is None:
        data = obj._data
        if copy is False:
            result = data.astype(dtype, copy=False) if dtype is not None else data
            if result is not data:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return obj if ndmin <= obj.ndim else new(_ndmin(data, ndmin), obj._device,
                                                     R.storage_of(obj), False, obj._pin)
        xp = backend_for(obj._device).xp
        return retrying("array", obj._device, lambda: new(xp.array(
            data, dtype=dtype, copy=True, order=order, ndmin=ndmin), obj._device, None, False,
            obj._pin), lambda: new(np.array(obj._host(), dtype=dtype, copy=True, order=order,
                                            ndmin=ndmin), CPU, None, False, obj._pin))
    if type(obj) is ndarray:  # to another device, or placed as ``device=`` says
        return placed(_array(obj, dtype, copy=copy, order=order, ndmin=ndmin), device)
    host = np.array(cpu_arg(obj), dtype=dtype, copy=copy, order=order, ndmin=ndmin)
    escaped = copy is False or (copy is None and type(obj) is np.ndarray and host is obj)
    # memory shared with ``obj`` (copy=False, or a buffer NumPy did not need to copy)
    # stays where it is: moving it would be the copy NumPy's caller asked not to make
    shared = escaped or (copy not in (True, np._CopyMode.ALWAYS) and host.base is not None)
    target = CPU if shared and device is None else creation_device(device)
    return _pinned(place("array", host, target, R.Storage(escaped=True) if shared else None),
                   device)


def _ndmin(data: Any, ndmin: int) -> Any:
    return data.reshape((1,) * (ndmin - data.ndim) + data.shape)


def asarray(a: Any, dtype: Any = None, order: Order | None = None, *,
            device: DeviceLike | None = None, copy: bool | None = None,
            like: Any = None) -> ndarray:
    """Convert to an autodev array without copying where possible (NumPy's ``asarray``)."""
    obj = a
    if type(obj) in SUBCLASSES:
        obj = obj.view(ndarray)  # its base-class view (same data, same device), as NumPy's
    if type(obj) is ndarray:
        moved = obj if device is None else obj.to_device(device)
        if dtype is None or np.dtype(dtype) == obj.dtype:
            if not copy:
                return moved
        return array(moved, dtype=dtype, copy=False if copy is False else bool(copy) or None)
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


# ---------------------------------------------------------------------- metadata

def shape(a: Any) -> tuple[int, ...]:
    """Shape of ``a`` (no transfer)."""
    return a.shape if type(a) is ndarray else np.shape(a)


def ndim(a: Any) -> int:
    """Number of dimensions of ``a`` (no transfer)."""
    return a.ndim if type(a) is ndarray else np.ndim(a)


def size(a: Any, axis: int | None = None) -> int:
    """Number of elements of ``a`` (no transfer)."""
    if type(a) is ndarray:
        return a.size if axis is None else a.shape[axis]
    return np.size(a, axis)


def _meta(x: Any) -> Any:
    return x.dtype if type(x) is ndarray and not x._scalar else (
        np.empty((), x.dtype) if type(x) is ndarray else x)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """NumPy's ``result_type`` (reads dtypes only)."""
    return np.result_type(*(_meta(x) for x in arrays_and_dtypes))


def iscomplexobj(x: Any) -> bool:
    """True if ``x`` has a complex dtype (no transfer)."""
    return x.dtype.kind == "c" if type(x) is ndarray else np.iscomplexobj(x)


def isrealobj(x: Any) -> bool:
    """True if ``x`` does not have a complex dtype (no transfer)."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """True for scalars, including autodev's device-resident scalar results."""
    return bool(element._scalar) if type(element) is ndarray else np.isscalar(element)


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """NumPy's ``may_share_memory`` on the data where it lives (the memory bounds)."""
    on_device = _device_memory(a, b)
    if on_device is not None:
        return on_device and bool(
            backend_for(a._device).xp.may_share_memory(a._data, b._data))
    return bool(np.may_share_memory(cpu_arg(a), cpu_arg(b)))


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """NumPy's ``shares_memory`` on the data where it lives (exact on a device, where
    CuPy has no bounded search)."""
    on_device = _device_memory(a, b)
    if on_device is not None:
        return on_device and bool(backend_for(a._device).xp.shares_memory(a._data, b._data))
    return bool(np.shares_memory(cpu_arg(a), cpu_arg(b)))


def _device_memory(a: Any, b: Any) -> bool | None:
    """For two autodev arrays of which one lives on a device: False if they live on two
    devices (no memory in common), True if on the same one (the device's own check
    decides); None where NumPy's check on the host decides."""
    if not (isinstance(a, ndarray) and isinstance(b, ndarray)):
        return None
    if a._device is not b._device:
        return False
    return None if a._device is CPU else True


def copyto(dst: ndarray, src: Any, casting: Casting = "same_kind", where: Any = True) -> None:
    """Copy ``src`` into ``dst`` where ``dst`` lives (NumPy's ``copyto``)."""
    if type(dst) is not ndarray:  # a NumPy destination
        np.copyto(dst, cpu_arg(src), casting=casting, where=cpu_arg(where))  # type: ignore[arg-type]
        return
    def copy(data: Any, device: Device) -> None:
        xp = backend_for(device).xp
        xp.copyto(data, native_arg(src, device, None), casting=casting,
                  where=native_arg(where, device, None))

    _in_place(dst, "copyto", copy)


DIRECT: dict[str, Callable[..., Any]] = {
    "array": array, "asarray": asarray, "asanyarray": asanyarray, "shape": shape,
    "ndim": ndim, "size": size, "result_type": result_type, "iscomplexobj": iscomplexobj,
    "isrealobj": isrealobj, "isscalar": isscalar, "may_share_memory": may_share_memory,
    "shares_memory": shares_memory, "copyto": copyto, "from_dlpack": from_dlpack,
}


# ---------------------------------------------------------------------- resolution

class builtin(functools.partial):
    """An autodev function whose NumPy twin is a builtin (``array``, ``zeros``, ...).

    Held by a class (``class C: array = np.array``), it stays a plain function, as
    NumPy's builtins and ufuncs do: Python functions would become methods. A
    ``functools.partial`` over the function (called in C, without binding).
    """

    def __get__(self, obj: Any, objtype: Any = None) -> "builtin":
        return self  # Python 3.14 makes functools.partial a method descriptor

    __name__: str
    __qualname__: str

    def __repr__(self) -> str:
        return f"<autodev function {self.__name__}>"

    def __reduce__(self) -> str:  # pickled by name
        return str(self.__qualname__)


def _as_numpys(function: Any, np_value: Any, prefix: str) -> Any:
    """``function`` as its NumPy twin is to a class and to ``inspect.signature``.

    Where NumPy's twin is a builtin, ``function`` becomes a :class:`builtin` (a class
    holding it does not bind it) whose ``__wrapped__`` and ``__text_signature__`` are
    NumPy's; where NumPy's carries a ``__signature__`` (its C dispatchers), so does
    ``function``.
    """
    if not callable(function) or isinstance(function, (type, ufunc, builtin)) \
            or not callable(np_value) or isinstance(np_value, type):
        return function
    if hasattr(np_value, "__signature__"):
        function.__signature__ = np_value.__signature__
    if hasattr(type(np_value), "__get__"):
        return function  # a Python function or dispatcher: a method on a class, as NumPy's
    text = getattr(np_value, "__text_signature__", None)
    if type(function).__name__ != "FastFunction":  # else unbound already (compiled zeros)
        function = functools.update_wrapper(builtin(function), function)
        function.__module__ = "autodev" + ("." + prefix.rstrip(".") if prefix else "")
    function.__wrapped__ = np_value  # inspect.signature: NumPy's own
    if text is not None:
        function.__text_signature__ = text
    return function


@functools.lru_cache(maxsize=None)
def resolve_name(module: Any, prefix: str, name: str) -> Any:
    """What ``autodev<prefix>.name`` is: dispatched function, CPU function or NumPy object."""
    return _as_numpys(_resolve(module, prefix, name), getattr(module, name, None), prefix)


def _resolve(module: Any, prefix: str, name: str) -> Any:
    if prefix == "" and name in DIRECT:
        return DIRECT[name]
    if prefix == "" and name in CREATION:
        return make_creation(name)
    if prefix == "" and name == "ndarray":
        return ndarray
    value = getattr(module, name)  # AttributeError propagates: not a NumPy name
    if prefix == "" and isinstance(value, np.ufunc):
        return UFUNCS[value.__name__]
    spec = SPECS.get(prefix + name)
    if prefix == "" and name in WRITES_INTO:
        return writing_function(value, *WRITES_INTO[name],
                                make_function(spec, value) if spec is not None else None)
    if spec is not None:
        if prefix == "" and name in _REDUCE_AS:
            return make_reduction(spec, value, *_REDUCE_AS[name])
        function = make_function(spec, value)
    elif _is_plain_function(value):
        function = cpu_function(value, prefix + name)
    else:
        return value  # dtypes, constants, classes (errstate, finfo, ...), submodules
    if prefix + name == "concatenate":
        function = _counting_arrays(function)
    return placing(function) if prefix + name in PLACED else function


#: The most arrays NumPy's ``concatenate`` takes (a C int counts them).
MAX_CONCATENATED = int(np.iinfo(np.intc).max)


def _counting_arrays(concatenate: Callable[..., Any]) -> Callable[..., Any]:
    """``concatenate`` refusing more arrays than NumPy takes before it reads any of them,
    as NumPy does (dispatching reads each item: 2**31 of them would run for hours)."""
    def counted(arrays: Any, *args: Any, **kwargs: Any) -> Any:
        if type(arrays) in (tuple, list) and len(arrays) > MAX_CONCATENATED:
            raise ValueError(f"concatenate() only supports up to {MAX_CONCATENATED} arrays "
                             f"but got {len(arrays)}.")
        return concatenate(arrays, *args, **kwargs)

    return functools.update_wrapper(counted, concatenate)


#: Functions whose ``device=`` NumPy accepts as "cpu" only: autodev takes any device
#: (``device=x.device``), runs the call where it would run anyway and puts the result there.
PLACED = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "fft.fftfreq",
                    "fft.rfftfreq"})


def placing(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` taking ``device=`` as an autodev device (or a string naming one)."""

    def placed(*args: Any, device: DeviceLike | None = None, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        return result if device is None else result.to_device(device)

    return functools.update_wrapper(placed, function)


def _is_plain_function(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and (
        type(value).__name__ in ("function", "builtin_function_or_method",
                                 "_ArrayFunctionDispatcher", "cython_function_or_method")
    )


@functools.lru_cache(maxsize=None)
def _numpy_index() -> dict[int, tuple[str, str]]:
    """id(numpy function) -> (prefix, name) for numpy, numpy.linalg, numpy.fft."""
    index: dict[int, tuple[str, str]] = {}
    for prefix, module in (("fft.", np.fft), ("linalg.", np.linalg), ("", np)):
        for name in dir(module):
            if not name.startswith("_"):
                index[id(getattr(module, name))] = (prefix, name)
    return index


_FOREIGN_FUNCTIONS: dict[Any, Callable[..., Any]] = {}


def function_for(func: Callable[..., Any]) -> Callable[..., Any] | None:
    """The autodev function standing for the NumPy function ``func``."""
    found = _numpy_index().get(id(func))
    if found is not None:
        prefix, name = found
        return resolve_name({"": np, "linalg.": np.linalg, "fft.": np.fft}[prefix], prefix, name)
    wrapper = _FOREIGN_FUNCTIONS.get(func)
    if wrapper is None:
        wrapper = _FOREIGN_FUNCTIONS[func] = cpu_function(func, getattr(func, "__name__", "?"))
    return wrapper


_build_ufuncs()
PROTOCOLS.ufunc_for = ufunc_for
PROTOCOLS.function_for = function_for
