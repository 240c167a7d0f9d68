"""``autodev.lib``: ``numpy.lib`` for programs that import it by path.

``autodev.lib.stride_tricks`` makes its views where the array lives (see there);
``autodev.lib.mixins`` is NumPy's (its operator mixin works for any class). Other
``numpy.lib`` names are NumPy's own objects; functions among them run on the host
through autodev arrays' ``__array__``/``__array_function__``.
"""

from __future__ import annotations

import importlib
from typing import Any

import numpy as _np

from . import stride_tricks
from numpy.lib import mixins

__all__ = sorted({*(n for n in dir(_np.lib) if not n.startswith("_")), "mixins",
                  "stride_tricks"})


def __getattr__(name: str) -> Any:
    if name.startswith("_"):
        raise AttributeError(f"module 'autodev.lib' has no attribute {name!r}")
    try:
        value = getattr(_np.lib, name)
    except AttributeError:
        try:  # numpy.lib submodules not imported by numpy.lib itself
            value = importlib.import_module(f"numpy.lib.{name}")
        except ImportError:
            raise AttributeError(f"module 'autodev.lib' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
