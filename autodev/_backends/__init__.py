"""Backend registry: which devices exist, which are usable, why not, and which GPU is active.

Backends are looked up here, never by ``if cupy:`` elsewhere. A GPU kind is
registered with :func:`register_backend`: a *probe* returning ``(backend, "")`` or
``(None, reason)``, and a *priority*. Probes run once per kind, lazily, on the first
call that could use a GPU, so ``import autodev`` never imports CuPy. The *active GPU*
(the one ``auto`` dispatch and ``device="gpu"`` use) is the usable kind of highest
priority: the simulated GPU (:data:`SIM_PRIORITY`) when enabled, else CUDA
(:data:`CUDA_PRIORITY`), else any other kind registered above or below them.

State is kept by concern: :data:`REGISTRY` holds what is registered and what the
probes found (read when the GPU choice changes); :data:`STATE` holds the flags the
hot path reads on every call, recomputed by :meth:`_State.refresh` after any change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .._config import ENV, POLICY_HOOKS
from .._device import AUTO, CPU, Device, parse_device, register_kind, unregister_kind
from .._trace import note_no_gpu, on_watchers
from ._base import Backend
from ._numpy import NumpyBackend

if TYPE_CHECKING:  # the simulator loads only when enabled (enable_sim, AUTODEV_SIMULATE_GPU)
    from ._sim import SimBackend

__all__ = [
    "Backend",
    "CUDA_PRIORITY",
    "REGISTRY",
    "SIM_PRIORITY",
    "STATE",
    "active_gpu",
    "backend_for",
    "cpu_backend",
    "devices",
    "devices_reason",
    "disable_sim",
    "enable_sim",
    "note_pinned",
    "register_backend",
    "resolve_device",
    "sim_backend",
    "unregister_backend",
    "use_sim",
]

Probe = Callable[[], "tuple[Backend | None, str]"]

#: Priority of the CUDA backend (CuPy): the active GPU unless a kind ranks above it.
CUDA_PRIORITY = 0
#: Priority of the simulated GPU: above every built-in kind, so that enabling it makes it
#: the active GPU whatever else is usable (tests and benchmarks rely on that).
SIM_PRIORITY = 100
_SIM_OFF = "the simulated GPU is off (AUTODEV_SIMULATE_GPU=1 or autodev.testing.simulated_gpu())"
#: Kinds autodev itself registers: their probe can be replaced, they cannot be removed.
_BUILTIN = ("cuda", "sim")


class _Registry:
    """What is registered (probe and priority per kind) and what probing found.

    A kind is *probed* once it is in ``found`` (usable: its backend) or in ``reasons``
    (why not).
    """

    __slots__ = ("probes", "priorities", "found", "reasons", "by_device")

    def __init__(self) -> None:
        self.probes: dict[str, Probe] = {}
        self.priorities: dict[str, int] = {}
        self.found: dict[str, Backend] = {}
        self.reasons: dict[str, str] = {}
        self.by_device: dict[Device, Backend] = {}

    def ranked(self) -> list[str]:
        """Registered kinds, highest priority first (ties: the earlier registered)."""
        return sorted(self.probes, key=lambda kind: -self.priorities[kind])

    def is_probed(self, kind: str) -> bool:
        return kind in self.found or kind in self.reasons

    def forget(self, kind: str) -> None:
        """Forget what probing ``kind`` found (it is unprobed again)."""
        old = self.found.pop(kind, None)
        if old is not None:
            self.by_device.pop(old.device, None)
        self.reasons.pop(kind, None)

    def settle(self, kind: str, backend: Backend | None, reason: str) -> None:
        """Record what probing ``kind`` found: its backend, or why it is not usable."""
        self.forget(kind)
        if backend is not None:
            self.found[kind] = backend
            self.by_device[backend.device] = backend
        else:
            self.reasons[kind] = reason

    def probe(self, kind: str) -> None:
        """Run ``kind``'s probe and record what it found."""
        backend, reason = self.probes[kind]()
        if backend is not None and (not backend.is_gpu or backend.device.kind != kind):
            raise ValueError(
                f"the probe of device kind {kind!r} must return a GPU backend whose device "
                f"is of kind {kind!r} (is_gpu = True). Got {backend!r} on "
                f"{backend.device} instead."
            )
        self.settle(kind, backend, reason or "its probe found no usable device")

    def best(self) -> tuple[Backend | None, bool]:
        """The usable backend of highest priority among probed kinds, and whether that
        choice is settled (no unprobed kind ranks above it)."""
        for kind in self.ranked():
            if kind in self.found:
                return self.found[kind], True
            if kind not in self.reasons:
                return self._best_probed(), False
        return None, True

    def _best_probed(self) -> Backend | None:
        for kind in self.ranked():
            if kind in self.found:
                return self.found[kind]
        return None


class _State:
    """The flags the hot path reads on every call (attribute reads only).

    ``fast`` is True when no GPU is usable and nothing watches the calls: the
    array then runs NumPy directly, with no cost model at all.
    """

    __slots__ = ("fast", "host_fast", "host_made", "fusable", "gpu", "settled", "sim",
                 "watchers", "listeners", "pinned")

    def __init__(self) -> None:
        self.fast = False
        #: A GPU is usable but nothing watches and nothing is pinned: tiny elementwise calls
        #: on host data may skip the general path (a size check against the model's floor).
        self.host_fast = False
        #: ``host_fast``, or no GPU probed yet (nothing watching, nothing pinned): a creation
        #: call the policy makes on the host (``_config.MADE_ON_HOST``) needs no probe.
        self.host_made = False
        #: Nothing is pinned and the active GPU is known (a trace may watch): large
        #: elementwise calls on host data may be deferred (:mod:`autodev._fusion`; with a
        #: GPU usable, :mod:`autodev._chains` decides which, and where a chain runs).
        self.fusable = False
        #: The active GPU's backend (the usable kind of highest priority), or None.
        self.gpu: Backend | None = None
        #: No unprobed kind could outrank ``gpu``: :func:`active_gpu` needs no probing.
        self.settled = False
        #: The simulated GPU's backend while it is enabled, else None (read-only: derived
        #: from the registry; :func:`enable_sim` / :func:`disable_sim` change it).
        self.sim: Backend | None = None
        #: Active trace() blocks and AUTODEV_TRACE (kept by autodev._trace, mirrored here).
        self.watchers = 0
        #: Called after every refresh (modules that copy a flag into a global, caches
        #: that depend on the active GPU).
        self.listeners: list[Callable[[], None]] = []
        #: Some array was pinned (to_device, device=): the fast path, which knows no
        #: placement, is off from then on so that pinned results stay pinned.
        self.pinned = False

    def refresh(self) -> None:
        """Recompute the active GPU and the fast flags after any change."""
        self.gpu, self.settled = REGISTRY.best()
        self.sim = REGISTRY.found.get("sim")
        # Under AUTODEV_DEVICE=cpu nothing probes for a GPU (so CuPy is never imported)
        # until some context sets another policy; until then the host is all there is.
        settled = self.settled or ENV.device == "cpu"
        self.fast = settled and self.gpu is None and self.watchers == 0 and not self.pinned
        self.host_fast = self.gpu is not None and self.watchers == 0 and not self.pinned
        self.host_made = self.host_fast or (
            not settled and self.watchers == 0 and not self.pinned)
        self.fusable = self.settled and not self.pinned
        for listener in self.listeners:
            listener()


REGISTRY = _Registry()
STATE = _State()
_CPU_BACKEND = NumpyBackend()


def register_backend(kind: str, probe: Probe, priority: int = 0) -> None:
    """Register the GPU device kind ``kind``, or replace its probe.

    Parameters
    ----------
    kind : str
        A lowercase name (``"rocm"``); ``Device(kind, 0)`` and ``"kind:0"`` then
        work everywhere a device is taken. ``"auto"``, ``"cpu"`` and ``"gpu"`` are
        reserved (ValueError).
    probe : callable
        Called once, lazily, with no arguments: returns ``(backend, "")`` when the kind
        is usable here (a :class:`Backend` with ``is_gpu = True`` on a device of this
        kind), else ``(None, reason)``, the reason ``autodev.devices()`` shows.
    priority : int, optional
        Rank among usable kinds for the active GPU; the highest wins, ties go to the
        kind registered first. CUDA has :data:`CUDA_PRIORITY` (0), the simulated GPU
        :data:`SIM_PRIORITY` (100).
    """
    if not callable(probe):
        raise TypeError(f"probe must be callable, returning (backend, reason). "
                        f"Got {probe!r} instead.")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise TypeError(f"priority must be an int (higher wins). Got {priority!r} instead.")
    register_kind(kind)
    REGISTRY.probes[kind] = probe
    REGISTRY.priorities[kind] = priority
    REGISTRY.forget(kind)  # probed again, lazily, with the new probe
    STATE.refresh()


def unregister_backend(kind: str) -> None:
    """Remove a kind registered with :func:`register_backend` (not a built-in one)."""
    if kind in _BUILTIN:
        raise ValueError(f"device kind {kind!r} is built in and cannot be removed; "
                         "register_backend(kind, probe) replaces its probe instead.")
    if kind not in REGISTRY.probes:
        raise ValueError(f"device kind {kind!r} is not registered. "
                         f"Registered: {', '.join(REGISTRY.probes)}.")
    REGISTRY.forget(kind)
    del REGISTRY.probes[kind], REGISTRY.priorities[kind]
    unregister_kind(kind)
    STATE.refresh()


def _ensure_probed() -> None:
    """Probe every kind not probed yet (``devices()`` shows them all)."""
    unprobed = [kind for kind in REGISTRY.ranked() if not REGISTRY.is_probed(kind)]
    for kind in unprobed:
        REGISTRY.probe(kind)
    if unprobed:
        STATE.refresh()


def _settle_active() -> None:
    """Probe kinds from the highest priority down until one is usable. The flags are
    refreshed (and every listener told: the dispatcher drops its cost model) only when
    that changed something: a policy block calls this on entry."""
    probed = False
    for kind in REGISTRY.ranked():
        if not REGISTRY.is_probed(kind):
            REGISTRY.probe(kind)
            probed = True
        if kind in REGISTRY.found:
            break
    if probed or not STATE.settled:
        STATE.refresh()


def active_gpu() -> Backend | None:
    """The GPU backend calls may use (the usable kind of highest priority), or None."""
    if STATE.settled:
        return STATE.gpu
    _settle_active()
    return STATE.gpu


def cpu_backend() -> Backend:
    """The NumPy backend."""
    return _CPU_BACKEND


def backend_for(device: Device) -> Backend:
    """The backend that owns ``device``."""
    if device is CPU:
        return _CPU_BACKEND
    gpu = STATE.gpu  # the device nearly every GPU call names: no hashing (Device.__hash__)
    if gpu is not None and device is gpu.device:
        return gpu
    backend = REGISTRY.by_device.get(device)
    if backend is not None:
        return backend
    if device.kind in REGISTRY.probes and not REGISTRY.is_probed(device.kind):
        REGISTRY.probe(device.kind)
        STATE.refresh()
        backend = REGISTRY.by_device.get(device)
        if backend is not None:
            return backend
    raise RuntimeError(
        f"device {device} is not usable: {devices_reason(device)}. "
        "Run `autodev doctor` to see why."
    )


def devices_reason(device: Device) -> str:
    """Why ``device`` is not usable (empty if it is)."""
    if device is CPU or device is AUTO or device in REGISTRY.by_device:
        return ""
    if device.kind in REGISTRY.probes and not REGISTRY.is_probed(device.kind):
        REGISTRY.probe(device.kind)
        STATE.refresh()
    found = REGISTRY.found.get(device.kind)
    if found is not None:
        return "" if found.device is device else f"no such device (its kind has {found.device})"
    return REGISTRY.reasons.get(device.kind, "no such device")


def note_pinned() -> None:
    """Record that an array was pinned (turns the placement-blind fast path off)."""
    if not STATE.pinned:
        STATE.pinned = True
        STATE.refresh()


def resolve_device(spec: Device | str, *, counted: bool = False) -> Device:
    """Resolve a device asked for (``to_device``, ``device=``) and check that it is usable.

    ``"auto"`` is :data:`AUTO`, the placement, always usable. ``"gpu"`` is the active
    GPU; where none is usable it is :data:`AUTO` too, so that a program written for a
    GPU runs on the CPU, counted and warned about once (``AUTODEV_FALLBACK=raise``: a
    RuntimeError). While the simulated GPU is on it stands in for CUDA: ``"cuda"`` and
    ``"cuda:0"`` name it, as ``"gpu"`` does. A named device that is not usable (``cuda:1``
    on a one-GPU machine, ``cuda:0`` with no GPU) raises RuntimeError saying why.
    ``counted=True``: the caller resolved ``spec`` before, which counted any fallback.
    """
    if isinstance(spec, str) and spec.strip().lower() == "gpu":
        return _resolve_gpu(counted)
    device = parse_device(spec)
    if device.kind == "cuda" and device.index == 0 and "sim" in REGISTRY.found:
        return REGISTRY.found["sim"].device
    if device is not AUTO:
        backend_for(device)
    return device


def _resolve_gpu(counted: bool) -> Device:
    """The active GPU's device; :data:`AUTO` (counted, warned) where none is usable."""
    gpu = active_gpu()
    if gpu is not None:
        return gpu.device
    if counted:
        return AUTO
    if ENV.fallback == "raise":
        raise RuntimeError(f"no GPU is usable: {_why_no_gpu()}. Run `autodev doctor` to see "
                           "what to install (AUTODEV_FALLBACK=raise makes this an error).")
    note_no_gpu(_why_no_gpu())
    return AUTO


def _why_no_gpu() -> str:
    """Why each registered kind but the simulated GPU is not usable (with only CUDA
    registered, as usual, just CUDA's reason)."""
    kinds = [kind for kind in REGISTRY.ranked() if kind != "sim" and kind in REGISTRY.reasons]
    if len(kinds) == 1:
        return REGISTRY.reasons[kinds[0]]
    return "; ".join(f"{kind}: {REGISTRY.reasons[kind]}" for kind in kinds) \
        or "no GPU backend is registered"


def devices() -> list[dict[str, Any]]:
    """List every known device: ``{"device", "usable", "reason"}`` each, ``auto`` first,
    then the CPU, then the registered kinds from the highest priority down."""
    _ensure_probed()
    out: list[dict[str, Any]] = [
        {"device": AUTO, "usable": True, "reason": "autodev places the array (the default)"},
        {"device": CPU, "usable": True, "reason": ""},
    ]
    for kind in REGISTRY.ranked():
        backend = REGISTRY.found.get(kind)
        if kind == "sim":  # listed only while on: a test device, not something to install
            if backend is not None:
                out.append({"device": backend.device, "usable": True, "reason": "simulated"})
        elif backend is not None:
            out.append({"device": backend.device, "usable": True, "reason": ""})
        else:
            out.append({"device": Device(kind, 0), "usable": False,
                        "reason": REGISTRY.reasons.get(kind, "")})
    return out


def sim_backend() -> SimBackend | None:
    """The simulated GPU's backend while it is enabled, else None."""
    backend = REGISTRY.found.get("sim")
    return backend if backend is not None and backend.device.kind == "sim" else None  # type: ignore[return-value]


def use_sim(backend: SimBackend | None) -> None:
    """Make ``backend`` the simulated GPU (None turns it off): the sim kind's probe result."""
    REGISTRY.settle("sim", backend, _SIM_OFF)
    STATE.refresh()


def enable_sim(costs: dict[str, Any] | None = None) -> SimBackend:
    """Turn on the simulated GPU ``sim:0`` (it becomes the active GPU)."""
    from ._sim import SimBackend

    backend = SimBackend(costs)
    use_sim(backend)
    return backend


def disable_sim() -> None:
    """Turn the simulated GPU off again."""
    use_sim(None)


def _probe_cuda() -> tuple[Backend | None, str]:
    from ._cupy import CupyBackend, probe_cuda

    cupy, reason = probe_cuda()
    return (CupyBackend(cupy, 0), "") if cupy is not None else (None, reason)


def _probe_sim() -> tuple[Backend | None, str]:
    # The environment turns it on; enable_sim/disable_sim settle it directly afterwards.
    if not ENV.simulate_gpu:
        return None, _SIM_OFF
    from ._sim import SimBackend  # (loaded only when on: import time)

    return SimBackend(), ""


def _set_watchers(count: int) -> None:
    STATE.watchers = count
    STATE.refresh()


register_backend("cuda", _probe_cuda, priority=CUDA_PRIORITY)
register_backend("sim", _probe_sim, priority=SIM_PRIORITY)
REGISTRY.probe("sim")  # no I/O, no import: the active GPU is known at once when it is on
on_watchers(_set_watchers)
POLICY_HOOKS.append(lambda policy: _settle_active())
