"""``autodev.linalg``: every ``numpy.linalg`` name; factorizations dispatched.

On a GPU, singular or not positive-definite input raises
``numpy.linalg.LinAlgError`` as on the CPU (CuPy alone would return inf/nan).
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ._namespace import resolve_name as _resolve_name

LinAlgError = _np.linalg.LinAlgError

__all__ = sorted(n for n in dir(_np.linalg) if not n.startswith("_"))


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(f"module 'autodev.linalg' has no attribute {name!r}")
    try:
        value = _resolve_name(_np.linalg, "linalg.", name)
    except AttributeError:
        raise AttributeError(f"module 'autodev.linalg' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
