"""Check the GPU set-up end to end and say how to fix each problem.

Checks, in order: the NVIDIA driver and the CUDA version it supports; CuPy
installed, only once, for that CUDA major, and importable; a CUDA device
visible; a kernel runs and gives the right answer; pinned host memory can be
allocated; the profile cache is writable; the profile matches this machine.
Each problem comes with the command that fixes it. Without a GPU, autodev runs
as NumPy: that is reported, not counted as a failure.

examples:
  autodev doctor
  autodev doctor --json
"""

from __future__ import annotations

import argparse
import json

from .._doctor import FAIL, INFO, OK, WARN, doctor

_MARK = {OK: "[ok]  ", INFO: "[info]", WARN: "[warn]", FAIL: "[FAIL]"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``autodev doctor`` options."""
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def run(args: argparse.Namespace) -> int:
    """Run every check; exit 1 if any failed."""
    checks = doctor()
    if args.json:
        print(json.dumps(checks, indent=1))
    else:
        for check in checks:
            print(f"{_MARK[check['status']]} {check['check']}: {check['detail']}")
            if check["fix"]:
                print(f"       fix: {check['fix']}")
    return 1 if any(c["status"] == FAIL for c in checks) else 0
