"""Show what autodev believes about this machine.

Lists the devices (and why any is unusable), the profile in use (file, age,
calibrated or the embedded default, whether its fingerprint matches this
machine), the crossover table: per family and dtype, the smallest size at
which the GPU is predicted faster, for data on the host (copy included) and
data already on the GPU, and the sizes from which a host call is split over
threads.

examples:
  autodev info
  autodev info --json              the same dict as autodev.info()
  autodev info --plot profile.png  time vs size per family (needs matplotlib:
                                   pip install 'autodev[plot]')
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from .._info import info
from ._errors import CLIError


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
        from .._cost import profile as _profile
        from ._plot import plot

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


# --------------------------------------------------------------------------- text

def format_info(data: dict[str, Any]) -> str:
    """The info dict for people."""
    pool = data["host_pool"]
    bound = f", bound {pool['limit'] / 2**20:.0f} MiB" if pool["status"] == "on" else ""
    lines = [f"autodev {data['version']} (compiled hot path: {data['compiled_hot_path']}; "
             f"host buffer pool: {pool['status']}{bound})", "", "Devices:"]
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
    lines += ["", format_threads(data["threads"]), format_fusion(data["fusion"])]
    if data.get("plot"):
        lines += ["", f"Plot written to {data['plot']}."]
    return "\n".join(lines)


def format_threads(threads: dict[str, Any]) -> str:
    """Where a host call is split over threads, for people."""
    head = f"Threads on the host: {threads['count']} ({threads['rule']})"
    if threads["count"] < 2:
        return head + "\n  one thread: every call runs as NumPy's one call"
    rows = [f"  {family:<15} from {floor:,} elements" if floor is not None
            else f"  {family:<15} never (threads did not pay here)"
            for family, floor in threads["floors"].items()]
    if threads.get("total") is not None:
        rows.append(f"  {'full sums':<15} from {threads['total']:,} elements (a sum over every "
                    "axis: float32/float64 along NumPy's pairwise tree, integer sums anywhere)")
    return "\n".join([head + ", split from:", *rows])


def format_fusion(fusion: dict[str, Any]) -> str:
    """Where elementwise chains are deferred and fused, for people."""
    if fusion["floor"] is None:
        return "Fused elementwise chains: off"
    return (f"Fused elementwise chains: calls from {fusion['floor']:,} elements are deferred "
            f"and each chain runs in one pass over blocks of {fusion['block']:,} elements "
            f"({fusion['threaded_block']:,} where the pass is split over threads; "
            "AUTODEV_FUSE=0 turns it off)")


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
