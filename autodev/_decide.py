"""Choosing the device for one call: inputs pinned to a device run there; otherwise the
capability table says which devices can run it, and the cost model which is cheaper
(reuse credit may mirror an input first, see :mod:`autodev._residency.reuse`); decisions
that nothing but their key decides are remembered.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._residency import storage as R
from ._residency import reuse as _reuse
from ._backends import STATE, Backend, active_gpu
from . import _threads
from ._config import ENV, get_policy, policy_now
from ._fusion import _ACTIVE as _FUSION_ACTIVE
from ._cost.model import dtype_class
from ._device import AUTO, CPU, Device
from ._cost.families import work_elements
from ._capability.specs import OpSpec
from ._trace import Record
from ._cost.cache import cost_model, host_floor, host_now


class _Unbound:
    """Stands for the array class until :mod:`autodev._array` binds it."""


#: The array class, bound through :func:`autodev._dispatch.bind_array` (see there).
ndarray: type[Any] = _Unbound


def bind_array(cls: type[Any]) -> None:
    """Make ``cls`` the array class decisions recognise (done once, by the dispatcher)."""
    global ndarray
    ndarray = cls



def choose(spec: OpSpec, arrays: list[Any], kwargs: dict[str, Any],
           pin: Device | None = None, host_only: bool = False
           ) -> tuple[Device, Record | None]:
    """Pick the device for a call; return it and a trace record if watched (``host_only``:
    an operand no GPU holds, see :func:`gpu_operand`)."""
    gpu = STATE.gpu if STATE.settled else active_gpu()  # the usable kind of highest priority
    costs: tuple[float, float] | None = None
    out = kwargs.get("out") if kwargs else None
    if type(out) is tuple and len(out) == 1:
        out = out[0]
    if spec.where == "primary":
        device, reason = (arrays[0]._device if arrays else CPU), "runs where its input lives"
        if device is not CPU and kwargs and (gpu is None or not _holds_result(gpu, kwargs)):
            device, reason = CPU, "a result of a dtype no GPU holds"
    elif host_only:
        device, reason = CPU, "a NumPy subclass, or an operand no GPU holds (capability table)"
    elif pin is not None:
        device, reason = _decide_pinned(spec, arrays, kwargs, out, gpu, pin)
    elif gpu is None:
        device, reason = CPU, "no GPU usable"
    else:
        device, reason, costs = _decide(spec, arrays, kwargs, out, gpu)
    if STATE.watchers == 0:
        return device, None
    record = Record(
        op=spec.name,
        shapes=tuple(a.shape for a in arrays),
        dtype=str(arrays[0].dtype) if arrays else "-",
        device=str(device),
        reason=reason,
        costs={"cpu": costs[0], str(gpu.device): costs[1]} if costs and gpu else {},
        placement=str(AUTO if pin is None else pin),
    )
    return device, record


#: Below this many elements a host call is neither split over threads nor deferred
#: (:func:`autodev._threads.general_from`).
_GENERAL_FROM = [_threads.NEVER]
_threads.on_floor(lambda least: _GENERAL_FROM.__setitem__(0, least))


def alone_on_host(spec: OpSpec, a: Any) -> bool:
    """True for a call of ``spec`` whose one argument is the host array ``a`` that runs
    NumPy's call at once: below the threads', host pool's and fusion's floors, never while
    a chain is pending, and, with a GPU usable, under policy ``auto`` and below the work at
    which the cost model first lets a GPU win for host data: the decision :func:`choose`
    makes for it, without its bookkeeping (the decision cache, the capability checks, the
    prediction)."""
    if type(a) is not ndarray or a._device is not CPU or _FUSION_ACTIVE[0] \
            or a._native.size >= _GENERAL_FROM[0]:
        return False
    if STATE.fast:
        return True
    return STATE.host_fast and spec.work([a]) < host_now(policy_now(), spec.family)


def all_on_host(spec: OpSpec, arrays: list[Any]) -> bool:
    """:func:`alone_on_host` for a call of several arguments, with a GPU usable: True where
    ``arrays`` (every array among its arguments, as :func:`choose` sees them; at least
    one) are autodev arrays on the host, each below the threads', host pool's and
    fusion's floors, no chain is pending, the policy is ``auto`` and the call's work is
    below the work at which the cost model first lets a GPU win for host data."""
    if not arrays or _FUSION_ACTIVE[0]:
        return False
    for a in arrays:  # (alone_on_host's test of its array, inlined: a call costs 2-4 %)
        if type(a) is not ndarray or a._device is not CPU or a._native.size >= _GENERAL_FROM[0]:
            return False
    return spec.work(arrays) < host_now(policy_now(), spec.family)


def _decide_pinned(spec: OpSpec, arrays: list[Any], kwargs: dict[str, Any], out: Any,
                   gpu: Backend | None, pin: Device) -> tuple[Device, str]:
    """Device and reason for a call whose inputs are pinned to ``pin``: it runs there
    (compute follows data), on the CPU only where the GPU cannot run it."""
    if pin is not CPU and (gpu is None or gpu.device is not pin):
        raise RuntimeError(
            f"This call's inputs are pinned to {pin}, which is not usable now: "
            f"{'no GPU is usable' if gpu is None else f'the GPU in use is {gpu.device}'}. "
            "Move them with x.to_device('cpu') or unpin them with x.to_device('auto')."
        )
    if pin is not CPU and not _gpu_capable(spec, gpu, arrays, kwargs):  # type: ignore[arg-type]
        return CPU, f"pinned to {pin}; the GPU cannot run it (capability table), ran on cpu"
    if isinstance(out, ndarray):  # (a subclass instance too: autodev._subclass)
        return out._device, "out= lives there"
    if type(out) is np.ndarray:
        return CPU, "out= is a NumPy array"
    return pin, f"pinned to {pin}"


def _decide(spec: OpSpec, arrays: list[Any], kwargs: dict[str, Any], out: Any, gpu: Backend
            ) -> tuple[Device, str, tuple[float, float] | None]:
    """Device, reason and (when predicted) costs for a call a GPU might run."""
    if spec.where == "cpu":  # (not kept in the decisions: such a spec may be made per call)
        return CPU, "GPU cannot run it (capability table)", None
    policy = get_policy()
    # (a traced call always shows its full prediction; out= decides the device itself)
    unwatched = out is None and STATE.watchers == 0
    key = None
    if unwatched:
        key = _decision_key(spec, arrays, kwargs, policy, gpu.device)
        if key is not None:
            hit = _DECISIONS.get(key)
            if hit is not None:
                decision, priced, credits = hit
                if credits:  # the inputs it credits, as when it was decided
                    moved = _reuse.credit([(arrays[i], *rest) for i, *rest in credits], gpu,
                                          False)
                    if moved is not None:
                        return _after_move(spec, arrays, gpu, moved, None)
                elif priced:
                    _reuse.passed()  # priced, crediting nothing, as when it was decided
                return decision
    work = None
    if policy == "auto" and unwatched and _all_on_host(arrays):
        # Below the GPU's fixed cost the CPU wins whatever else holds, so no prediction
        # is needed.
        work = spec.work(arrays)
        if work < host_floor(spec.family):
            return _remember(key, (CPU, "cost model", None))
    if not _gpu_capable(spec, gpu, arrays, kwargs):
        return _remember(key, (CPU, "GPU cannot run it (capability table)", None))
    if isinstance(out, ndarray):  # (a subclass instance too: autodev._subclass)
        return out._device, "out= lives there", None
    if type(out) is np.ndarray:
        return CPU, "out= is a NumPy array", None
    if policy == "gpu":
        return _remember(key, (gpu.device, "policy gpu", None))
    if policy == "cpu":
        return _remember(key, (CPU, "policy cpu", None))
    costs = _predict(spec, arrays, gpu.device, work)
    winner = gpu.device if costs[1] < costs[0] else CPU
    if not (arrays and ENV.mirror_budget):
        return _remember(key, (winner, "cost model", costs))
    found = _reuse.candidates(arrays, costs[0], costs[1], winner, gpu.device, cost_model())
    if not found:
        _reuse.passed()
        return _remember(key, (winner, "cost model", costs), priced=True)
    moved = _reuse.credit(found, gpu, STATE.watchers > 0)
    if moved is not None:
        return _after_move(spec, arrays, gpu, moved, work)
    # (what it credits is the key's too: each input's device, size and mirror, the costs)
    credits = tuple((next(i for i, a in enumerate(arrays) if a is entry[0]), *entry[1:])
                    for entry in found)
    return _remember(key, (winner, "cost model", costs), credits=credits)


def _after_move(spec: OpSpec, arrays: list[Any], gpu: Backend, moved: str,
                work: float | None) -> tuple[Device, str, tuple[float, float]]:
    """The decision for a call whose reuse credit just mirrored an input (``moved``: the
    move's reason): priced again, now that the input is on both devices."""
    costs = _predict(spec, arrays, gpu.device, work)
    winner = gpu.device if costs[1] < costs[0] else CPU
    return winner, f"cost model, after a move ({moved})", costs


#: Decisions of unwatched calls that nothing but their key decides (see
#: :func:`_decision_key`): the capability table, the policy, the prediction, and which
#: inputs reuse credit credits, by how much (their devices, sizes and mirrors and the
#: predicted times are the key's): each value is the decision, whether it counted as a
#: priced call crediting nothing, and the credits, ``(index in arrays, device, move cost,
#: time saved)``, given again at each use; where they pay for a move, the call is priced
#: afresh. Cleared with the cost model (a new GPU, profile or calibration), and when full.
_DECISIONS: dict[tuple[Any, ...], tuple[tuple[Device, str, tuple[float, float] | None], bool,
                                        tuple[tuple[Any, ...], ...]]] = {}
_DECISIONS_MAX = 4096
#: Keyword values a decision may be keyed on (hashed by value, without user code).
_KEYABLE = frozenset({type(None), bool, int, float, str})


def _decision_key(spec: OpSpec, arrays: list[Any], kwargs: dict[str, Any], policy: str,
                  gdev: Device) -> tuple[Any, ...] | None:
    """What decides a call: the op, the policy, the mirror budget being on, each input's
    device, dtype, shape and valid mirror, and the keywords; None where a decision may
    depend on more (an input that is not an autodev array, a keyword that is not a plain
    value)."""
    key: list[Any] = [spec, policy, ENV.mirror_budget]
    for a in arrays:
        if type(a) is not ndarray:
            return None
        data = a._native
        device = a._device
        key += (device, data.dtype, data.shape,
                R.has_mirror(a, gdev if device is CPU else CPU))
    if kwargs:
        for name, value in kwargs.items():
            if type(value) not in _KEYABLE:
                return None
            key += (name, type(value), value)  # (True == 1, yet a rule may tell them apart)
    return tuple(key)


def _remember(key: tuple[Any, ...] | None,
              decision: tuple[Device, str, tuple[float, float] | None], priced: bool = False,
              credits: tuple[tuple[Any, ...], ...] = ()
              ) -> tuple[Device, str, tuple[float, float] | None]:
    """Keep ``decision`` under ``key`` (``priced``: the decision counted as a priced call
    for reuse credit's decay, and so does each use of it; ``credits``: what each use
    credits, see :data:`_DECISIONS`)."""
    if key is not None:
        if len(_DECISIONS) >= _DECISIONS_MAX:
            _DECISIONS.clear()
        _DECISIONS[key] = (decision, priced, credits)
    return decision


def _all_on_host(arrays: list[Any]) -> bool:
    for a in arrays:
        if a._device is not CPU:
            return False
    return True


#: dtype -> whether the active GPU holds it (reset when the GPU changes).
_GPU_DTYPES: dict[Any, bool] = {}


def _gpu_capable(spec: OpSpec, gpu: Backend, arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    if spec.where == "cpu" or spec.impl(gpu) is None:
        return False
    for a in arrays:
        if not _holds(gpu, a._native.dtype):
            return False
    if kwargs and not _holds_result(gpu, kwargs):
        return False  # (a result of a dtype no device holds: strings, object, datetimes)
    return spec.gpu_ok is None or spec.gpu_ok(arrays, kwargs)


def _holds(gpu: Backend, dtype: np.dtype) -> bool:
    """True if ``gpu`` holds arrays of ``dtype`` (cached in :data:`_GPU_DTYPES`)."""
    ok = _GPU_DTYPES.get(dtype)
    if ok is None:
        ok = _GPU_DTYPES[dtype] = gpu.supports_dtype(dtype)
    return ok


def _holds_result(gpu: Backend, kwargs: dict[str, Any]) -> bool:
    """False if ``dtype=`` names a dtype ``gpu`` does not hold, or one NumPy does not know
    (the host gives NumPy's error)."""
    value = kwargs.get("dtype")
    if value is None:
        return True
    try:
        return _holds(gpu, np.dtype(value))
    except TypeError:
        return False


def _predict(spec: OpSpec, arrays: list[Any], gdev: Device, work: float | None = None
             ) -> tuple[float, float]:
    """Predicted seconds (CPU, GPU) for ``spec`` on ``arrays``, transfers included
    (``work``: the call's work, when the caller already computed it)."""
    model = cost_model()
    if arrays:
        widest = arrays[0] if len(arrays) == 1 else _widest(arrays)
        dclass = dtype_class(widest._native.dtype)
    else:
        dclass = "f64"
    if work is None:
        work = spec.work(arrays)
    h2d: list[int] = []
    d2h: list[int] = []
    for a in arrays:
        device = a._device
        if device is CPU:
            if not R.has_mirror(a, gdev):
                h2d.append(a.nbytes)
        else:
            if not R.has_mirror(a, CPU):
                d2h.append(a.nbytes)
            if device is not gdev:
                h2d.append(a.nbytes)
    # a product reads every element of its operands at least once: a matrix-vector
    # product is bound by memory, not by the multiply-adds its curve was fitted on
    read = work_elements(arrays) if spec.family == "matmul" and arrays else 0.0
    return model.predict(spec.family, dclass, work, read=read, h2d=h2d, d2h=d2h)


def _widest(arrays: list[Any]) -> Any:
    """The input whose dtype prices the call: the largest, the widest dtype on ties."""
    best = arrays[0]
    best_key = (best.size, best.dtype.itemsize)
    for a in arrays[1:]:
        key = (a.size, a.dtype.itemsize)
        if key > best_key:
            best, best_key = a, key
    return best
