"""What NumPy's own test suite asks of a drop-in, beyond values: functions held by
classes, ``a.flat``, subclasses, the ``ndarray`` constructor, signatures and the
buffer protocol, each compared with NumPy on every device."""

from __future__ import annotations

import pickle

import numpy
import pytest

import autodev
from diffcheck import assert_same, differential, error_parity, put, sample


# ---------------------------------------------------------------------- functions on classes

@pytest.mark.parametrize("name", ["array", "asarray", "zeros", "empty", "arange", "add",
                                  "sum", "concatenate", "ones"])
def test_functions_held_by_a_class_bind_as_numpys(device, name):
    # class C: array = np.array -> self.array(x) is np.array(x); NumPy's builtins and
    # ufuncs never become methods, its Python-level functions do
    def holder(xp):
        return type("Holder", (), {"f": getattr(xp, name)})()

    binds = not callable(getattr(holder(numpy), "f")) or \
        getattr(holder(numpy), "f") is not getattr(numpy, name)
    got = getattr(holder(autodev), "f")
    assert (got is not getattr(autodev, name)) == binds
    if not binds:
        assert_same(got(3) if name not in ("add", "concatenate") else got(2, 3),
                    getattr(numpy, name)(3) if name != "add" else numpy.add(2, 3))


def test_builtin_functions_keep_name_pickle_and_signature():
    assert autodev.array.__name__ == "array"
    assert pickle.loads(pickle.dumps(autodev.zeros)) is autodev.zeros
    assert pickle.loads(pickle.dumps(autodev.array)) is autodev.array
    differential(lambda xp: type("C", (), {"array": xp.array})().array([1, 2], dtype=float),
                 device=autodev.Device("cpu"))


# ---------------------------------------------------------------------- a.flat

def _flat_set(value):
    def run(xp, a):
        a = a.T  # not contiguous: C order of the flat index is not memory order
        a.flat = value
        return a
    return run


@pytest.mark.parametrize("value", [[1, 2], 3.5, [1.7, 2.2, 3.9, 4, 5, 6, 7], []])
def test_flat_setter_cycles_values_in_c_order(device, value):
    differential(_flat_set(value), sample((3, 2)), device=device)
    differential(_flat_set(value), sample((3, 2), "int64"), device=device)


@pytest.mark.parametrize("key", [4, -1, slice(1, 5, 2), Ellipsis, [0, 5, 5],
                                 numpy.array([True, False] * 3), numpy.array(True),
                                 numpy.array(False)])
def test_flat_reads_and_writes_as_numpys(device, key):
    differential(lambda xp, a: a.T.flat[key], sample((3, 2)), device=device, resident=False)

    def write(xp, a):
        a.T.flat[key] = 10 if numpy.ndim(key) == 0 and key is not Ellipsis else [10, 20]
        return a
    differential(write, sample((3, 2)), device=device)


@pytest.mark.parametrize("key", [10, (1, 2), "a", 1.5])
def test_flat_bad_keys_raise_as_numpys(device, key):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # NumPy 2.4 deprecates some
        error_parity(lambda xp, a: a.flat[key], sample((3, 2)), device=device)


def test_flatiter_object(device):
    a = sample((2, 3))
    x = put(a, device)
    it, expected = x.flat, a.flat
    assert it.base is x and len(it) == len(expected)
    assert next(it) == next(expected) and next(it) == next(expected)
    assert it.index == expected.index and it.coords == expected.coords
    numpy.testing.assert_array_equal(numpy.asarray(x.T.flat), numpy.asarray(a.T.flat))
    assert_same(x.flat.copy(), a.flat.copy())
    assert_same(x.flat == a[0, 1], a.flat == a[0, 1])
    with pytest.raises(TypeError, match="Cannot delete iterator elements"):
        del x.flat[1]


def test_asarray_of_flat_shares_host_memory():
    x = autodev.arange(6.0)
    view = numpy.asarray(x.flat)
    view[0] = 9  # NumPy's flatiter hands out the memory of a contiguous array
    assert x[0] == 9


def test_numpys_ufuncs_are_autodev_ufuncs():
    # NumPy's suite collects np._core.umath's ufuncs with isinstance(obj, np.ufunc);
    # SciPy's special functions are NumPy ufuncs too
    import scipy.special
    assert isinstance(numpy.add, autodev.ufunc) and isinstance(autodev.add, autodev.ufunc)
    assert isinstance(scipy.special.erf, autodev.ufunc)
    assert issubclass(numpy.ufunc, autodev.ufunc)
    assert not isinstance(autodev.sum, autodev.ufunc) and not isinstance(1, autodev.ufunc)


# ---------------------------------------------------------------------- ndarray(shape, ...)

@pytest.mark.parametrize("args", [
    ((2, 3),), ((2, 3), "int32"), ((0,), float), ((2, 2), "f8", None, 0, None, "F"),
])
def test_ndarray_constructor_without_buffer(args):
    got, expected = autodev.ndarray(*args), numpy.ndarray(*args)
    assert type(got) is autodev.ndarray
    assert (got.shape, got.dtype, got.strides) == (expected.shape, expected.dtype,
                                                   expected.strides)


def test_ndarray_constructor_shares_a_buffer():
    base = autodev.arange(6.0)
    view = autodev.ndarray((2, 2), float, base, 8, (16, 8))
    expected = numpy.ndarray((2, 2), float, numpy.arange(6.0), 8, (16, 8))
    assert_same(view, expected)
    view[0, 0] = 99  # a write through either is seen by the other
    assert base[1] == 99
    base[3] = -1
    assert view[1, 0] == -1
    raw = bytearray(b"abcd")
    assert_same(autodev.ndarray((4,), "i1", raw), numpy.ndarray((4,), "i1", raw))


@pytest.mark.parametrize("args", [((10,), float, "buffer"), ((2,), float, None, 0, None, "X"),
                                  ((-1,),), ((2,), float, "buffer", 40)])
def test_ndarray_constructor_errors_as_numpys(args):
    def make(xp, base):
        return xp.ndarray(*[base if a == "buffer" else a for a in args])
    error_parity(make, numpy.arange(6.0), device=autodev.Device("cpu"))


def test_ndarray_constructor_on_a_device_buffer_says_what_to_do(device):
    x = put(numpy.arange(6.0), device)
    if x.location == autodev.Device("cpu"):
        assert autodev.ndarray((3,), float, x)[2] == 2
    else:
        with pytest.raises(ValueError, match="to_device"):
            autodev.ndarray((3,), float, x)


def test_subclass_constructed_directly_is_finalized_with_none():
    seen = []

    class Tagged(autodev.ndarray):
        def __array_finalize__(self, obj):
            seen.append(obj)
            self.tag = getattr(obj, "tag", "new")

    t = Tagged((2, 3), "int64")
    assert type(t) is Tagged and t.shape == (2, 3) and t.dtype == numpy.int64
    assert seen == [None] and t.tag == "new"


# ---------------------------------------------------------------------- __array__ array-likes

class _ArrayLike:
    """An array-like of a program written for its ``np``: ``__array__`` returns np's array."""

    def __init__(self, xp, values):
        self.xp, self.values = xp, values

    def __array__(self, dtype=None, copy=None):
        return self.xp.asarray(self.values, dtype=dtype)


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.add(a, 1), lambda xp, a: xp.sin(a), lambda xp, a: xp.asarray(a),
    lambda xp, a: xp.array(a), lambda xp, a: xp.bincount(a), lambda xp, a: xp.sum(a),
    lambda xp, a: xp.concatenate([a, a]),
])
def test_array_like_whose_array_is_an_autodev_array(device, call):
    expected = call(numpy, _ArrayLike(numpy, [1, 2, 2]))
    got = call(autodev, _ArrayLike(autodev, [1, 2, 2]))
    assert_same(got, expected)
