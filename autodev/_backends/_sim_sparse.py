"""Sparse matrices on the simulated GPU: SciPy sparse matrices behind a wall.

:class:`SimSparse` plays the part of a ``cupyx.scipy.sparse`` matrix as
:class:`~autodev._backends._sim_array.SimArray` plays a ``cupy.ndarray``: it refuses
implicit conversion to NumPy, its methods and the functions of
:class:`SimSparseModule` (the sim's ``scipy("sparse")`` and ``scipy("sparse.linalg")``)
refuse host arrays and host sparse matrices, and the only ways across are the
counted ones: a format constructor given a host SciPy matrix uploads it
(``cupyx.scipy.sparse.csr_matrix(scipy_matrix)``), ``get()`` downloads it.
"""

from __future__ import annotations

import functools
from types import ModuleType
from typing import TYPE_CHECKING, Any, Callable, Protocol

import numpy as np
import scipy.sparse as _sp

from .._cost.model import CostModel
from . import _sim_array, _sim_cupy
from ._sim_array import SimArray

if TYPE_CHECKING:  # numpy.typing is not loaded at run time (``import autodev`` stays lean)
    from numpy.typing import DTypeLike

_NO_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed for simulated GPU sparse "
    "matrices. Use autodev's transfers (A.to_device('cpu')) instead."
)


#: Methods a cupyx format lacks, by format (filled from autodev's sparse capability
#: table, ``autodev.scipy.sparse._matrix.GPU_METHODS_MISSING``): AttributeError here too.
MISSING_METHODS: dict[str, frozenset[str]] = {}
#: Keywords cupyx's methods lack, by method (same source): TypeError here too.
MISSING_KEYWORDS: dict[str, tuple[str, ...]] = {}


def _nbytes(matrix: Any) -> int:
    return sum(getattr(matrix, name).nbytes for name in ("data", "indices", "indptr", "row",
                                                         "col", "offsets")
               if isinstance(getattr(matrix, name, None), np.ndarray))


class _Charging(Protocol):
    """What the sparse module counts and charges on the simulated backend (``_sim``'s
    ``SimBackend``, which loads this module: a protocol, so no import runs back)."""

    h2d: int
    d2h: int

    def true_model(self) -> CostModel: ...

    def _charge(self, seconds: float) -> None: ...

    def _tick(self, name: str = "", args: tuple[Any, ...] = ()) -> None: ...


class SimSparse:
    """A sparse matrix on the simulated GPU: a SciPy sparse matrix behind a wall."""

    __slots__ = ("_m", "_backend", "__weakref__")
    __array_priority__ = 100.0
    __array_ufunc__ = None

    def __init__(self, matrix: Any, backend: _Charging) -> None:
        self._m = matrix
        self._backend = backend

    def __array__(self, dtype: DTypeLike | None = None, copy: bool | None = None) -> np.ndarray:
        raise TypeError(_NO_IMPLICIT)

    def get(self) -> Any:
        """Explicit copy to the host (like ``cupyx.scipy.sparse.spmatrix.get``)."""
        backend = self._backend
        backend.d2h += 1
        backend._charge(backend.true_model().d2h(_nbytes(self._m)))
        return self._m.copy()

    @property
    def shape(self) -> tuple[int, ...]:
        return self._m.shape

    @property
    def dtype(self) -> np.dtype:
        return self._m.dtype

    @property
    def nnz(self) -> int:
        return self._m.nnz

    @property
    def format(self) -> str:
        return self._m.format

    @property
    def ndim(self) -> int:
        return self._m.ndim

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in MISSING_METHODS.get(self._m.format, ()):
            raise AttributeError(f"'{self._m.format}_matrix' object has no attribute '{name}'")
        value = getattr(self._m, name)
        if name in MISSING_KEYWORDS:
            value = _sim_cupy.lacking(*MISSING_KEYWORDS[name])(value)
        return _device_callable(value, self._backend) if callable(value) else _wrap(
            value, self._backend)

    def __repr__(self) -> str:
        return f"SimSparse({self._m!r})"

    def __len__(self) -> int:
        return len(self._m)


def _make_operator(name: str) -> Callable[..., Any]:
    def method(self: SimSparse, *args: Any) -> Any:
        self._backend._tick()
        return _wrap(getattr(self._m, name)(*_unwrap(args)), self._backend)

    method.__name__ = name
    return method


for _name in ("add radd sub rsub mul rmul truediv rtruediv matmul rmatmul pow neg abs "
              "lt le gt ge eq ne").split():
    setattr(SimSparse, f"__{_name}__", _make_operator(f"__{_name}__"))
SimSparse.__hash__ = None  # type: ignore[assignment]


def _unwrap(obj: Any) -> Any:
    if type(obj) is SimSparse:
        return obj._m
    if _sp.issparse(obj):
        raise TypeError("Unsupported type: the simulated GPU refuses host sparse matrices, "
                        "as cupyx does. Move the matrix first.")
    if type(obj) in (list, tuple):
        return type(obj)(_unwrap(o) for o in obj)
    if type(obj) is dict:
        return {k: _unwrap(v) for k, v in obj.items()}
    return _sim_array._unwrap(obj)


def _wrap(obj: Any, backend: _Charging) -> Any:
    if _sp.issparse(obj):
        return SimSparse(obj, backend)
    if isinstance(obj, np.matrix):  # cupyx returns plain 2-D device arrays
        return SimArray(np.asarray(obj))
    if isinstance(obj, tuple):
        items = [_wrap(o, backend) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if type(obj) is list:
        return [_wrap(o, backend) for o in obj]
    return _sim_array._wrap(obj)


def _device_callable(func: Callable[..., Any], backend: _Charging) -> Callable[..., Any]:
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        backend._tick()
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)), backend)

    return call


class SimSparseModule:
    """``scipy.sparse`` or ``scipy.sparse.linalg`` seen from the simulated GPU."""

    def __init__(self, module: ModuleType, backend: _Charging) -> None:
        self._module = module
        self._backend = backend
        self._cache: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        if name in self._cache:
            return self._cache[name]
        value = getattr(self._module, name)
        if isinstance(value, type) and issubclass(value, _sp.sparray | _sp.spmatrix):
            value = self._constructor(value)
        elif name == "issparse":
            value = _is_sim_sparse
        elif name == "isspmatrix":
            value = lambda x: _is_sim_sparse(x) and isinstance(x._m, _sp.spmatrix)  # noqa: E731
        elif isinstance(value, (type, ModuleType)):
            pass
        elif callable(value):
            value = _device_callable(value, self._backend)
        self._cache[name] = value
        return value

    def _constructor(self, cls: type) -> Callable[..., SimSparse]:
        backend = self._backend

        def construct(arg1: Any, *args: Any, **kwargs: Any) -> SimSparse:
            backend._tick()
            if _sp.issparse(arg1):  # a host matrix: the upload
                backend.h2d += 1
                backend._charge(backend.true_model().h2d(_nbytes(arg1)))
                return SimSparse(cls(arg1, *args, **kwargs, copy=True), backend)
            return SimSparse(cls(_unwrap(arg1), *args, **_unwrap(kwargs)), backend)

        construct.__name__ = cls.__name__
        return construct


def _is_sim_sparse(obj: Any) -> bool:
    return type(obj) is SimSparse
