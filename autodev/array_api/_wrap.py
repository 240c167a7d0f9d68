"""What turns a NumPy-face function into an array-API-face one: 0-d arrays, not scalars.

The two faces share one array class and one dispatcher. Where NumPy returns a
scalar (a reduction over everything, a ufunc of 0-d input), the standard
returns a 0-d array of the same namespace; :func:`standard` makes that so, and
nothing else about the call changes.
"""

from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from .._residency import storage as R
from .._array import ndarray
from .._results import face_scalar
from .._dispatch import _collect as collect
from .._dispatch import new, pin_of


def as_arrays(result: Any, inputs: tuple[Any, ...] = ()) -> Any:
    """``result`` as the face returns it: its arrays the face's, scalars 0-d arrays.

    Tuples (named ones too) and lists are walked; other values pass through. An array
    of the NumPy face among ``inputs`` (the call's arguments) returned as it is comes
    back as a new array of the face over the same memory, so that the caller's own array
    keeps its face. A NumPy scalar (computed on the host) becomes a 0-d array placed as
    the inputs are (pinned where they are pinned).
    """
    t = type(result)
    if t is ndarray:
        if result._face:
            return result
        if result._scalar or any(result is x for x in inputs):
            # the same data seen as an array of the face (same storage: a write through
            # either is a write to both)
            same = new(result._native, result._device, R.storage_of(result), False,
                       result._pin, True)
            same._mirror = result._mirror
            return same
        result._face = True  # a fresh result: nobody else holds it
        return result
    if isinstance(result, np.generic):
        return _from_scalar(result, inputs)
    if t is tuple or t is list:
        return t(as_arrays(r, inputs) for r in result)
    if isinstance(result, tuple):  # named tuples: EighResult, UniqueAllResult, ...
        return t(*(as_arrays(r, inputs) for r in result))
    return result


def _from_scalar(value: np.generic, inputs: tuple[Any, ...]) -> Any:
    """A NumPy scalar (which only the host computes) as a 0-d array of the face, pinned
    where the inputs are pinned."""
    arrays: list[Any] = []
    collect(inputs, arrays)
    return face_scalar(value, pin_of(arrays))


def standard(func: Callable[..., Any], name: str | None = None) -> Callable[..., Any]:
    """``func`` returning the face's arrays, 0-d where it returned scalars (signature and
    doc kept)."""
    if getattr(func, "_face_standard", False):
        return func

    @functools.wraps(func, updated=())  # not a ufunc's __dict__
    def function(*args: Any, **kwargs: Any) -> Any:
        return as_arrays(func(*args, **kwargs), args)

    if name is not None:
        function.__name__ = function.__qualname__ = name
    function.__module__ = "autodev.array_api"
    function._face_standard = True  # type: ignore[attr-defined]
    return function


def face_functions(namespace: dict[str, Any], names: list[str]) -> None:
    """Make every function among ``names`` in ``namespace`` return the face's arrays."""
    for name in names:
        value = namespace[name]
        if isinstance(value, types.FunctionType):
            namespace[name] = standard(value)
