"""autodev arrays handed to the libraries users already have, against NumPy/SciPy.

``scipy.fft.set_backend(autodev.scipy.fft)``; pandas masks and shared memory;
numexpr ``out=``. scikit-learn and ``SCIPY_ARRAY_API=1`` are in test_consumers.py.
"""

from __future__ import annotations

import numpy
import pytest
import scipy.fft

import autodev
import autodev.scipy.fft
from autodev.testing import to_numpy


def signal(n: int = 64) -> numpy.ndarray:
    return numpy.random.default_rng(0).standard_normal(n)


# ---------------------------------------------------------------------- scipy.fft backend

def test_scipy_fft_backend_protocol():
    assert autodev.scipy.fft.__ua_domain__ == "numpy.scipy.fft"
    unknown = type("multimethod", (), {"__name__": "not_in_scipy_fft"})()
    assert autodev.scipy.fft.__ua_function__(unknown, (), {}) is NotImplemented


@pytest.mark.parametrize("name", ["fft", "rfft", "ifft", "fft2", "dct", "idst", "fftn"])
def test_set_backend_runs_scipy_fft_through_autodev(device, name):
    x = signal(64).reshape(8, 8)
    expected = getattr(scipy.fft, name)(x)
    with scipy.fft.set_backend(autodev.scipy.fft, only=True):
        result = getattr(scipy.fft, name)(autodev.asarray(x, device=device))
    assert type(result) is autodev.ndarray
    assert result.dtype == expected.dtype and result.shape == expected.shape
    numpy.testing.assert_allclose(to_numpy(result), expected, rtol=1e-12, atol=1e-12)


def test_set_backend_takes_numpy_input_and_declines_what_it_lacks():
    x = signal()
    with scipy.fft.set_backend(autodev.scipy.fft):
        result = scipy.fft.fft(x)
        freqs = scipy.fft.fftfreq(8)  # not a multimethod: SciPy's own
    assert type(result) is autodev.ndarray
    numpy.testing.assert_allclose(to_numpy(result), scipy.fft.fft(x))
    assert type(freqs) is numpy.ndarray
