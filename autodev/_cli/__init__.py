"""The ``autodev`` command: a thin shell over the Python API.

The top room of the package: nothing in autodev imports it (``python -m autodev``
and the console script do). Each subcommand is one module here, named after it,
exposing ``add_arguments(parser)`` and ``run(args) -> int``; modules whose name
starts with ``_`` are their shared helpers. Domain errors (:class:`CLIError`)
become one line on stderr and exit code 1; bugs keep their traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from types import ModuleType
from typing import Sequence

from . import bench, calibrate, coverage, demo, doctor, info
from ._errors import CLIError

__all__ = ["COMMANDS", "CLIError", "build_parser", "main"]

#: subcommand -> (module, one-line help)
COMMANDS: dict[str, tuple[ModuleType, str]] = {
    "demo": (demo, "run a short workload over every family and show each decision"),
    "calibrate": (calibrate, "measure this machine and write its profile"),
    "info": (info, "show devices, the profile in use and the crossover table"),
    "doctor": (doctor, "check the CUDA/CuPy set-up and say how to fix problems"),
    "bench": (bench, "run the reference benchmark side by side (NumPy, CPU, GPU)"),
    "coverage": (coverage, "print the API coverage page (docs/coverage.md) from the "
                           "rows of NumPy's names and the capability table"),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="autodev",
        description="NumPy/SciPy on the CPU or the GPU, whichever this machine runs faster.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        command = sub.add_parser(name, help=help_text, description=module.__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(command)
        command.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``autodev`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 0
    try:
        return int(args._run(args) or 0)
    except CLIError as err:
        print(f"autodev {args.command}: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"autodev {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (``autodev demo --json | head``): a user's choice, not a
        # bug; stdout is pointed at devnull so that flushing it at exit cannot fail again
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        print(f"autodev {args.command}: output closed early (broken pipe)", file=sys.stderr)
        return 1
