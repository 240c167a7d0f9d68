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
    """``take`` that raises IndexError for out-of-range indices under ``mode='raise'``."""
    xp = backend.xp

    def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
             mode: str = "raise") -> Any:
        if mode == "raise":
            n = a.size if axis is None else a.shape[axis]
            if _out_of_range(xp, indices, n):
                raise IndexError(f"index out of range for axis {axis} with size {n}")
        kwargs = {} if mode == "raise" else {"mode": mode}
        return func(a, indices, axis=axis, out=out, **kwargs)

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
