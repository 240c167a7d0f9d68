"""``autodev.scipy.signal``: every ``scipy.signal`` name; convolution dispatched.

``fftconvolve``, ``convolve`` and ``correlate`` run where the cost model says
(their work counts ``(n1 + n2) log2(n1 + n2)``, the FFT route's cost). Declared
CPU-only: integer and other non-float input (SciPy convolves integers exactly by
the direct method) and every other name.
"""

from __future__ import annotations

import math
from typing import Any

import scipy.signal as _ssignal

from ._spec import FLOATING, build_specs, dtypes_in, module_getattr, public_names

#: Dispatched ``scipy.signal`` functions, by cost family.
FAMILIES: dict[str, str] = {"fft": "fftconvolve convolve correlate"}


def _work_convolution(arrays: list[Any]) -> float:
    n = sum(a.size for a in arrays[:2])
    return n * math.log2(max(n, 2))


_RULE = {"gpu_ok": dtypes_in(FLOATING), "work": _work_convolution}
SPECS = build_specs("scipy.signal.", FAMILIES, {name: _RULE for name in FAMILIES["fft"].split()},
                    {name: 2 for name in FAMILIES["fft"].split()})

__all__ = public_names(_ssignal)
__getattr__ = module_getattr(_ssignal, "autodev.scipy.signal", SPECS, globals())


def __dir__() -> list[str]:
    return __all__
