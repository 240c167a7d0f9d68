"""What NumPy's own test suite asks of a drop-in, beyond values: functions held by
classes, ``a.flat``, subclasses, the ``ndarray`` constructor, signatures and the
buffer protocol, each compared with NumPy on every device."""

from __future__ import annotations

import pickle

import numpy
import pytest

import autodev
from diffcheck import assert_same, differential, dyadic, error_parity, put, sample


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
    if binds:
        return
    result = got(3) if name not in ("add", "concatenate") else got(2, 3)
    expected = getattr(numpy, name)(3) if name != "add" else numpy.add(2, 3)
    if name == "empty":  # (its values are whatever the memory held)
        assert (type(result), result.shape, result.dtype) == \
            (autodev.ndarray, expected.shape, expected.dtype)
    else:
        assert_same(result, expected)


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


@pytest.mark.parametrize("key, value", [
    (numpy.array([[1, 2], [3, 4]]), 30), (numpy.array([[1, 2], [3, 4]]), [7, 8, 9]),
    (slice(5, 10), 30), (slice(None, None, -1), [1, 2, 3, 4]), (slice(10, 5), 60),
    ([-1, -2], 20), ([2, 2, 1], [5, 6, 7]), (slice(None), []),
])
def test_flat_assignment_cycles_values_as_numpys(device, key, value):
    """``a.flat[key] = value``: the value cycled over the positions in the key's shape,
    the last write to a repeated position winning, as NumPy's."""
    def write(xp, a):
        a.flat[key] = value
        return a
    differential(write, numpy.arange(9).reshape(3, 3), device=device)


def test_flat_assignment_of_a_0d_array_as_numpys(device):
    def write(xp, a):
        a.flat[0] = True
        a.flat[[0]] = False
        a.flat[...] = True
        return a
    differential(write, numpy.array(False), device=device)


@pytest.mark.parametrize("key, value", [((), 70), ([True, True], 50), (9, 40), (0, [1, 2])])
def test_flat_assignment_errors_as_numpys(device, key, value):
    def write(xp, a):
        a.flat[key] = value
    error_parity(write, numpy.arange(9).reshape(3, 3), device=device)


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
    ufuncs = [numpy.add, numpy.bitwise_count]
    ufuncs.remove(autodev.bitwise_count)  # equal to the NumPy ufunc it stands for
    assert ufuncs == [numpy.add] and autodev.add == numpy.add and autodev.add != numpy.sin
    assert {autodev.add: 1}[numpy.add] == 1


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


def test_ndarray_constructor_shares_a_device_buffer_as_numpy_does(device):
    x = put(numpy.arange(6.0), device)
    y = autodev.ndarray((3,), float, x, offset=8)  # a device array moves to the host for it
    assert y[1] == 2 and x.location == autodev.Device("cpu")
    y[1] = -1.0
    assert x[2] == -1.0
    z = put(numpy.arange(6.0), device)
    view = z[1:]  # a view shares its device memory: they move together
    w = autodev.ndarray((3,), float, z, offset=8)
    w[0] = -2.0
    assert view[0] == -2.0 and view.location == z.location == autodev.Device("cpu")


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


# ---------------------------------------------------------------------- subclasses

def _subclass(xp, **body):
    return type("Mine", (xp.ndarray,), dict(body))


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.sum(a, axis=0), lambda xp, a: xp.mean(a, axis=1),
    lambda xp, a: xp.squeeze(a[None]), lambda xp, a: xp.tile(a, 2),
    lambda xp, a: xp.sort(a), lambda xp, a: xp.linalg.inv(a[:, :2] + xp.eye(2)),
    lambda xp, a: xp.median(a, axis=0), lambda xp, a: xp.nanmax(a, axis=0),
    lambda xp, a: xp.ones_like(a), lambda xp, a: xp.diff(a), lambda xp, a: xp.cumsum(a),
    lambda xp, a: xp.concatenate([a, a]), lambda xp, a: xp.stack([a, a]),
    lambda xp, a: xp.nonzero(a)[0], lambda xp, a: xp.sin(a) + 1,
    lambda xp, a: xp.linalg.lstsq(a.T, xp.ones(3), rcond=None)[0],
    lambda xp, a: xp.sum(a),
])
def test_functions_keep_subclasses_as_numpys(device, call):
    def run(xp, a):
        return type(call(xp, a.view(_subclass(xp)))).__name__

    assert run(autodev, put(sample((2, 3)), device)) == run(numpy, sample((2, 3)))


def test_array_priority_picks_the_wrapping_input(device):
    def run(xp, a):
        low = a.view(_subclass(xp, __array_priority__=1.0))
        high = a.view(type("High", (xp.ndarray,), {"__array_priority__": 5.0}))
        return type(xp.add(low, high)).__name__, type(xp.add(high, low)).__name__, \
            type(xp.add(low, low)).__name__

    assert run(autodev, put(sample((3,)), device)) == run(numpy, sample((3,)))


def test_array_wrap_and_finalize_are_honoured(device):
    def run(xp, a):
        calls = []

        class Wrapping(xp.ndarray):
            def __array_finalize__(self, obj):
                self.info = getattr(obj, "info", None)

            def __array_wrap__(self, arr, context=None, return_scalar=False):
                calls.append(type(arr).__name__ != "Wrapping")
                return super().__array_wrap__(arr, context, return_scalar)

        w = a.view(Wrapping)
        w.info = "kept"
        results = [xp.sin(w), xp.sum(w, axis=0), xp.linalg.pinv(w[:2, :2] + xp.eye(2))]
        return [type(r).__name__ for r in results], [r.info for r in results], all(calls)

    assert run(autodev, put(sample((3, 3)), device)) == run(numpy, sample((3, 3)))


def test_ndarray_array_wrap_itself(device):
    x = put(sample((3,)), device)
    Mine = _subclass(autodev)
    wrapped = x.view(Mine).__array_wrap__(autodev.zeros(2))
    assert type(wrapped) is Mine and wrapped.shape == (2,)
    assert type(x.__array_wrap__(numpy.zeros(2))) is autodev.ndarray
    assert x.__array_wrap__(autodev.zeros(()), None, True) == 0.0  # a scalar, as NumPy's
    assert numpy.ndim(x.__array_wrap__(autodev.zeros(()), None, True)) == 0


# ---------------------------------------------------------------------- signatures

@pytest.mark.parametrize("name", ["array", "asarray", "asanyarray", "zeros", "empty",
                                  "arange", "frombuffer", "inner", "where", "dot", "sum",
                                  "concatenate"])
def test_function_signatures_are_numpys(name):
    import inspect
    ours, theirs = getattr(autodev, name), getattr(numpy, name)
    assert inspect.signature(ours) == inspect.signature(theirs)
    assert hasattr(ours, "__signature__") == hasattr(theirs, "__signature__")
    if getattr(theirs, "__text_signature__", None) and not hasattr(type(theirs), "__get__"):
        assert ours.__text_signature__ == theirs.__text_signature__


@pytest.mark.parametrize("name", ["sum", "mean", "astype", "copy", "reshape", "resize",
                                  "getfield", "setfield", "dumps", "partition", "view",
                                  "__array__", "__array_wrap__", "__array_finalize__",
                                  "__setstate__", "to_device", "__array_namespace__"])
def test_method_signatures_are_numpys(name):
    import inspect
    sig = inspect.signature(getattr(autodev.ndarray, name))
    assert sig == inspect.signature(getattr(numpy.ndarray, name))
    assert sig.parameters["self"].kind is inspect.Parameter.POSITIONAL_ONLY


def test_creation_keywords_named_as_numpys(device):
    assert_same(autodev.array(object=[1, 2]), numpy.array(object=[1, 2]))
    assert_same(autodev.asarray(a=[1, 2]), numpy.asarray(a=[1, 2]))
    assert_same(autodev.asanyarray(a=[1, 2]), numpy.asanyarray(a=[1, 2]))


@pytest.mark.parametrize("ndmax", [0, 1, 2, 3])
def test_array_ndmax(device, ndmax):
    nested = [[1, 2], [3, 4]]
    assert_same(autodev.array(nested, ndmax=ndmax, dtype=object),
                numpy.array(nested, ndmax=ndmax, dtype=object))
    error_parity(lambda xp, _: xp.array(nested, ndmax=-1), None, device=device)


# ---------------------------------------------------------------------- methods NumPy has

def test_getfield_setfield(device):
    def run(xp, a):
        a = a.astype(complex) * (1 + 2j)
        real = a.getfield(numpy.float64, 0) + 0  # a copy of the values, wherever a lives
        a.setfield(3.0, numpy.float64, 8)
        return real, a
    differential(run, sample((2, 2)), device=device, resident=False)


def test_getfield_is_a_view_on_the_host():
    on_host = autodev.eye(2, dtype=complex)
    view = on_host.getfield(numpy.float64, 8)
    view[...] = 5.0  # as NumPy's; on a device it is a copy (no device library has getfield)
    assert on_host[0, 0] == 1 + 5j


def test_dumps_and_setstate(device):
    x = put(sample((2, 3)), device)
    assert_same(pickle.loads(x.dumps()), sample((2, 3)))
    y = autodev.zeros(1)
    y.__setstate__(numpy.arange(3.0).__reduce__()[2])
    assert_same(y, numpy.arange(3.0))


def test_resize_refuses_a_referenced_array_as_numpys(device):
    def run(xp, _):
        x = xp.eye(3)
        y = x  # noqa: F841  (the second reference NumPy's refcheck refuses)
        x.resize((5, 1))
    error_parity(run, None, device=device)
    x = autodev.eye(3).to_device("cpu")
    x.resize((5, 1))  # only this name holds it: resized, as NumPy's
    assert x.shape == (5, 1)


@pytest.mark.parametrize("shape", [(5, 2), (2,), (0, 3), None, 12, ()])
def test_resize_in_place_on_every_device(device, shape):
    a = numpy.arange(6.0).reshape(2, 3).copy()  # (NumPy resizes only what owns its data)
    x = put(a, device)
    if shape is None:
        a.resize()
        x.resize()
    else:
        a.resize(shape)
        x.resize(shape)  # on a device: moved to the host (a counted transfer), resized
    assert_same(x, a, device=autodev.Device("cpu"))


def test_resize_with_views_of_device_memory_as_numpys(device):
    x = put(numpy.zeros((4, 0)), device)
    view = x[...]
    view.resize((0, 7))  # no bytes change: a view is reshaped in place, as NumPy's
    assert view.shape == (0, 7)
    y = put(numpy.arange(4.0), device)
    view = y[:2]
    with pytest.raises(ValueError, match="does not own its data"):
        view.resize(3)
    with pytest.raises(ValueError, match="referenced"):
        y.resize(6)


@pytest.mark.parametrize("call", [
    lambda d: d.partition(10), lambda d: d.partition(-11),
    lambda d: d.partition(2, kind="nonsense"), lambda d: d.partition(2, kind="\xe4"),
])
def test_partition_raises_as_numpys(device, call):
    error_parity(lambda xp, a: call(a), numpy.arange(10), device=device)


@pytest.mark.parametrize("call", [
    lambda xp, d: xp.partition(d, 2, kind=1), lambda xp, d: xp.partition(d, 2, kind="nonsense"),
    lambda xp, d: xp.argpartition(d, 2, kind="nonsense"),
    lambda xp, d: d.argpartition(2, kind="\xe4"), lambda xp, d: d.argpartition(2, kind=1),
    lambda xp, d: xp.sort(d, kind="stable", stable=True),
    lambda xp, d: xp.argsort(d, kind="quicksort", stable=False),
])
def test_sort_and_select_kinds_raise_as_numpys(device, call):
    """NumPy's checks of ``kind``: a partition's must be 'introselect' (TypeError if not a
    string), and a sort takes ``kind`` or ``stable``, not both."""
    error_parity(call, numpy.arange(10), device=device)


def test_array_finalize_reachable_through_super():
    class Mine(autodev.ndarray):
        def __array_finalize__(self, obj):
            super().__array_finalize__(obj)
            self.seen = True

    assert autodev.arange(3).view(Mine).seen


def test_array_struct_on_the_host_as_numpys(device):
    x = put(numpy.arange(10), device)

    class Struct:
        pass

    x.flags.writeable = False  # (a device array moves to the host for the capsule)
    Struct.__array_struct__ = x.__array_struct__
    assert not numpy.asarray(Struct()).flags.writeable
    assert memoryview(x).readonly
    numpy.testing.assert_array_equal(numpy.asarray(Struct()), numpy.arange(10))


def test_methods_return_the_array_itself_or_out_as_numpys(device):
    a = put(numpy.ones(3), device)
    assert a.conj() is a and a.conjugate() is a  # a real array is its own conjugate
    x = autodev.arange(6.0).reshape(2, 3)  # positional out, on the host
    out = autodev.empty(3)
    assert x.sum(0, None, out) is out
    assert_same(out, numpy.arange(6.0).reshape(2, 3).sum(0))
    c = autodev.array([1 - 1j, 2j])
    out = autodev.empty_like(c)
    assert c.conjugate(out) is out
    assert_same(out, numpy.array([1 + 1j, -2j]))


@pytest.mark.parametrize("call", [
    lambda xp, f, v, r: xp.dot(f, v, r), lambda xp, f, v, r: xp.dot(f, v, out=r),
    lambda xp, f, v, r: f.dot(v, r), lambda xp, f, v, r: f.dot(v, out=r),
])
@pytest.mark.parametrize("vshape", [(4, 3), (4,)])
def test_dot_returns_its_out_itself_as_numpys(device, call, vshape):
    def run(xp, f, v):
        r = xp.empty((5,) + vshape[1:])
        assert call(xp, f, v, r) is r
        return r

    differential(run, dyadic((5, 4)), dyadic(vshape, seed=1), device=device)


@pytest.mark.parametrize("method", [
    lambda xp, a: xp.multiply.outer(a, a), lambda xp, a: xp.add.reduce(a),
    lambda xp, a: xp.add.accumulate(a), lambda xp, a: xp.add.reduce(a, axis=0),
])
def test_ufunc_methods_keep_subclasses_as_numpys(device, method):
    def run(xp, a):
        return type(method(xp, a.view(_subclass(xp)))).__name__

    assert run(autodev, put(sample((2, 3)), device)) == run(numpy, sample((2, 3)))


@pytest.mark.parametrize("dtype", ["i,O", [("foo", "i"), ("bar", "S1")], "f8"])
def test_buffer_of_structured_arrays_reads_as_numpys(dtype):
    # a structured dtype's PEP 3118 format may not give its itemsize back: NumPy must
    # read such an array through __array_interface__, not a wrong buffer
    a = numpy.zeros(2, dtype=dtype)
    x = autodev.asarray(a.copy())
    numpy.testing.assert_array_equal(numpy.asarray(x), a)
    assert numpy.asarray(x).dtype == a.dtype


@pytest.mark.parametrize("order", [None, "K", "k", "A", "C", "c", "F", "f", b"F", "",
                                   "X", "Fortran", 1])
@pytest.mark.parametrize("make", ["asarray", "asanyarray", "array copy=None", "array"])
def test_order_of_an_autodev_array_is_numpys(make, order, device):
    """``asarray(a, order=...)`` of an autodev array lays the data out as NumPy's does (a
    copy where the order asks for a layout the data lacks, the array itself otherwise),
    and refuses an order NumPy refuses, with NumPy's error."""
    def run(xp, data):
        for source in (data, data.T, data[:, ::2]):
            if make == "asarray":
                result = xp.asarray(source, order=order)
            elif make == "asanyarray":
                result = xp.asanyarray(source, order=order)
            else:
                copy = None if make.endswith("None") else True
                result = xp.array(source, order=order, copy=copy)
            yield (result is source, result.flags["C_CONTIGUOUS"], result.flags["F_CONTIGUOUS"],
                   numpy.asarray(result).tolist())

    host = numpy.arange(12.0).reshape(3, 4)
    try:
        want = list(run(numpy, host))
    except (ValueError, TypeError) as error:
        with pytest.raises(type(error)) as raised:
            list(run(autodev, autodev.asarray(host, device=device)))
        assert str(raised.value) == str(error)
        return
    assert list(run(autodev, autodev.asarray(host, device=device))) == want


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "full_like"])
def test_like_functions_place_as_asked(name, device):
    """``zeros_like(a, device=...)`` makes its array where asked (the Python path, which
    the compiled one leaves such a call to); without ``device=``, NumPy's array on the
    host, with NumPy's dtype and shape."""
    host = numpy.arange(6.0).reshape(2, 3)
    a = autodev.asarray(host)
    args = (a, 7.0) if name == "full_like" else (a,)
    placed = getattr(autodev, name)(*args, device=device)
    assert placed.location == device
    plain = getattr(autodev, name)(*args, dtype=numpy.float32)
    want = getattr(numpy, name)(*((host, 7.0) if name == "full_like" else (host,)),
                                dtype=numpy.float32)
    assert plain.dtype == want.dtype and plain.shape == want.shape
    if name != "empty_like":
        assert numpy.asarray(plain).tobytes() == want.tobytes()
