"""Semantics NumPy's own test suite checks, each compared with NumPy on every device:
``array(x, copy=..., order=...)`` keeping or refusing ``x``'s memory, the buffer
protocol's owner, and the other differences its expected-failures list names."""

from __future__ import annotations

import datetime
import inspect
import sys
from contextlib import nullcontext
from typing import Any

import numpy
import pytest

import autodev
from diffcheck import error_parity, put

HAS_BUFFER = autodev.ndarray.__mro__[1] is not object or sys.version_info >= (3, 12)


def _layout(a: Any, layout: str) -> Any:
    """``a`` (4 x 6) C-contiguous, F-contiguous, strided, or one of its elements as 0-d."""
    return {"C": a, "F": a.copy(order="F"), "strided": a[::2, ::2], "0-d": a[1, 2, ...]}[layout]


def _outcome(xp: Any, a: Any, **kwargs: Any) -> str:
    """What ``xp.array(a, **kwargs)`` did: kept ``a``, copied it, or refused (the type)."""
    try:
        res = xp.array(a, **kwargs)
    except Exception as e:  # noqa: BLE001 - the type is the answer compared
        return type(e).__name__
    return "same" if res is a else "copy"


@pytest.mark.parametrize("layout", ["C", "F", "strided", "0-d"])
@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
@pytest.mark.parametrize("copy", [None, False, True, numpy._CopyMode.IF_NEEDED,
                                  numpy._CopyMode.NEVER, numpy._CopyMode.ALWAYS, "no"])
def test_array_keeps_copies_or_refuses_as_numpys(device, layout, order, copy):
    # copy=None keeps the array where its layout allows the order asked; copy=False
    # (or _CopyMode.NEVER) refuses with ValueError where it does not; strings are refused
    a = _layout(numpy.arange(24.0).reshape(4, 6), layout)
    x = _layout(put(numpy.arange(24.0).reshape(4, 6), device), layout)
    assert _outcome(autodev, x, copy=copy, order=order) == \
        _outcome(numpy, a, copy=copy, order=order)
    assert _outcome(autodev, x, copy=copy, dtype=numpy.float32) == \
        _outcome(numpy, a, copy=copy, dtype=numpy.float32)


@pytest.mark.skipif(not HAS_BUFFER, reason="the buffer protocol for Python classes (PEP 688 "
                    "__buffer__) needs Python 3.12, or the compiled extension before it")
def test_memoryview_owner_is_the_array_as_numpys():
    x = autodev.arange(12.0).reshape(3, 4)
    m = memoryview(x)
    assert m.obj is x  # NumPy's: memoryview(a).obj is a
    view = autodev.array(m, copy=False)
    assert view.base.obj is x and numpy.shares_memory(numpy.asarray(view), numpy.asarray(x))
    m.release()
    before = sys.getrefcount(x)
    for _ in range(100):
        memoryview(x).release()
        bytes(x)
    assert sys.getrefcount(x) == before  # every export released


class _Sub:
    """A subclass of each library's ndarray, made per library (``class A(np.ndarray)``)."""

    made: dict[str, type] = {}

    @classmethod
    def of(cls, xp: Any) -> type:
        if xp.__name__ not in cls.made:
            cls.made[xp.__name__] = type("A", (xp.ndarray,), {})
        return cls.made[xp.__name__]


def _kinds(result: Any) -> Any:
    """The class of ``result`` (or of each of its arrays) by name: base or subclass."""
    if isinstance(result, (tuple, list)):
        return [_kinds(r) for r in result]
    return "sub" if type(result).__name__ == "A" else type(result).__name__


SUBOK_CALLS = {
    "empty_like": lambda xp, a: xp.empty_like(a),
    "empty_like-subok-False": lambda xp, a: xp.empty_like(a, subok=False),
    "zeros_like-subok-False": lambda xp, a: xp.zeros_like(a, subok=False),
    "full_like-subok-False": lambda xp, a: xp.full_like(a, 2.0, subok=False),
    "copy": lambda xp, a: xp.copy(a),
    "copy-subok": lambda xp, a: xp.copy(a, subok=True),
    "broadcast_to": lambda xp, a: xp.broadcast_to(a, (2, 6)),
    "broadcast_to-subok": lambda xp, a: xp.broadcast_to(a, (2, 6), subok=True),
    "broadcast_arrays": lambda xp, a: xp.broadcast_arrays(a, a),
    "nonzero-method": lambda xp, a: a.nonzero(),
    "searchsorted-method": lambda xp, a: a.searchsorted(a[1:3]),
    "searchsorted": lambda xp, a: xp.searchsorted(a, a[1:3]),
    "require": lambda xp, a: xp.require(a),
    "average-returned": lambda xp, a: xp.average(a, weights=a, returned=True),
    "nanargmin-axis": lambda xp, a: xp.nanargmin(a.reshape(2, 3), axis=0),
    "nanargmax-axis": lambda xp, a: xp.nanargmax(a.reshape(2, 3), axis=1),
    "require-E": lambda xp, a: xp.require(a, None, ["E"]),
    "require-F": lambda xp, a: xp.require(a.reshape(2, 3), None, ["F", "A"]),
}


@pytest.mark.parametrize("call", sorted(SUBOK_CALLS))
def test_subclass_kept_or_dropped_as_numpys(device, call):
    # subok=False, and the functions whose subok defaults to False, give base arrays;
    # x.nonzero() gives base index arrays; require keeps a subclass unless "E" is asked
    run = SUBOK_CALLS[call]
    a = numpy.arange(6.0)
    expected = run(numpy, a.view(_Sub.of(numpy)))
    got = run(autodev, put(a, device).view(_Sub.of(autodev)))
    assert _kinds(got) == [_kinds(e) for e in expected] if isinstance(expected, tuple) \
        else _kinds(got) == _kinds(expected)


@pytest.mark.parametrize("requirements", [["C"], ["F"], ["W"], ["O"], ["A"], ["C", "O"]])
def test_require_returns_the_array_itself_where_it_meets_them(device, requirements):
    x = put(numpy.arange(6.0).reshape(2, 3), device)
    a = numpy.arange(6.0).reshape(2, 3)
    b, y = numpy.require(a, None, requirements), autodev.require(x, None, requirements)
    assert (autodev.require(y, None, requirements) is y) == \
        (numpy.require(b, None, requirements) is b)
    assert all(y.flags[r] for r in requirements)
    error_parity(lambda xp, a: xp.require(a, None, ["Q"]), a, device=device)
    error_parity(lambda xp, a: xp.require(a, None, ["C", "F"]), a, device=device)


def _summing_class(xp: Any) -> type:
    """A subclass whose ``sum`` takes no ``keepdims`` (NumPy's TestKeepdims)."""

    def sum(self: Any, axis: Any = None, dtype: Any = None, out: Any = None) -> Any:
        return ("own", axis)

    return type("S", (xp.ndarray,), {"sum": sum})


@pytest.mark.parametrize("kwargs", [{}, {"axis": 0}, {"keepdims": True}])
def test_reduction_hands_a_subclass_to_its_own_method_as_numpys(device, kwargs):
    # np.sum(x, ...) calls x.sum(...) with the arguments given: keepdims=True reaches a
    # method that takes none, which refuses it
    a = numpy.arange(6.0)
    run = lambda xp, a: xp.sum(a.view(_summing_class(xp)), **kwargs)  # noqa: E731
    if "keepdims" in kwargs:
        error_parity(run, a, device=device)
    else:
        assert run(autodev, put(a, device)) == run(numpy, a)


@pytest.mark.parametrize("strides, offset, size", [(-1, 4, 4), (1, 3, 7), (-2, 4, 4),
                                                    (-1, 2, 4), (1, 3, 8)])
def test_setting_strides_as_numpys(device, strides, offset, size):
    # deprecated in NumPy 2.4 (DeprecationWarning), checked against the memory viewed
    def run(xp: Any, base: Any) -> Any:
        r = xp.ndarray([size], dtype=base.dtype, buffer=base, offset=offset * base.itemsize)
        with pytest.warns(DeprecationWarning):
            r.strides = (strides * base.itemsize,)
        return r

    base = numpy.arange(10)
    x = put(base, device)
    try:
        expected = run(numpy, base)
    except (ValueError, TypeError):  # strides past the memory; a buffer too small
        error_parity(run, base, device=device)
        return
    got = run(autodev, x)
    assert got.strides == expected.strides and got.tolist() == expected.tolist()


@pytest.mark.parametrize("start, strides", [(5, -8), (2, -16), (1, 16), (4, 24)])
def test_setting_strides_of_a_view_as_numpys(device, start, strides):
    """A device view is re-viewed on the host (it moves there with the memory it shares,
    as for any consumer of host memory), checked against that memory as NumPy checks it."""
    def run(xp: Any, base: Any) -> Any:
        view = base[start:start + 4]
        with pytest.warns(DeprecationWarning):
            view.strides = (strides,)
        view[0] = -1  # a write through the re-viewed view is the base's
        return view, base

    try:
        expected = run(numpy, numpy.arange(10))
    except ValueError:  # strides past the memory viewed
        error_parity(run, numpy.arange(10), device=device)
        return
    got = run(autodev, put(numpy.arange(10), device))
    for g, e in zip(got, expected):
        assert g.strides == e.strides and g.tolist() == e.tolist()


class _Uncopyable:
    def __deepcopy__(self, memo: Any) -> Any:
        raise RuntimeError("no deep copy")


class _ArrayOfNone:
    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        return None


MISUSE = {
    "flat-by-string-flat": lambda xp, a: a.flat[xp.array(["a"], dtype="S").flat],
    "flat-of-64-dims": lambda xp, a: xp.ones((1,) * 64).flat,
    "deepcopy-object-elements": lambda xp, a: xp.array([1, _Uncopyable()], dtype=object)
    .__deepcopy__({}),
    "array-of-__array__-None": lambda xp, a: xp.array(_ArrayOfNone()),
}


@pytest.mark.parametrize("call", sorted(MISUSE))
def test_misuse_raises_as_numpys(device, call):
    error = error_parity(MISUSE[call], numpy.arange(9).reshape(3, 3), device=device)
    with pytest.raises(type(error)) as numpys:
        MISUSE[call](numpy, numpy.arange(9).reshape(3, 3))
    assert str(error) == str(numpys.value)


def test_flat_by_an_empty_string_flat_is_empty_as_numpys(device):
    a = numpy.arange(9).reshape(3, 3)
    got = put(a, device).flat[autodev.array([], dtype="S").flat]
    expected = a.flat[numpy.array([], dtype="S").flat]
    assert got.shape == expected.shape and got.dtype == expected.dtype


@pytest.mark.parametrize("x", [[1, 2, 4], "array"])
def test_diff_of_order_zero_is_its_input_as_numpys(device, x):
    x = put(numpy.array([1, 2, 4]), device) if x == "array" else x
    assert autodev.diff(x, n=0) is x and autodev.diff(x, 0) is x
    error_parity(lambda xp, a: xp.diff(a, n=-1), numpy.array([1, 2, 4]), device=device)


def test_testing_reads_an_array_like_whose_array_is_an_autodev_array(device):
    # numpy.testing's comparisons refuse an __array__ giving a non-NumPy array;
    # autodev.testing's read it
    x = put(numpy.arange(3), device)

    class Like:
        def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
            return x

    autodev.testing.assert_array_equal(Like(), numpy.arange(3))
    autodev.testing.assert_array_equal(autodev.intersect1d(Like(), Like()), Like())


def _get_buffer(obj: Any, flags: int) -> None:
    """``PyObject_GetBuffer(obj, flags)`` then release: what a C consumer asks for."""
    import ctypes

    class Py_buffer(ctypes.Structure):
        _fields_ = [("buf", ctypes.c_void_p), ("obj", ctypes.py_object),
                    ("len", ctypes.c_ssize_t), ("itemsize", ctypes.c_ssize_t),
                    ("readonly", ctypes.c_int), ("ndim", ctypes.c_int),
                    ("format", ctypes.c_char_p), ("shape", ctypes.c_void_p),
                    ("strides", ctypes.c_void_p), ("suboffsets", ctypes.c_void_p),
                    ("internal", ctypes.c_void_p)]

    get = ctypes.pythonapi.PyObject_GetBuffer
    get.argtypes = [ctypes.py_object, ctypes.POINTER(Py_buffer), ctypes.c_int]
    release = ctypes.pythonapi.PyBuffer_Release
    release.argtypes = [ctypes.POINTER(Py_buffer)]
    view = Py_buffer()
    get(obj, ctypes.byref(view), flags)
    release(ctypes.byref(view))


@pytest.mark.skipif(not HAS_BUFFER, reason="the buffer protocol for Python classes (PEP 688 "
                    "__buffer__) needs Python 3.12, or the compiled extension before it")
@pytest.mark.parametrize("flags", [0, 0x8 | 0x10, 0x18 | 0x4])  # SIMPLE, STRIDES, +FORMAT
@pytest.mark.parametrize("layout", ["C", "strided"])
def test_buffer_flags_answered_as_numpys(layout, flags):
    # a consumer's flags reach NumPy's exporter: ValueError for SIMPLE on strided memory
    a = _layout(numpy.arange(24.0).reshape(4, 6), layout)
    x = _layout(autodev.arange(24.0).reshape(4, 6), layout)
    try:
        _get_buffer(a, flags)
    except Exception as e:  # noqa: BLE001 - the type is the answer compared
        with pytest.raises(type(e)):
            _get_buffer(x, flags)
    else:
        _get_buffer(x, flags)


@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_pickle_protocol_5_out_of_band_as_numpys(device, layout):
    # contiguous host memory travels out of band and is shared, as NumPy's; other
    # memory (and a device array's host copy) in band
    import pickle

    a = _layout(numpy.arange(24.0).reshape(4, 6), layout)
    x = _layout(put(numpy.arange(24.0).reshape(4, 6), device), layout)
    got_buffers: list[Any] = []
    expected_buffers: list[Any] = []
    y = pickle.loads(pickle.dumps(x, protocol=5, buffer_callback=got_buffers.append),
                     buffers=got_buffers)
    b = pickle.loads(pickle.dumps(a, protocol=5, buffer_callback=expected_buffers.append),
                     buffers=expected_buffers)
    assert y.tolist() == b.tolist() and type(y) is autodev.ndarray
    if x.location != "cpu":
        return
    assert len(got_buffers) == len(expected_buffers)
    x[0, ...] = -1.0
    a[0, ...] = -1.0
    assert y.tolist() == b.tolist()  # shared where NumPy's is


class _Declines:
    def __array_ufunc__(self, *args: Any, **kwargs: Any) -> Any:
        return NotImplemented


@pytest.mark.parametrize("call", [
    lambda xp, a: xp.negative(_Declines()),
    lambda xp, a: xp.add(_Declines(), a, out=a),
])
def test_override_declined_message_as_numpys(device, call):
    import re

    a = numpy.arange(3.0)
    error = error_parity(call, a, device=device)
    with pytest.raises(TypeError) as numpys:
        call(numpy, a)
    # the same words, the objects' addresses aside
    def shape(msg: str) -> str:
        return re.sub(r" at 0x[0-9a-f]+", "", msg)
    assert shape(str(error)) == shape(str(numpys.value))


def test_array_ufunc_called_directly_as_numpys(device):
    x = put(numpy.array(1.0), device)
    a = numpy.array(1.0)
    for args in [(), (1, 2)]:
        error_parity(lambda xp, v: v.__array_ufunc__(*args), a, device=device)
    got = x.__array_ufunc__(numpy.add, "__call__", x, x)
    assert float(got) == float(a.__array_ufunc__(numpy.add, "__call__", a, a))


class _Echo:
    """An override answering with the keywords it was handed (NumPy's test_umath)."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return kwargs


BAD_UFUNC_CALLS = {
    "out-twice": lambda xp, a: xp.multiply(a, a, a, out=a),
    "too-many": lambda xp, a: xp.multiply(a, a, a, a),
    "too-few": lambda xp, a: xp.multiply(a, out=()),
    "out-tuple-length": lambda xp, a: xp.multiply(a, a, out=(a, a)),
    "out-none-two-outputs": lambda xp, a: xp.modf(a, out=None),
    "unknown-keyword": lambda xp, a: xp.multiply(a, a, foo=1),
    "override-unknown-keyword": lambda xp, a: xp.multiply(1, _Echo(), foo="bar"),
    "override-out-length": lambda xp, a: xp.modf(_Echo(), out=("one",)),
    "override-out-not-tuple": lambda xp, a: xp.modf(a, out=_Echo()),
    "override-sig-and-signature": lambda xp, a: xp.add(_Echo(), a, sig="a", signature="a"),
    "out-ellipsis-positional": lambda xp, a: xp.add(a, 2, ...),
    "out-ellipsis-in-tuple": lambda xp, a: xp.negative(a, out=(...,)),
    "out-ellipsis-among-outputs": lambda xp, a: xp.divmod(a, 2, out=(xp.empty(3), ...)),
    "reduce-out-ellipsis-positional": lambda xp, a: xp.add.reduce(a, 0, None, ...),
    "reduce-out-ellipsis-in-tuple": lambda xp, a: xp.add.reduce(a, out=(...,)),
    "override-reduce-out-tuple-length": lambda xp, a: xp.add.reduce(_Echo(), out=(a, a)),
    "override-reduce-axis-twice": lambda xp, a: xp.add.reduce(_Echo(), 0, axis=0),
    "override-outer-one-input": lambda xp, a: xp.multiply.outer(_Echo()),
    "override-outer-four-inputs": lambda xp, a: xp.multiply.outer(_Echo(), a, a, a),
    "override-outer-sig-and-signature": lambda xp, a: xp.multiply.outer(
        _Echo(), a, sig="a", signature="a"),
    "override-outer-unknown-keyword": lambda xp, a: xp.multiply.outer(_Echo(), a, foo=1),
    "outer-three-inputs": lambda xp, a: xp.multiply.outer(a, a, a),
}


@pytest.mark.parametrize("call", sorted(BAD_UFUNC_CALLS))
def test_ufunc_call_arguments_checked_as_numpys(device, call):
    # checked before any override is asked, with NumPy's exception types and words
    error = error_parity(BAD_UFUNC_CALLS[call], numpy.arange(3.0), device=device)
    with pytest.raises(type(error)) as numpys:
        BAD_UFUNC_CALLS[call](numpy, numpy.arange(3.0))
    assert str(error) == str(numpys.value)


@pytest.mark.parametrize("call", [
    lambda xp: xp.sin(_Echo(), None), lambda xp: xp.sin(_Echo(), out=None),
    lambda xp: xp.sin(_Echo(), out=(None,)), lambda xp: xp.modf(_Echo(), None, None),
    lambda xp: xp.modf(_Echo(), out=(None, None)), lambda xp: xp.sin(_Echo(), "o"),
    lambda xp: xp.modf(_Echo(), "o1", "o2"), lambda xp: xp.add(1, _Echo(), where=True),
    lambda xp: xp.add(_Echo(), 1, sig="ii->i"), lambda xp: xp.add(_Echo(), 1, signature="i"),
    lambda xp: xp.add.reduce(_Echo(), 0, None, None, False, numpy._NoValue, True),
    lambda xp: xp.sin(_Echo(), out=...), lambda xp: xp.add.reduce(_Echo(), out=...),
    lambda xp: xp.multiply.outer(_Echo(), 1, sig="ii->i"),
    lambda xp: xp.multiply.outer(_Echo(), 1, out=...),
    lambda xp: xp.multiply.outer(_Echo(), 1, out="o"),
    lambda xp: xp.multiply.at(_Echo(), [0], 1),
])
def test_override_handed_outputs_as_numpys(device, call):
    # no out= where every output is None or it is ...; a tuple of them where any is
    # given; the override's answer returned (at's too)
    assert call(autodev) == call(numpy)


def _where_overriding(xp: Any) -> tuple[type, type]:
    """NumPy's test_ufunc_override_where classes: ``Old`` unwraps its inputs and outputs
    only, ``New`` its ``where=`` too; both view their result as their own class."""
    def unwrap(cls: type, objs: Any) -> Any:
        if any(not isinstance(o, cls) and type(o) is not xp.ndarray for o in objs):
            return NotImplemented
        return [xp.array(o) if isinstance(o, cls) else o for o in objs]

    class Old(xp.ndarray):
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
            inputs = unwrap(type(self), inputs)
            if "out" in kwargs:
                kwargs = {**kwargs, "out": unwrap(type(self), kwargs["out"])}
            if inputs is NotImplemented or kwargs.get("out") is NotImplemented:
                return NotImplemented
            kwargs = {**kwargs, "out": kwargs["out"][0]} if "out" in kwargs else kwargs
            result = super().__array_ufunc__(ufunc, method, *inputs, **kwargs)
            return result if result is NotImplemented else result.view(type(self))

    class New(Old):
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
            if "where" in kwargs:
                where = unwrap(type(self), (kwargs["where"],))
                if where is NotImplemented:
                    return NotImplemented
                kwargs = {**kwargs, "where": where[0]}
            return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)

    return Old, New


def test_where_operand_overrides_as_numpys(device):
    # where= is an operand NumPy asks for __array_ufunc__ (after the inputs and outputs):
    # an override that leaves it wrapped gets NotImplemented from the base class
    def run(xp: Any, put_on: Any) -> Any:
        Old, New = _where_overriding(xp)
        a, out = put_on(numpy.array([1, 2, 3])), put_on(numpy.zeros(3, dtype=int))
        where = put_on(numpy.array([True, False, True]))
        with pytest.raises(TypeError):
            xp.negative(a, where=where.view(Old), out=out)
        got = xp.negative(a, where=where.view(New), out=out)
        both = xp.negative(a.view(New), where=where.view(New), out=out.view(New))
        return [(type(r).__name__, xp.asarray(r).tolist()) for r in (got, both)]

    assert run(autodev, lambda a: put(a, device)) == run(numpy, lambda a: a)


def _wrapping(xp: Any) -> tuple[type, type, list[Any]]:
    """Two subclasses of ``xp.ndarray`` (``V`` with ``__array_priority__ = 5``) whose
    ``__array_wrap__`` records its class, the context it is given (the ufunc's name, the
    number of arguments, the output's index) and ``return_scalar``."""
    calls: list[Any] = []

    class W(xp.ndarray):
        def __array_wrap__(self, obj: Any, context: Any = None,
                           return_scalar: bool = False) -> Any:
            calls.append((type(self).__name__, context and (
                context[0].__name__, len(context[1]), context[2]), return_scalar))
            return super().__array_wrap__(obj, context, return_scalar)

    class V(W):
        __array_priority__ = 5

    return W, V, calls


WRAPPED_CALLS = {
    "call": lambda xp, w, v, z: xp.add(w, 1),
    "call-reflected": lambda xp, w, v, z: xp.add(1, w),
    "priority": lambda xp, w, v, z: xp.add(w, v),
    "0-d": lambda xp, w, v, z: xp.add(z, 1),
    "0-d-out-ellipsis": lambda xp, w, v, z: xp.add(z, 1, out=...),
    "subok-False": lambda xp, w, v, z: xp.add(w, 1, subok=False),
    "out-base": lambda xp, w, v, z: xp.add(w, 1, out=xp.zeros(3)),
    "out-subclass": lambda xp, w, v, z: xp.add(1.0, 1.0, out=z.copy()),
    "out-subclass-subok-False": lambda xp, w, v, z: xp.add(w, 1, out=w.copy(), subok=False),
    "two-outputs": lambda xp, w, v, z: xp.frexp(w),
    "two-outputs-one-given": lambda xp, w, v, z: xp.frexp(w, w.copy(), None),
    "where": lambda xp, w, v, z: xp.add(w, 1, where=False, out=None),
    "unary": lambda xp, w, v, z: xp.exp(w),
    "matmul-0-d": lambda xp, w, v, z: xp.matmul(w, w),
    "numpy-scalar": lambda xp, w, v, z: xp.multiply(numpy.float64(2), z),
    "reduce": lambda xp, w, v, z: xp.add.reduce(w),
    "reduce-keepdims": lambda xp, w, v, z: xp.add.reduce(w, keepdims=True),
    "accumulate": lambda xp, w, v, z: xp.add.accumulate(w),
    "reduceat": lambda xp, w, v, z: xp.add.reduceat(w, [0, 1]),
    "outer": lambda xp, w, v, z: xp.add.outer(w, [1, 2]),
    "outer-second": lambda xp, w, v, z: xp.add.outer([1, 2], w),
    "power-as-square": lambda xp, w, v, z: w ** 2,
    "power-as-sqrt": lambda xp, w, v, z: w ** 0.5,
    "power": lambda xp, w, v, z: w ** 3,
}


@pytest.mark.parametrize("call", sorted(WRAPPED_CALLS))
def test_ufunc_results_wrapped_as_numpys(device, call):
    # NumPy's ufunc asks __array_wrap__ of the input of highest __array_priority__ (or of
    # the output given), with the context (ufunc, arguments, output index), for a call and
    # outer; by the array's class, without one, for reduce, accumulate and reduceat
    def run(xp: Any, put_on: Any) -> Any:
        W, V, calls = _wrapping(xp)
        w = put_on(numpy.arange(3.0)).view(W)
        v = put_on(numpy.arange(3.0)).view(V)
        z = put_on(numpy.array(2.0)).view(W)
        result = WRAPPED_CALLS[call](xp, w, v, z)
        return _kinds_and_shapes(result), calls

    assert run(autodev, lambda a: put(a, device)) == run(numpy, lambda a: a)


def _kinds_and_shapes(result: Any) -> Any:
    if isinstance(result, tuple):
        return [_kinds_and_shapes(r) for r in result]
    return type(result).__name__.replace("ndarray", "base"), numpy.shape(result)


def test_outer_refuses_a_subclass_that_reshapes_itself_as_numpys(device):
    # outer reshapes its first operand; a subclass whose __array_finalize__ changes that
    # shape is refused (TypeError), as a second operand it works
    def run(xp: Any, a: Any) -> Any:
        class Reshaping(xp.ndarray):
            def __array_finalize__(self, obj: Any) -> None:
                if self.ndim == 3:
                    self.shape = self.shape + (1,)

        with pytest.raises(TypeError, match="modified its shape after a reshape"):
            xp.add.outer(a.view(Reshaping), [1, 2])
        return type(xp.add.outer([1, 2], a.view(Reshaping))) is Reshaping

    assert run(autodev, put(numpy.ones((2, 3)), device)) is run(numpy, numpy.ones((2, 3)))


def _array_like(base: Any, takes_copy: bool) -> Any:
    """An array-like whose ``__array__`` returns ``base`` (recording the copy= it got),
    with or without the ``copy`` keyword."""
    class ArrayLike:
        copies: list[Any] = []

        if takes_copy:
            def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
                self.copies.append(copy)
                return base
        else:
            def __array__(self, dtype: Any = None) -> Any:
                self.copies.append("none passed")
                return base
    return ArrayLike()


@pytest.mark.parametrize("takes_copy", [True, False])
@pytest.mark.parametrize("copy", [True, None, False])
@pytest.mark.parametrize("order", ["K", "F"])
def test_array_trusts_an_array_likes_array_as_numpys(device, takes_copy, copy, order):
    # NumPy passes copy= to __array__ (not None) and trusts the result: copy=True gives
    # the very array it returned; an __array__ without the keyword gets a
    # DeprecationWarning, a copy of its result for copy=True, ValueError for copy=False
    def outcome(xp: Any, base: Any) -> tuple[Any, ...]:
        like = _array_like(base, takes_copy)
        with pytest.warns() if copy is not None and not takes_copy else nullcontext() as w:
            try:
                res = xp.array(like, copy=copy, order=order)
            except ValueError:
                res = "ValueError"
        got = "same" if res is base else res if isinstance(res, str) else "copy"
        return got, like.copies, [x.category for x in w or []]

    base = numpy.arange(12.0).reshape(3, 4)
    assert outcome(autodev, put(base, device)) == outcome(numpy, base)


def test_array_method_refuses_a_cast_without_a_copy_as_numpys(device):
    a = numpy.ones((2, 3), dtype=int)
    error_parity(lambda xp, x: x.__array__(float, copy=False), a, device=device)
    x = put(a, device)
    assert x.__array__(float, copy=True).dtype == a.__array__(float, copy=True).dtype


def test_broadcast_iterators_view_their_arguments_as_numpys(device):
    # broadcast(...).iters: one flat iterator an argument, whose base is that argument,
    # stepping over the broadcast shape; nested broadcasts give their arguments
    a, b = numpy.arange(3.0), numpy.arange(6.0).reshape(2, 1, 3)
    x, y = put(a, device), put(b, device)
    for xp, args in ((numpy, (a, b)), (autodev, (x, y))):
        for made in (xp.broadcast(*args), xp.broadcast(xp.broadcast(args[0]), args[1])):
            assert [it.base is arg for it, arg in zip(made.iters, args)] == [True, True]
    got, want = autodev.broadcast(x, y), numpy.broadcast(a, b)
    assert (got.shape, got.ndim, got.nd, got.size, got.numiter) == \
        (want.shape, want.ndim, want.nd, want.size, want.numiter)
    assert [len(it) for it in got.iters] == [len(it) for it in want.iters]
    assert list(got.iters[0]) == list(want.iters[0])
    assert list(got) == list(want) and got.index == want.index
    got.reset()
    want.reset()
    assert next(got) == next(want) and got.index == want.index
    assert str(inspect.signature(autodev.broadcast)) == str(inspect.signature(numpy.broadcast))
    error_parity(lambda xp: xp.broadcast(1, x=1), device=device)
    error_parity(lambda xp: xp.broadcast([[1, 2, 3]], [[4], [5]], [6, 7]), device=device)


def test_ufunc_resolve_dtypes_as_numpys():
    def parameters(method: Any) -> list[tuple[Any, ...]]:  # after self
        return [(p.name, p.kind, p.default)
                for p in list(inspect.signature(method).parameters.values())[1:]]

    assert parameters(autodev.ufunc.resolve_dtypes) == parameters(numpy.ufunc.resolve_dtypes)
    dtypes = (numpy.dtype(int), numpy.dtype(numpy.float32), None)
    assert autodev.add.resolve_dtypes(dtypes) == numpy.add.resolve_dtypes(dtypes)


def test_copyto_writes_into_a_subclass_as_numpys(device):
    # a subclass destination is autodev's array: written where it lives (it recursed
    # through NumPy's copyto and __array_function__)
    a = numpy.zeros(4)
    where = numpy.array([True, False, True, False])
    for xp, dst, mask in ((numpy, a.view(_Sub.of(numpy)), where),
                          (autodev, put(a, device).view(_Sub.of(autodev)), put(where, device))):
        xp.copyto(dst, xp.arange(4.0), where=mask)
        assert dst.tolist() == [0.0, 0.0, 2.0, 0.0] and _kinds(dst) == "sub"


def _own_statistics(xp: Any) -> type:
    """A subclass whose ``mean``, ``std`` and ``var`` say how they were called."""

    def method(name: str) -> Any:
        return lambda self, *args, **kwargs: (name, args, kwargs)

    return type("S", (xp.ndarray,), {n: method(n) for n in ("mean", "std", "var")})


STATISTICS = {
    "median": lambda xp, a: xp.median(a),
    "median-axis": lambda xp, a: xp.median(a.reshape(2, 3), axis=1),
    "median-axes": lambda xp, a: xp.median(a.reshape(1, 2, 3), axis=(0, 2)),
    "mean": lambda xp, a: xp.mean(a),
    "mean-keepdims": lambda xp, a: xp.mean(a, 0, keepdims=True),
    "std-ddof": lambda xp, a: xp.std(a, ddof=1),
    "var-where": lambda xp, a: xp.var(a, where=a > 1),
}


@pytest.mark.parametrize("call", sorted(STATISTICS))
def test_statistics_hand_a_subclass_to_its_own_methods_as_numpys(device, call):
    # np.mean(x) calls x.mean(axis=None, dtype=None, out=None); np.median(x) partitions x
    # and calls its mean on the middle (NumPy's TestMedian::test_subclass)
    run, a = STATISTICS[call], numpy.arange(6)
    got = run(autodev, put(a, device).view(_own_statistics(autodev)))
    expected = run(numpy, a.view(_own_statistics(numpy)))
    assert (got[0], got[1], {k: v for k, v in got[2].items() if k != "where"}) == \
        (expected[0], expected[1], {k: v for k, v in expected[2].items() if k != "where"})
    if "where" in expected[2]:
        assert got[2]["where"].tolist() == expected[2]["where"].tolist()
    plain = lambda xp, a: run(xp, a.view(_Sub.of(xp)))  # noqa: E731
    got, expected = plain(autodev, put(a * 1.5, device)), plain(numpy, a * 1.5)
    assert _kinds(got) == _kinds(expected)
    assert numpy.array_equal(numpy.asarray(got), expected)


VECTORIZED = {
    "elementwise": lambda xp, a, b: xp.vectorize(lambda x, y: x * y)(a, b),
    "two-outputs": lambda xp, a, b: xp.vectorize(lambda x, y: (x + y, x - y))(a, b),
    "otypes": lambda xp, a, b: xp.vectorize(lambda x: x > 2, otypes=[bool])(a),
    "signature": lambda xp, a, b: xp.vectorize(xp.matmul, signature="(m,m),(m)->(m)")(
        a.reshape(2, 3)[:, :2].repeat(2, 0).reshape(2, 2, 2), b.reshape(2, 3)[:, :2]),
    "0-d": lambda xp, a, b: xp.vectorize(lambda x, y: x + y)(a[2], b[1]),
}


@pytest.mark.parametrize("subclass", [False, True], ids=["base", "subclass"])
@pytest.mark.parametrize("call", sorted(VECTORIZED))
def test_vectorize_keeps_the_arguments_class_as_numpys(device, call, subclass):
    # NumPy's vectorize runs asanyarray, a frompyfunc ufunc and empty_like on its
    # arguments: a subclass gives the subclass (TestVectorize::test_subclasses), an
    # autodev array an autodev array
    run, a, b = VECTORIZED[call], numpy.arange(6.0), numpy.arange(6.0)[::-1].copy()
    cast = (lambda xp, x: x.view(_Sub.of(xp))) if subclass else (lambda xp, x: x)
    expected = run(numpy, cast(numpy, a), cast(numpy, b))
    got = run(autodev, cast(autodev, put(a, device)), cast(autodev, put(b, device)))
    kinds = _kinds(expected)
    assert _kinds(got) == (kinds if subclass else
                           ["ndarray" for _ in kinds] if isinstance(kinds, list) else "ndarray")
    for g, e in zip(got, expected) if isinstance(expected, tuple) else [(got, expected)]:
        assert g.dtype == e.dtype and numpy.array_equal(numpy.asarray(g), e)


def test_vectorize_object_output_is_the_object_as_numpys(device):
    # otypes=[object]: a 0-d object array holding what the function returned
    y = [1, 2, 3]
    for xp in (numpy, autodev):
        f = xp.vectorize(lambda x: y, otypes=[object])
        assert f(None).item() is y and f([None]).item() is y
        assert f(put(numpy.zeros(1), device) if xp is autodev else numpy.zeros(1)).item() is y


def test_numpy_ma_reads_an_autodev_array_as_numpys(device):
    # numpy.ma.getdata reads an operand's private _data where it has one (its own
    # MaskedArray's): autodev's array has none, so numpy.ma converts it as any array-like,
    # wherever its data lives (TestUnique::test_unique_masked)
    x = put(numpy.array([3, 1, 3, 2]), device)
    data = numpy.ma.getdata(x)
    assert type(data) is numpy.ndarray and numpy.array_equal(data, [3, 1, 3, 2])
    m = numpy.ma.masked_array(x, mask=[False, True, False, False])
    expected = numpy.ma.masked_array([3, 1, 3, 2], mask=[False, True, False, False])
    assert numpy.ma.allequal(numpy.unique(m), numpy.unique(expected))
    assert type(autodev.unique(m)) is numpy.ma.MaskedArray


def test_a_frompyfunc_ufunc_is_not_kept_alive(device):
    # NumPy keeps nothing of a frompyfunc ufunc once the caller drops it (TestLeaks): autodev,
    # which wraps it at the call, must not either, nor the Python function it holds
    import gc
    import weakref

    def double(x: Any, y: Any = 0) -> Any:
        return 2 * x + y

    gone = weakref.ref(double)
    f = numpy.frompyfunc(double, 2, 1)
    a = put(numpy.arange(3.0), device)
    assert numpy.array_equal(numpy.asarray(f(a, 1), dtype=float), [1.0, 3.0, 5.0])
    assert numpy.array_equal(numpy.asarray(f.reduce(a), dtype=float), 4.0)
    del f, double
    gc.collect()
    assert gone() is None


def _with_data(xp: Any) -> type:
    """A subclass with a class attribute ``data`` (NumPy's TestApplyAlongAxis)."""
    return type("A", (xp.ndarray,), {"data": 1})


ALONG_AXIS = {
    "attribute": lambda xp, a: xp.apply_along_axis(lambda r: r.data, 0, a.view(_with_data(xp))),
    "insertion-base": lambda xp, a: xp.apply_along_axis(
        lambda r: (r[::-1] * r[1:, None]).view(xp.ndarray), 0, a),
    "insertion-subclass": lambda xp, a: xp.apply_along_axis(
        lambda r: (r[::-1] * r[1:, None]).view(_Sub.of(xp)), 1, a),
    "subclass-input": lambda xp, a: xp.apply_along_axis(lambda r: r.sum(), 1,
                                                        a.view(_Sub.of(xp))),
    "masked": lambda xp, a: xp.apply_along_axis(
        lambda r: numpy.ma.masked_where(numpy.asarray(r) % 5 == 0, numpy.asarray(r)), 0, a),
    "0-d": lambda xp, a: xp.apply_along_axis(lambda r: r.sum(), 0, a[0]),
}


@pytest.mark.parametrize("call", sorted(ALONG_AXIS))
def test_apply_along_axis_gives_func1d_arrays_of_the_argument_as_numpys(device, call):
    # func1d gets views of the argument (a subclass's attributes seen), its results'
    # class is kept and the argument's __array_wrap__ wraps the whole
    run, a = ALONG_AXIS[call], numpy.arange(18).reshape(6, 3)
    expected, got = run(numpy, a), run(autodev, put(a, device))
    assert _kinds(got) == _kinds(expected)
    assert got.shape == expected.shape and numpy.array_equal(numpy.asarray(got), expected)
    if isinstance(expected, numpy.ma.MaskedArray):
        assert type(got) is numpy.ma.MaskedArray and got.mask.tolist() == expected.mask.tolist()


def test_a_ufunc_that_writes_its_operand_writes_the_array(device):
    """A C extension's ufunc whose operand is ``readwrite`` (NumPy's operand flags, which
    Python cannot read) writes into the array's own memory on every device: a device
    array (with the views sharing its memory) moves to the host for it."""
    from numpy._core._operand_flag_tests import inplace_add

    def run(xp: Any, a: Any, b: Any) -> Any:
        inplace_add(a[:-1, :-1], b)
        zero_d = xp.array(0)
        inplace_add(zero_d, 3)
        return a.tolist(), zero_d.tolist()

    a, b = numpy.arange(16).reshape(4, 4), numpy.arange(9).reshape(3, 3)
    assert run(autodev, put(a, device), put(b, device)) == run(numpy, a.copy(), b)


def test_a_ufunc_that_writes_its_operand_makes_its_mirrors_stale():
    from numpy._core._operand_flag_tests import inplace_add

    from autodev.testing import simulated_gpu
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.array(numpy.arange(4), device="cpu").to_device("auto")
        d = autodev.asarray(numpy.ones(4, int), device=sim.device).to_device("auto")
        _ = x + d  # leaves a mirror of x on the device
        inplace_add(x, numpy.full(4, 10))
        assert (x + d).tolist() == [11, 12, 13, 14]


_NO_GPU_DTYPE_CALLS = {
    "zeros_like(dtype=str)": lambda xp, a: xp.zeros_like(a, dtype=str),
    "ones_like(dtype='S3')": lambda xp, a: xp.ones_like(a, dtype="S3"),
    "full_like(dtype=object)": lambda xp, a: xp.full_like(a, 7, dtype=object),
    "concatenate(dtype='U0')": lambda xp, a: xp.concatenate((a, a), dtype="U0"),
    "nansum(dtype=object)": lambda xp, a: xp.nansum(a, dtype=object),
    "cumsum(dtype=object)": lambda xp, a: xp.cumsum(a, dtype=object),
    "repeat(a timedelta)": lambda xp, a: xp.repeat(datetime.timedelta(days=-1), 3),
    "where(True, None, None)": lambda xp, a: xp.where(True, None, None),
}


@pytest.mark.parametrize("name", _NO_GPU_DTYPE_CALLS)
def test_results_of_a_dtype_no_gpu_holds_are_the_hosts(device, name):
    # (NumPy's suite asks these with every call sent to the GPU: CuPy raises 'Unsupported
    # dtype' for strings, objects and datetimes, so they run where NumPy does)
    call = _NO_GPU_DTYPE_CALLS[name]
    a = numpy.arange(6).reshape(2, 3)
    got, want = call(autodev, put(a, device)), call(numpy, a)
    if not isinstance(want, numpy.ndarray):  # (an object scalar: the Python value)
        assert type(got) is type(want) and got == want
        return
    got_host = numpy.asarray(got)
    assert (got_host.dtype, got_host.shape, got_host.tolist()) == \
        (want.dtype, want.shape, want.tolist())
