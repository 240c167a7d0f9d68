"""Measure this machine and write the profile autodev decides with.

Times one representative call per operation family (elementwise, transcendental,
reductions, sort, fft, matmul, solve, cholesky, svd, eigh, sparse matmul) at a
ladder of sizes on the CPU and, where one is usable, the GPU; times host<->device
copies; fits each curve; checks the fit at sizes it did not measure; and writes
the profile (atomically: Ctrl-C leaves the previous one as it was).

examples:
  autodev calibrate --quick            about 10 seconds, float32/float64
  autodev calibrate                    full: every dtype, about a minute
  autodev calibrate --ops matmul,fft --dtypes f32,c64
  autodev calibrate --output calibration/my-machine.json
  autodev info                         what was measured, and the crossovers

The profile goes to the user cache directory (AUTODEV_CACHE_DIR overrides it,
AUTODEV_PROFILE names a file) and is used only on the machine it was measured on.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from typing import Any, TextIO

from ._errors import CLIError
from .info import format_crossovers


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``autodev calibrate`` options."""
    from .._calibrate.workloads import DTYPES, WORKLOADS

    parser.add_argument("--quick", action="store_true",
                        help="about 10 s: float32/float64 only, coarser size ladders")
    parser.add_argument("--output", "-o", metavar="PATH",
                        help="write the profile here instead of the user cache directory")
    parser.add_argument("--ops", metavar="LIST", type=_split,
                        help=f"comma-separated families to measure (default all): "
                             f"{', '.join(WORKLOADS)}")
    parser.add_argument("--dtypes", metavar="LIST", type=_split,
                        help=f"comma-separated dtype classes: {', '.join(DTYPES)} "
                             "(default: f32,f64 with --quick, else all)")
    parser.add_argument("--max-seconds", metavar="S", type=float,
                        help="time budget for measuring (default 6 with --quick, else 50)")
    parser.add_argument("--json", action="store_true",
                        help="print the calibration report as JSON instead of a summary")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def run(args: argparse.Namespace) -> int:
    """Calibrate, write the profile, print what was found."""
    from .._calibrate.calibrate import calibrate
    from .._cost import profile as _profile

    target = args.output or str(_profile.default_path())
    bar = ProgressBar(sys.stderr, enabled=not args.no_progress)
    try:
        profile = calibrate(args.output, quick=args.quick, ops=args.ops, dtypes=args.dtypes,
                            max_seconds=args.max_seconds, progress=bar.update)
    except ValueError as err:
        raise CLIError(str(err)) from err
    except OSError as err:
        raise CLIError(f"cannot write the profile to {target}: {err}. "
                       "Choose another place with --output PATH or AUTODEV_CACHE_DIR.") from err
    except KeyboardInterrupt:
        bar.clear()
        print(f"autodev calibrate: interrupted; {target} was left as it was.", file=sys.stderr)
        return 130
    finally:
        bar.clear()
    report = profile["report"]
    if args.json:
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        print(summary(report))
    return 0


def summary(report: dict[str, Any]) -> str:
    """The calibration report for people."""
    lines = [f"Calibrated ({report['mode']}) in {report['seconds']:.1f} s on "
             f"{', '.join(report['devices'].values())}; wrote {report.get('path', '(not written)')}."]
    if report.get("note"):
        lines.append(report["note"])
    check = report["selfcheck"]
    if check.get("decisions"):
        lines.append(f"Self-check: {check['correct']} of {check['decisions']} device choices at "
                     f"unmeasured sizes were right ({check['share']:.0%}; "
                     f"{check['share_within_10pct']:.0%} within 10 % of the faster device).")
    if check.get("median_time_error") is not None:
        lines.append(f"Predicted times at unmeasured sizes: median error "
                     f"{check['median_time_error']:.0%} over {check['points']} sizes.")
    if report.get("crossovers"):
        lines.append("")
        lines.append(format_crossovers(report["crossovers"]))
    lines.append("\n`autodev info` shows the profile in use; `autodev info --plot FILE.png` plots it.")
    return "\n".join(lines)


class ProgressBar:
    """A one-line progress bar on a terminal (nothing when not a terminal).

    Calibration is bounded by time, so a few dozen characters redrawn in place
    say all there is to say; no dependency is worth adding for that.
    """

    def __init__(self, stream: TextIO, enabled: bool = True) -> None:
        self._stream = stream
        self._on = enabled and stream.isatty()
        self._started = time.perf_counter()
        self._drawn = False

    def update(self, fraction: float, label: str) -> None:
        """Redraw at ``fraction`` (0..1) with ``label``."""
        if not self._on:
            return
        width = max(min(shutil.get_terminal_size().columns, 100) - 40, 10)
        done = int(width * fraction)
        text = (f"\r[{'#' * done}{'.' * (width - done)}] {fraction:4.0%} "
                f"{time.perf_counter() - self._started:5.1f}s {label[:20]:<20}")
        self._stream.write(text)
        self._stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the bar."""
        if self._drawn:
            self._stream.write("\r" + " " * (shutil.get_terminal_size().columns - 1) + "\r")
            self._stream.flush()
            self._drawn = False
