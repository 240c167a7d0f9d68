"""The issue's "done when" programs and the REFERENCE SciPy calls, through autodev.

Each program is written once over its modules and run with SciPy and with autodev
on cpu, the simulated GPU (default policy and forced ``gpu``) and CUDA.
"""

from __future__ import annotations

import contextlib
import math

import numpy
import pytest
import scipy.fft
import scipy.linalg
import scipy.sparse
import scipy.special

import autodev
import autodev.scipy.fft
import autodev.scipy.linalg
import autodev.scipy.sparse
import autodev.scipy.special
from autodev.testing import simulated_gpu, to_numpy
from conftest import CUDA_REASON, HAS_CUDA

SCIPY = (numpy, scipy.fft, scipy.linalg, scipy.sparse, scipy.special)
AUTODEV = (autodev, autodev.scipy.fft, autodev.scipy.linalg, autodev.scipy.sparse,
           autodev.scipy.special)


@pytest.fixture(params=["cpu", "sim-auto", "sim-gpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def where(request):
    if request.param == "cpu":
        ctx = autodev.policy("cpu")
    elif request.param == "cuda":
        if not HAS_CUDA:
            pytest.skip(f"CUDA: {CUDA_REASON}")
        ctx = autodev.policy("gpu")
    else:
        ctx = contextlib.ExitStack()
        ctx.enter_context(simulated_gpu())
        if request.param == "sim-gpu":
            ctx.enter_context(autodev.policy("gpu"))
    with ctx:
        yield request.param


def pagerank(mods, n=20_000, steps=30, damping=0.85):
    xp, _, _, sp, _ = mods
    rng = numpy.random.default_rng(0)
    src, dst = rng.integers(0, n, 8 * n), rng.integers(0, n, 8 * n)
    degree = numpy.bincount(src, minlength=n).astype(float)
    weights = 1.0 / degree[src]
    m = sp.csr_matrix((weights, (dst, src)), shape=(n, n))
    r = xp.full(n, 1.0 / n)
    for _ in range(steps):
        r = damping * (m @ r) + (1 - damping) / n
    return r


def black_scholes(mods, n=10_000):
    xp, _, _, _, special = mods
    rng = numpy.random.default_rng(1)
    s = xp.asarray(rng.uniform(50, 150, n))
    k = xp.asarray(rng.uniform(50, 150, n))
    t, r, v = 1.0, 0.02, 0.3
    d1 = (xp.log(s / k) + (r + v * v / 2) * t) / (v * math.sqrt(t))
    d2 = d1 - v * math.sqrt(t)
    cdf = lambda x: 0.5 * (1 + special.erf(x / math.sqrt(2)))  # noqa: E731
    return s * cdf(d1) - k * math.exp(-r * t) * cdf(d2)


def poisson(mods, n=64):
    xp, fft, _, _, _ = mods
    x = numpy.linspace(0, 2 * numpy.pi, n, endpoint=False)
    f = xp.asarray(numpy.sin(x)[:, None] * numpy.cos(2 * x)[None, :])
    k = fft.fftfreq(n, 1.0 / n)
    k2 = xp.asarray(k)[:, None] ** 2 + xp.asarray(k)[None, :] ** 2
    k2[0, 0] = 1.0
    u_hat = -fft.fft2(f) / k2
    u_hat[0, 0] = 0
    return fft.ifft2(u_hat).real


def polyfits(mods, n=200, degree=5):
    xp, _, linalg, _, _ = mods
    x = numpy.linspace(-1, 1, n)
    y = xp.asarray(numpy.cos(3 * x) + 0.1 * x ** 3)
    v = xp.asarray(numpy.vander(x, degree + 1))
    normal = linalg.solve(v.T @ v, v.T @ y, assume_a="pos")
    least = linalg.lstsq(v, y)[0]
    u, s, vh = linalg.svd(v, full_matrices=False)
    via_svd = vh.T @ ((u.T @ y) / s)
    return normal, least, via_svd


@pytest.mark.parametrize("program, rtol", [(pagerank, 1e-10), (black_scholes, 1e-10),
                                           (poisson, 1e-10), (polyfits, 1e-8)])
def test_program_gives_scipy_output(where, program, rtol):
    expected = program(SCIPY)
    got = program(AUTODEV)
    if where == "sim-gpu":
        devices = {r.location for r in (got if isinstance(got, tuple) else (got,))}
        assert devices == {autodev.Device("sim", 0)}
    numpy.testing.assert_allclose(numpy.asarray(to_numpy(got)), numpy.asarray(expected),
                                  rtol=rtol, atol=1e-12)


def test_reference_calls_dispatch_with_a_visible_decision():
    rng = numpy.random.default_rng(0)
    x = rng.random((256, 256), dtype=numpy.float32)
    a = (x.T @ x + numpy.eye(256, dtype=numpy.float32))
    b = rng.random(256, dtype=numpy.float32)
    s = scipy.sparse.random(512, 512, density=0.01, format="csr", dtype="float32",
                            random_state=0)
    fft, linalg, sparse = autodev.scipy.fft, autodev.scipy.linalg, autodev.scipy.sparse
    with simulated_gpu(), autodev.trace() as t:
        X, A, B, S = autodev.array(x), autodev.array(a), autodev.array(b), sparse.csr_matrix(s)
        results = [fft.fft2(X), linalg.solve(A, B, assume_a="pos"), S @ S,
                   linalg.svd(X, full_matrices=False)]
        dtype = results[0].dtype
        results = [to_numpy(results[0]), to_numpy(results[1]), results[2].get()]
    ops = {r.op: r for r in t}
    for op in ("scipy.fft.fft2", "scipy.linalg.solve", "scipy.sparse.matmul",
               "scipy.linalg.svd"):
        assert ops[op].reason == "cost model" and set(ops[op].costs) == {"cpu", "sim:0"}
    numpy.testing.assert_allclose(results[0], scipy.fft.fft2(x), rtol=1e-4, atol=1e-3)
    assert dtype == numpy.complex64
    numpy.testing.assert_allclose(results[1],
                                  scipy.linalg.solve(a, b, assume_a="pos"), rtol=1e-3,
                                  atol=1e-4)  # float32, cond(A) ~ 1e5
    numpy.testing.assert_allclose(results[2].toarray(), (s @ s).toarray(), rtol=1e-5)
