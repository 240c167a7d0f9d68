"""Backend registry: which devices exist, which are usable, and why not.

Backends are looked up here, never by ``if cupy:`` elsewhere. A GPU kind is
registered with a *probe* returning ``(backend, "")`` or ``(None, reason)``;
probes run once, lazily, on the first call that could use a GPU, so
``import autodev`` never imports CuPy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .._config import ENV, POLICY_HOOKS
from .._device import AUTO, CPU, Device, parse_device
from ._base import Backend
from ._numpy import NumpyBackend

if TYPE_CHECKING:  # the simulator loads only when enabled (enable_sim, AUTODEV_SIMULATE_GPU)
    from ._sim import SimBackend

__all__ = [
    "Backend",
    "STATE",
    "active_gpu",
    "backend_for",
    "cpu_backend",
    "devices",
    "disable_sim",
    "enable_sim",
    "note_pinned",
    "register_backend",
    "resolve_device",
]

Probe = Callable[[], "tuple[Backend | None, str]"]


def _probe_cuda() -> tuple[Backend | None, str]:
    from ._cupy import CupyBackend, probe_cuda

    cupy, reason = probe_cuda()
    return (CupyBackend(cupy, 0), "") if cupy is not None else (None, reason)


_PROBES: dict[str, Probe] = {"cuda": _probe_cuda}


def register_backend(kind: str, probe: Probe) -> None:
    """Register a GPU ``kind`` with a probe returning ``(backend, "")`` or ``(None, reason)``."""
    _PROBES[kind] = probe
    STATE.probed = False


class _State:
    """Mutable registry state, read on the hot path.

    ``fast`` is True when no GPU is usable and nothing watches the calls: the
    array then runs NumPy directly, with no cost model at all.
    """

    __slots__ = ("fast", "host_fast", "probed", "gpu", "sim", "found", "reasons", "watchers",
                 "listeners", "pinned")

    def __init__(self) -> None:
        self.fast = False
        #: A GPU is usable but nothing watches and nothing is pinned: tiny elementwise calls
        #: on host data may skip the general path (a size check against the model's floor).
        self.host_fast = False
        self.probed = False
        self.gpu: Backend | None = None
        self.sim: SimBackend | None = None
        self.found: dict[str, Backend] = {}
        self.reasons: dict[str, str] = {}
        self.watchers = 0  # active trace() blocks and AUTODEV_TRACE
        self.listeners: list[Callable[[], None]] = []
        #: Some array was pinned (to_device, device=): the fast path, which knows no
        #: placement, is off from then on so that pinned results stay pinned.
        self.pinned = False

    def refresh(self) -> None:
        """Recompute the active GPU and the fast flag after any change."""
        self.gpu = self.sim if self.sim is not None else self.found.get("cuda")
        # Under AUTODEV_DEVICE=cpu nothing probes for a GPU (so CuPy is never imported)
        # until some context sets another policy; until then the host is all there is.
        settled = self.probed or ENV.device == "cpu"
        self.fast = settled and self.gpu is None and self.watchers == 0 and not self.pinned
        self.host_fast = self.gpu is not None and self.watchers == 0 and not self.pinned
        for listener in self.listeners:
            listener()


STATE = _State()
_CPU_BACKEND = NumpyBackend()


def _ensure_probed() -> None:
    if STATE.probed:
        return
    for kind, probe in _PROBES.items():
        backend, reason = probe()
        if backend is not None:
            STATE.found[kind] = backend
        else:
            STATE.reasons[kind] = reason
    STATE.probed = True
    STATE.refresh()


def active_gpu() -> Backend | None:
    """The GPU backend calls may use (the simulated one if enabled), or None."""
    if STATE.sim is not None:
        return STATE.sim
    if not STATE.probed:
        _ensure_probed()
    return STATE.gpu


def cpu_backend() -> Backend:
    """The NumPy backend."""
    return _CPU_BACKEND


def backend_for(device: Device) -> Backend:
    """The backend that owns ``device``."""
    if device is CPU:
        return _CPU_BACKEND
    if STATE.sim is not None and device is STATE.sim.device:
        return STATE.sim
    _ensure_probed()
    for backend in STATE.found.values():
        if backend.device is device:
            return backend
    raise RuntimeError(
        f"device {device} is not usable: {devices_reason(device)}. "
        "Run `autodev doctor` to see why."
    )


def devices_reason(device: Device) -> str:
    """Why ``device`` is not usable (empty if it is)."""
    _ensure_probed()
    if device.kind == "sim":
        return "" if STATE.sim is not None else "the simulated GPU is off (AUTODEV_SIMULATE_GPU=1)"
    return STATE.reasons.get(device.kind, "no such device")


def note_pinned() -> None:
    """Record that an array was pinned (turns the placement-blind fast path off)."""
    if not STATE.pinned:
        STATE.pinned = True
        STATE.refresh()


def resolve_device(spec: Device | str) -> Device:
    """Resolve ``"gpu"`` to the active GPU, and check that the device is usable
    (``"auto"`` resolves to :data:`AUTO`, the placement, always usable)."""
    if isinstance(spec, str) and spec.strip().lower() == "gpu":
        gpu = active_gpu()
        if gpu is None:
            raise RuntimeError(
                f"no GPU is usable: {devices_reason(Device('cuda', 0))}. "
                "Run `autodev doctor` to see what to install."
            )
        return gpu.device
    device = parse_device(spec)
    if device is not AUTO:
        backend_for(device)
    return device


def devices() -> list[dict[str, Any]]:
    """List every known device: ``{"device", "usable", "reason"}`` each, ``auto`` first."""
    _ensure_probed()
    out: list[dict[str, Any]] = [
        {"device": AUTO, "usable": True, "reason": "autodev places the array (the default)"},
        {"device": CPU, "usable": True, "reason": ""},
    ]
    if STATE.sim is not None:
        out.append({"device": STATE.sim.device, "usable": True, "reason": "simulated"})
    for kind in _PROBES:
        backend = STATE.found.get(kind)
        if backend is not None:
            out.append({"device": backend.device, "usable": True, "reason": ""})
        else:
            out.append({"device": Device(kind, 0), "usable": False,
                        "reason": STATE.reasons.get(kind, "")})
    return out


def enable_sim(costs: dict[str, Any] | None = None) -> SimBackend:
    """Turn on the simulated GPU ``sim:0`` (it becomes the active GPU)."""
    from ._sim import SimBackend

    STATE.sim = SimBackend(costs)
    STATE.refresh()
    return STATE.sim


def disable_sim() -> None:
    """Turn the simulated GPU off again."""
    STATE.sim = None
    STATE.refresh()


POLICY_HOOKS.append(lambda policy: _ensure_probed())

if ENV.simulate_gpu:
    from ._sim import SimBackend

    STATE.sim = SimBackend()
if ENV.trace:
    STATE.watchers += 1
