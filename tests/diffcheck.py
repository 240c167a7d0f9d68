"""Differential checks: run the same code with NumPy and with autodev, compare.

``differential(func, *inputs, device=d)`` calls ``func(numpy, *inputs)`` and
``func(autodev, *inputs_on_d)`` and checks that the results have the same
type (array or scalar), dtype, shape and values, and that array results live
on ``d`` (the device the call was sent to).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy
import pytest

import autodev
from autodev.testing import to_numpy

FLOATS = ("float32", "float64")
COMPLEX = ("complex64", "complex128")
INEXACT = FLOATS + COMPLEX
INTS = ("int32", "int64")
ALL = INEXACT + INTS


def sample(shape: Any, dtype: str = "float64", seed: int = 0, low: float = 0.1,
           high: float = 0.9) -> numpy.ndarray:
    """A reproducible NumPy array of ``dtype``: floats in [low, high), ints in [-5, 5]."""
    rng = numpy.random.default_rng(seed)
    dt = numpy.dtype(dtype)
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else -5
        return rng.integers(lo, 6, size=shape).astype(dt)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    values = rng.uniform(low, high, size=shape)
    if dt.kind == "c":
        values = values + 1j * rng.uniform(low, high, size=shape)
    return values.astype(dt)


def dyadic(shape: Any, dtype: str = "float64", seed: int = 0) -> numpy.ndarray:
    """:func:`sample` with floats rounded to multiples of 1/64: any order of summing a few
    of them is exact, so a GPU's reduction (whose order is not NumPy's) gives NumPy's
    bits, and a test may compare sums and their printing exactly."""
    values = sample(shape, dtype, seed)
    return numpy.round(values * 64) / 64 if values.dtype.kind in "fc" else values


def put(x: Any, device: Any) -> Any:
    """An autodev array equal to NumPy ``x`` with its primary copy on ``device``."""
    if not isinstance(x, numpy.ndarray):
        return x
    return autodev.asarray(numpy.array(x, copy=True)).to_device(device)


def tolerance(dtype: Any) -> dict[str, float]:
    """Comparison tolerance for results of ``dtype`` (exact kinds compare exactly)."""
    dt = numpy.dtype(dtype)
    if dt.kind not in "fc":
        return {"rtol": 0, "atol": 0}
    if dt in (numpy.float16,):
        return {"rtol": 1e-2, "atol": 1e-3}
    if dt in (numpy.float32, numpy.complex64):
        return {"rtol": 2e-5, "atol": 1e-5}
    return {"rtol": 1e-12, "atol": 1e-12}


def assert_same(got: Any, expected: Any, device: Any = None, tol: dict | None = None) -> None:
    """``got`` (autodev) equals ``expected`` (NumPy) in kind, dtype, shape and value."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), (got, expected)
        assert type(got).__name__ == type(expected).__name__
        for g, e in zip(got, expected):
            assert_same(g, e, device, tol)
        return
    if isinstance(expected, list):
        assert isinstance(got, list) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e, device, tol)
        return
    if isinstance(expected, numpy.ndarray):
        assert type(got) is autodev.ndarray, f"expected an autodev array, got {type(got)}"
        assert not got._scalar, "an array result is flagged as a scalar"
        if device is not None:
            assert got.location == device, f"result on {got.location}, expected on {device}"
        host = to_numpy(got)
        _compare(host, expected, tol)
        return
    if isinstance(expected, numpy.generic):
        if type(got) is autodev.ndarray:
            assert got._scalar, "a scalar result is an array not flagged as scalar"
            assert got.ndim == 0
        host = to_numpy(got)
        assert type(host) is type(expected), (type(host), type(expected))
        _compare(numpy.asarray(host), numpy.asarray(expected), tol)
        return
    assert type(got) is type(expected), (type(got), type(expected))
    if isinstance(expected, float) and numpy.isnan(expected):
        assert numpy.isnan(got)
    else:
        assert got == expected or numpy.allclose(got, expected, **(tol or tolerance("f8")))


def _compare(host: numpy.ndarray, expected: numpy.ndarray, tol: dict | None) -> None:
    assert host.dtype == expected.dtype, (host.dtype, expected.dtype)
    assert host.shape == expected.shape, (host.shape, expected.shape)
    tol = tol or tolerance(expected.dtype)
    if tol["rtol"] == 0 and tol["atol"] == 0:
        numpy.testing.assert_array_equal(host, expected)
    else:
        numpy.testing.assert_allclose(host, expected, equal_nan=True, **tol)


def differential(func: Callable[..., Any], *inputs: Any, device: Any,
                 tol: dict | None = None, resident: bool = True) -> Any:
    """Compare ``func(numpy, *inputs)`` with ``func(autodev, *inputs on device)``.

    ``resident=False`` skips the check that array results live on ``device``
    (for functions that run on the CPU only).
    """
    expected = func(numpy, *[numpy.array(x, copy=True) if isinstance(x, numpy.ndarray)
                             else x for x in inputs])
    got = func(autodev, *[put(x, device) for x in inputs])
    assert_same(got, expected, device if resident else None, tol)
    return got


def error_parity(func: Callable[..., Any], *inputs: Any, device: Any) -> BaseException:
    """``func`` raises the same exception type with autodev on ``device`` as with NumPy."""
    with pytest.raises(Exception) as expected:
        func(numpy, *[numpy.array(x, copy=True) if isinstance(x, numpy.ndarray) else x
                      for x in inputs])
    with pytest.raises(Exception) as got:
        func(autodev, *[put(x, device) for x in inputs])
    assert type(got.value) is type(expected.value), (
        f"autodev raised {type(got.value).__name__}: {got.value}; "
        f"NumPy raised {type(expected.value).__name__}: {expected.value}")
    return got.value
