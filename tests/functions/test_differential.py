"""Every dispatched family against NumPy, on every device, over the dtypes it takes."""

from __future__ import annotations

import numpy
import pytest

import autodev
from diffcheck import ALL, FLOATS, INEXACT, INTS, differential, sample

CHEAP_BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum",
                "equal", "less", "greater_equal", "not_equal"]
CHEAP_UNARY = ["negative", "absolute", "square", "sign", "conjugate", "positive"]
TRANSCENDENTAL = ["sin", "cos", "tan", "arcsin", "arctan", "tanh", "exp", "expm1",
                  "log", "log1p", "log10", "sqrt"]
INT_ONLY = ["bitwise_and", "bitwise_xor", "left_shift", "floor_divide", "remainder"]


# ---------------------------------------------------------------------- ufuncs

@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", CHEAP_BINARY)
def test_cheap_binary_ufunc(device, name, dtype):
    if numpy.dtype(dtype).kind == "c" and name in ("maximum", "minimum", "less",
                                                   "greater_equal"):
        pytest.skip("ordering of complex numbers is not tested")
    a, b = sample((4, 5), dtype, 1), sample((5,), dtype, 2)
    if numpy.dtype(dtype).kind in "iu":
        b[b == 0] = 3  # no division by zero
    differential(lambda xp, a, b: getattr(xp, name)(a, b), a, b, device=device)


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", CHEAP_UNARY)
def test_cheap_unary_ufunc(device, name, dtype):
    differential(lambda xp, a: getattr(xp, name)(a), sample((3, 4), dtype), device=device)


@pytest.mark.parametrize("dtype", INEXACT)
@pytest.mark.parametrize("name", TRANSCENDENTAL)
def test_transcendental_ufunc(device, name, dtype):
    differential(lambda xp, a: getattr(xp, name)(a), sample((6, 7), dtype), device=device)


@pytest.mark.parametrize("dtype", INTS)
@pytest.mark.parametrize("name", INT_ONLY)
def test_integer_ufunc(device, name, dtype):
    a, b = sample((10,), dtype, 3), numpy.arange(1, 11).astype(dtype) % 4 + 1
    differential(lambda xp, a, b: getattr(xp, name)(a, b), a, b, device=device)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_ufunc_methods(device, dtype):
    a, b = sample((4, 5), dtype, 1), sample((3,), dtype, 2)
    differential(lambda xp, a: xp.add.reduce(a, axis=1), a, device=device)
    differential(lambda xp, a: xp.add.reduce(a), a, device=device)
    differential(lambda xp, a: xp.multiply.accumulate(a, axis=0), a, device=device)
    differential(lambda xp, a: xp.maximum.reduce(a, axis=None), a, device=device)
    differential(lambda xp, a, b: xp.multiply.outer(a[0], b), a, b, device=device)
    differential(lambda xp, a: xp.add.reduceat(a[0], [0, 2]), a, device=device)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_ufunc_at(device, dtype):
    def run(xp, a, idx):
        a = a.copy()
        xp.add.at(a, idx, 1)
        xp.negative.at(a, [0])
        return a

    differential(run, sample((6,), dtype), numpy.array([0, 1, 1, 5, -1]), device=device)


def test_ufunc_out_and_where(device):
    def run(xp, a, b):
        out = xp.zeros_like(a)
        r = xp.multiply(a, b, out=out)
        assert r is out
        xp.add(a, 1.0, out=out, where=a > 0.5)
        return out

    differential(run, sample((5, 4)), sample((5, 4), seed=1), device=device)


def test_ufunc_promotion_nep50(device):
    a32 = sample((4,), "float32")
    differential(lambda xp, a: a * 2.5, a32, device=device)
    differential(lambda xp, a: a + numpy.float64(1), a32, device=device)
    differential(lambda xp, a: xp.add(a, 3), sample((4,), "int32"), device=device)
    differential(lambda xp, a, b: a + b, a32, sample((4,), "int64"), device=device)
    differential(lambda xp, a: xp.divmod(a, 3), sample((5,), "int64"), device=device)
    differential(lambda xp, a: xp.frexp(a), sample((5,), "float64"), device=device)


# ---------------------------------------------------------------------- reductions

REDUCTIONS = ["sum", "mean", "std", "var", "min", "max", "argmin", "argmax", "cumsum",
              "any", "all", "prod"]


@pytest.mark.parametrize("dtype", ALL)
@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_functions(device, name, dtype):
    if numpy.dtype(dtype).kind == "c" and name in ("min", "max", "argmin", "argmax"):
        pytest.skip("ordering of complex numbers is not tested")
    a = sample((4, 5, 3), dtype)
    f = getattr(numpy, name)
    differential(lambda xp, a: getattr(xp, name)(a), a, device=device)
    differential(lambda xp, a: getattr(xp, name)(a, axis=1), a, device=device)
    differential(lambda xp, a: getattr(xp, name)(a, axis=-1), a, device=device)
    if name not in ("cumsum",):
        kw = {"keepdims": True}
        if name in ("argmin", "argmax"):
            differential(lambda xp, a: getattr(xp, name)(a, axis=0, **kw), a, device=device)
        else:
            differential(lambda xp, a: getattr(xp, name)(a, axis=(0, 2), **kw), a,
                         device=device)
    assert f is getattr(numpy, name)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("name", REDUCTIONS + ["trace"])
def test_reduction_methods(device, name, dtype):
    a = sample((4, 5), dtype)
    differential(lambda xp, a: getattr(a, name)(), a, device=device)
    differential(lambda xp, a: getattr(a, name)(axis=0) if name != "trace"
                 else a.trace(offset=1), a, device=device)


def test_reduction_options(device):
    a = sample((6, 4))
    differential(lambda xp, a: a.std(ddof=1, axis=0), a, device=device)
    differential(lambda xp, a: xp.var(a, ddof=2), a, device=device)
    differential(lambda xp, a: a.sum(dtype=xp.float32), a, device=device)
    differential(lambda xp, a: xp.mean(a, axis=0, dtype=xp.float32), a, device=device)
    differential(lambda xp, a: xp.sum(a > 0.5), a, device=device)
    differential(lambda xp, a: xp.count_nonzero(a > 0.5, axis=1), a, device=device)
    differential(lambda xp, a: xp.median(a, axis=1), a, device=device)
    differential(lambda xp, a: xp.nansum(xp.where(a > 0.5, xp.nan, a)), a, device=device)


# ---------------------------------------------------------------------- matmul family

@pytest.mark.parametrize("dtype", ALL)
def test_matmul_family(device, dtype):
    a, b, v = sample((4, 3), dtype, 1), sample((3, 5), dtype, 2), sample((3,), dtype, 3)
    differential(lambda xp, a, b: a @ b, a, b, device=device)
    differential(lambda xp, a, b: xp.matmul(a, b), a, b, device=device)
    differential(lambda xp, a, v: a @ v, a, v, device=device)
    differential(lambda xp, a, b: xp.dot(a, b), a, b, device=device)
    differential(lambda xp, a, b: a.dot(b), a, b, device=device)
    differential(lambda xp, v: xp.dot(v, v), v, device=device)
    differential(lambda xp, v: xp.vdot(v, v), v, device=device)
    differential(lambda xp, v: xp.inner(v, v), v, device=device)
    differential(lambda xp, v: xp.outer(v, v), v, device=device)
    differential(lambda xp, a, b: xp.einsum("ij,jk->ik", a, b), a, b, device=device)
    differential(lambda xp, a: xp.einsum("ij->j", a), a, device=device)
    differential(lambda xp, a, b: xp.tensordot(a, b, axes=1), a, b, device=device)
    differential(lambda xp, a, b: xp.kron(a, b), a, b, device=device)


def test_batched_matmul(device):
    a, b = sample((2, 3, 4, 5), "float32", 1), sample((5, 2), "float32", 2)
    differential(lambda xp, a, b: a @ b, a, b, device=device)
    differential(lambda xp, a, b: xp.einsum("...ij,jk->...ik", a, b), a, b, device=device)


# ---------------------------------------------------------------------- fft

@pytest.mark.parametrize("dtype", ALL)
def test_fft(device, dtype):
    a = sample((8, 6), dtype)
    differential(lambda xp, a: xp.fft.fft(a), a, device=device)
    differential(lambda xp, a: xp.fft.ifft(a, axis=0), a, device=device)
    differential(lambda xp, a: xp.fft.fft2(a), a, device=device)
    differential(lambda xp, a: xp.fft.fftn(a, s=(4, 4), axes=(0, 1)), a, device=device)
    differential(lambda xp, a: xp.fft.ifft2(a, norm="ortho"), a, device=device)
    if numpy.dtype(dtype).kind != "c":
        differential(lambda xp, a: xp.fft.rfft(a), a, device=device)
        differential(lambda xp, a: xp.fft.irfft(xp.fft.rfft(a), n=6), a, device=device)
        differential(lambda xp, a: xp.fft.rfft2(a), a, device=device)


def test_fft_helpers(device):
    differential(lambda xp, a: xp.fft.fftshift(a), sample((5, 4)), device=device)
    differential(lambda xp, a: xp.fft.ifftshift(a, axes=0), sample((5, 4)), device=device)
    assert numpy.array_equal(autodev.fft.fftfreq(8, 0.1), numpy.fft.fftfreq(8, 0.1))


# ---------------------------------------------------------------------- linalg

def spd(n: int, dtype: str, seed: int = 0) -> numpy.ndarray:
    a = sample((n, n), dtype, seed)
    return (a @ a.conj().T + n * numpy.eye(n)).astype(dtype)


LINALG_TOL = {"float32": {"rtol": 2e-3, "atol": 2e-4}, "complex64": {"rtol": 2e-3, "atol": 2e-4},
              "float64": {"rtol": 1e-9, "atol": 1e-10}, "complex128": {"rtol": 1e-9, "atol": 1e-10}}


@pytest.mark.parametrize("dtype", INEXACT)
def test_linalg(device, dtype):
    tol = LINALG_TOL[dtype]
    a, b, m = spd(4, dtype), sample((4, 2), dtype, 1), sample((5, 3), dtype, 2)
    la = lambda name: (lambda xp, *x: getattr(xp.linalg, name)(*x))  # noqa: E731
    differential(la("solve"), a, b, device=device, tol=tol)
    differential(la("inv"), a, device=device, tol=tol)
    differential(la("det"), a, device=device, tol=tol)
    differential(la("cholesky"), a, device=device, tol=tol)
    differential(la("eigvalsh"), a, device=device, tol=tol)
    differential(la("norm"), m, device=device, tol=tol)
    differential(lambda xp, m: xp.linalg.norm(m, axis=0), m, device=device, tol=tol)
    differential(lambda xp, m: xp.linalg.norm(m, "fro"), m, device=device, tol=tol)
    differential(lambda xp, m: xp.linalg.svd(m, compute_uv=False), m, device=device, tol=tol)
    differential(la("pinv"), m, device=device, tol=tol)
    differential(lambda xp, m, b: xp.linalg.lstsq(m, b[:, 0].repeat(2)[:5], rcond=None)[0],
                 m, numpy.concatenate([b, b])[:5], device=device, tol=tol)
    differential(la("slogdet"), a, device=device, tol=tol)


@pytest.mark.parametrize("dtype", INEXACT)
def test_linalg_factorizations_reconstruct(device, dtype):
    """Factors may differ by signs/phases between libraries; products must not."""
    tol = LINALG_TOL[dtype]
    a, m = spd(4, dtype), sample((5, 3), dtype, 2)

    def svd(xp, m):
        u, s, vh = xp.linalg.svd(m, full_matrices=False)
        return (u * s) @ vh, s

    def qr(xp, m):
        q, r = xp.linalg.qr(m)
        return q @ r, abs(r)

    def eigh(xp, a):
        w, v = xp.linalg.eigh(a)
        return w, (v * w) @ v.conj().T

    differential(svd, m, device=device, tol=tol)
    differential(qr, m, device=device, tol=tol)
    differential(eigh, a, device=device, tol=tol)


def test_linalg_result_types(device):
    a = spd(3, "float64")
    got = autodev.linalg.svd(autodev.asarray(a).to_device(device))
    assert type(got).__name__ == "SVDResult" and got.S.location == device
    w = autodev.linalg.eigh(autodev.asarray(a).to_device(device))
    assert type(w).__name__ == "EighResult" and w.eigenvalues.location == device


# ---------------------------------------------------------------------- sort family

@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_sort_family(device, dtype):
    a = sample((5, 6), dtype)
    differential(lambda xp, a: xp.sort(a), a, device=device)
    differential(lambda xp, a: xp.sort(a, axis=0), a, device=device)
    differential(lambda xp, a: xp.sort(a, axis=None), a, device=device)
    differential(lambda xp, a: xp.argsort(a, axis=1, kind="stable"), a, device=device)
    differential(lambda xp, a: a.argsort(kind="stable"), a, device=device)
    differential(lambda xp, a: xp.unique(a), a, device=device)
    differential(lambda xp, a: xp.unique(a, return_counts=True), a, device=device)
    differential(lambda xp, a: xp.searchsorted(xp.sort(a[0]), a[1]), a, device=device)
    differential(lambda xp, a: xp.partition(a[0], 2)[2], a, device=device)


def test_inplace_sort_method(device):
    def run(xp, a):
        b = a.copy()
        b.sort(axis=0)
        a.sort()
        return a, b

    differential(run, sample((4, 5)), device=device)


# ---------------------------------------------------------------------- copy family

@pytest.mark.parametrize("dtype", ALL)
def test_copy_family(device, dtype):
    a, b = sample((4, 3), dtype, 1), sample((4, 3), dtype, 2)
    differential(lambda xp, a, b: xp.where(a.real > b.real, a, b), a, b, device=device)
    differential(lambda xp, a: xp.where(a.real > 0.5), a, device=device)
    differential(lambda xp, a, b: xp.concatenate([a, b], axis=1), a, b, device=device)
    differential(lambda xp, a, b: xp.stack([a, b]), a, b, device=device)
    differential(lambda xp, a, b: xp.vstack((a, b)), a, b, device=device)
    differential(lambda xp, a, b: xp.hstack((a, b)), a, b, device=device)
    differential(lambda xp, a: xp.take(a, [2, 0, 1], axis=0), a, device=device)
    differential(lambda xp, a: a.take([5, 0]), a, device=device)
    differential(lambda xp, a: xp.repeat(a, 2, axis=1), a, device=device)
    differential(lambda xp, a: xp.tile(a, (2, 1)), a, device=device)
    differential(lambda xp, a: xp.flip(a, 0), a, device=device)
    differential(lambda xp, a: xp.roll(a, 2), a, device=device)
    differential(lambda xp, a: xp.diff(a, axis=0), a, device=device)
    differential(lambda xp, a: xp.triu(a), a, device=device)
    differential(lambda xp, a: xp.pad(a, 1), a, device=device)
    differential(lambda xp, a: xp.nonzero(a), a, device=device)
    differential(lambda xp, a: xp.diag(a), a, device=device)
    differential(lambda xp, a: xp.copy(a), a, device=device)
    if numpy.dtype(dtype).kind != "c":
        differential(lambda xp, a: xp.clip(a, 0.3, 0.6) if a.dtype.kind == "f"
                     else xp.clip(a, -1, 2), a, device=device)
        differential(lambda xp, a: a.clip(max=1), a, device=device)
    differential(lambda xp, a: xp.round(a, 1), a, device=device)


def test_primary_family(device):
    a = sample((2, 3, 4))
    differential(lambda xp, a: xp.reshape(a, (6, 4)), a, device=device)
    differential(lambda xp, a: xp.transpose(a, (2, 0, 1)), a, device=device)
    differential(lambda xp, a: xp.moveaxis(a, 0, -1), a, device=device)
    differential(lambda xp, a: xp.expand_dims(a, 1), a, device=device)
    differential(lambda xp, a: xp.squeeze(a[:1]), a, device=device)
    differential(lambda xp, a: xp.broadcast_to(a[0, 0], (3, 4)), a, device=device)
    differential(lambda xp, a: xp.split(a, 2, axis=2), a, device=device)
    differential(lambda xp, a: xp.atleast_2d(a[0, 0, 0, ...]), a, device=device)
    differential(lambda xp, a: xp.zeros_like(a), a, device=device)
    differential(lambda xp, a: xp.full_like(a, 7, dtype=xp.int16), a, device=device)
    differential(lambda xp, a: xp.ones_like(a[0]), a, device=device)


# ---------------------------------------------------------------------- creation

@pytest.mark.parametrize("dtype", ALL)
def test_creation(device, dtype):
    dt = getattr(numpy, dtype)
    differential(lambda xp: xp.zeros((3, 2), dtype=dt), device=device)
    differential(lambda xp: xp.ones(4, dt), device=device)
    differential(lambda xp: xp.full((2, 2), 3, dtype=dt), device=device)
    differential(lambda xp: xp.eye(3, k=1, dtype=dt), device=device)
    differential(lambda xp: xp.arange(2, 11, 3, dtype=dt), device=device)
    differential(lambda xp: xp.identity(3, dtype=dt), device=device)
    if numpy.dtype(dtype).kind != "i":
        differential(lambda xp: xp.linspace(0, 1, 7, dtype=dt), device=device)
    differential(lambda xp: xp.empty((2, 0), dtype=dt).shape, device=device)


def test_creation_defaults(device):
    differential(lambda xp: xp.zeros(3), device=device)
    differential(lambda xp: xp.arange(5), device=device)
    differential(lambda xp: xp.arange(0.0, 1.0, 0.25), device=device)
    differential(lambda xp: xp.linspace(0, 1, 5, endpoint=False), device=device)
    differential(lambda xp: xp.linspace(0, 1, 5, retstep=True), device=device)
    differential(lambda xp: xp.logspace(0, 2, 3), device=device)
    differential(lambda xp: xp.tri(3), device=device)
    differential(lambda xp: xp.array([[1, 2], [3, 4]]), device=device)
    differential(lambda xp: xp.array([1.5, 2], dtype=xp.float32), device=device)
    differential(lambda xp: xp.asarray([1j, 2]), device=device, resident=False)
    differential(lambda xp: xp.array(3.0), device=device)
