"""The everyday small operations (issue 20, item 1) against NumPy on every device: indexing
with keys of ints, slices, ``...`` and ``None`` (alone or in a tuple) and writes of plain
values, the host path they take (views see the writes, versions move so mirrors go
stale, pending values are evaluated first), ``copy``, ``view``, ``item`` and
``numpy.asarray(a.flat)``."""

from __future__ import annotations

from typing import Any, Iterator

import numpy
import pytest

import autodev
from autodev import _fusion as F
from autodev._indexing import is_basic_key
from autodev._residency.storage import mirror_on
from autodev.testing import simulated_gpu
from diffcheck import assert_same, differential, error_parity, put, sample
from fusecheck import defer_small_host_calls

#: Keys whose items need no conversion (autodev._indexing._BASIC_KEYS).
BASIC_KEYS = [(1, 2), (-1, -3), (), Ellipsis, (Ellipsis,), (Ellipsis, 0), (1, Ellipsis),
              None, (None, 1), (slice(1, 3), 2), (1, slice(None, None, -1)),
              (slice(None), None, 0), 2, slice(-2, None)]


@pytest.mark.parametrize("key", BASIC_KEYS, ids=repr)
def test_basic_keys_read_as_numpy(device, key):
    assert is_basic_key(key)  # (the host paths take these keys to NumPy untouched)
    differential(lambda xp, b: b[key], sample((3, 4)), device=device)


@pytest.mark.parametrize("key", [(), Ellipsis, None, (Ellipsis, None)], ids=repr)
@pytest.mark.parametrize("dtype", ["float64", "int32", "bool", "complex64"])
def test_zero_d_keys_read_as_numpy(device, key, dtype):
    differential(lambda xp, z: z[key], numpy.asarray(sample((1,), dtype)[0]), device=device)


@pytest.mark.parametrize("key", [(1, 2), (), Ellipsis, (Ellipsis, 1), (0, slice(1, 3))],
                         ids=repr)
@pytest.mark.parametrize("value", [3.0, 7, True, numpy.float32(2.5), numpy.int64(4)],
                         ids=repr)
def test_basic_keys_write_as_numpy(device, key, value):
    def write(xp, b):
        b[key] = value
        return b

    differential(write, sample((3, 4)), device=device)


def test_string_elements(device):
    """(No GPU holds strings: the arrays live on the host wherever calls go.)"""
    def write(xp, s):
        s[1] = "x"
        s[-1] = "yz"
        s[0:1] = b"w"
        return s, s[1], s[(2,)]

    def round_trip(xp, arr):
        arr[()] = "xy"
        first = arr[()]
        arr[...] = "long string cut to the dtype"
        return first, arr[()], arr.item(), arr

    for func, host in ((write, numpy.array(["a", "b", "c"])), (round_trip,
                                                               numpy.asarray("abc"))):
        assert_same(func(autodev, autodev.array(host)), func(numpy, host.copy()))


def test_keys_with_arrays_are_not_basic():
    x = autodev.arange(3)
    for key in [(x, 1), [0, 1], x, (1, [0]), ((0, 1),), 1.0, (numpy.int64(1), 2)]:
        assert not is_basic_key(key)


@pytest.mark.parametrize("case", ["out of bounds", "too many", "float item", "bad value",
                                  "bad write", "out of bounds write"])
def test_errors_as_numpy(device, case):
    funcs = {
        "out of bounds": lambda xp, b: b[5, 0],
        "too many": lambda xp, b: b[1, 2, 3],
        "float item": lambda xp, b: b[1.0, 2],
        "bad value": lambda xp, b: b.__setitem__((1, 2), "x"),
        "bad write": lambda xp, b: b.__setitem__((), [1.0, 2.0]),
        "out of bounds write": lambda xp, b: b.__setitem__((0, -9), 1.0),
    }
    error_parity(funcs[case], sample((3, 4)), device=device)


def test_read_only_writes_refused(device):
    def write(xp, b):
        b.flags.writeable = False
        b[1, 2] = 3.0

    error_parity(write, sample((3, 4)), device=device)
    error_parity(lambda xp, b: (b.__setitem__(((), 1)), b)[1], sample((3, 4)), device=device)


@pytest.mark.parametrize("key", [(1, 2), (), Ellipsis, (Ellipsis, 2), 1], ids=repr)
def test_writes_through_views_are_seen_and_counted(device, key):
    def write(xp, b):
        row = b[1]  # a view
        whole = b[()]  # a view of all of b
        b[key] = -1.0
        whole[0, 0] = 5.0
        row[...] = row * 2
        return b, row, whole

    differential(write, sample((3, 4)), device=device)
    x = put(sample((3, 4)), device)
    view = x[...]
    storage = x._storage
    version = storage.version
    x[key] = 2.0
    view[0, 1] = 3.0
    assert storage.version >= version + 2  # both writes moved the storage's version
    assert float(x[0, 1]) == 3.0


@pytest.fixture
def mirrored() -> Iterator[Any]:
    """A host array with a mirror on the simulated GPU (a GPU usable: the host path)."""
    with simulated_gpu():
        def make() -> Any:
            x = autodev.array(sample((3, 4)))
            with autodev.policy("gpu"):
                x * 1  # leaves a device mirror
            assert x._mirror is not None
            return x
        yield make


@pytest.mark.parametrize("key", [(1, 2), (), Ellipsis, (Ellipsis, 0), (0, slice(1, 3))],
                         ids=repr)
def test_host_writes_make_mirrors_stale(mirrored, key):
    x = mirrored()
    device = x._mirror[0]
    expected = x.get()
    expected[key] = 9.0
    x[key] = 9.0
    assert mirror_on(x, device) is None
    with autodev.policy("gpu"):
        assert_same(x * 1, expected * 1)
    assert_same(x, expected)


def test_host_writes_through_a_view_make_mirrors_stale(mirrored):
    x = mirrored()
    device = x._mirror[0]
    view = x[()]
    view[1, 2] = 9.0
    assert mirror_on(x, device) is None
    with autodev.policy("gpu"):
        assert float((x * 1)[1, 2]) == 9.0


@pytest.fixture
def fuse_small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from defer_small_host_calls(monkeypatch)


@pytest.mark.parametrize("op", ["b[1, 2]", "b[()]", "b[...]", "b[1, 2] = 5.0", "b[()] = 5.0",
                                "copy", "view", "item"])
def test_pending_arrays_are_evaluated_first(fuse_small, op):
    a = sample((3, 4))
    x = autodev.array(a) * 2.0
    assert F.NODES  # x is pending
    expected = a * 2.0
    run = {
        "b[1, 2]": lambda b: b[1, 2], "b[()]": lambda b: b[()], "b[...]": lambda b: b[...],
        "b[1, 2] = 5.0": lambda b: b.__setitem__((1, 2), 5.0),
        "b[()] = 5.0": lambda b: b.__setitem__((), 5.0), "copy": lambda b: b.copy(),
        "view": lambda b: b.view(numpy.int64), "item": lambda b: b.item(5),
    }[op]
    assert_same(run(x), run(expected))
    assert_same(x, expected)


# ------------------------------------------------------------------ copy, view, item

@pytest.mark.parametrize("order", ["C", "F", "A", "K"])
def test_copy_is_new_memory(device, order):
    def run(xp, a):
        c = a.T.copy(order)
        c[0, 0] = -1.0
        return a, c, c.flags.c_contiguous, c.flags.f_contiguous, c.flags.writeable

    differential(run, sample((3, 4)), device=device)

    def read_only(xp, a):
        a.flags.writeable = False
        c = a.copy()
        c[0, 0] = 1.0
        return c, c.flags.writeable

    differential(read_only, sample((3, 4)), device=device)


@pytest.mark.parametrize("args", [(numpy.uint8,), (numpy.int64,), ("f4",), (),
                                  (numpy.dtype("c16"),)], ids=repr)
def test_view_shares_memory(device, args):
    def run(xp, a):
        v = a.view(*args)
        v[...] = v[::-1].copy() if v.ndim else v
        return a, v

    differential(run, sample((8,)), device=device)


def test_view_of_read_only_and_subclass(device):
    def run(xp, a):
        a.flags.writeable = False
        return a.view(numpy.uint8).flags.writeable, a.view().flags.writeable

    differential(run, sample((4,)), device=device, resident=False)
    error_parity(lambda xp, a: a.view(numpy.int8, type=int), sample((4,)), device=device)
    x = put(sample((4,)), device)
    assert type(x.view(autodev.ndarray)) is autodev.ndarray
    assert type(x.view(type=autodev.ndarray)) is autodev.ndarray


@pytest.mark.parametrize("args", [(), (3,), (1, 2), ((0, 1),)], ids=repr)
def test_item(device, args):
    a = sample((2, 3)) if args else numpy.asarray(1.5)
    differential(lambda xp, a: a.item(*args), a, device=device, resident=False)
    error_parity(lambda xp, a: a.item(7), sample((2, 3)), device=device)


# ------------------------------------------------------------------ numpy.asarray(a.flat)

@pytest.mark.parametrize("make", ["asarray", "array", "array copy=False", "asarray dtype",
                                  "array copy=True", "__array__", "__array__ dtype"])
@pytest.mark.parametrize("layout", ["contiguous", "strided", "0-d"])
def test_flat_as_an_array(device, make, layout):
    convert = {
        "asarray": lambda f: numpy.asarray(f),
        "array": lambda f: numpy.array(f),
        "array copy=False": lambda f: numpy.array(f, copy=False),
        "asarray dtype": lambda f: numpy.asarray(f, dtype=numpy.float32),
        "array copy=True": lambda f: numpy.array(f, copy=True),
        "__array__": lambda f: f.__array__(),
        "__array__ dtype": lambda f: f.__array__(numpy.int32),
    }[make]
    base = {"contiguous": sample((3, 4)), "strided": sample((3, 8)),
            "0-d": numpy.asarray(2.5)}[layout]

    def run(xp, a):
        a = a[:, ::2] if layout == "strided" else a
        return convert(a.flat)

    try:
        expected = run(numpy, base.copy())
    except Exception:
        error_parity(lambda xp, a: run(xp, a), base, device=device)
        return
    got = run(autodev, put(base, device))
    assert type(got) is numpy.ndarray  # NumPy's own array, as NumPy's flatiter gives
    assert (got.dtype, got.shape, got.flags.writeable) == \
        (expected.dtype, expected.shape, expected.flags.writeable)
    numpy.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("make", [numpy.asarray, numpy.array,
                                  lambda f: numpy.array(f, copy=True)],
                         ids=["asarray", "array", "array copy=True"])
def test_flat_array_shares_as_numpy(device, make):
    """A contiguous array's flat array is its memory in NumPy, whatever ``copy=`` says (its
    flatiter ignores the argument): a write to it is the array's write (a device array
    moves to the host, as for ``numpy.asarray(a)``), and a mirror goes stale."""
    def run(xp, x):
        flat = make(x.flat)
        flat[5] = -7.0
        return x

    x = differential(run, sample((3, 4)), device=device, resident=False)
    with autodev.policy("cpu"):
        assert float((x * 1)[1, 1]) == -7.0
