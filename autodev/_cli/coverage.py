"""Print the API coverage page (docs/coverage.md), rendered from the rows of NumPy's names
(:mod:`autodev._names`) and the capability table of CuPy's differences.

The docs and the tests read the same rows: a test checks that the page is current.

examples:
  autodev coverage > docs/coverage.md
  python -m autodev coverage > docs/coverage.md   (from a source checkout)
"""

from __future__ import annotations

import argparse
from typing import Iterable

import numpy as np

from .._capability.table import TABLE, UFUNC_AT, UFUNC_AT_HOST, UFUNC_METHODS, Row
from .._capability.specs import SPECS
from .._names import DISPATCHED, ROWS, Name
from .._ufuncs import UFUNCS


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """``autodev coverage`` takes no options."""


def run(args: argparse.Namespace) -> int:
    """Print the page."""
    print(render(), end="")
    return 0


def render() -> str:
    """The coverage page as Markdown."""
    families: dict[str, list[str]] = {}
    for row in sorted(DISPATCHED, key=lambda row: row.name):
        if row.name not in SPECS or isinstance(np.__dict__.get(row.name), np.ufunc):
            continue  # not in this NumPy; a ufunc (listed as one)
        key = "runs where its input lives (views, *_like)" if row.view else str(row.family)
        families.setdefault(key, []).append(f"`{row.name}`")
    lines = [
        "# API coverage",
        "",
        "Generated from the rows of NumPy's names (`autodev._names`, one row per name) and",
        "the capability table by `autodev coverage > docs/coverage.md`; a test checks it is",
        "current.",
        "",
        "Every public NumPy name is reachable as `autodev.X`, `autodev.linalg.X`,",
        "`autodev.fft.X`, `autodev.random.X`. The names below are **dispatched**: the cost",
        "model picks the CPU or the GPU (the GPU only where its backend has the function and",
        "holds the dtypes). Every other function runs on the CPU, its inputs moved to the",
        "host once, and still returns autodev arrays.",
        "",
        f"## Ufuncs ({len(UFUNCS)}, with `reduce`, `accumulate`, `reduceat`, `outer`, `at`)",
        "",
        ", ".join(f"`{n}`" for n in sorted(UFUNCS)),
        "",
        "## Creation (host by default; `device=` or `policy('gpu')` for the GPU)",
        "",
        _names(row for row in ROWS if row.creation is not None),
        "",
        "## Metadata only (never move data)",
        "",
        _names(row for row in ROWS if row.direct and row.creation is None),
        "",
    ]
    for family, names in sorted(families.items()):
        lines += [f"## {family} ({len(names)})", "", ", ".join(names), ""]
    lines += [
        "## Array methods dispatched like their function",
        "",
        _names(row for row in ROWS if row.method is not None),
        "",
        "## Writing into their first argument (wherever it lives; the write is recorded)",
        "",
        _names(row for row in ROWS if row.writes is not None),
        "",
    ]
    lines += _differences()
    lines += [
        "## `autodev.random`",
        "",
        "Every `numpy.random` name. Draws come from NumPy's generators (bit-identical for the",
        "same seed) and are placed like new arrays: on the host, or on the GPU under",
        "`policy('gpu')`.",
        "",
    ]
    return "\n".join(lines)


def _names(rows: Iterable[Name]) -> str:
    """The rows' names, sorted, as a Markdown list."""
    return ", ".join(f"`{n}`" for n in sorted(row.name for row in rows))


def _on_gpu(row: Row) -> str:
    """What autodev does about the row's difference, in a few words."""
    parts = []
    if row.cupy is None:
        parts.append("runs on the CPU")
    if row.numpy_only:
        parts.append("CPU when " + ", ".join(f"`{k}=`" for k in row.numpy_only) + " passed")
    if row.rule is not None:
        parts.append(f"rule `{row.rule.__name__.strip('_')}`")
    if row.correction is not None:
        parts.append(f"corrected by `{row.correction.__qualname__.split('.')[0].strip('_')}`")
    return "; ".join(parts) or "corrected where it is called (see the difference)"


def _differences() -> list[str]:
    """The capability table of CuPy differences as a Markdown table."""
    lines = [
        f"## CuPy 14 differences ({len(TABLE)} rows)",
        "",
        "From `autodev._capability.table.TABLE`: each row is one name's difference from NumPy, what",
        "autodev does on the GPU, and whether the simulated GPU imitates it (so the CPU-only",
        "tests exercise the correction). `tests/gpu/test_cupy_api.py` checks the CuPy names and",
        "keywords against the installed CuPy; `tests/gpu/test_cupy_strict.py` shows each",
        "imitation firing and each correction matching NumPy.",
        "",
        "| name | CuPy | difference | autodev on the GPU | sim |",
        "|---|---|---|---|---|",
    ]
    for name, row in sorted(TABLE.items()):
        sim = "imitates" if row.imitation is not None else (
            "refuses the keywords" if row.numpy_only else ("lacks it" if row.cupy is None
                                                           else "-"))
        cupy = f"`{row.cupy}`" if row.cupy else "absent"
        lines.append(f"| `{name}` | {cupy} | {row.why} | {_on_gpu(row)} | {sim} |")
    methods = "; ".join(f"`{m}`: {', '.join(sorted(u))}" for m, (u, _) in UFUNC_METHODS.items())
    at = ", ".join(f"`{n}`" for n in sorted(UFUNC_AT))
    host = ", ".join(f"`{n}.at`" for n in sorted(UFUNC_AT_HOST))
    lines += [
        "",
        f"Ufunc methods CuPy implements: {methods}; `at` for {at} (some dtypes each).",
        f"Every other ufunc method runs on the CPU, and so do {host}.",
        "",
    ]
    return lines
