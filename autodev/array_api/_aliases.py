"""The array-API face's main namespace, bound to autodev.

Written once elsewhere, bound here: where array-api-compat has generic code
(``array_api_compat.common._aliases``, parametrised by the array module ``xp``)
it is bound to ``autodev`` itself, one line per name, so it runs through
autodev's dispatcher on whichever device holds the data. What is written out
here are the real differences: ``device=`` taking autodev's devices, results
that stay where their input lives (``astype``, ``*_like``, ``from_dlpack``), and
0-d arrays where NumPy returns scalars (:func:`~autodev.array_api._wrap.standard`).
"""

from __future__ import annotations

import math
from builtins import bool as py_bool
from typing import Any, Callable, NamedTuple, Sequence

import numpy as np
from numpy.typing import DTypeLike
from array_api_compat._internal import get_xp
from array_api_compat.common import _aliases

import autodev as _ad

from .._array import ndarray
from .._typing import DeviceLike
from .._creation import from_dlpack as _from_dlpack
from ._wrap import as_arrays, face_functions, standard

_bind = get_xp(_ad)


def _generic(func: Callable[..., Any]) -> Callable[..., Any]:
    """array-api-compat's generic ``func`` bound to autodev, returning 0-d arrays."""
    return standard(_bind(func))


def _dev(device: DeviceLike | None) -> dict[str, Any]:
    """``device=`` for an autodev creation call: omitted when None (the policy decides)."""
    return {} if device is None else {"device": device}


# -- dtypes and constants: NumPy's very objects ---------------------------------------
bool = np.bool_  # noqa: A001
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint16, uint32, uint64 = np.uint8, np.uint16, np.uint32, np.uint64
float32, float64, complex64, complex128 = np.float32, np.float64, np.complex64, np.complex128
e = math.e  # == np.e; mypy 2.4 without a cache reads np.e as a deleted variable
inf, nan, newaxis, pi = np.inf, np.nan, np.newaxis, np.pi

# -- elementwise: autodev's own (dispatched) functions, 0-d in, 0-d out ---------------
_ELEMENTWISE = (
    "abs add bitwise_and bitwise_or bitwise_xor ceil conj copysign cos cosh divide equal "
    "exp expm1 floor floor_divide greater greater_equal hypot imag isfinite isinf isnan "
    "less less_equal log log1p log2 log10 logaddexp logical_and logical_not logical_or "
    "logical_xor maximum minimum multiply negative nextafter not_equal positive real "
    "reciprocal remainder round signbit sin sinh square sqrt subtract tan tanh trunc"
).split()
#: The standard's name -> NumPy's.
_RENAMED = {
    "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
    "atan": "arctan", "atan2": "arctan2", "atanh": "arctanh",
    "bitwise_left_shift": "left_shift", "bitwise_invert": "invert",
    "bitwise_right_shift": "right_shift", "pow": "power",
}
#: Functions whose NumPy form already has the standard's parameters.
_SAME = (
    "broadcast_to expand_dims flip moveaxis roll squeeze stack tile repeat take "
    "take_along_axis argmax argmin searchsorted where isin max min mean prod sum all any "
    "tril triu"
).split()

_namespace = globals()
for _name in _ELEMENTWISE + _SAME:
    _namespace[_name] = standard(getattr(_ad, _name), _name)
for _name, _np_name in _RENAMED.items():
    _namespace[_name] = standard(getattr(_ad, _np_name), _name)

# -- generic code, bound to autodev ---------------------------------------------------
UniqueAllResult = _aliases.UniqueAllResult
UniqueCountsResult = _aliases.UniqueCountsResult
UniqueInverseResult = _aliases.UniqueInverseResult
unique_all = _generic(_aliases.unique_all)
unique_counts = _generic(_aliases.unique_counts)
unique_inverse = _generic(_aliases.unique_inverse)
unique_values = _generic(_aliases.unique_values)
std = _generic(_aliases.std)
var = _generic(_aliases.var)
cumulative_sum = _generic(_aliases.cumulative_sum)
cumulative_prod = _generic(_aliases.cumulative_prod)
clip = _generic(_aliases.clip)
permute_dims = _generic(_aliases.permute_dims)
reshape = _generic(_aliases.reshape)
argsort = _generic(_aliases.argsort)
sort = _generic(_aliases.sort)
nonzero = _generic(_aliases.nonzero)
matmul = _generic(_aliases.matmul)
matrix_transpose = _generic(_aliases.matrix_transpose)
tensordot = _generic(_aliases.tensordot)
unstack = _generic(_aliases.unstack)
sign = _generic(_aliases.sign)
iinfo = _bind(_aliases.iinfo)
vecdot = standard(_ad.vecdot, "vecdot")

# dtype-only functions: NumPy's, as they never touch data
isdtype = np.isdtype
broadcast_shapes = np.broadcast_shapes


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """The dtype the standard's promotion gives ``arrays_and_dtypes`` (NumPy's rules)."""
    return _ad.result_type(*arrays_and_dtypes)


def can_cast(from_: DTypeLike | ndarray, to: DTypeLike, /) -> py_bool:
    """True if ``from_`` (a dtype or an array) casts to ``to`` under the promotion rules."""
    return py_bool(np.can_cast(from_.dtype if isinstance(from_, ndarray) else from_, to))


class finfo_object(NamedTuple):  # noqa: N801  (the standard's name)
    """Machine limits of a floating dtype, as Python numbers (NumPy's are NumPy scalars
    for single precision)."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: np.dtype


def finfo(type: DTypeLike | ndarray, /) -> finfo_object:  # noqa: A002  (the standard's name)
    """Machine limits of the floating dtype ``type`` (a dtype or an array of it)."""
    info = np.finfo(type.dtype if isinstance(type, ndarray) else type)
    return finfo_object(info.bits, float(info.eps), float(info.max), float(info.min),
                        float(info.smallest_normal), info.dtype)


# -- creation: device= is an autodev device (or a string naming one) ------------------

def asarray(obj: Any, /, *, dtype: DTypeLike | None = None, device: DeviceLike | None = None,
            copy: py_bool | None = None) -> ndarray:
    """Convert ``obj`` to an array on ``device`` (or where it lives), copying only if told."""
    return as_arrays(_ad.asarray(obj, dtype=dtype, copy=copy, **_dev(device)), (obj,))


def arange(start: float, /, stop: float | None = None, step: float = 1, *,
           dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
    """Evenly spaced values in ``[start, stop)``."""
    return _ad.arange(start, stop, step, dtype=dtype, **_dev(device))


def empty(shape: int | tuple[int, ...], *,
          dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
    """An uninitialised array of ``shape``."""
    return as_arrays(_ad.empty(shape, dtype=dtype, **_dev(device)))


def zeros(shape: int | tuple[int, ...], *,
          dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
    """An array of zeros of ``shape``."""
    return as_arrays(_ad.zeros(shape, dtype=dtype, **_dev(device)))


def ones(shape: int | tuple[int, ...], *,
         dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
    """An array of ones of ``shape``."""
    return as_arrays(_ad.ones(shape, dtype=dtype, **_dev(device)))


def full(shape: int | tuple[int, ...], fill_value: complex, *, dtype: DTypeLike | None = None,
         device: DeviceLike | None = None) -> ndarray:
    """An array of ``shape`` filled with ``fill_value``."""
    return _ad.full(shape, as_arrays(fill_value, (fill_value,)), dtype=dtype, **_dev(device))


def eye(n_rows: int, n_cols: int | None = None, /, *, k: int = 0, dtype: DTypeLike | None = None,
        device: DeviceLike | None = None) -> ndarray:
    """A 2-d array with ones on the ``k``-th diagonal."""
    return _ad.eye(n_rows, n_cols, k=k, dtype=dtype, **_dev(device))


def linspace(start: complex, stop: complex, /, num: int, *, dtype: DTypeLike | None = None,
             device: DeviceLike | None = None, endpoint: py_bool = True) -> ndarray:
    """``num`` evenly spaced numbers over ``[start, stop]``."""
    return _ad.linspace(start, stop, num, dtype=dtype, endpoint=endpoint, **_dev(device))


def meshgrid(*arrays: ndarray, indexing: str = "xy") -> tuple[ndarray, ...]:
    """Coordinate grids from 1-d coordinate arrays."""
    return tuple(_ad.meshgrid(*arrays, indexing=indexing))


def _like(name: str) -> Any:
    """``zeros_like``, ...: where ``x`` lives unless ``device=`` says otherwise."""
    like = getattr(_ad, name)
    plain = getattr(_ad, name[:-len("_like")])

    def function(x: ndarray, /, *,
                 dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
        if device is None:
            return as_arrays(like(x, dtype=dtype))
        return as_arrays(plain(x.shape, dtype=x.dtype if dtype is None else dtype,
                               device=device))

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"``{name[:-5]}`` shaped as ``x``, on ``device`` or where ``x`` lives."
    return function


empty_like = _like("empty_like")
zeros_like = _like("zeros_like")
ones_like = _like("ones_like")


def full_like(x: ndarray, /, fill_value: complex, *, dtype: DTypeLike | None = None,
              device: DeviceLike | None = None) -> ndarray:
    """An array shaped as ``x`` filled with ``fill_value``, on ``device`` or with ``x``."""
    if device is None:
        return _ad.full_like(x, as_arrays(fill_value, (fill_value,)), dtype=dtype)
    return _ad.full(x.shape, fill_value, dtype=x.dtype if dtype is None else dtype,
                    device=device)


from_dlpack = standard(_from_dlpack, "from_dlpack")


def astype(x: ndarray, dtype: DTypeLike, /, *, copy: py_bool = True,
           device: DeviceLike | None = None) -> ndarray:
    """``x`` cast to ``dtype``, where ``x`` lives (or on ``device``)."""
    result = as_arrays(x, (x,)).astype(dtype, copy=copy)
    if device is None:
        return result
    moved = result.to_device(device)
    return moved.copy() if copy and moved is x else moved


# -- functions whose NumPy form differs from the standard's ---------------------------

def concat(arrays: Sequence[ndarray], /, *, axis: int | None = 0) -> ndarray:
    """Join arrays along ``axis`` (flattened first when None)."""
    return as_arrays(_ad.concatenate(arrays, axis=axis))


def broadcast_arrays(*arrays: ndarray) -> tuple[ndarray, ...]:
    """Broadcast arrays against each other."""
    return tuple(_ad.broadcast_arrays(*arrays))


def count_nonzero(x: ndarray, /, *, axis: int | tuple[int, ...] | None = None,
                  keepdims: py_bool = False) -> ndarray:
    """Number of non-zero elements along ``axis`` (a 0-d array over all of ``x``)."""
    result = _ad.count_nonzero(x, axis=axis, keepdims=keepdims)
    if isinstance(result, ndarray):
        return as_arrays(result)
    # NumPy (so only the host) gives a Python int over the whole array
    return _ad.asarray(result, dtype=np.intp)


def diff(x: ndarray, /, *, axis: int = -1, n: int = 1, prepend: ndarray | None = None,
         append: ndarray | None = None) -> ndarray:
    """The ``n``-th forward difference along ``axis``."""
    extra = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    return as_arrays(_ad.diff(x, n=n, axis=axis, **extra))


__all__ = sorted(
    _ELEMENTWISE + _SAME + list(_RENAMED) + """
    unique_all unique_counts unique_inverse unique_values std var cumulative_sum
    cumulative_prod clip permute_dims reshape argsort sort nonzero matmul matrix_transpose
    tensordot unstack sign finfo iinfo vecdot isdtype broadcast_shapes result_type can_cast
    asarray arange empty zeros ones full eye linspace meshgrid empty_like zeros_like
    ones_like full_like from_dlpack astype concat broadcast_arrays count_nonzero diff
    bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 complex64
    complex128 e inf nan newaxis pi
    """.split()
)

face_functions(globals(), __all__)  # every function returns the face's arrays
