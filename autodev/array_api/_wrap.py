"""What turns a NumPy-face function into an array-API-face one: 0-d arrays, not scalars.

The two faces share one array class and one dispatcher. Where NumPy returns a
scalar (a reduction over everything, a ufunc of 0-d input), the standard
returns a 0-d array of the same namespace; :func:`standard` makes that so, and
nothing else about the call changes.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .._residency import storage as R
from .._array import STANDARD, ndarray
from .._device import CPU
from .._dispatch import new


def as_arrays(result: Any) -> Any:
    """``result`` with NumPy scalars and autodev's scalar results made 0-d arrays.

    Tuples (named ones too) and lists are walked; other values pass through.
    """
    t = type(result)
    if t is ndarray:
        if result._scalar is STANDARD or result._data.ndim:
            return result
        # a 0-d array, or a scalar left on its device: the same data seen as the
        # standard's 0-d array (same storage, so a write through either is a write to
        # both), whose operators give 0-d arrays too
        return new(result._data, result._device, R.storage_of(result), STANDARD,
                   result._pin)
    if isinstance(result, np.generic):
        return _from_scalar(result)
    if t is tuple or t is list:
        return t(as_arrays(r) for r in result)
    if isinstance(result, tuple):  # named tuples: EighResult, UniqueAllResult, ...
        return t(*(as_arrays(r) for r in result))
    return result


def _from_scalar(value: np.generic) -> Any:
    """A NumPy scalar (which only the host computes) as a 0-d autodev array."""
    return new(np.asarray(value), CPU, None, STANDARD)


def standard(func: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``func`` returning arrays where it returned scalars (signature and doc kept)."""

    @functools.wraps(func, updated=())  # not a ufunc's __dict__
    def function(*args: Any, **kwargs: Any) -> Any:
        return as_arrays(func(*args, **kwargs))

    if name is not None:
        function.__name__ = function.__qualname__ = name
    function.__module__ = "autodev.array_api"
    return function
