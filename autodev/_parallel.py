"""The CPU as a parallel device: NumPy's own loops over disjoint blocks on a thread pool.

A large elementwise ufunc call is split along one axis of its result into blocks, and
each block runs as ``ufunc(*block_operands, out=block_of_result)`` on a thread of the
pool (the caller runs the first block itself). NumPy releases the GIL inside its loops,
so the blocks run at once, and every element is computed by the same loop on the same
operand dtypes as in one call: the result is bit for bit NumPy's. A reduction is split
along an axis it does not reduce: each output element is then reduced by the same loop
over the same elements in the same order. A reduction over every axis is split where the
split cannot change a bit (:func:`total_call`): an integer sum or product (exact in
any order), and a float32 or float64 sum of a C-contiguous array, cut
along the tree of NumPy's own pairwise summation (not elsewhere: a sum split in two
anywhere else rounds differently).

When a call is split (:func:`autodev._threads.threads_for`): the caller is the process's
main thread (a call made on any other thread, a Dask worker's, a joblib or
``concurrent.futures`` pool's, runs single-threaded: that pool already uses the cores),
more than one thread is allowed (``AUTODEV_NUM_THREADS``, else ``OMP_NUM_THREADS``, else
the cores this process may run on, and ``threadpoolctl.threadpool_limits`` lowers it),
and the call's work is at least the family's calibrated crossover
(:func:`autodev._threads.floor`). Anything this module does not split
(object dtypes, overlapping ``out=``, ``errstate`` set to print or log, a subclass, a
gufunc) runs as NumPy's one call.

The caller's ``np.errstate`` (thread-local in NumPy) holds in every block: the blocks
record floating-point errors instead of reporting them, and the caller reports their
union once, after every block has finished, as NumPy's one call would (a warning, a
``FloatingPointError``, or the ``errcall`` callback).

This module owns the block splitting (:mod:`autodev._threads` owns the pool, the thread
count and the floors); a future fused chain reuses both (:func:`run_blocks` takes
any per-block function).
"""

from __future__ import annotations

import math
import threading
from typing import Any, Callable, Sequence

import numpy as np

from . import _threads
from ._threads import POOL, threads_for
from ._pairwise import (DTYPES as PAIRWISE_DTYPES, PAIRWISE_BLOCK, pairwise_runs,
                        pairwise_total)
from ._trace import STATS, warn_user

#: dtype kinds whose loops are elementwise C loops (no Python objects, no strings).
_KINDS = frozenset("biufc")
#: Floating-point error categories in the order NumPy reports them.
_FP_ERRORS = ((1, "divide", "divide by zero"), (2, "over", "overflow"),
              (4, "under", "underflow"), (8, "invalid", "invalid value"))
_UFUNC_KEYWORDS = frozenset({"out", "where", "dtype", "casting", "order", "subok",
                             "signature"})
_SCALARS = (int, float, complex, bool, np.generic)


# --------------------------------------------------------------------------- running blocks

class _Errors:
    """Floating-point errors the blocks of one call met (bits as NumPy's ``errcall``
    receives them), to be reported once by the caller."""

    __slots__ = ("flags", "state")

    def __init__(self, state: Any) -> None:
        self.flags = 0
        # categories the caller does not ignore are recorded, the others ignored
        self.state: dict[str, Any] = {k: "ignore" if v == "ignore" else "call"
                                      for k, v in state.items()}

    def record(self, kind: str, flags: int) -> None:
        self.flags |= flags  # (an int or: atomic enough under the GIL; each bit is set once)

    def report(self, state: Any, name: str) -> None:
        """Report the recorded errors as NumPy's one call of ``name`` would."""
        for bit, key, text in _FP_ERRORS:
            if not self.flags & bit:
                continue
            mode = state[key]
            message = f"{text} encountered in {name}"
            if mode == "warn":
                warn_user(message, RuntimeWarning)
            elif mode == "raise":
                raise FloatingPointError(message)
            elif mode == "call":
                callback: Any = np.geterrcall()
                callback(text, self.flags)


def run_blocks(blocks: Sequence[Callable[[], Any]], name: str,
               then: Callable[[], Any] | None = None) -> None:
    """Run ``blocks`` (functions calling NumPy) at once, the first on this thread, under
    the caller's ``errstate``; then raise the first block's exception, if any, run
    ``then`` (if given; under the same ``errstate``), and report floating-point errors
    once, as one NumPy call named ``name`` would."""
    state = np.geterr()
    errors = _Errors(state)

    def guarded(block: Callable[[], Any]) -> Callable[[], Any]:
        def run() -> Any:
            with np.errstate(call=errors.record, **errors.state):
                return block()
        return run

    futures = [POOL.submit(len(blocks) - 1, guarded(b)) for b in blocks[1:]]
    first: BaseException | None = None
    try:
        guarded(blocks[0])()
    except BaseException as err:  # re-raised below, once every block has finished
        first = err
    for future in futures:
        failed = future.exception()
        if failed is not None and first is None:
            first = failed
    if first is not None:
        raise first
    if then is not None:
        guarded(then)()
    STATS.threaded_calls += 1
    STATS.threaded_blocks += len(blocks)
    errors.report(state, name)


#: Threads the last split call on this thread ran on (the dispatcher's trace reads it).
LAST = threading.local()


def _reportable() -> bool:
    """True if the caller's errstate can be replayed (no print or log mode)."""
    for mode in np.geterr().values():
        if mode == "print" or mode == "log":
            return False
    return True


def _split_axis(shape: tuple[int, ...], strides: tuple[int, ...], skip: frozenset[int],
                pieces: int) -> int | None:
    """The axis to split: the outermost in memory (largest stride) of those not in
    ``skip`` long enough for two blocks of two or more; None if there is none."""
    order = sorted((i for i in range(len(shape)) if i not in skip and shape[i] >= 4),
                   key=lambda i: -abs(strides[i]))
    return order[0] if order and pieces >= 2 else None


def _bounds(length: int, pieces: int) -> list[tuple[int, int]]:
    """``pieces`` ranges covering ``range(length)``, each at least two long."""
    pieces = max(1, min(pieces, length // 2))
    step, extra = divmod(length, pieces)
    bounds, start = [], 0
    for i in range(pieces):
        stop = start + step + (i < extra)
        bounds.append((start, stop))
        start = stop
    return bounds


def _slicer(x: Any, ndim: int, axis: int) -> Callable[[int, int], Any]:
    """How to cut operand ``x`` for a block ``[lo, hi)`` of axis ``axis`` of a result
    with ``ndim`` dimensions (broadcast axes and scalars are passed whole)."""
    if type(x) is not np.ndarray:
        return lambda lo, hi: x
    j = axis - (ndim - x.ndim)
    if j < 0 or x.shape[j] == 1:
        return lambda lo, hi: x
    head = (slice(None),) * j
    return lambda lo, hi: x[head + (slice(lo, hi),)]


# --------------------------------------------------------------------------- ufunc calls

#: Returned by the functions below for a call they do not split (run it as one call).
DECLINED: Any = object()


def _plain_operand(x: Any) -> bool:
    if type(x) is np.ndarray:
        return x.dtype.kind in _KINDS
    return isinstance(x, _SCALARS) and np.asarray(x).dtype.kind in _KINDS


#: Ufuncs whose every real loop rounds as IEEE 754 says (one correctly rounded operation,
#: or none): their contiguous SIMD loop and their strided loop give the same bits (not so
#: for complex operands: a complex product's SIMD loop may fuse its multiply-adds).
EXACT_UFUNCS = frozenset({
    np.add, np.subtract, np.multiply, np.divide, np.negative, np.positive, np.absolute,
    np.sqrt, np.square, np.maximum, np.minimum, np.fmax, np.fmin, np.equal, np.not_equal,
    np.less, np.less_equal, np.greater, np.greater_equal, np.logical_and, np.logical_or,
    np.logical_xor, np.logical_not, np.floor, np.ceil, np.trunc, np.rint, np.copysign,
    np.sign, np.conjugate, np.isnan, np.isinf, np.isfinite, np.signbit})


def _same_loops(ufunc: np.ufunc, arrays: Sequence[Any]) -> bool:
    """Whether blocks run the loop NumPy's one call runs, or one with the same bits: not
    so with a negative stride, which NumPy's one call reverses for every operand (its
    contiguous SIMD loop) and a block writing into a cut of the result cannot; arctan2
    and power differ by an ulp between the two loops (seen with AVX-512)."""
    arrays = [x for x in arrays if type(x) is np.ndarray]
    if ufunc in EXACT_UFUNCS and not any(x.dtype.kind == "c" for x in arrays):
        return True
    return all(x.dtype.kind in "biu" or min(x.strides, default=0) >= 0 for x in arrays)


def _zero_size(x: Any) -> Any:
    """A stand-in of ``x`` with no elements (the probe that resolves a call's dtype and
    raises its type errors before any thread starts)."""
    return np.empty(0, x.dtype) if type(x) is np.ndarray else x


def ufunc_call(ufunc: np.ufunc, family: str, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> Any:
    """``ufunc(*args, **kwargs)`` split over threads, or :data:`DECLINED`."""
    nin = ufunc.nin
    if ufunc.nout != 1 or ufunc.signature is not None or len(args) > nin + 1 \
            or len(args) < nin or not _UFUNC_KEYWORDS.issuperset(kwargs):
        return DECLINED
    ops = args[:nin]
    out = args[nin] if len(args) > nin else kwargs.get("out")
    if type(out) is tuple:
        if len(out) != 1:
            return DECLINED
        out = out[0]
    where = kwargs.get("where", True)
    for x in ops:
        if not _plain_operand(x):
            return DECLINED
    if (out is not None and (type(out) is not np.ndarray or out.dtype.kind not in _KINDS)) \
            or (where is not True and type(where) is not np.ndarray) \
            or not _same_loops(ufunc, (*ops, out)):
        return DECLINED
    found = _broadcast_threads((*ops, where), family, out)
    if found is None:
        return DECLINED
    return _split_ufunc(ufunc, ops, out, where, kwargs, *found)


def _broadcast_threads(operands: tuple[Any, ...], family: str, out: Any = None
                       ) -> tuple[tuple[int, ...], int, int] | None:
    """The shape of the arrays among ``operands`` broadcast together (``out``'s, where
    given: it must hold that shape), its elements and the threads a call of ``family``
    making it runs on; None where NumPy's one call runs instead: one thread, an errstate
    that cannot be replayed, or shapes NumPy's own call refuses (it raises its own error,
    before any write)."""
    try:
        shape = np.broadcast_shapes(*(x.shape for x in operands if type(x) is np.ndarray))
        if out is not None:
            if np.broadcast_shapes(shape, out.shape) != out.shape:
                return None
            shape = out.shape
    except ValueError:
        return None
    work = math.prod(shape)
    threads = threads_for(work, family)
    if threads < 2 or not _reportable():
        return None
    return shape, work, threads


#: The family whose thread floor a selection splits from. NumPy's ``where`` loop branches
#: on each element: with a condition of no pattern it costs 3.5 ns a float64 on the 2-vCPU
#: VM, with the same condition sorted 0.4 ns. Split in two blocks (each two passes, a fill
#: and a masked copy), a random condition took 0.65-0.71x NumPy's time at 3e5, 1e6 and 4e6
#: elements, a sorted one 0.75-0.85x at 1e6 and 4e6 but 1.34x at 3e5: so from the
#: elementwise floor, not the transcendental one.
WHERE_FAMILY = "elementwise"


def where_call(condition: Any, x: Any, y: Any) -> Any:
    """``numpy.where(condition, x, y)`` of a boolean array split over threads, or
    :data:`DECLINED`: each block fills its part of the result with ``y`` and copies ``x``
    where the condition holds (NumPy's values, bit for bit: a selection; each cast to the
    result's dtype, and the result's layout, as NumPy's call makes them)."""
    if type(condition) is not np.ndarray or condition.dtype != np.bool_ \
            or not _plain_operand(x) or not _plain_operand(y):
        return DECLINED
    operands = (condition, x, y)
    found = _broadcast_threads(operands, WHERE_FAMILY)
    if found is None:
        return DECLINED
    shape, work, threads = found
    dtype = np.where(*(_zero_size(a) for a in operands)).dtype  # (NumPy's errors, here)
    out = _allocate(operands, True, dtype, "K", shape)
    axis = _split_axis(out.shape, out.strides, frozenset(), threads)
    if axis is None:
        return DECLINED
    # (a Python scalar as where reads it: an array of its own dtype, cast as an array is,
    # so that 300 into int8 wraps as NumPy's where wraps it)
    cuts = [_slicer(a if type(a) is np.ndarray else np.asarray(a), out.ndim, axis)
            for a in operands]
    cut_out = _slicer(out, out.ndim, axis)

    def block(lo: int, hi: int) -> Callable[[], None]:
        (c, a, b), target = (cut(lo, hi) for cut in cuts), cut_out(lo, hi)

        def select() -> None:  # (each value cast to the result's dtype as where casts it)
            np.copyto(target, b, casting="unsafe")
            np.copyto(target, a, casting="unsafe", where=c)
        return select

    blocks = [block(lo, hi)
              for lo, hi in _bounds(out.shape[axis], min(threads, work // _threads.MIN_BLOCK))]
    if len(blocks) < 2:
        return DECLINED
    run_blocks(blocks, "where")
    LAST.threads = len(blocks)
    return out


def masked_fill(target: np.ndarray, mask: Any, value: Any) -> bool:
    """``target[mask] = value`` of a boolean mask of the target's shape and a scalar value
    (a Python or NumPy scalar of a numeric dtype: no array, whose values NumPy would take
    one by one), split over threads (each block copies the value where its part of the mask
    holds: NumPy's bits), from the floor :func:`where_call` splits from; False where it is
    not split (the caller makes NumPy's own assignment)."""
    if type(mask) is not np.ndarray or mask.dtype != np.bool_ or mask.shape != target.shape \
            or target.dtype.kind not in _KINDS or not target.flags.writeable \
            or type(value) is np.ndarray or not _plain_operand(value):
        return False
    threads = threads_for(target.size, WHERE_FAMILY)
    if threads < 2 or not _reportable() or np.may_share_memory(mask, target):
        return False
    axis = _split_axis(target.shape, target.strides, frozenset(), threads)
    if axis is None:
        return False
    one = np.empty(1, target.dtype)
    one[np.ones(1, np.bool_)] = value  # (NumPy's conversion: its errors and warnings, here)
    fill = one.reshape(())
    cut_mask, cut_target = _slicer(mask, target.ndim, axis), _slicer(target, target.ndim, axis)

    def block(lo: int, hi: int) -> Callable[[], None]:
        part, where = cut_target(lo, hi), cut_mask(lo, hi)
        return lambda: np.copyto(part, fill, casting="no", where=where)

    pieces = min(threads, target.size // _threads.MIN_BLOCK)
    blocks = [block(lo, hi) for lo, hi in _bounds(target.shape[axis], pieces)]
    if len(blocks) < 2:
        return False
    run_blocks(blocks, "__setitem__")
    return True


def _overlaps(x: Any, out: np.ndarray) -> bool:
    """True if operand ``x`` shares memory with ``out`` other than element for element
    (same start, strides and shape: an in-place call); NumPy then copies, so no split."""
    if type(x) is not np.ndarray or not np.may_share_memory(x, out):
        return False
    same = (x.__array_interface__["data"][0] == out.__array_interface__["data"][0]
            and x.shape == out.shape and x.strides == out.strides
            and x.dtype.itemsize == out.dtype.itemsize)
    return not same


def _split_ufunc(ufunc: np.ufunc, ops: tuple[Any, ...], out: np.ndarray | None, where: Any,
                 kwargs: dict[str, Any], shape: tuple[int, ...], work: int, threads: int
                 ) -> Any:
    extra = {k: v for k, v in kwargs.items() if k in ("dtype", "casting", "signature")}
    probe_out = None if out is None else np.empty(0, out.dtype)
    probe_where = where if where is True else _zero_size(where)
    probe = ufunc(*(_zero_size(x) for x in ops), out=probe_out, where=probe_where,
                  **extra)  # NumPy's type errors, raised here, before any block
    if out is None:
        out = _allocate(ops, where, probe.dtype, kwargs.get("order", "K"), shape)
    elif any(_overlaps(x, out) for x in (*ops, where)) or _broadcast_out(ops, where, out):
        return DECLINED
    axis = _split_axis(out.shape, out.strides, frozenset(), threads)
    if axis is None:
        return DECLINED
    pieces = min(threads, work // _threads.MIN_BLOCK)
    cuts = [_slicer(x, out.ndim, axis) for x in ops]
    cut_where = _slicer(where, out.ndim, axis)
    cut_out = _slicer(out, out.ndim, axis)
    blocks = [_ufunc_block(ufunc, [c(lo, hi) for c in cuts], cut_out(lo, hi),
                           cut_where(lo, hi), extra)
              for lo, hi in _bounds(out.shape[axis], pieces)]
    if len(blocks) < 2:
        return DECLINED
    run_blocks(blocks, ufunc.__name__)
    LAST.threads = len(blocks)
    return out


def _ufunc_block(ufunc: np.ufunc, ops: list[Any], out: np.ndarray, where: Any,
                 extra: dict[str, Any]) -> Callable[[], Any]:
    if where is True:
        return lambda: ufunc(*ops, out=out, **extra)
    return lambda: ufunc(*ops, out=out, where=where, **extra)


def _broadcast_out(ops: tuple[Any, ...], where: Any, out: np.ndarray) -> bool:
    """True if an operand has more dimensions than ``out`` (NumPy raises: let it)."""
    return any(type(x) is np.ndarray and x.ndim > out.ndim for x in (*ops, where))


def _allocate(ops: tuple[Any, ...], where: Any, dtype: np.dtype, order: Any,
              shape: tuple[int, ...]) -> np.ndarray:
    """The result array NumPy's call would allocate: its dtype, and its memory order
    chosen by NumPy's own iterator from the operands (``order="K"``: theirs; the stride
    of an axis of length one may differ, which no layout or value depends on)."""
    arrays = [x for x in (*ops, where) if type(x) is np.ndarray]
    operands: list[Any] = [*arrays, None]
    flags: Any = [["readonly"]] * len(arrays) + [["writeonly", "allocate", "no_subtype"]]
    it = np.nditer(operands, flags=["zerosize_ok", "refs_ok"], op_flags=flags,
                   op_dtypes=[None] * len(arrays) + [dtype], order=order or "K",
                   itershape=shape)
    with it:
        return it.operands[-1]


# --------------------------------------------------------------------------- reductions

_NO_VALUE: Any = np._NoValue


def reduce_call(ufunc: np.ufunc, array: Any, axis: Any = 0, dtype: Any = None,
                out: Any = None, keepdims: bool = False, initial: Any = _NO_VALUE,
                where: Any = True) -> Any:
    """``ufunc.reduce(array, axis, ...)`` split along an axis it does not reduce, or over
    every axis as :func:`total_call` splits it, or :data:`DECLINED` (a cast, ...)."""
    if type(array) is not np.ndarray or array.dtype.kind not in _KINDS \
            or (where is not True and type(where) is not np.ndarray) \
            or (out is not None and type(out) is not np.ndarray):
        return DECLINED
    try:
        axes = frozenset(range(array.ndim)) if axis is None else \
            frozenset(np.lib.array_utils.normalize_axis_tuple(axis, array.ndim))
    except (TypeError, ValueError):
        return DECLINED  # NumPy's own call raises its own error
    if len(axes) == array.ndim:
        if out is not None or where is not True or initial is not _NO_VALUE:
            return DECLINED
        return total_call(ufunc, array, dtype, keepdims)
    if type(where) is np.ndarray and not _broadcasts_to(where.shape, array.shape):
        return DECLINED  # (a mask of another shape: NumPy's own call raises before writing)
    threads = threads_for(array.size, "reduction")
    if threads < 2 or not _reportable():
        return DECLINED
    keywords = {"dtype": dtype, "keepdims": keepdims}
    if initial is not _NO_VALUE:
        keywords["initial"] = initial
    with np.errstate(all="ignore"):  # one element, to learn the result's dtype
        probe = ufunc.reduce(array[(slice(0, 1),) * array.ndim], axis=tuple(sorted(axes)),
                             **keywords)
    if probe.dtype != array.dtype or not array.flags.aligned or not array.dtype.isnative:
        return DECLINED  # a cast would go through buffers, whose chunks a split changes
    return _split_reduce(ufunc, array, axes, out, where, keywords, threads)


#: Reductions exact in integers and booleans, split: any split of the elements gives the
#: same value (sums and products modulo the dtype's range). A maximum or minimum is exact
#: too, but NumPy's SIMD loop is about ten times cheaper than a sum, so that on the 2-vCPU
#: VM measured a split one cost up to 2.6x NumPy's time at the reduction floor, 1.1x at 25M.
_EXACT_REDUCE = frozenset({np.add, np.multiply})


def total_call(ufunc: np.ufunc, array: np.ndarray, dtype: Any = None,
               keepdims: bool = False) -> Any:
    """``ufunc.reduce(array, axis=None, dtype=dtype, keepdims=keepdims)`` split over
    threads, bit for bit NumPy's, or :data:`DECLINED`. Split: an integer or boolean
    array's sum or product into an integer or boolean (any split: exact);
    and a C-contiguous float32 or float64 array's sum in its own dtype, which NumPy makes
    as the pairwise summation of the one run of its elements: the runs of that summation's
    tree are summed on the threads (each by ``add.reduce``: the same pairwise sum of that
    run) and their sums added up the tree (:func:`pairwise_runs`)."""
    threads = threads_for(array.size // _threads.TOTAL_FLOORS, "reduction")
    if threads < 2 or not array.flags.c_contiguous or not array.flags.aligned \
            or not array.dtype.isnative or not _reportable():
        return DECLINED
    flat = array.reshape(-1)
    with np.errstate(all="ignore"):  # one element, to learn the result's dtype
        result_dtype = ufunc.reduce(flat[:1], dtype=dtype).dtype
    n = flat.size
    run = max(PAIRWISE_BLOCK, -(-n // threads))
    runs: list[tuple[int, int]] = []
    if array.dtype.kind in "biu" and result_dtype.kind in "biu" and ufunc in _EXACT_REDUCE:
        runs = _bounds(n, threads)
    elif ufunc is np.add and array.dtype in PAIRWISE_DTYPES and result_dtype == array.dtype:
        pairwise_runs(0, n, run, runs)
    else:
        return DECLINED
    if len(runs) < 2:
        return DECLINED  # (a float sum of at most twice NumPy's pairwise block)
    partial: dict[int, Any] = {}
    found: list[Any] = []

    def block(lo: int, hi: int) -> Callable[[], None]:
        def part() -> None:
            partial[lo] = ufunc.reduce(flat[lo:hi], dtype=result_dtype)
        return part

    def gather() -> None:  # (an integer's partials reduced as an array: no scalar overflow)
        found.append(pairwise_total(0, n, run, partial) if result_dtype.kind == "f" else
                     ufunc.reduce(np.array([partial[lo] for lo, _ in runs], result_dtype)))

    run_blocks([block(lo, hi) for lo, hi in runs], "reduce", gather)
    LAST.threads = min(threads, len(runs))
    value = found[0]
    return np.full((1,) * array.ndim, value, result_dtype) if keepdims else value


def _broadcasts_to(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


#: A reduction along an axis outer to the one it splits (``x.sum(axis=0)`` of a C-ordered
#: matrix: NumPy adds whole rows) is split only where each block's part of a row spans this
#: many bytes. On the 2-vCPU VM, a float64 sum split in two measured 0.66x NumPy's time with
#: parts of 500,000 elements, 0.7-1.1x with 25,000, 1.3x with 2,500, 2.6-5.6x with 25-250.
_INNER_RUN_BYTES = 1 << 19


def _split_reduce(ufunc: np.ufunc, array: np.ndarray, axes: frozenset[int], out: Any,
                  where: Any, keywords: dict[str, Any], threads: int) -> Any:
    kept = [i for i in range(array.ndim) if i not in axes]
    axis = _split_axis(array.shape, array.strides, axes, threads)
    if axis is None:
        return DECLINED
    keepdims = keywords["keepdims"]
    shape = tuple(1 if i in axes else n for i, n in enumerate(array.shape)) if keepdims \
        else tuple(array.shape[i] for i in kept)
    if out is None:  # NumPy's layout: the input's order over the kept axes
        out = np.empty_like(array[tuple(0 if i in axes else slice(None)
                                        for i in range(array.ndim))])
        if keepdims:
            out = np.expand_dims(out, tuple(sorted(axes)))
    elif out.shape != shape or out.dtype != array.dtype or np.may_share_memory(out, array) \
            or (type(where) is np.ndarray and np.may_share_memory(out, where)):
        return DECLINED
    out_axis = axis if keepdims else kept.index(axis)
    pieces = min(threads, array.size // _threads.MIN_BLOCK)
    if any(array.shape[i] > 1 and abs(array.strides[i]) > abs(array.strides[axis])
           for i in axes) and array.shape[axis] // max(pieces, 1) * abs(array.strides[axis]) \
            < _INNER_RUN_BYTES:
        return DECLINED  # (each block would reduce short runs of the rows NumPy adds up)
    head, out_head = (slice(None),) * axis, (slice(None),) * out_axis
    cut_where = _slicer(where, array.ndim, axis)
    axis_tuple = tuple(sorted(axes))
    blocks = [_reduce_block(ufunc, array[head + (slice(lo, hi),)], axis_tuple,
                            out[out_head + (slice(lo, hi),)], cut_where(lo, hi), keywords)
              for lo, hi in _bounds(array.shape[axis], pieces)]
    if len(blocks) < 2:
        return DECLINED
    run_blocks(blocks, "reduce")
    LAST.threads = len(blocks)
    return out


def _reduce_block(ufunc: np.ufunc, part: np.ndarray, axes: tuple[int, ...], out: np.ndarray,
                  where: Any, keywords: dict[str, Any]) -> Callable[[], Any]:
    if where is True:
        return lambda: ufunc.reduce(part, axis=axes, out=out, **keywords)
    return lambda: ufunc.reduce(part, axis=axes, out=out, where=where, **keywords)


def split_ufunc(ufunc: np.ufunc, ops: tuple[Any, ...], threads: int) -> Any:
    """``ufunc(*ops)`` split over ``threads`` whatever its size (calibration times it)."""
    shape = np.broadcast_shapes(*(np.shape(x) for x in ops))
    return _split_ufunc(ufunc, ops, None, True, {}, shape, math.prod(shape), threads)


def split_reduce(ufunc: np.ufunc, array: np.ndarray, axis: int, threads: int) -> Any:
    """``ufunc.reduce(array, axis)`` split over ``threads`` whatever its size."""
    return _split_reduce(ufunc, array, frozenset({axis % array.ndim}), None, True,
                         {"dtype": None, "keepdims": False}, threads)
