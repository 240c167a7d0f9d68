"""Deferred, fused elementwise chains on the host: NumPy's own loops, block by block.

A large elementwise ufunc call on host data (an operator or ``autodev.<ufunc>``, one or
two operands, no keywords) whose result has at least :func:`floor` elements is *recorded*
instead of run (with a GPU usable, only where the placer that :mod:`autodev._chains`
binds keeps it on the CPU; the placer may also run a chain on the GPU, when it is
priced cheaper there as a call joins it, see :class:`Placer`): its dtype and shape are found at the call, by running the
ufunc on empty stand-ins of its operands (so NumPy's own errors still raise there), and
the call returns an array whose value is *pending*. Calls on pending arrays are recorded
too, so that ``s * cdf1 - k * exp(-r * t) * cdf2`` becomes a chain of nodes. When
anything needs a value, every pending chain is evaluated in one pass
(:func:`flush`): the result is cut along its first axis into blocks of about
:data:`autodev._blocked.BLOCK` elements, and each block runs every node, in the program's order, as
NumPy's own ufunc loop into a small scratch buffer (``ufunc(*block_operands,
out=scratch)``), the last into the result. The temporaries stay in the cache; every
element is computed by the same loop on the same dtypes as the eager call, so the
values are NumPy's bit for bit. Blocks run on the thread pool of
:mod:`autodev._parallel` above its elementwise floor.

Where a pending value lives, and how every read forces it: a pending array's ``_native``
slot (the native array, read in many places and by the compiled hot path) is empty.
The compiled paths treat an empty slot as "not mine" and hand the call to Python; in
Python, reading an empty slot calls ``ndarray.__getattr__``, which evaluates every
pending chain (:func:`force`) and returns the value. So every read -- ``repr``,
``bool``, ``item``, ``__array__``, the buffer protocol, indexing, a non-elementwise
call, a write -- sees the value, and nothing else had to change to read it.

The inputs of a pending chain: an input array (a *leaf*) is accepted only if nothing
but its own wrapper can reach its memory: it owns its memory (no base), shares no
storage with a view (``_storage is None``: no view of it, and no buffer of it handed
out, was ever made), holds no mirror, and NumPy's reference count shows no other holder
of its native array. Its slot is emptied too (it is *locked*) until the chain is
evaluated, so any read of it, and so any write to it, first evaluates the chain.

An array sharing its memory with views (``u[1:-1, 1:-1]``, or ``u`` once a view of it was
made) cannot be locked: other arrays reach the memory, and not all of them are known.
It is a *watched* input instead when autodev sees every write to that memory: its
storage never escaped (no buffer of it was handed out, it wraps nothing a caller holds),
holds no mirror, and a NumPy array owning its memory is the root of the view. The chain
reads a view of its own of that memory (:func:`autodev._chain_inputs.watchable`), and the
storage is kept in :data:`WATCHED` while the chain is pending. Every write path of an autodev array
(setitem, in-place operators, ``out=``, ``copyto``, ``put``, ``fill``, ``sort``,
``resize``, flat writes, ...) and every hand-out of host memory (``__array__``, the
buffer protocol, ``ctypes``, DLPack) calls :func:`before_write` first, which evaluates the
chains while :data:`WATCHED` is not empty; the compiled ``setitem`` hands every write to
Python meanwhile. A chain never writes into watched memory (an ``out=`` there runs at
once, after the chains). Every write moves the storage's version: a version moved under
a pending chain is a write path that missed the call, reported as a RuntimeError when
the chain runs rather than read silently.

Memory autodev cannot watch (an array wrapping a NumPy array the caller still holds,
memory handed out through ``__array__``, ``ctypes`` or DLPack) is never an input: such a
call runs at once (after forcing its pending operands). Scalar operands are Python or
NumPy scalars, immutable.

Floating-point errors: a call is recorded only if the ``np.errstate`` in force at the
call ignores or warns for every category (``raise``, ``call``, ``print`` and ``log`` run
at once). Each node keeps that state; evaluation records the errors of each node over
all blocks and then warns once per node and category, in the program's order, with
NumPy's message, at the user's line that forced the value, under the ``warnings`` filters
and hooks in force at the call.

A sum or mean (``numpy.sum`` of a pending float32 or float64 array) is made as
its chain runs, as the chain's last step (:mod:`autodev._fused_sum`), bit for bit NumPy's
pairwise summation (:class:`autodev._blocked.Total`).

Bounds: at most :data:`MAX_NODES` pending calls, and leaves (and watched memory) of at
most :data:`MAX_LEAF_BYTES` held, before the chains are evaluated; a pending array that is
dropped unread is evaluated (for its warnings) once no pending array is left alive.
Calls are recorded on the main thread only; any thread's read evaluates them under one
lock.
"""

from __future__ import annotations

import math
import threading
import weakref
from typing import Any, Callable, Protocol

import numpy as np

from . import _blocked, _threads
from ._config import ENV
from ._blocked import LAST_THREADS, Node, Total, evaluate, report, row_major
from ._chain_inputs import late_reach, lockable, result_dtype, shape_of, watchable
from ._cost.model import PROFILE_WRITTEN
from ._device import CPU
from ._trace import ON_TRACE_EXIT, STATS, Record, emit, sinks, warnings_at_call

#: Pending calls at most, then they are evaluated.
MAX_NODES = 64
#: Bytes of input arrays pending chains may keep alive, then they are evaluated.
MAX_LEAF_BYTES = 1 << 30
#: The embedded default floor (elements of a call's result), until calibrated: where the
#: blocked pass of a chain of cheap calls (add, multiply) was measured to pay on the
#: machines measured (a 2-vCPU VM with 32 MiB of L3: 2^22; a 16-core H100 host: never).
#: Below it, the block overhead of such chains cost up to 2.6x their eager time.
DEFAULT_FLOOR = 1 << 22
NEVER = _threads.NEVER

_SCALARS = frozenset({int, float, complex, np.float64, np.float32, np.int64, np.int32,
                      np.complex128, np.complex64, np.bool_})
_QUIET = frozenset({"ignore", "warn"})
_MAIN = threading.main_thread()


_LOCK = threading.RLock()
#: Pending calls in the program's order.
NODES: list[Node] = []
#: id(array) -> its node, for pending arrays alive.
PENDING: dict[int, Node] = {}
#: id(array) -> (array, its native array), for locked input arrays.
LEAVES: dict[int, tuple[Any, np.ndarray]] = {}
_HELD = [0]  # bytes of LEAVES and of the memory WATCHED
#: id(storage) -> (storage, its write version when first read): the memory pending chains
#: read through arrays that share it with views (*watched* inputs). Non-empty only while
#: such a chain is pending; every write to an autodev array and every hand-out of host
#: memory first evaluates the chains then (:func:`before_write`).
WATCHED: dict[int, tuple[Any, int]] = {}
#: The arrays read through watched memory (weakly held): with the locked leaves, the
#: inputs a chain run on the CPU credits (the placer's ``credit``).
READ: dict[int, weakref.ref[Any]] = {}
#: Called with True when a chain starts reading watched memory, False when none does:
#: the compiled ``setitem`` then hands every write to Python (where the check is).
WATCH_LISTENERS: list[Callable[[bool], None]] = []
#: The trace blocks active when the pending calls were made (each gets the chain's record).
_SINKS: list[list[Record]] = []
_BUSY = [False]  # recording or evaluating (a dropped array then waits for the next flush)
#: Called with True when a chain becomes pending, False when none is left.
LISTENERS: list[Callable[[bool], None]] = []
_ACTIVE = [False]
_FLOOR: list[int] = []


class Placer(Protocol):
    """Where chains run while a GPU is usable: bound (:func:`bind_placer`) by
    :mod:`autodev._chains`, which sits above the backends and the cost model's users."""

    def admit(self, ufunc: np.ufunc, args: list[Any], dtype: np.dtype,
              shape: tuple[int, ...], movable: bool) -> bool | None:
        """None: the call runs at once (the dispatcher places it on a GPU); False: it is
        deferred and its chain runs on the CPU; True: deferred, and its chain may run on
        the GPU (``movable``: the call writes no host memory and takes no mask)."""

    def crosses(self, nodes: list[Node]) -> bool:
        """True if the chain of ``nodes`` is priced cheaper on the GPU (run it there now)."""

    def price(self, nodes: list[Node]) -> tuple[float, float, str]:
        """Predicted seconds of the chain on the CPU and on the GPU, and the GPU's name."""

    def run(self, nodes: list[Node], alive: dict[int, Any]
            ) -> tuple[dict[int, Any], list[tuple[str, int]], Any] | None:
        """Run the chain on the GPU: the natives of the alive nodes' arrays, the moves it
        made and the device; None where the GPU ran out of memory (the CPU runs it)."""

    def ran_as(self) -> str:
        """How the last chain :meth:`run` ran there (fused kernels, calls in order)."""

    def credit(self, nodes: list[Node], leaves: list[Any]) -> None:
        """Reuse credit for the chain ``nodes`` that ran on the CPU, to its input arrays
        ``leaves`` (:mod:`autodev._residency.reuse`)."""


#: The placer while a GPU is usable, else None (:func:`bind_placer`).
_PLACER: list[Placer | None] = [None]


def bind_placer(placer: Placer | None) -> None:
    """Make ``placer`` decide where chains run (None: no GPU is usable, the CPU runs them)."""
    _PLACER[0] = placer
_threads.FUSE_FLOOR[0] = DEFAULT_FLOOR if ENV.fuse else NEVER  # (the profile's: on first use)


# --------------------------------------------------------------------------- floor

def floor() -> int:
    """The least result size (elements) at which a call is deferred (:data:`NEVER` when
    ``AUTODEV_FUSE=0``): the profile's ``fusion`` section, else the embedded default; the
    section's block size is read with it."""
    if not _FLOOR:
        from ._cost.profile import resolve

        section = resolve().profile.get("fusion") or {}
        found = section.get("floor", DEFAULT_FLOOR) if ENV.fuse else None
        _FLOOR.append(NEVER if found is None else max(2, int(found)))
        _blocked.set_block(int(section.get("block") or _blocked.DEFAULT_BLOCK),
                           int(section.get("threaded_block") or _blocked.DEFAULT_THREADED_BLOCK))
        if _threads.FUSE_FLOOR[0] != _FLOOR[0]:
            _threads.set_fuse_floor(_FLOOR[0])
    return _FLOOR[0]


def set_floor(elements: int | None) -> None:
    """Defer calls of at least ``elements`` (None: the profile's floor again; tests and
    ``.ci/fuse-everything`` set a tiny one)."""
    flush()
    _FLOOR[:] = [] if elements is None else [elements]
    _threads.set_fuse_floor(floor())


def reset_profile() -> None:
    """Read the floor again (after ``autodev calibrate`` wrote a profile)."""
    set_floor(None)


def _set_active(active: bool) -> None:
    if _ACTIVE[0] is not active:
        _ACTIVE[0] = active
        for listener in LISTENERS:
            listener(active)


# --------------------------------------------------------------------------- recording

#: Returned by :func:`record` when it does not defer the call.
DECLINED: Any = object()
#: NumPy's own elementwise ufuncs, by name: the only ones deferred.
_NUMPYS = {name: f for name, f in vars(np).items() if type(f) is np.ufunc and not f.signature}


def record(ufunc: np.ufunc, operands: tuple[Any, ...], array_type: type, out: Any = None,
           where: Any = True) -> Any:
    """A pending array for ``ufunc(*operands, out=out, where=where)`` (``out`` itself when
    given), or :data:`DECLINED` (run it at once)."""
    if _NUMPYS.get(ufunc.__name__) is not ufunc or ufunc.nout != 1 \
            or ufunc.nin != len(operands) or threading.current_thread() is not _MAIN:
        return DECLINED  # (another library's loops may raise, or keep errors of their own)
    if type(out) is tuple:  # (``out=(a,)``, as NumPy hands it on: the call returns ``a``)
        if len(out) != 1:
            return DECLINED
        out = out[0]
    if not NODES and not _large(operands, array_type, out):
        return DECLINED  # (the commonest refusal, made before any other work)
    with _LOCK:
        if _BUSY[0]:
            return DECLINED
        _BUSY[0] = True
        try:
            return _record(ufunc, operands, array_type, out, where)
        finally:
            _BUSY[0] = False
            if NODES and not PENDING:
                _flush_locked()


def _large(operands: tuple[Any, ...], array_type: Any, out: Any) -> bool:
    """True if an array operand (or ``out``) has at least :func:`floor` elements. Only
    while nothing is pending: then no array's slot is empty, and reading it forces nothing."""
    least = _FLOOR[0] if _FLOOR else floor()
    items: tuple[Any, ...] = (*operands, out)
    for x in items:
        if type(x) is array_type and x._native.size >= least:
            return True
    return False


class _Gather:
    """The operands of one call as a node reads them, and the arrays it would lock."""

    __slots__ = ("array_type", "to_lock", "to_watch", "pending")

    def __init__(self, array_type: type) -> None:
        self.array_type = array_type
        self.to_lock: list[tuple[Any, np.ndarray]] = []
        self.to_watch: list[tuple[Any, Any, np.ndarray]] = []  # watched: array, storage, native
        self.pending = False

    def operand(self, x: Any) -> Any:
        """A node, a native array or a scalar for ``x``; None if it cannot be deferred."""
        t = type(x)
        if t is self.array_type:
            key = id(x)
            node = PENDING.get(key)
            if node is not None:
                self.pending = True
                return node
            found = self.target(x)
            if found is not None:
                return found
            found = watchable(x)
            if found is not None:
                self.to_watch.append((x, x._storage, found))
            return found
        if t in _SCALARS:
            return x
        return None

    def target(self, x: Any) -> Any:
        """``x``'s native array if ``x`` is (or now becomes) a locked input, else None: what
        a call writes into for ``out=x`` (never a watched input's: a chain writes only
        memory nothing else reaches)."""
        key = id(x)
        held = LEAVES.get(key)
        if held is not None:
            return held[1]
        for seen, native in self.to_lock:
            if seen is x:
                return native
        found = lockable(x)
        if found is not None:
            self.to_lock.append((x, found))
        return found


def _record(ufunc: np.ufunc, operands: tuple[Any, ...], array_type: type, out: Any,
            where: Any) -> Any:
    state = np.geterr()  # (an error state or filter that raises: raised at the call)
    if not _QUIET.issuperset(state.values()):
        return DECLINED
    shown = warnings_at_call(RuntimeWarning)
    if shown is None:
        return DECLINED
    gather = _Gather(array_type)
    args = [gather.operand(x) for x in operands]
    if any(a is None for a in args):
        return DECLINED
    mask: Any = True
    if where is not True:
        mask = gather.operand(where)
        if mask is None or shape_of(mask) is None or mask.dtype != np.bool_:
            return DECLINED
    target: np.ndarray | None = None
    replaced: Node | None = None
    late = False  # (a write into watched memory: made at once, with the chains it reads)
    if out is not None:
        found = _output(out, gather, mask)
        if found is None and gather.pending and mask is True and _PLACER[0] is None \
                and type(out) is array_type and id(out) not in PENDING:
            native = watchable(out)
            found, late = (None, False) if native is None else ((native, None), True)
        if found is None:
            return DECLINED
        target, replaced = found
    shapes = [s for s in map(shape_of, (*args, mask)) if s is not None]
    out_shape = shape_of(replaced if target is None else target) if out is not None else None
    try:
        shape = np.broadcast_shapes(*shapes, *([out_shape] if out_shape else []))
    except ValueError:
        return DECLINED  # the eager call raises NumPy's own error
    if out_shape is not None and shape != out_shape:
        return DECLINED
    size = math.prod(shape)
    if not shape or (size < floor() and not gather.pending):
        return DECLINED
    for a in (*args, mask):
        if type(a) is Node and a.shape != shape:
            return DECLINED  # a pending operand broadcast up: evaluated first
    if target is not None and not _only_read_whole(target, args, mask):
        return DECLINED
    dtype = result_dtype(ufunc, args, mask, target if target is not None else replaced)
    if dtype is None:
        return DECLINED
    placer = _PLACER[0]
    movable = False
    if placer is not None:  # a GPU is usable: the call may belong there
        verdict = placer.admit(ufunc, args, dtype, shape, mask is True and target is None)
        if verdict is None:
            return DECLINED
        movable = verdict
    node = Node(ufunc, tuple(args), dtype, shape, state)
    node.shown = shown
    node.where, node.target, node.gpu = mask, target, movable
    # (``u[1:-1] += 0.5 * (u[2:] - u[:-2])``: written one block late, or not deferred)
    reach = late_reach(target, [*NODES, node]) if late and target is not None else 0
    if len(NODES) >= MAX_NODES or _HELD[0] > MAX_LEAF_BYTES or reach is None:
        _flush_locked()
        return DECLINED  # (the operands' chains were evaluated: run this call at once)
    node.late = reach
    _set_active(True)
    for x, native in gather.to_lock:  # lock the new leaves: their reads now force the chains
        del x._native
        LEAVES[id(x)] = (x, native)
        _HELD[0] += native.nbytes
    if gather.to_watch:  # watch the new memory read through views: its writes force them
        if not WATCHED:
            for listener in WATCH_LISTENERS:
                listener(True)
        for x, storage, native in gather.to_watch:
            READ[id(x)] = weakref.ref(x)
            if id(storage) not in WATCHED:
                WATCHED[id(storage)] = (storage, storage.version)
                root = native.base  # (the memory its views keep alive)
                _HELD[0] += (native if root is None else root).nbytes
    NODES.append(node)
    for sink in sinks():
        if not any(sink is s for s in _SINKS):
            _SINKS.append(sink)
    if late:
        try:
            _flush_locked()
        except BaseException:  # (the chain stays pending, without this call's write)
            NODES.remove(node)
            raise
        out._storage.version += 1  # (the write: no mirror to release, watchable says)
        return out
    result: Any
    if out is not None:
        result = out
        if replaced is not None:
            replaced.ref = None  # (its value is no array's any more)
    else:
        result = object.__new__(array_type)
        result._device, result._storage, result._mirror = CPU, None, None
        result._scalar, result._pin, result._face = False, None, False
    key = id(result)
    node.ref = weakref.ref(result, lambda _ref: _dropped(key))
    PENDING[key] = node
    if movable and placer is not None and placer.crosses(NODES):
        _flush_locked(placer)  # (now, while no caller is reading a pending array)
    return result


def _output(out: Any, gather: _Gather, mask: Any) -> tuple[Any, Node | None] | None:
    """Where a call given ``out`` writes: (the native array written in place, or None for
    a pending array's fresh value; the pending node ``out`` held), or None to decline."""
    if type(out) is not gather.array_type:
        return None
    node = PENDING.get(id(out))
    if node is not None:
        if node.target is not None:
            return node.target, node
        return (None, node) if mask is True else None
    native = gather.target(out)
    if type(native) is not np.ndarray:
        return None
    return native, None


def _only_read_whole(target: np.ndarray, args: list[Any], mask: Any) -> bool:
    """True if every pending read of ``target``'s memory has its shape (block ``i`` of
    it is then read only by block ``i``, before or after its write, as in program order)."""
    for node in NODES:
        for a in (*node.args, node.where):
            if a is target and node.shape != target.shape:
                return False
    return all(a is not target or a.shape == target.shape for a in (*args, mask))


def _dropped(key: int) -> None:
    """A pending array was dropped unread: once none is left alive, evaluate the chains
    (their floating-point warnings appear as the eager calls' would have)."""
    PENDING.pop(key, None)
    if not PENDING and NODES and not _BUSY[0]:
        with _LOCK:
            if not PENDING and NODES and not _BUSY[0]:
                _flush_locked()


# --------------------------------------------------------------------------- forcing

def force(x: Any) -> Any:
    """``x._native`` for a pending or locked array: every pending chain evaluated first.
    (``ndarray.__getattr__`` calls it when the slot is empty.)"""
    with _LOCK:  # (waits for a recording under way on another thread to finish)
        _flush_locked()
    return object.__getattribute__(x, "_native")


def flush() -> None:
    """Evaluate every pending chain (nothing if none is pending)."""
    if NODES:
        with _LOCK:
            _flush_locked()


def before_write() -> None:
    """Called before a write to any autodev array, and before host memory is handed
    out: evaluate the pending chains if one reads memory through a view (callers on hot
    paths test :data:`WATCHED` first). Any write, not only one to watched memory: the
    written array's storage may not be known yet (a view made on the host path), and a
    write seldom meets a pending chain over views."""
    if WATCHED:
        flush()


def assign(dest: np.ndarray, value: Any) -> bool:
    """``dest[...] = value`` for a pending temporary ``value``: its chain written straight
    into ``dest`` on the CPU, not into a fresh array then copied; True if done. Only for
    the last call recorded, of ``dest``'s shape and dtype, without ``out=`` or a mask,
    with no GPU usable, where the chain reads ``dest``'s memory as :func:`late_reach`
    allows (``u[1:-1, 1:-1] = u[:-2, 1:-1] + ...``: written one block late)."""
    node = PENDING.get(id(value))
    if node is None or node is not NODES[-1] or node.target is not None \
            or node.where is not True or _PLACER[0] is not None or node.shape != dest.shape \
            or node.dtype != dest.dtype or not dest.flags.writeable:
        return False
    with _LOCK:
        reach = late_reach(dest, NODES)
        if reach is None or _BUSY[0] or PENDING.get(id(value)) is not node:
            return False
        node.target, node.late = dest, reach
        try:
            _flush_locked()
        except BaseException:  # (still pending: its value is a fresh array's again)
            node.target, node.late = None, 0
            raise
    return True


ON_TRACE_EXIT.append(flush)


def _flush_locked(placer: Placer | None = None, total: Total | None = None) -> None:
    """Evaluate every pending chain: on the GPU of ``placer`` (a chain priced cheaper there
    as a call joined it), else in the blocked pass on the CPU (``total``: a node's sum to
    make as it runs)."""
    if not NODES:
        return
    busy = _BUSY[0]
    _BUSY[0] = True
    nodes, leaves, watching = NODES[:], list(LEAVES.values()), tuple(_SINKS)
    read = [x for x in (ref() for ref in READ.values()) if x is not None]
    # a write to watched memory evaluates the chains first (before_write): a version
    # moved means a write path without that call, and values read late. Never expected.
    stale = [s for s, version in WATCHED.values() if s.version != version]
    alive = {id(n): ref for ref, n in ((n.ref() if n.ref else None, n) for n in nodes)
             if ref is not None}
    found: list[tuple[Node, int]] = []
    ran: tuple[dict[int, Any], list[tuple[str, int]], Any] | None = None
    try:
        if placer is not None:
            ran = placer.run(nodes, alive)
        results = evaluate(nodes, alive, found, total) if ran is None else ran[0]
    finally:
        _BUSY[0] = busy
    # (on an error, a MemoryError say, everything stays pending: a later read tries again)
    NODES.clear()
    LEAVES.clear()
    PENDING.clear()
    _SINKS.clear()
    _HELD[0] = 0
    READ.clear()
    if WATCHED:
        WATCHED.clear()
        for listener in WATCH_LISTENERS:
            listener(False)
    for x, native in leaves:
        x._native = native
    device = CPU if ran is None else ran[2]
    for node in nodes:
        array = alive.get(id(node))
        if array is not None:
            array._native = results[id(node)]
            array._device = device
    _set_active(False)
    if ran is None and _PLACER[0] is not None and (leaves or read):
        _PLACER[0].credit(nodes, [x for x, _ in leaves] + read)
    STATS.fused_chains += 1
    STATS.fused_ops += len(nodes)
    STATS.fused_on[str(device)] = STATS.fused_on.get(str(device), 0) + 1
    if watching:
        _trace(nodes, watching, ran, placer if placer is not None else _PLACER[0])
    report(found)  # (last: a warning's handler may read arrays)
    if stale:
        raise RuntimeError("autodev: memory a deferred chain read through a view was "
                           "written before the chain ran (a write path that does not "
                           "call autodev._fusion.before_write); please report this")


def _trace(nodes: list[Node], watching: tuple[list[Record], ...],
           ran: tuple[dict[int, Any], list[tuple[str, int]], Any] | None,
           placer: Placer | None) -> None:
    """One trace record for the chains evaluated: every call they held, in order, where
    they ran and, while a GPU is usable, the chain's price on each device."""
    names = ", ".join(node.ufunc.__name__ for node in nodes)
    shapes = tuple(dict.fromkeys(node.shape for node in nodes))
    costs: dict[str, float] = {}
    if placer is not None:
        cpu, gpu, name = placer.price(nodes)
        costs = {"cpu": cpu, name: gpu}
    if ran is None:
        reason = f"{len(nodes)} deferred calls in one blocked pass: {names}"
        device, moves, threads = "cpu", [], LAST_THREADS[0]
    else:
        device, moves, threads = str(ran[2]), ran[1], 1
        how = placer.ran_as() if placer is not None else ""
        reason = (f"{len(nodes)} deferred calls priced as one, cheaper on {device}: "
                  f"its inputs moved once, then {how}: {names}")
    emit(Record(op="fused", shapes=shapes, dtype=str(nodes[-1].dtype), device=device,
                reason=reason, costs=costs, transfers=list(moves), threads=threads),
         watching)


PROFILE_WRITTEN.append(reset_profile)
