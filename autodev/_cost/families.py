"""Cost families: which cost curve prices each function, and how much work a call is.

The cost model (:mod:`autodev._cost.model`) fits one curve per family and dtype class;
this module says which family each dispatched name belongs to (the function
table builds its specs from these tables, the simulated GPU charges its virtual
clock by them) and how a call's *work*, the curve's x, is counted from its
arrays. It imports nothing else of autodev.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

WorkFn = Callable[[list[Any]], float]

def work_elements(arrays: list[Any]) -> float:
    """Largest input size (output size of a broadcast elementwise call)."""
    largest = 1
    for a in arrays:
        size = a.size
        if size > largest:
            largest = size
    return largest


def work_first(arrays: list[Any]) -> float:
    """Size of the first array (reductions, sorts' n)."""
    return arrays[0].size if arrays else 1


def work_matmul(arrays: list[Any]) -> float:
    """Multiply-adds of ``a @ b``: size(a) * size(b) / k."""
    if len(arrays) < 2:
        return work_first(arrays)
    a, b = arrays[0], arrays[1]
    k = a.shape[-1] if a.ndim else 1
    return a.size * b.size / max(k, 1)


def work_nlogn(arrays: list[Any]) -> float:
    """n * log2(n) of the first array."""
    n = work_first(arrays)
    return n * math.log2(max(n, 2))


def work_cubic(arrays: list[Any]) -> float:
    """n^3 per matrix (times the batch) of the first array."""
    if not arrays or arrays[0].ndim < 2:
        return work_first(arrays)
    a = arrays[0]
    return a.size * min(a.shape[-2:])


WORK: dict[str, WorkFn] = {
    "elementwise": work_elements,
    "transcendental": work_elements,
    "copy": work_elements,
    "creation": work_elements,
    "reduction": work_first,
    "matmul": work_matmul,
    "fft": work_nlogn,
    "sort": work_nlogn,
    "solve": work_cubic,
    "cholesky": work_cubic,
    "svd": work_cubic,
    "eigh": work_cubic,
    "sparse_matmul": work_elements,
}


TRANSCENDENTAL = frozenset(
    "sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh "
    "exp exp2 expm1 log log2 log10 log1p logaddexp logaddexp2 power float_power sqrt cbrt "
    "hypot deg2rad rad2deg degrees radians".split()
)

#: Dispatched functions of the main namespace, by cost family.
FAMILY_FUNCTIONS: dict[str, str] = {
    "reduction": (
        "sum prod mean std var min max amin amax argmin argmax any all cumsum cumprod "
        "nansum nanprod nanmean nanstd nanvar nanmin nanmax nanargmin nanargmax nancumsum "
        "nancumprod median nanmedian percentile nanpercentile quantile nanquantile average "
        "ptp count_nonzero trace allclose array_equal array_equiv cumulative_sum "
        "cumulative_prod"
    ),
    "matmul": "dot vdot inner outer tensordot einsum kron vecdot matvec vecmat",
    "sort": "sort argsort lexsort partition argpartition unique searchsorted",
    "copy": (
        "where concatenate concat stack vstack hstack dstack column_stack take "
        "take_along_axis repeat tile flip fliplr flipud roll rot90 diff ediff1d gradient "
        "diag diagflat tril triu pad nonzero argwhere flatnonzero isclose clip around "
        "round copy extract select choose compress interp convolve correlate bincount "
        "digitize append insert delete resize trim_zeros isin cross nan_to_num "
        "real_if_close unwrap sinc i0 angle real imag conj conjugate"
    ),
    "primary": (
        "reshape ravel transpose swapaxes moveaxis rollaxis squeeze expand_dims "
        "broadcast_to broadcast_arrays atleast_1d atleast_2d atleast_3d diagonal "
        "permute_dims matrix_transpose split array_split hsplit vsplit dsplit "
        "zeros_like ones_like empty_like full_like meshgrid ascontiguousarray "
        "asfortranarray"
    ),
}

LINALG_FUNCTIONS: dict[str, str] = {
    "solve": "solve inv det slogdet lstsq tensorsolve tensorinv matrix_power",
    "cholesky": "cholesky qr",
    "svd": "svd svdvals pinv matrix_rank cond",
    "eigh": "eigh eigvalsh eig eigvals",
    "reduction": "norm vector_norm matrix_norm trace",
    "matmul": "multi_dot matmul tensordot vecdot outer cross",
    "primary": "diagonal matrix_transpose",
}
FFT_FUNCTIONS: dict[str, str] = {
    "fft": "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft",
    "primary": "fftshift ifftshift",
}


def family_of_ufunc(name: str) -> str:
    """The cost family of the NumPy ufunc ``name``."""
    if name == "matmul":
        return "matmul"
    return "transcendental" if name in TRANSCENDENTAL else "elementwise"


def dispatched_families(ufunc_names: Iterable[str]) -> dict[str, str]:
    """Dispatched name (``"sum"``, ``"linalg.solve"``, a ufunc's) -> its cost family; the
    names that run where their input lives (``primary``) are not priced and left out."""
    found: dict[str, str] = {}
    for prefix, table in (("", FAMILY_FUNCTIONS), ("linalg.", LINALG_FUNCTIONS),
                          ("fft.", FFT_FUNCTIONS)):
        for family, names in table.items():
            if family != "primary":
                found.update((prefix + name, family) for name in names.split())
    found.update((name, family_of_ufunc(name)) for name in ufunc_names)
    return found
