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
- **Calls are recorded from the elementwise floor** (:meth:`_Placer.least`), below the
  CPU's fusion floor too: ten cheap calls on 1e6 host elements may be worth a move that
  one is not. Below the CPU's floor only a call the GPU may run joins (or one reading a
  pending operand), and a chain kept on the CPU there runs each call over the whole
  array, as its eager calls would (blocks cost more than they save at that size).
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

    def least(self) -> int:
        # below the elementwise floor a call of the cheapest family loses on the GPU even
        # on data already there: no chain of them pays for moving its inputs
        return max(2, math.ceil(host_floor("elementwise")))

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
    GPU's name."""
    gpu = STATE.gpu
    model = cost_model()
    leaves = {_memory(a): a.nbytes for node in nodes for a in node.args
              if type(a) is np.ndarray}
    widest = max((node.dtype for node in nodes), key=lambda d: d.itemsize)
    dclass = dtype_class(widest)
    kept = sum(_nbytes(node) for node in nodes if node.ref is not None and node.ref() is not None)
    # one pass over the bytes, in elementwise work (an eager call moves three elements
    # per element of work: two read, one written)
    passed = (sum(leaves.values()) + kept) / widest.itemsize / 3.0
    cpu_lat, cpu_inv, gpu_lat, gpu_inv = model.curves("elementwise", dclass)
    cpu = cpu_lat + passed * cpu_inv
    on_gpu = passed * gpu_inv + sum(model.h2d(n) for n in leaves.values())
    on_gpu += gpu_lat * len({node.shape for node in nodes})  # one kernel per result shape
    for node in nodes:
        size = math.prod(node.shape)
        f_cpu_lat, f_cpu_inv, f_gpu_lat, f_gpu_inv = model.curves(_family(node.ufunc), dclass)
        # a call's arithmetic: its eager slope less the memory traffic the pass saves
        cpu += size * max(f_cpu_inv - (1.0 - IN_CACHE) * cpu_inv, IN_CACHE * cpu_inv)
        on_gpu += size * max(f_gpu_inv - (1.0 - IN_CACHE) * gpu_inv, IN_CACHE * gpu_inv)
    return cpu, on_gpu, str(gpu.device) if gpu is not None else "gpu"


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
