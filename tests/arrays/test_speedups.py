"""The compiled hot path (autodev/_speedups.c) does exactly what the Python it stands in
front of does: same result (type, dtype, shape, values, device, storage, pin), same
error (type and message), same warnings, same count of fast calls, for every operand
kind its fast paths take and many they must pass on. Where the extension is not built
(or AUTODEV_PURE_PYTHON=1) these comparisons have nothing to compare and are skipped;
CI builds it, and a test fails there if it is missing.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import subprocess
import sys
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import threadpoolctl

import autodev
from autodev import _threads
import autodev.array_api
from autodev._backends import STATE
from autodev._config import ENV, SPEEDUPS
from autodev._cost.cache import host_floor_work
from autodev._namespace import resolve_name
from autodev._trace import fast_calls
from autodev.testing import simulated_gpu

compiled_only = pytest.mark.skipif(SPEEDUPS is None, reason="autodev._speedups is not "
                                   "built here or AUTODEV_PURE_PYTHON=1")

ARRAY = autodev.ndarray


@contextlib.contextmanager
def _no_fusion() -> Any:
    """No call deferred (autodev._fusion off) inside."""
    from autodev import _fusion

    _fusion.set_floor(_fusion.NEVER)
    try:
        yield
    finally:
        _fusion.set_floor(None)


def _mode(sim: bool) -> Any:
    """No GPU usable (the compiled paths act), or the simulated GPU (they pass every call on)."""
    return simulated_gpu() if sim else contextlib.nullcontext()


def test_ci_builds_the_extension() -> None:
    """The README's install (pip install -e .) compiles the hot path where a compiler is."""
    if not os.environ.get("CI") or ENV.pure_python:
        pytest.skip("only CI's install is known to have a C compiler")
    assert SPEEDUPS is not None, autodev.info()["compiled_hot_path"]


def test_pure_python_switch() -> None:
    code = ("import autodev, types; print(type(autodev.ndarray.__dict__['__add__']).__name__,"
            " autodev.info()['compiled_hot_path'])")
    env = {**os.environ, "AUTODEV_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split(maxsplit=1)
    assert out[0] == "function"
    assert "AUTODEV_PURE_PYTHON" in out[1]


def _describe(x: Any) -> Any:
    """Everything observable about a result."""
    if type(x) is tuple:
        return ("tuple", tuple(_describe(v) for v in x))
    if isinstance(x, ARRAY):
        data = x._native
        return (type(x).__name__, data.dtype.str, data.shape, data.tobytes(), str(x._device),
                x._pin, x._scalar, x._face, x._mirror and str(x._mirror[0]), x._storage is None)
    if isinstance(x, np.ndarray):
        return ("numpy", x.dtype.str, x.shape, x.tobytes())
    return (type(x).__name__, repr(x))


def _outcome(func: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    before = fast_calls()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result: Any = ("ok", _describe(func(*args)))
        except Exception as error:  # noqa: BLE001 - the error itself is what is compared
            result = ("raised", type(error).__name__, str(error))
    return result, [w.category.__name__ for w in caught], fast_calls() - before


def _same(fast: Any, make_args: Callable[[], tuple[Any, ...]]) -> Any:
    """``fast`` and its fallback on fresh arguments give the same outcome."""
    assert type(fast).__name__ in ("FastCall", "FastFunction"), fast
    args = make_args()
    got = _outcome(fast, args)
    state = [_describe(a) for a in args]
    args = make_args()
    want = _outcome(fast.fallback, args)
    assert got == want
    assert state == [_describe(a) for a in args]  # the operands end alike (setitem)
    return got


def _vec(dtype: str = "float64", n: int = 6) -> Any:
    return autodev.array(np.arange(n).astype(dtype))  # a copy: no storage yet


OPERANDS: list[Callable[[], Any]] = [
    lambda: 2, lambda: 2.5, lambda: True, lambda: 1 + 2j, lambda: 300, lambda: -1,
    lambda: 2 ** 70, lambda: 0.5, lambda: np.float64(0.5), lambda: np.float32(1.5),
    lambda: np.int64(3), lambda: np.bool_(True),
    lambda: np.arange(6.0), lambda: np.arange(3), lambda: _vec(), lambda: _vec("int8"),
    lambda: _vec("bool"), lambda: _vec(n=4), lambda: [1, 2, 3, 4, 5, 6], lambda: None,
    lambda: "x", lambda: autodev.asarray(np.float64(2.0)),
    lambda: autodev.array_api.asarray(np.arange(6.0)),  # the array-API face's
]
DTYPES = ["float64", "float32", "int8", "uint8", "bool", "complex128"]
OPERATORS = ["__add__", "__radd__", "__sub__", "__rsub__", "__truediv__", "__pow__", "__rpow__",
             "__floordiv__", "__lt__", "__eq__", "__ne__", "__and__", "__lshift__"]


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", OPERATORS)
def test_operators(name: str, sim: bool) -> None:
    fast = ARRAY.__dict__[name]
    with _mode(sim):
        took = 0
        for dtype in DTYPES:
            for operand in OPERANDS:
                took += _same(fast, lambda: (_vec(dtype), operand()))[2]
    assert took > 0  # fast calls counted alike (by the compiled path with no GPU usable)


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["__len__", "__bool__", "__float__", "__int__", "__complex__",
                                  "tolist", "tobytes"])
def test_conversions_and_reads(name: str, sim: bool) -> None:
    """len(a), bool(a), float(a), int(a), complex(a), a.tolist(), a.tobytes(order): the
    compiled method kind and the Python method give the same outcome (NumPy's errors and
    warnings for a 0-d, a one-element, a larger, a complex and a string array, the
    array-API face's, an array on the device)."""
    fast = ARRAY.__dict__[name]
    arrays: list[Callable[[], Any]] = [
        lambda: autodev.asarray(np.float64(2.5)), lambda: autodev.asarray(np.array([3])),
        lambda: _vec(), lambda: _vec("complex128", 1), lambda: autodev.asarray(np.array("7")),
        lambda: autodev.array_api.asarray(np.float64(2.5)),
        lambda: autodev.asarray(np.arange(3.0), device="sim:0") if sim else _vec("int8")]
    with _mode(sim):
        for make in arrays:
            _same(fast, lambda: (make(),))
            if name == "tobytes":
                _same(fast, lambda: (make(), "F"))


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["__neg__", "__pos__", "__abs__", "__invert__"])
def test_unary_operators(name: str, sim: bool) -> None:
    """-a, +a, abs(a), ~a: the compiled ufunc kind and the Python operator give the same
    outcome (NumPy's error for a dtype the ufunc refuses, a 0-d array's scalar, the
    array-API face's 0-d array)."""
    fast = ARRAY.__dict__[name]
    arrays: list[Callable[[], Any]] = [
        lambda: autodev.asarray(np.float64(-2.0)),
        lambda: autodev.array_api.asarray(np.float64(-2.0)),
        lambda: autodev.array_api.asarray(np.arange(-3.0, 3.0))]
    arrays += [functools.partial(_vec, dtype) for dtype in DTYPES]
    with _mode(sim):
        _host_bounds_known()
        took = sum(_same(fast, lambda: (make(),))[2] for make in arrays)
    assert took > 0


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["__matmul__", "__rmatmul__"])
def test_matmul_and_zero_d(name: str, sim: bool) -> None:
    fast = ARRAY.__dict__[name]
    m = lambda: autodev.array(np.arange(6.0).reshape(2, 3))  # noqa: E731
    with _mode(sim):
        for make in [lambda: (m(), autodev.ones((3, 2))), lambda: (m(), autodev.ones((2, 2))),
                     lambda: (m(), autodev.ones(3)), lambda: (autodev.ones(2), m()),
                     lambda: (_vec(), _vec()),  # 0-d: an autodev scalar
                     lambda: (autodev.ones((2, 0)), autodev.ones((0, 3))),
                     lambda: (autodev.ones((3, 0)), autodev.ones((2, 3))),
                     lambda: (autodev.ones((4, 2, 3)), autodev.ones((3, 5))),
                     lambda: (autodev.ones((300, 300)), autodev.ones((300, 300))),  # decided
                     lambda: (m(), 2.0), lambda: (m(), np.ones((3, 2))),
                     lambda: (autodev.asarray(np.float64(1.0)), 2.0),
                     # the array-API face's arrays: their results are the face's
                     lambda: (autodev.array_api.asarray(np.float64(1.0)), 2.0),
                     lambda: (autodev.array_api.asarray(np.arange(6.0)), 2.0)]:
            _same(fast, make)
    _same(ARRAY.__dict__["__add__"], lambda: (autodev.asarray(np.float64(1.0)), 2.0))


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
def test_getitem(sim: bool) -> None:
    fast = ARRAY.__dict__["__getitem__"]
    arrays = [lambda: _vec(), lambda: autodev.asarray(np.arange(12).reshape(3, 4)),
              lambda: autodev.asarray(np.float32(2.0)), lambda: _vec()[1:5],
              lambda: autodev.asarray(np.arange(6.0), device="cpu"),
              lambda: autodev.array_api.asarray(np.arange(6.0)),  # 0-d results: arrays
              lambda: autodev.array_api.asarray(np.arange(6.0), device="cpu"),
              lambda: autodev.asarray(np.array(["ab", "c", "d"]))]
    keys = [0, -1, 2, 9, -10, slice(2, 7), slice(None, None, -1), slice(None), slice(5, 1),
            True, np.int64(3), (1,), (0, 1), [1, 2], Ellipsis, None, "a", 1.0, (),
            (Ellipsis, 0), (None, 1), (slice(1, 3), -1), (0, Ellipsis, None), (1, 2, 3),
            (True,), (0, [1]), (np.int64(1),), (Ellipsis, Ellipsis)]
    with _mode(sim):
        for make in arrays:
            for key in keys:
                _same(fast, lambda: (make(), key))


@compiled_only
def test_views_share_storage_as_python_makes_them() -> None:
    fast = ARRAY.__dict__["__getitem__"]
    for getter in (fast, fast.fallback):
        a = _vec()
        assert a._storage is None
        v, w = getter(a, slice(1, 4)), getter(a, 2)
        assert v._storage is a._storage is not None and type(w) is np.float64
        assert getter(v, slice(0, 2))._storage is a._storage


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["copy", "view", "item"])
def test_copy_view_and_item(name: str, sim: bool) -> None:
    """``a.copy(...)``, ``a.view(...)``, ``a.item(...)``: the compiled path (NumPy's
    method on the host data, a view sharing the array's storage) and the Python method
    agree on every argument, the ones it passes on included (keywords, array classes, a
    pinned array, the array-API face's)."""
    fast = ARRAY.__dict__[name]
    arrays = [lambda: _vec(), lambda: _vec("int8"), lambda: _vec()[1:5],
              lambda: autodev.asarray(np.arange(12.0).reshape(3, 4)).T,
              lambda: autodev.asarray(np.float32(2.0)),
              lambda: autodev.asarray(np.arange(6.0), device="cpu"),
              lambda: autodev.array_api.asarray(np.arange(6.0)),
              lambda: autodev.asarray(np.array(["ab", "c", "d"]))]
    arguments: list[tuple[Any, ...]] = [(), ("C",), ("F",), ("K",), ("X",), (None,), (3,),
                                        (-1,), (100,), ((0,),), (1, 1)]
    if name == "view":
        arguments += [(np.uint8,), (np.int16,), ("f4",), (np.dtype("i8"),), (np.ndarray,),
                      (ARRAY,), (np.matrix,), (np.uint8, ARRAY), ([1],)]
    with _mode(sim):
        for make in arrays:
            for extra in arguments:
                _same(fast, lambda: (make(), *extra))
        keyword = {"copy": {"order": "F"}, "view": {"dtype": np.uint8}, "item": {"i": 0}}[name]
        for make in arrays[:2]:  # keywords: the Python method's
            assert _outcome(functools.partial(fast, **keyword), (make(),)) == \
                _outcome(functools.partial(fast.fallback, **keyword), (make(),))
    if name != "item":
        a = _vec()
        v = fast(a, *(() if name == "copy" else (np.uint8,)))
        assert (v._storage is a._storage is not None) == (name == "view")


UNARY = ["count_nonzero", "mean", "std", "median", "cumsum", "argmax", "trace", "ptp",
         "percentile", "average", "nanmean"]


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", UNARY)
def test_reductions_of_one_array(name: str, sim: bool) -> None:
    """``count_nonzero(a)``, ``mean(a)``, ...: the compiled path and the Python function
    agree on every array, the ones they pass on included (a list, two arguments, a
    keyword, the array-API face's, a pinned array, strings, 0-d and empty arrays)."""
    fast = resolve_name(np, "", name)  # (np.trace: autodev.trace is also the trace block)
    while type(fast).__name__ == "function":  # (mean: NumPy's own code for subclasses)
        fast = fast.__wrapped__
    arrays = [lambda: _vec(), lambda: _vec("int8"), lambda: _vec("bool"), lambda: _vec()[1:5],
              lambda: autodev.asarray(np.arange(12.0).reshape(3, 4)),
              lambda: autodev.asarray(np.arange(24.0).reshape(2, 3, 4)),
              lambda: autodev.asarray(np.float32(2.0)), lambda: autodev.zeros(0),
              lambda: autodev.asarray(np.arange(6.0), device="cpu"),
              lambda: autodev.array_api.asarray(np.arange(6.0)),
              lambda: autodev.asarray(np.array(["ab", "", "d"])), lambda: [1.0, 0.0, 2.0],
              lambda: np.arange(4.0)]
    with _mode(sim):
        took = 0
        for make in arrays:
            took += _same(fast, lambda: (make(),))[2]
            _same(fast, lambda: (make(), 0))
        assert _outcome(functools.partial(fast, axis=0), (_vec(),)) == \
            _outcome(functools.partial(fast.fallback, axis=0), (_vec(),))
    if not sim:
        assert took > 0


def _nested(depth: int) -> Any:
    """A list holding one number ``depth`` lists deep."""
    value: Any = 1.0
    for _ in range(depth):
        value = [value]
    return value


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
def test_array_of_numbers_in_lists(sim: bool) -> None:
    """``np.array(seq, ...)``: the compiled path (numbers in lists and tuples, NumPy's
    own call) and the Python function agree on every sequence and keyword, the ones they
    pass on included (arrays and strings inside, ragged lists, nesting past the depth
    both look, a list holding itself, copy=, device=, like=)."""
    from autodev._creation import SEQUENCE_DEPTH

    fast = autodev.array
    assert type(fast).__name__ == "FastFunction"
    looped: list[Any] = [1.0]
    looped.append(looped)
    sequences = [[True, False, True], [1, 2, 3], (1.5, 2), [], [[1, 2], [3, 4]], [[1], [2, 3]],
                 [1, 2 ** 70], [np.float32(1), 2.0], [np.int64(3), True, 1j],
                 [np.float16(1.0)], [1, "a"], [None], [np.arange(2.0), np.arange(2.0)],
                 [_vec(n=2), _vec(n=2)], [autodev.asarray(np.float64(1.0))], ([1, 2], (3, 4)),
                 _nested(SEQUENCE_DEPTH - 1), _nested(SEQUENCE_DEPTH),
                 _nested(SEQUENCE_DEPTH + 1), looped, "abc", 3.0, np.arange(3.0)]
    keywords: list[dict[str, Any]] = [
        {}, {"dtype": bool}, {"dtype": "f4"}, {"dtype": "U2"}, {"order": "F"}, {"ndmin": 3},
        {"dtype": float, "ndmin": 2, "order": "C"}, {"copy": True}, {"copy": False},
        {"copy": None}, {"device": "cpu"}, {"subok": True}, {"like": np.arange(1.0)},
        {"order": "Q"}, {"ndmin": 70}]
    with _mode(sim):
        for seq in sequences:
            _same(fast, lambda: (seq,))
            _same(fast, lambda: (seq, "i8"))
            for keys in keywords:
                assert _outcome(functools.partial(fast, **keys), (seq,)) == \
                    _outcome(functools.partial(fast.fallback, **keys), (seq,)), (seq, keys)


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
def test_setitem(sim: bool) -> None:
    fast = ARRAY.__dict__["__setitem__"]
    values = [1.5, 2, True, 1 + 1j, np.float32(7), np.arange(5.0), np.arange(2.0), 2 ** 70,
              None, "x", b"y", "long", [1.0, 2.0, 3.0, 4.0, 5.0], _vec(n=5)]
    keys = [0, -1, 9, slice(2, 7), slice(None, None, 2), True, (1,), [0, 1], (), Ellipsis,
            (Ellipsis, 1), (None, 0), (slice(1, 3),), (0, [1]), (1, 2)]
    with _mode(sim):
        for dtype in ("float64", "int8", "bool", "U3", "S2"):
            for key in keys:
                for value in values:
                    _same(fast, lambda: (_vec(dtype), key, value, ))


@compiled_only
def test_setitem_moves_the_version_of_shared_storage() -> None:
    fast = ARRAY.__dict__["__setitem__"]
    for setter in (fast, fast.fallback):
        a = _vec()
        view = a[1:4]
        version = a._storage.version
        setter(view, 0, 10.0)
        assert a._storage.version == version + 1 and a[1] == 10.0


UFUNC_ARGS: list[Callable[[], tuple[Any, ...]]] = [
    lambda: (_vec(),), lambda: (_vec("int8"),), lambda: (_vec("bool"),),
    lambda: (autodev.asarray(np.float64(0.5)),), lambda: (_vec(), 2.0), lambda: (_vec(), _vec()),
    lambda: (_vec(), np.arange(6.0)), lambda: (_vec(), _vec(n=3)), lambda: (np.arange(3.0),),
    lambda: (_vec(), 2, None), lambda: (), lambda: ([1.0, 2.0],), lambda: (_vec(), "x"),
]


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["sin", "add", "divmod", "frexp", "isnan", "power", "logaddexp"])
def test_ufuncs(name: str, sim: bool) -> None:
    fast = getattr(autodev, name).func
    with _mode(sim):
        for make in UFUNC_ARGS:
            _same(fast, make)
        out = autodev.zeros(6)  # with a keyword: always the Python path
        assert _same(fast, lambda: (_vec(), 1.0)) is not None
        getattr(autodev, name)(*((_vec(),) * getattr(np, name).nin), out=(out,) * getattr(
            np, name).nout if getattr(np, name).nout > 1 else out)


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["sum", "prod", "max", "amin"])
def test_reductions(name: str, sim: bool) -> None:
    fast = getattr(autodev, name)
    inputs = [lambda: (_vec(),), lambda: (_vec("int8"),), lambda: (_vec("bool"),),
              lambda: (autodev.asarray(np.arange(12).reshape(3, 4)),),
              lambda: (autodev.asarray(np.float64(2.0)),), lambda: (_vec(n=0),),
              lambda: (_vec(), 0), lambda: ([1, 2],), lambda: (np.arange(3),), lambda: ()]
    with _mode(sim):
        for make in inputs:
            _same(fast, make)


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("name", ["zeros", "ones", "empty"])
def test_creation(name: str, sim: bool) -> None:
    fast = getattr(autodev, name)
    calls = [(3,), ((2, 3), "int32"), (3, float, "F"), ((2, 2), None, "F"), (-1,),
             (3, "nonsense"), (3, None, "X"), (3, None, "C", 4), ((),), ([2, 2],)]
    with _mode(sim):
        for args in calls:
            if name == "empty":  # values undefined: compare the rest
                got = _outcome(fast, args)
                want = _outcome(fast.fallback, args)
                strip = lambda o: (o[0][0], o[0][1][:3] if o[0][0] == "ok" else o[0][1:])  # noqa
                assert strip(got) == strip(want)
            else:
                _same(fast, lambda: args)


@compiled_only
def test_compiled_names_and_docs_are_the_functions() -> None:
    assert autodev.sum.__doc__ == autodev.sum.fallback.__doc__ is not None
    assert autodev.zeros.__name__ == "zeros" and autodev.zeros.__module__ == "autodev"
    assert ARRAY.__add__.__name__ == "op" and ARRAY.__getitem__.__name__ == "__getitem__"
    a = _vec()
    assert a.__add__(1.0).tolist() == (a + 1.0).tolist()  # binds as a method
    assert a.__getitem__(2) == 2.0


@compiled_only
def test_named_operands_are_never_taken_for_temporaries() -> None:
    """The elision probe: a large named array left of ``+`` keeps its values."""
    n = 1 << 16  # 512 KiB of float64: above the elision size

    def run() -> tuple[Any, Any]:
        a = autodev.asarray(np.ones(n))
        b = a + 1.0
        c = (a * 2.0) + b  # a temporary left operand: NumPy may reuse its buffer
        return a, c

    a, c = run()
    assert float(a.sum()) == n and float(c.sum()) == 4 * n


@compiled_only
def test_subclass_instances_take_the_python_path() -> None:
    class Tagged(autodev.ndarray):
        __slots__ = ()

    make = lambda: autodev.array(np.arange(3.0)).view(Tagged)  # noqa: E731
    assert _same(ARRAY.__dict__["__add__"], lambda: (make(), 1.0))[2] == 1
    assert _same(ARRAY.__dict__["__getitem__"], lambda: (make(), slice(1)))[0][0] == "ok"
    assert type(make() + 1.0) is Tagged and type(make()[1:]) is Tagged


@compiled_only
@pytest.mark.parametrize("policy", ["auto", "gpu", "cpu"])
def test_policies_with_a_gpu_usable(policy: str) -> None:
    """Under ``policy("gpu")`` a tiny host call is the decision's, not the host's at once."""
    big = 1 << 20  # above every floor: the decision runs
    cases: list[tuple[Any, Callable[[], tuple[Any, ...]]]] = [
        (ARRAY.__dict__["__add__"], lambda: (_vec(), 1.0)),
        (ARRAY.__dict__["__mul__"], lambda: (_vec(), _vec())),
        (ARRAY.__dict__["__add__"], lambda: (autodev.ones(big), 1.0)),
        (autodev.sin.func, lambda: (_vec(),)),
        (autodev.add.func, lambda: (autodev.ones(big), autodev.ones(big))),
        (autodev.sum, lambda: (_vec(),)), (autodev.sum, lambda: (autodev.ones(big),)),
        (autodev.zeros, lambda: (3,)), (autodev.zeros, lambda: ((2, 2), "int8")),
        (ARRAY.__dict__["__getitem__"], lambda: (_vec(), slice(1, 3))),
        (ARRAY.__dict__["__setitem__"], lambda: (_vec(), 1, 5.0)),
        (ARRAY.__dict__["copy"], lambda: (_vec(),)), (ARRAY.__dict__["view"], lambda: (_vec(),)),
        (autodev.array, lambda: ([1.0, 2.0],)), (autodev.array, lambda: ([[1, 2], [3, 4]],)),
        (resolve_name(np, "", "count_nonzero"), lambda: (_vec(),)),
        (resolve_name(np, "", "count_nonzero"), lambda: (autodev.ones(big),)),
    ]
    with simulated_gpu(), autodev.policy(policy):
        for fast, make in cases:
            _same(fast, make)


@compiled_only
def test_which_calls_the_compiled_path_keeps() -> None:
    """A FastCall answers the calls its fast paths take without its fallback, and passes
    every other call on: no GPU usable, and host data below the floor with one usable."""
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any) -> str:
        passed.append(args)
        return "fallback"

    add = FastCall("binary", np.add, fallback, None, True, "elementwise", 0, "elementwise")
    add_no_family = FastCall("binary", np.add, fallback, None, True, None)
    small, large = _vec(), autodev.ones(1 << 20)
    with _mode(False):
        with threadpoolctl.threadpool_limits(1), _no_fusion():  # no call split or deferred
            assert type(add(small, 1.0)) is ARRAY
            assert type(add(large, 1.0)) is ARRAY  # (in the host pool's scope: its own test)
            assert type(add_no_family(large, 1.0)) is ARRAY
        assert add_no_family(small, small).tolist() == (small + small).tolist()
        assert add(small, [1]) == "fallback" and add(small, None) == "fallback"
    assert len(passed) == 2
    _threads.floor("elementwise")  # (the floors known: the compiled paths learn them)
    if _threads.general_from(pooled=False) <= large.size:  # some family may split or defer
        with _mode(False):  # it: without a family the fallback decides; with one, its floor
            assert add_no_family(large, 1.0) == "fallback"
            passed.pop()
            split = _threads.split_floors()["elementwise"] <= large.size
            assert (add(large, 1.0) == "fallback") is split
            if split:
                passed.pop()
            assert type(add(small, 1.0)) is ARRAY
    with _mode(True):
        assert add(small, 1.0) == "fallback"  # the floor is not known yet: Python finds it
        host_floor_work("elementwise")
        assert type(add(small, 1.0)) is ARRAY and type(add(small, small)) is ARRAY
        assert add(large, 1.0) == "fallback"  # above the floor: the decision
        assert add_no_family(small, 1.0) == "fallback"
        with autodev.policy("gpu"):
            assert add(small, 1.0) == "fallback"
        context = contextvars.copy_context()  # the policy is the context's: read in each
        context.run(autodev._config.set_policy, "gpu")
        assert context.run(add, small, 1.0) == "fallback" and type(add(small, 1.0)) is ARRAY
        moved = autodev.asarray(np.arange(6.0), device="sim:0")
        assert add(moved, 1.0) == "fallback"  # not on the host
    assert len(passed) == 8


@compiled_only
def test_a_memory_error_in_the_host_pools_scope_goes_to_the_fallback() -> None:
    """A call run in the host pool's scope that raises MemoryError is passed to the
    fallback, which releases what autodev holds and runs it once more
    (autodev._residency.memory.host_pooled); a smaller call's MemoryError is NumPy's."""
    from autodev import _host_buffers
    from autodev._speedups import FastCall

    if _host_buffers.POOLED_FROM == _host_buffers.NEVER:
        pytest.skip(f"no host buffer pool: {_host_buffers.STATUS}")

    class Failing:
        nin = 1

        def __call__(self, x: Any) -> Any:
            raise MemoryError("no room")

    failing = FastCall("ufunc", Failing(), lambda *args: "fallback", None, False, None,
                       False, "elementwise")
    with _mode(False), threadpoolctl.threadpool_limits(1), _no_fusion():
        large = autodev.ones(1 << 20)
        before = fast_calls()
        assert failing(large) == "fallback" and fast_calls() == before
        with pytest.raises(MemoryError, match="no room"):
            failing(_vec())


@compiled_only
def test_the_compiled_paths_hold_no_rule_of_their_own(monkeypatch: Any) -> None:
    """With a GPU usable, what the compiled paths run at once is what the Python tables
    say, read at each call: HOST_NOW's bound for the policy in force and the family
    (changed here, the calls follow it) and MADE_ON_HOST for creation."""
    from autodev._config import MADE_ON_HOST
    from autodev._cost.cache import HOST_NOW
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    add = FastCall("binary", np.add, fallback, None, False, "elementwise")
    sin = FastCall("ufunc", np.sin, fallback, None, False, "transcendental")
    total = FastCall("unary", np.count_nonzero, fallback, None, False, "reduction")
    zeros = FastCall("create", np.zeros, fallback)
    array = FastCall("sequence", np.array, fallback)
    small = _vec()
    n = small.size
    with _mode(True):
        bounds = HOST_NOW["auto"]
        for family in ("elementwise", "transcendental", "reduction"):
            monkeypatch.setitem(bounds, family, n)  # the work must be below the bound
        assert add(small, 1.0) == add(small, small) == sin(small) == total(small) == "fallback"
        for family in ("elementwise", "transcendental", "reduction"):
            bounds[family] = n + 1
        assert type(add(small, 1.0)) is ARRAY and type(add(small, small)) is ARRAY
        assert type(sin(small)) is ARRAY and total(small) == np.count_nonzero(small.tolist())
        monkeypatch.setitem(HOST_NOW["gpu"], "elementwise", n + 1)
        with autodev.policy("gpu"):
            assert type(add(small, 1.0)) is ARRAY  # (the table is the rule, whatever it says)
        assert type(zeros(3)) is ARRAY and type(array([1.0])) is ARRAY
        monkeypatch.setitem(MADE_ON_HOST, "auto", False)
        assert zeros(3) == array([1.0]) == "fallback"
    assert len(passed) == 6


@compiled_only
def test_a_broadcast_is_counted_by_its_result(monkeypatch: Any) -> None:
    """With a GPU usable, the compiled paths count an elementwise call's work as its
    operands broadcast together, as Python does: a column of 4 and a row of 5 (20
    elements) reach a bound of 20, a row of 4 (16) does not; binary, ufunc and function
    kinds alike."""
    from autodev._cost.cache import HOST_NOW
    from autodev._speedups import BOUNDS, FastCall

    def fallback(*args: Any, **kwargs: Any) -> str:
        return "fallback"

    def other(result: Any, args: Any, host: Any) -> Any:
        return result

    broadcast = BOUNDS["broadcast"]
    sub = FastCall("binary", np.subtract, fallback, None, False, "elementwise", broadcast)
    atan = FastCall("ufunc", np.arctan2, fallback, None, False, "transcendental", broadcast)
    where = FastCall("function", np.where, fallback, other, False, "elementwise", broadcast)
    largest = FastCall("binary", np.subtract, fallback, None, False, "elementwise",
                       BOUNDS["largest"])
    column = autodev.array(np.arange(4.0).reshape(4, 1))
    row5, row4 = (autodev.array(np.arange(float(n)).reshape(1, n)) for n in (5, 4))
    mask = autodev.array(np.ones((1, 1), bool))
    with _mode(True):
        for family in ("elementwise", "transcendental"):
            monkeypatch.setitem(HOST_NOW["auto"], family, 20)
        assert sub(column, row5) == atan(column, row5) == "fallback"
        assert where(mask, column, row5) == "fallback"
        assert type(largest(column, row5)) is ARRAY  # (the old count: 5 elements)
        ran = [sub(column, row4), atan(column, row4), where(mask, column, row4)]
    col, row = np.arange(4.0)[:, None], np.arange(4.0)
    for got, want in zip(ran, [col - row, np.arctan2(col, row), np.where(True, col, row)]):
        assert type(got) is ARRAY and np.array_equal(got._native, want)


def _function_cases(xp: Any) -> dict[str, Callable[[], Any]]:
    """Calls of dispatched functions the compiled *function* kind takes, on ``xp``'s
    arrays (the same values for NumPy and autodev)."""
    a = xp.asarray(np.arange(12.0).reshape(3, 4))
    b = xp.asarray(np.linspace(-1.0, 1.0, 12).reshape(3, 4))
    v = xp.asarray(np.arange(4.0))
    i = xp.asarray(np.array([2, 0, 1]))
    mask = xp.asarray(np.arange(12.0).reshape(3, 4) > 5)
    return {
        "concatenate list": lambda: xp.concatenate([a, b]),
        "concatenate tuple, axis": lambda: xp.concatenate((a, b), 1),
        "concatenate axis=": lambda: xp.concatenate([a, b], axis=1),
        "take axis=": lambda: xp.take(a, i, axis=1),
        "unique return_counts= (a tuple)": lambda: xp.unique(i, return_counts=True),
        "keyword array": lambda: xp.isclose(a, b=b, atol=0.5),
        "concatenate NumPy's": lambda: xp.concatenate([np.ones((1, 4)), a]),
        "stack": lambda: xp.stack([v, v, v]),
        "block (nested)": lambda: xp.block([[a, b], [b, a]]),
        "where": lambda: xp.where(mask, a, b),
        "where scalar": lambda: xp.where(mask, a, 0.5),
        "clip": lambda: xp.clip(b, -0.5, 0.5),
        "diff": lambda: xp.diff(v),
        "searchsorted side": lambda: xp.searchsorted(v, 2.5, "right"),
        "nonzero (a tuple)": lambda: xp.nonzero(mask),
        "nonzero 1-d (a tuple)": lambda: xp.nonzero(i),
        "histogram (a tuple)": lambda: xp.histogram(v, 3),
        "broadcast_arrays (views)": lambda: xp.broadcast_arrays(a, v),
        "dot (a scalar)": lambda: xp.dot(v, v),
        "dot": lambda: xp.dot(a, v),
        "argmax (a scalar)": lambda: xp.argmax(b),
        "mean axis": lambda: xp.mean(a, axis=0),
        "mean dtype= a class": lambda: xp.mean(a, dtype=np.float32),
        "zeros_like": lambda: xp.zeros_like(a),
        "ones_like dtype= a class": lambda: xp.ones_like(a, dtype=float),
        "std axis keepdims": lambda: xp.std(a, 1, keepdims=True),
        "max axis": lambda: xp.max(a, 0),
        "cumsum axis": lambda: xp.cumsum(a, axis=1),
        "argmax axis": lambda: xp.argmax(a, axis=1),
        "percentile (a scalar)": lambda: xp.percentile(v, 50),
        "allclose (a bool)": lambda: xp.allclose(a, b),
        "array_equal (a bool)": lambda: xp.array_equal(a, a),
        "count_nonzero axis": lambda: xp.count_nonzero(mask, axis=0),
        "sum axis error": lambda: xp.sum(a, axis=5),
        "take": lambda: xp.take(v, i),
        "transpose (a view)": lambda: xp.transpose(a),
        "atleast_2d (itself)": lambda: xp.atleast_2d(a),
        "ravel (a view)": lambda: xp.ravel(a),
        "unique": lambda: xp.unique(i),
        "repeat, str axis error": lambda: xp.repeat(v, 2, "x"),
        "concatenate shapes error": lambda: xp.concatenate([a, v]),
    }


_SORTS = ("unique", "searchsorted")


def _host_bounds_known() -> None:
    """Every family's bound for host data read into HOST_NOW (as a first call of each
    would read it), so that the compiled paths can compare against it."""
    from autodev._cost.cache import HOST_FLOOR_WORK
    from autodev._cost.families import WORK

    for family in WORK:
        host_floor_work(family)
    assert set(HOST_FLOOR_WORK) == set(WORK)


@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("case", list(_function_cases(np)))
def test_the_compiled_function_kind_gives_numpys_answer(case: str, sim: bool,
                                                         monkeypatch: Any) -> None:
    """A dispatched function's compiled path (no out=; no GPU usable, or host data below
    the family's bound with one) runs NumPy's call at once and answers as NumPy and as
    the Python path (this test with ``AUTODEV_PURE_PYTHON=1``) do: values, dtype, shape,
    NumPy scalars as they are, NumPy's error."""
    from autodev import _functions

    general: list[str] = []
    real = _functions.call
    monkeypatch.setattr(_functions, "call", lambda spec, *rest: general.append(spec.name)
                        or real(spec, *rest))
    want_error = got_error = None
    try:
        want = _function_cases(np)[case]()
    except Exception as error:  # noqa: BLE001 (NumPy's own error, compared below)
        want_error = error
    with _mode(sim):
        autodev.ones(2) + 1  # (the first call settles the devices)
        _host_bounds_known()
        taken = SPEEDUPS is not None and (STATE.fast or STATE.host_fast)
        cases = _function_cases(autodev)
        before = fast_calls()
        try:
            got = cases[case]()
        except Exception as error:  # noqa: BLE001
            got_error = error
    # (the compiled path: no `call`; with a GPU usable, not a sort's, whose work, n log n,
    # Python counts: cost.families.ELEMENTS_BOUND)
    if taken and not (sim and case.startswith(_SORTS)):
        assert general == [] and fast_calls() == before + 1
    if want_error is not None:
        assert type(got_error) is type(want_error) and str(got_error) == str(want_error)
        return
    assert got_error is None
    if type(want) in (tuple, list):
        assert type(got) is type(want) and len(got) == len(want)
    for w, g in zip(want if type(want) in (tuple, list) else (want,),
                    got if type(got) in (tuple, list) else (got,)):
        if isinstance(w, np.ndarray):
            assert type(g) is ARRAY and g.dtype == w.dtype and g.shape == w.shape
            assert np.asarray(g).tobytes() == w.tobytes()
        else:
            assert type(g) is type(w) and g == w


_VIEW_CASES: dict[str, Callable[[Any], tuple[Any, tuple[Any, ...]]]] = {
    "transpose": lambda m: (autodev.transpose, (m,)),
    "ravel": lambda m: (autodev.ravel, (m,)),
    "reshape": lambda m: (autodev.reshape, (m, (4, 3))),
    "squeeze of a view": lambda m: (autodev.squeeze, (m[:1],)),
    "expand_dims": lambda m: (autodev.expand_dims, (m, 0)),
    "moveaxis": lambda m: (autodev.moveaxis, (m, 0, 1)),
    "transpose of a view (its owner)": lambda m: (autodev.transpose, (m[1:],)),
    "atleast_2d (itself)": lambda m: (autodev.atleast_2d, (m,)),
    "atleast_1d of a view (itself)": lambda m: (autodev.atleast_1d, (m[1],)),
    "broadcast_to": lambda m: (autodev.broadcast_to, (m[0], (2, 4))),
    "a NumPy argument's view": lambda m: (autodev.transpose, (np.ones((2, 3)),)),
    "split (a list of views)": lambda m: (autodev.split, (m, 2, 1)),
    "array_split of a view": lambda m: (autodev.array_split, (m[1:], 3)),
    "broadcast_arrays (views of two)": lambda m: (autodev.broadcast_arrays, (m, m[0])),
    "nonzero (views of NumPy's memory)": lambda m: (autodev.nonzero, (m,)),
    "nonzero of a NumPy argument": lambda m: (autodev.nonzero, (np.ones((2, 3)),)),
    "split of a NumPy argument": lambda m: (autodev.split, (np.ones(4), 2)),
}


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("case", list(_VIEW_CASES))
def test_the_function_kind_wraps_views_as_python_does(case: str, sim: bool) -> None:
    """A dispatched function whose NumPy result is an argument's data or a view of it:
    the compiled path gives what the Python path gives (_dispatch.cpu_result): the very
    argument, or a new array sharing the viewed array's storage, so that a write through
    either is seen by the other; for a NumPy argument's view, Python's rule (escaped)."""
    def outcome() -> tuple[Any, ...]:
        values = np.arange(12.0).reshape(3, 4)
        m = autodev.array(values)
        fast, args = _VIEW_CASES[case](m)
        return fast, args, m

    with _mode(sim):
        _host_bounds_known()
        fast, args, m = outcome()
        assert type(fast).__name__ == "FastCall"
        got = fast(*args)
        fallback, fargs, fm = outcome()
        want = fallback.fallback(*fargs)
    assert type(got) is type(want)
    several = type(got) in (tuple, list)
    assert not several or len(got) == len(want)
    for g, w in zip(got if several else (got,), want if several else (want,)):
        assert _describe(g) == _describe(w)
        assert (g is args[0]) == (w is fargs[0])
        if type(args[0]) is ARRAY:
            assert (g._storage is args[0]._storage) == (w._storage is fargs[0]._storage)
            assert (g._storage is m._storage) == (w._storage is fm._storage)
        assert (g._storage is None) == (w._storage is None)
        assert g._storage is None or g._storage.escaped == w._storage.escaped
        if g._storage is not None and not g._storage.escaped and g._native.flags.writeable \
                and g.size:
            g[(0,) * g.ndim] = 99.0  # a view: the write reaches the array it views
            w[(0,) * w.ndim] = 99.0
            assert m.tolist() == fm.tolist()


@compiled_only
def test_what_the_compiled_function_kind_leaves_to_its_fallback() -> None:
    """``out=``, ``out`` by position, more arguments than it takes, lists nested deeper
    than it walks, an array-like or a subclass (a keyword's value too), a pending chain, a
    GPU usable where the function has no family: the fallback, with the arguments
    untouched; a result that is neither new memory, a view, a plain scalar nor a tuple of
    new arrays: Python's rule (`other`)."""
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    def other(result: Any, args: Any, host: Any) -> Any:
        return ("other", result, args, host)

    concatenate = FastCall("function", np.concatenate, fallback, other)
    clip = FastCall("function", np.clip, fallback, other, positional=3)
    a = _vec()

    class Like:
        def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
            return np.zeros(2)

    class Sub(ARRAY):  # type: ignore[misc, valid-type]
        pass

    with _mode(False):
        assert type(concatenate([a, a])) is ARRAY and type(clip(a, 1, 2)) is ARRAY
        assert type(concatenate([a, a], axis=0)) is ARRAY  # (a keyword of a plain value)
        assert clip(a, 1, 2, out=np.empty(6)) == "fallback"
        assert clip(a, 1, 2, np.empty(6)) == "fallback"  # out= by position
        assert concatenate([a, a], axis=Like()) == "fallback"
        assert concatenate([a, a], device="cpu") == "fallback"  # (the Python path places)
        assert concatenate([a, a], like=np.ones(1)) == "fallback"
        assert concatenate([[[a]]]) == "fallback" and concatenate([Like()]) == "fallback"
        assert concatenate([autodev.asarray(a).view(Sub)]) == "fallback"
        assert concatenate(*[[a]] * 7) == "fallback"  # (beyond the most it takes)
        scalar = FastCall("function", np.dot, fallback, other)(a, a)
        assert type(scalar) is np.float64 and scalar == 55.0  # (as it is: cpu_result's rule)
        shape = FastCall("function", np.shape, fallback, other)(a)  # (a tuple: Python's rule)
        assert shape[0] == "other" and shape[1] == (6,) and shape[2][0] is a
        assert shape[3][0] is a._native  # (what NumPy was given: the host data)
        SPEEDUPS.set_pending(True)  # (as a pending deferred chain sets it)
        try:
            assert concatenate([a, a]) == "fallback"
        finally:
            SPEEDUPS.set_pending(False)
    with _mode(True):
        assert concatenate([a, a]) == "fallback"  # (no family: the fallback decides)
    assert len(passed) == 11


@compiled_only
def test_the_function_kind_with_a_gpu_usable(monkeypatch: Any) -> None:
    """With a GPU usable, the function kind runs a call at once where Python's
    _decide.all_on_host would: autodev arrays among the arguments, every one on the host,
    their work below HOST_NOW's bound for the family (the largest array's elements, or
    for a matmul the product of the first two arrays'). NumPy's arrays alone, an array on
    the device, work at the bound, a bound not read yet, another policy, more arrays than
    it counts: the fallback."""
    from autodev._cost.cache import HOST_FLOOR_WORK, HOST_NOW
    from autodev._speedups import BOUNDS, FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    def other(result: Any, args: Any, host: Any) -> Any:
        return result

    copy = FastCall("function", np.concatenate, fallback, other, family="copy")
    dot = FastCall("function", np.dot, fallback, other, family="matmul",
                   bound=BOUNDS["product"])
    with _mode(True):
        _host_bounds_known()
        monkeypatch.setitem(HOST_NOW["auto"], "copy", 1000)
        monkeypatch.setitem(HOST_NOW["auto"], "matmul", 1000)
        a, b = _vec(n=20), _vec(n=40)
        assert type(copy([a, b])) is ARRAY and type(copy([a, b.tolist()], axis=0)) is ARRAY
        assert type(copy([np.ones(2000), a])) is ARRAY  # (NumPy's arrays are not counted)
        assert copy([np.ones(2), np.ones(2)]) == "fallback"  # no autodev array
        assert type(copy([_vec(n=999)])) is ARRAY and copy([_vec(n=1000)]) == "fallback"
        assert dot(a, a) == 2470.0  # 20 * 20 = 400: below the bound
        assert dot(b, _vec(n=30)) == "fallback"  # 40 * 30 = 1200, though each is below it
        assert type(dot(b, 2.0)) is ARRAY  # one array: its elements
        assert type(copy([a] * 8)) is ARRAY and copy([a] * 9) == "fallback"
        with autodev.policy("gpu"):
            assert copy([a, b]) == "fallback"
        HOST_FLOOR_WORK.pop("copy")  # (as after a new profile: Python reads it again)
        assert copy([a, b]) == "fallback"
        host_floor_work("copy")
        with autodev.policy("gpu"):
            on_device = autodev.ones(6)  # (made there, not pinned)
        assert on_device.location.kind != "cpu" and copy([a, on_device]) == "fallback"
        assert type(copy([a, b])) is ARRAY
    assert len(passed) == 7


_METHOD_CASES: dict[str, Callable[[Any], Any]] = {
    "reshape (a view)": lambda m: m.reshape(-1),
    "reshape ints": lambda m: m.reshape(4, 3),
    "transpose": lambda m: m.transpose(),
    "ravel": lambda m: m.ravel(),
    "sum axis": lambda m: m.sum(0),
    "sum axis=": lambda m: m.sum(axis=0),
    "mean axis=, keepdims=": lambda m: m.mean(axis=1, keepdims=True),
    "cumsum dtype=": lambda m: m.cumsum(axis=0, dtype=np.float32),
    "reshape order=": lambda m: m.reshape(4, 3, order="F"),
    "sum (a scalar)": lambda m: m.sum(),
    "mean axis": lambda m: m.mean(1),
    "argmax": lambda m: m.argmax(),
    "conj of a real array (itself)": lambda m: m.conj(),
    "nonzero (a tuple)": lambda m: m.nonzero(),
    "swapaxes": lambda m: m.swapaxes(0, 1),
    "squeeze": lambda m: m.squeeze(),
    "repeat": lambda m: m.repeat(2),
    "round": lambda m: m.round(1),
    "cumsum, a class argument": lambda m: m.cumsum(0, np.float32),
    "reshape error": lambda m: m.reshape(5),
    "swapaxes error": lambda m: m.swapaxes(0, 3),
}


@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("case", list(_METHOD_CASES))
def test_the_compiled_array_method_kind_gives_numpys_answer(case: str, sim: bool,
                                                             monkeypatch: Any) -> None:
    """A dispatched array method with plain arguments (no out=; no GPU usable, or host
    data below the family's bound with one) runs NumPy's method at once and answers as
    NumPy and as the Python path (this test with ``AUTODEV_PURE_PYTHON=1``) do: values,
    dtype, shape, the array itself where NumPy's is, a view sharing the array's storage (a
    write through it is seen), NumPy's error."""
    from autodev import _operators

    general: list[str] = []
    real = _operators.call
    monkeypatch.setattr(_operators, "call", lambda spec, *rest: general.append(spec.name)
                        or real(spec, *rest))
    values = np.linspace(-2.0, 2.0, 12).reshape(3, 4)
    with _mode(sim):
        m = autodev.asarray(values.copy())
        m + 1.0  # (the first call settles the devices)
        _host_bounds_known()
        try:
            want: Any = _METHOD_CASES[case](values.copy())
        except Exception as error:  # noqa: BLE001 (NumPy's own error, compared below)
            with pytest.raises(type(error)) as raised:
                _METHOD_CASES[case](m)
            assert str(raised.value) == str(error)
            return
        taken = SPEEDUPS is not None and (STATE.fast or STATE.host_fast)
        before = fast_calls()
        got = _METHOD_CASES[case](m)
    if taken:  # (the compiled path: no `call`)
        assert general == [] and fast_calls() == before + 1
    if case.startswith("conj"):
        assert got is m
    if type(want) is tuple:
        assert type(got) is tuple and len(got) == len(want)
    for w, g in zip(want if type(want) is tuple else (want,),
                    got if type(got) is tuple else (got,)):
        if isinstance(w, np.ndarray):
            assert type(g) is ARRAY and g.dtype == w.dtype and g.shape == w.shape
            assert np.asarray(g).tobytes() == w.tobytes()
        else:
            assert type(g) is type(w) and g == w
    if type(got) is ARRAY and got is not m and np.shares_memory(np.asarray(got), m._native):
        got[(0,) * got.ndim] = 99.0  # a view: the write reaches the array
        assert float(m.ravel()[0]) == 99.0 and got._storage is m._storage


@pytest.mark.parametrize("dtype", [np.float32, "int16", np.float64, np.dtype("c16"), bool])
def test_astype_as_numpys(dtype: Any) -> None:
    """``a.astype(dtype)`` (compiled, as ``a.copy()``): NumPy's new array, never ``a``
    itself nor its memory, in NumPy's dtype; the array's pin kept."""
    values = np.linspace(-2.0, 2.0, 7)
    a = autodev.asarray(values.copy())
    got, want = a.astype(dtype), values.astype(dtype)
    assert type(got) is ARRAY and got.dtype == want.dtype and got is not a
    assert got._storage is None and not np.shares_memory(got._native, a._native)
    assert np.asarray(got).tobytes() == want.tobytes() and got._pin is a._pin
    if SPEEDUPS is not None:
        assert type(ARRAY.__dict__["astype"]).__name__ == "FastCall"


_MADE_CASES: dict[str, Callable[[Any], Any]] = {
    "arange(n)": lambda xp: xp.arange(7),
    "arange(start, stop, step, dtype=)": lambda xp: xp.arange(1, 9, 2, dtype=np.float32),
    "linspace": lambda xp: xp.linspace(0.0, 1.0, 5),
    "linspace retstep= (a pair)": lambda xp: xp.linspace(0.0, 1.0, 5, retstep=True),
    "logspace": lambda xp: xp.logspace(0, 2, 3),
    "eye, k=": lambda xp: xp.eye(3, k=1),
    "identity": lambda xp: xp.identity(2),
    "arange error": lambda xp: xp.arange(1, 2, 0),
    "full": lambda xp: xp.full((2, 3), 1.5),
    "full of a NumPy array": lambda xp: xp.full((2, 3), np.arange(3.0)),
    "full of an autodev array": lambda xp: xp.full((2, 3), xp.asarray(np.arange(3.0))),
    "full of a 0-d autodev array, dtype=": lambda xp: xp.full(2, xp.asarray(7), dtype="f4"),
    "linspace of autodev arrays": lambda xp: xp.linspace(xp.zeros(2), xp.ones(2), 3),
    "full shape error": lambda xp: xp.full((2, -1), 1.0),
}


@pytest.mark.parametrize("case", list(_MADE_CASES))
def test_creation_without_arrays_gives_numpys_answer(case: str) -> None:
    """A creation function that takes no arrays (``arange``, ``linspace``, ``eye``, ...)
    makes NumPy's array on the host (its compiled path where built): values, dtype,
    shape, ``retstep``'s pair, NumPy's error."""
    autodev.ones(2) + 1.0  # (the first call settles the devices)
    try:
        want = _MADE_CASES[case](np)
    except Exception as error:  # noqa: BLE001 (NumPy's own error, compared below)
        with pytest.raises(type(error)) as raised:
            _MADE_CASES[case](autodev)
        assert str(raised.value) == str(error)
        return
    got = _MADE_CASES[case](autodev)
    if type(want) is tuple:
        assert type(got) is tuple and type(got[1]) is type(want[1]) and got[1] == want[1]
        got, want = got[0], want[0]
    assert type(got) is ARRAY and got.dtype == want.dtype and got.shape == want.shape
    assert np.asarray(got).tobytes() == want.tobytes() and got.location == "cpu"
    if SPEEDUPS is not None:
        assert type(autodev.arange).__name__ == "FastFunction"


@compiled_only
def test_what_the_compiled_creation_kind_leaves_to_its_fallback() -> None:
    """``device=`` or ``like=`` (the Python paths place the call), an autodev array among
    the arguments, and a GPU usable under a policy that makes new arrays there: the
    fallback."""
    from autodev._speedups import FastFunction

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    arange = FastFunction("made", np.arange, fallback, lambda r: ("other", r))
    linspace = FastFunction("made", np.linspace, fallback, lambda r: ("other", r))
    with _mode(False):
        assert type(arange(3)) is ARRAY and type(arange(3, dtype=np.int8)) is ARRAY
        assert linspace(0.0, 1.0, 3, retstep=True)[0] == "other"
        assert arange(3, device="cpu") == "fallback" and arange(3, like=np.ones(1)) == "fallback"
        # (an autodev array among the arguments, a keyword's value too: the fallback reads
        # its host data)
        assert linspace(autodev.zeros(2), 1.0, 3) == "fallback"
        assert linspace(0.0, stop=autodev.ones(2), num=3) == "fallback"
    with _mode(True):
        assert type(arange(3)) is ARRAY  # (auto makes new arrays on the host)
        with autodev.policy("gpu"):
            assert arange(3) == "fallback"
    assert len(passed) == 5


@compiled_only
def test_what_the_compiled_array_method_kind_leaves_to_its_fallback() -> None:
    """``out=``, an argument or a keyword's value of another type (a tuple shape, an
    array), the array-API face, a pending chain, a sum large enough to split, and with a
    GPU usable a method with no family or whose work is not below its bound, another
    policy, data on the device: the fallback."""
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    reshape = FastCall("array_method", np.ndarray.reshape, fallback)
    total = FastCall("array_method", np.ndarray.sum, fallback)
    m = autodev.asarray(np.arange(12.0))
    with _mode(False):
        assert type(reshape(m, 3, 4)) is ARRAY and reshape(m, 3, 4)._storage is m._storage
        assert reshape(m, (3, 4)) == "fallback" and type(reshape(m, 12, order="C")) is ARRAY
        assert total(m, axis=(0,)) == "fallback" and total(m, out=np.zeros(())) == "fallback"
        assert reshape(m, np.int32(12)) == "fallback"  # (not one of the plain types)
        assert reshape(autodev.array_api.asarray(np.arange(2.0)), 2) == "fallback"
        SPEEDUPS.set_pending(True)  # (as a pending deferred chain sets it)
        try:
            assert reshape(m, 12) == "fallback"
        finally:
            SPEEDUPS.set_pending(False)
        if _threads.total_from() != _threads.NEVER:
            large = autodev.ones(_threads.total_from())
            assert total(large) == "fallback" and total(m) == 66.0
    with _mode(True):  # (a GPU usable: a primary method, a view one, on host data; any
        # other below its family's bound for host data)
        assert reshape(m, 12) == "fallback"  # (no family: the fallback decides)
        view = FastCall("array_method", np.ndarray.reshape, fallback, primary=True)
        assert type(view(m, 12)) is ARRAY and view(m, 12)._storage is m._storage
        reduction = FastCall("array_method", np.ndarray.sum, fallback, None, False,
                             "reduction")
        _host_bounds_known()
        assert reduction(m) == 66.0 and type(reduction(m.reshape(3, 4), 0)) is ARRAY
        with pytest.MonkeyPatch.context() as patch:
            from autodev._cost.cache import HOST_NOW

            patch.setitem(HOST_NOW["auto"], "reduction", m.size)  # the work must be below
            assert reduction(m) == "fallback"
        with autodev.policy("gpu"):
            assert reduction(m) == "fallback"
            on_device = autodev.ones(12)
        assert reduction(on_device) == "fallback" and reduction(m) == 66.0
        assert view(autodev.asarray(np.arange(12.0), device="sim:0"), 12) == "fallback"
    assert len(passed) == 11 + (_threads.total_from() != _threads.NEVER)


@compiled_only
def test_what_the_newer_kinds_take() -> None:
    """The method, unary and sequence kinds answer the calls their Python twins' fast
    paths take and pass the rest on: the nesting depth and keywords array() was told,
    a reduction above the threads' floor (with an axis too: the unary kind is the
    function kind for more arguments), an array on a device, a pending chain."""
    from autodev._creation import ARRAY_KEYWORDS, SEQUENCE_DEPTH
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    sequence = FastCall("sequence", np.array, fallback)
    unary = FastCall("unary", np.count_nonzero, fallback, None, False, "reduction")
    method = FastCall("method", np.ndarray.copy, fallback)
    small = _vec()
    with _mode(False):
        assert type(sequence(_nested(SEQUENCE_DEPTH))) is ARRAY
        assert sequence(_nested(SEQUENCE_DEPTH + 1)) == "fallback"
        for name in ARRAY_KEYWORDS:
            value = {"dtype": "f4", "order": "C", "ndmin": 1}[name]
            assert type(sequence([1.0], **{name: value})) is ARRAY
        assert sequence([1.0], copy=True) == "fallback"
        assert sequence([small]) == "fallback" and sequence(np.arange(2.0)) == "fallback"
        assert unary(small) == 5 and method(small).tolist() == small.tolist()
        # more arguments or keywords: the function kind's, below the threads' floor
        assert unary(small, 0) == unary(small, axis=0) == unary(small, keepdims=False) == 5
        assert unary([1, 0]) == unary([1, 0], 0) == "fallback"
        big = autodev.ones(1 << 18)
        split = _threads.general_from() <= big.size
        assert unary(big, 0) == ("fallback" if split else big.size)
        assert method(autodev.array_api.asarray(np.arange(2.0))) == "fallback"
        with threadpoolctl.threadpool_limits(1), _no_fusion():
            large = autodev.ones(1 << 20)  # (run here, in the host buffer pool's scope)
            assert unary(large) == large.size
    with _mode(True):
        host_floor_work("reduction")
        assert unary(small) == 5
        assert unary(autodev.asarray(np.arange(6.0), device="sim:0")) == "fallback"
        with autodev.policy("gpu"):
            assert unary(small) == "fallback" and sequence([1.0]) == "fallback"
    assert len(passed) >= 10


@pytest.mark.parametrize("kind", ["__matmul__", "__rmatmul__"])
def test_matmul_work_is_counted_as_multiply_adds(kind: str, monkeypatch: Any) -> None:
    """With a GPU usable, ``a @ b`` of host arrays runs at once where its multiply-adds
    are below the matmul floor, and is decided where they are not: ``(1, k) @ (k, 1)`` is k
    of them (either side of the floor by one), ``(k, k) @ (k, k)`` k³ although each operand
    has k² elements (the compiled twin leaves every such call to Python, which counts them)."""
    from autodev import _operators

    decided: list[int] = []
    real = _operators._decided
    monkeypatch.setattr(_operators, "_decided",
                        lambda *args: decided.append(1) or real(*args))
    op = ARRAY.__dict__[kind]

    def matmul(a: Any, b: Any) -> Any:
        return op(a, b) if kind == "__matmul__" else op(b, a)

    with simulated_gpu():
        floor = host_floor_work("matmul")
        for k in (floor - 1, floor):
            result = matmul(autodev.ones((1, k)), autodev.ones((k, 1)))
            assert result.tolist() == [[k]] and len(decided) == (k == floor)
        k = int(round(floor ** (1 / 3))) + 1  # (k² elements below the floor, k³ above)
        assert k * k < floor <= k ** 3
        square = autodev.ones((k, k))
        assert matmul(square, square)[0, 0] == k and len(decided) == 2


_HOSTILE = r'''
import numpy as np, autodev
a = autodev.ones(6)
class Unpin:
    def __index__(self):
        del a._pin
        return 1
try:
    a[Unpin():4]
except AttributeError as e:
    print("getitem:", e)
b = autodev.ones(6)
class Rebind(type):
    def __hash__(cls):
        b._native = np.zeros(6)  # the old data is freed while the call is under way
        return hash(float)
    def __eq__(cls, other):
        return other is float or cls is other
class W(float, metaclass=Rebind):
    pass
print("binary:", (b + W(2.0)).tolist())
c = autodev.ones(6)
class Raise(type):
    def __hash__(cls):
        raise RuntimeError("hash refused")
class R(float, metaclass=Raise):
    pass
for label, call in [("binary", lambda: c + R(1.0)), ("setitem", lambda: c.__setitem__(1, R(1.0))),
                    ("ufunc", lambda: autodev.add(c, R(1.0)))]:
    try:
        call()
    except RuntimeError as e:
        print(label + ":", e)
'''


@compiled_only
def test_hostile_operands_behave_as_in_python() -> None:
    """User code run in the middle of a call (an index's ``__index__``, an operand type's
    ``__hash__``) that deletes or rebinds the array's slots, or raises: the compiled path
    gives what the Python path gives, and never crashes (run in a child process)."""
    outs = []
    for pure in ("0", "1"):
        env = {**os.environ, "AUTODEV_PURE_PYTHON": pure}
        done = subprocess.run([sys.executable, "-c", _HOSTILE], env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        outs.append(done.stdout)
    assert outs[0] == outs[1]
    assert "getitem: " in outs[0] and "binary: [2.0, 2.0" in outs[0]
    assert outs[0].count("hash refused") == 3


@compiled_only
def test_functions_pickle_copy_bind_as_python_functions() -> None:
    import copy
    import pickle
    import weakref

    from autodev._speedups import FastCall

    for f in (autodev.sum, autodev.zeros):
        assert pickle.loads(pickle.dumps(f)) is f
        assert copy.copy(f) is f and copy.deepcopy(f) is f and weakref.ref(f)() is f

    class Holder:
        total = autodev.sum
        total_py = autodev.sum.fallback

    x = autodev.ones(3)
    for name in ("total", "total_py"):  # both bind: ``Holder().total(x)`` passes the holder
        with pytest.raises(TypeError):
            getattr(Holder(), name)(x)
    with pytest.raises(ValueError, match="'nope'"):
        FastCall("nope", None, print)


def test_slot_list_is_the_class_slot_list() -> None:
    """The compiled paths make and read arrays by the slots they list (autodev/_speedups.c,
    ``SlotNames``): the class's own, in its order, so that a slot added to or removed from
    the class without the C changing fails here (binding then also refuses a missing one)."""
    speedups = pytest.importorskip("autodev._speedups")  # (built, even with the switch set)
    assert speedups.SLOTS == tuple(s for s in ARRAY.__slots__ if s != "__weakref__")


def _leak_calls() -> list[tuple[str, Callable[[], Any]]]:
    """Every kind of compiled callable, on the paths it takes itself and on ones it passes
    to its fallback (a list operand, a key of another kind)."""
    a, b = _vec(), _vec()
    fresh = autodev.ones(8)
    cube = autodev.ones((2, 2, 2))
    return [
        ("a + b", lambda: a + b), ("a + 2.0", lambda: a + 2.0), ("2.0 - a", lambda: 2.0 - a),
        ("a @ a", lambda: a @ a), ("a + list", lambda: a + [1, 2, 3, 4, 5, 6]),
        ("a[3]", lambda: a[3]), ("a[1:4]", lambda: a[1:4]), ("a[[1]]", lambda: a[[1]]),
        ("fresh[1:3] view", lambda: fresh[1:3]),
        ("b[1:3] = 2.5", lambda: b.__setitem__(slice(1, 3), 2.5)),
        ("fresh[1] = 1.0", lambda: fresh.__setitem__(1, 1.0)),
        ("sin(a)", lambda: autodev.sin(a)), ("add(a, 1.0)", lambda: autodev.add(a, 1.0)),
        ("sum(a)", lambda: autodev.sum(a)), ("zeros(4)", lambda: autodev.zeros(4)),
        ("zeros(4, float)", lambda: autodev.zeros(4, float)),
        ("a.copy()", lambda: a.copy()), ("a.copy('F')", lambda: a.copy("F")),
        ("a.view(uint8)", lambda: a.view(np.uint8)), ("fresh.view()", lambda: fresh.view()),
        ("a.view(ndarray class)", lambda: a.view(ARRAY)), ("a.item(2)", lambda: a.item(2)),
        ("count_nonzero(a)", lambda: autodev.count_nonzero(a)),
        ("mean(a)", lambda: autodev.mean(a)), ("cumsum(a)", lambda: autodev.cumsum(a)),
        ("trace(3-d)", lambda: autodev.trace(cube)),
        ("array(bools)", lambda: autodev.array([True, False], dtype=bool)),
        ("array(rows)", lambda: autodev.array([[1.0, 2.0], [3.0, 4.0]])),
        ("array(str list)", lambda: autodev.array(["a", "b"])),
    ]


def _held() -> tuple[int, int]:
    """The interpreter's reference total where it keeps one (a debug build), and its
    allocated memory blocks (any build): what leaked references make grow."""
    total = getattr(sys, "gettotalrefcount", lambda: 0)()
    return total, sys.getallocatedblocks()


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
def test_no_reference_leaks(sim: bool) -> None:
    """Repeated calls of every compiled path leave nothing behind: the reference counts of
    their operands, their data and what they store in new arrays (the CPU device, the
    storage, NumPy's callables) and the interpreter's totals end where they began."""
    import gc

    from autodev._device import CPU

    with _mode(sim), _no_fusion():
        if sim:
            host_floor_work("elementwise")  # (the floors cached: the compiled paths act)
            host_floor_work("transcendental")
            host_floor_work("matmul")
        calls = _leak_calls()
        watched = [CPU, np.add, np.sin, np.add.reduce, np.zeros]
        for _, call in calls:  # warm up: caches, storages made on first need
            for _ in range(50):
                call()
        gc.collect()
        objects = [c.__closure__ for _, c in calls]
        counts = [sys.getrefcount(o) for o in watched]
        cells = [[sys.getrefcount(cell.cell_contents) for cell in cl or ()] for cl in objects]
        datas = [[sys.getrefcount(cell.cell_contents._native) for cell in cl or ()
                  if isinstance(cell.cell_contents, ARRAY)] for cl in objects]
        before = _held()
        for _, call in calls:
            for _ in range(2000):
                call()
        gc.collect()
        after = _held()
        assert [sys.getrefcount(o) for o in watched] == counts
        assert [[sys.getrefcount(cell.cell_contents) for cell in cl or ()]
                for cl in objects] == cells
        assert [[sys.getrefcount(cell.cell_contents._native) for cell in cl or ()
                 if isinstance(cell.cell_contents, ARRAY)] for cl in objects] == datas
    # 32,000 calls: a leak of one object per call would be thousands of blocks
    assert after[1] - before[1] < 500, (before, after)
    if hasattr(sys, "gettotalrefcount"):
        assert after[0] - before[0] < 500, (before, after)


@compiled_only
def test_operators_and_ufuncs_go_to_python_while_a_chain_is_pending() -> None:
    """While a deferred chain is pending the Python operators and ufunc calls send theirs
    to the general path (``_ACTIVE``), where pending operands are recorded or forced: the
    compiled ones pass those calls to them then; indexing, reductions and creation, whose
    Python paths do not look, go on in C (writes have their own flag: set_watching)."""
    from autodev import _fusion
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any) -> str:
        passed.append(args)
        return "fallback"

    kinds = [FastCall("binary", np.add, fallback), FastCall("reflected", np.add, fallback),
             FastCall("ufunc", np.sin, fallback), FastCall("getitem", None, fallback),
             FastCall("setitem", None, fallback), FastCall("reduce", np.add.reduce, fallback),
             FastCall("create", np.zeros, fallback)]
    small = _vec()
    calls = [lambda f: f(small, 1.0), lambda f: f(small, 1.0), lambda f: f(small),
             lambda f: f(small, 1), lambda f: f(small, 1, 2.0), lambda f: f(small),
             lambda f: f(3)]
    with _mode(False), threadpoolctl.threadpool_limits(1), _no_fusion():
        assert not any(isinstance(call(f), str) for f, call in zip(kinds, calls))
        assert not passed
        _fusion._set_active(True)  # (as a deferred call does; nothing is recorded here)
        try:
            went = [isinstance(call(f), str) for f, call in zip(kinds, calls)]
        finally:
            _fusion._set_active(False)
        assert went == [True, True, True, False, False, False, False]
        assert len(passed) == 3
        assert type(kinds[0](small, 1.0)) is ARRAY


@compiled_only
def test_basic_keys_and_plain_values_are_taken_without_the_fallback() -> None:
    """Ints, slices, ``...``, None and tuples of them (``b[1, 2]``, ``a[()]``), and str or
    bytes values written, are handled in C; any other key (a list, a bool, a NumPy integer,
    a tuple holding one) or value goes to the setter's fallback. The getter takes those
    keys too, and arrays (``b[i]``, ``b[mask]``), as its Python path gives them to NumPy
    (``cpu_arg``); a list nested deeper, an array-like or a subclass goes to its fallback."""
    from autodev._speedups import FastCall

    passed: list[Any] = []

    def fallback(*args: Any) -> str:
        passed.append(args[1])
        return "fallback"

    get, put = FastCall("getitem", None, fallback), FastCall("setitem", None, fallback)
    b = autodev.asarray(np.arange(12.0).reshape(3, 4))
    s = autodev.asarray(np.array(["ab", "c", "d"]))
    taken = [1, slice(1, 3), Ellipsis, None, (), (1, 2), (Ellipsis, 0), (None, slice(1, 2))]
    passed_on = [[1], True, np.int64(1), (1, [2]), (True,), 1.0]
    with _mode(False):
        for key in taken:
            assert not isinstance(get(b, key), str) and put(b, key, 3.0) is None
        assert put(s, 1, "x") is None and put(s, (2,), b"y") is None
        assert s.tolist() == ["ab", "x", "y"]
        assert not passed
        for key in passed_on:
            assert put(b, key, 3.0) == "fallback"
            if type(key) is float:
                with pytest.raises(IndexError):  # NumPy's own error, raised in C
                    get(b, key)
            else:
                got, want = get(b, key), np.asarray(b)[key]
                assert type(got) is ARRAY and np.asarray(got).tobytes() == want.tobytes()
        assert put(b, 1, [1.0, 2.0, 3.0, 4.0]) == "fallback"
        rows, mask = autodev.asarray(np.array([2, 0])), np.asarray(b) > 5
        for key in (rows, mask, (rows, slice(None)), (Ellipsis, [1, 3])):
            got = get(b, key)
            want = np.asarray(b)[key if key is mask else
                                 tuple(np.asarray(k) if type(k) is ARRAY else k
                                       for k in (key if type(key) is tuple else (key,)))]
            assert type(got) is ARRAY and np.asarray(got).tobytes() == want.tobytes()
            assert got._pin is b._pin

        class Like:
            def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
                return np.array([0])

        for key in ([[0, 1]], Like(), (Like(), 0)):
            assert get(b, key) == "fallback"
    assert passed[:len(passed_on) + 2] == [*passed_on, 1, [[0, 1]]] and len(passed) == 10


@compiled_only
def test_version_moves_in_the_storage_slot_as_python_moves_it() -> None:
    """A write moves its storage's version in the slot (Storage's own), as ``storage.version
    += 1`` does: by one, for a view's shared storage; an emptied slot raises Python's
    AttributeError; a storage of a subclass is moved by attribute."""
    from autodev._residency import storage as R

    fast = ARRAY.__dict__["__setitem__"]
    for setter in (fast, fast.fallback):
        a = _vec()
        view = a[1:4]
        for _ in range(3):
            setter(view, 0, 1.0)
        assert a._storage.version == 3
        del a._storage.version
        with pytest.raises(AttributeError, match="version"):
            setter(view, 0, 1.0)

        class Counted(R.Storage):
            __slots__ = ()

        b = _vec()
        b._storage = Counted()
        setter(b, 1, 5.0)
        assert b._storage.version == 1 and b[1] == 5.0


@compiled_only
@pytest.mark.parametrize("name", ["shape", "dtype", "ndim", "size", "itemsize", "nbytes"])
def test_data_attributes_read_as_the_property_does(name: str) -> None:
    """``a.size`` and the like read the data's own attribute in C as the property of
    ``operator.attrgetter("_native.size")`` (the pure-Python class attribute) does: on
    an array, a subclass's instance, a pending array (evaluated first); a write without a
    setter and a delete raise AttributeError with the property's message; the class
    attribute is the descriptor, with its doc."""
    import operator

    from autodev import _fusion

    descriptor = ARRAY.__dict__[name]
    assert type(descriptor).__name__ == "DataAttribute" and getattr(ARRAY, name) is descriptor
    assert descriptor.__doc__ == f"NumPy's ``ndarray.{name}``."
    setter = (lambda a, v: setattr(a._native, "shape", v)) if name == "shape" else None
    reference = property(operator.attrgetter(f"_native.{name}"), setter)

    class Sub(ARRAY):  # type: ignore[misc, valid-type]
        pass

    _fusion.set_floor(16)  # (a chain of 40 elements is deferred)
    try:
        base = autodev.arange(40.0)
        for make, deferred in ((lambda: base.reshape(5, 8), False),
                               (lambda: base.view(Sub), False), (lambda: base * 2 + 1, True)):
            a = make()
            assert (id(a) in _fusion.PENDING) == deferred  # (its slot empty until read)
            assert descriptor.__get__(a, ARRAY) == reference.__get__(make(), ARRAY)
            assert id(a) not in _fusion.PENDING
            assert getattr(a, name) == getattr(np.arange(40.0).reshape(a.shape), name)
    finally:
        _fusion.set_floor(None)
    a = autodev.arange(6.0)
    if name == "shape":
        a.shape = (2, 3)
        assert a.shape == (2, 3) and a._native.shape == (2, 3)
    else:
        with pytest.raises(AttributeError, match=f"property '{name}' of 'ndarray' object has no setter"):
            setattr(a, name, 1)
    with pytest.raises(AttributeError, match="has no deleter"):
        delattr(a, name)


def test_creation_before_any_gpu_probe_runs_at_once() -> None:
    """Before any call has probed for a GPU, a creation call the policy makes on the host
    (``_config.MADE_ON_HOST``) takes the fast path, compiled or Python, without probing:
    the devices stay unsettled, the arrays are NumPy's on the host; under ``policy("gpu")``
    the policy itself probes (so the devices are settled, whatever is found)."""
    code = (
        "import numpy, autodev\n"
        "from autodev._backends import STATE\n"
        "from autodev import _creation\n"
        "calls = []\n"
        "real = _creation.creation_device\n"
        "_creation.creation_device = lambda *a: calls.append(a) or real(*a)\n"
        "made = [autodev.zeros(3), autodev.ones((2, 2), 'int8'), autodev.arange(5),\n"
        "        autodev.eye(2), autodev.array([1.0, 2.5]), autodev.full(2, 7)]\n"
        "want = [numpy.zeros(3), numpy.ones((2, 2), 'int8'), numpy.arange(5), numpy.eye(2),\n"
        "        numpy.array([1.0, 2.5]), numpy.full(2, 7)]\n"
        "same = all(type(m) is autodev.ndarray and m.location.kind == 'cpu'\n"
        "           and m.dtype == w.dtype and m.tolist() == w.tolist() for m, w in zip(made, want))\n"
        "print(same, STATE.settled, len(calls))\n"
        "with autodev.policy('gpu'):\n"
        "    autodev.zeros(3)\n"
        "print(STATE.settled)\n")
    for pure in ("0", "1"):
        env = {**os.environ, "AUTODEV_PURE_PYTHON": pure, "AUTODEV_SIMULATE_GPU": "0"}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, check=True).stdout.split()
        assert out == ["True", "False", "0", "True"], (pure, out)  # no probe, no general path


@compiled_only
def test_the_creation_kinds_follow_the_host_made_flag() -> None:
    """The compiled creation kinds make an array at once where the flag the dispatcher
    sets for it (``STATE.host_made``) and the policy's ``MADE_ON_HOST`` say so, and pass
    the call on otherwise."""
    from autodev._speedups import FastCall

    passed: list[tuple[Any, ...]] = []

    def fallback(*args: Any, **kwargs: Any) -> str:
        passed.append(args)
        return "fallback"

    zeros = FastCall("create", np.zeros, fallback)
    try:
        SPEEDUPS.set_fast(False, False, True)
        assert type(zeros(3)) is ARRAY
        with autodev.policy("gpu"):
            assert zeros(3) == "fallback"
        SPEEDUPS.set_fast(False, False, False)
        assert zeros(3) == "fallback"
    finally:
        STATE.refresh()  # (the flags the dispatcher's state says)
    assert len(passed) == 2


@compiled_only
def test_small_temporaries_stay_on_the_compiled_path() -> None:
    """A temporary operand too small for NumPy's elision (below 256 KiB, the size the C and
    Python agree on) is computed in C as a named one is (``(a + 1) * 2``, ``2 * (a + 1)``,
    ``a * (a + 1)``, ``(a + 1) ** 2``, ``-(a + 1)``), with NumPy's values, and so is a
    temporary view; one that may be reused goes to the Python operator, which reuses it."""
    from autodev._refcounts import _ELIDE_BYTES
    from autodev._speedups import ELIDE_BYTES, calls

    assert ELIDE_BYTES == _ELIDE_BYTES
    expressions = (lambda a: (a + 1) * 2, lambda a: 2 * (a + 1), lambda a: a * (a + 1),
                   lambda a: (a + 1) ** 2, lambda a: -(a + 1))
    for n in (10, 4000, 32_000):  # (32,000 float64: 250 KiB)
        a, host = autodev.arange(float(n)), np.arange(float(n))
        for expression in expressions:
            before = calls()
            got = expression(a)
            assert calls() == before + 2
            assert np.asarray(got).tobytes() == expression(host).tobytes()
    big = autodev.ones(40_000)  # (320 KB: above the elision's size, below the pool's)
    before = calls()
    _ = (big + 1) * 2  # (the product: the Python operator's, into the sum's buffer)
    assert calls() == before + 1
    rows = autodev.ones((2, 40_000))  # a view is no buffer to take: C computes it
    before = calls()
    _ = rows[0] ** 2, rows[1] * 2, -rows[0]
    assert calls() == before + 3


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min"])
def test_a_reduction_with_its_axis_by_position_is_numpys(name: str, monkeypatch: Any) -> None:
    """``np.max(m, 0)`` gives NumPy's answer and error, as ``np.max(m, axis=0)`` does,
    without the general path (more arguments by position still take it)."""
    from autodev import _ufuncs

    general: list[str] = []
    real = _ufuncs.call
    monkeypatch.setattr(_ufuncs, "call", lambda spec, *rest: general.append(spec.name)
                        or real(spec, *rest))
    host = np.arange(1.0, 13.0).reshape(3, 4)
    m = autodev.asarray(host)
    ours, theirs = getattr(autodev, name), getattr(np, name)
    for args, kwargs in (((0,), {}), ((1,), {"keepdims": True}), ((-1,), {}), ((None,), {}),
                         (((0, 1),), {})):
        want, got = theirs(host, *args, **kwargs), ours(m, *args, **kwargs)
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.shape(got) == np.shape(want)
    assert general == []
    with pytest.raises(np.exceptions.AxisError) as raised:
        ours(m, 2)
    with pytest.raises(np.exceptions.AxisError) as expected:
        theirs(host, 2)
    assert str(raised.value) == str(expected.value)
    with pytest.raises(TypeError):
        ours(m, 0, axis=1)  # (the axis twice: Python's own error, as NumPy's)
    try:  # (a second by position: sum's dtype, max's out, which refuses a dtype)
        want = theirs(host, 0, np.float32)
    except TypeError:
        with pytest.raises(TypeError):
            ours(m, 0, np.float32)
    else:
        assert np.asarray(ours(m, 0, np.float32)).dtype == want.dtype


_UFUNC_METHOD_CASES: dict[str, Callable[[], tuple[Any, str, tuple[Any, ...], dict[str, Any]]]] = {
    "add.reduce": lambda: (autodev.add, "reduce", (_vec(),), {}),
    "add.reduce axis": lambda: (autodev.add, "reduce", (_mat(),), {"axis": 1}),
    "maximum.reduce axis by position": lambda: (autodev.maximum, "reduce", (_mat(), 0), {}),
    "add.reduce dtype keepdims": lambda: (autodev.add, "reduce", (_mat(),),
                                          {"dtype": "float32", "keepdims": True}),
    "multiply.reduce initial where": lambda: (autodev.multiply, "reduce", (_vec(),),
                                              {"initial": 2.0, "where": np.arange(6) > 2}),
    "minimum.reduce empty (an error)": lambda: (autodev.minimum, "reduce",
                                                (_vec(n=0),), {}),
    "add.reduce axis error": lambda: (autodev.add, "reduce", (_vec(),), {"axis": 3}),
    "add.reduce out=": lambda: (autodev.add, "reduce", (_mat(),), {"axis": 0,
                                                                   "out": np.empty(3)}),
    "add.reduce out by position": lambda: (autodev.add, "reduce",
                                           (_mat(), 0, None, np.empty(3)), {}),
    "add.reduce of a list": lambda: (autodev.add, "reduce", ([1, 2, 3],), {}),
    "logical_or.reduce bools": lambda: (autodev.logical_or, "reduce", (_vec("bool"),), {}),
    "add.accumulate": lambda: (autodev.add, "accumulate", (_vec("int8"),), {}),
    "multiply.accumulate axis": lambda: (autodev.multiply, "accumulate", (_mat(),),
                                         {"axis": 1}),
    "add.reduceat": lambda: (autodev.add, "reduceat", (_vec(), [0, 2, 4]), {}),
    "add.reduceat indices error": lambda: (autodev.add, "reduceat", (_vec(), [0, 9]), {}),
    "add.reduce of a large array": lambda: (autodev.add, "reduce",
                                            (autodev.ones(1 << 20),), {}),
}


def _mat() -> Any:
    return autodev.array(np.arange(12.0).reshape(4, 3))


@compiled_only
@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
@pytest.mark.parametrize("case", list(_UFUNC_METHOD_CASES))
def test_ufunc_methods_compiled_answer_as_python(case: str, sim: bool) -> None:
    """``ufunc.reduce``, ``accumulate``, ``reduceat``: the compiled path (NumPy's method at
    once on host data below the threads' floor) and the Python method give the same
    outcome (values, dtype, shape, the result's kind, NumPy's error), and NumPy's."""
    def outcome(use_fallback: bool) -> Any:
        ufunc, name, args, kwargs = _UFUNC_METHOD_CASES[case]()
        method = getattr(ufunc, name)
        assert type(method).__name__ == "FastFunction"
        call = method.fallback if use_fallback else method
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                return ("ok", _describe(call(*args, **kwargs)))
            except Exception as error:  # noqa: BLE001 - the error itself is compared
                return ("raised", type(error).__name__, str(error))

    with _mode(sim):
        _host_bounds_known()
        got, want = outcome(False), outcome(True)
    assert got == want
    ufunc, name, args, kwargs = _UFUNC_METHOD_CASES[case]()
    host = tuple(np.asarray(a) if type(a) is ARRAY else a for a in args)
    try:
        expected = getattr(ufunc._np, name)(*host, **kwargs)
    except Exception as error:  # noqa: BLE001
        assert got[0] == "raised" and got[1] == type(error).__name__
    else:
        assert got[0] == "ok"
        described = got[1]
        if isinstance(expected, np.ndarray):
            assert described[0] in ("ndarray", "numpy")
            assert described[1:4] == (expected.dtype.str, expected.shape, expected.tobytes())
        else:
            assert described == (type(expected).__name__, repr(expected))


@compiled_only
def test_ufuncs_are_called_by_vectorcall() -> None:
    """autodev's ufunc, a subclass of functools.partial, takes its base's vectorcall (which
    CPython gives such a subclass itself from 3.12); a class with a call of its own, or
    with no vectorcall base, is left alone; calls keep their answers."""
    import functools

    from autodev._speedups import inherit_vectorcall

    have_vectorcall = 1 << 11  # (Py_TPFLAGS_HAVE_VECTORCALL)
    assert autodev.ufunc.__flags__ & have_vectorcall

    class Called(functools.partial):
        def __call__(self, *args: Any, **kwargs: Any) -> Any:
            return "own"

    assert inherit_vectorcall(Called) is False and Called(len)([1]) == "own"
    assert inherit_vectorcall(type("Plain", (), {})) is False
    with pytest.raises(TypeError):
        inherit_vectorcall(len)  # type: ignore[arg-type]
    v = autodev.asarray(np.arange(4.0))
    assert np.asarray(autodev.add(v, 1.0, dtype=np.float32)).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert autodev.add(v, 1.0, dtype=np.float32).dtype == np.float32
    assert np.asarray(autodev.exp(v)).tobytes() == np.exp(np.arange(4.0)).tobytes()


@compiled_only
def test_the_function_kind_wraps_any_argument_returned_as_python_does() -> None:
    """A NumPy result that is the data of any argument, not only the first: the autodev
    argument itself, as _dispatch.cpu_result returns it (a NumPy argument: its rule, an
    array marked escaped), never a new array aliasing it unseen."""
    from autodev._dispatch import cpu_result
    from autodev._speedups import FastFunction

    second = FastFunction("function", lambda a, b: b, lambda *args: "fallback", cpu_result)
    a, b = _vec(), _vec(n=3)
    with _mode(False):
        assert second(a, b) is b
        held = np.arange(3.0)
        got = second(a, held)
        assert type(got) is ARRAY and got._native is held and got._storage.escaped
        pair = FastFunction("function", lambda a, b: (b, a), lambda *args: "fallback",
                            cpu_result)(a, b)
        assert pair[0] is b and pair[1] is a


def test_cpu_result_gives_back_any_argument_returned() -> None:
    """Python's rule, which the compiled kind follows: a NumPy result that is the data of
    any argument, the first or a later one, is that autodev argument itself; a NumPy
    argument returned is wrapped as escaped, never as new memory."""
    from autodev._dispatch import cpu_result

    a, b, held = _vec(), _vec(n=3), np.arange(3.0)
    assert cpu_result(a._native, (a, b), (a._native, b._native)) is a
    assert cpu_result(b._native, (a, b), (a._native, b._native)) is b
    got = cpu_result(held, (a, held), (a._native, held))
    assert type(got) is ARRAY and got._native is held and got._storage.escaped
