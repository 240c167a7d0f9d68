"""The ndarray API against NumPy's on every device: attributes, methods, indexing,
operators, conversions, printing, pickling and the NumPy protocols."""

from __future__ import annotations

import copy
import operator
import pickle

import numpy
import pytest
import scipy.special

import autodev
from autodev.testing import to_numpy
from diffcheck import ALL, INEXACT, assert_same, differential, dyadic, put, sample


# ---------------------------------------------------------------------- attributes

@pytest.mark.parametrize("dtype", ALL)
def test_attributes(device, dtype):
    a = sample((3, 4), dtype)
    x = put(a, device)
    for name in ("shape", "dtype", "ndim", "size", "itemsize", "nbytes", "strides"):
        assert getattr(x, name) == getattr(a, name), name
    assert x.flags.c_contiguous == a.flags.c_contiguous
    assert x.T.flags.f_contiguous == a.T.flags.f_contiguous
    assert x[:, ::2].strides == a[:, ::2].strides
    differential(lambda xp, a: a.T, a, device=device)
    differential(lambda xp, a: a.mT, a, device=device)
    differential(lambda xp, a: a.real, a, device=device)
    differential(lambda xp, a: a.imag, a, device=device)
    differential(lambda xp, a: a.flat[5], a, device=device, resident=False)
    differential(lambda xp, a: a.flat[2:7], a, device=device)
    assert x.location == device


def test_real_imag_writes(device):
    def run(xp, a):
        a.real[0] = 5.0
        a.imag = a.real * 2
        return a

    differential(run, sample((2, 3), "complex128"), device=device)

    def flat(xp, a):
        a.flat[3] = -1.0
        a.flat[[0, 1]] = 7.0
        return a

    differential(flat, sample((2, 3)), device=device)


def test_shape_setter(device):
    def run(xp, a):
        a.shape = (3, 2)
        return a

    differential(run, sample((2, 3)), device=device)


# ---------------------------------------------------------------------- methods

@pytest.mark.parametrize("dtype", ALL)
def test_methods(device, dtype):
    a = sample((3, 4), dtype)
    d = lambda f: differential(f, a, device=device)  # noqa: E731
    d(lambda xp, a: a.reshape(4, 3))
    d(lambda xp, a: a.reshape((2, -1)))
    d(lambda xp, a: a.transpose())
    d(lambda xp, a: a.swapaxes(0, 1))
    d(lambda xp, a: a.ravel())
    d(lambda xp, a: a.flatten())
    d(lambda xp, a: a[None].squeeze())
    d(lambda xp, a: a.astype(xp.float32))
    d(lambda xp, a: a.astype("complex128"))
    d(lambda xp, a: a.copy())
    d(lambda xp, a: a.view())
    d(lambda xp, a: a.nonzero())
    d(lambda xp, a: a.diagonal())
    d(lambda xp, a: a.trace())
    d(lambda xp, a: a.conj())
    d(lambda xp, a: a.round(2))
    d(lambda xp, a: a.cumsum(axis=1))
    d(lambda xp, a: a.prod(axis=0))
    d(lambda xp, a: a.repeat(2))
    d(lambda xp, a: a.sum(axis=1, keepdims=True))


def test_method_only_calls(device):
    a = sample((3, 4))
    x = put(a, device)
    assert x.item(5) == a.item(5) and type(x.item(5)) is type(a.item(5))
    assert x.tolist() == a.tolist()
    assert x.tobytes() == a.tobytes()
    assert x[1, 2].item() == a[1, 2].item()
    differential(lambda xp, a: a.view(xp.int64), a, device=device)
    differential(lambda xp, a: a.astype(xp.int8, copy=False), a, device=device)

    def fill(xp, a):
        a.fill(3)
        return a

    differential(fill, a, device=device)

    def fill_with_scalar_result(xp, a):
        a[0].fill(a.sum())
        return a

    differential(fill_with_scalar_result, a, device=device)

    def put_(xp, a):
        a.put([0, 5], [-1.0, -2.0])
        return a

    differential(put_, a, device=device)


def test_view_shares_writes(device):
    def run(xp, a):
        v = a.view()
        v[0, 0] = 42.0
        t = a.T
        t[1, 0] = 7.0
        r = a.reshape(-1)
        r[-1] = -3.0
        return a, v

    differential(run, sample((3, 4)), device=device)


def test_view_as_a_dtype_no_device_holds_shares_writes(device):
    """``x.view("S8")``: bytes no GPU computes with; the memory moves to the host with its
    views, and the view is NumPy's there (unaligned, written through, indexed)."""
    def run(xp, a):
        base = a + ord("a")
        d = base[1:-7].view(numpy.dtype("S8"))
        d[...] = numpy.array(b"b" * 8)
        d[xp.arange(d.size) % 2 == 0] = numpy.array(b"c" * 8)
        return base, d, d[xp.arange(d.size)]

    differential(run, numpy.zeros(64, dtype=numpy.int8), device=device, resident=False)


def test_structured_view_of_a_device_array_as_numpys(device):
    """A structured view (no GPU holds one) is NumPy's: its fields, its comparisons."""
    def run(xp, a):
        ra = a.view(dtype="f8,f8,f8").squeeze()
        ra["f1"][1] = -1.0
        return ra["f1"], ra == ra[0], ra != ra[1], ra, a

    differential(run, numpy.arange(12.0).reshape(4, 3), device=device, resident=False)


# ---------------------------------------------------------------------- indexing

def test_basic_indexing(device):
    a = sample((4, 5, 3))
    for key in [(1,), (slice(None), 2), (Ellipsis, 0), (slice(1, None, 2), None, -1),
                (0, slice(None, None, -1)), (), (1, 2, 0), (-1, Ellipsis)]:
        differential(lambda xp, a: a[key], a, device=device,
                     resident=not isinstance(a[key], numpy.generic))


def test_advanced_indexing(device):
    a = sample((4, 5, 3))
    idx = numpy.array([3, 0, -1])
    differential(lambda xp, a, i: a[i], a, idx, device=device)
    differential(lambda xp, a: a[[0, 2]], a, device=device)
    differential(lambda xp, a, i: a[i, 1:3], a, idx, device=device)
    differential(lambda xp, a, i: a[:, [4, 0], i[1:]], a, idx, device=device)
    differential(lambda xp, a: a[[[0], [1]], [1, 2]], a, device=device)
    differential(lambda xp, a: a[a > 0.5], a, device=device)
    differential(lambda xp, a: a[a[:, 0, 0] > 0.5], a, device=device)
    differential(lambda xp, a: a[0, [True, False, True, False, True]], a, device=device)
    differential(lambda xp, a: a[numpy.array([1, 2])], a, device=device)


def test_setitem_kinds(device):
    def run(xp, a, i):
        a[0] = 1.0
        a[1, 2:4] = xp.arange(2.0)
        a[:, -1] = a[:, 0]
        a[i] = -a[i]
        a[[0, 3], [1, 1]] = 9.0
        a[a > 0.6] = 0.25
        a[a[:, 0] < 0] *= 2
        a[..., 1] += 1
        a[2] = [5, 6, 7, 8, 9]
        a[3, 3] = a.sum()
        return a

    differential(run, sample((4, 5)), numpy.array([2, -1]), device=device)


def test_setitem_from_host_and_other_device(device):
    def run(xp, a, b):
        a[:2] = numpy.ones(5)
        a[2:] = b[:2]
        return a

    differential(run, sample((4, 5)), sample((4, 5), seed=1), device=device)
    x = put(sample((3,)), device)
    x[:] = autodev.asarray(numpy.array([1.0, 2.0, 3.0]))  # a CPU array into any device
    assert numpy.array_equal(to_numpy(x), [1.0, 2.0, 3.0])


def test_scalar_result_used_as_index(device):
    def run(xp, a):
        i = a.argmax()
        return a[i], a[int(i)], list(range(5))[i]

    differential(run, sample((5,)), device=device, resident=False)


# ---------------------------------------------------------------------- operators

BINARY_OPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
              operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne]
INT_OPS = [operator.floordiv, operator.mod, operator.and_, operator.or_, operator.xor,
           operator.lshift, operator.rshift]


@pytest.mark.parametrize("dtype", ALL)
def test_binary_operators(device, dtype):
    a, b = sample((3, 4), dtype, 1), sample((4,), dtype, 2)
    ordered = numpy.dtype(dtype).kind != "c"
    for op in BINARY_OPS:
        if not ordered and op in (operator.lt, operator.le, operator.gt, operator.ge):
            continue
        if numpy.dtype(dtype).kind == "i" and op is operator.pow:
            continue  # negative powers of integers raise
        differential(lambda xp, a, b: op(a, b), a, b, device=device)
        differential(lambda xp, a: op(a, 2), a, device=device)
        differential(lambda xp, a: op(3, a), a, device=device)  # reflected
        differential(lambda xp, a, b: op(b, a), a, numpy.asarray(b), device=device)
    if numpy.dtype(dtype).kind == "i":
        b = numpy.abs(b) + 1
        for op in INT_OPS:
            differential(lambda xp, a, b: op(a, b), a, b, device=device)
            differential(lambda xp, a: op(7, a), numpy.abs(a) + 1, device=device)
        differential(lambda xp, a: ~a, a, device=device)
        differential(lambda xp, a, b: divmod(a, b), a, b, device=device)


def test_operators_with_numpy_operands(device):
    a, h = sample((3, 4)), sample((3, 4), seed=9)
    x = put(a, device)
    assert_same(x + h, a + h, device)
    assert_same(h + x, h + a, device)
    assert_same(h * x, h * a, device)
    assert_same(numpy.float32(2) * x, numpy.float32(2) * a, device)
    assert_same(x @ h.T, a @ h.T, device)


@pytest.mark.parametrize("dtype", ALL)
def test_unary_operators(device, dtype):
    a = sample((3, 4), dtype)
    differential(lambda xp, a: -a, a, device=device)
    differential(lambda xp, a: +a, a, device=device)
    differential(lambda xp, a: abs(a), a, device=device)


def test_inplace_operators(device):
    def run(xp, a, b, i):
        a += 1
        a -= b
        a *= 2.0
        a /= 3
        a **= 2
        a[1:] += b[:-1]
        i //= 2
        i %= 3
        i <<= 1
        i |= 1
        i ^= 2
        i &= 7
        i >>= 1
        m = a.copy()
        m @= xp.eye(4)
        return a, i, m

    differential(run, sample((3, 4)), sample((3, 4), seed=1),
                 sample((3, 4), "int64", seed=2), device=device)


def test_inplace_keeps_identity_and_views(device):
    x = put(sample((3, 4)), device)
    v = x[1]
    before = id(x)
    x += 1
    assert id(x) == before
    assert_same(v, to_numpy(x)[1], device)


# ---------------------------------------------------------------------- conversions

def test_python_conversions(device):
    a = sample((3,))
    x = put(a, device)
    assert len(x) == 3
    assert [float(v) for v in x] == [float(v) for v in a]
    s = put(numpy.array(2.5), device)
    assert float(s) == 2.5 and int(s) == 2 and bool(s) is True and complex(s) == 2.5
    total = x.sum()
    assert float(total) == float(a.sum())
    assert int(put(numpy.array(7), device)) == 7
    assert operator.index(put(numpy.array(3), device)) == 3
    with pytest.raises(TypeError):
        iter(put(numpy.array(1.0), device))
    rows = list(put(sample((2, 3)), device))
    assert len(rows) == 2 and all(r.location == device for r in rows)
    with pytest.raises(ValueError):
        bool(x)
    assert (2.5 in s) and not (3.0 in s)


@pytest.mark.parametrize("dtype", ALL + ("bool",))
def test_repr_str_format_exactly(device, dtype):
    # sums exact in any order and means over 4 (a power of two): a GPU's results are
    # NumPy's bits (a complex division by 3 may round differently there)
    a = dyadic((3, 4), dtype)
    x = put(a, device)
    assert str(x) == str(a)
    assert repr(x) == repr(a)
    results = [(x.sum(), a.sum()), (x[1, 2], a[1, 2]), (x.max(), a.max()), (x[0], a[0]),
               (x.mean(axis=1), a.mean(axis=1)), (x.sum() * 2, a.sum() * 2)]
    for got, expected in results:
        assert str(got) == str(expected)
        assert repr(got) == repr(expected)
        assert f"{got}" == f"{expected}"
    if numpy.dtype(dtype).kind in "fi":
        assert f"{x.sum():.3f}" == f"{a.sum():.3f}"
        assert f"{x[1, 1]:>12}" == f"{a[1, 1]:>12}"
        assert "%s %r" % (x.sum(), x.sum()) == "%s %r" % (a.sum(), a.sum())


def test_scalar_results_behave_like_numpy_scalars(device):
    a = dyadic((4,))
    x = put(a, device)
    s, e = x.sum(), a.sum()
    assert s == e and s > 0 and s + 1 == e + 1 and 2 * s == 2 * e
    assert hash(s) == hash(e)
    assert autodev.isscalar(s) and not autodev.isscalar(x)
    assert round(float(s), 6) == round(float(e), 6)
    assert {s: 1}[e] == 1
    assert str(x.max() - x.min()) == str(a.max() - a.min())
    assert str(autodev.float32(2) * x.sum()) == str(numpy.float32(2) * a.sum())


def test_pickle_and_copy(device):
    a = sample((3, 4))
    x = put(a, device)
    for y in (pickle.loads(pickle.dumps(x)), copy.copy(x), copy.deepcopy(x)):
        assert_same(y, a, device)
    s = pickle.loads(pickle.dumps(x.sum()))
    assert str(s) == str(a.sum())
    y = copy.copy(x)
    y[0, 0] = 100.0
    assert to_numpy(x)[0, 0] == a[0, 0]


# ---------------------------------------------------------------------- protocols

def test_array_protocol(device):
    a = sample((3, 4))
    x = put(a, device)
    shared = numpy.asarray(x, copy=False)  # a device array held alone moves to the host
    shared[0, 0] = 7.0  # and shares its memory: no copy, as copy=False promises
    assert to_numpy(x)[0, 0] == 7.0
    a[0, 0] = 7.0
    assert numpy.array(x, dtype=numpy.float32).dtype == numpy.float32
    h = numpy.asarray(x)
    assert type(h) is numpy.ndarray and numpy.array_equal(h, a)


def test_array_ufunc_keeps_device(device):
    a = sample((3, 4))
    x = put(a, device)
    for got, expected in [(numpy.sin(x), numpy.sin(a)), (numpy.add(x, 1), a + 1),
                          (numpy.add.reduce(x, axis=0), numpy.add.reduce(a, axis=0)),
                          (scipy.special.erf(x), scipy.special.erf(a)),
                          (numpy.multiply(a, x), a * a)]:
        assert_same(got, expected, device)
    out = put(numpy.zeros((3, 4)), device)
    numpy.multiply(x, 2, out=out)
    assert_same(out, a * 2, device)


def test_array_function_keeps_device(device):
    a, b = sample((3, 4)), sample((3, 4), seed=1)
    x, y = put(a, device), put(b, device)
    assert_same(numpy.mean(x), numpy.mean(a))
    assert_same(numpy.mean(x, axis=0), numpy.mean(a, axis=0), device)
    assert_same(numpy.concatenate([x, y]), numpy.concatenate([a, b]), device)
    assert_same(numpy.linalg.norm(x), numpy.linalg.norm(a))
    assert_same(numpy.fft.fft(x), numpy.fft.fft(a), device)
    assert_same(numpy.where(x > 0.5, x, 0), numpy.where(a > 0.5, a, 0), device)
    assert_same(numpy.linalg.svd(x, compute_uv=False), numpy.linalg.svd(a, compute_uv=False),
                device)


def test_array_namespace_and_dlpack(device):
    x = put(sample((3,)), device)
    assert x.__array_namespace__() is autodev.array_api  # the array-API face
    if device == "cpu":
        h = numpy.from_dlpack(x)
        assert numpy.array_equal(h, to_numpy(x))
        # the consumer may write through the buffer: no stale mirror afterwards
        h[0] = 123.0
        assert to_numpy(x)[0] == 123.0
    else:
        assert x.__dlpack_device__() is not None
        capsule = x.__dlpack__()
        assert capsule is not None


def test_to_device_roundtrip(device):
    a = sample((4, 4))
    x = put(a, device)
    h = x.to_device("cpu")
    assert h.location == "cpu"
    assert_same(h, a, "cpu")
    back = h.to_device(device)
    assert_same(back, a, device)
    if device != "cpu":  # a move copies (on the same device NumPy returns the array itself)
        back[0, 0] = -1.0
        assert to_numpy(x)[0, 0] == a[0, 0]
    assert_same(x.to_device(device), a, device)


# ---------------------------------------------------------------------- random

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_default_rng_streams(device, dtype):
    expected = numpy.random.default_rng(42)
    got = autodev.random.default_rng(42)
    assert_same(got.standard_normal((3, 4), dtype=dtype),
                expected.standard_normal((3, 4), dtype=dtype), device)
    assert_same(got.random(5, dtype=dtype), expected.random(5, dtype=dtype), device)
    assert_same(got.integers(0, 10, size=6), expected.integers(0, 10, size=6), device)
    assert_same(got.normal(1.0, 2.0, size=(2, 2)), expected.normal(1.0, 2.0, size=(2, 2)),
                device)
    assert_same(got.uniform(size=3), expected.uniform(size=3), device)
    assert_same(got.choice(10, 4), expected.choice(10, 4), device)
    assert_same(got.permutation(6), expected.permutation(6), device)
    assert got.random() == expected.random()


def test_legacy_random_streams(device):
    numpy.random.seed(7)
    expected = [numpy.random.rand(3, 2), numpy.random.randn(4), numpy.random.randint(0, 9, 5),
                numpy.random.normal(size=3), numpy.random.random((2, 2))]
    autodev.random.seed(7)
    got = [autodev.random.rand(3, 2), autodev.random.randn(4), autodev.random.randint(0, 9, 5),
           autodev.random.normal(size=3), autodev.random.random((2, 2))]
    for g, e in zip(got, expected):
        assert_same(g, e, device)
    rs_n, rs_a = numpy.random.RandomState(3), autodev.random.RandomState(3)
    assert_same(rs_a.standard_normal(4), rs_n.standard_normal(4), device)


def test_random_shuffle_in_place(device):
    a = numpy.arange(10.0)
    x = put(a, device)
    numpy.random.default_rng(1).shuffle(a)
    autodev.random.default_rng(1).shuffle(x)
    assert_same(x, a, device)
    numpy.random.seed(2)
    numpy.random.shuffle(a)
    autodev.random.seed(2)
    autodev.random.shuffle(x)
    assert_same(x, a, device)


@pytest.mark.parametrize("dtype", INEXACT)
def test_to_numpy_helper_roundtrip(device, dtype):
    a = sample((2, 2), dtype)
    assert_same(put(a, device), a, device)


def test_zero_d_results_are_scalars_exactly_where_numpy_gives_scalars(device):
    """On a GPU a 0-d result may stay on the device, but it must print and behave as
    NumPy's result does: a scalar where NumPy gives one, a 0-d array where it does not."""
    a, v = sample((3, 3)), sample((3,))
    z = numpy.array(0.75)
    for f in [lambda xp, a, v, z: xp.round(z, 1), lambda xp, a, v, z: xp.clip(z, 0, 0.5),
              lambda xp, a, v, z: xp.interp(0.5, v[:2], v[1:]),
              lambda xp, a, v, z: xp.take(v, 1), lambda xp, a, v, z: v.take(2),
              lambda xp, a, v, z: xp.isclose(z, 0.75), lambda xp, a, v, z: xp.sinc(z),
              lambda xp, a, v, z: xp.searchsorted(xp.sort(v), 0.5),
              lambda xp, a, v, z: xp.tensordot(v, v, 1), lambda xp, a, v, z: xp.copy(z),
              lambda xp, a, v, z: xp.where(z > 0.5, z, 0), lambda xp, a, v, z: z.clip(0, 1),
              lambda xp, a, v, z: z.round(), lambda xp, a, v, z: xp.einsum("i,i", v, v),
              lambda xp, a, v, z: xp.inner(v, v), lambda xp, a, v, z: xp.trace(a),
              lambda xp, a, v, z: xp.linalg.det(a), lambda xp, a, v, z: xp.median(v),
              lambda xp, a, v, z: xp.sqrt(z), lambda xp, a, v, z: z[()],
              lambda xp, a, v, z: z[...], lambda xp, a, v, z: a[1, 2],
              lambda xp, a, v, z: xp.ones(1).squeeze()]:
        differential(f, a, v, z, device=device, resident=False)


def test_device_scalars_as_arguments(device):
    a = sample((5,))
    x = put(a, device)
    s, e = x.sum(), a.sum()
    assert round(s, 2) == round(e, 2) and type(round(s)) is type(round(e))
    with pytest.raises(TypeError):
        round(x)
    assert_same(autodev.linspace(0, s, 4), numpy.linspace(0, e, 4))
    assert_same(autodev.full(3, s), numpy.full(3, e))
    assert_same(autodev.arange(x.argmax()), numpy.arange(a.argmax()))
    assert_same(autodev.zeros(x.argmax() + 1), numpy.zeros(a.argmax() + 1))
    assert_same(x[: x.argmax()], a[: a.argmax()], device)
    assert [10, 20, 30, 40, 50][x.argmin()] == [10, 20, 30, 40, 50][a.argmin()]
    assert_same(autodev.linspace(autodev.zeros(2), autodev.ones(2), 3),
                numpy.linspace(numpy.zeros(2), numpy.ones(2), 3))


@pytest.mark.parametrize("key", [[0, 1, 2], "mask"])
def test_subclass_index_that_copies_is_a_view_of_a_new_base_array_as_numpys(device, key):
    # NumPy's s[[0, 1, 2]] or s[mask] of a subclass instance s copies into a base-class
    # array and returns a subclass view of it (its .base)
    def run(xp, a):
        sub = type("Sub", (xp.ndarray,), {})
        s = a.view(sub)
        r = s[s > 0] if key == "mask" else s[key]
        numpy.asarray(r)  # (a device array held alone moves to the host: still a view)
        base = r.base
        shares = xp.shares_memory(r, a)
        r[0] = 7  # seen through its base
        return (type(r).__name__, type(base).__name__, r.flags.owndata, shares,
                base.tolist(), r.base.tolist())

    a = numpy.arange(5)
    assert run(autodev, put(a, device)) == run(numpy, a)
