"""Show what autodev believes about this machine.

Lists the devices (and why any is unusable), the profile in use (file, age,
calibrated or the embedded default, whether its fingerprint matches this
machine) and the crossover table: per family and dtype, the smallest size at
which the GPU is predicted faster, for data on the host (copy included) and
data already on the GPU.

examples:
  autodev info
  autodev info --json              the same dict as autodev.info()
  autodev info --plot profile.png  time vs size per family (needs matplotlib:
                                   pip install 'autodev[plot]')
"""

from __future__ import annotations

import argparse
import json
import math
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ._cli import CLIError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``autodev info`` options."""
    parser.add_argument("--json", action="store_true", help="print autodev.info() as JSON")
    parser.add_argument("--plot", metavar="FILE.png",
                        help="plot time vs size per family, both devices, measured points "
                             "and crossovers (needs matplotlib)")
    parser.add_argument("--profile", metavar="PATH",
                        help="show this profile file instead of the one in use")


def run(args: argparse.Namespace) -> int:
    """Print the info dict, as text or JSON; plot it if asked."""
    if args.profile and not Path(args.profile).is_file():
        raise CLIError(f"--profile must name an existing file. Got {args.profile!r} instead.")
    data = info(args.profile)
    if args.plot:
        from ._cost import profile as _profile

        folder = Path(args.plot).resolve().parent
        if not folder.is_dir():
            raise CLIError(f"--plot must name a file in an existing folder. Got {args.plot!r} "
                           f"({folder} does not exist); create it first.")
        found = _profile.resolve(args.profile)
        try:
            written = plot(found.profile, args.plot)
        except OSError as err:
            raise CLIError(f"cannot write the plot to {args.plot!r}: "
                           f"{err.strerror or err}") from err
        data["plot"] = str(written)
    print(json.dumps(data, indent=1, sort_keys=True) if args.json else format_info(data))
    return 0


def info(path: str | Path | None = None) -> dict[str, Any]:
    """Devices, the profile in use and the crossover table, as a JSON-ready dict.

    Parameters
    ----------
    path : path, optional
        Describe this profile file instead of the one autodev would use.
    """
    import autodev

    from ._cost import fingerprint as _fingerprint, profile as _profile
    from ._backends import STATE, active_gpu
    from ._calibrate.calibrate import crossover_table

    gpu = active_gpu()
    found = _profile.resolve(path, gpu)
    profile = found.profile
    devices = [{"device": str(d["device"]), "usable": d["usable"], "reason": d["reason"]}
               for d in autodev.devices()]
    return {
        "version": autodev.__version__,
        "devices": devices,
        "gpu": str(gpu.device) if gpu is not None else None,
        "simulated_gpu": STATE.sim is not None,
        "cache_dir": str(_profile.cache_dir()),
        "profile": _describe(found),
        "machine": _fingerprint.machine(gpu),
        "crossovers": _rounded(crossover_table(_with_gpu_curves(profile))),
        "crossovers_from": "GPU curves measured" if "gpu" in profile["devices"] and
        found.source == "calibrated" else "GPU curves of the embedded default",
    }


def _with_gpu_curves(profile: dict[str, Any]) -> dict[str, Any]:
    from ._cost import profile as _profile

    devices = dict(profile["devices"])
    devices.setdefault("gpu", _profile.embedded_default()["devices"]["gpu"])
    return devices


def _describe(found: Any) -> dict[str, Any]:
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
        "exists": found.path.exists(),
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


# --------------------------------------------------------------------------- text

def format_info(data: dict[str, Any]) -> str:
    """The info dict for people."""
    lines = [f"autodev {data['version']}", "", "Devices:"]
    for d in data["devices"]:
        state = "usable" if d["usable"] else "not usable"
        reason = f" ({d['reason']})" if d["reason"] else ""
        lines.append(f"  {d['device']:<8} {state}{reason}")
    p = data["profile"]
    lines += ["", f"Profile: {p['source']}"]
    lines.append(f"  file: {p['path']}" + ("" if p["exists"] else " (none yet)"))
    if p["used"]:
        lines.append(f"  measured: {_age(p['age_seconds'])}, {p['mode'] or 'unknown'} mode, on "
                     f"{', '.join((p['measured_on'] or {}).values()) or 'unknown devices'}")
        check = p.get("selfcheck") or {}
        if check.get("decisions"):
            lines.append(f"  self-check: {check['share']:.0%} of {check['decisions']} device "
                         "choices right at unmeasured sizes")
    lines.append(f"  fingerprint: {p['fingerprint']}; GPU: {p['gpu_fingerprint']}")
    if p["problem"]:
        lines.append(f"  problem: {p['problem']}; run `autodev calibrate`")
    elif not p["used"]:
        lines.append("  run `autodev calibrate` (or `--quick`, ~10 s) to measure this machine")
    lines += ["", f"Crossovers ({data['crossovers_from']}):"]
    if data["gpu"] is None:
        lines.append("  No GPU is usable: every call runs on NumPy, there is nothing to choose "
                     "between. For reference, a GPU of the default's class would win from:")
    lines.append(format_crossovers(data["crossovers"]))
    if data.get("plot"):
        lines += ["", f"Plot written to {data['plot']}."]
    return "\n".join(lines)


def format_crossovers(table: dict[str, Any]) -> str:
    """The crossover table: smallest size at which the GPU is predicted faster."""
    rows = [("family", "size unit", "dtype", "data on host", "data on GPU")]
    for family, row in table.items():
        for dclass, sides in row.items():
            if dclass == "unit":
                continue
            rows.append((family, row["unit"], dclass, _size(sides["host"]), _size(sides["device"])))
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    text = ["  " + "  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip() for r in rows]
    text.insert(1, "  " + "  ".join("-" * w for w in widths))
    return "\n".join(text)


def _size(n: float | None) -> str:
    if n is None:
        return "never"
    if n <= 1:
        return "always"
    return f"{n:,.0f}" if n < 1e7 else f"{n:.2e}"


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "at an unknown time"
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''} ago"
    return "just now"


# --------------------------------------------------------------------------- plot

def plot(profile: dict[str, Any], path: str | Path) -> Path:
    """Plot time vs size per family: both devices' curves, measured points, crossovers."""
    from ._backends._base import import_optional

    if import_optional("matplotlib") is None:
        raise CLIError("--plot needs matplotlib, which is not installed. "
                       "Install it with: pip install 'autodev[plot]'")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from ._calibrate.calibrate import crossover_size
    from ._cost.model import CostModel
    from ._calibrate.workloads import WORKLOADS

    devices = _with_gpu_curves(profile)
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
                ax.loglog(sizes, [model.compute(cls, family, dclass, workload.work(n)) for n in sizes],
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
