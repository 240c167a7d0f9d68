"""``autodev.broadcast``: NumPy's broadcast object, whose iterators view autodev arrays."""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ._array import ndarray
from ._creation import asanyarray
from ._indexing import _FlatIter


class broadcast:
    """Produce an object that mimics broadcasting (NumPy's ``broadcast``).

    ``shape``, ``ndim``, ``size``, ``numiter``, ``index``, ``reset()`` and iteration over
    tuples of elements are NumPy's, over the arguments' host data. ``iters`` holds one
    flat iterator an argument, stepping as NumPy's does, whose ``base`` is that argument
    (an array-like made an autodev array first; a broadcast argument gives its own).
    """

    __slots__ = ("_arrays", "_numpy")
    _arrays: tuple[Any, ...]
    _numpy: Any
    __signature__ = inspect.Signature(
        [inspect.Parameter("arrays", inspect.Parameter.VAR_POSITIONAL)])

    def __init__(self, *arrays: Any, **kwargs: Any) -> None:
        if kwargs:
            raise ValueError("keyword arguments not accepted.")  # NumPy's words
        own: list[Any] = []
        for a in arrays:
            if isinstance(a, broadcast):
                own.extend(a._arrays)
            else:
                own.append(a if isinstance(a, ndarray) else asanyarray(a))
        self._arrays = tuple(own)
        self._numpy = np.broadcast(*[a._host() for a in own])

    @property
    def iters(self) -> tuple[_FlatIter, ...]:
        """One flat iterator an argument, with that argument as its ``base``."""
        iters = []
        for a, numpy_iter in zip(self._arrays, self._numpy.iters):
            it = _FlatIter(a)
            it._iter = numpy_iter  # NumPy's, set to step over the broadcast shape
            iters.append(it)
        return tuple(iters)

    shape = property(lambda self: self._numpy.shape, doc="The broadcast shape.")
    ndim = property(lambda self: self._numpy.ndim, doc="The number of dimensions.")
    nd = property(lambda self: self._numpy.nd, doc="The number of dimensions (``ndim``).")
    size = property(lambda self: self._numpy.size, doc="The number of elements.")
    numiter = property(lambda self: self._numpy.numiter, doc="The number of arguments.")
    index = property(lambda self: self._numpy.index, doc="The current flat index.")

    def reset(self, /) -> None:
        """Go back to the first element."""
        self._numpy.reset()

    def __iter__(self) -> "broadcast":
        return self

    def __next__(self) -> tuple[Any, ...]:
        return next(self._numpy)
