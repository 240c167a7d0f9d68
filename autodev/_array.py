"""``autodev.ndarray``: NumPy's array API over data living on one device.

Operators and dispatched methods are declared in the class body, each made from
its spec in the function table (:mod:`autodev._capability.specs`). Each has a fast path for
the common case (no GPU usable, data on the host) that calls NumPy directly, and
otherwise goes through :func:`autodev._dispatch.call`. The class binds itself to
the dispatcher (:func:`autodev._dispatch.bind_array`), which sits below it.
"""

from __future__ import annotations

import dis
import functools
import inspect
import operator
import pickle
import sys
from dataclasses import dataclass
from sys import getrefcount
from typing import TYPE_CHECKING, Any, Callable, Iterator, TypeVar, cast as _cast

import numpy as np

from . import _parallel
from ._residency import buffers as _buffers, storage as R
from ._backends import STATE, active_gpu, backend_for, note_pinned, resolve_device
from ._device import AUTO, CPU, Device
from ._config import SPEEDUPS, policy_now
from ._dispatch import DEFER_TO, HOST_FLOOR_WORK, bind_array, call, cpu_arg, defers_to_other, \
    gpu_operand, host_floor_work, is_plain_array_like, new, native_arg
from ._capability.corrections import check_select_kind, check_sort_kind, plain_kth
from ._residency.memory import check_not_view, in_place_on_host, refuse_view, retrying
from ._capability.specs import METHOD_SPECS, OpSpec, ufunc_spec
from ._overrides import install as install_overrides, overriding
from ._subclass import array_wrap, cast, install
from ._trace import STATS, tick
from ._typing import Casting, Order

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


def _sync_fast() -> None:
    global _FAST, _HOST_FAST
    _FAST = STATE.fast
    _HOST_FAST = STATE.host_fast


STATE.listeners.append(_sync_fast)
_sync_fast()  # the flags as they are now (refresh tells it of every change after)

#: With no GPU usable, an operand this large sends the call to the general path, where
#: the CPU backend may split it over threads (:func:`autodev._parallel.least_floor`).
_SPLIT_FROM = _parallel.NEVER


def _set_split_from(least: int) -> None:
    global _SPLIT_FROM
    _SPLIT_FROM = least


_parallel.on_floor(_set_split_from)


_F = TypeVar("_F", bound=Callable[..., Any])


def compiled(kind: str, func: Any, fallback: _F, other: Callable[[Any], Any] | None = None,
             can_elide: bool = False, family: str | None = None, binds: bool = True) -> _F:
    """``fallback`` behind its compiled fast path (:mod:`autodev._speedups`), which does
    what ``fallback``'s own fast path does for the commonest calls, with no GPU usable,
    and passes every other call to ``fallback`` untouched; ``fallback`` itself where the
    extension is not built or ``AUTODEV_PURE_PYTHON=1``. ``kind``: binary, reflected,
    getitem, setitem, ufunc, reduce or create; ``func``: NumPy's callable; ``other``: what
    a result that is not one NumPy array goes through; ``family``: the cost family whose
    floor a host call with a GPU usable must be below to skip the decision, as
    ``fallback``'s does (None: ``fallback`` decides every such call); ``binds``: whether
    a class holding it makes it a method (False for NumPy's builtins' twins)."""
    if SPEEDUPS is None:
        return fallback
    kind_of = SPEEDUPS.FastCall if binds else SPEEDUPS.FastFunction
    return _cast(_F, kind_of(kind, func, fallback, other, can_elide, family))


def _compiled_method(kind: str) -> Callable[[_F], _F]:
    """Decorator: the method behind its compiled fast path (see :func:`compiled`)."""
    return lambda method: compiled(kind, None, method)


# ---------------------------------------------------------------------- operator tables

def _probe_temporary_refcount(add: Callable[[Any, Any], int]) -> int | None:
    """The reference count the binary operator ``add`` (an ``__add__`` that returns the
    count it sees on its left operand) sees on a temporary left operand, or None if this
    interpreter does not tell temporaries from named values that way."""

    class Probe:
        __add__ = add

    named = Probe()
    seen_named = named + 1
    seen_temporary = Probe() + 1
    return seen_temporary if seen_temporary < seen_named else None


def _refcount_seen(self: Any, other: Any) -> int:
    """What a Python-level operator sees (the probe of :func:`_probe_temporary_refcount`)."""
    return getrefcount(self)


def _probe_held_refcount() -> int:
    """The reference count ``_elide`` sees on a buffer only its wrapper holds: read from
    the slot into the operator's local and passed on, as the operator does."""

    class Holder:
        __slots__ = ("data",)
        data: object

    def callee(data: object) -> int:
        return getrefcount(data)

    def caller(holder: Holder) -> int:
        data = holder.data
        return callee(data)

    holder = Holder()
    holder.data = object()
    return caller(holder)


#: NumPy reuses a temporary operand's buffer for the result of ``a*b + c`` when the
#: temporary is large (>= 256 KiB) and nothing else refers to it; autodev's wrapper
#: hides that refcount from NumPy, so the operators do the same check themselves.
_TEMPORARY_REFS = _probe_temporary_refcount(_refcount_seen)
_ELIDE_BYTES = 256 * 1024
_HELD_REFS = _probe_held_refcount()


#: The opcodes of a binary operator in Python code (3.11+: BINARY_OP; 3.10: one each).
_BINARY_OPCODES = frozenset(code for name, code in dis.opmap.items()
                            if name.startswith("BINARY_") and "SUBSCR" not in name
                            and "SLICE" not in name)


def _from_binary_opcode() -> bool:
    """True if the operator runs for a binary operator of Python code (the frame above
    ``_elide`` and the operator): its operands are then on that frame's evaluation
    stack, which holds each by a reference of its own. Not so for C code calling the
    operator with a reference it only borrows (``functools.partial(operator.add, a)``,
    ``map``): there a held array shows the refcount of a temporary."""
    frame = sys._getframe(3)  # (0: this function, 1: _elide, 2: the operator)
    lasti = frame.f_lasti
    return lasti >= 0 and frame.f_code.co_code[lasti] in _BINARY_OPCODES


def _elide(func: Any, self: ndarray, data: Any, o: Any, reflected: bool) -> bool:
    """Compute ``func`` into ``self``'s buffer (``data``, the operator's local) if ``self``
    is an unshared temporary whose dtype and shape the result keeps (as NumPy's temporary
    elision does)."""
    if (self._storage is not None or self._mirror is not None or getrefcount(data) != _HELD_REFS
            or data.base is not None or not data.flags.writeable or not _from_binary_opcode()):
        return False
    o_type = type(o)
    if o_type is _np_ndarray:
        if o.shape != data.shape:
            return False
        o_dtype = o.dtype
    elif o_type in (int, float, complex):
        o_dtype = o_type
    else:
        return False
    dtypes = (o_dtype, data.dtype, None) if reflected else (data.dtype, o_dtype, None)
    try:
        resolved = func.resolve_dtypes(dtypes)
    except (TypeError, np.exceptions.DTypePromotionError):
        return False  # let the ordinary call raise NumPy's own error
    if resolved[2] != data.dtype or resolved[0] != resolved[1]:
        return False
    if reflected:
        func(o, data, out=data)
    else:
        func(data, o, out=data)
    return True


def _binary(func: Callable[..., Any], spec: OpSpec, reflected: bool,
            answer: str | None = None) -> Callable[..., Any]:
    """An operator of ``func``: ``a.__op__(other)``, or ``a.__rop__(other)`` if ``reflected``
    (``answer``: the method of ``other`` that answers the forward operator, for
    :func:`_defers`; None for a reflected one)."""
    can_elide = isinstance(func, np.ufunc) and func.__name__ in _ELIDABLE \
        and _TEMPORARY_REFS is not None
    family = spec.family if spec.family in ("elementwise", "transcendental", "matmul") \
        else None
    matmul = family == "matmul"
    floors = HOST_FLOOR_WORK
    split = _parallel.threaded(func.__name__, func) if can_elide else func

    def op(self: ndarray, other: Any) -> Any:
        if _FAST:
            t = type(other)
            if t is ndarray:
                o = other._data
            elif t in _PLAIN_OPERANDS:
                o = other
            elif _defers(self, other, answer):
                return NotImplemented
            else:
                o = cpu_arg(other)
            tick()
            data = self._data
            # (can_elide holds only where _TEMPORARY_REFS is an int, which mypy cannot see)
            if (can_elide
                    and getrefcount(self) <= _TEMPORARY_REFS  # type: ignore[operator]
                    and data.nbytes >= _ELIDE_BYTES and _elide(split, self, data, o, reflected)):
                return self
            if data.size >= _SPLIT_FROM or (type(o) is _np_ndarray and o.size >= _SPLIT_FROM):
                return _decided(func, spec, reflected, self, other, answer)
        elif _HOST_FAST and family is not None and self._device is CPU:
            # A GPU is usable: below the model's floor, with every operand on the host,
            # the full decision is the CPU (see host_floor_work); one size check decides.
            t = type(other)
            data = self._data
            if t is ndarray and other._device is CPU:
                o = other._data
                size = data.size
                if matmul:  # multiply-adds, as the matmul family's work counts them (an
                    # integer: the inner dimension divides both sizes)
                    inner = (o if reflected else data).shape
                    size = size * o.size // (inner[-1] or 1 if inner else 1)
                else:
                    osize = o.size
                    if osize > size:
                        size = osize
            elif not matmul and t in PLAIN_SCALARS:
                o, size = other, data.size
            else:
                return _decided(func, spec, reflected, self, other, answer)
            try:
                floor = floors[family]
            except KeyError:
                floor = host_floor_work(family)
            if not (size < floor and policy_now() == "auto"):
                return _decided(func, spec, reflected, self, other, answer)
            tick()
        else:
            return _decided(func, spec, reflected, self, other, answer)
        # NumPy on the host data (no GPU usable, or below the floor): inlined new()
        result = func(o, data) if reflected else func(data, o)
        if type(result) is not _np_ndarray:
            if self._face:
                return _face_result(result, self)
            return _not_array(result, self, other)  # a NumPy scalar, or divmod's pair
        a = _onew(ndarray)
        a._data = result
        a._device = CPU
        a._storage = None
        a._mirror = None
        a._scalar = False
        a._pin = None
        a._face = self._face
        return a

    return compiled("reflected" if reflected else "binary", func, op, _not_array, can_elide,
                    family)


def _decided(func: Callable[..., Any], spec: OpSpec, reflected: bool, a: ndarray,
             other: Any, answer: str | None) -> Any:
    """An operator call that takes the general path: the cost model decides."""
    if _defers(a, other, answer):
        return NotImplemented
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


def _face_result(result: Any, a: ndarray) -> Any:
    """What an operator, method or index of the array-API face's array ``a`` returns:
    ``result`` with arrays marked as the face's and scalars made 0-d arrays where ``a``
    is placed (see docs/array-api.md, "One array, two faces")."""
    t = type(result)
    if t is ndarray:
        if not result._face and result is not a:
            result._face = True
            result._scalar = False
        return result
    if isinstance(result, np.generic):  # computed on the host: placed as ``a`` is
        return face_scalar(result, a._pin)
    if t is tuple or t is list:
        return t(_face_result(r, a) for r in result)
    if t is _np_ndarray:
        return new(result, CPU, None, False, a._pin, True)
    return result


def face_scalar(value: np.generic, pin: Device | None) -> "ndarray":
    """A NumPy scalar (which only the host computes) as a 0-d array of the array-API face,
    pinned to ``pin`` (placed ``auto`` when None)."""
    zero_d = new(np.asarray(value), CPU, None, False, None, True)
    return zero_d if pin is None else zero_d.to_device(pin)


def _not_array(result: Any, a: Any = None, other: Any = None) -> Any:
    """A host operator's result that is not one NumPy array: a NumPy scalar (all operands
    0-d: NumPy's operators return scalars, immutable, as ``sum`` does) or a tuple
    (``divmod``). ``a`` and ``other``: the operands, for :func:`_zero_d`."""
    if type(result) is tuple:
        return tuple(new(r, CPU) if type(r) is _np_ndarray else _zero_d(r, a, other)
                     for r in result)
    return _zero_d(result, a, other)


def _zero_d(result: Any, a: Any, other: Any = None) -> Any:
    """An operator's 0-d result: NumPy's scalar, as NumPy returns it; a 0-d array of the
    array-API face where an operand is the face's (see :func:`_face_result`), so that
    code written against the standard (SciPy, scikit-learn) stays in one namespace."""
    if isinstance(result, np.generic):
        if getattr(a, "_face", False):
            return _face_result(result, a)
        if getattr(other, "_face", False):
            return _face_result(result, other)
    return result


def _inplace(func: Callable[..., Any], spec: OpSpec) -> Callable[..., Any]:
    matmul = spec.name == "matmul"

    def op(self: ndarray, other: Any) -> Any:
        if type(other) not in _PLAIN_OPERANDS and type(other) is not ndarray \
                and _defers_in_place(self, other):
            return NotImplemented
        if _FAST and self._data.size < _SPLIT_FROM:
            o = other if type(other) in _PLAIN_OPERANDS else cpu_arg(other)
            tick()
            if matmul:  # NumPy's own operator: its axes keep the shape of self
                operator.imatmul(self._data, o)
            else:
                func(self._data, o, out=self._data)
            storage = self._storage
            if storage is not None:
                storage.version += 1
            return self
        if matmul:
            _rehearse_in_place_matmul(self, other)
        call(spec, (self, other), {"out": self})
        return self

    return op


def _rehearse_in_place_matmul(a: ndarray, other: Any) -> None:
    """Raise what NumPy's ``a @= other`` raises, found by running it on one-element probes
    of the operands' dtypes and ranks: NumPy keeps ``a``'s shape (``a`` needs a dimension,
    ``other`` two), where ``matmul(a, b, out=a)`` would broadcast a vector's dot product
    into every element of ``a``."""
    def probe(x: Any) -> Any:
        if type(x) is not ndarray and type(x) is not _np_ndarray:
            return cpu_arg(x)
        return np.ones((1,) * x.ndim, x.dtype)

    with np.errstate(all="ignore"):
        operator.imatmul(probe(a), probe(other))


def _unary(func: Callable[..., Any], spec: OpSpec) -> Callable[..., Any]:
    def op(self: ndarray) -> Any:
        if _FAST and self._data.size < _SPLIT_FROM:
            tick()
            result = func(self._data)
            if self._face:
                return _face_result(result, self)
            return new(result, CPU) if type(result) is np.ndarray else _zero_d(result, self)
        result = call(spec, (self,), {})
        return _face_result(result, self) if self._face else _zero_d(result, self)

    return op


def _structured(a: ndarray, other: Any) -> bool:
    """True if either operand has a structured dtype (fields)."""
    return a._data.dtype.names is not None or \
        getattr(getattr(other, "dtype", None), "names", None) is not None


def _no_loop(func: Callable[..., Any], a: ndarray, other: Any) -> bool:
    """True for ``a == other`` or ``a != other`` where NumPy's ufunc has no loop for the two
    dtypes: NumPy's operator then answers all False (all True), where the ufunc raises."""
    if func is not operator.eq and func is not operator.ne:
        return False
    dtype = getattr(other, "dtype", None)
    return isinstance(dtype, np.dtype) and _no_equal_loop(a._data.dtype, dtype)


@functools.lru_cache(maxsize=256)
def _no_equal_loop(dtype: np.dtype, other: np.dtype) -> bool:
    try:
        np.equal.resolve_dtypes((dtype, other, None))
    except TypeError:  # NumPy's UFuncTypeError: no loop, or no common dtype
        return True
    return False


_NO_OVERRIDE = object()


def _defers(a: ndarray, other: Any, answer: str | None) -> bool:
    """True if the forward binary operator of ``a`` leaves the call to ``other``
    (``answer``: the method of ``other`` that then runs, e.g. ``__radd__`` for ``a + other``;
    None where Python gives ``other`` no turn, as for a reflected operator).

    NumPy's rule (``binop_should_defer``, NEP 13), for ``a`` standing for a NumPy array: an
    operand whose class sets ``__array_ufunc__ = None`` gets the call; one with another
    ``__array_ufunc__`` does not, unless it is a subclass of NumPy's array with its own
    ``answer`` (Python gives a subclass's reflected method the first turn: ``a * matrix``
    is ``matrix.__rmul__``); one without ``__array_ufunc__`` gets it if it has ``answer``
    and a higher ``__array_priority__``. Wrappers of autodev arrays (a Dask array) always
    get it.
    """
    t = type(other)
    if t in DEFER_TO:
        return True
    override = getattr(t, "__array_ufunc__", _NO_OVERRIDE)
    if override is None:
        return True
    if answer is None:
        return False
    if override is not _NO_OVERRIDE:
        return isinstance(other, _np_ndarray) and \
            getattr(t, answer, None) is not getattr(_np_ndarray, answer, None)
    return hasattr(t, answer) and _priority(other) > _own_priority(a)


def _defers_in_place(a: ndarray, other: Any) -> bool:
    """True if ``a``'s in-place operator leaves the call to ``other`` (Python then tries
    the forward operator): NumPy's rule for in-place operators, which never hand the call
    to ``__array_ufunc__ = None`` but raise (NumPy's ufunc does), and otherwise defer as
    the forward operator does to a higher ``__array_priority__``."""
    t = type(other)
    if t in DEFER_TO:
        return True
    override = getattr(t, "__array_ufunc__", _NO_OVERRIDE)
    if override is None:
        raise TypeError(f"operand '{t.__name__}' does not support ufuncs "
                        "(__array_ufunc__=None)")
    return override is _NO_OVERRIDE and _priority(other) > _own_priority(a)


def _priority(obj: Any) -> float:
    """``obj``'s ``__array_priority__`` as NumPy reads it (a NumPy scalar's priority where
    it has none, none that converts to a float, or one whose lookup raises)."""
    try:
        return float(getattr(obj, "__array_priority__", _SCALAR_PRIORITY))
    except Exception:  # NumPy clears any error of the lookup (PyArray_GetPriority)
        return _SCALAR_PRIORITY


def _own_priority(a: ndarray) -> float:
    """The priority NumPy would give ``a``: NumPy's array's (0.0) for an autodev array,
    a subclass's own where it sets one."""
    for klass in type(a).__mro__:
        if klass is ndarray:
            return 0.0
        if "__array_priority__" in klass.__dict__:
            return _priority(a)
    return 0.0


#: NumPy's ``NPY_SCALAR_PRIORITY``: the priority of an object that states none.
_SCALAR_PRIORITY = -1000000.0


#: NumPy's ``array ** exponent`` for these exact Python exponents runs another ufunc
#: (``fast_scalar_power``): its values differ from ``power``'s in the last bit for complex
#: data, and ``bool ** 2`` is int8. Exponent -> (ufunc, dtype kinds it is used for).
_SCALAR_POWERS = {(int, 2): ("square", "biufc"), (int, -1): ("reciprocal", "fc"),
                  (float, 0.5): ("sqrt", "fc")}


def _power(forward: _Binary, in_place: bool) -> _Binary:
    """``__pow__`` (``__ipow__`` if ``in_place``) from ``forward``, the operator of the
    ufunc ``power``, with NumPy's ufunc for an exponent in :data:`_SCALAR_POWERS`."""
    def op(self: ndarray, other: Any) -> Any:
        t = type(other)
        if t is int or t is float:
            found = _SCALAR_POWERS.get((t, other))
            if found is not None and self._data.dtype.kind in found[1]:
                ufunc = PROTOCOLS.ufunc_for(getattr(np, found[0]))
                if in_place:
                    ufunc(self, out=self)
                    return self
                return _zero_d(ufunc(self), self)
        return forward(self, other)

    op.__name__ = op.__qualname__ = "__ipow__" if in_place else "__pow__"
    return op


#: Operators whose result may reuse a temporary operand's buffer (same dtype, shape).
_ELIDABLE = frozenset({"add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
                       "remainder", "power", "bitwise_and", "bitwise_or", "bitwise_xor",
                       "left_shift", "right_shift"})


# ---------------------------------------------------------------------- method tables

def _method(name: str, spec: OpSpec, np_method: Callable[..., Any]) -> Callable[..., Any]:
    # a view method (reshape, transpose, ...) runs where its array lives and decides
    # nothing: on a host array it takes the direct path with a GPU usable too
    primary = spec.where == "primary"

    def method(self: ndarray, *args: Any, **kwargs: Any) -> Any:
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
            data = self._data
            result = np_method(data, *args, **kwargs)
            if type(result) is _np_ndarray:
                if result is data:  # the array itself (conj of a real array), as NumPy's
                    return self
                if given and result.base is None:
                    found = _given_out(result, given)  # an out passed by position
                    if found is not None:
                        return found
                if out is not None:
                    if type(out) is ndarray and result is out._data:
                        R.mark_written(out)
                        return out
                    if result is out:  # a NumPy out=
                        return out
                a = _onew(ndarray)
                a._data = result
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
        if type(result) is ndarray and result is not self and result._data is self._data:
            return self  # the array itself, as NumPy's (conj of a real array)
        return _face_result(result, self) if self._face else result

    method.__name__ = name
    method.__qualname__ = f"ndarray.{name}"
    method.__doc__ = getattr(np_method, "__doc__", None)
    method.__wrapped__ = np_method  # type: ignore[attr-defined]  # NumPy's signature
    return method


def _given_out(result: np.ndarray, given: tuple[Any, ...]) -> Any:
    """The autodev array among ``given`` whose data NumPy wrote ``result`` into (an
    ``out`` passed by position), marked written; None if there is none."""
    for o in given:
        if type(o) is ndarray and o._data is result:
            R.mark_written(o)
            return o
    return None


#: Method arguments that need no conversion to reach NumPy (axes, shapes' parts, flags).
_PLAIN_ARGUMENTS = frozenset({int, float, bool, str, type(None), np.int64, np.intp})


_Binary = Callable[["ndarray", Any], Any]
_Unary = Callable[["ndarray"], Any]


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
    answer = f"__r{_OPERATOR_NAMES.get(name, name)}__"
    return _binary(func, spec, False, answer), _binary(func, spec, True), _inplace(func, spec)


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


#: The array-API versions ``x.__array_namespace__(api_version=...)`` accepts.
API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


def _not_bound(obj: Any) -> Any:
    raise RuntimeError("autodev's function namespace is not loaded: import autodev first")


def _no_face() -> Any:
    raise RuntimeError("autodev's array-API face is not bound: import autodev first")


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


if TYPE_CHECKING:
    _BufferBase = object
else:
    _BufferBase = _buffer_base()


@dataclass
class _Protocols:
    """What the array's protocols need from the floors above it, bound by them: the
    function namespace (autodev._namespace) fills in how ``__array_ufunc__`` and
    ``__array_function__`` find autodev's callable standing for a NumPy one when it is
    built; the package (autodev/__init__.py) fills in ``__array_namespace__``'s face,
    :mod:`autodev.array_api`, which it imports on first use."""

    ufunc_for: Callable[[Any], Any]
    function_for: Callable[[Any], Any]
    array_namespace: Callable[[], Any]


PROTOCOLS = _Protocols(_not_bound, _not_bound, _no_face)


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

    __slots__ = ("_data", "_device", "_storage", "_mirror", "_scalar", "_pin", "_face",
                 "__weakref__")
    __array_priority__ = 100.0

    _data: Any
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
    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        self._data.shape = value
        self._mirror = None  # it has the old shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        return self._data.size

    @property
    def itemsize(self) -> int:
        return self._data.itemsize

    @property
    def nbytes(self) -> int:
        return self._data.nbytes

    @property
    def strides(self) -> tuple[int, ...]:
        return self._data.strides

    @property
    def flags(self) -> Any:
        return self._data.flags if self._device is CPU else _buffers.DeviceFlags(self)

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

    @property
    def flat(self) -> "_FlatIter":
        return _FlatIter(self)

    @flat.setter
    def flat(self, value: Any) -> None:
        # NumPy's rule: the values, cast to the array's dtype, repeated to fill it in C order
        if self._device is CPU:
            self._data.flat = cpu_arg(value)
            R.mark_written(self)
        else:
            R.check_writeable(self, "array is read-only")  # NumPy's words
            self.flat[...] = value

    @property
    def base(self) -> Any:
        """The array whose memory this one views (None if it owns its memory), as NumPy's:
        an autodev array over that memory, sharing this one's storage (writes through
        either are seen by the other and by every mirror's version). It is made when
        asked, so a view keeps alive only the memory NumPy's view would (not the viewed
        wrapper's mirrors), and two reads are equal arrays, not the same object."""
        base = getattr(self._data, "base", None)
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
            same = new(self._data, self._device, R.storage_of(self), self._scalar, pin,
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
        return np.array(R.host_copy(self._data, self._device), copy=True)

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
        found = PROTOCOLS.function_for(func)
        if found is None:
            return NotImplemented
        return found(*args, **kwargs)

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
        R.storage_of(self).escaped = True  # the consumer may write through it
        kwargs = {k: v for k, v in (("stream", stream), ("max_version", max_version),
                                    ("dl_device", dl_device), ("copy", copy)) if v is not None}
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._data.__dlpack_device__()

    def __reduce__(self) -> tuple[Any, ...]:
        host = np.array(R.host_copy(self._data, self._device), copy=True)
        # (the flag travels as an argument: a pickled NumPy array keeps it only under
        # protocol 5, and a device array is always writable)
        return (_rebuild, (host, str(self._device), self._scalar, self.device.__str__(),
                           self._device is not CPU or bool(self._data.flags.writeable),
                           self._face))

    # ------------------------------------------------------------------ conversions
    def _host(self) -> np.ndarray:
        return self._data if self._device is CPU else R.host_copy(self._data, self._device)

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
        return len(self._data)

    def __iter__(self) -> Iterator[Any]:
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        if self.ndim == 1 and not self._face:  # (the face's elements: 0-d arrays)
            return iter(self._host().copy() if self._device is not CPU else self._data)
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
        return self.copy()

    def item(self, *args: Any) -> Any:
        return self._host().item(*args)

    def tolist(self) -> Any:
        return self._host().tolist()

    def tobytes(self, order: Order = "C") -> bytes:
        return self._host().tobytes(order)

    # ------------------------------------------------------------------ indexing
    @_compiled_method("getitem")
    def __getitem__(self, key: Any) -> Any:
        # Indexing runs where the array lives and decides nothing: a host array takes the
        # direct path whether or not a GPU is usable (its index arrays are brought over)
        if _FAST or self._device is CPU:
            t = type(key)
            if t is int or t is slice:
                result = self._data[key]
            elif t is tuple:
                result = self._data[tuple([cpu_arg(k) for k in key])]
            else:
                result = self._data[cpu_arg(key)]
            if type(result) is not _np_ndarray:
                return _face_result(result, self) if self._face else result
            a = _onew(ndarray)
            a._data = result
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

    @_compiled_method("setitem")
    def __setitem__(self, key: Any, value: Any) -> None:
        if _FAST:  # the commonest write: a plain index, a plain value, no GPU at all
            t = type(key)
            if (t is int or t is slice) and type(value) in _PLAIN_OPERANDS:
                self._data[key] = value
                storage = self._storage
                if storage is not None:
                    storage.version += 1
                return
        if _FAST or self._device is CPU:  # a write on the host: no device memory involved
            t = type(key)
            if t is not int and t is not slice:
                key = tuple([cpu_arg(k) for k in key]) if t is tuple else cpu_arg(key)
            self._data[key] = value if type(value) in _PLAIN_OPERANDS else cpu_arg(value)
            storage = self._storage
            if _FAST or (self._mirror is None and (storage is None or not (
                    storage.mirrored or storage.shared))):
                if storage is not None:  # no mirror to release: only the version moves
                    storage.version += 1
            else:
                R.mark_written(self)
            return
        _setitem(self, key, value)

    def __delitem__(self, key: Any) -> None:
        raise ValueError("cannot delete array elements")

    # ------------------------------------------------------------------ method-only calls
    def astype(self, dtype: Any, order: Order = "K", casting: Casting = "unsafe",
               subok: bool = True, copy: bool = True) -> "ndarray":
        if not copy and order in ("K", "A") and self._data.dtype == dtype:
            return self  # as NumPy does (a device backend may hand back a new wrapper)
        if self._device is not CPU and not np.can_cast(self.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to "
                            f"{np.dtype(dtype)!r} according to the rule {casting!r}")

        def cast(data: Any) -> Any:
            if type(data) is np.ndarray:
                return data.astype(dtype, order=order, casting=casting, copy=copy)
            # CuPy raises TypeError for any casting= (capability table: ndarray.astype)
            return data.astype(dtype, order=order, copy=copy)

        result = _allocating(self, "astype", cast)
        return self if result._data is self._data else result

    def copy(self, order: str = "C") -> "ndarray":
        return _allocating(self, "copy", lambda data: data.copy(order=order))

    def view(self, *args: Any, **kwargs: Any) -> "ndarray":
        cls = kwargs.pop("type", None)
        if args and isinstance(args[0], type) and issubclass(args[0], ndarray):
            cls, args = args[0], args[1:]
        device = self._device
        result = retrying("view", device, lambda: new(self._data.view(*args, **kwargs), device,
                                                     R.storage_of(self), False, self._pin),
                          lambda: refuse_view("view", device))
        R.inherit(result, self)
        if cls is None:
            cls = type(self)
        if cls is not ndarray:  # view casting to a subclass (autodev._subclass)
            return cast(result, cls, self)
        return result

    __array_wrap__ = array_wrap

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """A subclass gets NumPy's subclass behaviour (see :mod:`autodev._subclass`)."""
        super().__init_subclass__(**kwargs)
        install_overrides(cls, PROTOCOLS.ufunc_for)  # before install: it keeps these
        install(cls)

    def fill(self, value: Any) -> None:
        value = _scalar_arg(value)
        _in_place(self, "fill", lambda data, device: data.fill(value))

    def sort(self, axis: int = -1, kind: str | None = None, order: Any = None) -> None:
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

    def partition(self, kth: Any, axis: int = -1, kind: str = "introselect",
                  order: Any = None) -> None:
        extra = {} if order is None else {"order": order}
        if self._device is not CPU:
            check_select_kind(kind)

        def partition(data: Any, device: Device) -> None:
            if device is CPU:
                data.partition(cpu_arg(kth), axis=axis, kind=kind, **extra)
                return
            # CuPy: kth as Python ints, C-contiguous arrays only (ndarray.partition)
            k = plain_kth(R.host_copy(kth._data, kth._device) if type(kth) is ndarray else kth)
            if data.flags.c_contiguous:
                data.partition(k, axis=axis)
            else:
                data[...] = backend_for(device).xp.partition(data, k, axis=axis)

        _in_place(self, "partition", partition)

    def put(self, indices: Any, values: Any, mode: str = "raise") -> None:
        if self._device is not CPU and mode == "raise":
            _check_flat_bounds(native_arg(indices, CPU, None), self.size)
        _in_place(self, "put", lambda data, device: data.put(
            native_arg(indices, device, None), native_arg(values, device, None), mode=mode))

    def resize(self, *shape: Any, refcheck: bool = True) -> None:
        # NumPy refuses to resize memory something else may still refer to: its own check
        # sees views of the data; this one, other references to this array (``y = x``)
        if refcheck and getrefcount(self) > _RESIZE_REFS:
            raise ValueError(
                "cannot resize an array that references or is referenced\nby another "
                "array in this way.\nUse the np.resize function or refcheck=False")
        if self._device is CPU or _buffers.move_home(self):  # (a counted transfer)
            self._data.resize(*shape, refcheck=refcheck)  # no device library resizes
        else:
            _resize_shared(self, shape, refcheck)
        R.mark_written(self)

    def getfield(self, dtype: Any, offset: int = 0) -> "ndarray":
        """A field of each element: ``dtype`` at byte ``offset`` (a view on the host; a
        copy on a device, whose libraries have no ``getfield``)."""
        if self._device is CPU:
            return _view_attr_call(self, "getfield", dtype, offset)
        return new(self._host().getfield(dtype, offset).copy(), CPU, None, False, self._pin)

    def setfield(self, val: Any, dtype: Any, offset: int = 0) -> None:
        """Write ``val`` into the field ``dtype`` at byte ``offset`` of each element."""
        value = cpu_arg(val)
        if self._device is CPU:
            self._data.setfield(value, dtype, offset)
            R.mark_written(self)
        else:
            in_place_on_host("setfield", self,
                             lambda host: host.setfield(value, dtype, offset))
            R.mark_written(self)

    def dumps(self) -> bytes:
        """This array pickled (``pickle.loads`` gives it back), as NumPy's ``dumps``."""
        return pickle.dumps(self, protocol=2)

    def __setstate__(self, state: Any, /) -> None:
        """Take NumPy's pickled array state (``numpy.ndarray.__reduce__``'s third item)."""
        host = np.ndarray.__new__(np.ndarray, (0,))
        host.__setstate__(state)
        self._data, self._device, self._storage = host, CPU, None
        self._mirror, self._scalar = None, False
        if not hasattr(self, "_pin"):
            self._pin = None

    def __array_finalize__(self, obj: Any, /) -> None:
        """Nothing, as NumPy's: a subclass's runs when one of its arrays is made."""

    def flatten(self, order: str = "C") -> "ndarray":
        return _allocating(self, "flatten", lambda data: data.flatten(order))

    def byteswap(self, inplace: bool = False) -> "ndarray":
        if inplace:
            _in_place(self, "byteswap", lambda data, device: data.byteswap(True))
            return self
        return _allocating(self, "byteswap", lambda data: data.byteswap(False))

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
    __rdivmod__ = _binary(np.divmod, ufunc_spec("divmod"), True)
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


def _numpy_method_signatures() -> None:
    """Give autodev's array methods NumPy's signatures (``self`` positional-only, NumPy's
    parameter names), so ``inspect.signature(np.ndarray.sum)`` reads as NumPy's."""
    for name, attr in vars(ndarray).items():
        numpy_method = getattr(np.ndarray, name, None)
        if not callable(attr) or isinstance(attr, type) or numpy_method is None:
            continue
        try:
            attr.__signature__ = inspect.signature(numpy_method)
        except (ValueError, TypeError):  # NumPy's has none to read
            continue


_numpy_method_signatures()


def _resize_refs() -> int:
    """References to an array inside ``resize`` when only its caller's name holds it."""
    seen: list[int] = []

    def probe(self: Any) -> None:
        seen.append(getrefcount(self))

    probe(_onew(ndarray))
    return seen[0] + 1  # the caller's own variable


#: More references than this inside ``ndarray.resize``: someone else holds the array.
_RESIZE_REFS = _resize_refs()


def _bind_compiled(speedups: Any) -> None:
    """Bind the compiled fast paths to the array class and keep their flags in step with
    ``STATE.fast`` and ``STATE.host_fast``, as the Python paths' ``_FAST``/``_HOST_FAST``."""
    temporary = _probe_temporary_refcount(speedups.refcount_probe)
    speedups.configure(ndarray, _np_ndarray, CPU, _PLAIN_OPERANDS, PLAIN_SCALARS, R.Storage,
                       -1 if temporary is None else temporary, HOST_FLOOR_WORK, policy_now)

    def sync() -> None:
        speedups.set_fast(STATE.fast, STATE.host_fast)

    STATE.listeners.append(sync)
    sync()
    _parallel.on_floor(speedups.set_split_from)


if SPEEDUPS is not None:
    _bind_compiled(SPEEDUPS)


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

    def __init__(self, array: ndarray) -> None:
        self._array = array
        self._iter: Any = None  # NumPy's flatiter, made on the first step of iteration

    @property
    def base(self) -> ndarray:
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

    def __len__(self) -> int:
        return self._array.size

    def __array__(self, dtype: Any = None, /, *, copy: bool | None = None) -> np.ndarray:
        # the host data (shared on the host, as NumPy's flatiter shares a contiguous one)
        flat: Any = _buffers.host_array(self._array, None, copy).flat
        return flat.__array__(dtype, copy=copy)

    def copy(self) -> ndarray:
        """A flattened copy of the array (``a.flatten()``)."""
        return self._array.flatten()

    def __getitem__(self, key: Any) -> Any:
        a = self._array
        if a._device is CPU:
            result = a._data.flat[cpu_arg(key)]
            return new(result, CPU, None, False, a._pin) if type(result) is _np_ndarray \
                else result
        return a.ravel()[_flat_positions(a, key)]

    def __setitem__(self, key: Any, value: Any) -> None:
        a = self._array
        if a._device is CPU:
            a._data.flat[cpu_arg(key)] = cpu_arg(value)
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


def _resize_shared(a: ndarray, shape: tuple[Any, ...], refcheck: bool) -> None:
    """``a.resize(*shape)`` for a device array whose memory views share: NumPy's rules
    (a new shape of no more bytes of an empty array reshapes it in place; else a view,
    or, with ``refcheck``, an array views refer to, cannot be resized); with
    ``refcheck=False`` the views keep the old memory and ``a`` moves to the host."""
    if a.size == 0:
        probe = np.empty(a.shape, a.dtype)  # NumPy reads the arguments, on no memory
        probe.resize(*shape, refcheck=False)
        if probe.size == 0:
            a._data = a._data.reshape(probe.shape)
            return
    if getattr(a._data, "base", None) is not None:
        raise ValueError("cannot resize this array: it does not own its data")
    if refcheck:
        raise ValueError(
            "cannot resize an array that references or is referenced\nby another "
            "array in this way.\nUse the np.resize function or refcheck=False")
    R.promote(a, CPU, R.host_copy(a._data, a._device))
    a._data.resize(*shape, refcheck=False)


def _host_buffer(buffer: ndarray) -> np.ndarray:
    """The host memory of ``buffer`` for ``ndarray(..., buffer=buffer)`` to share (a
    device array moves to the host first, :func:`autodev._residency.buffers.move_home`)."""
    if not _buffers.move_home(buffer):
        raise ValueError(
            f"ndarray(..., buffer=x) shares x's memory, and x lives on {buffer._device}, "
            "where views share it. Use x.to_device('cpu') as the buffer, or "
            "autodev.lib.stride_tricks.as_strided for a view on the device.")
    return buffer._data  # the new array shares buffer's storage: its writes are seen


def _set_flat(a: ndarray, key: Any, value: Any) -> None:
    """``a.flat[key] = value`` for device data. NumPy's own flat assignment, run on an
    array of value numbers (so its rules hold: the key's errors, values cycled over the
    positions, the last write to a repeated position wins), says which value each element
    gets; the device then writes those."""
    values = np.asarray(cpu_arg(value), dtype=a.dtype).ravel()
    taken = np.full(a.size, -1, dtype=np.intp)
    # (one value is written as a scalar, as NumPy's single-item assignment needs)
    taken.flat[cpu_arg(key)] = 0 if values.size == 1 else np.arange(values.size)
    positions = np.flatnonzero(taken >= 0)
    if positions.size:
        a[np.unravel_index(positions, a.shape)] = values[taken[positions]]


def _flat_positions(a: ndarray, key: Any) -> Any:
    """The flat positions ``a.flat[key]`` names: an int, a slice, or an index array."""
    if type(key) is int:
        if not -a.size <= key < a.size:
            raise IndexError(f"index {key} is out of bounds for size {a.size}")
        return key % a.size if a.size else key
    if type(key) is slice:
        return np.arange(*key.indices(a.size), dtype=np.intp)
    return np.arange(a.size, dtype=np.intp).flat[cpu_arg(key)]  # NumPy's rules for the key


def _rebuild(host: np.ndarray, device: str, scalar: bool, placement: str = "auto",
             writeable: bool = True, face: bool = False) -> ndarray:
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


def _own(native: Any, device: Device) -> Any:
    """A private copy when ``native`` is a mirror someone else may still use (keeping its
    memory layout, as a transfer does: the layout decides whether a reshape is a view)."""
    if device is CPU:
        return native.copy(order="K")
    return backend_for(device).xp.array(native, copy=True, order="K")


def _view_attr_call(a: ndarray, name: str, *args: Any) -> ndarray:
    """``a._data.<name>(*args)``, a view of ``a``'s memory, as an array sharing its storage."""
    result = getattr(a._data, name)(*args)
    return new(result, a._device, R.storage_of(a), False, a._pin)


def _view_attr(a: ndarray, name: str) -> ndarray:
    result = getattr(a._data, name)
    owner = backend_for(a._device).owner
    shares = owner(result) is owner(a._data)  # a view (or the array itself), not a copy
    view = new(result, a._device, R.storage_of(a) if shares else None, False, a._pin, a._face)
    if shares:
        R.inherit(view, a)
    return view


def _allocating(a: ndarray, op: str, make: Callable[[Any], Any]) -> ndarray:
    """``make(data)`` as a new array where ``a`` lives; out of device memory, on the host."""
    device, pin, face = a._device, a._pin, a._face
    return retrying(op, device, lambda: new(make(a._data), device, None, False, pin, face),
                    lambda: new(make(a._host()), CPU, None, False, pin, face))


def _in_place(a: ndarray, op: str, apply: Callable[[Any, Device], Any]) -> None:
    """``apply(data, device)`` writes into ``a``; out of device memory, it runs on a host
    copy written back into the same device memory (views of ``a`` see the write).
    A read-only ``a`` refuses with NumPy's error for ``op``, on every device."""
    R.check_writeable(a, _READ_ONLY_MESSAGES.get(op, R.READ_ONLY))
    device = a._device
    retrying(op, device, lambda: apply(a._data, device),
             lambda: in_place_on_host(op, a, lambda host: apply(host, CPU)))
    R.mark_written(a)


#: NumPy's message where a method refuses to write into a read-only array (others say
#: ``R.READ_ONLY``, "assignment destination is read-only").
_READ_ONLY_MESSAGES = {
    "sort": "sort array is read-only", "partition": "partition array is read-only",
    "byteswap": "array to be byte-swapped is read-only", "put": "put: output array is read-only",
}


def _scalar_arg(value: Any) -> Any:
    return value.item() if type(value) is ndarray else value


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
        if (t is list and not _field_names(k)) or t is np.ndarray or t is ndarray:
            k = _check_index_array(k, shape, dim, device)
        converted.append(k)
        dim += _consumes(k)
    return tuple(converted) if type(key) is tuple else converted[0]


def _consumes(k: Any) -> int:
    if k is None or k is Ellipsis:
        return 0
    dtype = getattr(k, "dtype", None)
    if dtype is not None and dtype == np.bool_:
        return max(k.ndim, 1)
    if type(k) is list and k and all(isinstance(v, (bool, np.bool_)) for v in k):
        return 1
    return 1


def _check_index_array(k: Any, shape: tuple[int, ...], dim: int, device: Device) -> Any:
    if type(k) is ndarray:
        dtype = k.dtype
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
    return R.transfer(host, CPU, device)


def _check_flat_bounds(indices: Any, size: int) -> None:
    host = np.asarray(indices)
    if host.size and (host.min() < -size or host.max() >= size):
        raise IndexError(f"index out of bounds for size {size}")


def _getitem(a: ndarray, key: Any) -> Any:
    device = a._device
    result = retrying("__getitem__", device, lambda: a._data[_index_native(key, device, a.shape)],
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


def _getitem_on_host(a: ndarray, key: Any) -> Any:
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


def _setitem(a: ndarray, key: Any, value: Any) -> None:
    def assign(data: Any, device: Device) -> None:
        v = value
        if device is not CPU and not _device_holds(device, v):
            # strings, long doubles, ...: NumPy's (unsafe) cast to the array's dtype on
            # the host, since no GPU holds the value to cast it there
            v = np.asarray(cpu_arg(v)).astype(a._data.dtype)
        data[_index_native(key, device, a.shape)] = native_arg(v, device, None)

    _in_place(a, "__setitem__", assign)
