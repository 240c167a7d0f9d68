"""Subclasses of ``autodev.ndarray``: NumPy's view casting and result types.

``class A(np.ndarray)`` under ``import autodev as np``, then ``x.view(A)``: the
result is an ``A`` sharing ``x``'s storage, ``A.__array_finalize__`` runs as in
NumPy, and indexing, operators, array methods and ufuncs on an ``A`` return an
``A`` again (finalized from it), so its attributes and overridden methods live on.

Everything is installed on the subclass when it is defined: the base class's hot
paths (which recognise autodev arrays by ``type(x) is ndarray``) are unchanged and
pay nothing. A subclass is registered as an array type of the dispatcher
(``FOREIGN_ARRAYS``), so functions take its instances as arrays. Their array results
are wrapped as NumPy's are: by ``__array_wrap__`` of the subclass input with the highest
``__array_priority__`` (the first on a tie), whose default (``ndarray.__array_wrap__``)
is a view of that input's class finalized from it; the functions NumPy builds with
``asarray`` (``concatenate``, ``stack``, ``nonzero``, ...) give base arrays, as NumPy's do.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from . import _dispatch as D
from ._residency import storage as R
from ._dispatch import FOREIGN_ARRAYS
from ._names import METHODS
from ._operators import PROTOCOLS
from ._overrides import _COMPARISONS, _OPERATORS as _ARITHMETIC, _UNARY, scalar_power

#: Subclasses defined so far (ufuncs give their results the subclass of an input).
SUBCLASSES: set[type] = set()

#: ndarray attributes whose results NumPy gives the subclass of ``self``.
_RESULT_METHODS = (
    "__getitem__", "copy", "astype", "flatten", *METHODS,
)

#: Operators and the NumPy ufunc each runs (the override protocol's tables, less
#: ``divmod``): a subclass's results are that ufunc's, wrapped by the ``__array_wrap__``
#: of the operand NumPy's ufunc picks (:func:`wrap_ufunc`).
_OPERATORS = {f"__{op}__": name for table in (_ARITHMETIC, _COMPARISONS, _UNARY)
              for op, name in table.items() if op != "divmod"}
_REFLECTED = {f"__r{op}__": name for op, name in _ARITHMETIC.items() if op != "divmod"}


def install(cls: type) -> None:
    """Make ``cls`` (a new subclass of ``autodev.ndarray``) behave as NumPy's subclasses."""
    SUBCLASSES.add(cls)
    FOREIGN_ARRAYS[cls] = _native_on
    ndarray = D.ndarray  # the base class (this module sits below it: it binds itself there)
    for name in _RESULT_METHODS:
        if name in cls.__dict__ or not hasattr(ndarray, name):
            continue  # the subclass's own method (its super() calls reach the wrapper below)
        if any(name in base.__dict__ for base in cls.__mro__[1:] if base in SUBCLASSES):
            continue  # already wrapped on a subclass it derives from
        if name in BASE_RESULTS:
            continue  # x.nonzero(): base arrays, as the function's
        setattr(cls, name, _keeping_class(getattr(ndarray, name), name))
    for table, reflected in ((_OPERATORS, False), (_REFLECTED, True)):
        for name, ufunc_name in table.items():
            if name not in cls.__dict__ and not any(
                    name in base.__dict__ for base in cls.__mro__[1:] if base in SUBCLASSES):
                setattr(cls, name, _operator(getattr(ndarray, name), ufunc_name, reflected))
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr  # type: ignore[method-assign, assignment]


def cast(array: Any, cls: type, parent: Any) -> Any:
    """``array`` as an instance of ``cls`` (same data and storage), finalized from ``parent``."""
    obj: Any = object.__new__(cls)
    obj._native, obj._device, obj._storage, obj._mirror, obj._scalar, obj._pin, obj._face = (
        array._native, array._device, array._storage, array._mirror, array._scalar, array._pin,
        array._face)
    if obj._storage is not None and obj._device is not D.CPU:
        R.track(obj._storage, obj)  # it shares the device memory as ``array`` does
    finalize = getattr(cls, "__array_finalize__", None)
    if finalize is not None:
        finalize(obj, parent)
    return obj


def keep_class(result: Any, cls: type, parent: Any) -> Any:
    """``result`` with its plain autodev arrays cast to ``cls`` (tuples walked)."""
    if type(result) is D.ndarray:
        return cast(result, cls, parent)
    if type(result) is tuple:
        return tuple(keep_class(r, cls, parent) for r in result)
    return result


def of_inputs(args: tuple[Any, ...], result: Any, kwargs: dict[str, Any] | None = None,
              name: str = "") -> Any:
    """``result`` of a call on ``args`` wrapped as NumPy wraps it (see the module doc)."""
    if name in BASE_RESULTS or (kwargs is not None and kwargs.get("out") is not None):
        return result
    if kwargs is not None and "subok" in kwargs and not kwargs["subok"] \
            or name in BASE_UNLESS_SUBOK and not (kwargs or {}).get("subok"):
        return result  # subok=False (those functions' default): a base array, as NumPy's
    if name.startswith("linalg."):  # wrapped by one argument's class, whatever the priority
        position = _LINALG_WRAPS_WITH.get(name, 0)
        winner = args[position] if len(args) > position and type(args[position]) in SUBCLASSES \
            else None
    else:
        winner = _wrapping_input(args, kwargs)
    if winner is None:
        return result
    return _wrapped(result, winner, name)


#: NumPy functions whose results are base arrays whatever their inputs' class (built
#: with ``asarray`` or in C without ``__array_wrap__``).
BASE_RESULTS = frozenset(
    "concatenate stack vstack hstack dstack column_stack row_stack block array asarray "
    "ascontiguousarray asfortranarray bincount where nonzero argwhere flatnonzero "
    "histogram histogram2d histogramdd histogram_bin_edges unravel_index ravel_multi_index "
    "einsum indices ix_ meshgrid mgrid ogrid tril_indices triu_indices diag_indices "
    "lexsort digitize searchsorted".split())


#: NumPy functions whose ``subok=`` is False by default: base arrays unless it is True.
BASE_UNLESS_SUBOK = frozenset({"copy", "broadcast_to", "broadcast_arrays"})


#: ``numpy.linalg`` wraps its results with ``__array_wrap__`` of its first argument, these
#: with another one's (``lstsq(a, b)``: ``b``'s).
_LINALG_WRAPS_WITH = {"linalg.solve": 1, "linalg.lstsq": 1}


def _wrapping_input(args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
    """The subclass input whose ``__array_wrap__`` wraps the results: the highest
    ``__array_priority__``, the first on a tie (None: no subclass input)."""
    best, best_priority = None, -float("inf")
    for a in _operands(args, kwargs):
        if type(a) in SUBCLASSES:
            priority = own_priority(a)
            if priority > best_priority:
                best, best_priority = a, priority
    return best


def _operands(args: tuple[Any, ...], kwargs: dict[str, Any] | None) -> Any:
    for a in (*args, *(kwargs or {}).values()):
        if type(a) is list or type(a) is tuple:
            yield from a
        else:
            yield a


#: Reductions whose result over a whole subclass array NumPy wraps as a 0-d array of
#: that class (through ``ufunc.reduce``'s ``__array_wrap__``), not a scalar.
WRAPPED_REDUCTIONS = frozenset(
    "reduce sum prod mean std var max min amax amin any all ptp nansum nanprod nanmean nanstd "
    "nanvar nanmax nanmin median nanmedian average".split())


def _wrapped(result: Any, winner: Any, name: str = "") -> Any:
    if type(result) is D.ndarray:
        return winner.__array_wrap__(result, None, False)
    if isinstance(result, np.generic) and name in WRAPPED_REDUCTIONS:
        return winner.__array_wrap__(D.new(np.asarray(result), D.CPU), None, True)
    if type(result) is tuple:
        return tuple(_wrapped(r, winner, name) for r in result)
    return result


# ---------------------------------------------------------------------- ufunc results
# NumPy's wrapping of a ufunc's results (numpy/_core/src/multiarray/arraywrap.c,
# ``npy_find_array_wrap`` and ``npy_apply_wrap``): the ``__array_wrap__`` of the input with
# the highest ``__array_priority__`` (the first on a tie, a subclass's or a duck array's
# before a base array's), or of the output given for that result.

#: NumPy's ``NPY_SCALAR_PRIORITY``: the priority of a scalar operand.
_SCALAR_PRIORITY = -1000000.0
_SCALARS = (int, float, complex, bytes, str, np.generic)
#: An input whose wrapping is the base array's (the result as it is).
_BASE = object()


def needs_wrap(args: tuple[Any, ...], out: Any) -> bool:
    """True where an input or output may wrap a ufunc's results: one that is no base
    array, scalar or None (an autodev subclass's array, a duck array with
    ``__array_wrap__``)."""
    outs = out if type(out) is tuple else (out,)
    return any(_wraps(a) for a in (*args, *outs))


def _wraps(obj: Any) -> bool:
    t = type(obj)
    return t in SUBCLASSES or not (t is D.ndarray or obj is None or obj is Ellipsis
                                   or isinstance(obj, (np.ndarray, *_SCALARS))
                                   or getattr(obj, "__array_wrap__", None) is None)


def find_wrap(inputs: tuple[Any, ...]) -> Any:
    """The input whose ``__array_wrap__`` wraps a ufunc's results, or ``_BASE``."""
    wrap, priority = None, 0.0
    for obj in inputs:
        t = type(obj)
        if t is D.ndarray and not obj._scalar or isinstance(obj, np.ndarray):
            # (NumPy's own subclasses, numpy.matrix: NumPy's code gives their results)
            if wrap is None or priority < 0.0:
                wrap, priority = _BASE, 0.0
        elif isinstance(obj, _SCALARS) or t is D.ndarray:
            if wrap is None or priority < _SCALAR_PRIORITY:
                wrap, priority = _BASE, _SCALAR_PRIORITY
        elif getattr(obj, "__array_wrap__", None) is not None:
            own = own_priority(obj)
            if wrap is None or priority < own or (own == 0.0 and wrap is _BASE):
                wrap, priority = obj, own
    return _BASE if wrap is None else wrap


def own_priority(obj: Any) -> float:
    """``obj``'s ``__array_priority__`` as NumPy reads it: 0.0 where it states none (an
    autodev subclass inherits none: the base class's 100 is autodev's, for its operators)."""
    if isinstance(obj, D.ndarray):
        for klass in type(obj).__mro__:
            if klass is D.ndarray:
                return 0.0
            if "__array_priority__" in klass.__dict__:
                break
    return float(getattr(obj, "__array_priority__", 0.0))


def wrap_ufunc(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any],
               result: Any) -> Any:
    """``ufunc.<method>``'s ``result`` wrapped as NumPy wraps it: a call (or ``outer``)
    asks ``__array_wrap__`` always, with the context ``(ufunc, arguments, output index)``;
    ``reduce``, ``accumulate`` and ``reduceat`` wrap by their array's class, without one."""
    out = kwargs.get("out")
    outs = out if type(out) is tuple else (out,) if out is not None and out is not Ellipsis \
        else ()
    if all(o is None for o in outs):
        outs = ()
    called = method in ("__call__", "outer")
    winner = find_wrap(inputs if called else inputs[:1]) if kwargs.get("subok", True) \
        else _BASE
    results = result if type(result) is tuple else (result,)
    wrapped = tuple(
        apply_wrap(r, outs[i] if outs else None, winner,
                   (ufunc, (*inputs, *outs), i) if called else None, out is not Ellipsis,
                   called)
        for i, r in enumerate(results))
    return wrapped if type(result) is tuple else wrapped[0]


def apply_wrap(result: Any, out: Any, winner: Any, context: Any, return_scalar: bool,
               force: bool) -> Any:
    """One ufunc result wrapped by ``winner`` (see :func:`find_wrap`), or by ``out``'s
    ``__array_wrap__`` where that output was given (then never a scalar)."""
    if not isinstance(result, (D.ndarray, np.generic)):
        return result  # (a NumPy subclass's own result, a deferred array's)
    if out is not None:
        return_scalar = False
        winner = _BASE if type(out) is D.ndarray or type(out) is np.ndarray \
            or getattr(out, "__array_wrap__", None) is None else out
    if winner is _BASE or not force and type(result) is type(winner):
        return result  # (the dispatcher gave a base result its scalar already)
    if isinstance(result, np.generic):
        array = D.new(np.asarray(result), D.CPU)
    elif result._scalar:  # a NumPy scalar kept on a device: the 0-d array it stands for
        array = D.new(result._native, result._device, result._storage, pin=result._pin)
    else:
        array = result
    return winner.__array_wrap__(array, context, return_scalar and array.ndim == 0)


def array_wrap(self: Any, array: Any, context: Any = None, return_scalar: bool = False,
               /) -> Any:
    """``ndarray.__array_wrap__``: ``array`` as an array of ``self``'s class, finalized
    from ``self`` (a scalar if ``return_scalar`` and ``self`` is a base array)."""
    if not isinstance(array, D.ndarray):
        array = D.new(np.asarray(array), D.CPU)  # NumPy's own code hands NumPy arrays
    if type(self) is D.ndarray or type(array) is type(self):
        return array[()] if return_scalar and array.ndim == 0 else array
    return cast(array, type(self), self)


def own_method(a: Any, name: str) -> Callable[..., Any] | None:
    """``a.<name>`` where ``a``'s class (a subclass) defines its own, else None."""
    for klass in type(a).__mro__:
        if klass is D.ndarray:
            return None
        found = klass.__dict__.get(name)
        if found is not None and not getattr(found, "_keeps_class", False):
            return getattr(a, name)
    return None


def _keeping_class(method: Callable[..., Any], name: str) -> Callable[..., Any]:
    wraps_scalar = name in WRAPPED_REDUCTIONS

    indexes = name == "__getitem__"

    @functools.wraps(method)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        if wraps_scalar and isinstance(result, np.generic):  # a.sum(): a 0-d subclass array
            return self.__array_wrap__(D.new(np.asarray(result), D.CPU), None, True)
        if indexes and type(result) is D.ndarray and result._native.base is None:
            # NumPy's copying index (s[[0, 1]], s[mask]) makes a base-class array and
            # returns a subclass view of it: that array is the result's .base
            result._native = result._native.view()
        return keep_class(result, type(self), self)

    keeping._keeps_class = True  # type: ignore[attr-defined]
    return keeping


def _operator(method: Callable[..., Any], ufunc_name: str,
              reflected: bool) -> Callable[..., Any]:
    """A subclass's operator: the base class's (its deferral to the other operand
    included), its result wrapped as the ufunc NumPy's operator calls wraps it."""
    @functools.wraps(method)
    def op(self: Any, *other: Any) -> Any:
        result = method(self, *other)
        if result is NotImplemented or ufunc_name == "power" and not reflected \
                and scalar_power(self, other[0]) is not None:
            return result  # (x ** 2 ran the ufunc square, which wrapped its result)
        inputs = (*other, self) if reflected else (self, *other)
        return wrap_ufunc(PROTOCOLS.ufunc_for(getattr(np, ufunc_name)), "__call__", inputs,
                          {}, result)

    op._keeps_class = True  # type: ignore[attr-defined]
    return op


def _native_on(obj: Any, device: Any, moves: Any) -> Any:
    return R.native_on(obj, device, moves)


@functools.lru_cache(maxsize=None)
def _numpy_twin(name: str) -> type:
    """A NumPy subclass named like the autodev one, so NumPy's repr prints that name."""
    return type(name, (np.ndarray,), {})


def _repr(self: Any) -> str:
    return repr(self._host().view(_numpy_twin(type(self).__name__)))
