"""Calibration: measure this machine, fit its cost curves, check them, write the profile.

For every workload (one call per cost family, :mod:`autodev._calibrate.workloads`) and
dtype class, a ladder of sizes is timed on every usable device with the one
timing primitive (:func:`autodev._calibrate.timing.measure`: warm-up, synchronisation
inside the timed region, repeats, median, outlier rejection). A ladder stops
early once the GPU has been faster by a wide margin twice running (the
crossover is behind it), once one call takes too long, or when its share of the
time budget is spent. Transfers are timed the same way. Each curve
``t = latency + work / throughput`` is fitted by non-negative least squares on
relative error (small sizes matter as much as large ones for a crossover).
Then, at sizes no curve was fitted on, the fitted model predicts which device
wins and both are measured: the share it got right is the self-check.

Wall time on the GPU includes the per-call host overhead (Python, CuPy, kernel
launch), which is what the dispatcher must predict; CUDA event timing would
leave it out.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from .._backends import Backend
from .._cost import fingerprint as _fingerprint
from .._cost import profile as _profile
from .._cost.model import CostModel
from .curves import crossover_size, crossover_table, fit_curve, near
from .timing import measure
from .workloads import DTYPES, WORKLOADS, Workload

Progress = Callable[[float, str], None]

#: The GPU faster by this factor at two sizes running ends a ladder.
WIDE_MARGIN = 8.0
#: Self-check: a choice within this factor of the faster device counts as a tie.
TIE = 1.10
#: Shares of the time budget (the self-check gets what is left); threads' is spent after.
_SHARES = {"transfer": 0.08, "ladders": 0.72, "threads": 0.12, "fusion": 0.05}


@dataclass(frozen=True)
class Settings:
    """How hard to measure (``--quick`` or full) and what."""

    quick: bool
    max_seconds: float
    ops: tuple[str, ...]
    dtypes: tuple[str, ...]
    step: float            # ladder ratio for element counts (matrix sides: its square root)
    point_budget: float    # seconds of repeats per timed point
    max_repeats: int
    max_point: float       # a call slower than this ends its ladder
    max_bytes: int         # inputs larger than this end a ladder
    checks_per_ladder: int


def make_settings(quick: bool = False, max_seconds: float | None = None,
                  ops: Iterable[str] | None = None,
                  dtypes: Iterable[str] | None = None) -> Settings:
    """Validated settings; raises ValueError naming the bad value and the choices."""
    chosen_ops = tuple(ops) if ops else tuple(WORKLOADS)
    unknown = [o for o in chosen_ops if o not in WORKLOADS]
    if unknown:
        raise ValueError(f"ops must be among {', '.join(WORKLOADS)}. Got {', '.join(unknown)} instead.")
    chosen_dtypes = tuple(dtypes) if dtypes else (("f32", "f64") if quick else tuple(DTYPES))
    unknown = [d for d in chosen_dtypes if d not in DTYPES]
    if unknown:
        raise ValueError(f"dtypes must be among {', '.join(DTYPES)}. Got {', '.join(unknown)} instead.")
    seconds = float(max_seconds) if max_seconds is not None else (6.0 if quick else 50.0)
    if not math.isfinite(seconds) or seconds <= 0:
        raise ValueError(f"max_seconds must be a positive number. Got {max_seconds!r} instead.")
    return Settings(
        quick=quick, max_seconds=seconds, ops=chosen_ops, dtypes=chosen_dtypes,
        step=4.0 if quick else 2.0, point_budget=0.01 if quick else 0.05,
        max_repeats=15 if quick else 40, max_point=0.03 if quick else 0.25,
        max_bytes=(64 if quick else 512) * 2**20, checks_per_ladder=3 if quick else 6,
    )


# --------------------------------------------------------------------------- measuring

@dataclass
class _Target:
    device_class: str
    backend: Backend
    clock: Callable[[], float]


@dataclass
class _Run:
    """State of one calibration run."""

    settings: Settings
    targets: list[_Target]
    progress: Progress
    #: The clock the time budget is spent on: the devices' virtual clocks when every
    #: device has one (simulated devices: the same run on a busy machine and an idle one
    #: takes the same decisions), else the wall clock.
    clock: Callable[[], float] = time.perf_counter
    started: float = 0.0
    steps_done: int = 0
    steps_total: int = 1

    def __post_init__(self) -> None:
        self.started = self.clock()

    def now(self) -> float:
        return self.clock()

    def elapsed(self) -> float:
        return self.clock() - self.started

    def step(self, label: str) -> None:
        self.steps_done += 1
        self.progress(min(self.steps_done / self.steps_total, 1.0), label)

    def time_call(self, target: _Target, workload: Workload, host: list[Any],
                  on_device: bool = True, expected: float | None = None) -> float | None:
        """Typical seconds of one call on ``target`` (None: out of device memory).

        A time more than 4x ``expected`` is measured again and the lower kept:
        a burst of contention can slow every repeat of one short point.
        """
        seconds = self._time_once(target, workload, host, on_device)
        if seconds is not None and expected and seconds > 4 * expected:
            again = self._time_once(target, workload, host, on_device)
            seconds = min(seconds, again) if again is not None else None
        return seconds

    def _time_once(self, target: _Target, workload: Workload, host: list[Any],
                   on_device: bool) -> float | None:
        backend = target.backend
        func = workload.function(backend)
        assert func is not None  # _usable keeps only the targets that have the function
        settings = self.settings
        try:
            if on_device:
                args = workload.to_device(backend, host)
                call = lambda: func(*args)  # noqa: E731
            else:
                call = lambda: func(*workload.to_device(backend, host))  # noqa: E731
            timing = measure(call, backend.synchronize, warmup=1, min_repeats=3,
                             max_repeats=settings.max_repeats, budget=settings.point_budget,
                             clock=target.clock)
        except backend.oom_errors:
            backend.free_memory()
            return None
        return typical(timing.times)


def typical(times: list[float]) -> float:
    """The median of the faster half of the samples.

    On a shared or small machine, bursts of contention (other processes, BLAS
    threads waking up) can slow more than half the repeats of one point by
    100x, which no outlier band around the median survives; the faster half is
    what the machine does when it is not disturbed.
    """
    ordered = sorted(times)
    return float(np.median(ordered[: max(len(ordered) // 2, 1)]))


def _ladder(workload: Workload, step: float) -> list[int]:
    ratio = math.sqrt(step) if workload.matrix else step
    count = int(math.log(workload.largest / workload.smallest, ratio)) + 1
    sizes = (workload.nice_size(workload.smallest * ratio**k) for k in range(count))
    return sorted(set(sizes))


def _usable(run: _Run, workload: Workload, dclass: str) -> list[_Target]:
    dtype = DTYPES[dclass]
    return [t for t in run.targets
            if workload.function(t.backend) is not None and t.backend.supports_dtype(dtype)]


def _measure_ladder(run: _Run, workload: Workload, dclass: str, deadline: float
                    ) -> dict[str, dict[str, list[float]]]:
    """Time ``workload`` at growing sizes on every usable device; return the series."""
    settings = run.settings
    dtype = DTYPES[dclass]
    targets = _usable(run, workload, dclass)
    series: dict[str, dict[str, list[float]]] = {
        t.device_class: {"n": [], "work": [], "seconds": []} for t in targets}
    rng = np.random.default_rng(0)
    gpu_ahead = 0
    sizes = _ladder(workload, settings.step)
    last_cost = 0.0
    for index, n in enumerate(sizes):
        grows = workload.work(n) / workload.work(sizes[index - 1]) if index else 1.0
        if workload.nbytes(n, dtype.itemsize) > settings.max_bytes or \
                (index >= 3 and run.now() + last_cost * grows > deadline):
            break
        began = run.now()
        host = workload.make(n, dtype, rng)
        times: dict[str, float] = {}
        for target in targets:
            before = series[target.device_class]["seconds"]
            seconds = run.time_call(target, workload, host,
                                    expected=before[-1] * grows if before else None)
            if seconds is None:
                return series
            times[target.device_class] = seconds
            entry = series[target.device_class]
            entry["n"].append(n)
            entry["work"].append(float(workload.work(n)))
            entry["seconds"].append(seconds)
        gpu_ahead = gpu_ahead + 1 if times.get("cpu", 0) > WIDE_MARGIN * times.get("gpu", math.inf) \
            else 0
        last_cost = run.now() - began
        if max(times.values(), default=0) > settings.max_point or gpu_ahead >= 2:
            break
    return series


def _measure_transfers(run: _Run, gpu: _Target, deadline: float
                       ) -> dict[str, dict[str, list[float]]]:
    """Host<->device copies at growing sizes: pageable, and pinned on CUDA."""
    backend = gpu.backend
    links: dict[str, dict[str, list[float]]] = {}
    nbytes = 2**10
    while nbytes <= run.settings.max_bytes:
        host = np.ones(nbytes // 8)
        device = backend.from_host(host)
        calls = {"h2d": lambda: backend.from_host(host), "d2h": lambda: backend.to_host(device)}
        if backend.device.kind == "cuda":
            calls.update(_pinned_calls(backend, host, device))
        for link, call in calls.items():
            timing = measure(call, backend.synchronize, warmup=1, min_repeats=3,
                             max_repeats=run.settings.max_repeats,
                             budget=run.settings.point_budget, clock=gpu.clock)
            entry = links.setdefault(link, {"bytes": [], "seconds": []})
            entry["bytes"].append(float(nbytes))
            entry["seconds"].append(timing.median)
        if run.now() > deadline and nbytes >= 2**20:
            break
        nbytes *= 8 if run.settings.quick else 4
    return links


def _pinned_calls(backend: Backend, host: np.ndarray, device: Any) -> dict[str, Callable[[], Any]]:
    """Copies through page-locked host memory (CUDA only)."""
    import cupyx

    pinned = cupyx.empty_pinned(host.shape, host.dtype)
    pinned[...] = host
    return {"h2d_pinned": lambda: device.set(pinned), "d2h_pinned": lambda: device.get(out=pinned)}


# --------------------------------------------------------------------------- self-check

def _check_sizes(workload: Workload, measured: list[float], model: CostModel, dclass: str,
                 count: int) -> list[int]:
    """Sizes between ladder points: the one nearest the predicted crossover, then
    others spread evenly over the measured range."""
    middles = sorted({workload.nice_size(math.sqrt(a * b)) for a, b in zip(measured, measured[1:])}
                     - {int(n) for n in measured})
    if not middles:  # a ladder cut short by the budget: check just beyond it instead
        beyond = workload.nice_size(measured[-1] * 1.5) if measured else 0
        middles = [beyond] if beyond and beyond not in {int(n) for n in measured} else []
    if not middles:
        return []
    cross = crossover_size(model, workload, dclass, host_data=False) \
        if model.has("gpu", workload.family) else None
    centre = cross if cross is not None else math.sqrt(measured[0] * measured[-1])
    first = min(middles, key=lambda n: abs(math.log(n / centre)))
    spread = [middles[int(i)] for i in np.linspace(0, len(middles) - 1, count)]
    return list(dict.fromkeys([first, *spread]))[:count]


def _self_check(run: _Run, model: CostModel, ladders: list[tuple[Workload, str, list[float]]],
                deadline: float) -> list[dict[str, Any]]:
    """Predict and measure at unfitted sizes, round-robin over ladders until the deadline."""
    per_ladder = [[(w, d, n) for n in _check_sizes(w, measured, model, d,
                                                   run.settings.checks_per_ladder)]
                  for w, d, measured in ladders]
    # round-robin: every ladder gets its size nearest the crossover checked first
    queue = [item for k in range(run.settings.checks_per_ladder)
             for sizes in per_ladder if k < len(sizes) for item in [sizes[k]]]
    checks: list[dict[str, Any]] = []
    rng = np.random.default_rng(1)
    first_round = sum(1 for sizes in per_ladder if sizes)
    for index, (workload, dclass, n) in enumerate(queue):
        # the first round (each ladder's size nearest its crossover) always runs, so a
        # loaded machine that spent the budget still gets a self-check
        if index >= first_round and run.now() > deadline:
            break
        checks.extend(_check_one(run, model, workload, dclass, n, rng))
    return checks


def _check_one(run: _Run, model: CostModel, workload: Workload, dclass: str, n: int,
               rng: np.random.Generator) -> list[dict[str, Any]]:
    dtype = DTYPES[dclass]
    host = workload.make(n, dtype, rng)
    work = workload.work(n)
    measured: dict[str, float] = {}
    on_device = dict(zip(("cpu", "gpu"), model.predict(workload.family, dclass, work)))
    predicted: dict[str, float] = {}
    for target in _usable(run, workload, dclass):
        cls = target.device_class
        predicted[cls] = on_device[cls]
        seconds = run.time_call(target, workload, host, expected=predicted[cls])
        if seconds is None:
            return []
        measured[cls] = seconds
    base = {"family": workload.family, "dtype": dclass, "n": n}
    found = [dict(base, resident="device", predicted=predicted, measured=measured)]
    gpu = next((t for t in run.targets if t.device_class == "gpu"), None)
    if gpu is not None and "gpu" in measured:
        cpu, hosted = model.predict(workload.family, dclass, work,
                                    h2d=(int(workload.nbytes(n, dtype.itemsize)),))
        seconds = run.time_call(gpu, workload, host, on_device=False, expected=hosted)
        if seconds is not None:
            found.append(dict(base, resident="host",
                              predicted={"cpu": cpu, "gpu": hosted},
                              measured={"cpu": measured["cpu"], "gpu": seconds}))
    return found


def summarize_checks(checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The self-check's figures: decisions right (strictly, and within 10 %), and
    the median relative error of the predicted times."""
    errors = [abs(c["predicted"][d] - t) / t for c in checks for d, t in c["measured"].items()
              if t > 0]
    summary: dict[str, Any] = {
        "points": len(checks),
        "median_time_error": float(np.median(errors)) if errors else None,
    }
    decisions = [c for c in checks if len(c["measured"]) == 2]
    if decisions:
        right = [min(c["predicted"], key=c["predicted"].get) == min(c["measured"], key=c["measured"].get)
                 for c in decisions]
        near = [c["measured"][min(c["predicted"], key=c["predicted"].get)]
                <= TIE * min(c["measured"].values()) for c in decisions]
        summary.update(decisions=len(decisions), correct=sum(right),
                       share=sum(right) / len(decisions), share_within_10pct=sum(near) / len(decisions))
    return summary


# --------------------------------------------------------------------------- the run

def calibrate(output: str | Path | None = None, *, quick: bool = False,
              ops: Iterable[str] | None = None, dtypes: Iterable[str] | None = None,
              max_seconds: float | None = None, write: bool = True,
              progress: Progress | None = None,
              backends: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Measure this machine and write its profile; return the profile.

    Parameters
    ----------
    output : path, optional
        Where to write (default: ``AUTODEV_PROFILE``, else the user cache dir).
    quick : bool
        About 10 seconds: float32/float64 only, coarser ladders, fewer repeats.
    ops : iterable of str, optional
        Families to measure (default all; see ``autodev._calibrate.workloads.WORKLOADS``).
        Families not measured keep the curves of the current matching profile,
        else the embedded default's.
    dtypes : iterable of str, optional
        Dtype classes among ``f32 f64 c64 c128``.
    max_seconds : float, optional
        Time budget for measuring (default 6 quick, 50 full).
    write : bool
        Write the profile atomically (an interrupted run leaves the old one).
    progress : callable, optional
        ``progress(fraction, label)`` after each step.
    backends : mapping, optional
        ``{"cpu": backend, "gpu": backend}`` to measure instead of this
        machine's (tests pass simulated devices with known curves).
    """
    from .._backends import active_gpu, cpu_backend

    settings = make_settings(quick, max_seconds, ops, dtypes)
    if backends is None:
        gpu_backend = active_gpu()
        backends = {"cpu": cpu_backend(), **({"gpu": gpu_backend} if gpu_backend else {})}
    targets = [_Target(cls, b, getattr(b, "clock", None) or time.perf_counter)
               for cls, b in backends.items()]
    virtual = all(getattr(b, "clock", None) is not None for b in backends.values())
    budget_clock = (lambda: sum(t.clock() for t in targets)) if virtual else time.perf_counter
    run = _Run(settings, targets, progress or (lambda fraction, label: None), budget_clock)
    profile = _measure_all(run, backends.get("gpu"))
    if write:
        target = _profile.write(profile, output)
        profile["report"]["path"] = str(target)  # (the dispatcher hears of the new profile)
    return profile


def _measure_all(run: _Run, gpu_backend: Backend | None) -> dict[str, Any]:
    settings = run.settings
    ladders = [(WORKLOADS[f], d) for f in settings.ops for d in WORKLOADS[f].dtypes
               if d in settings.dtypes]
    gpu = next((t for t in run.targets if t.device_class == "gpu"), None)
    run.steps_total = len(ladders) + 2
    measurements: dict[str, Any] = {t.device_class: {} for t in run.targets}
    devices: dict[str, Any] = {t.device_class: {"compute": {}} for t in run.targets}
    if gpu is not None:
        links = _measure_transfers(run, gpu,
                                   run.started + settings.max_seconds * _SHARES["transfer"])
        measurements["transfer"] = links
        devices["gpu"]["transfer"] = {
            link: _link(fit_curve(s["bytes"], s["seconds"])[0]) for link, s in links.items()}
    run.step("transfers" if gpu is not None else "no GPU: CPU only")
    found: list[tuple[Workload, str, dict[str, dict[str, list[float]]]]] = []
    ladder_end = settings.max_seconds * (_SHARES["transfer"] + _SHARES["ladders"])
    for index, (workload, dclass) in enumerate(ladders):
        share = (ladder_end - run.elapsed()) / (len(ladders) - index)
        series = _measure_ladder(run, workload, dclass, run.now() + max(share, 0))
        series = {cls: points for cls, points in series.items() if len(points["n"]) >= 2}
        if series:
            found.append((workload, dclass, series))
            for cls, points in series.items():
                measurements[cls].setdefault(workload.family, {})[dclass] = points
        run.step(f"{workload.family} {dclass}")
    fit_error = _fit_all(devices, found, None)
    if gpu is not None:  # refit, weighing the points near each crossover more
        model = CostModel(_complete(devices, True))
        fit_error = _fit_all(devices, found, model)
    checked = [(w, d, next(iter(series.values()))["n"]) for w, d, series in found]
    devices = _complete(devices, gpu is not None)
    model = CostModel(devices)
    checks = _self_check(run, model, checked, run.started + settings.max_seconds)
    run.step("self-check")
    measured = sorted({w.family for w, _, _ in found})
    profile = _assemble(run, devices, measurements, fit_error, checks, gpu_backend, measured)
    profile["threads"] = _threads(run, measured)
    profile["fusion"] = _fusion_section(run, measured)
    return profile


def _fusion_section(run: _Run, measured: list[str]) -> dict[str, Any]:
    """Where deferring elementwise chains pays on the host (:mod:`autodev._calibrate.fusion`),
    measured when the elementwise family is calibrated on this machine's NumPy; else the
    matching profile's section, kept (none: the embedded default floor)."""
    from .._backends import cpu_backend
    from .fusion import measure_fusion

    cpu = next((t for t in run.targets if t.device_class == "cpu"), None)
    if cpu is None or cpu.backend is not cpu_backend() or "elementwise" not in measured:
        return _profile.resolve().profile.get("fusion") or {"floor": _fusion_default()}
    return measure_fusion(run.settings.max_seconds * _SHARES["fusion"], run.settings.quick)


def _fusion_default() -> int:
    from .._fusion import DEFAULT_FLOOR

    return DEFAULT_FLOOR


def _threads(run: _Run, measured: list[str]) -> dict[str, Any]:
    """Where threads pay on the host (:mod:`autodev._calibrate.threads`), measured when a
    family they split is calibrated on this machine's NumPy; else the matching profile's
    (or the embedded default's) section, kept."""
    from .._backends import cpu_backend
    from .threads import measure_threads

    cpu = next((t for t in run.targets if t.device_class == "cpu"), None)
    if cpu is None or cpu.backend is not cpu_backend() or not {
            "elementwise", "transcendental", "reduction"} & set(measured):
        return _profile.resolve().profile.get("threads") \
            or _profile.embedded_default()["threads"]
    return measure_threads(run.settings.max_seconds * _SHARES["threads"], run.settings.quick)


def _fit_all(devices: dict[str, Any], found: list[tuple[Workload, str, dict[str, Any]]],
             model: CostModel | None) -> dict[str, Any]:
    """Fit every measured series into ``devices``; return the fits' largest errors."""
    errors: dict[str, Any] = {}
    for workload, dclass, series in found:
        centres = [crossover_size(model, workload, dclass, host) for host in (True, False)] \
            if model is not None else []
        for cls, points in series.items():
            curve, error = fit_curve(points["work"], points["seconds"],
                                     near(points["n"], centres))
            devices[cls]["compute"].setdefault(workload.family, {})[dclass] = curve
            errors.setdefault(cls, {}).setdefault(workload.family, {})[dclass] = round(error, 4)
    return errors


def _link(curve: dict[str, float]) -> dict[str, float]:
    return {"latency": curve["latency"], "bandwidth": curve["throughput"]}


def _complete(devices: dict[str, Any], has_gpu: bool) -> dict[str, Any]:
    """Fill families not measured now from the matching profile, else the default."""
    base = _profile.resolve().profile["devices"]
    default = _profile.embedded_default()["devices"]
    for cls in ("cpu", "gpu") if has_gpu else ("cpu",):
        entry = devices.setdefault(cls, {"compute": {}})
        for source in (base.get(cls, {}), default[cls]):
            for family, curves in source.get("compute", {}).items():
                merged = entry["compute"].setdefault(family, {})
                for dclass, curve in curves.items():
                    merged.setdefault(dclass, curve)
            if cls == "gpu":
                for link, curve in source.get("transfer", {}).items():
                    entry.setdefault("transfer", {}).setdefault(link, curve)
    return devices


def _assemble(run: _Run, devices: dict[str, Any], measurements: dict[str, Any],
              fit_error: dict[str, Any], checks: list[dict[str, Any]], gpu_backend: Backend | None,
              measured: list[str]) -> dict[str, Any]:
    settings = run.settings
    has_gpu = "gpu" in devices
    report: dict[str, Any] = {
        "seconds": round(run.elapsed(), 2),
        "mode": "quick" if settings.quick else "full",
        "measured": measured,
        "dtypes": list(settings.dtypes),
        "devices": {t.device_class: str(t.backend.device) for t in run.targets},
        "fit_max_relative_error": fit_error,
        "selfcheck": summarize_checks(checks),
        "crossovers": crossover_table(devices, measured, settings.dtypes),
    }
    if not has_gpu:
        report["note"] = ("No GPU is usable here: measured the CPU only, so there is "
                          "nothing to choose between; every call runs on NumPy.")
    return {
        "format": _profile.FORMAT,
        "version": _profile.VERSION,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "source": "calibrated",
        "note": f"Measured by `autodev calibrate{' --quick' if settings.quick else ''}`.",
        "fingerprint": _fingerprint.machine(gpu_backend),
        "devices": devices,
        "measurements": measurements,
        "report": report,
    }
