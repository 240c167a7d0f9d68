"""Render docs/coverage.md from the capability table (the docs and tests read one table).

``python -m autodev._coverage > docs/coverage.md`` regenerates it.
"""

from __future__ import annotations

import numpy as np

from ._namespace import CREATION, DIRECT, SPECS, UFUNCS


def render() -> str:
    """The coverage page as Markdown."""
    families: dict[str, list[str]] = {}
    for name, spec in sorted(SPECS.items()):
        if name in np.__dict__ and isinstance(getattr(np, name, None), np.ufunc):
            continue
        key = "runs where its input lives (views, *_like)" if spec.where == "primary" \
            else spec.family
        families.setdefault(key, []).append(f"`{name}`")
    lines = [
        "# API coverage",
        "",
        "Generated from the capability table (`autodev._namespace.SPECS`) by",
        "`python -m autodev._coverage > docs/coverage.md`; a test checks it is current.",
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
        ", ".join(f"`{n}`" for n in sorted(CREATION | {"array", "asarray", "asanyarray", "from_dlpack"})),
        "",
        "## Metadata only (never move data)",
        "",
        ", ".join(f"`{n}`" for n in sorted(set(DIRECT) - {"array", "asarray", "asanyarray", "from_dlpack"})),
        "",
    ]
    for family, names in sorted(families.items()):
        lines += [f"## {family} ({len(names)})", "", ", ".join(names), ""]
    lines += [
        "## `autodev.random`",
        "",
        "Every `numpy.random` name. Draws come from NumPy's generators (bit-identical for the",
        "same seed) and are placed like new arrays: on the host, or on the GPU under",
        "`policy('gpu')`.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(render(), end="")
