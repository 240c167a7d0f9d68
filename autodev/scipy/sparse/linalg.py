"""``autodev.scipy.sparse.linalg``: every ``scipy.sparse.linalg`` name; solvers dispatched.

``spsolve``, ``cg``, ``gmres``, ``minres``, ``eigsh``, ``svds`` and ``norm`` run where
the cost model says when cupyx has the case; sparse solvers have no cost family of
their own yet and are costed as ``ITERATIONS`` sparse products. Declared CPU-only:
preconditioners (``M=``) and callbacks (they would see device arrays), ``eigsh`` with
``sigma``/``M``/``mode`` (shift-invert), ``svds`` with another solver or ``v0``,
``lsqr`` (cupyx's is a direct QR solver without SciPy's tolerances or outputs),
``LinearOperator``/``aslinearoperator`` (SciPy's, on the host) and every other name.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as _np
import scipy.sparse.linalg as _slinalg

from ..._backends import Backend
from .._spec import REAL_FLOATING, ScipySpec, all_of, build_specs, kwarg_in
from .._spec import module_getattr, public_names
from ._matrix import GPU_DTYPES, GPU_FORMATS, _spbase

#: Sparse products one solver call is costed as.
ITERATIONS = 100

#: Dispatched ``scipy.sparse.linalg`` functions, by cost family.
FAMILIES: dict[str, str] = {
    "sparse_matmul": "spsolve cg gmres minres eigsh svds",
    "reduction": "norm",
}


def _work_solver(arrays: list[Any]) -> float:
    return float(arrays[0].size) * ITERATIONS if arrays else 1.0


def _operands_ok(dtypes: frozenset[_np.dtype]) -> Callable[[list[Any], dict[str, Any]], bool]:
    def rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
        for a in arrays:
            if a.dtype not in dtypes:
                return False
            if isinstance(a, _spbase) and a.format not in GPU_FORMATS:
                return False
        return bool(arrays)
    return rule


def _none(*names: str) -> Callable[[list[Any], dict[str, Any]], bool]:
    return lambda arrays, kwargs: all(kwargs.get(n) is None for n in names)


def _sparse_first(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return bool(arrays) and isinstance(arrays[0], _spbase)


def _promoted(*arrays: Any) -> list[Any]:
    dtype = _np.result_type(*(a.dtype for a in arrays if a is not None))
    return [a if a is None or a.dtype == dtype else a.astype(dtype) for a in arrays]


@functools.cache
def _solution_dtype(path: str, dtype: _np.dtype) -> _np.dtype:
    """The dtype of the solution this SciPy's solver ``path`` gives for a system of
    ``dtype`` (SciPy 1.17's minres gives float64 for float32, 1.18's float32): read off a
    1x1 system once."""
    import scipy.sparse

    func = getattr(_slinalg, path.rpartition(".")[2])
    x, _ = func(scipy.sparse.eye(1, dtype=dtype, format="csr"), _np.ones(1, dtype))
    return _np.dtype(x.dtype)


def _iterative(path: str) -> Callable[[Any], Callable[..., Any] | None]:
    """GPU factory for cg/gmres/minres: SciPy's ``rtol`` under the GPU function's name
    for it (cupyx's minres calls it ``tol``), operands promoted to one dtype, and the
    solution in the dtype this SciPy gives."""
    def factory(backend: Backend) -> Callable[..., Any] | None:
        func = backend.resolve(path)
        if func is None:  # an older CuPy, or cupyx.scipy.sparse.linalg not importable
            return None
        names = inspect.signature(func).parameters
        tol_name = "rtol" if "rtol" in names else "tol"

        def run(A: Any, b: Any, x0: Any = None, *, rtol: float = 1e-5, **kwargs: Any) -> Any:
            for name in ("M", "callback", "callback_type", "show", "check"):
                if kwargs.get(name) in (None, False):
                    kwargs.pop(name, None)
            A, b, x0 = _promoted(A, b, x0)
            x, info = func(A, b, x0, **{tol_name: rtol}, **kwargs)
            # the solution in SciPy's dtype: cupyx's and SciPy's differ for float32
            # systems (float64 from one, float32 from the other, by version)
            return x.astype(_solution_dtype(path, A.dtype), copy=False), int(info)

        return run

    # rtol is renamed where cupyx calls it tol; M/callback/show/check are None/False
    factory.passes_through = (  # type: ignore[attr-defined]  # tests read it
        path, ("rtol", "M", "callback", "callback_type", "show", "check"))
    return factory


def _spsolve(backend: Backend) -> Callable[..., Any] | None:
    func = backend.resolve("scipy.sparse.linalg.spsolve")
    if func is None:
        return None

    def run(A: Any, b: Any, permc_spec: Any = None, use_umfpack: bool = True) -> Any:
        A, b = _promoted(A, b)
        return func(A.tocsr(), b)

    return run


def _keeping(path: str, *drop: str) -> Callable[[Any], Callable[..., Any] | None]:
    """GPU factory calling ``path`` without the keywords ``drop`` (all None by the rule)."""
    def factory(backend: Backend) -> Callable[..., Any] | None:
        func = backend.resolve(path)
        if func is None:
            return None

        def run(*args: Any, **kwargs: Any) -> Any:
            for name in drop:
                kwargs.pop(name, None)
            return func(*args, **kwargs)

        return run

    factory.passes_through = (path, drop)  # type: ignore[attr-defined]  # tests read it
    return factory


_FLOAT = _operands_ok(GPU_DTYPES)
_REAL = _operands_ok(REAL_FLOATING)
_RULES: dict[str, dict[str, Any]] = {
    "spsolve": {"gpu_impl": _spsolve, "work": _work_solver,
                "gpu_ok": all_of(_REAL, _sparse_first, lambda arrays, kwargs:
                                 len(arrays) == 2 and arrays[1].ndim == 1)},
    "cg": {"gpu_impl": _iterative("scipy.sparse.linalg.cg"),
           "gpu_ok": all_of(_FLOAT, _none("M", "callback"))},
    "gmres": {"gpu_impl": _iterative("scipy.sparse.linalg.gmres"),
              "gpu_ok": all_of(_FLOAT, _none("M", "callback"))},
    "minres": {"gpu_impl": _iterative("scipy.sparse.linalg.minres"),
               "gpu_ok": all_of(_REAL, _none("M", "callback"), kwarg_in("shift", (0.0, 0)))},
    "eigsh": {"gpu_impl": _keeping("scipy.sparse.linalg.eigsh", "M", "sigma", "Minv",
                                   "OPinv", "mode", "rng"),
              "gpu_ok": all_of(_REAL, _sparse_first,
                               _none("M", "sigma", "Minv", "OPinv", "rng"),
                               kwarg_in("which", ("LM", "LA", "SA")),
                               kwarg_in("mode", ("normal",)))},
    "svds": {"gpu_impl": _keeping("scipy.sparse.linalg.svds", "solver", "rng", "options",
                                  "random_state", "v0"),
             "gpu_ok": all_of(_FLOAT, _sparse_first,
                              _none("v0", "rng", "options", "random_state"),
                              kwarg_in("solver", ("arpack",)), kwarg_in("which", ("LM",)))},
    "norm": {"scalar": True, "gpu_ok": all_of(_FLOAT, _sparse_first)},
}
for _name in ("cg", "gmres", "minres", "eigsh", "svds"):
    _RULES[_name]["work"] = _work_solver

SPECS: dict[str, ScipySpec] = build_specs("scipy.sparse.linalg.", FAMILIES, _RULES,
                                          {"spsolve": 2, "cg": 2, "gmres": 2, "minres": 2})

__all__ = public_names(_slinalg)
__getattr__ = module_getattr(_slinalg, "autodev.scipy.sparse.linalg", SPECS, globals())


def __dir__() -> list[str]:
    return __all__
