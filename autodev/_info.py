"""What autodev believes about this machine, as data: ``autodev.info()``.

The devices (and why any is unusable), the profile in use (file, age,
calibrated or the embedded default, whether its fingerprint matches this
machine) and the crossover table: per family and dtype, the smallest size at
which the GPU is predicted faster, for data on the host (copy included) and
data already on the GPU. ``autodev info`` (:mod:`autodev._cli.info`) prints it.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the profile module loads on first use
    from ._cost.profile import Resolution


def info(path: str | Path | None = None) -> dict[str, Any]:
    """Devices, the profile in use and the crossover table, as a JSON-ready dict.

    Parameters
    ----------
    path : path, optional
        Describe this profile file instead of the one autodev would use.
    """
    from ._backends import STATE, active_gpu, devices as _devices
    from ._config import SPEEDUPS_STATUS, VERSION
    from ._cost import fingerprint as _fingerprint, profile as _profile
    from ._calibrate.curves import crossover_table

    gpu = active_gpu()
    found = _profile.resolve(path, gpu)
    profile = found.profile
    devices = [{"device": str(d["device"]), "usable": d["usable"], "reason": d["reason"]}
               for d in _devices()]
    return {
        "version": VERSION,
        "compiled_hot_path": SPEEDUPS_STATUS,
        "host_pool": _host_pool(),
        "devices": devices,
        "gpu": str(gpu.device) if gpu is not None else None,
        "simulated_gpu": STATE.sim is not None,
        "cache_dir": str(_profile.cache_dir()),
        "profile": _describe(found),
        "machine": _fingerprint.machine(gpu),
        "crossovers": _rounded(crossover_table(with_gpu_curves(profile))),
        "crossovers_from": "GPU curves measured" if "gpu" in profile["devices"] and
        found.source == "calibrated" else "GPU curves of the embedded default",
        "threads": _threads(profile),
        "fusion": _fusion(),
    }


def _host_pool() -> dict[str, Any]:
    """The host buffer pool: ``on`` or why it is absent, its bound and threshold (bytes)."""
    from . import _host_buffers

    found = _host_buffers.counters()
    return {k: found[k] for k in ("status", "limit", "threshold")}
def _fusion() -> dict[str, Any]:
    """Deferred elementwise chains on the host: the floor in force (elements; None: off)
    and the elements of one block of their pass, on one thread and split over threads (the
    profile's, else the defaults)."""
    from . import _blocked as B, _fusion as F

    floor = F.floor()
    return {"floor": None if floor == F.NEVER else floor, "block": B.BLOCK,
            "threaded_block": B.THREADED_BLOCK,
            "rule": "elementwise calls with at least floor elements are deferred and "
                    "run in one pass over blocks of block elements (threaded_block where "
                    "the pass is split over threads); AUTODEV_FUSE=0 turns it off"}


def _threads(profile: dict[str, Any]) -> dict[str, Any]:
    """Threads on the host: how many a large call may use now, the profile's crossovers
    (work, per family) and the floors they give with that many threads (None: never)."""
    from . import _threads as threads
    from ._cost import profile as _profile

    section = profile.get("threads") or _profile.embedded_default()["threads"]
    crossover = {f: section["crossover"].get(f) for f in threads.FAMILIES}
    floors = threads.floors_for(crossover, threads.POOL.threads)
    return {
        "count": threads.POOL.threads,
        "measured_with": section.get("count"),
        "crossover": crossover,
        "floors": {f: None if n == threads.NEVER else n for f, n in floors.items()},
        # a sum or product over every axis (autodev._parallel.total_call)
        "total": None if floors["reduction"] == threads.NEVER
        else threads.TOTAL_FLOORS * floors["reduction"],
        "rule": "only calls made on the main thread are split",
    }


def with_gpu_curves(profile: dict[str, Any]) -> dict[str, Any]:
    """The profile's ``devices``, with the embedded default's GPU curves where it has
    none (a CPU-only calibration): what a GPU of the default's class would do here."""
    from ._cost import profile as _profile

    devices = dict(profile["devices"])
    devices.setdefault("gpu", _profile.embedded_default()["devices"]["gpu"])
    return devices


def _describe(found: Resolution) -> dict[str, Any]:
    profile = found.profile
    report = profile.get("report", {})
    created = profile.get("created")
    age = None
    if isinstance(created, str):
        try:
            stamp = datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
            age = max(time.time() - stamp.timestamp(), 0.0)
        except ValueError:
            age = None
    return {
        "source": found.source,
        "path": str(found.path),
        "exists": found.exists,
        "used": str(found.used) if found.used else None,
        "problem": found.problem,
        "fingerprint": found.fingerprint,
        "gpu_fingerprint": found.gpu_fingerprint,
        "created": created,
        "age_seconds": round(age) if age is not None else None,
        "mode": report.get("mode"),
        "calibration_seconds": report.get("seconds"),
        "measured_on": report.get("devices"),
        "measured": report.get("measured", []),
        "selfcheck": report.get("selfcheck"),
    }


def _rounded(table: dict[str, Any]) -> dict[str, Any]:
    return {family: {k: ({side: (round(n) if n else None) for side, n in v.items()}
                         if isinstance(v, dict) else v) for k, v in row.items()}
            for family, row in table.items()}
