"""``autodev.scipy``: SciPy's GPU-relevant modules, each call dispatched by the cost model.

``from autodev.scipy import fft, linalg, sparse`` in place of ``from scipy import
fft, linalg, sparse``. Each module mirrors its SciPy module: the functions in its
``FAMILIES`` table dispatch to SciPy or cupyx.scipy; every other name runs on the
CPU with SciPy. Submodules load on first use (SciPy's import is not free).
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["fft", "linalg", "signal", "sparse", "special"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'autodev.scipy' has no attribute {name!r}")
    module = importlib.import_module(f"autodev.scipy.{name}")
    globals()[name] = module
    return module


def __dir__() -> list[str]:
    return __all__
