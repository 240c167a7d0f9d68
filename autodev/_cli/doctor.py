"""Check the GPU set-up end to end and say how to fix each problem.

Checks, in order: the NVIDIA driver and the CUDA version it supports; CuPy
installed, only once, for that CUDA major, importable, and loading the CUDA
libraries (cuBLAS, cuSOLVER, cuSPARSE, cuRAND, cuFFT) as CuPy loads them; a CUDA
device visible; a kernel runs and gives the right answer; pinned host memory can
be allocated; the profile cache is writable; the profile matches this machine.
The last line, "install", names the one command that installs what this machine
still needs for its GPU; --install runs it. Without a GPU, autodev runs as NumPy
and needs nothing more: that is reported, not counted as a failure.

examples:
  autodev doctor
  autodev doctor --install    # on a GPU machine: CuPy and the CUDA libraries; else nothing
  autodev doctor --json
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

from .._doctor import FAIL, INFO, OK, WARN, doctor, driver_cuda_version, install, install_plan

_MARK = {OK: "[ok]  ", INFO: "[info]", WARN: "[warn]", FAIL: "[FAIL]"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``autodev doctor`` options."""
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.add_argument("--install", action="store_true",
                        help="first run the pip command the 'install' check names (CuPy and "
                             "the CUDA libraries for this machine's driver; nothing without "
                             "an NVIDIA GPU)")


def run(args: argparse.Namespace) -> int:
    """Run every check (after installing what is missing, with --install); exit 1 if any
    failed."""
    if args.install:
        plan = install_plan(driver_cuda_version())
        code = install(plan)
        if code or plan:  # a fresh process sees what was installed (CuPy, its libraries)
            return code or subprocess.call([sys.executable, "-m", "autodev", "doctor",
                                            *(["--json"] if args.json else [])])
    checks = doctor()
    if args.json:
        print(json.dumps(checks, indent=1))
    else:
        for check in checks:
            print(f"{_MARK[check['status']]} {check['check']}: {check['detail']}")
            if check["fix"]:
                print(f"       fix: {check['fix']}")
    return 1 if any(c["status"] == FAIL for c in checks) else 0
