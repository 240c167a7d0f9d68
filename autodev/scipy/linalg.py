"""``autodev.scipy.linalg``: every ``scipy.linalg`` name; the factorizations dispatched.

On the GPU, singular and not positive-definite input raises SciPy's
``LinAlgError`` and ``check_finite=True`` raises ``ValueError`` on NaN/inf, as
SciPy does: cupy's default (``linalg='ignore'``) would hand back inf/nan. Declared
CPU-only: batched (>2-D) input, ``solve(assume_a=...)`` for diagonal, banded,
tridiagonal and triangular structure and ``transposed=True``, ``qr`` modes
``'r'``/``'raw'`` and pivoting, generalized or subset ``eigh``, ``lu(p_indices=True)``,
``eig``/``eigvals`` (no GPU general eigensolver) and every other name.
"""

from __future__ import annotations

from typing import Any

import numpy as _np
import scipy.linalg as _slinalg

from . import _linalg_gpu as _gpu
from ._spec import FLOATING, all_of, build_specs, kwarg_in, module_getattr, public_names

LinAlgError = _np.linalg.LinAlgError

#: Dispatched ``scipy.linalg`` functions, by cost family.
FAMILIES: dict[str, str] = {
    "solve": "solve inv det lstsq lu lu_factor lu_solve solve_triangular cho_solve expm",
    "cholesky": "cholesky cho_factor qr",
    "svd": "svd svdvals pinv",
    "eigh": "eigh eigvalsh",
    "reduction": "norm",
}


def _lapack_dtypes(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return all(a.dtype in FLOATING or a.dtype.kind in "iu" for a in arrays)


def _matrix(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return bool(arrays) and arrays[0].ndim == 2


def _plain_eigh(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return all(kwargs.get(k) is None for k in ("b", "subset_by_index", "subset_by_value",
                                                "driver")) and kwargs.get("type", 1) == 1


_GPU = all_of(_lapack_dtypes, _matrix)
_RULES: dict[str, dict[str, Any]] = {
    "solve": {"gpu_impl": _gpu.solve, "gpu_ok": all_of(
        _GPU, kwarg_in("assume_a", tuple(_gpu.ASSUME_A)), kwarg_in("transposed", (False,)))},
    "inv": {"gpu_impl": _gpu.inv, "gpu_ok": all_of(_GPU, kwarg_in("assume_a", (None,)))},
    "det": {"gpu_impl": _gpu.det, "scalar": True},
    "lstsq": {"gpu_impl": _gpu.lstsq, "gpu_ok": all_of(_GPU, kwarg_in("lapack_driver", (None,)))},
    "lu": {"gpu_impl": _gpu.checked("scipy.linalg.lu"),
           "gpu_ok": all_of(_GPU, kwarg_in("p_indices", (False,)))},
    "lu_factor": {"gpu_impl": _gpu.lu_factor},
    "lu_solve": {"gpu_impl": _gpu.checked("scipy.linalg.lu_solve", arrays=2)},
    "solve_triangular": {"gpu_impl": _gpu.solve_triangular},
    "cho_solve": {"gpu_impl": _gpu.cho_solve},
    "expm": {"gpu_ok": all_of(_GPU, lambda arrays, kwargs: arrays[0].dtype in FLOATING)},
    "cholesky": {"gpu_impl": _gpu.cholesky},
    "cho_factor": {"gpu_impl": _gpu.cho_factor},
    "qr": {"gpu_impl": _gpu.qr, "gpu_ok": all_of(
        _GPU, kwarg_in("mode", ("full", "economic")), kwarg_in("pivoting", (False,)))},
    "svd": {"gpu_impl": _gpu.svd},
    "svdvals": {"gpu_impl": _gpu.svdvals},
    "pinv": {"gpu_impl": _gpu.pinv},
    "eigh": {"gpu_impl": _gpu.eigh, "gpu_ok": all_of(_GPU, _plain_eigh)},
    "eigvalsh": {"gpu_impl": _gpu.eigvalsh, "gpu_ok": all_of(_GPU, _plain_eigh)},
    "norm": {"gpu_impl": _gpu.norm, "scalar": True, "gpu_ok": _lapack_dtypes},
}
for _rules in _RULES.values():
    _rules.setdefault("gpu_ok", _GPU)

_ARRAYS = {"solve": 2, "lstsq": 2, "lu_solve": 2, "solve_triangular": 2, "cho_solve": 2}

SPECS = build_specs("scipy.linalg.", FAMILIES, _RULES, _ARRAYS)

__all__ = public_names(_slinalg)
__getattr__ = module_getattr(_slinalg, "autodev.scipy.linalg", SPECS, globals())


def __dir__() -> list[str]:
    return __all__
