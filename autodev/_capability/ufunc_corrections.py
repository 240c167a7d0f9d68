"""Corrections of NumPy's ufuncs on the GPU (CuPy's ``ufunc.__call__``): operands CuPy
cannot read, NumPy's error types and value checks CuPy skips. The capability table's
``ufunc`` row (and each ``scipy.special`` ufunc's spec) says where they apply."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._backends import Backend
from .corrections import Factory, Func, upload


def ufunc_operands(backend: Backend, func: Func) -> Func:
    """A NumPy ufunc on the GPU: list or tuple operands become device arrays (CuPy raises
    'Unsupported type'), and NumPy's ``UFuncTypeError`` where CuPy raises a plain
    TypeError: with ``out=`` the casts are first checked on host probes, and a call CuPy
    refuses with a TypeError is rehearsed on them, raising NumPy's own error for it."""
    np_ufunc = getattr(np, func.__name__.removeprefix("cupy_"))  # CuPy's are "cupy_add"
    nin = np_ufunc.nin

    def call(*args: Any, **kwargs: Any) -> Any:
        if any(type(a) is list or type(a) is tuple for a in args[:nin]):
            args = tuple(upload(backend, a) if i < nin and type(a) in (list, tuple) else a
                         for i, a in enumerate(args))
        if len(args) > nin or kwargs.get("out") is not None:
            _rehearse(np_ufunc, args, kwargs)  # (NumPy's casting errors come first)
        if np_ufunc is np.power and len(args) > 1:
            _integer_power_check(backend, args[0], args[1], kwargs)
        try:
            return func(*args, **kwargs)
        except TypeError:
            _rehearse(np_ufunc, args, kwargs)  # NumPy's error where NumPy refuses it too
            raise

    return call


def ufunc_list_operands(nin: int) -> Factory:
    """A SciPy ufunc on the GPU (``cupyx.scipy.special``'s are CuPy ufuncs): list or tuple
    operands become device arrays, as for NumPy's ufuncs."""
    def factory(backend: Backend, func: Func) -> Func:
        def call(*args: Any, **kwargs: Any) -> Any:
            if any(type(a) is list or type(a) is tuple for a in args[:nin]):
                args = tuple(upload(backend, a) if i < nin and type(a) in (list, tuple) else a
                             for i, a in enumerate(args))
            return func(*args, **kwargs)

        return call

    return factory


def _integer_power_check(backend: Backend, base: Any, exponent: Any,
                         kwargs: dict[str, Any]) -> None:
    """NumPy's ValueError for an integer ``power`` with a negative exponent, which CuPy's
    integer loop computes instead (as 0, 1 or -1): one synchronising device reduction
    where the exponent is a device array of a signed integer dtype."""
    kind = getattr(exponent, "dtype", np.dtype(type(exponent))).kind
    loop = _integer_loop(base, exponent, kwargs) if kind in "biu" else None
    if loop is None or not all(_fits(x, loop) for x in (base, exponent)):
        return  # (not an integer loop, or a Python integer it cannot hold: NumPy's
        #         OverflowError comes first, from the call)
    if isinstance(exponent, (int, np.generic)):  # (Python and NumPy scalars)
        negative = int(exponent) < 0
    else:
        negative = kind == "i" and exponent.size and bool(backend.xp.any(exponent < 0))
    if negative:
        raise ValueError("Integers to negative integer powers are not allowed.")


def _integer_loop(base: Any, exponent: Any, kwargs: dict[str, Any]) -> np.dtype | None:
    """The dtype of NumPy's ``power`` loop for these operands (and ``dtype=``) where it is
    an integer one, else None."""
    # (a Python bool is NumPy's bool; int, float and complex are weak, as resolve_dtypes takes)
    described = tuple(x.dtype if hasattr(x, "dtype") else np.dtype(bool) if type(x) is bool
                      else type(x) for x in (base, exponent))
    dtype = kwargs.get("dtype")
    try:
        loop = np.power.resolve_dtypes(
            (*described, None), signature=(None, None, None if dtype is None else np.dtype(dtype)))
    except TypeError:  # no loop: the call itself raises NumPy's error
        return None
    return loop[-1] if loop[-1].kind in "iu" else None


def _fits(x: Any, loop: np.dtype) -> bool:
    """False for a Python integer that the integer ``loop`` cannot hold (OverflowError)."""
    if type(x) is not int:
        return True
    try:
        np.asarray(x, dtype=loop)
    except OverflowError:
        return False
    return True


def _rehearse(np_ufunc: np.ufunc, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Run ``np_ufunc`` on one-element host arrays of the call's dtypes and ranks (core
    dimensions of 1 agree for gufuncs such as ``matmul``): NumPy's dtype errors, no data.
    The probes hold ones, a value every ufunc takes (an uninitialised negative integer
    would raise ``power``'s 'Integers to negative integer powers' ValueError), and their
    floating-point warnings are silenced: only the types are rehearsed."""
    def probe(a: Any) -> Any:
        dtype = getattr(a, "dtype", None)
        return a if dtype is None else np.ones((1,) * a.ndim, dtype)

    out = kwargs.get("out")
    outs = out if type(out) is tuple else (out,) if out is not None else ()
    inputs = [probe(a) for a in args[:np_ufunc.nin]]
    outputs = tuple(None if o is None else probe(o) for o in (*args[np_ufunc.nin:], *outs))
    options: dict[str, Any] = {k: v for k, v in kwargs.items() if k in ("dtype", "casting")}
    if outputs:
        options["out"] = outputs if len(outputs) > 1 else outputs[0]
    with np.errstate(all="ignore"):
        np_ufunc(*inputs, **options)
