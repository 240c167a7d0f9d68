"""Whole everyday programs, NumPy and autodev (asv): the bodies and inputs of
``benchmarks/programs.py``, which times the same programs side by side in one run.

k-means, logistic regression, a two-layer network, a Monte Carlo estimate, feature
scaling with a softmax, a ReLU layer's forward and backward pass, nearest centres by
broadcasting, and a loop of tiny calls: each is one timed call of the whole program on
inputs made once (autodev's own copies of the same NumPy arrays).
"""

from __future__ import annotations

import importlib.util
import os
from types import ModuleType
from typing import Any

IMPLEMENTATIONS = ("numpy", "autodev")


def _programs() -> ModuleType:
    """``benchmarks/programs.py``, loaded from beside this suite (asv imports this
    directory alone)."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                        "programs.py")
    spec = importlib.util.spec_from_file_location("autodev_bench_programs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROGRAMS = _programs()


class Programs:
    """One whole program a call, NumPy or autodev."""

    params = [list(PROGRAMS.inputs()), list(IMPLEMENTATIONS)]
    param_names = ["program", "implementation"]
    timeout = 300.0

    def setup(self, program: str, implementation: str) -> None:
        body, data = PROGRAMS.inputs()[program]
        if implementation == "numpy":
            import numpy as namespace
            arguments: tuple[Any, ...] = data
        else:
            import autodev as namespace
            arguments = tuple(namespace.array(d) for d in data)
        self.run = lambda: body(namespace, *arguments)
        self.run()  # warm-up: profile read, pool started, pages touched

    def time_program(self, program: str, implementation: str) -> None:
        self.run()
