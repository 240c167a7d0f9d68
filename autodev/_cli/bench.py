"""Run the reference benchmark side by side: NumPy, autodev, each device forced.

Prints, per family and size, NumPy's time, autodev's time, the device it chose,
the other device's time and autodev ÷ min(CPU, GPU), then the decision accuracy;
writes the figures as JSON and a PNG. The benchmarks live in the source
checkout (benchmarks/report.py); this command runs them from there.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType

from ._errors import CLIError


def _report_module() -> ModuleType:
    """``benchmarks.report`` from the checkout autodev was installed from (or the cwd)."""
    checkout = Path(__file__).resolve().parents[2]  # autodev/_cli/bench.py -> the checkout
    for root in (checkout, Path.cwd()):
        if (root / "benchmarks" / "report.py").is_file():
            if str(root) not in sys.path:
                sys.path.insert(0, str(root))
            return importlib.import_module("benchmarks.report")
    raise CLIError(
        "the benchmarks are not installed with the package: they live in the source "
        "checkout's benchmarks/ directory. Run `autodev bench` from a clone (pip install -e .) "
        "or `python -m benchmarks.report` from its root."
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``autodev bench`` options (the same as ``python -m benchmarks.report``)."""
    try:
        report = _report_module()
    except CLIError:
        return  # reported by run()
    report.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run the report and print it."""
    return _report_module().main_with(args)
