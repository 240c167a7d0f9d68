"""What operators, methods and indexing return besides a new host array: the array-API
face's arrays and 0-d arrays (see docs/array-api.md, "One array, two faces"), NumPy's
scalars as NumPy returns them, ``divmod``'s pair.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _dispatch as D
from ._device import CPU, Device
from ._dispatch import new
from ._typing import Array


def _face_result(result: Any, a: Array) -> Any:
    """What an operator, method or index of the array-API face's array ``a`` returns:
    ``result`` with arrays marked as the face's and scalars made 0-d arrays where ``a``
    is placed (see docs/array-api.md, "One array, two faces")."""
    t = type(result)
    if t is D.ndarray:
        if not result._face and result is not a:
            result._face = True
            result._scalar = False
        return result
    if isinstance(result, np.generic):  # computed on the host: placed as ``a`` is
        return face_scalar(result, a._pin)
    if t is tuple or t is list:
        return t(_face_result(r, a) for r in result)
    if t is np.ndarray:
        return new(result, CPU, None, False, a._pin, True)
    return result


def face_scalar(value: np.generic, pin: Device | None) -> Array:
    """A NumPy scalar (which only the host computes) as a 0-d array of the array-API face,
    pinned to ``pin`` (placed ``auto`` when None)."""
    zero_d = new(np.asarray(value), CPU, None, False, None, True)
    return zero_d if pin is None else zero_d.to_device(pin)


def _not_array(result: Any, a: Any = None, other: Any = None) -> Any:
    """A host operator's result that is not one NumPy array: a NumPy scalar (all operands
    0-d: NumPy's operators return scalars, immutable, as ``sum`` does) or a tuple
    (``divmod``). ``a`` and ``other``: the operands, for :func:`_zero_d`."""
    if type(result) is tuple:
        return tuple(new(r, CPU) if type(r) is np.ndarray else _zero_d(r, a, other)
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
