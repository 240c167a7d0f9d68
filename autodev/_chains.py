"""Where a deferred chain runs while a GPU is usable: the CPU's blocked pass, or the GPU.

:mod:`autodev._fusion` records large elementwise calls on host data; it sits below the
backends, so this module, above them, decides for it (it is the fusion's
:class:`~autodev._fusion.Placer`, bound while a GPU is usable).

- **A call** whose operands are all on the host joins a chain unless the dispatcher would
  run it on the GPU: policy ``gpu``, or under ``auto`` the cost model's price of the one
  call, its array operands moved (as :func:`autodev._decide._predict` prices it), is
  lower there. Such a call runs at once, as it would have. Under policy ``cpu``, or when
  the GPU cannot run it (capability table, a dtype it lacks, ``where=``, a write into
  host memory), it joins a chain that stays on the CPU.
- **A chain** is priced as one call each time a call joins it (:func:`price`): on the
  CPU, its blocked pass (one pass over the bytes it reads and writes, plus each call's
  arithmetic done in cache); on the GPU, its host inputs moved once, the same pass and
  arithmetic at the GPU's rates, and one launch per result shape. The moment every call
  of the chain may run on the GPU and the GPU's price is the lower, the chain runs
  there, at once (:func:`run`): each group of its calls with one result shape as one
  fused kernel (:mod:`autodev._chain_kernels`), or, where the device cannot fuse it, as
  its calls in the program's order, for a reason the chain's trace record and
  ``stats()["unfused"]`` name. Its results live on the GPU, placed ``auto``, so the
  calls after it follow them there. Deciding when a call joins, not when a value is
  read, keeps a read from seeing an array change device under it: a chain read later
  runs on the CPU.
- **Reuse credit** (:mod:`autodev._residency.reuse`): a chain that ran on the CPU credits
  its host inputs for their moves together (:meth:`_Placer.credit`); once that pays,
  they are mirrored on the GPU and the calls on them follow the mirrors, so a loop over
  the same host data moves it once, with chains as without them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _chain_kernels as K, _fusion
from ._backends import STATE
from ._capability.specs import NUMPY_UFUNCS, OpSpec
from ._config import ENV, policy_now
from ._cost.cache import cost_model, host_floor
from ._cost.model import dtype_class
from ._device import CPU, Device
from ._fusion import Node
from ._residency import reuse as _reuse, storage as R
from ._residency.memory import retrying
from ._trace import STATS

#: The share of an eager elementwise call's time a call in a blocked pass costs: its
#: operands and result stay in the cache, so of the three elements an eager call moves
#: through memory per element of work, none does (an estimate, not a measurement: a
#: quarter to a half on the 2-vCPU VM's fused benchmarks).
IN_CACHE = 1.0 / 3.0


def _spec(ufunc: np.ufunc) -> OpSpec | None:
    """The function table's spec of one of NumPy's ufuncs (None: another ufunc)."""
    found = NUMPY_UFUNCS.get(ufunc.__name__)
    return found[1] if found is not None and found[0] is ufunc else None


def _family(ufunc: np.ufunc) -> str:
    spec = _spec(ufunc)
    return spec.family if spec is not None else "transcendental"


def _nbytes(a: Any) -> int:
    if type(a) is Node:
        return math.prod(a.shape) * a.dtype.itemsize
    return a.nbytes if type(a) is np.ndarray else 0


class _Placer:
    """The fusion's placer (see the module's docstring)."""

    def admit(self, ufunc: np.ufunc, args: list[Any], dtype: np.dtype,
              shape: tuple[int, ...], movable: bool) -> bool | None:
        policy = policy_now()
        if policy == "gpu":
            return None
        gpu = STATE.gpu
        spec = _spec(ufunc)
        if policy == "cpu" or not movable or gpu is None or spec is None \
                or spec.where == "cpu" or spec.impl(gpu) is None:
            return False
        dtypes = [dtype, *(a.dtype for a in args if type(a) is Node or type(a) is np.ndarray)]
        if not all(gpu.supports_dtype(d) for d in dtypes):
            return False
        work = math.prod(shape)
        if work < host_floor(spec.family):
            return True  # (the CPU wins this call whatever: no prediction needed)
        widest = max(dtypes, key=lambda d: d.itemsize)
        moved = [_nbytes(a) for a in args if type(a) is Node or type(a) is np.ndarray]
        cpu, on_gpu = cost_model().predict(spec.family, dtype_class(widest), work, h2d=moved)
        return None if on_gpu < cpu else True

    def crosses(self, nodes: list[Node]) -> bool:
        if not all(node.gpu for node in nodes):
            return False
        cpu, gpu, _ = price(nodes)
        return gpu < cpu

    def price(self, nodes: list[Node]) -> tuple[float, float, str]:
        return price(nodes)

    def run(self, nodes: list[Node], alive: dict[int, Any]
            ) -> tuple[dict[int, Any], list[tuple[str, int]], Device] | None:
        return run(nodes, alive)

    def ran_as(self) -> str:
        return LAST_RUN[0]

    def credit(self, nodes: list[Node], leaves: list[Any]) -> None:
        """A chain that ran on the CPU credits its host inputs as a decided call credits
        its own (:mod:`autodev._residency.reuse`), for their moves together: the time the
        chain would have saved on the GPU had they all been there, shared among them in
        proportion to their moves' costs, so that their credits pay for their moves at
        the same chain. An input whose credit paid is mirrored there; mirrored, it is no
        chain's input any more (:mod:`autodev._chain_inputs`), so the calls on it are
        decided one by one and follow the mirror: a loop over the same host data moves
        it once, with chains as without them."""
        gpu = STATE.gpu
        if gpu is None or not ENV.mirror_budget or policy_now() != "auto" \
                or not all(node.gpu for node in nodes):
            return
        model = cost_model()
        moves = [(x, model.h2d(x.nbytes)) for x in leaves
                 if x._device is CPU and not R.has_mirror(x, gpu.device)]
        total = sum(cost for _, cost in moves)
        cpu, on_gpu, _ = price(nodes)
        saved = cpu - (on_gpu - total)
        if saved <= 0.0 or total <= 0.0:
            _reuse.passed()
            return
        found = [(x, gpu.device, cost, saved * cost / total) for x, cost in moves]
        _reuse.credit(found, gpu, STATE.watchers > 0)


def price(nodes: list[Node]) -> tuple[float, float, str]:
    """Predicted seconds of the chain ``nodes`` on the CPU (its blocked pass) and on the
    active GPU (its inputs moved once, then one fused kernel per result shape), and the
    GPU's name. The pending chain (``_fusion.NODES`` itself) is priced as it grows: the
    sums over the nodes priced before are kept (:class:`_Sums`), so a chain of n calls
    costs n node prices, not n²/2."""
    gpu = STATE.gpu
    model = cost_model()
    sums = _sums(nodes, model, nodes is _fusion.NODES)
    widest = sums.widest
    assert widest is not None  # (a chain has a node)
    kept = sum(_nbytes(node) for node in nodes if node.ref is not None and node.ref() is not None)
    # one pass over the bytes, in elementwise work (an eager call moves three elements
    # per element of work: two read, one written)
    passed = (sum(sums.leaves.values()) + kept) / widest.itemsize / 3.0
    cpu_lat, cpu_inv, gpu_lat, gpu_inv = model.curves("elementwise", dtype_class(widest))
    cpu = cpu_lat + passed * cpu_inv + sums.cpu
    on_gpu = passed * gpu_inv + sum(model.h2d(n) for n in sums.leaves.values()) + sums.gpu
    on_gpu += gpu_lat * len(sums.shapes)  # one kernel per result shape
    return cpu, on_gpu, str(gpu.device) if gpu is not None else "gpu"


class _Sums:
    """What :func:`price` sums over a chain's nodes: its inputs' bytes (each memory once),
    its result shapes, its widest dtype, and its calls' arithmetic on each device."""

    __slots__ = ("model", "nodes", "widest", "leaves", "shapes", "cpu", "gpu")

    def __init__(self, model: Any) -> None:
        self.model = model
        self.nodes: list[Node] = []
        self.widest: np.dtype | None = None
        self.leaves: dict[tuple[Any, ...], int] = {}
        self.shapes: set[tuple[int, ...]] = set()
        self.cpu = self.gpu = 0.0

    def add(self, node: Node) -> None:
        if self.widest is None or node.dtype.itemsize > self.widest.itemsize:
            self.widest = node.dtype
            if self.nodes:  # a wider dtype: every call's arithmetic is priced again in it
                nodes, self.nodes, self.cpu, self.gpu = self.nodes, [], 0.0, 0.0
                for seen in nodes:
                    self.add(seen)
        for a in node.args:
            if type(a) is np.ndarray:
                self.leaves[_memory(a)] = a.nbytes
        self.shapes.add(node.shape)
        dclass = dtype_class(self.widest)
        _, cpu_inv, _, gpu_inv = self.model.curves("elementwise", dclass)
        _, f_cpu_inv, _, f_gpu_inv = self.model.curves(_family(node.ufunc), dclass)
        size = math.prod(node.shape)
        # a call's arithmetic: its eager slope less the memory traffic the pass saves
        self.cpu += size * max(f_cpu_inv - (1.0 - IN_CACHE) * cpu_inv, IN_CACHE * cpu_inv)
        self.gpu += size * max(f_gpu_inv - (1.0 - IN_CACHE) * gpu_inv, IN_CACHE * gpu_inv)
        self.nodes.append(node)


#: The sums of the pending chain priced last (None once no chain is pending).
_PENDING_SUMS: list[_Sums | None] = [None]


def _sums(nodes: list[Node], model: Any, pending: bool) -> _Sums:
    """The sums over ``nodes``: for the pending chain, those kept from its last pricing
    extended by the nodes that joined since."""
    sums = _PENDING_SUMS[0] if pending else None
    k = len(sums.nodes) if sums is not None else 0
    if sums is None or sums.model is not model or k > len(nodes) \
            or (k and (nodes[0] is not sums.nodes[0] or nodes[k - 1] is not sums.nodes[-1])):
        sums, k = _Sums(model), 0
    for node in nodes[k:]:
        sums.add(node)
    if pending:
        _PENDING_SUMS[0] = sums
    return sums


def _forget_sums(active: bool) -> None:
    """No chain pending: drop the kept sums (they hold the chain's inputs)."""
    if not active:
        _PENDING_SUMS[0] = None


_fusion.LISTENERS.append(_forget_sums)


def run(nodes: list[Node], alive: dict[int, Any]
        ) -> tuple[dict[int, Any], list[tuple[str, int]], Device] | None:
    """Run ``nodes`` on the active GPU, each group of one result shape as one fused
    kernel (:mod:`autodev._chain_kernels`; where it cannot be one, the group runs as the
    device's calls in the program's order, for a named reason), on inputs moved once: the
    natives of the alive nodes' arrays, the moves, the device. Faults go the way of every
    device call (:func:`autodev._residency.memory.retrying`: out of memory frees and
    retries once); None where the CPU must run the chain after all."""
    gpu = STATE.gpu
    assert gpu is not None  # (only while a GPU is usable is this module the placer)
    device = gpu.device
    how: list[tuple[str, str | None]] = []
    ran = retrying("fused chain", device, lambda: _run_on(gpu, nodes, alive, how),
                   lambda: None)
    if ran is None:
        return None
    values, moves = ran
    STATS.calls[str(device)] = STATS.calls.get(str(device), 0) + len(nodes)
    for _, unfused in how:
        if unfused is None:
            STATS.fused_kernels += 1
        elif unfused:
            STATS.unfused[unfused] = STATS.unfused.get(unfused, 0) + 1
    LAST_RUN[0] = "; ".join(text for text, _ in how)
    return {key: values[key] for key in alive}, moves, device


#: How the last chain run on a GPU ran (its trace record says it): one kernel per group,
#: or the calls in order and why.
LAST_RUN = [""]


def _memory(a: np.ndarray) -> tuple[Any, ...]:
    """What tells a chain's input apart: its memory and geometry (an input read through
    watched memory is a view of its own in each call that reads it: one move, one price)."""
    return (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype.str)


def _groups(nodes: list[Node]) -> list[list[Node]]:
    by_shape: dict[tuple[int, ...], list[Node]] = {}
    for node in nodes:
        by_shape.setdefault(node.shape, []).append(node)
    return list(by_shape.values())


def _run_on(gpu: Any, nodes: list[Node], alive: dict[int, Any],
            how: list[tuple[str, str | None]]
            ) -> tuple[dict[int, Any], list[tuple[str, int]]]:
    """One attempt of :func:`run`: the nodes' natives on ``gpu`` and the moves made;
    ``how`` gets how each group ran (what the trace says, and None for one fused kernel,
    the reason it ran unfused, or "" where it did not run)."""
    how.clear()
    moves: list[tuple[str, int]] = []
    moved: dict[tuple[Any, ...], Any] = {}
    values: dict[int, Any] = {}
    name = str(gpu.device)
    for group in _groups(nodes):
        if not any(id(node) in alive for node in group):
            how.append((f"{len(group)} calls whose results are unused: not run", ""))
            continue  # (nothing reads them, and a GPU reports no floating-point errors)
        program = K.plan(gpu.xp, name, group, alive)
        fused = program if isinstance(program, str) else K.kernel(gpu.xp, name, program)
        if isinstance(program, K.Program) and not isinstance(fused, str):
            natives = [_moved(gpu, a, moved, moves) for a in program.leaves]
            try:
                outs = fused(*natives, *program.scalars)
            except gpu.fusion_errors as err:  # (traced or compiled at its first run)
                fused = f"{name}'s fusion refused it ({type(err).__name__}: {err})"
                K.refused(name, program, fused)
            else:
                values.update(zip(map(id, program.returned), outs))
                how.append((f"one fused kernel of {len(group)} calls", None))
                continue
        assert isinstance(fused, str)
        how.append((f"{len(group)} calls in order ({fused})", fused))
        _in_order(gpu, group, values, moved, moves)
    return values, moves


def _moved(gpu: Any, a: np.ndarray, moved: dict[tuple[Any, ...], Any],
           moves: list[tuple[str, int]]) -> Any:
    """The device copy of the chain's input ``a``, moved once per chain."""
    key = _memory(a)
    native = moved.get(key)
    if native is None:
        native = moved[key] = R.transfer(a, CPU, gpu.device, moves)
    return native


def _in_order(gpu: Any, group: list[Node], values: dict[int, Any],
              moved: dict[tuple[Any, ...], Any], moves: list[tuple[str, int]]) -> None:
    """Run ``group`` as the device's calls in the program's order."""
    for node in group:
        spec = _spec(node.ufunc)
        func = spec.impl(gpu) if spec is not None else None
        assert func is not None  # (admitted only where the GPU has the ufunc)
        operands = [values[id(a)] if type(a) is Node else
                    _moved(gpu, a, moved, moves) if type(a) is np.ndarray else a
                    for a in node.args]
        values[id(node)] = func(*operands)


PLACER = _Placer()


def _bind() -> None:
    """The placer while a GPU is usable (the state's listener: every change re-binds)."""
    _fusion.bind_placer(PLACER if STATE.gpu is not None else None)
    K.forget()


STATE.listeners.append(_bind)
_bind()
