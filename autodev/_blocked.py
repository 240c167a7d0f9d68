"""The blocked pass that evaluates deferred chains on the host (:mod:`autodev._fusion`
records them): each result shape's calls run block by block, in the program's order, as
NumPy's own ufunc loops into scratch buffers that stay in the cache, the last into the
result; blocks run on the thread pool; floating-point errors are gathered per call and
warned once, as the eager calls would have."""

from __future__ import annotations

import math
import sys
import threading
import weakref
from typing import Any, Callable

import numpy as np

from . import _parallel, _threads
from ._cost.profile import FUSION_BLOCKS
from ._host_buffers import large_buffers
from ._names import TRANSCENDENTAL
from ._pairwise import PAIRWISE_BLOCK, pairwise_runs, pairwise_total
from ._trace import warn_user

#: Elements of one block of a pass on one thread where no profile says otherwise: a few
#: temporaries of this size stay in a core's cache.
DEFAULT_BLOCK = 16384
#: Elements of one block of a pass split over threads where no profile says otherwise:
#: each block's Python time holds the GIL, so that threads queue on it when blocks are
#: small (on two cores, a chain of 16K-element blocks ran no faster on two threads than on
#: one; of 64K-element blocks, 1.7x faster).
DEFAULT_THREADED_BLOCK = 65536
#: The block sizes a profile may hold (``fusion.block`` and ``fusion.threaded_block``,
#: measured by ``autodev calibrate``).
BLOCKS = FUSION_BLOCKS
#: Elements of one block now, of a pass on one thread and of a pass split over threads
#: (:func:`set_block`).
BLOCK = DEFAULT_BLOCK
THREADED_BLOCK = DEFAULT_THREADED_BLOCK


def set_block(elements: int, threaded: int | None = None) -> None:
    """Run chains on one thread in blocks of ``elements``, and split over threads in blocks
    of ``threaded`` (the default's if None); each one of :data:`BLOCKS`. Any size gives the
    same results, bit for bit: each block runs NumPy's loops over its elements, and a
    chain's sum is cut along NumPy's own summation tree whatever its runs' length."""
    global BLOCK, THREADED_BLOCK
    threaded = DEFAULT_THREADED_BLOCK if threaded is None else threaded
    for size in (elements, threaded):
        if size not in BLOCKS:
            raise ValueError(f"a block is one of {BLOCKS} elements, not {size!r}")
    BLOCK, THREADED_BLOCK = elements, threaded


#: How many threads ran the last chain (its trace record says).
LAST_THREADS = [1]


def row_major(a: np.ndarray) -> bool:
    """True if NumPy's ``order="K"`` result of ``a`` is C-ordered (strides decreasing)."""
    last = None
    for n, s in zip(a.shape, a.strides):
        if n == 1:
            continue
        if s <= 0 or (last is not None and s > last):
            return False
        last = s
    return True


class Node:
    """One recorded ufunc call: operands (nodes, native arrays, scalars), result dtype and
    shape, the errstate at the call, and a weak reference to its array while alive."""

    __slots__ = ("ufunc", "args", "dtype", "shape", "state", "ref", "index", "where", "target",
                 "gpu", "late", "shown")

    def __init__(self, ufunc: np.ufunc, args: tuple[Any, ...], dtype: np.dtype,
                 shape: tuple[int, ...], state: Any) -> None:
        self.ufunc, self.args, self.dtype, self.shape, self.state = ufunc, args, dtype, shape, state
        self.ref: weakref.ref[Any] | None = None
        self.index = 0
        #: True, or the mask (a node or a native array) of a call given ``where=``
        self.where: Any = True
        #: The native array the call writes into (``out=``, an in-place operator), or None
        self.target: np.ndarray | None = None
        #: True if the chain may run on a GPU with this call in it (see :class:`Placer`)
        self.gpu = False
        #: Rows (of the first axis) around a block's own that the chain reads of the
        #: target's memory, where it reads it through other views (:class:`_Late`):
        #: each block is then written one block late; 0: written as it is made
        self.late = 0
        #: The ``warnings`` state at the call (:func:`_trace.warnings_at_call`), under
        #: which its floating-point warnings are given when the chain runs
        self.shown: Any = None



class Total:
    """A request to sum one node's values as the chain runs (``numpy.sum`` of a pending
    float32 or float64 result, summed as the flat run of its elements, as NumPy sums a
    C-contiguous array over all its axes): the blocks follow NumPy's pairwise
    summation, whose tree splits a run of ``n`` elements at ``n // 2`` rounded down to a
    multiple of 8 (and adds the two halves' sums). Down to runs of at most twice the
    pass's block (:func:`sum_run`), each run is one block, summed by ``numpy.add.reduce`` (the
    same pairwise sum of that run) while it is in the cache, and the partial sums are added
    up the same tree: NumPy's sum, bit for bit."""

    __slots__ = ("node", "value", "errors")

    def __init__(self, node: Node, errors: Any) -> None:
        self.node = node
        self.value: Any = None
        #: records the floating-point errors of the summation (:class:`_parallel._Errors`)
        self.errors = errors


def sum_run(block: int) -> int:
    """The longest run of a chain's summation that is one block, in a pass of ``block``
    elements: about as many blocks as ``block`` makes, since the runs are from half as long
    to this. At least 128, NumPy's pairwise block: a shorter run would be split where NumPy
    sums it whole."""
    return max(PAIRWISE_BLOCK, 2 * block)


def flat_group(group: list[Node]) -> bool:
    """True if every operand, mask and target of ``group`` (calls of one result shape) is
    a call of the group, a scalar, or a C-contiguous array of that shape: the group may then
    run as one flat run of its elements (a sum of an N-dimensional result, which NumPy sums
    as the flat run of its elements, needs it)."""
    for node in group:
        for a in (node.where, *node.args, node.target):
            if type(a) is np.ndarray and not (a.shape == node.shape and a.flags.c_contiguous):
                return False
    return True


def evaluate(nodes: list[Node], alive: dict[int, Any], found: list[tuple[Node, int]],
             total: Total | None = None) -> dict[int, np.ndarray]:
    """Run ``nodes`` block by block (one pass per result shape); the arrays of the nodes
    whose array is alive, by ``id(node)``; each node's floating-point errors go to
    ``found``; ``total``, if given, receives its node's sum."""
    results: dict[int, np.ndarray] = {}
    by_shape: dict[tuple[int, ...], list[Node]] = {}
    for node in nodes:
        by_shape.setdefault(node.shape, []).append(node)
    for shape, group in by_shape.items():
        for i, node in enumerate(group):
            node.index = i
        with large_buffers():  # the results' memory reused from the host pool
            outs = {i: np.empty(shape, node.dtype) if node.target is None else node.target
                    for i, node in enumerate(group)
                    if id(node) in alive or node.target is not None}
        summed = total if total is not None and total.node in group else None
        flags = _run_group(group, shape, outs, summed)
        found.extend(zip(group, flags))
        for i, out in outs.items():
            results[id(group[i])] = out
    return results


def _plan(group: list[Node], outs: dict[int, np.ndarray]) -> tuple[list[Any], list[np.dtype]]:
    """Each node's scratch slot (or None: its result array), reusing a slot once its last
    reader has run, or, as NumPy's temporary elision does, while its last reader runs: a
    call without a mask writes in place into an operand of its dtype that nothing reads
    after it (elementwise, exact overlap: NumPy's loops give the same bits); and the dtype
    of each slot."""
    last = list(range(len(group)))
    for i, node in enumerate(group):
        for a in (*node.args, node.where):
            if type(a) is Node:
                last[a.index] = i
    slots: list[Any] = []
    slot_dtypes: list[np.dtype] = []
    free: dict[np.dtype, list[int]] = {}
    ending: dict[int, list[int]] = {}
    for i, node in enumerate(group):
        if i in outs:
            slots.append(None)
        else:
            slot = None
            # (an operand's slot, its last reader this call; a masked call, which leaves
            # the elements it skips as they were, has a target today, never scratch)
            if node.where is True:
                for a in node.args:
                    if type(a) is Node and last[a.index] == i and a.dtype == node.dtype \
                            and slots[a.index] is not None:
                        slot = slots[a.index]
                        ending[i].remove(a.index)
                        break
            if slot is None:
                spare = free.get(node.dtype)
                if spare:
                    slot = spare.pop()
                else:
                    slot = len(slot_dtypes)
                    slot_dtypes.append(node.dtype)
            slots.append(slot)
            ending.setdefault(last[i], []).append(i)
        for j in ending.pop(i, ()):  # (freed after node i ran: it may read them)
            free.setdefault(group[j].dtype, []).append(slots[j])
    return slots, slot_dtypes


def _run_group(group: list[Node], shape: tuple[int, ...], outs: dict[int, np.ndarray],
               total: Total | None = None) -> list[int]:
    """Run ``group`` over blocks of rows of ``shape``, threaded; each node's error flags.
    With ``total`` (a one-dimensional group), the blocks are the runs of NumPy's pairwise
    summation, and the node's sum is made as they run; an N-dimensional group (see
    :func:`flat_group`) then runs as the flat run of its elements."""
    flat = total is not None and len(shape) > 1
    if flat:  # (the results stay N-dimensional: these are views of them)
        shape = (math.prod(shape),)
        outs = {i: out.reshape(-1) for i, out in outs.items()}
    late = next((i for i, node in enumerate(group) if node.late), -1)
    target = outs[late] if late >= 0 else None
    # (a late call's blocks go to buffers of their own, then into its target)
    slots, slot_dtypes = _plan(group, {i: out for i, out in outs.items() if i != late})
    rows = shape[0]
    inner = math.prod(shape[1:])
    size = rows * inner
    # (a chain's work is its calls' work: elements times calls, of each family)
    costly = sum(node.ufunc.__name__ in TRANSCENDENTAL for node in group)
    threads = max(_threads.threads_for(size * (len(group) - costly), "elementwise"),
                  _threads.threads_for(size * costly, "transcendental") if costly else 1)
    cuts = [[_cut(a.reshape(-1) if flat and type(a) is np.ndarray else a, len(shape))
             for a in (node.where, *node.args)] for node in group]
    # (with a total, its summation's errors are flagged after the nodes')
    flags = [0] * (len(group) + (total is not None))
    partial: dict[int, Any] = {}
    summed = -1 if total is None else group.index(total.node)

    def blocking(block: int) -> tuple[int, int, list[tuple[int, int]]]:
        """Rows per block of ``block`` elements (with a total, its summation's longest
        run), how many blocks, and the summation's runs."""
        if total is None:  # (a late write needs blocks of at least its reach)
            rows_per = max(1, block // max(1, inner), group[late].late if late >= 0 else 1)
            return rows_per, -(-rows // rows_per), []
        leaves: list[tuple[int, int]] = []
        pairwise_runs(0, rows, sum_run(block), leaves)
        return sum_run(block), len(leaves), leaves

    # a pass split over threads runs in their larger blocks where these make two or more
    step, count, runs = blocking(THREADED_BLOCK if threads > 1 else BLOCK)
    if threads > 1 and count < 2:
        step, count, runs = blocking(BLOCK)
        threads = 1
    parts = max(1, min(threads, count))
    if total is None:
        runs = _parallel._bounds(rows, parts) if parts > 1 else [(0, rows)]

    held: list[tuple[int, int, np.ndarray]] = []  # (late blocks written after every thread)
    writing = None if target is None else (slots[late], target, held)

    def task(share: list[tuple[int, int]]) -> Callable[[], None]:
        return lambda: _run_rows(group, slots, slot_dtypes, cuts, outs, shape, step, share,
                                 flags, summed, partial, writing)

    if total is None:  # each thread's rows, in blocks of ``step`` rows
        shares = [[(b, min(b + step, hi)) for b in range(lo, hi, step)] for lo, hi in runs]
    else:  # each thread's runs of the summation, one block each
        per = -(-len(runs) // parts)
        shares = [runs[i:i + per] for i in range(0, len(runs), per)]
    blocks = [task(share) for share in shares]
    LAST_THREADS[0] = len(blocks)
    if len(blocks) == 1 or sys.is_finalizing():
        for block in blocks:
            block()
    else:
        _parallel.run_blocks(blocks, "fused chain")
    for start, stop, buffer in held:
        target[start:stop] = buffer[:stop - start]  # type: ignore[index]
    _give([buffer for _, _, buffer in held])
    if total is not None:
        total.errors.flags |= flags.pop()
        with np.errstate(call=total.errors.record, **total.errors.state):
            total.value = pairwise_total(0, rows, step, partial)
    return flags


#: How a block ``[lo, hi)`` reads an operand (:func:`_cut`): the block's value of a node
#: of its group, rows ``lo:hi`` of an array, or the operand whole.
_NODE, _ROWS, _WHOLE = 0, 1, 2


def _cut(a: Any, ndim: int) -> tuple[int, Any]:
    """How a block ``[lo, hi)`` of a result with ``ndim`` dimensions reads operand ``a``:
    ``(_NODE, its index in the group)``, ``(_ROWS, a)``, or ``(_WHOLE, a)`` for a scalar,
    the mask ``True``, or an array broadcast along the first axis."""
    if type(a) is Node:
        return _NODE, a.index
    if type(a) is np.ndarray and a.ndim == ndim and a.shape[0] != 1:
        return _ROWS, a
    return _WHOLE, a


def _run_rows(group: list[Node], slots: list[Any], slot_dtypes: list[np.dtype],
              cuts: list[list[tuple[int, Any]]], outs: dict[int, np.ndarray],
              shape: tuple[int, ...],
              step: int, bounds: list[tuple[int, int]], flags: list[int],
              summed: int = -1, partial: dict[int, Any] | None = None,
              writing: tuple[int, np.ndarray, list[Any]] | None = None) -> None:
    """Run ``group`` on the blocks ``bounds`` (rows ``[start, stop)``, at most ``step``),
    with scratch buffers of its own; the node at index ``summed``, if any, has each block's
    sum put in ``partial`` by the block's start; with ``writing``, the late call's blocks
    are written into its target one block late (see :class:`_Late`)."""
    scratch = [_take((step, *shape[1:]), d) for d in slot_dtypes]
    late = None if writing is None else _Late(scratch, *writing, len(bounds))
    try:
        _run_blocks(group, slots, cuts, outs, step, bounds, flags, summed, partial, scratch,
                    late)
    finally:
        _give(scratch if late is None else scratch + late.spare)


class _Late:
    """Writes a late call's blocks into its target, which the chain also reads through
    other views of the same strides, at most ``Node.late`` rows away from a block's own:
    those rows belong to the blocks just before and after it. Block ``k`` is written
    once block ``k + 1`` has been computed, so that every block reading its rows has read
    them; a thread's first block and last two (the next thread's first block may read
    into both where the last is short) are held, and written once every thread has ended
    (:func:`_run_group`). Each block is made in a buffer of its own: the late call's
    scratch slot gets a fresh one after every block."""

    __slots__ = ("scratch", "slot", "target", "held", "count", "queued", "spare")

    def __init__(self, scratch: list[np.ndarray], slot: int, target: np.ndarray,
                 held: list[Any], count: int) -> None:
        self.scratch, self.slot, self.target, self.held = scratch, slot, target, held
        self.count = count
        self.queued: tuple[int, int, np.ndarray] | None = None
        self.spare: list[np.ndarray] = []

    def made(self, k: int, start: int, stop: int) -> None:
        """Block ``k`` (rows ``[start, stop)``) has been computed in the slot's buffer."""
        if self.queued is not None:  # (first: its buffer makes the next block)
            begin, end, ready = self.queued
            self.target[begin:end] = ready[:end - begin]
            self.spare.append(ready)
            self.queued = None
        scratch, slot = self.scratch, self.slot
        buffer = scratch[slot]
        scratch[slot] = self.spare.pop() if self.spare else _take(buffer.shape, buffer.dtype)
        if k == 0 or k >= self.count - 2:
            self.held.append((start, stop, buffer))
        else:
            self.queued = (start, stop, buffer)


#: Scratch buffers kept between passes, by shape and dtype (:func:`_take`): a fresh one
#: of a few hundred KiB is mapped anew by the C library each time, and its first touch
#: of every page faults (on the 2-vCPU VM, two 2 MiB buffers cost 0.78 ms so, more than
#: the pass's arithmetic).
_SPARE: dict[tuple[tuple[int, ...], np.dtype], list[np.ndarray]] = {}
_SPARE_LOCK = threading.Lock()
#: The most bytes of buffers kept, all shapes together (the oldest shapes' go first; a
#: pass on 16 threads with three scratch slots of 16K float64 holds 6 MiB).
SPARE_LIMIT = 1 << 26


def _take(shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """A scratch buffer: a kept one of ``shape`` and ``dtype``, else a new one."""
    with _SPARE_LOCK:
        kept = _SPARE.get((shape, dtype))
        if kept:
            return kept.pop()
    return np.empty(shape, dtype)


def _give(buffers: list[np.ndarray]) -> None:
    """Keep ``buffers`` for the next pass (at most :data:`SPARE_LIMIT` bytes in all)."""
    with _SPARE_LOCK:
        for buffer in buffers:
            _SPARE.setdefault((buffer.shape, buffer.dtype), []).append(buffer)
        while _kept_bytes() > SPARE_LIMIT:
            _SPARE.pop(next(iter(_SPARE)))


def release_spare() -> int:
    """Drop the kept scratch buffers (memory pressure); return their bytes."""
    with _SPARE_LOCK:
        freed = _kept_bytes()
        _SPARE.clear()
    return freed


def _kept_bytes() -> int:
    """The bytes of the scratch buffers kept (the caller holds :data:`_SPARE_LOCK`)."""
    return sum(b.nbytes for kept in _SPARE.values() for b in kept)


def _run_blocks(group: list[Node], slots: list[Any], cuts: list[list[tuple[int, Any]]],
                outs: dict[int, np.ndarray], step: int, bounds: list[tuple[int, int]],
                flags: list[int], summed: int, partial: dict[int, Any] | None,
                scratch: list[np.ndarray], late: _Late | None = None) -> None:
    """The loop of :func:`_run_rows` over its blocks, into ``scratch``."""
    current = [0]

    def seen(kind: str, flag: int) -> None:
        flags[current[0]] |= flag

    # (per node: its ufunc, its result array or scratch slot, how it reads its mask and
    # its operands; the loop below reads them inline: it runs once per node and block)
    plans: list[tuple[Any, Any, Any, tuple[int, Any], list[tuple[int, Any]]]] = \
        [(node.ufunc, outs.get(i), slots[i], cuts[i][0], cuts[i][1:])
         for i, node in enumerate(group)]
    with np.errstate(all="call", call=seen):
        values: list[Any] = [None] * len(group)
        for number, (start, stop) in enumerate(bounds):
            n = stop - start
            for i, (ufunc, result, slot, (mk, m), operands) in enumerate(plans):
                out = result[start:stop] if slot is None else \
                    (scratch[slot] if n == step else scratch[slot][:n])
                ins = [values[a] if k == _NODE else (a[start:stop] if k == _ROWS else a)
                       for k, a in operands] if len(operands) != 2 else None
                if ins is None:  # (two operands, the commonest: read without a list)
                    (k, a), (k2, a2) = operands
                    x = values[a] if k == _NODE else (a[start:stop] if k == _ROWS else a)
                    y = values[a2] if k2 == _NODE else (a2[start:stop] if k2 == _ROWS else a2)
                current[0] = i
                if m is True:
                    if ins is None:
                        ufunc(x, y, out=out)
                    else:
                        ufunc(*ins, out=out)
                else:
                    mask = values[m] if mk == _NODE else (m[start:stop] if mk == _ROWS else m)
                    if ins is None:
                        ufunc(x, y, out=out, where=mask)
                    else:
                        ufunc(*ins, out=out, where=mask)
                values[i] = out
                if i == summed:  # (while its block is in the cache, before its slot is reused)
                    current[0] = len(group)
                    partial[start] = np.add.reduce(out)  # type: ignore[index]
            if late is not None:
                late.made(number, start, stop)


def report(flags: list[tuple[Node, int]]) -> None:
    """Warn once per node and category, as each eager call would have."""
    for node, found in flags:
        if not found:
            continue
        for bit, key, text in _parallel._FP_ERRORS:
            if found & bit and node.state[key] == "warn":
                warn_user(f"{text} encountered in {node.ufunc.__name__}", RuntimeWarning,
                          node.shown)
