"""The cost model: predicted seconds for a call on a device, transfers included.

Pure: built from a profile dict, no I/O, no globals. Each curve is
``t(work) = latency + work / throughput`` for one (device class, family, dtype
class); transfers are ``t(bytes) = latency + bytes / bandwidth``.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

import numpy as np

#: Operation families and what their ``work`` counts.
FAMILIES: dict[str, str] = {
    "elementwise": "output elements of a cheap ufunc (add, multiply, compare, ...)",
    "transcendental": "output elements of an expensive ufunc (sin, exp, log, erf, ...)",
    "reduction": "input elements (sum, mean, std, min, argmax, cumsum, ...)",
    "copy": "elements moved (indexing, concatenate, where, take, astype, ...)",
    "creation": "elements created (zeros, ones, arange, ...)",
    "matmul": "multiply-adds m*n*k",
    "fft": "n*log2(n) over the transformed elements",
    "solve": "n^3 for an n x n system (solve, inv, det, lstsq, lu)",
    "cholesky": "n^3 (cholesky, qr)",
    "svd": "m*n*min(m, n)",
    "eigh": "n^3 (eigh, eigvalsh, eig)",
    "sort": "n*log2(n)",
    "sparse_matmul": "nonzeros touched: nnz(A) * (columns of B or nnz(B)/rows(B))",
}
DEVICE_CLASSES: tuple[str, ...] = ("cpu", "gpu")
DTYPE_CLASSES: tuple[str, ...] = ("f32", "f64", "c64", "c128")
_DTYPE_FALLBACK: dict[str, tuple[str, ...]] = {
    "f32": ("f32", "f64"),
    "f64": ("f64", "f32"),
    "c64": ("c64", "f64", "f32"),
    "c128": ("c128", "c64", "f64"),
}

_DTYPE_CLASS: dict[Any, str] = {}

#: Called after a profile is written (``autodev calibrate``): whoever caches a model
#: built from profiles (the dispatcher) subscribes, so writing is all calibration does.
PROFILE_WRITTEN: list[Callable[[], None]] = []


def dtype_class(dtype: np.dtype) -> str:
    """Map a dtype to the class its cost curve is measured for."""
    found = _DTYPE_CLASS.get(dtype)
    if found is None:
        if dtype.kind == "c":
            found = "c64" if dtype.itemsize <= 8 else "c128"
        else:
            found = "f32" if dtype.itemsize <= 4 else "f64"
        _DTYPE_CLASS[dtype] = found
    return found


class CostModel:
    """Predicts compute and transfer seconds from a profile's ``devices`` section.

    Parameters
    ----------
    devices : mapping
        ``{"cpu": {"compute": {family: {dtype_class: {"latency": s,
        "throughput": work/s}}}}, "gpu": {..., "transfer": {"h2d": {"latency": s,
        "bandwidth": bytes/s}, "d2h": {...}}}}``.
    """

    __slots__ = ("_curves", "_h2d", "_d2h", "_pairs", "_floors")

    def __init__(self, devices: Mapping[str, Any]) -> None:
        self._curves: dict[tuple[str, str, str], tuple[float, float]] = {}
        for device_class in DEVICE_CLASSES:
            compute = devices.get(device_class, {}).get("compute", {})
            for family in FAMILIES:
                for dclass in DTYPE_CLASSES:
                    curve = _find_curve(compute, family, dclass)
                    if curve is not None:
                        self._curves[(device_class, family, dclass)] = curve
        self._pairs: dict[tuple[str, str], tuple[float, float, float, float]] = {}
        self._floors: dict[str, float] = {}
        transfer = devices.get("gpu", {}).get("transfer", {})
        self._h2d = _link(transfer.get("h2d"))
        self._d2h = _link(transfer.get("d2h"))

    def compute(self, device_class: str, family: str, dclass: str, work: float) -> float:
        """Seconds to run ``work`` units of ``family`` on ``device_class``."""
        curve = self._curves.get((device_class, family, dclass))
        if curve is None:
            return math.inf
        return curve[0] + work * curve[1]

    def curves(self, family: str, dclass: str) -> tuple[float, float, float, float]:
        """``(cpu latency, cpu s/work, gpu latency, gpu s/work)`` for one family and dtype.

        A missing curve reads as infinitely slow, so that device is never chosen.
        """
        key = (family, dclass)
        found = self._pairs.get(key)
        if found is None:
            cpu = self._curves.get(("cpu", family, dclass), (math.inf, 0.0))
            gpu = self._curves.get(("gpu", family, dclass), (math.inf, 0.0))
            found = self._pairs[key] = (cpu[0], cpu[1], gpu[0], gpu[1])
        return found

    def cpu_only_below(self, family: str) -> float:
        """Work below which the CPU beats the GPU for every dtype class even with the
        data already on the GPU: the CPU is done before the GPU's latency is paid."""
        found = self._floors.get(family)
        if found is None:
            found = math.inf
            for dclass in DTYPE_CLASSES:
                cpu_lat, cpu_inv, gpu_lat, _ = self.curves(family, dclass)
                if math.isinf(cpu_lat) or cpu_inv <= 0:
                    found = 0.0  # no CPU curve: no shortcut for this family
                    break
                if not math.isinf(gpu_lat):
                    found = min(found, max(gpu_lat - cpu_lat, 0.0) / cpu_inv)
            self._floors[family] = found if not math.isinf(found) else 0.0
            found = self._floors[family]
        return found

    def h2d(self, nbytes: int) -> float:
        """Seconds to copy ``nbytes`` from host to device."""
        return self._h2d[0] + nbytes * self._h2d[1]

    def d2h(self, nbytes: int) -> float:
        """Seconds to copy ``nbytes`` from device to host."""
        return self._d2h[0] + nbytes * self._d2h[1]

    def has(self, device_class: str, family: str) -> bool:
        """True if the profile has a curve for this device class and family."""
        return any((device_class, family, d) in self._curves for d in DTYPE_CLASSES)

    def predict(self, family: str, dclass: str, work: float, *, read: float = 0.0,
                h2d: Sequence[float] = (), d2h: Sequence[float] = ()) -> tuple[float, float]:
        """Predicted seconds ``(cpu, gpu)`` of one call, the copies it needs included.

        Parameters
        ----------
        family, dclass : str
            The call's cost family and dtype class.
        work : float
            The call's work, in the family's unit (:data:`FAMILIES`).
        read : float
            Elements the call reads, when its time cannot be below a reduction over them
            (a matrix-vector product is bound by memory, not by its multiply-adds); 0 for
            no such floor.
        h2d : sequence of float
            Bytes of each copy the GPU would need from the host first (each copy pays the
            link's latency).
        d2h : sequence of float
            Bytes of each copy the CPU would need from the GPU first.
        """
        cpu_lat, cpu_inv, gpu_lat, gpu_inv = self.curves(family, dclass)
        t_cpu = cpu_lat + work * cpu_inv
        t_gpu = gpu_lat + work * gpu_inv
        if read:
            r_cpu_lat, r_cpu_inv, r_gpu_lat, r_gpu_inv = self.curves("reduction", dclass)
            t_cpu = max(t_cpu, r_cpu_lat + read * r_cpu_inv)
            t_gpu = max(t_gpu, r_gpu_lat + read * r_gpu_inv)
        for nbytes in h2d:
            t_gpu += self._h2d[0] + nbytes * self._h2d[1]
        for nbytes in d2h:
            t_cpu += self._d2h[0] + nbytes * self._d2h[1]
        return t_cpu, t_gpu

    def crossover(self, family: str, dclass: str, work: Callable[[float], float],
                  h2d: Callable[[float], float] | None = None, *,
                  largest: float = 1e9) -> float | None:
        """Smallest size ``n`` at which the GPU is predicted faster, or None if never.

        Parameters
        ----------
        family, dclass : str
            The cost family and dtype class.
        work : callable
            ``n -> work`` in the family's unit (a size people recognise: elements, the
            side of a matrix, ...).
        h2d : callable, optional
            ``n -> bytes`` the inputs must move to the GPU (data on the host); None
            for data already on the GPU.
        largest : float
            The largest ``n`` searched: past it, "never".

        The search scans ``n`` on a geometric grid from 1 to ``largest`` for the
        first size the GPU wins (the curves need not cross only once: a copy growing
        as ``n**2`` against work as ``n**3``), then bisects that step to 0.1 %.
        """
        def gpu_wins(n: float) -> bool:
            t_cpu, t_gpu = self.predict(family, dclass, work(n),
                                        h2d=(h2d(n),) if h2d is not None else ())
            return t_gpu < t_cpu

        first = next((k for k in range(_GRID + 1) if gpu_wins(largest ** (k / _GRID))), None)
        if first is None:
            return None
        if first == 0:
            return 1.0
        lo, hi = largest ** ((first - 1) / _GRID), largest ** (first / _GRID)
        while hi / lo > 1.001:
            mid = math.sqrt(lo * hi)
            lo, hi = (lo, mid) if gpu_wins(mid) else (mid, hi)
        return hi


#: Steps of the crossover search's geometric grid from 1 to ``largest``.
_GRID = 240


def _find_curve(compute: Mapping[str, Any], family: str, dclass: str
                ) -> tuple[float, float] | None:
    by_dtype = compute.get(family)
    if by_dtype is None and family == "transcendental":
        by_dtype = compute.get("elementwise")
    if by_dtype is None and family in ("copy", "creation"):
        by_dtype = compute.get("elementwise")
    if by_dtype is None:
        return None
    for candidate in _DTYPE_FALLBACK[dclass]:
        curve = by_dtype.get(candidate)
        if curve is not None:
            return float(curve["latency"]), 1.0 / float(curve["throughput"])
    return None


def _link(entry: Mapping[str, float] | None) -> tuple[float, float]:
    if entry is None:
        return (math.inf, 0.0)
    return float(entry["latency"]), 1.0 / float(entry["bandwidth"])
