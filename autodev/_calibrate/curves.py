"""Fitting a cost curve to measured times, and the crossovers a profile's curves imply
(what ``autodev info`` shows and ``autodev calibrate`` weighs its fits around)."""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping

import numpy as np

from .._cost.model import CostModel
from .workloads import DTYPES, WORKLOADS, Workload


# --------------------------------------------------------------------------- fitting

def fit_curve(work: Iterable[float], seconds: Iterable[float],
              weights: Iterable[float] | None = None) -> tuple[dict[str, float], float]:
    """Fit ``seconds = latency + work / throughput`` (both terms non-negative).

    Minimises the (weighted) squared relative error with
    :func:`scipy.optimize.nnls`. Returns the curve (``{"latency",
    "throughput"}``, clamped to the profile's valid ranges) and the largest
    relative error of the fit over the points.
    """
    from scipy.optimize import nnls  # not at import: `autodev info` needs no SciPy

    w = np.asarray(list(work), dtype=float)
    t = np.maximum(np.asarray(list(seconds), dtype=float), 1e-12)
    root = np.sqrt(np.asarray(list(weights), dtype=float)) if weights is not None else np.ones_like(t)
    design = np.column_stack([1.0 / t, w / t]) * root[:, None]
    scale = np.linalg.norm(design, axis=0)
    scale[scale == 0] = 1.0
    solution, _ = nnls(design / scale, root)
    latency, per_work = solution / scale
    predicted = latency + w * per_work
    error = float(np.max(np.abs(predicted - t) / t)) if t.size else 0.0
    throughput = 1.0 / per_work if per_work > 0 else 1e18
    return {"latency": float(min(latency, 10.0)),
            "throughput": float(min(max(throughput, 1.0), 1e18))}, error


# --------------------------------------------------------------------------- crossovers

def near(sizes: Iterable[float], centres: Iterable[float | None]) -> list[float]:
    """Fit weights: 1, plus up to 4 for sizes within a factor ~4 of a crossover.

    One straight line cannot follow a CPU through its caches (the time per
    element grows once the data leaves them); what a decision needs is the
    line to be right where the two devices' curves cross, so the points there
    weigh more. (A curve with several segments would need the cost model to
    take more than one line per family; this keeps the profile's one line.)
    """
    found = [c for c in centres if c]
    return [1.0 + 4.0 * sum(math.exp(-(math.log(n / c) / math.log(4.0)) ** 2) for c in found)
            for n in sizes]


def crossover_size(model: CostModel, workload: Workload, dclass: str,
                   host_data: bool) -> float | None:
    """Smallest size ``n`` of ``workload`` at which the GPU is predicted faster, or None
    if never (:meth:`CostModel.crossover` in the workload's sizes, up to 1000x its ladder).

    ``host_data`` charges the inputs their host-to-device copy (data on the
    host); otherwise the data is already on the device.
    """
    itemsize = DTYPES[dclass].itemsize
    moved = (lambda n: workload.nbytes(n, itemsize)) if host_data else None
    return model.crossover(workload.family, dclass, workload.work, moved,
                           largest=workload.largest * 1000.0)


def crossover_table(devices: Mapping[str, Any], families: Iterable[str] | None = None,
                    dtypes: Iterable[str] | None = None) -> dict[str, dict[str, Any]]:
    """``{family: {dclass: {"host": n | None, "device": n | None}}, ...}`` plus units.

    Empty when the profile has no GPU curves (nothing to choose between).
    """
    if "gpu" not in devices:
        return {}
    model = CostModel(devices)
    table: dict[str, dict[str, Any]] = {}
    for family in families or WORKLOADS:
        workload = WORKLOADS[family]
        row: dict[str, Any] = {"unit": workload.unit}
        for dclass in workload.dtypes:
            if dtypes is not None and dclass not in dtypes:
                continue
            if model.has("gpu", family) and model.has("cpu", family):
                row[dclass] = {"host": crossover_size(model, workload, dclass, True),
                               "device": crossover_size(model, workload, dclass, False)}
        table[family] = row
    return table
