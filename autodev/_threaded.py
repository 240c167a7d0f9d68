"""The CPU backend's callables: NumPy's ufuncs and reductions and SciPy's transforms, able
to run a large call on every core (:func:`threaded` makes them, for
``NumpyBackend.resolve``), bit for bit as NumPy's or SciPy's one call.

A ufunc call, or a reduction along an axis it keeps, is split by :mod:`autodev._parallel`;
a sum or product over every axis as :func:`autodev._parallel.total_call` splits it; a mean
is that sum divided as NumPy divides it. A ``scipy.fft`` transform runs its batch of 1-D
transforms on SciPy's own threads (``workers=``), each transform made as on one thread.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable

import numpy as np

from ._cost.families import family_of_ufunc
from ._pairwise import DTYPES as PAIRWISE_DTYPES, mean_of
from ._parallel import _NO_VALUE, DECLINED, LAST, WHERE_FAMILY, reduce_call, total_call, \
    ufunc_call, where_call
from ._threads import FAMILIES, UNSPLIT, broadcast_reaches, floor, threads_for
from ._trace import STATS

_SPLIT_FAMILIES = frozenset(FAMILIES)


class ThreadedUfunc:
    """A NumPy ufunc as the CPU backend runs it: large calls split over threads."""

    __slots__ = ("ufunc", "family")

    def __init__(self, ufunc: np.ufunc) -> None:
        self.ufunc = ufunc
        self.family = family_of_ufunc(ufunc.__name__)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.family in _SPLIT_FAMILIES and _large(args, self.family):
            result = ufunc_call(self.ufunc, self.family, args, kwargs)
            if result is not DECLINED:
                return result
        return self.ufunc(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.ufunc, name)


def _large(args: tuple[Any, ...], family: str) -> bool:
    """True if an array argument, or two broadcast together, reach ``family``'s floor (a
    cheap first look)."""
    least = floor(family)
    first = None
    for x in args:
        if type(x) is np.ndarray:
            if x.size >= least:
                return True
            if first is None:
                first = x
            elif broadcast_reaches(first, x, least):
                return True
    return False


class ThreadedReduce:
    """``ufunc.reduce`` as the CPU backend runs it: split along a kept axis when large."""

    __slots__ = ("ufunc",)

    def __init__(self, ufunc: np.ufunc) -> None:
        self.ufunc = ufunc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if args and type(args[0]) is np.ndarray and args[0].size >= floor("reduction"):
            try:
                result = reduce_call(self.ufunc, *args, **kwargs)
            except TypeError:  # an argument reduce does not take: its own error below
                result = DECLINED
            if result is not DECLINED:
                return result
        return self.ufunc.reduce(*args, **kwargs)


class ThreadedReduction:
    """``numpy.sum``/``prod``/``max``/``min`` as the CPU backend runs them: a large ndarray
    goes to :func:`reduce_call` (split along a kept axis, or over every axis where
    :func:`total_call` may split it)."""

    __slots__ = ("function", "ufunc", "__wrapped__")

    def __init__(self, function: Callable[..., Any], ufunc: np.ufunc) -> None:
        self.function, self.ufunc, self.__wrapped__ = function, ufunc, function

    def __call__(self, a: Any = _NO_VALUE, axis: Any = None, *args: Any, **kwargs: Any) -> Any:
        if not args and type(a) is np.ndarray and a.size >= floor("reduction") \
                and {"dtype", "out", "keepdims", "initial", "where"}.issuperset(kwargs):
            if kwargs.get("keepdims", False) is _NO_VALUE:
                kwargs = dict(kwargs, keepdims=False)
            result = reduce_call(self.ufunc, a, axis, **kwargs)
            if result is not DECLINED:
                return result
        if a is _NO_VALUE:
            return self.function(*args, axis=axis, **kwargs) if axis is not None \
                else self.function(*args, **kwargs)
        return self.function(a, axis, *args, **kwargs)


class ThreadedMean:
    """``numpy.mean`` as the CPU backend runs it: the mean of a large float32 or float64
    array in its own dtype (no ``dtype``, ``out`` or ``where``), over any axes, from its sum
    as :func:`reduce_call` splits it, divided as NumPy's ``_mean`` divides it: an array of
    sums in place by the count as an ``intp`` (``casting="unsafe"``), a sum over every
    axis by :func:`autodev._pairwise.mean_of`."""

    __slots__ = ("function", "__wrapped__")

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = self.__wrapped__ = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if args and type(args[0]) is np.ndarray and args[0].dtype in PAIRWISE_DTYPES \
                and args[0].size >= floor("reduction"):
            try:
                found = _split_mean(*args, **kwargs)
            except TypeError:  # an argument mean does not take: its own error below
                found = DECLINED
            if found is not DECLINED:
                return found
        return self.function(*args, **kwargs)


def _split_mean(a: np.ndarray, axis: Any = None, dtype: Any = None, out: Any = None,
                keepdims: Any = False, *, where: Any = True) -> Any:
    if keepdims is _NO_VALUE:
        keepdims = False
    if dtype is not None or out is not None or (where is not True and where is not _NO_VALUE) \
            or type(keepdims) is not bool:
        return DECLINED
    if axis is None:
        count = a.size
    else:
        try:
            axes = np.lib.array_utils.normalize_axis_tuple(axis, a.ndim)
        except (TypeError, ValueError):
            return DECLINED  # NumPy's own call raises its own error
        count = math.prod(a.shape[i] for i in axes)
    if count == 0:
        return DECLINED  # ("Mean of empty slice": NumPy's own call warns)
    total = reduce_call(np.add, a, axis, keepdims=keepdims)
    if total is DECLINED:
        return DECLINED
    if type(total) is np.ndarray:
        return np.true_divide(total, np.intp(count), out=total, casting="unsafe", subok=False)
    return mean_of(total, count)


class ThreadedWhere:
    """``numpy.where(condition, x, y)`` as the CPU backend runs it: a large selection by a
    boolean array split over threads (:func:`autodev._parallel.where_call`), from the floor
    of :data:`autodev._parallel.WHERE_FAMILY`."""

    __slots__ = ("function", "__wrapped__")

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = self.__wrapped__ = function

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 3 and not kwargs and _large(args, WHERE_FAMILY):
            found = where_call(*args)
            if found is not DECLINED:
                return found
        return self.function(*args, **kwargs)


class ThreadedTransform:
    """A ``scipy.fft`` transform as the CPU backend runs it: one of a NumPy array alone
    (its other arguments by keyword), given no ``workers`` and none set by
    ``scipy.fft.set_workers``, runs on the pool's thread count (SciPy's own threads; each
    1-D transform of the batch is made as on one thread, so the result is SciPy's, bit
    for bit) from the elementwise family's thread floor: a transform does more work per
    element than an add. On the 2-vCPU VM, eight transforms of float64 took 1.0-2.2x
    less time so at 2^20 elements and 1.4-1.9x at 2^22."""

    __slots__ = ("function", "__wrapped__", "_workers")

    def __init__(self, function: Callable[..., Any]) -> None:
        import scipy.fft  # (loaded already: the function is its own)

        self.function = self.__wrapped__ = function
        self._workers = scipy.fft.get_workers

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and "workers" not in kwargs and type(args[0]) is np.ndarray \
                and self._workers() == 1:
            threads = threads_for(args[0].size, "elementwise")
            if threads > 1:
                result = self.function(*args, workers=threads, **kwargs)
                LAST.threads = threads
                STATS.threaded_calls += 1
                return result
        return self.function(*args, **kwargs)


#: Functions other than ufuncs and reductions whose large calls may be split, by name:
#: the family whose thread floor they split from (the compiled paths send such a call on
#: from there).
SPLIT_FUNCTIONS = {"where": WHERE_FAMILY}

#: NumPy functions that are a ufunc's reduce on an ndarray.
REDUCTIONS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "amax": np.maximum,
              "min": np.minimum, "amin": np.minimum}
#: Array methods that are these functions over every axis when given no argument (the CPU
#: backend may split them: :func:`total_call`, :class:`ThreadedMean`).
TOTALS = frozenset({"sum", "prod", "mean"})
#: Array methods that are these functions, with the array first, whatever their arguments
#: (a large array's goes to the function, which may split it along an axis it keeps).
SPLIT_METHODS = frozenset({"sum", "prod", "max", "min", "mean"})


def threaded(path: str, found: Any) -> Any:
    """What the CPU backend runs for the NumPy callable ``found`` at ``path``: a ufunc,
    a ufunc's ``reduce`` or a reduction function, able to split large calls; anything
    else as it is."""
    if isinstance(found, np.ufunc):
        return ThreadedUfunc(found) if split_family(found) is not None else found
    head, _, name = path.rpartition(".")
    if name == "reduce" and isinstance(getattr(np, head, None), np.ufunc) \
            and getattr(np, head).reduce == found:
        return ThreadedReduce(getattr(np, head))
    function: Callable[..., Any] = found
    if not head and name in REDUCTIONS and function is getattr(np, name, None):
        return ThreadedReduction(function, REDUCTIONS[name])
    if path == "mean" and function is np.mean:
        return ThreadedMean(function)
    if path == "where" and function is np.where:
        return ThreadedWhere(function)
    if path.startswith("scipy.fft.") and "workers" in _parameters(function):
        return ThreadedTransform(function)
    return found


def floor_key(func: Any) -> str | None:
    """The key of :func:`autodev._threads.split_floors` that says from what size a call of
    ``func`` may leave the hot paths to be split or deferred: its :func:`split_family`;
    :data:`autodev._threads.UNSPLIT` for a NumPy ufunc that neither threads nor fusion
    take (one with a signature, ``matmul``, or several outputs, ``divmod``); None for
    anything else (the least floor of all)."""
    family = split_family(func)
    if family is None and isinstance(func, np.ufunc) and (func.nout != 1 or func.signature):
        return UNSPLIT
    return family


def split_family(func: Any) -> str | None:
    """The family whose thread floor splits calls of ``func``, a NumPy elementwise ufunc of
    one output (:class:`ThreadedUfunc`); None for anything else."""
    if isinstance(func, np.ufunc) and func.nout == 1 and func.signature is None:
        family = family_of_ufunc(func.__name__)
        if family in _SPLIT_FAMILIES:
            return family
    return None


def _parameters(function: Any) -> tuple[str, ...]:
    """The names of ``function``'s parameters (none where it has no signature)."""
    try:
        return tuple(inspect.signature(function).parameters)
    except (TypeError, ValueError):
        return ()
