"""``autodev info --plot``: the profile's curves, measured points and crossovers as a PNG."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .._backends._base import import_optional
from .._calibrate.curves import crossover_size
from .._cost.model import CostModel
from .._info import with_gpu_curves
from .._calibrate.workloads import WORKLOADS
from ._errors import CLIError


def plot(profile: dict[str, Any], path: str | Path) -> Path:
    """Plot time vs size per family: both devices' curves, measured points, crossovers."""
    if import_optional("matplotlib") is None:
        raise CLIError("--plot needs matplotlib, which is not installed. "
                       "Install it with: pip install 'autodev[plot]'")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    devices = with_gpu_curves(profile)
    model = CostModel(devices)
    measured = profile.get("measurements", {})
    families = list(WORKLOADS)
    cols = 4
    fig, axes = plt.subplots(math.ceil(len(families) / cols), cols,
                             figsize=(4 * cols, 3.2 * math.ceil(len(families) / cols)))
    colours = {"f32": "tab:blue", "f64": "tab:orange", "c64": "tab:green", "c128": "tab:red"}
    for ax, family in zip(axes.flat, families):
        workload = WORKLOADS[family]
        sizes = np.geomspace(workload.smallest, workload.largest, 60)
        for dclass in workload.dtypes:
            points = {cls: measured.get(cls, {}).get(family, {}).get(dclass) for cls in ("cpu", "gpu")}
            if not any(points.values()) and dclass not in ("f32", "f64"):
                continue
            for cls, style in (("cpu", "-"), ("gpu", "--")):
                if cls not in devices:
                    continue
                side = 0 if cls == "cpu" else 1
                ax.loglog(sizes, [model.predict(family, dclass, workload.work(n))[side]
                                  for n in sizes],
                          style, color=colours[dclass], lw=1,
                          label=f"{cls} {dclass}" + ("" if points[cls] else " (default)"))
                if points[cls]:
                    ax.loglog(points[cls]["n"], points[cls]["seconds"], "o" if cls == "cpu" else "x",
                              color=colours[dclass], ms=3)
            cross = crossover_size(model, workload, dclass, host_data=False)
            if cross:
                ax.axvline(cross, color=colours[dclass], ls=":", lw=1)
        ax.set_title(f"{family} ({workload.op})", fontsize=9)
        ax.set_xlabel(workload.unit, fontsize=8)
        ax.set_ylabel("seconds", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=5, ncol=2)
    for ax in list(axes.flat)[len(families):]:
        ax.axis("off")
    fig.suptitle(f"autodev profile: {profile.get('source', '?')}, {profile.get('created', '')} "
                 "(lines: fitted curves, solid CPU / dashed GPU; marks: measured; "
                 "dotted: crossover, data on GPU)", fontsize=9)
    fig.tight_layout()
    target = Path(path)
    fig.savefig(target, dpi=110)
    plt.close(fig)
    return target
