"""Differential checks on a real CUDA device (CuPy). Skipped with a reason elsewhere;
on a machine with a usable GPU, a skip here fails the run (see conftest)."""

from __future__ import annotations

import numpy
import pytest

import autodev
from conftest import CUDA_REASON, HAS_CUDA
from diffcheck import assert_same, differential, error_parity, sample

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not HAS_CUDA, reason=f"CUDA: {CUDA_REASON}")]

CUDA = "cuda:0"


@pytest.fixture(autouse=True)
def _gpu_policy():
    with autodev.policy("gpu"):
        yield


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_elementwise_reduction_matmul(dtype):
    a, b = sample((64, 32), dtype, 1), sample((32, 16), dtype, 2)
    differential(lambda xp, a: xp.exp(a) * 2 + 1, a, device=CUDA)
    differential(lambda xp, a: a.sum(axis=0), a, device=CUDA)
    differential(lambda xp, a: a.mean(), a, device=CUDA)
    differential(lambda xp, a, b: a @ b, a, b, device=CUDA)


def test_fft_and_linalg():
    a = sample((32, 32))
    spd = a @ a.T + 32 * numpy.eye(32)
    tol = {"rtol": 1e-8, "atol": 1e-10}
    differential(lambda xp, a: xp.fft.fft2(a), a, device=CUDA, tol=tol)
    differential(lambda xp, a: xp.fft.rfft(a.astype(xp.float32)), a, device=CUDA,
                 tol={"rtol": 1e-4, "atol": 1e-4})
    differential(lambda xp, m: xp.linalg.solve(m, m[:, 0]), spd, device=CUDA, tol=tol)
    differential(lambda xp, m: xp.linalg.cholesky(m), spd, device=CUDA, tol=tol)
    differential(lambda xp, m: xp.linalg.svd(m, compute_uv=False), spd, device=CUDA, tol=tol)


def test_errors_on_cuda():
    a = sample((3, 4))
    error_parity(lambda xp, a: a[numpy.array([0, 3])], a, device=CUDA)
    error_parity(lambda xp, m: xp.linalg.inv(m), numpy.ones((3, 3)), device=CUDA)
    error_parity(lambda xp, m: xp.linalg.cholesky(m), -numpy.eye(3), device=CUDA)


def test_power_iteration_and_printing():
    autodev.stats(reset=True)
    a = autodev.random.default_rng(0).standard_normal((1024, 1024), dtype=autodev.float32)
    x = autodev.ones(1024, dtype=autodev.float32)
    for _ in range(10):
        x = a @ x
        x = x / autodev.linalg.norm(x)
    assert autodev.stats()["h2d_count"] == 1 and x.location == CUDA
    ea = numpy.random.default_rng(0).standard_normal((1024, 1024), dtype=numpy.float32)
    ex = numpy.ones(1024, dtype=numpy.float32)
    for _ in range(10):
        ex = ea @ ex
        ex = ex / numpy.linalg.norm(ex)
    assert_same(x, ex, CUDA, tol={"rtol": 1e-3, "atol": 1e-5})
    assert str(x.sum().dtype) == "float32" and isinstance(float(x.sum()), float)
