"""NumPy's rules for when an array's operator leaves the call to its other operand.

``a + other`` with an ``other`` that overrides NumPy (``__array_ufunc__``, NEP 13) or has a
higher ``__array_priority__`` returns NotImplemented so that Python asks ``other``; the
rules here are NumPy's (``binop_should_defer``), for the operators of
:mod:`autodev._operators`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dispatch as D
from ._dispatch import DEFER_TO, WRAPPER_FINDERS, found_wrapper
from ._typing import Array

_np_ndarray = np.ndarray


def _structured(a: Array, other: Any) -> bool:
    """True if either operand has a structured dtype (fields)."""
    return a._native.dtype.names is not None or \
        getattr(getattr(other, "dtype", None), "names", None) is not None


_NO_OVERRIDE = object()


def _defers(a: Array, other: Any, answer: str | None) -> bool:
    """True if the forward binary operator of ``a`` leaves the call to ``other``
    (``answer``: the method of ``other`` that then runs, e.g. ``__radd__`` for ``a + other``;
    None where Python gives ``other`` no turn, as for a reflected operator).

    NumPy's rule (``binop_should_defer``, NEP 13), for ``a`` standing for a NumPy array: an
    operand whose class sets ``__array_ufunc__ = None`` gets the call; one with another
    ``__array_ufunc__`` does not; one without ``__array_ufunc__`` gets it if it has
    ``answer`` and a higher ``__array_priority__``. Wrappers of autodev arrays (a Dask
    array) always get it. (A subclass of NumPy's array: :func:`_subclass_turn`.)
    """
    t = type(other)
    if t in DEFER_TO:
        return True
    override = getattr(t, "__array_ufunc__", _NO_OVERRIDE)
    if override is None:
        return True
    if answer is None or override is not _NO_OVERRIDE:
        return False
    return hasattr(t, answer) and _priority(other) > _own_priority(a)


def _first_meeting(a: Array, other: Any, answer: str) -> Any:
    """``other``'s answer (its method ``answer``, given ``a``) where ``other`` is an array
    that wraps autodev's (a Dask array) and autodev meets its type for the first time, its
    library imported after autodev: a finder (``WRAPPER_FINDERS``) registers autodev with
    it just now. Python gave ``other`` its turn already where it declined before it knew
    autodev's array (``dask_array + a``, ``dask_array < a``), or gives it next: either way
    it answers now, as it does from then on. NotImplemented where ``other`` is no such
    array (the operator goes on as before)."""
    t = type(other)
    if t is type(a) or getattr(t, "__array_ufunc__", None) is None or t in DEFER_TO \
            or not found_wrapper(t):  # (an array of a's own class wraps nothing: no finder)
        return NotImplemented
    return getattr(other, answer)(a)


def _subclass_turn(a: Array, other: Any, method: str) -> Any:
    """What a subclass of NumPy's array answers to NumPy's array standing for ``a``, or
    NotImplemented: Python's turn for it, which autodev's array (no NumPy array) does not
    get from Python itself.

    Python first runs the reflected method of a right operand whose class subclasses the
    left one's and has its own (``ndarray * matrix`` is ``matrix.__rmul__``), and the
    forward method of a left one (``matrix * ndarray``: ``matrix.__mul__``, which declines
    what is not a NumPy array). ``method`` is that method; it is given ``a``'s values as a
    NumPy array, as NumPy's operator gives it (the subclass's own code, numpy.matrix's or
    numpy.ma's, reads NumPy arrays only). NotImplemented where ``other`` is no such
    subclass, has no ``method`` of its own, or declines: ``a``'s operator then computes.
    """
    t = type(other)
    if type(a) is not D.ndarray or t is _np_ndarray or not isinstance(other, _np_ndarray):
        return NotImplemented
    own = getattr(t, method, None)
    if own is None or own is getattr(_np_ndarray, method, None):
        return NotImplemented
    return own(other, a._host())


def _defers_in_place(a: Array, other: Any) -> bool:
    """True if ``a``'s in-place operator leaves the call to ``other`` (Python then tries
    the forward operator): NumPy's rule for in-place operators, which never hand the call
    to ``__array_ufunc__ = None`` but raise (NumPy's ufunc does), and otherwise defer as
    the forward operator does to a higher ``__array_priority__``."""
    t = type(other)
    if t in DEFER_TO:
        return True
    override = getattr(t, "__array_ufunc__", _NO_OVERRIDE)
    if WRAPPER_FINDERS and override is not _NO_OVERRIDE and found_wrapper(t):
        return True  # met for the first time (see _first_meeting): the forward one runs it
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


def _own_priority(a: Array) -> float:
    """The priority NumPy would give ``a``: NumPy's array's (0.0) for an autodev array,
    a subclass's own where it sets one."""
    for klass in type(a).__mro__:
        if klass is D.ndarray:
            return 0.0
        if "__array_priority__" in klass.__dict__:
            return _priority(a)
    return 0.0


#: NumPy's ``NPY_SCALAR_PRIORITY``: the priority of an object that states none.
_SCALAR_PRIORITY = -1000000.0


#: NumPy's ``array ** exponent`` for these exact Python exponents runs another ufunc
#: (``fast_scalar_power``): its values differ from ``power``'s in the last bit for complex
