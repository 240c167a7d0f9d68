"""The array-API face's ``linalg`` extension, bound to autodev.

array-api-compat's generic ``common._linalg`` bound to ``autodev`` (so each call
dispatches on its data's device), and ``autodev.linalg``'s own functions where
NumPy's already have the standard's form.
"""

from __future__ import annotations

from typing import Any

from array_api_compat.common import _linalg

import autodev as _ad

from ._aliases import matmul, matrix_transpose, tensordot, vecdot  # noqa: F401
from ._aliases import _generic
from .._array import ndarray
from ._wrap import as_arrays, face_functions, standard

EighResult = _linalg.EighResult
QRResult = _linalg.QRResult
SlogdetResult = _linalg.SlogdetResult
SVDResult = _linalg.SVDResult

cross = _generic(_linalg.cross)
outer = _generic(_linalg.outer)
eigh = _generic(_linalg.eigh)
qr = _generic(_linalg.qr)
slogdet = _generic(_linalg.slogdet)
svd = _generic(_linalg.svd)
cholesky = _generic(_linalg.cholesky)
matrix_rank = _generic(_linalg.matrix_rank)
pinv = _generic(_linalg.pinv)
matrix_norm = _generic(_linalg.matrix_norm)
svdvals = _generic(_linalg.svdvals)
diagonal = _generic(_linalg.diagonal)
trace = _generic(_linalg.trace)

EigResult = _linalg.EigResult


def eig(x: ndarray, /) -> EigResult:
    """Eigenvalues and right eigenvectors of square matrices, always complex."""
    values, vectors = _ad.linalg.eig(x)
    dtype = _ad.result_type(x.dtype, _ad.complex64)
    return EigResult(as_arrays(values.astype(dtype, copy=False)),
                     vectors.astype(dtype, copy=False))


def eigvals(x: ndarray, /) -> ndarray:
    """Eigenvalues of square matrices, always complex."""
    dtype = _ad.result_type(x.dtype, _ad.complex64)
    return as_arrays(_ad.linalg.eigvals(x)).astype(dtype, copy=False)


# NumPy 2's own: solve treats x2 as a vector only when it is 1-d, as the standard says
_SAME = "det eigvalsh inv matrix_power solve vector_norm".split()
_namespace = globals()
for _name in _SAME:
    _namespace[_name] = standard(getattr(_ad.linalg, _name), _name)

__all__ = sorted(
    _SAME + """eig eigvals cross outer eigh qr slogdet svd cholesky matrix_rank pinv matrix_norm svdvals
    diagonal trace matmul matrix_transpose tensordot vecdot""".split()
)

face_functions(globals(), __all__)  # every function returns the face's arrays


def __dir__() -> list[str]:
    return __all__

