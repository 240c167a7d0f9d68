"""CuPy's differences from NumPy (imitated by the simulated GPU) are corrected by autodev.

Each case runs through autodev on every device and is compared with NumPy:
value, dtype, result type. See docs/dispatch.md, "Known CuPy differences".
"""

from __future__ import annotations

import numpy
import pytest

import autodev as np
from autodev.testing import to_numpy

A = numpy.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
INTS = numpy.array([7, 1, 4, 10, 3, 3])


def same(got, want):
    if isinstance(want, numpy.ndarray):
        assert isinstance(got, np.ndarray) and not np.isscalar(got), type(got)
    else:  # a NumPy scalar: autodev's own, or a device-resident scalar result
        assert np.isscalar(got), type(got)
    g = to_numpy(got)
    assert numpy.asarray(g).dtype == numpy.asarray(want).dtype
    numpy.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("kwargs", [{"initial": 100.0}, {"where": INTS > 3}])
def test_reduction_keywords_cupy_lacks(device, kwargs):
    same(np.sum(np.asarray(INTS.astype(float)), **kwargs),
         numpy.sum(INTS.astype(float), **kwargs))
    same(np.max(np.asarray(INTS), **{"initial": 100, **kwargs}),
         numpy.max(INTS, **{"initial": 100, **kwargs}))


def test_std_mean_keyword(device):
    x = INTS.astype(float)
    same(np.std(np.asarray(x), mean=numpy.mean(x)), numpy.std(x, mean=numpy.mean(x)))


@pytest.mark.parametrize("q", [50, 37.5, numpy.array([10.0, 50.0])])
@pytest.mark.parametrize("method", ["linear", "midpoint", "lower", "median_unbiased"])
def test_percentile_integer_input(device, q, method):
    same(np.percentile(np.asarray(INTS), q, method=method),
         numpy.percentile(INTS, q, method=method))
    same(np.quantile(np.asarray(INTS), q / 100, method=method),
         numpy.quantile(INTS, q / 100, method=method))


@pytest.mark.parametrize("kind", [None, "quicksort", "mergesort", "heapsort", "stable"])
def test_sort_kinds(device, kind):
    same(np.sort(np.asarray(INTS), kind=kind), numpy.sort(INTS, kind=kind))
    same(np.argsort(np.asarray(INTS), kind="stable"), numpy.argsort(INTS, kind="stable"))
    got = np.argsort(np.asarray(INTS), kind=kind)
    assert (to_numpy(np.asarray(INTS)[got]) == numpy.sort(INTS)).all()
    x = np.asarray(INTS)
    x.sort(kind=kind)
    same(x, numpy.sort(INTS))


@pytest.mark.parametrize("mode", ["wrap", "clip"])
def test_take_modes(device, mode):
    idx = numpy.array([0, 7, -9, 2])
    same(np.take(np.asarray(INTS), idx, mode=mode), numpy.take(INTS, idx, mode=mode))


def test_clip_min_max_keywords(device):
    same(np.clip(np.asarray(INTS), min=2, max=5), numpy.clip(INTS, min=2, max=5))


def test_einsum_out(device):
    out = np.zeros(3)
    np.einsum("ij->i", np.asarray(A), out=out)
    same(out, numpy.einsum("ij->i", A))


def test_fft_out(device):
    x = numpy.arange(8.0)
    out = np.zeros(8, dtype=complex)
    np.fft.fft(np.asarray(x), out=out)
    same(out, numpy.fft.fft(x))


def test_reshape_shape_keyword(device):
    x = np.asarray(INTS)
    if device.kind != "cpu":
        x = x.to_device(device)
    same(np.reshape(x, shape=(2, 3)), numpy.reshape(INTS, shape=(2, 3)))


@pytest.mark.parametrize("name", ["eigh", "svd", "slogdet", "qr", "eig"])
def test_named_linalg_results(device, name):
    got = getattr(np.linalg, name)(np.asarray(A))
    want = getattr(numpy.linalg, name)(A)
    assert type(got) is type(want)
    if name == "eig":  # neither LAPACK nor cuSOLVER promises an order: compare as a set
        w, v = to_numpy(got.eigenvalues), to_numpy(got.eigenvectors)
        assert w.dtype == want.eigenvalues.dtype and v.dtype == want.eigenvectors.dtype
        numpy.testing.assert_allclose(numpy.sort(w), numpy.sort(want.eigenvalues), rtol=1e-10)
        numpy.testing.assert_allclose(A @ v, v * w, atol=1e-10)
        return
    for field in want._fields:
        g, w = getattr(got, field), getattr(want, field)
        assert to_numpy(g).dtype == numpy.asarray(w).dtype
        numpy.testing.assert_allclose(numpy.abs(to_numpy(g)), numpy.abs(w), rtol=1e-10)


def test_eigvals_real(device):
    # the order is unspecified (cuSOLVER's may differ from LAPACK's): compare sorted
    got = np.linalg.eigvals(np.asarray(A))
    same(np.sort(got), numpy.sort(numpy.linalg.eigvals(A)))
    rot = numpy.array([[0.0, -1.0], [1.0, 0.0]])
    same(np.sort(np.linalg.eigvals(np.asarray(rot))), numpy.sort(numpy.linalg.eigvals(rot)))


def test_lstsq_rank(device):
    b = numpy.arange(3.0)
    got = np.linalg.lstsq(np.asarray(A), np.asarray(b))
    want = numpy.linalg.lstsq(A, b)
    assert type(got[2]) is type(want[2]) and got[2] == want[2]
    same(got[0], want[0])


def test_cholesky_upper(device):
    same(np.linalg.cholesky(np.asarray(A), upper=True), numpy.linalg.cholesky(A, upper=True))


def test_predicates_are_bools(device):
    for name in ("allclose", "array_equal", "array_equiv"):
        got = getattr(np, name)(np.asarray(A), np.asarray(A))
        assert got is True, name


def test_linalg_diagonal_on_device(device):
    x = np.asarray(numpy.arange(24.0).reshape(2, 3, 4))
    if device.kind != "cpu":
        x = x.to_device(device)
    same(np.linalg.diagonal(x, offset=1), numpy.linalg.diagonal(numpy.arange(24.0)
                                                               .reshape(2, 3, 4), offset=1))
