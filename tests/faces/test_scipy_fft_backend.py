"""``autodev.scipy.fft`` as SciPy's fft backend, with ``set_backend`` and with
``set_global_backend`` (cupyx.scipy.fft's documented idiom), against SciPy.

``register_backend`` is not tested here: SciPy cannot unregister a backend, so it would
leak into every later test."""

from __future__ import annotations

from typing import Any, Iterator

import numpy
import pytest
import scipy.fft

import autodev
import autodev.scipy.fft
from autodev.testing import to_numpy

NAMES = ["fft", "ifft", "rfft", "irfft", "fft2", "fftn", "dct", "idst", "hfft"]


def _signal() -> numpy.ndarray:
    return numpy.random.default_rng(0).standard_normal((8, 8))


@pytest.fixture
def global_backend() -> Iterator[None]:
    """autodev.scipy.fft as SciPy's global fft backend for one test (SciPy's after)."""
    scipy.fft.set_global_backend(autodev.scipy.fft)
    try:
        yield
    finally:
        scipy.fft.set_global_backend("scipy", try_last=True)  # SciPy's own default


def _check(result: Any, expected: numpy.ndarray) -> None:
    assert type(result) is autodev.ndarray
    assert result.dtype == expected.dtype and result.shape == expected.shape
    numpy.testing.assert_allclose(to_numpy(result), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
def test_global_backend_runs_autodev_and_numpy_input(device: Any, global_backend: None,
                                                     name: str) -> None:
    """Every scipy.fft call raised BackendNotImplementedError once autodev was global:
    autodev's host path calls scipy.fft, whose own backend was no longer in the list."""
    x = _signal()
    with scipy.fft.set_backend("scipy", only=True):
        expected = getattr(scipy.fft, name)(x)
    _check(getattr(scipy.fft, name)(autodev.asarray(x)), expected)
    _check(getattr(scipy.fft, name)(x), expected)


def test_global_backend_leaves_other_names_to_scipy(global_backend: None) -> None:
    assert type(scipy.fft.fftfreq(8)) is numpy.ndarray  # not a multimethod
    _check(scipy.fft.fht(numpy.ones(8), 1.0, 0.0), numpy.ones(8))  # autodev's, on the host
    with pytest.raises(ValueError):  # bad input: SciPy's error, through autodev
        scipy.fft.fft(numpy.ones(4), n=-1)


def test_global_backend_dispatches(global_backend: None) -> None:
    from autodev.testing import simulated_gpu

    with simulated_gpu(), autodev.policy("gpu"):
        result = scipy.fft.fft(autodev.asarray(_signal()))
    assert str(result.location) == "sim:0"


def test_set_backend_still_runs_autodev(device: Any) -> None:
    x = _signal()
    expected = scipy.fft.fft(x)
    with scipy.fft.set_backend(autodev.scipy.fft, only=True):
        _check(scipy.fft.fft(autodev.asarray(x)), expected)
    assert type(scipy.fft.fft(x)) is numpy.ndarray  # outside the block: SciPy's
