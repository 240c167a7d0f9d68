"""``autodev.scipy.special``: every ``scipy.special`` name; the ufuncs cupyx has dispatched.

``scipy.special.erf(x)`` with an autodev array ``x`` comes here too (through
``__array_ufunc__``), so it also stays on ``x``'s device. Declared CPU-only: ufuncs
cupyx.scipy.special lacks (``GPU_UFUNCS`` lists those it has), and any input that
is not float32/float64 (cupyx's loops skip complex for most functions and resolve
float16 and small integers to other result dtypes than SciPy).
"""

from __future__ import annotations

from typing import Any

import scipy.special as _sspecial

from ._spec import REAL_FLOATING, build_specs, dtypes_in, module_getattr, public_names

#: ``scipy.special`` ufuncs cupyx.scipy.special implements.
GPU_UFUNCS = frozenset("""
    i0 i0e i1 i1e j0 j1 k0 k0e k1 k1e y0 y1 yn spherical_yn wright_bessel
    bdtr bdtrc bdtri btdtr btdtri fdtr fdtrc fdtri gdtr gdtrc nbdtr nbdtrc nbdtri
    pdtr pdtrc pdtri chdtr chdtrc chdtri ndtr log_ndtr ndtri logit expit log_expit
    boxcox boxcox1p inv_boxcox inv_boxcox1p entr huber kl_div pseudo_huber rel_entr
    gamma gammaln loggamma gammasgn gammainc gammaincinv gammaincc gammainccinv beta
    betaln betainc betaincinv psi rgamma poch erf erfc erfcx erfinv erfcinv binom exp1
    expi expn zeta zetac cbrt exp10 exp2 radian cosdg sindg tandg cotdg log1p expm1
    exprel cosm1 round xlogy xlog1py ellipk ellipkm1 ellipj ellipkinc ellipeinc
""".split())

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


def ufunc_options(name: str) -> dict[str, Any]:
    """The capability of the SciPy ufunc ``name``: its GPU rule, or CPU only."""
    return {"gpu_ok": _GPU_DTYPES} if name in GPU_UFUNCS else {"where": "cpu"}


__all__ = public_names(_sspecial)
__getattr__ = module_getattr(_sspecial, "autodev.scipy.special", SPECS, globals())


def __dir__() -> list[str]:
    return __all__
