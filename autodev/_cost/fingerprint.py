"""Machine fingerprints: what a calibrated profile was measured on.

A profile is used only on the machine it describes. The CPU part (CPU model and
cores, NumPy/SciPy versions and their BLAS) is cheap to read and is checked when
the profile is loaded; the GPU part (name, memory, driver, CUDA runtime, CuPy)
is read only from a GPU backend that has already been probed, so checking it
never imports CuPy by itself.
"""

from __future__ import annotations

import functools
import os
import platform
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from .._device import Device

#: Keys recorded for information but not compared (they vary run to run).
INFORMATIONAL = frozenset({"blas_threads", "threads_source"})


@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's marketing name (``/proc/cpuinfo`` on Linux, else ``platform``)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text(errors="replace").splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.partition(":")[2].strip()
    return platform.processor() or platform.machine() or "unknown"


def blas_info() -> dict[str, Any]:
    """The BLAS NumPy uses and its thread count (threadpoolctl if installed)."""
    import numpy as np

    config = np.show_config(mode="dicts") or {}
    blas = config.get("Build Dependencies", {}).get("blas", {})
    info: dict[str, Any] = {"blas": f"{blas.get('name', 'unknown')} {blas.get('version', '')}".strip()}
    if "threadpoolctl" in sys.modules or _installed("threadpoolctl"):
        from threadpoolctl import threadpool_info

        threads = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
        info["blas_threads"], info["threads_source"] = max(threads, default=None), "threadpoolctl"
        return info
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if os.environ.get(var, "").isdigit():
            info["blas_threads"], info["threads_source"] = int(os.environ[var]), var
            return info
    info["blas_threads"], info["threads_source"] = os.cpu_count(), "cpu count (BLAS default)"
    return info


def _installed(name: str) -> bool:
    try:
        metadata.version(name)
    except metadata.PackageNotFoundError:
        return False
    return True


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def host() -> dict[str, Any]:
    """The CPU part: ``{"cpu": {...}, "libraries": {...}}``."""
    blas = blas_info()
    import numpy as np

    return {
        "cpu": {"model": cpu_model(), "cores": os.cpu_count() or 0,
                "machine": platform.machine(),
                "blas_threads": blas["blas_threads"], "threads_source": blas["threads_source"]},
        "libraries": {"numpy": np.__version__, "scipy": _version("scipy"),
                      "blas": blas["blas"], "python": platform.python_version()},
    }


class GpuBackend(Protocol):
    """What a fingerprint reads of a probed GPU backend (every ``Backend`` has it);
    a protocol because the cost model sits below the backends."""

    @property
    def device(self) -> Device: ...

    @property
    def xp(self) -> Any: ...  # the CuPy module: untyped


def gpu(backend: GpuBackend | None) -> dict[str, Any] | None:
    """The GPU part for a probed GPU backend, or None for none."""
    if backend is None:
        return None
    if backend.device.kind == "sim":
        return {"name": "simulated GPU", "device": str(backend.device)}
    cupy = backend.xp
    index = backend.device.index
    props = cupy.cuda.runtime.getDeviceProperties(index)
    name = props["name"]
    return {
        "name": name.decode() if isinstance(name, bytes) else str(name),
        "device": str(backend.device),
        "memory": int(props["totalGlobalMem"]),
        "compute_capability": f"{props['major']}.{props['minor']}",
        "driver": int(cupy.cuda.runtime.driverGetVersion()),
        "runtime": int(cupy.cuda.runtime.runtimeGetVersion()),
        "cupy": cupy.__version__,
    }


def machine(gpu_backend: GpuBackend | None = None) -> dict[str, Any]:
    """The whole fingerprint of this machine (GPU part only for a given backend)."""
    found = host()
    gpu_part = gpu(gpu_backend)
    if gpu_part is not None:
        found["gpu"] = gpu_part
    return found


def differences(recorded: object, current: dict[str, Any], parts: tuple[str, ...]) -> list[str]:
    """Human-readable differences between two fingerprints in the given parts."""
    found: list[str] = []
    for part in parts:
        old = recorded.get(part) if isinstance(recorded, dict) else None
        new = current.get(part)
        if not isinstance(old, dict) or not isinstance(new, dict):
            if old != new:
                found.append(f"{part}: {_short(old)} -> {_short(new)}")
            continue
        for key in sorted(set(old) | set(new)):
            if key not in INFORMATIONAL and old.get(key) != new.get(key):
                found.append(f"{part}.{key}: {old.get(key)!r} -> {new.get(key)!r}")
    return found


def _short(value: object) -> str:
    if isinstance(value, dict):
        return repr(value.get("name", "recorded"))
    return "none" if value is None else repr(value)
