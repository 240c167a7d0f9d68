"""``autodev.fft``: every ``numpy.fft`` name; transforms dispatched."""

from __future__ import annotations

from typing import Any

import numpy as _np

from ._namespace import resolve_name as _resolve_name

__all__ = sorted(n for n in dir(_np.fft) if not n.startswith("_"))


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(f"module 'autodev.fft' has no attribute {name!r}")
    try:
        value = _resolve_name(_np.fft, "fft.", name)
    except AttributeError:
        raise AttributeError(f"module 'autodev.fft' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
