"""autodev.scipy.fft against scipy.fft on every device."""

from __future__ import annotations

import numpy
import pytest
import scipy.fft

import autodev
from autodev.scipy import fft
from scipy_check import DTYPES, TOL, on, same, sample

TRANSFORMS = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "hfft", "ihfft"]
REAL = ["rfft", "rfft2", "rfftn", "dct", "idct", "dst", "idst", "dctn", "idctn"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", TRANSFORMS + REAL)
def test_transforms_match_scipy(device, name, dtype):
    if name in REAL and dtype.startswith("complex") and name != "dct":
        pytest.skip("real transform")
    if name == "ihfft" and dtype.startswith("complex"):
        pytest.skip("ihfft takes real input")
    x = sample((8, 6), dtype)
    (a,) = on(device, x)
    same(getattr(fft, name)(a), getattr(scipy.fft, name)(x), device, TOL[dtype], 1e-5)


def test_float32_gives_complex64(device):
    (a,) = on(device, sample((16,), "float32"))
    assert fft.fft(a).dtype == numpy.complex64
    assert fft.rfft(a).dtype == numpy.complex64


def test_keywords(device):
    x = sample((8, 8, 4), "float64")
    (a,) = on(device, x)
    same(fft.fftn(a, s=(4, 4), axes=(0, 1), norm="ortho", workers=2),
         scipy.fft.fftn(x, s=(4, 4), axes=(0, 1), norm="ortho"), device)
    # the round trip pads with zeros that come back as round-off (1e-17): cuFFT's and
    # pocketfft's differ there, so an absolute tolerance next to the relative one
    same(fft.irfft(fft.rfft(a, n=10, norm="forward"), 10, norm="forward"),
         scipy.fft.irfft(scipy.fft.rfft(x, n=10, norm="forward"), 10, norm="forward"), device,
         1e-10, 1e-14)


def test_dct_type_1_is_declared_cpu():
    x = sample((8,), "float64")
    from autodev.testing import simulated_gpu

    with simulated_gpu(), autodev.policy("gpu"), autodev.trace() as t:
        r = fft.dct(autodev.array(x), 1)
    assert r.location == autodev.Device("cpu") and "capability" in t[-1].reason
    same(r, scipy.fft.dct(x, 1))


def test_helpers_reachable():
    same(fft.fftfreq(8, 0.5), scipy.fft.fftfreq(8, 0.5))
    assert fft.next_fast_len(1021) == scipy.fft.next_fast_len(1021)
    same(fft.fftshift(autodev.arange(6.0)), scipy.fft.fftshift(numpy.arange(6.0)))
    assert set(fft.__all__) >= {"fft", "dctn", "hfftn", "set_workers"}
