"""autodev.scipy.linalg against scipy.linalg on every device: values, dtypes, errors."""

from __future__ import annotations

import numpy
import pytest
import scipy.linalg

import autodev
from autodev.scipy import linalg
from autodev.testing import simulated_gpu
from scipy_check import DTYPES, TOL, on, same, sample


def spd(n: int, dtype: str, seed: int = 0) -> numpy.ndarray:
    x = sample((n, n), dtype, seed)
    return (x.conj().T @ x + n * numpy.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("assume_a", [None, "gen", "sym", "her", "pos", "diagonal"])
@pytest.mark.parametrize("lower", [False, True])
def test_solve(device, dtype, assume_a, lower):
    a, b = spd(5, dtype), sample((5, 2), dtype, 1)
    if assume_a == "sym":
        a = (a + a.T) / 2
    A, B = on(device, a, b)
    same(linalg.solve(A, B, assume_a=assume_a, lower=lower),
         scipy.linalg.solve(a, b, assume_a=assume_a, lower=lower), None, TOL[dtype] * 10)


@pytest.mark.parametrize("dtype", DTYPES)
def test_factorizations(device, dtype):
    a, b = spd(5, dtype), sample((5,), dtype, 1)
    A, B = on(device, a, b)
    tol = TOL[dtype] * 10
    same(linalg.cholesky(A), scipy.linalg.cholesky(a), device, tol, tol)
    same(linalg.cholesky(A, lower=True), scipy.linalg.cholesky(a, lower=True), device, tol, tol)
    c = linalg.cho_factor(A)
    same(c, scipy.linalg.cho_factor(a), None, tol, tol)
    same(linalg.cho_solve(c, B), scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b),
         device, tol)
    lu = linalg.lu_factor(A)
    same(lu, scipy.linalg.lu_factor(a), None, tol, tol)
    same(linalg.lu_solve(lu, B), scipy.linalg.lu_solve(scipy.linalg.lu_factor(a), b), None, tol)
    same(linalg.inv(A), scipy.linalg.inv(a), device, tol, tol)
    same(linalg.det(A), scipy.linalg.det(a), None, tol)
    same(linalg.norm(A), scipy.linalg.norm(a), None, tol)
    same(linalg.solve_triangular(A, B, lower=True),
         scipy.linalg.solve_triangular(a, b, lower=True), device, tol)
    same(linalg.expm(A / 10), scipy.linalg.expm(a / 10), device, tol, tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(6, 4), (4, 6)])
def test_decompositions(device, dtype, shape):
    a, b = sample(shape, dtype), sample((shape[0],), dtype, 1)
    (A, B) = on(device, a, b)
    tol = TOL[dtype] * 10
    u, s, vh = linalg.svd(A, full_matrices=False)
    assert type(u) is autodev.ndarray and u.location == device
    same(s, scipy.linalg.svd(a, full_matrices=False)[1], device, tol)
    numpy.testing.assert_allclose((u * s) @ vh, a, rtol=tol, atol=tol)
    same(linalg.svd(A, compute_uv=False), scipy.linalg.svdvals(a), device, tol)
    same(linalg.svdvals(A), scipy.linalg.svdvals(a), device, tol)
    q, r = linalg.qr(A)
    same((q.shape, r.shape), tuple(x.shape for x in scipy.linalg.qr(a)))
    numpy.testing.assert_allclose(q @ r, a, rtol=tol, atol=tol)
    same(linalg.pinv(A), scipy.linalg.pinv(a), device, tol, tol)
    x, res, rank, sv = linalg.lstsq(A, B)
    ex, eres, erank, esv = scipy.linalg.lstsq(a, b)
    same(x, ex, device, tol, tol)
    same(sv, esv, device, tol)
    assert rank == erank and numpy.shape(to_np(res)) == numpy.shape(eres)


def to_np(x):
    return x.get() if type(x) is autodev.ndarray else x


@pytest.mark.parametrize("dtype", DTYPES)
def test_eigh(device, dtype):
    a = spd(5, dtype)
    (A,) = on(device, a)
    tol = TOL[dtype] * 100
    w, v = linalg.eigh(A)
    same(w, scipy.linalg.eigh(a)[0], device, tol)
    numpy.testing.assert_allclose(a @ v.get(), v.get() * w.get(), rtol=tol, atol=tol)
    same(linalg.eigvalsh(A), scipy.linalg.eigvalsh(a), device, tol)
    same(linalg.eigh(A, eigvals_only=True, lower=False),
         scipy.linalg.eigh(a, eigvals_only=True, lower=False), device, tol)


# ---------------------------------------------------------------------- error parity

SINGULAR = numpy.array([[1.0, 2.0], [2.0, 4.0]])
NOT_PD = numpy.array([[1.0, 2.0], [2.0, 1.0]])


@pytest.mark.parametrize("call, error", [
    (lambda a, b: linalg.solve(a, b), numpy.linalg.LinAlgError),
    (lambda a, b: linalg.inv(a), numpy.linalg.LinAlgError),
    (lambda a, b: linalg.solve_triangular(a * 0, b), numpy.linalg.LinAlgError),
])
def test_singular_raises(device, call, error):
    A, B = on(device, SINGULAR, numpy.ones(2))
    with pytest.raises(error):
        call(A, B)


@pytest.mark.parametrize("name", ["cholesky", "cho_factor"])
def test_not_positive_definite_raises(device, name):
    (A,) = on(device, NOT_PD)
    with pytest.raises(numpy.linalg.LinAlgError):
        getattr(linalg, name)(A)
    with pytest.raises(numpy.linalg.LinAlgError):
        linalg.solve(A, autodev.ones(2), assume_a="pos")


@pytest.mark.parametrize("name", ["solve", "inv", "det", "cholesky", "svd", "eigh", "lstsq",
                                  "lu_factor", "qr", "pinv", "solve_triangular"])
@pytest.mark.parametrize("bad", [numpy.nan, numpy.inf, complex(numpy.nan, 0)])
def test_check_finite(device, name, bad):
    a = numpy.eye(3, dtype=complex if isinstance(bad, complex) else float)
    a[1, 2] = bad
    A, B = on(device, a, numpy.ones(3))
    args = (A, B) if name in ("solve", "lstsq", "solve_triangular") else (A,)
    with pytest.raises(ValueError):
        getattr(linalg, name)(*args)


@pytest.mark.parametrize("name", ["solve", "inv", "det", "cholesky", "eigh"])
def test_non_square_raises_value_error(device, name):
    A, B = on(device, numpy.ones((3, 2)), numpy.ones(3))
    args = (A, B) if name == "solve" else (A,)
    with pytest.raises(ValueError):
        getattr(scipy.linalg, name)(*(x.get() for x in args))
    with pytest.raises(ValueError):
        getattr(linalg, name)(*args)


def test_shape_mismatch_raises_value_error(device):
    A, B = on(device, numpy.eye(3), numpy.ones(4))
    with pytest.raises(ValueError):
        linalg.solve(A, B)


def test_sim_solve_triangular_needs_the_explicit_check():
    """The sim's cupyx-like solve_triangular returns NaN; autodev still raises."""
    with simulated_gpu() as sim, autodev.policy("gpu"):
        quiet = sim.scipy("linalg").solve_triangular
        out = quiet(sim.from_host(numpy.zeros((2, 2))), sim.from_host(numpy.ones(2)))
        assert numpy.isnan(out.get()).all()
        with pytest.raises(numpy.linalg.LinAlgError):
            linalg.solve_triangular(autodev.zeros((2, 2)), autodev.ones(2))


def test_declared_cpu_cases_and_reachability():
    with simulated_gpu(), autodev.policy("gpu"), autodev.trace() as t:
        a = autodev.array(spd(4, "float64"))
        linalg.eig(a)
        linalg.qr(a, mode="r")
        linalg.solve(autodev.array(numpy.eye(3, dtype=int)), autodev.ones(3, dtype=int))
    assert [r.device for r in t] == ["cpu", "cpu", "sim:0"]
    assert linalg.LinAlgError is numpy.linalg.LinAlgError
    same(linalg.toeplitz(autodev.arange(3.0)), scipy.linalg.toeplitz(numpy.arange(3.0)))
