"""``autodev.scipy.sparse``: SciPy's sparse formats, resident on a device, products dispatched.

``csr_matrix``/``csr_array``, ``csc_*``, ``coo_*`` and ``dia_*`` live on the CPU or
a GPU; ``bsr_*``, ``lil_*`` and ``dok_*`` on the CPU. ``A @ B`` (sparse x sparse,
sparse x dense, dense x sparse) dispatches by the ``sparse_matmul`` cost family,
whose work counts nonzeros; a matrix keeps a mirror on the device it was last
used on, so a loop moves it once. Every other ``scipy.sparse`` function runs on the
CPU with SciPy, its autodev inputs converted and its sparse results wrapped.
Declared CPU-only: integer and bool matrices (cupyx rejects them), the CPU formats,
and the methods outside ``GPU_METHODS``.
"""

from __future__ import annotations

import importlib
from typing import Any

import scipy.sparse as _ssparse

from .._spec import module_getattr as _module_getattr, public_names as _public_names
from ._matrix import (CLASSES as _CLASSES, FORMATS, GPU_DTYPES, GPU_FORMATS, GPU_METHODS,
                      MATMUL, RMATMUL, _spbase, sparray, spmatrix)

# -- the classes: csr_matrix, csr_array, ... -------------------------------------------
for (_fmt, _is_array), _cls in _CLASSES.items():
    globals()[_cls.__name__] = _cls


def issparse(x: object) -> bool:
    """True for autodev and SciPy sparse matrices and arrays."""
    return isinstance(x, _spbase) or _ssparse.issparse(x)


def isspmatrix(x: object) -> bool:
    """True for sparse *matrices* (``spmatrix``), autodev's or SciPy's."""
    return isinstance(x, spmatrix) or _ssparse.isspmatrix(x)


def _format_check(fmt: str) -> Any:
    def check(x: object) -> bool:
        return (isinstance(x, spmatrix) and x.format == fmt) or bool(
            getattr(_ssparse, f"isspmatrix_{fmt}")(x))

    check.__name__ = f"isspmatrix_{fmt}"
    check.__doc__ = f"True for sparse matrices of the {fmt.upper()} format."
    return check


for _fmt in FORMATS:
    globals()[f"isspmatrix_{_fmt}"] = _format_check(_fmt)

#: The capability table: what runs where (docs and tests read it).
CAPABILITIES: dict[str, Any] = {
    "gpu_formats": sorted(GPU_FORMATS),
    "gpu_dtypes": sorted(str(d) for d in GPU_DTYPES),
    "dispatched": {"sparse_matmul": [MATMUL.name, RMATMUL.name]},
    "gpu_methods": sorted(GPU_METHODS),
}

__all__ = sorted(set(_public_names(_ssparse)) | {"linalg"})
_resolve = _module_getattr(_ssparse, "autodev.scipy.sparse", {}, globals())


def __getattr__(name: str) -> Any:
    if name == "linalg":
        module = importlib.import_module("autodev.scipy.sparse.linalg")
        globals()["linalg"] = module
        return module
    return _resolve(name)


def __dir__() -> list[str]:
    return __all__
