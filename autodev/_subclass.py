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
from ._capability.specs import METHODS

#: Subclasses defined so far (ufuncs give their results the subclass of an input).
SUBCLASSES: set[type] = set()

#: ndarray attributes whose results NumPy gives the subclass of ``self``.
_RESULT_METHODS = (
    "__getitem__", "__array_ufunc__", "copy", "astype", "flatten",
    *(f"__{op}__" for op in (
        "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift "
        "radd rsub rmul rtruediv rfloordiv rmod rpow rmatmul rand ror rxor rlshift rrshift "
        "lt le gt ge eq ne neg pos abs invert").split()),
    *METHODS,
)


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
    if "__repr__" not in cls.__dict__:
        cls.__repr__ = _repr  # type: ignore[method-assign, assignment]


def cast(array: Any, cls: type, parent: Any) -> Any:
    """``array`` as an instance of ``cls`` (same data and storage), finalized from ``parent``."""
    obj: Any = object.__new__(cls)
    obj._data, obj._device, obj._storage, obj._mirror, obj._scalar, obj._pin, obj._face = (
        array._data, array._device, array._storage, array._mirror, array._scalar, array._pin,
        array._face)
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
            priority = getattr(a, "__array_priority__", 0.0)
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

    @functools.wraps(method)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = method(self, *args, **kwargs)
        if wraps_scalar and isinstance(result, np.generic):  # a.sum(): a 0-d subclass array
            return self.__array_wrap__(D.new(np.asarray(result), D.CPU), None, True)
        return keep_class(result, type(self), self)

    keeping._keeps_class = True  # type: ignore[attr-defined]
    return keeping


def _native_on(obj: Any, device: Any, moves: Any) -> Any:
    return R.native_on(obj, device, moves)


@functools.lru_cache(maxsize=None)
def _numpy_twin(name: str) -> type:
    """A NumPy subclass named like the autodev one, so NumPy's repr prints that name."""
    return type(name, (np.ndarray,), {})


def _repr(self: Any) -> str:
    return repr(self._host().view(_numpy_twin(type(self).__name__)))
