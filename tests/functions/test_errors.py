"""Error parity: autodev raises NumPy's exception type on every device."""

from __future__ import annotations

import numpy
import pytest

import autodev
from autodev.testing import to_numpy
from diffcheck import error_parity, put, sample


def test_out_of_bounds_integer_index(device):
    a = sample((3, 4))
    error_parity(lambda xp, a: a[3], a, device=device)
    error_parity(lambda xp, a: a[0, -5], a, device=device)
    error_parity(lambda xp, a: a[1, 4], a, device=device)


def test_out_of_bounds_index_arrays(device):
    """The simulated GPU wraps out-of-bounds index arrays as CuPy does; autodev must not."""
    a = sample((3, 4))
    error_parity(lambda xp, a: a[[0, 3]], a, device=device)
    error_parity(lambda xp, a: a[numpy.array([1, -4])], a, device=device)
    error_parity(lambda xp, a, i: a[i], a, numpy.array([5]), device=device)
    error_parity(lambda xp, a, i: a[:, i], a, numpy.array([0, 4]), device=device)
    error_parity(lambda xp, a, i: a[1, i], a, numpy.array([-5]), device=device)
    error_parity(lambda xp, a, i: a[i, 0], a, numpy.array([[0], [3]]), device=device)


def test_out_of_bounds_index_writes(device):
    a = sample((3, 4))

    def set_int(xp, a):
        a[3] = 1.0

    def set_array(xp, a, i):
        a[i] = 1.0

    def set_pair(xp, a, i):
        a[i, i] = 1.0

    error_parity(set_int, a, device=device)
    error_parity(set_array, a, numpy.array([0, 3]), device=device)
    error_parity(set_array, a, [7], device=device)
    error_parity(set_pair, a, numpy.array([0, 4]), device=device)
    error_parity(lambda xp, a: a.take([12]), a, device=device)
    error_parity(lambda xp, a: a.put([12], 1.0), a, device=device)


def test_bad_index_types(device):
    a = sample((3, 4))
    error_parity(lambda xp, a: a[1.5], a, device=device)
    error_parity(lambda xp, a: a[[0.5, 1.0]], a, device=device)
    error_parity(lambda xp, a: a[numpy.array([True, False])], a, device=device)
    error_parity(lambda xp, a: a[0, 0, 0], a, device=device)


def test_failed_index_leaves_array_intact(device):
    a = sample((3, 4))
    x = put(a, device)
    with pytest.raises(IndexError):
        x[numpy.array([0, 3])] = -1.0
    assert numpy.array_equal(to_numpy(x), a)


def test_broadcast_mismatch(device):
    a, b = sample((3, 4)), sample((3,))
    error_parity(lambda xp, a, b: a + b, a, b, device=device)
    error_parity(lambda xp, a, b: xp.multiply(a, b), a, b, device=device)

    def inplace(xp, a, b):
        b += a

    def set_slice(xp, a, b):
        a[:2] = b

    error_parity(inplace, a, b, device=device)
    error_parity(set_slice, a, b, device=device)
    error_parity(lambda xp, a: a.reshape(5, 3), a, device=device)
    error_parity(lambda xp, a, b: xp.concatenate([a, b]), a, b, device=device)


def test_axis_error(device):
    a = sample((3, 4))
    err = error_parity(lambda xp, a: a.sum(axis=2), a, device=device)
    assert isinstance(err, numpy.exceptions.AxisError)
    error_parity(lambda xp, a: xp.mean(a, axis=-3), a, device=device)
    error_parity(lambda xp, a: xp.argmax(a, axis=5), a, device=device)
    error_parity(lambda xp, a: xp.cumsum(a, axis=2), a, device=device)
    error_parity(lambda xp, a: xp.expand_dims(a, 4), a, device=device)


def test_singular_matrices_raise_linalg_error(device):
    s = numpy.array([[1.0, 2.0], [2.0, 4.0]])
    b = numpy.ones(2)
    for dtype in ("float32", "float64", "complex128"):
        m = s.astype(dtype)
        error_parity(lambda xp, m, b: xp.linalg.solve(m, b), m, b, device=device)
        error_parity(lambda xp, m: xp.linalg.inv(m), m, device=device)
        error_parity(lambda xp, m: xp.linalg.inv(m[None]), m, device=device)


def test_not_positive_definite_cholesky(device):
    m = numpy.array([[1.0, 2.0], [2.0, 1.0]])
    err = error_parity(lambda xp, m: xp.linalg.cholesky(m), m, device=device)
    assert isinstance(err, numpy.linalg.LinAlgError)


def test_linalg_shape_errors(device):
    error_parity(lambda xp, m: xp.linalg.inv(m), sample((2, 3)), device=device)
    error_parity(lambda xp, m: xp.linalg.solve(m, m[:, :1][:1]), sample((3, 3)),
                 device=device)


def test_bad_inplace_cast(device):
    i, f = sample((3,), "int64"), sample((3,))

    def iadd(xp, i, f):
        i += f

    def imul_complex(xp, f):
        f *= 1j

    err = error_parity(iadd, i, f, device=device)
    assert isinstance(err, numpy._core._exceptions.UFuncTypeError)
    error_parity(imul_complex, f, device=device)
    error_parity(lambda xp, i, f: xp.add(i, f, out=i), i, f, device=device)


def test_matmul_shape_mismatch(device):
    a, b = sample((3, 4)), sample((3, 4))
    error_parity(lambda xp, a, b: a @ b, a, b, device=device)
    error_parity(lambda xp, a, b: xp.matmul(a, b), a, b, device=device)
    error_parity(lambda xp, a, b: xp.dot(a, b), a, b, device=device)
    error_parity(lambda xp, a: a @ 2.0, a, device=device)


def test_conversion_errors(device):
    a = sample((3, 4))
    error_parity(lambda xp, a: float(a), a, device=device)
    error_parity(lambda xp, a: bool(a), a, device=device)
    error_parity(lambda xp, a: int(a[0]), a, device=device)
    error_parity(lambda xp, a: a.item(), a, device=device)
    error_parity(lambda xp, a: len(a[0, 0]), a, device=device)


def test_error_leaves_inputs_intact(device):
    a, b = sample((3, 3)), numpy.array([[1.0, 2.0], [2.0, 4.0]])
    x, y = put(a, device), put(b, device)
    with pytest.raises(numpy.linalg.LinAlgError):
        autodev.linalg.inv(y)
    with pytest.raises(ValueError):
        x + y
    assert numpy.array_equal(to_numpy(x), a) and numpy.array_equal(to_numpy(y), b)
