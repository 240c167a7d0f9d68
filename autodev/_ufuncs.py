"""NumPy's ufuncs as autodev runs them: :class:`ufunc` objects over their specs in the
function table (:mod:`autodev._capability.specs`), with a fast path for tiny calls on the
host, and the reductions NumPy implements as ``ufunc.reduce`` (``sum``, ``prod``, ...).
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from . import _fused_sum, _fusion, _threaded, _threads
from ._residency import storage as R
from ._residency.buffers import move_home, shared_views_message
from ._array import ndarray
from ._indexing import _index_native
from ._compiled import compiled
from ._operators import PLAIN_SCALARS as _PLAIN
from ._backends import STATE, backend_for
from ._config import SPEEDUPS, policy_now
from ._device import CPU, Device
from ._cost.cache import HOST_NOW, host_now
from ._dispatch import call, cpu_arg, cpu_result, host_impl, native_arg, new
from ._capability.table import scipy_special_ufunc, ufunc_at_ok
from ._capability.specs import NUMPY_UFUNCS, OpSpec, ufunc_specs
from ._residency.memory import in_place_on_host, retrying
from ._overrides import check_out_tuple, normalized, overriding, run
from ._subclass import SUBCLASSES, needs_wrap, of_inputs, own_method, wrap_ufunc
from ._trace import tick
from ._functions import _named, _out_by_keyword
from ._names import METHOD_OF as _METHOD_OF, REDUCE_AS

_np_ndarray = np.ndarray
_onew = object.__new__
_FAST = False  # mirrors STATE.fast (see autodev._operators._FAST)
_HOST_FAST = False  # mirrors STATE.host_fast (see autodev._operators._HOST_FAST)
_FUSABLE = False  # see autodev._operators._FUSABLE


def _sync_fast() -> None:
    global _FAST, _HOST_FAST, _FUSABLE
    _FAST = STATE.fast
    _HOST_FAST = STATE.host_fast
    _FUSABLE = STATE.fusable


STATE.listeners.append(_sync_fast)
_sync_fast()
#: With no GPU usable, an operand this large sends the call to the general path, where
#: the CPU backend may split it over threads (see autodev._operators._SPLIT_FROM).
_SPLIT_FROM = _threads.NEVER
#: With no GPU usable, an operand this large sends a reduction over every axis there.
_TOTAL_FROM = _threads.NEVER


def _set_split_from(least: int) -> None:
    global _SPLIT_FROM, _TOTAL_FROM
    _SPLIT_FROM, _TOTAL_FROM = least, _threads.total_from()


_threads.on_floor(_set_split_from)  # the flags as they are now (refresh tells it of every change after)

#: True while a deferred chain is pending (see autodev._operators._ACTIVE).
_ACTIVE = False


def _set_active(active: bool) -> None:
    global _ACTIVE
    _ACTIVE = active


_fusion.LISTENERS.append(_set_active)


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


class _CompiledMethod:
    """A ufunc's ``reduce``, ``accumulate`` or ``reduceat``: on a ufunc, its compiled path
    (:meth:`ufunc._compiled_method`, ``positional``: where ``out`` may come by position),
    made on first use and kept in the ufunc's ``__dict__``; on the class, a Python method
    calling :meth:`ufunc._method` (what ``inspect.signature`` reads)."""

    def __init__(self, positional: int) -> None:
        self.positional = positional

    def __set_name__(self, owner: type, name: str) -> None:
        def method(self: Any, *args: Any, **kwargs: Any) -> Any:
            return self._method(name, args, kwargs)

        method.__name__ = self.name = name
        method.__qualname__ = f"{owner.__name__}.{name}"
        self.method = method

    def __get__(self, obj: Any, objtype: Any = None) -> Any:
        if obj is None:
            return self.method
        found = obj.__dict__[self.name] = obj._compiled_method(self.name, self.positional)
        return found


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
                                             _fast_other, family=tiny,
                                             threads=_threaded.floor_key(np_ufunc)))
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

    # reduce, accumulate, reduceat: the compiled path in front of _method, made on first
    # use (`out` by position: their fourth, fourth, fifth argument)
    reduce = _CompiledMethod(3)
    accumulate = _CompiledMethod(3)
    reduceat = _CompiledMethod(4)

    def _compiled_method(self, name: str, positional: int) -> Any:
        """``self.<name>``: :meth:`_method` behind the compiled reduction kind, which runs
        NumPy's method at once where ``call`` would run it on the host, its first array
        below the threads' floor (above it, the CPU backend's callable may split it)."""
        def method(*args: Any, **kwargs: Any) -> Any:
            return self._method(name, args, kwargs)

        method.__name__ = name
        method.__qualname__ = f"{self.__name__}.{name}"
        method.__doc__ = getattr(self._np, name).__doc__
        spec = self._methods[name]
        impl = host_impl(spec)
        if isinstance(impl, _threaded.ThreadedReduce):  # (below its floor: NumPy's own)
            impl = getattr(self._np, name)
        return compiled("unary", impl, method, other=cpu_result, family=spec.family,
                        binds=False, positional=positional)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        # NumPy checks outer's arguments as a call's, before any override is asked
        if len(args) != 2:
            raise TypeError("exactly two arguments expected")  # NumPy's words
        _check_keywords(self._np, kwargs)
        return self._method("outer", args, _signature_renamed(kwargs))

    def _method(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """``self.<name>(*args, **kwargs)``: an override's (NEP 13) where an operand has
        one, else dispatched, with the result of the inputs' subclass."""
        if not _may_override(args, kwargs):
            return call(self._methods[name], args, kwargs)
        inputs, given = normalized(name, args, kwargs)
        found = overriding(inputs, given)
        if found:
            return run(self, name, inputs, given, found)
        if not needs_wrap(inputs, given.get("out")):
            return call(self._methods[name], args, kwargs)
        if name == "outer":
            return self._outer(*inputs, **given)
        return wrap_ufunc(self, name, inputs, given, call(self._methods[name], args, kwargs))

    def _outer(self, a: Any, b: Any, /, **kwargs: Any) -> Any:
        """``outer`` where an operand may wrap the result, as NumPy runs it: the call on
        ``a`` reshaped to ``a.shape + (1,) * b.ndim`` (a subclass's reshape, whose
        ``__array_finalize__`` must keep that shape) and ``b``."""
        if not isinstance(a, ndarray):
            a = new(np.asarray(a), CPU)
        shape = (*a.shape, *(1,) * (b.ndim if isinstance(b, ndarray) else np.ndim(b)))
        reshaped = a.reshape(shape)
        if reshaped.shape != shape:
            raise TypeError(  # NumPy's words
                f"{self.__name__}.outer() called with ndarray-subclass of type "
                f"'{type(reshaped).__name__}' which modified its shape after a reshape. "
                "`outer()` relies on reshaping the inputs and is for example not supported "
                "for the 'np.matrix' class (the usage of matrix is generally discouraged). "
                "To work around this issue, please convert the inputs to numpy arrays.")
        return self(reshaped, b, **kwargs)

    def at(self, a: ndarray, indices: Any, b: Any = None) -> Any:
        """Unbuffered in-place operation on ``a`` at ``indices`` (runs where ``a`` lives).

        A read-only ``a`` is refused on every device (NumPy 2.4's own ``at`` writes into
        it regardless, against its flag).
        """
        inputs = (a, indices) if b is None else (a, indices, b)
        found = overriding(inputs, {}) if _may_override(inputs, {}) else None
        if found:  # the override's result, as NumPy returns it
            return run(self, "at", inputs, {}, found)
        R.check_writeable(a, "output array is read-only")
        device = a._device
        _fusion.before_write()
        func = None if device is CPU or not ufunc_at_ok(self.__name__, a.dtype) \
            else backend_for(device).resolve(self._spec.path + ".at")
        on_host = (lambda host: self._np.at(host, cpu_arg(indices),
                                            *(cpu_arg(b),) if b is not None else ()))
        if device is CPU:
            on_host(a._native)
        elif func is None:  # declared: this ufunc has no device ``at``; apply it on the host
            in_place_on_host(self.__name__ + ".at", a, on_host)
        else:
            def on_device() -> None:
                key = _index_native(indices, device, a.shape)  # bounds checked as NumPy does
                func(a._native, key, *(() if b is None else (_native(b, device),)))

            retrying(self.__name__ + ".at", device, on_device,
                     lambda: in_place_on_host(self.__name__ + ".at", a, on_host))
        R.mark_written(a)

    def resolve_dtypes(self, dtypes: tuple[Any, ...], *, signature: Any = None,
                       casting: Any = None, reduction: bool = False) -> tuple[np.dtype, ...]:
        """NumPy's ``resolve_dtypes``: the dtypes of the loop this ufunc picks for ``dtypes``
        (a method of the class, as NumPy's, so that ``ufunc.resolve_dtypes`` has a signature)."""
        given = {"signature": signature, "casting": casting}  # NumPy's refuses None's
        return self._np.resolve_dtypes(dtypes, reduction=reduction,
                                       **{k: v for k, v in given.items() if v is not None})

    def __getattr__(self, name: str) -> Any:
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return f"<autodev ufunc '{self.__name__}'>"

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by the NumPy ufunc it stands for
        return ufunc_for, (self._np,)


if SPEEDUPS is not None:  # (before 3.12 a subclass of partial is called through tp_call)
    SPEEDUPS.inherit_vectorcall(ufunc)


def _ufunc_call(np_ufunc: Any, spec: OpSpec, family: str | None) -> Callable[..., Any]:
    """What calling the autodev ufunc of ``np_ufunc`` runs (``family``: see ``ufunc._tiny``)."""
    # a one-input ufunc's second positional argument is ``out``: the general path's
    one_input = np_ufunc.nin == 1
    general = functools.partial(_general, spec, np_ufunc)

    def call_ufunc(x: Any = _NO_ARGUMENT, y: Any = _NO_ARGUMENT, /, *rest: Any,
                   **kwargs: Any) -> Any:
        # Operands named, not packed: the one- and two-operand calls without keywords
        # (nearly all calls) never build an argument tuple on the fast paths.
        if type(x) is ndarray and not rest and not kwargs and not _ACTIVE and not (
                one_input and y is not _NO_ARGUMENT):
            # (each branch reads x's native array only once it runs NumPy itself, and drops
            # it before the general path: fusion counts who holds the operands' memory)
            if _FAST:
                if y is _NO_ARGUMENT or type(y) in _PLAIN:
                    other = y
                elif type(y) is ndarray:
                    other = y._native
                else:
                    return general(x, y, rest, kwargs)
                data = x._native
                if data.size >= _SPLIT_FROM or type(other) is _np_ndarray and (
                        other.size >= _SPLIT_FROM
                        or _threads.broadcast_reaches(data, other, _SPLIT_FROM)):
                    data = other = None
                    return general(x, y, rest, kwargs)  # the CPU backend may split or defer it
            elif _HOST_FAST and family is not None and x._device is CPU:
                # below the model's floor with host operands under ``auto``, the full
                # decision is the CPU (see autodev._cost.cache.HOST_NOW)
                if y is _NO_ARGUMENT or type(y) in _PLAIN:
                    other, size = y, 0
                elif type(y) is ndarray and y._device is CPU:
                    other = y._native
                    size = other.size
                else:
                    return general(x, y, rest, kwargs)
                data = x._native
                if data.size > size:
                    size = data.size
                policy = policy_now()
                try:
                    floor = HOST_NOW[policy][family]
                except KeyError:
                    floor = host_now(policy, family)
                if type(other) is _np_ndarray and size < floor \
                        and _threads.broadcast_reaches(data, other, floor):
                    size = floor  # (x[:, None] - c: its work is its result's elements)
                if not size < floor:
                    data = other = None
                    return general(x, y, rest, kwargs)
            else:  # (watched or pinned: the general path)
                return general(x, y, rest, kwargs)
            # NumPy on the host data: inlined new(), this is the hottest path there is
            tick()
            result = np_ufunc(data) if other is _NO_ARGUMENT else np_ufunc(data, other)
            if type(result) is not _np_ndarray:
                return _fast_other(result)
            a = _onew(ndarray)
            a._native = result
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
        if any(o is Ellipsis for o in outs):
            raise TypeError("out=... is only allowed as a keyword argument.")  # NumPy's words
        kwargs = {**kwargs, "out": outs[0] if nout == 1 else
                  (*outs, *(None,) * (nout - len(outs)))}
    else:
        _check_call(np_ufunc, args, kwargs)
    kwargs = _signature_renamed(kwargs)
    found = overriding(args, kwargs)
    if found:
        return run(ufunc_for(np_ufunc), "__call__", args, kwargs, found)
    wraps = needs_wrap(args, kwargs.get("out"))
    if _FUSABLE and _FUSION_KEYWORDS.issuperset(kwargs) and not wraps:
        pending = _fusion.record(np_ufunc, args, ndarray, kwargs.get("out"),
                                 kwargs.get("where", True))
        if pending is not _fusion.DECLINED:
            return pending
    if spec.where == "cpu" and _may_write_operands(np_ufunc):
        result = _on_own_memory(spec, args, kwargs)
    else:
        result = call(spec, args, kwargs)
    return wrap_ufunc(ufunc_for(np_ufunc), "__call__", args, kwargs, result) if wraps \
        else result


def _may_write_operands(np_ufunc: Any) -> bool:
    """Whether ``np_ufunc``, a ufunc NumPy alone runs, may write into an input: NumPy's
    operand flags (``readwrite``, which C extensions set) cannot be read from Python, so
    any ufunc with a loop over other than objects is taken to; frompyfunc's (object loops)
    call Python on each element, which cannot write into the array."""
    return any(char != "O" for types in np_ufunc.types for char in types.replace("->", ""))


def _on_own_memory(spec: OpSpec, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``call(spec, ...)`` on the array operands' own host memory, for a ufunc that may
    write into them: a device operand moves to the host with its views (as for any consumer
    of its host memory), and each is marked written after (its mirrors are stale)."""
    arrays = [a for a in args if isinstance(a, ndarray)]
    for a in arrays:
        if not move_home(a):
            raise ValueError(shared_views_message(f"{spec.name} (it may write into it)", a))
    try:
        return call(spec, args, kwargs)
    finally:
        for a in arrays:
            R.mark_written(a)


#: The keywords of a ufunc call :mod:`autodev._fusion` may defer.
_FUSION_KEYWORDS = frozenset({"out", "where"})


#: The keywords a ufunc call takes (NumPy's).
_CALL_KEYWORDS = frozenset({"out", "where", "axes", "axis", "keepdims", "casting", "order",
                            "dtype", "subok", "signature", "sig"})


def _check_call(np_ufunc: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """NumPy's checks of a ufunc call's arguments, made before any override is asked."""
    nin, nout, name = np_ufunc.nin, np_ufunc.nout, np_ufunc.__name__
    if len(args) > nin + nout or len(args) < nin:
        given = len(args)
        raise TypeError(f"{name}() takes from {nin} to {nin + nout} positional arguments but "
                        f"{given} {'was' if given == 1 else 'were'} given")
    if len(args) > nin and "out" in kwargs:
        raise TypeError("cannot specify 'out' as both a positional and keyword argument")
    _check_keywords(np_ufunc, kwargs)


def _check_keywords(np_ufunc: Any, kwargs: dict[str, Any]) -> None:
    """NumPy's checks of a ufunc call's keywords (a call's, ``outer``'s)."""
    nout, name = np_ufunc.nout, np_ufunc.__name__
    unknown = next((k for k in kwargs if k not in _CALL_KEYWORDS), None)
    if unknown is not None:
        raise TypeError(f"{name}() got an unexpected keyword argument '{unknown}'")
    out = kwargs.get("out", _NO_ARGUMENT)
    if nout > 1 and out is not _NO_ARGUMENT and out is not Ellipsis and type(out) is not tuple:
        raise TypeError("'out' must be a tuple of arrays")
    check_out_tuple(out)
    if type(out) is tuple and len(out) != nout:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")


def _signature_renamed(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` with ``sig=``, NumPy's old name of ``signature=``, given by the new one
    (as NumPy hands it to overrides)."""
    if "sig" not in kwargs:
        return kwargs
    if "signature" in kwargs:
        raise TypeError("cannot specify both 'sig' and 'signature'")  # NumPy's words
    return {("signature" if k == "sig" else k): v for k, v in kwargs.items()}


def _host_now(family: str) -> int:
    """:data:`autodev._cost.cache.HOST_NOW` of ``family`` under the policy in force."""
    policy = policy_now()
    try:
        return HOST_NOW[policy][family]
    except KeyError:
        return host_now(policy, family)


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


#: scipy.special's ufuncs, made once: a fixed set. Other foreign ufuncs (``frompyfunc``'s,
#: made by user code, any number of them) are wrapped anew at each meeting (a few us), so that
#: autodev keeps none of them, nor the Python function each holds, alive.
_SCIPY_UFUNCS: dict[Any, ufunc] = {}


def ufunc_for(np_ufunc: Any) -> ufunc | None:
    """The autodev ufunc standing for ``np_ufunc`` (NumPy's or ``scipy.special``'s)."""
    found = UFUNCS.get(np_ufunc.__name__)
    if found is not None and found._np is np_ufunc:
        return found
    found = _SCIPY_UFUNCS.get(np_ufunc)
    if found is None:
        import scipy.special

        name = np_ufunc.__name__
        public = getattr(scipy.special, name, None)
        # SCIPY_ARRAY_API=1 wraps each scipy.special ufunc in a function (__wrapped__)
        if public is np_ufunc or getattr(public, "__wrapped__", None) is np_ufunc:
            found = ufunc(np_ufunc, f"scipy.special.{name}", "transcendental", numpy=False,
                          **scipy_special_ufunc(name))
            _SCIPY_UFUNCS[np_ufunc] = found
        else:
            found = cpu_ufunc(np_ufunc)
    return found


def cpu_ufunc(np_ufunc: Any) -> ufunc:
    """A new autodev ufunc for ``np_ufunc``, a ufunc only NumPy can run
    (``numpy.frompyfunc``'s): it runs on the host."""
    return ufunc(np_ufunc, np_ufunc.__name__, "elementwise", numpy=False, where="cpu")



#: Reductions that NumPy itself implements as ``ufunc.reduce(a, axis=None, ...)`` for
#: ndarray input; called so directly, they skip ``numpy.sum``'s Python-level wrapper.
_REDUCE_AS: dict[str, tuple[Any, frozenset[str]]] = {
    name: (getattr(np, ufunc), keys) for name, (ufunc, keys) in REDUCE_AS.items()}


def make_reduction(spec: OpSpec, np_func: Any, reducer: Any,
                   fast_keys: frozenset[str]) -> Callable[..., Any]:
    """``sum``, ``max``, ...: on the fast path ``a`` alone (or with ``axis``, ``dtype``,
    ``keepdims``) goes straight to ``ufunc.reduce``, as ``numpy.sum`` itself ends up doing."""
    reduce = reducer.reduce
    family = spec.family
    sums = spec.name == "sum"
    totals = spec.name in _threaded.TOTALS  # (over every axis, the CPU backend may split it)

    def function(a: Any = _NO_ARGUMENT, /, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and "axis" not in kwargs:  # (max(m, 0): the axis by position)
            kwargs["axis"] = args[0]
            args = ()
        if sums and _ACTIVE and not args and not kwargs and type(a) is ndarray:
            found = _fused_sum.fused_sum(a)  # (a pending chain's sum, made as it runs)
            if found is not _fusion.DECLINED:
                return found
        if not args:
            if type(a) is ndarray and (_FAST or (
                    _HOST_FAST and a._device is CPU and a._native.size < _host_now(family))):
                whole = _TOTAL_FROM if totals else _threads.NEVER
                if not kwargs and a._native.size < whole:
                    tick()
                    result = reduce(a._native, None)  # axis=None, passed by position
                elif fast_keys.issuperset(kwargs) and a._native.size < (
                        whole if kwargs.get("axis") is None else _SPLIT_FROM):
                    tick()
                    result = reduce(a._native, **({"axis": None} | kwargs))
                else:
                    return call(spec, (a,), kwargs)
                if type(result) is not _np_ndarray:
                    return result
                return new(result, CPU)
        if type(a) in SUBCLASSES:
            method = own_method(a, _METHOD_OF.get(spec.name, spec.name))
            if method is not None:
                return _by_method(method, np_func, a, args, kwargs)
        args = args if a is _NO_ARGUMENT else (a, *args)
        if len(args) > 2:  # (out= is never among the first two)
            args, kwargs = _out_by_keyword(np_func, args, kwargs)
        result = call(spec, args, kwargs)
        return of_inputs(args, result, kwargs, spec.name) if SUBCLASSES else result

    return compiled("reduce", reduce, _named(function, np_func, spec.name), family=family)




def _by_method(method: Callable[..., Any], np_func: Any, a: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any]) -> Any:
    """``np.sum(a, ...)`` for a subclass overriding ``sum``: ``a.sum(...)`` with the
    arguments given, by keyword, as NumPy's ``numpy.sum`` hands them (so a method that
    takes no ``keepdims`` refuses ``np.sum(a, keepdims=True)`` with TypeError)."""
    given = inspect.signature(np_func).bind(a, *args, **kwargs).arguments
    given.pop(next(iter(given)))  # the array itself
    return method(**given)
