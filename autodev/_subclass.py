"""Subclasses of ``autodev.ndarray``: NumPy's view casting and result types.

``class A(np.ndarray)`` under ``import autodev as np``, then ``x.view(A)``: the
result is an ``A`` sharing ``x``'s storage, ``A.__array_finalize__`` runs as in
NumPy, and indexing, operators, array methods and ufuncs on an ``A`` return an
``A`` again (finalized from it), so its attributes and overridden methods live on.

Everything is installed on the subclass when it is defined: the base class's hot
paths (which recognise autodev arrays by ``type(x) is ndarray``) are unchanged and
pay nothing. A subclass is registered as an array type of the dispatcher
(``FOREIGN_ARRAYS``), so functions take its instances as arrays; their results are
plain autodev arrays, except ufuncs' (NumPy's rule is the same for most functions:
``np.concatenate`` of subclasses returns a base array).
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
        setattr(cls, name, _keeping_class(getattr(ndarray, name)))
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


def of_inputs(args: tuple[Any, ...], result: Any) -> Any:
    """A ufunc's ``result`` given the subclass of its first subclass input, as NumPy does."""
    for a in args:
        if type(a) in SUBCLASSES:
            return keep_class(result, type(a), a)
    return result


def _keeping_class(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def keeping(self: Any, *args: Any, **kwargs: Any) -> Any:
        return keep_class(method(self, *args, **kwargs), type(self), self)

    return keeping


def _native_on(obj: Any, device: Any, moves: Any) -> Any:
    return R.native_on(obj, device, moves)


@functools.lru_cache(maxsize=None)
def _numpy_twin(name: str) -> type:
    """A NumPy subclass named like the autodev one, so NumPy's repr prints that name."""
    return type(name, (np.ndarray,), {})


def _repr(self: Any) -> str:
    return repr(self._host().view(_numpy_twin(type(self).__name__)))
