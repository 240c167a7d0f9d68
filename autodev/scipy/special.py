"""``autodev.scipy.special``: every ``scipy.special`` name; the ufuncs cupyx has dispatched.

``scipy.special.erf(x)`` with an autodev array ``x`` comes here too (through
``__array_ufunc__``), so it also stays on ``x``'s device. Declared CPU-only: ufuncs
cupyx.scipy.special lacks (``GPU_UFUNCS`` lists those it has), and any input that
is not float32/float64 (cupyx's loops skip complex for most functions and resolve
float16 and small integers to other result dtypes than SciPy).
"""

from __future__ import annotations

import scipy.special as _sspecial

from .._capability.table import SCIPY_SPECIAL_GPU_UFUNCS, scipy_special_ufunc
from ._spec import REAL_FLOATING, build_specs, dtypes_in, module_getattr, public_names

#: ``scipy.special`` ufuncs cupyx.scipy.special implements (the capability table's).
GPU_UFUNCS = SCIPY_SPECIAL_GPU_UFUNCS

#: Dispatched non-ufunc functions, by cost family.
FAMILIES: dict[str, str] = {
    "reduction": "logsumexp softmax log_softmax",
}

_GPU_DTYPES = dtypes_in(REAL_FLOATING)
SPECS = build_specs("scipy.special.", FAMILIES, {
    "logsumexp": {"gpu_ok": _GPU_DTYPES, "scalar": True},
    "softmax": {"gpu_ok": _GPU_DTYPES},
    "log_softmax": {"gpu_ok": _GPU_DTYPES},
})

ufunc_options = scipy_special_ufunc


__all__ = public_names(_sspecial)
__getattr__ = module_getattr(_sspecial, "autodev.scipy.special", SPECS, globals())


def __dir__() -> list[str]:
    return __all__
