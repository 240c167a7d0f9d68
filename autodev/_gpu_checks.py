"""NumPy's argument checks that CuPy skips, added around GPU implementations.

CuPy wraps out-of-range indices in ``take``/``take_along_axis`` and clips invalid
``choose`` entries where NumPy raises. Each wrapper here checks first (one
device reduction, which synchronises) and raises NumPy's exception.
"""

from __future__ import annotations

from typing import Any, Callable

from ._backends import Backend

Func = Callable[..., Any]


def _out_of_range(xp: Any, indices: Any, n: int) -> bool:
    idx = indices if hasattr(indices, "dtype") else xp.asarray(indices)
    if idx.size == 0 or idx.dtype.kind not in "iu":
        return False
    return bool(xp.any((idx < -n) | (idx >= n)))


def checked_take(backend: Backend, func: Func) -> Func:
    """``take`` that raises IndexError for out-of-range indices under ``mode='raise'``,
    and applies ``mode='wrap'``/``'clip'`` itself (CuPy's ``take`` takes no ``mode``)."""
    xp = backend.xp

    def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
             mode: str = "raise") -> Any:
        n = a.size if axis is None else a.shape[axis]
        if mode == "raise":
            if _out_of_range(xp, indices, n):
                raise IndexError(f"index out of range for axis {axis} with size {n}")
        elif n:  # CuPy's take has no ``mode=`` (it always wraps): apply NumPy's here
            idx = indices if hasattr(indices, "dtype") else xp.asarray(indices)
            indices = idx % n if mode == "wrap" else xp.clip(idx, 0, n - 1)
        return func(a, indices, axis=axis, out=out)

    return take


def checked_take_along_axis(backend: Backend, func: Func) -> Func:
    """``take_along_axis`` that raises IndexError for out-of-range indices."""
    xp = backend.xp

    def take_along_axis(arr: Any, indices: Any, axis: int | None = -1) -> Any:
        n = arr.size if axis is None else arr.shape[axis]
        if _out_of_range(xp, indices, n):
            raise IndexError(f"index out of range for axis {axis} with size {n}")
        return func(arr, indices, axis)

    return take_along_axis


def checked_choose(backend: Backend, func: Func) -> Func:
    """``choose`` that raises ValueError for entries outside the choices under ``mode='raise'``."""
    xp = backend.xp

    def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        if mode == "raise":
            idx = a if hasattr(a, "dtype") else xp.asarray(a)
            if idx.size and bool(xp.any((idx < 0) | (idx >= len(choices)))):
                raise ValueError("invalid entry in choice array")
        return func(a, choices, out=out, mode=mode)

    return choose


GPU_WRAPPERS: dict[str, Callable[[Backend, Func], Func]] = {
    "take": checked_take,
    "take_along_axis": checked_take_along_axis,
    "choose": checked_choose,
}


# --------------------------------------------------------------------------- CuPy 14 parity
#
# What CuPy does differently from NumPy for the dispatched names, read from the
# CuPy 14.2 sources (docs/dispatch.md, "Known CuPy differences"). Keywords CuPy
# lacks send the call to the CPU (a capability rule); differences CuPy can be
# brought to agree on are corrected around the GPU call (a wrapper).

Rule = Callable[[list[Any], dict[str, Any]], bool]

#: NumPy keywords the CuPy function does not take (CuPy raises TypeError): a call
#: passing one runs on the CPU.
NUMPY_ONLY_KWARGS: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("sum", "prod", "nansum", "nanprod", "max", "min", "amax", "amin",
                     "nanmax", "nanmin"), ("initial", "where")),
    **dict.fromkeys(("mean", "nanmean", "all", "any"), ("where",)),
    **dict.fromkeys(("std", "var", "nanstd", "nanvar"), ("where", "mean", "correction")),
    **dict.fromkeys(("sort", "argsort"), ("order",)),
    **dict.fromkeys(("partition", "argpartition"), ("order",)),
    **dict.fromkeys(("percentile", "quantile"), ("weights",)),
    "count_nonzero": ("keepdims",),
    "isin": ("kind",),
    "lexsort": ("axis",),
    "unique": ("sorted",),
    "trim_zeros": ("axis",),
    "clip": ("min", "max", "dtype", "casting", "where", "order", "subok", "signature"),
    "einsum": ("out", "casting", "order"),
    "delete": ("obj",),
    "linalg.cholesky": ("upper",),
    "linalg.matrix_rank": ("hermitian", "rtol"),
    "linalg.pinv": ("hermitian", "rtol"),
    "linalg.svd": ("hermitian",),
    **{f"fft.{n}": ("out",) for n in (
        "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft"
    ).split()},
}

#: ``method=`` values CuPy's percentile/quantile implement (others raise ValueError).
_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def without_kwargs(names: tuple[str, ...]) -> Rule:
    """Capability rule: none of the keywords ``names`` is passed."""
    return lambda arrays, kwargs: not kwargs or not any(n in kwargs for n in names)


def _quantile_rule(names: tuple[str, ...]) -> Rule:
    plain = without_kwargs(names)
    return lambda arrays, kwargs: plain(arrays, kwargs) and (
        kwargs.get("method", "linear") in _QUANTILE_METHODS
        and kwargs.get("interpolation") is None
        and bool(arrays) and arrays[0].dtype.kind in "iuf")


def _lstsq_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    # CuPy replaces rcond <= 0 or >= 1 by eps; NumPy passes it on to LAPACK.
    rcond = kwargs.get("rcond") if kwargs else None
    return rcond is None or (isinstance(rcond, (int, float)) and 0 < rcond < 1)


def gpu_rules() -> dict[str, Rule]:
    """Capability rules by dispatched name (``linalg.``/``fft.`` prefixed)."""
    rules: dict[str, Rule] = {n: without_kwargs(k) for n, k in NUMPY_ONLY_KWARGS.items()}
    for name in ("percentile", "quantile"):
        rules[name] = _quantile_rule(NUMPY_ONLY_KWARGS[name])
    rules["linalg.lstsq"] = _lstsq_rule
    return rules


def any_kind_sort(backend: Backend, func: Func) -> Func:
    """``sort``/``argsort``: CuPy takes only ``kind=None``/``'stable'`` (its sort is
    always stable, a valid result for every NumPy kind) and no ``stable=``."""

    def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
             stable: Any = None) -> Any:
        return func(a, axis=axis, kind="stable")

    return sort


def any_kind_partition(backend: Backend, func: Func) -> Func:
    """``partition``/``argpartition``: CuPy takes no ``kind=`` (NumPy's only is 'introselect')."""

    def partition(a: Any, kth: Any, axis: Any = -1, kind: Any = "introselect",
                  order: Any = None) -> Any:
        return func(a, kth, axis=axis)

    return partition


def float_quantile(backend: Backend, func: Func) -> Func:
    """``percentile``/``quantile``: CuPy computes in ``result_type(a, q)``, so integer
    input interpolates in integers (``percentile(int_array, 50)`` truncated); NumPy
    interpolates integer input in float64."""
    xp = backend.xp

    def quantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                 overwrite_input: bool = False, method: str = "linear",
                 keepdims: bool = False) -> Any:
        if a.dtype.kind in "iu" and method in ("linear", "midpoint"):
            a = a.astype(xp.float64)
            if hasattr(q, "dtype"):
                q = q.astype(xp.float64)
        return func(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                    method=method, keepdims=keepdims)

    return quantile


def _result_types() -> dict[str, Any]:
    import numpy.linalg as la

    mod = getattr(la, "_linalg", la)
    return {name: getattr(mod, cls) for name, cls in (
        ("linalg.eigh", "EighResult"), ("linalg.eig", "EigResult"),
        ("linalg.svd", "SVDResult"), ("linalg.slogdet", "SlogdetResult"),
        ("linalg.qr", "QRResult")) if hasattr(mod, cls)}


def named_result(name: str) -> Callable[[Backend, Func], Func]:
    """``linalg.eigh``/``svd``/``slogdet``/``qr``/``eig``: CuPy returns a plain tuple where
    NumPy returns a named tuple (``EighResult(eigenvalues, eigenvectors)``, ...)."""

    def factory(backend: Backend, func: Func) -> Func:
        result_type = _result_types().get(name)

        def named(*args: Any, **kwargs: Any) -> Any:
            result = func(*args, **kwargs)
            if (result_type is not None and type(result) is tuple
                    and len(result) == len(result_type._fields)
                    and not (name == "linalg.qr" and kwargs.get("mode", args[1] if len(args) > 1
                                                                else "reduced") == "raw")):
                return result_type(*result)
            return result

        return named

    return factory


def real_eig(values_only: bool) -> Callable[[Backend, Func], Func]:
    """``linalg.eig``/``eigvals``: CuPy's results are complex for real input always; NumPy
    returns them real when every eigenvalue is real (one device reduction, synchronising)."""

    def factory(backend: Backend, func: Func) -> Func:
        xp = backend.xp

        def eig(a: Any) -> Any:
            result = func(a)
            w = result if values_only else result[0]
            if a.dtype.kind != "c" and w.dtype.kind == "c" and not bool(xp.any(w.imag != 0)):
                if values_only:
                    return w.real.copy()
                return type(result)(*(r.real.copy() for r in result)) \
                    if hasattr(result, "_fields") else tuple(r.real.copy() for r in result)
            return result

        return eig

    return factory


def lstsq_host_rank(backend: Backend, func: Func) -> Func:
    """``linalg.lstsq``: CuPy's ``rank`` is a 0-d device array; NumPy's a ``numpy.int32``."""
    import numpy as np

    def lstsq(a: Any, b: Any, rcond: Any = None) -> Any:
        x, residuals, rank, s = func(a, b, rcond)
        return x, residuals, np.int32(int(rank)), s

    return lstsq


def python_bool(backend: Backend, func: Func) -> Func:
    """``allclose``/``array_equal``/``array_equiv``: NumPy returns a Python ``bool``,
    CuPy a 0-d device array."""

    def predicate(*args: Any, **kwargs: Any) -> bool:
        return bool(func(*args, **kwargs))

    return predicate


def shape_keyword(backend: Backend, func: Func) -> Func:
    """``reshape``: NumPy 2.1+ takes ``shape=`` (``newshape=`` deprecated); CuPy only
    ``newshape``. ``reshape`` runs where its input lives, so it is renamed, not moved."""

    def reshape(a: Any, *args: Any, **kwargs: Any) -> Any:
        if "shape" in kwargs:
            return func(a, kwargs.pop("shape"), *args, **kwargs)
        return func(a, *args, **kwargs)

    return reshape


def linalg_diagonal(backend: Backend, func: Func) -> Func:
    """``linalg.diagonal``: absent from ``cupy.linalg``; the main ``diagonal`` over the
    last two axes (the spec's GPU path is ``diagonal``)."""

    def diagonal(x: Any, /, *, offset: int = 0) -> Any:
        return func(x, offset, -2, -1)

    return diagonal


GPU_WRAPPERS.update({
    "sort": any_kind_sort, "argsort": any_kind_sort,
    "partition": any_kind_partition, "argpartition": any_kind_partition,
    "percentile": float_quantile, "quantile": float_quantile,
    "allclose": python_bool, "array_equal": python_bool, "array_equiv": python_bool,
    "reshape": shape_keyword,
    "linalg.eigh": named_result("linalg.eigh"), "linalg.svd": named_result("linalg.svd"),
    "linalg.slogdet": named_result("linalg.slogdet"), "linalg.qr": named_result("linalg.qr"),
    "linalg.eigvals": real_eig(True),
    "linalg.lstsq": lstsq_host_rank,
    "linalg.diagonal": linalg_diagonal,
})


def _eig(backend: Backend, func: Func) -> Func:
    return named_result("linalg.eig")(backend, real_eig(False)(backend, func))


GPU_WRAPPERS["linalg.eig"] = _eig

#: Array methods whose CuPy method shares the function's difference.
METHOD_GPU_WRAPPERS: dict[str, Callable[[Backend, Func], Func]] = {
    "argsort": any_kind_sort, "argpartition": any_kind_partition,
    "take": checked_take, "choose": checked_choose,
}
