"""Comparison helpers for the ``autodev.scipy`` differential tests."""

from __future__ import annotations

from typing import Any

import numpy
import scipy.sparse

import autodev
from autodev.testing import to_numpy

DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-10, "complex128": 1e-10}


def sample(shape: Any, dtype: str = "float64", seed: int = 0) -> numpy.ndarray:
    """A reproducible array of ``dtype`` (complex dtypes get an imaginary part)."""
    rng = numpy.random.default_rng(seed)
    values = rng.uniform(0.1, 0.9, size=shape)
    if numpy.dtype(dtype).kind == "c":
        values = values + 1j * rng.uniform(0.1, 0.9, size=shape)
    return values.astype(dtype)


def on(device: Any, *arrays: numpy.ndarray) -> list[Any]:
    """Copies of ``arrays`` as autodev arrays (on the host; calls move them)."""
    return [autodev.array(a) for a in arrays]


def same(result: Any, expected: Any, device: Any = None, rtol: float = 1e-10,
         atol: float = 0.0) -> None:
    """``result`` (autodev) equals ``expected`` (SciPy) in dtype, shape and values,
    and array results live on ``device`` where given."""
    if isinstance(expected, (tuple, list)):
        assert len(result) == len(expected)
        for r, e in zip(result, expected):
            same(r, e, device, rtol, atol)
        return
    if scipy.sparse.issparse(expected):
        assert autodev.scipy.sparse.issparse(result)
        if device is not None:
            assert result.location == device
        got = result.get() if hasattr(result, "get") else result
        assert got.dtype == expected.dtype
        same(got.toarray(), expected.toarray(), None, rtol, atol)
        return
    if device is not None and type(result) is autodev.ndarray:
        assert result.location == device, (result.location, device)
    got = to_numpy(result)
    if isinstance(expected, (numpy.ndarray, numpy.generic)):
        assert numpy.asarray(got).dtype == expected.dtype, (numpy.asarray(got).dtype,
                                                            expected.dtype)
        assert numpy.shape(got) == numpy.shape(expected)
    numpy.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
