"""GPU implementations of ``scipy.linalg`` functions, written once over a backend.

cupyx.scipy.linalg lacks most of them (solve, cholesky, svd, eigh, ...), and where
it has one it does not check complex input for NaN or triangular input for
singularity. Each factory here takes a GPU backend and returns a function with
SciPy's signature, built on ``backend.xp.linalg`` and ``backend.scipy("linalg")``.
The dispatcher runs them inside ``backend.linalg_errors()``, so a failed
factorization raises ``LinAlgError``; the explicit checks below cover what no
factorization reports (NaN/inf with ``check_finite``, shapes, zero diagonals).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Literal

import numpy as np
from scipy.linalg import LinAlgWarning

from .._backends import Backend
from .._typing import Axes, NativeArray

LinAlgError = np.linalg.LinAlgError

#: ``assume_a`` spellings the GPU path implements, by the structure they mean.
ASSUME_A: dict[Any, str] = {
    None: "gen", "gen": "gen", "general": "gen",
    "sym": "sym", "symmetric": "sym",
    "her": "her", "hermitian": "her",
    "pos": "pos", "positive definite": "pos",
}


# ---------------------------------------------------------------------- checks

def require_finite(xp: Any, *arrays: NativeArray) -> None:
    """Raise SciPy's ValueError if any array holds NaN or inf (one sync per array)."""
    for a in arrays:
        if a.dtype.kind in "fc" and not bool(xp.isfinite(a).all()):
            raise ValueError("array must not contain infs or NaNs")


def check_square(a: NativeArray) -> None:
    """Raise SciPy's ValueError unless ``a`` is a square matrix."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError(f"expected square matrix. Got an array of shape {a.shape} instead.")


def check_rows(a: NativeArray, b: NativeArray) -> None:
    """Raise SciPy's ValueError unless ``b`` has as many rows as ``a``."""
    if b.ndim == 0 or b.shape[0] != a.shape[0]:
        raise ValueError(f"Input b has to have the same number of rows as input a "
                         f"({a.shape[0]}). Got b of shape {b.shape} instead.")


def _inexact(xp: Any, *arrays: Any) -> list[Any]:
    """The arrays cast to SciPy's LAPACK dtype (integers -> float64, f32 stays)."""
    dtype = np.result_type(*(a.dtype for a in arrays), np.float32)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    return [a.astype(dtype, copy=False) for a in arrays]


def _from_triangle(xp: Any, a: NativeArray, lower: bool, conjugate: bool) -> Any:
    """The symmetric/Hermitian matrix SciPy's LAPACK sees: one triangle, mirrored."""
    if lower:
        tri, strict = xp.tril(a), xp.tril(a, -1)
    else:
        tri, strict = xp.triu(a), xp.triu(a, 1)
    mirrored = strict.conj().T if conjugate else strict.T
    full = tri + mirrored
    if conjugate and a.dtype.kind == "c":  # Hermitian LAPACK reads a real diagonal
        n = a.shape[0]
        full[xp.arange(n), xp.arange(n)] = xp.diagonal(a).real
    return full


def _cholesky_lower(xp: Any, a: Any, lower: bool) -> Any:
    return xp.linalg.cholesky(_from_triangle(xp, a, lower, True))


# ---------------------------------------------------------------------- factories
#
# Each returns None where the backend lacks a function it needs (an older CuPy, or a
# cupyx.scipy.linalg that does not import): the dispatcher then runs SciPy on the CPU.

def _triangular(backend: Backend) -> Callable[..., Any] | None:
    module = backend.scipy("linalg")
    return getattr(module, "solve_triangular", None) if module is not None else None


def _lacks(xp: Any, *names: str) -> bool:
    return any(getattr(xp.linalg, name, None) is None for name in names)


def solve(backend: Backend) -> Callable[..., Any] | None:
    xp, tri = backend.xp, _triangular(backend)
    if tri is None or _lacks(xp, "solve", "cholesky"):
        return None

    def run(a: Any, b: Any, lower: bool = False, overwrite_a: bool = False,
            overwrite_b: bool = False, check_finite: bool = True, assume_a: Any = None,
            transposed: bool = False) -> Any:
        check_square(a)
        check_rows(a, b)
        if check_finite:
            require_finite(xp, a, b)
        a, b = _inexact(xp, a, b)
        kind = ASSUME_A[assume_a]
        if kind == "pos":
            c = _cholesky_lower(xp, a, lower)
            y = tri(c, b, lower=True, check_finite=False)
            return tri(c, y, lower=True, trans="C", check_finite=False)
        if kind in ("sym", "her"):
            a = _from_triangle(xp, a, lower, kind == "her")
        return xp.linalg.solve(a, b)

    return run


def inv(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "inv"):
        return None

    def run(a: Any, overwrite_a: bool = False, check_finite: bool = True, *,
            assume_a: Any = None, lower: bool = False) -> Any:
        check_square(a)
        if check_finite:
            require_finite(xp, a)
        (a,) = _inexact(xp, a)
        return xp.linalg.inv(a)

    return run


def det(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "det"):
        return None

    def run(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
        check_square(a)
        if check_finite:
            require_finite(xp, a)
        # SciPy's det is always double precision (float64 / complex128)
        return xp.linalg.det(a.astype(np.result_type(a.dtype, np.float64), copy=False))

    return run


def _checked_cholesky(xp: Any, a: Any, lower: bool, check_finite: bool) -> tuple[Any, Any]:
    """SciPy's input checks, then the lower factor: ``(a as inexact, L)``."""
    check_square(a)
    if check_finite:
        require_finite(xp, a)
    (a,) = _inexact(xp, a)
    return a, _cholesky_lower(xp, a, lower)


def cholesky(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "cholesky"):
        return None

    def run(a: Any, lower: bool = False, overwrite_a: bool = False,
            check_finite: bool = True) -> Any:
        _, c = _checked_cholesky(xp, a, lower, check_finite)
        return c if lower else xp.ascontiguousarray(c.conj().T)

    return run


@functools.cache
def _cho_factor_keeps_other_triangle() -> bool:
    """Whether this SciPy's ``cho_factor`` leaves the unused triangle as the input had it
    (LAPACK potrf's way, SciPy before 1.18) rather than zeroing it (SciPy 1.18 on)."""
    import scipy.linalg

    return bool(scipy.linalg.cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))[0][1, 0] != 0)


def cho_factor(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "cholesky"):
        return None

    def run(a: Any, lower: bool = False, overwrite_a: bool = False,
            check_finite: bool = True) -> Any:
        a, c = _checked_cholesky(xp, a, lower, check_finite)
        c = c if lower else c.conj().T
        if _cho_factor_keeps_other_triangle():
            c = c + (xp.triu(a, 1) if lower else xp.tril(a, -1))
        return c, lower

    return run


def cho_solve(backend: Backend) -> Callable[..., Any] | None:
    xp, tri = backend.xp, _triangular(backend)
    if tri is None:
        return None

    def run(c_and_lower: Any, b: Any, overwrite_b: bool = False,
            check_finite: bool = True) -> Any:
        c, lower = c_and_lower
        check_square(c)
        check_rows(c, b)
        if check_finite:
            require_finite(xp, c, b)
        c, b = _inexact(xp, c, b)
        if lower:
            y = tri(c, b, lower=True, check_finite=False)
            return tri(c, y, lower=True, trans="C", check_finite=False)
        y = tri(c, b, lower=False, trans="C", check_finite=False)
        return tri(c, y, lower=False, check_finite=False)

    return run


def solve_triangular(backend: Backend) -> Callable[..., Any] | None:
    xp, tri = backend.xp, _triangular(backend)
    if tri is None:
        return None

    def run(a: Any, b: Any, trans: Literal[0, 1, 2, "N", "T", "C"] = 0, lower: bool = False, unit_diagonal: bool = False,
            overwrite_b: bool = False, check_finite: bool = True) -> Any:
        check_square(a)
        check_rows(a, b)
        if check_finite:
            require_finite(xp, a, b)
        a, b = _inexact(xp, a, b)
        if not unit_diagonal:
            zero = xp.diagonal(a) == 0
            if bool(zero.any()):  # cupyx's trsm would return inf/nan
                raise LinAlgError("singular matrix: resolution failed at diagonal "
                                  f"{int(xp.argmax(zero))}")
        return tri(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                   overwrite_b=overwrite_b, check_finite=False)

    return run


def checked(path: str, arrays: int = 1, drop: tuple[str, ...] = ()
            ) -> Callable[[Backend], Callable[..., Any] | None]:
    """Factory for a cupyx function with SciPy's signature that needs only the
    ``check_finite`` check made explicit (cupyx skips complex input); the keywords
    ``drop`` cupyx lacks are dropped (the capability rule keeps them at SciPy's default)."""
    def factory(backend: Backend) -> Callable[..., Any] | None:
        xp, func = backend.xp, backend.resolve(path)
        if func is None:
            return None

        def run(*args: Any, check_finite: bool = True, **kwargs: Any) -> Any:
            if check_finite:
                operands = args[0] if isinstance(args[0], tuple) else args[:1]
                require_finite(xp, *operands[:1], *args[1:arrays])
            for name in drop:
                kwargs.pop(name, None)
            return func(*args, check_finite=False, **kwargs)

        return run

    factory.passes_through = (path, drop)  # type: ignore[attr-defined]  # tests read it
    return factory


def lu_factor(backend: Backend) -> Callable[..., Any] | None:
    """cupyx's ``lu_factor`` warns ``RuntimeWarning`` for an exactly singular matrix;
    SciPy warns ``LinAlgWarning`` (a subclass): the warning is re-issued as SciPy's."""
    run_checked = checked("scipy.linalg.lu_factor")(backend)
    if run_checked is None:
        return None

    def run(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = run_checked(*args, **kwargs)
        for w in caught:
            singular = w.category is RuntimeWarning and str(w.message).startswith("Diagonal")
            warnings.warn(str(w.message), LinAlgWarning if singular else w.category,
                          stacklevel=2)
        return result

    return run


def qr(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "qr"):
        return None

    def run(a: Any, overwrite_a: bool = False, lwork: int | None = None, mode: str = "full",
            pivoting: bool = False, check_finite: bool = True) -> Any:
        if check_finite:
            require_finite(xp, a)
        (a,) = _inexact(xp, a)
        q, r = xp.linalg.qr(a, mode="complete" if mode == "full" else "reduced")
        return q, r

    return run


def svd(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "svd"):
        return None

    def run(a: Any, full_matrices: bool = True, compute_uv: bool = True,
            overwrite_a: bool = False, check_finite: bool = True,
            lapack_driver: str = "gesdd") -> Any:
        if check_finite:
            require_finite(xp, a)
        (a,) = _inexact(xp, a)
        if not compute_uv:
            return xp.linalg.svd(a, compute_uv=False)
        u, s, vh = xp.linalg.svd(a, full_matrices=full_matrices)
        return u, s, vh  # SciPy returns a plain tuple

    return run


def svdvals(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "svd"):
        return None

    def run(a: Any, overwrite_a: bool = False, check_finite: bool = True) -> Any:
        if check_finite:
            require_finite(xp, a)
        (a,) = _inexact(xp, a)
        return xp.linalg.svd(a, compute_uv=False)

    return run


def eigh(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "eigh", "eigvalsh"):
        return None

    def run(a: Any, b: Any = None, *, lower: bool = True, eigvals_only: bool = False,
            check_finite: bool = True, **ignored: Any) -> Any:
        check_square(a)
        if check_finite:
            require_finite(xp, a)
        (a,) = _inexact(xp, a)
        uplo = "L" if lower else "U"
        if eigvals_only:
            return xp.linalg.eigvalsh(a, UPLO=uplo)
        w, v = xp.linalg.eigh(a, UPLO=uplo)
        return w, v

    return run


def eigvalsh(backend: Backend) -> Callable[..., Any] | None:
    run_eigh = eigh(backend)
    if run_eigh is None:
        return None

    def run(a: Any, b: Any = None, *, lower: bool = True, check_finite: bool = True,
            **ignored: Any) -> Any:
        return run_eigh(a, lower=lower, eigvals_only=True, check_finite=check_finite)

    return run


def lstsq(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "lstsq"):
        return None

    def run(a: Any, b: Any, cond: float | None = None, overwrite_a: bool = False,
            overwrite_b: bool = False, check_finite: bool = True,
            lapack_driver: str | None = None) -> Any:
        if a.ndim != 2:
            raise ValueError(f"Input array a should be 2D. Got shape {a.shape} instead.")
        check_rows(a, b)
        if check_finite:
            require_finite(xp, a, b)
        a, b = _inexact(xp, a, b)
        # SciPy's cond=None is LAPACK's machine precision, not NumPy's eps*max(M, N)
        rcond = np.finfo(a.dtype).eps if cond is None else cond
        x, residues, rank, s = xp.linalg.lstsq(a, b, rcond=rcond)
        m, n = a.shape
        if int(rank) < n or m <= n:
            residues = xp.empty((0,), dtype=s.dtype)
        elif b.ndim == 1:
            residues = residues.reshape(())  # SciPy: a scalar for a 1-D b
        return x, residues, int(rank), s

    return run


def pinv(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "svd"):
        return None

    def run(a: Any, *, atol: float | None = None, rtol: float | None = None, return_rank: bool = False,
            check_finite: bool = True) -> Any:
        if check_finite:
            require_finite(xp, a)
        (a,) = _inexact(xp, a)
        u, s, vh = xp.linalg.svd(a, full_matrices=False)
        largest = float(s.max()) if s.size else 0.0
        atol = 0.0 if atol is None else atol
        rtol = max(a.shape) * np.finfo(s.dtype).eps if rtol is None else rtol
        rank = int((s > atol + largest * rtol).sum())
        u = u[:, :rank] / s[:rank]
        result = (u @ vh[:rank]).conj().T
        return (result, rank) if return_rank else result

    return run


def norm(backend: Backend) -> Callable[..., Any] | None:
    xp = backend.xp
    if _lacks(xp, "norm"):
        return None

    def run(a: Any, ord: float | str | None = None, axis: Axes = None, keepdims: bool = False,
            check_finite: bool = True) -> Any:
        if check_finite:
            require_finite(xp, a)
        return xp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)

    return run
