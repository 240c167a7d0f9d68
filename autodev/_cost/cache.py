"""The cost model in force, cached: made from the profile of the GPU in use (or the
simulated GPU's own curves), and the host floors the tiny-call paths read from it.

Cleared by :func:`reset` when the GPU, the profile or the thread limit changes (the
dispatcher listens for the first two: :func:`autodev._dispatch.reset_cost_model`).
"""

from __future__ import annotations

import math
import sys
from typing import Any, Callable

from .._config import POLICIES
from .families import WORK
from .model import CostModel


class _NoState:
    """Stands for the backends' registry until it is bound: no GPU."""

    gpu: Any = None


#: The backends' registry (``autodev._backends.STATE``): its ``gpu`` is the GPU whose
#: costs the model holds. The backends sit above the cost model, so the dispatcher binds
#: it here (:func:`bind_state`), once, at import.
_state: Any = _NoState


def bind_state(state: Any) -> None:
    """Make ``state`` the registry whose ``gpu`` the model is made for (done once)."""
    global _state
    _state = state



_MODEL: dict[Any, CostModel] = {}
_LAST: list[tuple[Any, Any, CostModel] | None] = [None]  # the model used last, and for what


def cost_model() -> CostModel:
    """The cost model in force (profile curves; the simulated GPU's own curves if set)."""
    gpu = _state.gpu
    costs = getattr(gpu, "costs", None)
    last = _LAST[0]
    if last is not None and last[0] is gpu and last[1] is costs:
        return last[2]
    key = (id(gpu), id(costs))
    model = _MODEL.get(key)
    if model is None:
        from .profile import load

        profile, _ = load(gpu=gpu)
        devices = dict(profile["devices"])
        if costs is not None:
            devices["gpu"] = costs
        model = _MODEL[key] = CostModel(devices)
    _LAST[0] = (gpu, costs, model)
    return model


#: family -> the cost model's ``cpu_only_below``: the work under which a call whose
#: inputs are on the host runs on the CPU whatever else holds (see :func:`host_floor`).
_HOST_FLOOR: dict[str, float] = {}
#: family -> :func:`host_floor` rounded up: an integer work ``n`` is below the floor
#: exactly when ``n < HOST_FLOOR_WORK[family]``, a comparison of two ints (an int against
#: a float takes CPython's slow path). The hot paths read it directly and call
#: :func:`host_floor_work` on a miss; it is cleared, never replaced, when the model changes.
HOST_FLOOR_WORK: dict[str, int] = {}


def host_floor(family: str) -> float:
    """Work below which a host-resident call of ``family`` stays on the CPU under ``auto``
    (the cost model's ``cpu_only_below``, cached until the model changes)."""
    found = _HOST_FLOOR.get(family)
    if found is None:
        found = _HOST_FLOOR[family] = cost_model().cpu_only_below(family)
    return found


def host_floor_work(family: str) -> int:
    """The least integer work that is not below :func:`host_floor` (cached).

    The one rule behind every tiny-call path (operators, ufuncs, reductions, inlined there):
    a call of ``family`` whose operands are all on the host, whose integer work is below
    this and whose policy is ``auto`` (``policy_now() == "auto"``) runs on NumPy with no
    prediction, because the full prediction would choose the CPU too."""
    found = HOST_FLOOR_WORK.get(family)
    if found is None:
        # (capped where the CPU backend may split or defer the call: the general path)
        found = min(math.ceil(host_floor(family)), _CAP[0](family))
        HOST_FLOOR_WORK[family] = found
    return found


#: policy -> family -> the integer work below which a call of ``family`` whose operands are
#: all on the host runs NumPy's call at once while a GPU is usable, with no prediction: the
#: one table every tiny-call path reads (the operators, the ufuncs, the reductions, and
#: their compiled twins in ``autodev/_speedups.c``, which compare against it and hold no
#: rule of their own). Under ``auto``, :data:`HOST_FLOOR_WORK`; under ``cpu`` and ``gpu``,
#: 0 for every family: the general path decides those calls (placement, pins, the
#: backends' floors). A family missing from it is looked up by :func:`host_now`.
HOST_NOW: dict[str, dict[str, int]] = {
    p: HOST_FLOOR_WORK if p == "auto" else dict.fromkeys(WORK, 0) for p in POLICIES}


def host_now(policy: str, family: str) -> int:
    """``HOST_NOW[policy][family]``, where the table does not hold it yet (see there)."""
    found = HOST_NOW[policy].get(family)
    if found is None:
        found = host_floor_work(family) if policy == "auto" else 0
    return found


def reset() -> None:
    """Forget the cached model and the floors read from it."""
    _MODEL.clear()
    _LAST[0] = None
    _HOST_FLOOR.clear()
    HOST_FLOOR_WORK.clear()


def _uncapped(family: str) -> int:
    return sys.maxsize


#: The work from which the host's threads or fusion may take a call of a family, which
#: caps its floor (the general path must see such calls): bound by :mod:`autodev._threads`,
#: which sits above the cost model, once, at its import (:func:`bind_cap`).
_CAP: list[Callable[[str], int]] = [_uncapped]


def bind_cap(cap: Callable[[str], int]) -> None:
    """Make ``cap`` what caps each family's floor; forget the floors capped before."""
    _CAP[0] = cap
    HOST_FLOOR_WORK.clear()
