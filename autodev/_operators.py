"""The array's operators and dispatched methods, each made from its spec in the function
table (:mod:`autodev._capability.specs`).

Each has a fast path for the common case (no GPU usable, data on the host) that calls
NumPy directly, and otherwise goes through :func:`autodev._dispatch.call`; the compiled
module (:mod:`autodev._speedups`) stands in front of them
(:func:`autodev._compiled.compiled`). The class (:mod:`autodev._array`) declares them in
its body and binds itself here (:func:`bind_array`).
"""

from __future__ import annotations

import functools
import operator
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from . import _fused_sum, _fusion, _threaded, _threads
from ._residency import storage as R
from ._backends import STATE
from ._device import CPU
from ._config import policy_now
from ._overrides import overriding, scalar_power
from ._deferral import _defers, _defers_in_place, _first_meeting, _structured, \
    _subclass_turn
from ._cost.cache import HOST_NOW, host_now
from ._compiled import compiled
from ._dispatch import WRAPPER_FINDERS, call, cpu_arg, gpu_operand, new
from ._results import _face_result, _not_array, _zero_d
from ._capability.specs import METHOD_SPECS, OpSpec, ufunc_spec
from ._refcounts import _BINARY_OPCODES, _ELIDABLE, _ELIDE_BYTES, _RIGHT_TOO, \
    _TEMPORARY_REFS, _UNARY_ELIDABLE, _UNARY_OPCODES, _elide, _elide_unary, temporary
from ._trace import tick
from ._typing import Array


#: Scalar operands NumPy and CuPy both take as they are (no conversion needed).
PLAIN_SCALARS = frozenset({int, float, complex, bool, np.float64, np.float32, np.int64,
                           np.int32, np.complex128, np.complex64, np.bool_})
_PLAIN_OPERANDS = PLAIN_SCALARS | {np.ndarray}
_np_ndarray = np.ndarray
_onew = object.__new__

#: True when no GPU is usable and nothing watches calls (mirrors ``STATE.fast``;
#: a module global because it is read on every operator call).
_FAST = False


#: True when a GPU is usable, nothing watches and nothing is pinned (``STATE.host_fast``):
#: a tiny elementwise operator on host data then calls NumPy after one size check.
_HOST_FAST = False

#: Large elementwise calls may be deferred (mirrors ``STATE.fusable``; :mod:`autodev._fusion`).
_FUSABLE = False


def _sync_fast() -> None:
    global _FAST, _HOST_FAST, _FUSABLE
    _FAST = STATE.fast
    _HOST_FAST = STATE.host_fast
    _FUSABLE = STATE.fusable


STATE.listeners.append(_sync_fast)
_sync_fast()  # the flags as they are now (refresh tells it of every change after)

#: With no GPU usable, an operand this large sends the call to the general path, where
#: the CPU backend may split it over threads or defer it (:func:`autodev._threads.general_from`);
#: a reduction over every axis, from its own floor (:func:`autodev._threads.total_from`).
_SPLIT_FROM = _TOTAL_FROM = _threads.NEVER


#: In-place operators allocate nothing (no host pool): :func:`autodev._threads.split_floors`.
_IN_PLACE_FROM: dict[str | None, int] = {None: _threads.NEVER}


#: A reduction along axes may be split from here (its family's floor, or fusion's).
_REDUCE_FROM = _threads.NEVER


def _set_split_from(least: int) -> None:
    global _SPLIT_FROM, _TOTAL_FROM, _IN_PLACE_FROM, _REDUCE_FROM
    _SPLIT_FROM, _TOTAL_FROM = least, _threads.total_from()
    _IN_PLACE_FROM = _threads.split_floors()
    _REDUCE_FROM = _IN_PLACE_FROM.get("reduction", least)


_threads.on_floor(_set_split_from)

#: Memory pending chains read through views (:data:`autodev._fusion.WATCHED`; never rebound).
_WATCHED = _fusion.WATCHED

#: True while a deferred chain is pending (:mod:`autodev._fusion`): the Python fast paths
#: then send every call to the general path, where pending operands are recorded or forced.
_ACTIVE = False


def _set_active(active: bool) -> None:
    global _ACTIVE
    _ACTIVE = active


_fusion.LISTENERS.append(_set_active)


class _Unbound:
    """Stands for the array class until :mod:`autodev._array` binds it."""


#: The array class, :class:`autodev._array.ndarray`, which sits above this module (its
#: body is made of the operators here): it binds itself here once it exists
#: (:func:`bind_array`). A module global, read on every operator call.
ndarray: type[Any] = _Unbound


def bind_array(cls: type[Any]) -> None:
    """Make ``cls`` the array class the operators take and return (done once)."""
    global ndarray
    ndarray = cls


def _binary(func: Callable[..., Any], spec: OpSpec, reflected: bool,
            answer: str | None = None) -> Callable[..., Any]:
    """An operator of ``func``: ``a.__op__(other)``, or ``a.__rop__(other)`` if ``reflected``
    (``answer``: the method of ``other`` that Python's rule runs beside this one: for a
    forward operator the reflected one, which answers when this one declines
    (:func:`_defers`); for a reflected one the forward one, which declined; a subclass of
    NumPy's array gets either first (:func:`_subclass_turn`))."""
    can_elide = isinstance(func, np.ufunc) and func.__name__ in _ELIDABLE \
        and _TEMPORARY_REFS is not None
    family = spec.family if spec.family in ("elementwise", "transcendental", "matmul") \
        else None
    matmul = family == "matmul"
    host = HOST_NOW
    split = _threaded.threaded(func.__name__, func) if can_elide else func

    def op(self: Array, other: Any) -> Any:
        if _ACTIVE:
            return _decided(func, spec, reflected, self, other, answer)
        if _FAST:
            t = type(other)
            if t is ndarray:
                o = other._native
            elif t in _PLAIN_OPERANDS:
                o = other
            elif isinstance(other, (_np_ndarray, ndarray)):
                # a subclass of NumPy's (its turn first) or of autodev's array (its wrap)
                return _decided(func, spec, reflected, self, other, answer)
            elif WRAPPER_FINDERS and answer is not None and \
                    (turn := _first_meeting(self, other, answer)) is not NotImplemented:
                return turn
            elif _defers(self, other, None if reflected else answer):
                return NotImplemented
            else:
                o = cpu_arg(other)
            data = self._native
        elif _HOST_FAST and family is not None and self._device is CPU:
            # A GPU is usable: below the model's floor, with every operand on the host,
            # the full decision is the CPU (see autodev._cost.cache.HOST_NOW): one size check.
            t = type(other)
            if t is ndarray and other._device is CPU:
                o = other._native
            elif not matmul and t in PLAIN_SCALARS:
                o = other
            else:  # (before reading self's native array: fusion counts who holds it)
                return _decided(func, spec, reflected, self, other, answer)
            data = self._native
            size = data.size
            if t is ndarray:
                if matmul:  # multiply-adds: the family's own count
                    size = spec.work([o, data] if reflected else [data, o])
                else:
                    osize = o.size
                    if osize > size:
                        size = osize
            policy = policy_now()
            try:
                floor = host[policy][family]
            except KeyError:
                floor = host_now(policy, family)
            if t is ndarray and not matmul and size < floor \
                    and _threads.broadcast_reaches(data, o, floor):
                size = floor  # (x[:, None] - c: its work is its result's elements)
            if not size < floor:
                data = o = None  # (fusion counts who holds the operands' memory)
                return _decided(func, spec, reflected, self, other, answer)
        else:
            return _decided(func, spec, reflected, self, other, answer)
        if can_elide:  # a temporary operand's buffer takes the result, as NumPy's does
            if (data.nbytes >= _ELIDE_BYTES and temporary(self)
                    and _elide(split, self, data, o, reflected)):
                tick()
                return self
            if (t is ndarray and _RIGHT_TOO and o.nbytes >= _ELIDE_BYTES
                    and other._face is self._face
                    and temporary(other) and _elide(split, other, o, data, not reflected)):
                tick()
                return other
        if _FAST and (data.size >= _SPLIT_FROM or type(o) is _np_ndarray and (
                o.size >= _SPLIT_FROM or _threads.broadcast_reaches(data, o, _SPLIT_FROM))):
            data = o = None  # (fusion counts who holds the operands' memory)
            return _decided(func, spec, reflected, self, other, answer)
        # NumPy on the host data (no GPU usable, or below the floor): inlined new()
        tick()
        result = func(o, data) if reflected else func(data, o)
        if type(result) is not _np_ndarray:
            if self._face:
                return _face_result(result, self)
            return _not_array(result, self, other)  # a NumPy scalar, or divmod's pair
        a = _onew(ndarray)
        a._native = result
        a._device = CPU
        a._storage = None
        a._mirror = None
        a._scalar = False
        a._pin = None
        a._face = self._face
        return a

    return compiled("reflected" if reflected else "binary", func, op, _not_array, can_elide,
                    family, threads=_threaded.floor_key(func))


def _decided(func: Callable[..., Any], spec: OpSpec, reflected: bool, a: Array,
             other: Any, answer: str | None) -> Any:
    """An operator call that takes the general path: the cost model decides."""
    if answer is not None and isinstance(other, _np_ndarray):
        turn = _subclass_turn(a, other, answer)
        if turn is not NotImplemented:
            return turn
    if WRAPPER_FINDERS and answer is not None:
        turn = _first_meeting(a, other, answer)
        if turn is not NotImplemented:
            return turn
    if _defers(a, other, None if reflected else answer):
        return NotImplemented
    if _meets_a_subclass(func, a, other):
        ufunc = PROTOCOLS.ufunc_for(func)
        return ufunc(other, a) if reflected else ufunc(a, other)
    fused = func if isinstance(func, np.ufunc) else _FUSED_AS.get(func)
    if _FUSABLE and fused is not None and not a._face:
        pending = _fusion.record(fused, (other, a) if reflected else (a, other), ndarray)
        if pending is not _fusion.DECLINED:
            return pending
    if not gpu_operand(other) or _structured(a, other) or _no_loop(func, a, other):
        # NumPy's own operator on the host: an operand no GPU holds (None, a string, a
        # Fraction: object or string dtype, capability table), ``==`` on structured
        # arrays, which compares field by field there (no ufunc, no GPU, does), or
        # ``==``/``!=`` of dtypes no ufunc loop compares (all False/True, NumPy's rule)
        o = cpu_arg(other)
        result = func(o, a._host()) if reflected else func(a._host(), o)
        return new(result, CPU) if type(result) is _np_ndarray else _zero_d(result, a, other)
    result = call(spec, (other, a) if reflected else (a, other), {})
    if a._face:
        return _face_result(result, a)
    if type(result) is tuple:
        return tuple(_zero_d(r, a, other) for r in result)
    return _zero_d(result, a, other)


#: ``==`` and ``!=`` are the host's own operators (they differ from the ufuncs on strings
#: and structured arrays); on the numeric operands fusion takes they are these ufuncs.
_FUSED_AS: dict[Any, np.ufunc] = {operator.eq: np.equal, operator.ne: np.not_equal}


def _meets_a_subclass(func: Callable[..., Any], a: Array, other: Any) -> bool:
    """True where the base array ``a`` meets an instance of a subclass of autodev's array
    whose own operator declined or was not asked (``a.__add__(sub)``): NumPy's operator
    then runs the ufunc, which the subclass's ``__array_wrap__`` wraps where its
    ``__array_priority__`` is the highest (a subclass's own operators wrap their results)."""
    return type(a) is ndarray and not a._face and type(other) is not ndarray \
        and isinstance(other, ndarray) and isinstance(func, np.ufunc) \
        and not _structured(a, other) and not _no_loop(func, a, other)


def _no_loop(func: Callable[..., Any], a: Array, other: Any) -> bool:
    """True for ``a == other`` or ``a != other`` where NumPy's ufunc has no loop for the two
    dtypes: NumPy's operator then answers all False (all True), where the ufunc raises."""
    if func is not operator.eq and func is not operator.ne:
        return False
    dtype = getattr(other, "dtype", None)
    return isinstance(dtype, np.dtype) and _no_equal_loop(a._native.dtype, dtype)


@functools.lru_cache(maxsize=256)
def _no_equal_loop(dtype: np.dtype, other: np.dtype) -> bool:
    try:
        np.equal.resolve_dtypes((dtype, other, None))
    except TypeError:  # NumPy's UFuncTypeError: no loop, or no common dtype
        return True
    return False


#: The axes NumPy's ``a @= b`` gives the ufunc matmul, for ``a`` of two or more
#: dimensions and of one: ``a`` keeps its shape.
_IN_PLACE_MATMUL_AXES = ([(-2, -1), (-2, -1), (-2, -1)], [(-1,), (-2, -1), (-1,)])


def _inplace(func: Callable[..., Any], spec: OpSpec) -> Callable[..., Any]:
    matmul = spec.name == "matmul"
    family = _threaded.split_family(func)

    def op(self: Array, other: Any) -> Any:
        if type(other) not in _PLAIN_OPERANDS and type(other) is not ndarray:
            if _defers_in_place(self, other):
                return NotImplemented
            if overriding((other,), {}):  # NumPy's operator: the ufunc, the override's answer
                axes = {"axes": _IN_PLACE_MATMUL_AXES[self.ndim == 1]} if matmul else {}
                return PROTOCOLS.ufunc_for(func)(self, other, out=(self,), **axes)
        if _FAST and not _ACTIVE and self._native.size < _IN_PLACE_FROM.get(
                family, _IN_PLACE_FROM[None]):
            o = other if type(other) in _PLAIN_OPERANDS else cpu_arg(other)
            tick()
            if matmul:  # NumPy's own operator: its axes keep the shape of self
                operator.imatmul(self._native, o)
            else:
                func(self._native, o, out=self._native)
            storage = self._storage
            if storage is not None:
                storage.version += 1
            return self
        if _FUSABLE and not matmul and isinstance(func, np.ufunc) \
                and _fusion.record(func, (self, other), ndarray, self) is not _fusion.DECLINED:
            return self
        if matmul:
            _rehearse_in_place_matmul(self, other)
        call(spec, (self, other), {"out": self})
        return self

    return op


def _rehearse_in_place_matmul(a: Array, other: Any) -> None:
    """Raise what NumPy's ``a @= other`` raises, found by running it on one-element probes
    of the operands' dtypes and ranks: NumPy keeps ``a``'s shape (``a`` needs a dimension,
    ``other`` two), where ``matmul(a, b, out=a)`` would broadcast a vector's dot product
    into every element of ``a``."""
    def probe(x: Any) -> Any:
        if type(x) is list or type(x) is tuple:  # nested: its rank, too
            x = np.asarray(cpu_arg(x))
        elif not isinstance(x, (ndarray, _np_ndarray)):  # a scalar: NumPy reads it as is
            return cpu_arg(x)
        return np.ones((1,) * x.ndim, x.dtype)

    with np.errstate(all="ignore"):
        operator.imatmul(probe(a), probe(other))


def _unary(func: Callable[..., Any], spec: OpSpec) -> Callable[..., Any]:
    # -a, +a, ~a of a temporary: its buffer takes the result, as NumPy's does
    can_elide = isinstance(func, np.ufunc) and func.__name__ in _UNARY_ELIDABLE \
        and _TEMPORARY_REFS is not None
    split = _threaded.threaded(func.__name__, func) if can_elide else func

    def op(self: Array) -> Any:
        if _FAST and not _ACTIVE:
            data = self._native
            if (can_elide and data.nbytes >= _ELIDE_BYTES and temporary(self)
                    and _elide_unary(split, self, data, _UNARY_OPCODES)):
                tick()
                return self
            if data.size < _SPLIT_FROM:
                tick()
                result = func(data)
                if self._face:
                    return _face_result(result, self)
                return new(result, CPU) if type(result) is np.ndarray else _zero_d(result, self)
            data = None  # (fusion counts who holds the operand's memory)
        if _FUSABLE and isinstance(func, np.ufunc) and not self._face:
            pending = _fusion.record(func, (self,), ndarray)
            if pending is not _fusion.DECLINED:
                return pending
        result = call(spec, (self,), {})
        return _face_result(result, self) if self._face else _zero_d(result, self)

    # (the compiled ufunc kind: an array of the face goes to `op`, which keeps the face)
    return compiled("ufunc", func, op, can_elide=can_elide, family=spec.family,
                    threads=_threaded.floor_key(func)) if isinstance(func, np.ufunc) else op


#: The ufuncs NumPy's ``a ** e`` runs for a float or complex array (``scalar_power``), able
#: to split a large call over threads.
_POWER_SPLITS = {name: _threaded.threaded(name, getattr(np, name))
                 for name in ("square", "sqrt", "reciprocal")}


def _power(forward: _Binary, in_place: bool) -> _Binary:
    """``__pow__`` (``__ipow__`` if ``in_place``) from ``forward``, the operator of the
    ufunc ``power``, with NumPy's ufunc for an exponent in :data:`_SCALAR_POWERS`."""
    def op(self: Array, other: Any) -> Any:
        if type(other) is int or type(other) is float:
            name = scalar_power(self._native, other)
            if name is not None:
                # a ** 2, a ** 0.5, a ** -1 of a float temporary: its buffer takes the result
                # (NumPy's fast_scalar_power)
                if not in_place and _FAST and not _ACTIVE:
                    data = self._native
                    if (data.dtype.kind in "fc" and data.nbytes >= _ELIDE_BYTES
                            and temporary(self)
                            and _elide_unary(_POWER_SPLITS[name], self, data, _BINARY_OPCODES)):
                        tick()
                        return self
                    data = None  # (the ufunc's call counts who holds the buffer)
                ufunc = PROTOCOLS.ufunc_for(getattr(np, name))
                if in_place:
                    ufunc(self, out=self)
                    return self
                return _zero_d(ufunc(self), self)
        return forward(self, other)

    op.__name__ = op.__qualname__ = "__ipow__" if in_place else "__pow__"
    if in_place:
        return op
    # NumPy's own operator on the host data chooses its ufunc as `op` does; with a GPU
    # usable `op` decides (power's floors are not square's), and calls from the least
    # thread floor of all go to it too (split or deferred by the ufunc NumPy would run)
    can_elide = "power" in _ELIDABLE and _TEMPORARY_REFS is not None
    return compiled("binary", operator.pow, op, _not_array, can_elide)


# ---------------------------------------------------------------------- method tables

def _method(name: str, spec: OpSpec, np_method: Callable[..., Any]) -> Callable[..., Any]:
    # a view method (reshape, transpose, ...) runs where its array lives and decides
    # nothing: on a host array it takes the direct path with a GPU usable too
    primary = spec.where == "primary"
    sums, mean = name in ("sum", "mean"), name == "mean"
    totals = name in _threaded.TOTALS  # (a.sum() of a large host array: numpy.sum(a), split)
    splits = name in _threaded.SPLIT_METHODS  # (a.sum(axis=2) too: along a kept axis)

    def method(self: Array, *args: Any, **kwargs: Any) -> Any:
        if _WATCHED:  # a pending chain reads memory through views: it runs first
            _fusion.before_write()  # (the call may write, through out=)
        if sums and _ACTIVE and not args and not kwargs:
            found = _fused_sum.fused_sum(self, mean)  # (a pending chain's sum, made as it runs)
            if found is not _fusion.DECLINED:
                return found
        if splits and type(self) is ndarray and self._device is CPU and (
                self._native.size >= _REDUCE_FROM if args or kwargs
                else totals and self._native.size >= _TOTAL_FROM):
            result = PROTOCOLS.function_for(getattr(np, name))(self, *args, **kwargs)
            return _face_result(result, self) if self._face else result
        if _FAST or (_HOST_FAST and primary and self._device is CPU):
            given = args
            for x in args:  # plain arguments (axis, shape, ...) pass as they are
                if type(x) not in _PLAIN_ARGUMENTS:
                    args = tuple([cpu_arg(a) for a in args])
                    break
            out = None
            if kwargs:
                out = kwargs.get("out")
                kwargs = {k: cpu_arg(v) for k, v in kwargs.items()}
            tick()
            data = self._native
            result = np_method(data, *args, **kwargs)
            if type(result) is _np_ndarray:
                if result is data:  # the array itself (conj of a real array), as NumPy's
                    return self
                if given and result.base is None:
                    found = _given_out(result, given)  # an out passed by position
                    if found is not None:
                        return found
                if out is not None:
                    if type(out) is ndarray and result is out._native:
                        R.mark_written(out)
                        return out
                    if result is out:  # a NumPy out=
                        return out
                a = _onew(ndarray)
                a._native = result
                a._device = CPU
                base = result.base
                if base is not None and (base is data or base is data.base):  # a view
                    storage = self._storage
                    if storage is None:
                        storage = self._storage = R.Storage()
                    a._storage = storage
                else:
                    a._storage = None
                a._mirror = None
                a._scalar = False
                a._pin = None
                a._face = self._face
                return a
            if self._face:
                return _face_result(result, self)
            if type(result) is tuple:
                return tuple(new(r, CPU) if type(r) is _np_ndarray else r for r in result)
            return result
        result = call(spec, (self, *args), kwargs)
        if type(result) is ndarray and result is not self and result._native is self._native:
            return self  # the array itself, as NumPy's (conj of a real array)
        return _face_result(result, self) if self._face else result

    method.__name__ = name
    method.__qualname__ = f"ndarray.{name}"
    method.__doc__ = getattr(np_method, "__doc__", None)
    method.__wrapped__ = np_method  # type: ignore[attr-defined]  # NumPy's signature
    return compiled("array_method", np_method, method, primary=primary, family=spec.family,
                    threads="reduction" if splits else None)


def _given_out(result: np.ndarray, given: tuple[Any, ...]) -> Any:
    """The autodev array among ``given`` whose data NumPy wrote ``result`` into (an
    ``out`` passed by position), marked written; None if there is none."""
    for o in given:
        if type(o) is ndarray and o._native is result:
            R.mark_written(o)
            return o
    return None


#: Method arguments that need no conversion to reach NumPy (axes, shapes' parts, flags,
#: classes such as ``np.float32``): exact types (also the compiled path's, set_arguments).
_PLAIN_ARGUMENTS = frozenset({int, float, bool, str, type(None), np.int64, np.intp, type})


_Binary = Callable[[Array, Any], Any]
_Unary = Callable[[Array], Any]


#: The Python operator of each ufunc whose name differs (``__truediv__`` for true_divide).
_OPERATOR_NAMES = {"subtract": "sub", "multiply": "mul", "true_divide": "truediv",
                   "floor_divide": "floordiv", "remainder": "mod", "power": "pow",
                   "bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
                   "left_shift": "lshift", "right_shift": "rshift"}
#: The comparison Python asks of the other operand when the first declines (``a < b``:
#: ``b.__gt__(a)``).
_REFLECTED_COMPARISONS = {"less": "__gt__", "less_equal": "__ge__", "greater": "__lt__",
                          "greater_equal": "__le__", "equal": "__eq__", "not_equal": "__ne__"}


def _arithmetic(name: str) -> tuple[_Binary, _Binary, _Binary]:
    """``__op__``, ``__rop__`` and ``__iop__`` of the NumPy ufunc ``name``."""
    func, spec = getattr(np, name), ufunc_spec(name)
    forward = _OPERATOR_NAMES.get(name, name)
    return _binary(func, spec, False, f"__r{forward}__"), \
        _binary(func, spec, True, f"__{forward}__"), _inplace(func, spec)


def _comparison(name: str, func: Callable[..., Any] | None = None) -> _Binary:
    """``__lt__`` and the like from the NumPy ufunc ``name`` (``func``: the host's own
    operator where it differs, as ``==`` does on strings)."""
    return _binary(func or getattr(np, name), ufunc_spec(name), False,
                   _REFLECTED_COMPARISONS[name])


def _unary_of(name: str) -> _Unary:
    return _unary(getattr(np, name), ufunc_spec(name))


def _dispatched(name: str) -> Callable[..., Any]:
    """The array method ``name``, dispatched like its function (spec: ``METHOD_SPECS``)."""
    return _method(name, METHOD_SPECS[name], getattr(np.ndarray, name))


def _not_bound(obj: Any) -> Any:
    raise RuntimeError("autodev's function namespace is not loaded: import autodev first")


def _no_face() -> Any:
    raise RuntimeError("autodev's array-API face is not bound: import autodev first")


def _no_dask(obj: Any) -> Any:
    raise RuntimeError("autodev's Dask registration is not bound: import autodev first")


@dataclass
class _Protocols:
    """What the array's protocols need from the floors above it, bound by them: the
    function namespace (autodev._namespace) fills in how ``__array_ufunc__`` and
    ``__array_function__`` find autodev's callable standing for a NumPy one when it is
    built; the package (autodev/__init__.py) fills in ``__array_namespace__``'s face,
    :mod:`autodev.array_api`, which it imports on first use; :mod:`autodev._dask` fills
    in ``__dask_tokenize__`` (what Dask hashes for an array's token)."""

    ufunc_for: Callable[[Any], Any]
    function_for: Callable[[Any], Any]
    array_namespace: Callable[[], Any]
    dask_tokenize: Callable[[Any], Any]


PROTOCOLS = _Protocols(_not_bound, _not_bound, _no_face, _no_dask)
