"""autodev.scipy.special and .signal against SciPy on every device."""

from __future__ import annotations

import numpy
import pytest
import scipy.signal
import scipy.special

import autodev
from autodev.scipy import signal, special
from autodev.testing import simulated_gpu
from scipy_check import DTYPES, TOL, on, same, sample

UFUNCS = ["erf", "erfc", "erfinv", "gamma", "gammaln", "digamma", "expit", "logit", "i0",
          "j0", "ndtr", "log1p"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", UFUNCS)
def test_ufuncs(device, name, dtype):
    x = sample((20,), dtype)
    (a,) = on(device, x)
    same(getattr(special, name)(a), getattr(scipy.special, name)(x), device, TOL[dtype])


def test_binary_ufunc_and_reductions(device):
    x, y = sample((4, 5), "float64"), sample((4, 5), "float64", 1)
    a, b = on(device, x, y)
    same(special.xlogy(a, b), scipy.special.xlogy(x, y), device)
    same(special.logsumexp(a), scipy.special.logsumexp(x))
    same(special.logsumexp(a, axis=1), scipy.special.logsumexp(x, axis=1), device)
    same(special.softmax(a, axis=0), scipy.special.softmax(x, axis=0), device)
    same(special.log_softmax(a, axis=1), scipy.special.log_softmax(x, axis=1), device)


def test_scipy_ufunc_on_autodev_array_stays_on_device():
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.linspace(-1, 1, 11)
        x = x + 0  # now on the device
        moved = sim.h2d
        y = scipy.special.erf(x)
        assert type(y) is autodev.ndarray and y.location == x.location and sim.h2d == moved
        same(y, scipy.special.erf(numpy.linspace(-1, 1, 11)))
        assert scipy.special.erf(x) is not None and special.erf is special.erf


def test_declared_cpu_special():
    with simulated_gpu(), autodev.policy("gpu"), autodev.trace() as t:
        x = autodev.array(sample((5,), "float64"))
        special.jv(1, x)  # cupyx lacks jv
        special.erf(x.astype("complex128"))  # complex: CPU
        special.erf(x)
    assert [r.device for r in t][-3:] == ["cpu", "cpu", "sim:0"]
    assert special.comb(5, 2) == scipy.special.comb(5, 2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", ["fftconvolve", "convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_signal(device, name, dtype, mode):
    x, k = sample((40,), dtype), sample((7,), dtype, 1)
    a, b = on(device, x, k)
    same(getattr(signal, name)(a, b, mode=mode), getattr(scipy.signal, name)(x, k, mode=mode),
         device, TOL[dtype] * 10, 1e-5)


def test_signal_integers_stay_exact_on_cpu():
    x = numpy.arange(10)
    with simulated_gpu(), autodev.policy("gpu"):
        same(signal.convolve(autodev.array(x), autodev.array(x)), scipy.signal.convolve(x, x),
             autodev.Device("cpu"))
