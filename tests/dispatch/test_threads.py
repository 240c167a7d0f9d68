"""The CPU as a parallel device (autodev._parallel): large calls split over threads give
NumPy's results bit for bit, follow the caller's errstate, and obey the ecosystem's
thread limits. Thresholds are lowered here so that small arrays are split too."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import threading
import warnings
from typing import Any, Iterator

import numpy as np
import pytest
import threadpoolctl
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import autodev
from autodev import _parallel as P, _threads as T
from split_everything import split_small_calls

DTYPES = [np.float64, np.float32, np.int32, np.int64, np.uint8, np.complex128, np.bool_]


@pytest.fixture(autouse=True)
def split_small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Split every call of 16 elements or more over 3 threads (whatever this machine's
    cores and profile say)."""
    yield from split_small_calls(monkeypatch)


def _threaded() -> int:
    return int(autodev.stats()["threaded_calls"])


def same(got: Any, want: Any) -> None:
    """Bit for bit: bytes, dtype, shape and memory order (the strides of axes longer than
    one: an axis of length one has no order, and its stride is free)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    assert _order(got) == _order(want)


def _order(a: np.ndarray) -> tuple[int, ...]:
    return tuple(s for s, n in zip(a.strides, a.shape) if n > 1)


# --------------------------------------------------------------------------- elementwise

def _views(draw: Any, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An array of ``shape`` as a contiguous, transposed, strided or reversed view."""
    data = draw(hnp.arrays(dtype, shape, elements=_elements(dtype)))
    kind = draw(st.sampled_from(["c", "f", "step", "reverse"]))
    if kind == "f":
        return np.asfortranarray(data)
    if kind == "step":
        wide = np.repeat(data, 2, axis=-1) if data.ndim else data
        return wide[..., ::2] if data.ndim else data
    if kind == "reverse" and data.ndim:
        return data[::-1][::-1] if data.shape[0] < 2 else np.flip(np.flip(data, 0).copy(), 0)
    return data


def _elements(dtype: Any) -> Any:
    kind = np.dtype(dtype).kind
    if kind == "f":
        return st.floats(-1e3, 1e3, width=32 if dtype == np.float32 else 64)
    if kind == "c":
        return st.complex_numbers(max_magnitude=1e3)
    if kind == "b":
        return st.booleans()
    return st.integers(0, 100)


@st.composite
def operands(draw: Any) -> tuple[np.ndarray, np.ndarray]:
    shape = draw(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=12))
    x = _views(draw, shape, draw(st.sampled_from(DTYPES)))
    cut = draw(st.integers(0, len(shape)))  # y broadcasts over x's leading axes
    y = _views(draw, shape[cut:], draw(st.sampled_from(DTYPES)))
    return x, y


BINARY = [np.add, np.subtract, np.multiply, np.maximum, np.less, np.equal, np.true_divide,
          np.arctan2, np.hypot]
UNARY = [np.sin, np.exp, np.sqrt, np.negative, np.absolute, np.log1p, np.tanh, np.square]


@settings(max_examples=60, deadline=None)
@given(operands(), st.sampled_from(BINARY))
def test_binary_ufuncs_are_bit_identical(xy: tuple[np.ndarray, np.ndarray], ufunc: Any) -> None:
    x, y = xy
    with np.errstate(all="ignore"):
        try:
            want = ufunc(x, y)
        except TypeError as err:
            try:  # NumPy's error, or left to NumPy (too small to split)
                declined = P.ufunc_call(ufunc, "elementwise", (x, y), {})
            except type(err):
                return
            assert declined is P.DECLINED
            return
        got = P.ufunc_call(ufunc, "elementwise", (x, y), {})
    if got is not P.DECLINED:
        same(got, want)


@pytest.mark.parametrize("ufunc,dtype", [(np.arctan2, np.float32), (np.arctan2, np.float64),
                                         (np.power, np.float32), (np.power, np.float64),
                                         (np.multiply, np.complex64),
                                         (np.multiply, np.complex128)])
def test_reversed_views_are_bit_identical(ufunc: Any, dtype: Any) -> None:
    """NumPy reverses a negative-stride axis for its one call and takes its SIMD loop,
    whose arctan2, power and complex product differ by an ulp from the strided loop a
    block would take: such operands are not split (found with AVX-512)."""
    rng = np.random.default_rng(0)
    x, y = ((rng.uniform(0.1, 0.9, (6, 40)) + 1j * rng.uniform(0.1, 0.9, (6, 40))
             ).astype(dtype)[..., ::-1] if np.dtype(dtype).kind == "c" else
            rng.uniform(0.1, 0.9, (6, 40)).astype(dtype)[..., ::-1] for _ in range(2))
    for args in ((x, y), (x, y.copy()), (x.copy(), y)):
        got = P.ufunc_call(ufunc, "elementwise", args, {})
        if got is not P.DECLINED:
            same(got, ufunc(*args))


@settings(max_examples=60, deadline=None)
@given(operands(), st.sampled_from(UNARY))
def test_unary_ufuncs_are_bit_identical(xy: tuple[np.ndarray, np.ndarray], ufunc: Any) -> None:
    x = xy[0]
    with np.errstate(all="ignore"):
        try:
            want = ufunc(x)
        except TypeError:
            return
        got = P.ufunc_call(ufunc, "transcendental", (x,), {})
    if got is not P.DECLINED:
        same(got, want)


def test_large_calls_are_split_and_match_numpy() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.random((300, 70)), rng.random(70).astype(np.float32)
    before = _threaded()
    same(P.ufunc_call(np.add, "elementwise", (a, b), {}), a + b)
    same(P.ufunc_call(np.sin, "transcendental", (a.T,), {}), np.sin(a.T))
    same(P.ufunc_call(np.multiply, "elementwise", (a[::-1, ::3], 2.5), {}), a[::-1, ::3] * 2.5)
    same(P.ufunc_call(np.add, "elementwise", (a, 1), {"dtype": np.float32}),
         np.add(a, 1, dtype=np.float32))
    assert _threaded() == before + 4


def test_operators_and_functions_split_through_autodev() -> None:
    rng = np.random.default_rng(1)
    a, b = rng.random((200, 50)), rng.random((200, 50))
    x, y = autodev.asarray(a), autodev.asarray(b)
    before = _threaded()
    with autodev.policy("cpu"):  # (with a GPU usable, these calls stay on the host)
        _operators_and_functions(x, y, a, b)
    assert _threaded() >= before + 6
    with autodev.policy("cpu"), autodev.trace() as t:
        autodev.sqrt(x)
    assert t[-1].threads == 3 and "threads 3" in t[-1].line()


def _operators_and_functions(x: Any, y: Any, a: np.ndarray, b: np.ndarray) -> None:
    same((x * y + 1)._native, a * b + 1)
    same(autodev.exp(x)._native, np.exp(a))
    same((-x)._native, -a)
    same(autodev.add(x, y, out=autodev.empty_like(x))._native, a + b)
    x += y
    a += b
    same(x._native, a)


def test_an_in_place_operator_below_its_familys_floor_keeps_the_hot_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``a += b`` allocates nothing, so only its own family's floor (or fusion's) sends it
    to the general path, not the least floor of all families: ``+=`` (elementwise, its floor
    set out of reach) runs NumPy's call at once, ``**=`` (transcendental, floor 16) splits."""
    from autodev import _operators
    from autodev._backends import STATE

    autodev.ones(2) + 1  # (the first call settles the devices)
    if not STATE.fast:
        pytest.skip("a GPU is usable: the decision, not the floors, sends calls on")
    general: list[str] = []

    def call(spec: Any, args: Any, kwargs: Any) -> Any:
        general.append(spec.name)
        return real(spec, args, kwargs)

    real = _operators.call
    monkeypatch.setattr(_operators, "call", call)
    monkeypatch.setattr(T, "_CROSSOVER", [{**{f: 16.0 for f in T.FAMILIES},
                                           "elementwise": None}])
    T._changed()
    T.floor("elementwise")  # (the floors computed: the hot paths learn them)
    rng = np.random.default_rng(0)
    a, b = rng.random(1000), rng.random(1000)
    x, y = autodev.asarray(a.copy()), autodev.asarray(b)
    x += y
    assert general == [] and _threaded() == 0
    x **= 1.5
    assert general == ["power"] and _threaded() == 1
    want = a.copy()
    want += b
    want **= 1.5
    same(x, want)


def test_in_place_out_aliasing_an_input() -> None:
    a = np.arange(1000.0)
    want = a + a[::-1].copy()
    got = P.ufunc_call(np.add, "elementwise", (a, a[::-1].copy()), {"out": a})
    assert got is a
    same(a, want)


def test_partly_overlapping_out_is_left_to_numpy() -> None:
    a = np.arange(1000.0)
    b = a.copy()
    assert P.ufunc_call(np.add, "elementwise", (a[1:], a[:-1]), {"out": a[:-1]}) \
        is P.DECLINED
    np.add(b[1:], b[:-1], out=b[:-1])
    x = autodev.asarray(a)
    autodev.add(x[1:], x[:-1], out=x[:-1])
    same(x._native, b)


def test_where_keeps_untouched_elements() -> None:
    rng = np.random.default_rng(2)
    a, mask = rng.random((100, 30)), rng.random(30) > 0.5
    out, want = np.full((100, 30), 7.0), np.full((100, 30), 7.0)
    np.sin(a, out=want, where=mask)
    assert P.ufunc_call(np.sin, "transcendental", (a,), {"out": out, "where": mask}) is out
    same(out, want)


def test_what_is_never_split() -> None:
    objects = np.array([1.5] * 100, dtype=object)
    assert P.ufunc_call(np.add, "elementwise", (objects, 1), {}) is P.DECLINED
    assert P.ufunc_call(np.add, "elementwise", (np.ones(0), 1.0), {}) is P.DECLINED
    assert P.ufunc_call(np.divmod, "elementwise", (np.ones(100), 3.0), {}) is P.DECLINED
    masked = np.ma.masked_array(np.ones(100))
    assert P.ufunc_call(np.add, "elementwise", (masked, 1.0), {}) is P.DECLINED
    assert P.ufunc_call(np.matmul, "matmul", (np.ones((40, 40)), np.ones((40, 40))), {}) \
        is P.DECLINED
    with np.errstate(all="print"):
        assert P.ufunc_call(np.add, "elementwise", (np.ones(100), 1.0), {}) is P.DECLINED


def test_an_out_of_another_shape_is_left_to_numpy() -> None:
    a, out = np.ones((40, 3)), np.zeros((50, 3))
    assert P.ufunc_call(np.add, "elementwise", (a, 1.0), {"out": out}) is P.DECLINED
    assert not out.any()  # nothing written: NumPy's own call raises before writing
    with pytest.raises(ValueError):
        autodev.add(autodev.asarray(a), 1.0, out=autodev.asarray(out))


def test_type_errors_are_numpys_and_raise_before_any_thread() -> None:
    a = np.arange(100, dtype=np.int64)
    with pytest.raises(TypeError) as numpy_error:
        np.add(a, 1.5, out=a)
    with pytest.raises(TypeError) as error:
        P.ufunc_call(np.add, "elementwise", (a, 1.5), {"out": a})
    assert type(error.value) is type(numpy_error.value)
    assert str(error.value) == str(numpy_error.value)
    with pytest.raises(OverflowError):
        P.ufunc_call(np.add, "elementwise", (np.zeros(100, np.uint8), 300), {})
    out = np.zeros(100)
    with pytest.raises(TypeError) as numpy_error:
        np.add(a, 1.0, out=out, where=np.arange(100.0))
    with pytest.raises(TypeError) as error:
        P.ufunc_call(np.add, "elementwise", (a, 1.0), {"out": out, "where": np.arange(100.0)})
    assert str(error.value) == str(numpy_error.value) and not out.any()
    assert (a == np.arange(100)).all()


# --------------------------------------------------------------------------- reductions

@settings(max_examples=60, deadline=None)
@given(hnp.arrays(st.sampled_from([np.float64, np.float32, np.int64, np.complex64]),
                  hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=40),
                  elements=st.integers(-50, 50)),
       st.sampled_from([np.add, np.multiply, np.maximum, np.minimum]), st.data())
def test_reductions_split_along_kept_axes(a: np.ndarray, ufunc: Any, data: Any) -> None:
    a = a * np.asarray(1.1, a.dtype) if a.dtype.kind in "fc" else a
    if data.draw(st.booleans()):
        a = a.T
    axes = data.draw(st.lists(st.integers(0, a.ndim - 1), min_size=1, unique=True))
    keepdims = data.draw(st.booleans())
    with np.errstate(all="ignore"):
        try:
            want = ufunc.reduce(a, axis=tuple(axes), keepdims=keepdims)
        except ValueError:
            return
        got = P.reduce_call(ufunc, a, tuple(axes), keepdims=keepdims)
    if got is not P.DECLINED:  # (every axis: split as the tests below check)
        same(got, np.asarray(want))


def _rounding(rng: np.random.Generator, n: int, dtype: Any) -> np.ndarray:
    """Values of many magnitudes and both signs: their sum rounds at most additions, so
    that a sum split anywhere but along NumPy's own tree gives other bits."""
    return (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 6, n)).astype(dtype)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([np.float64, np.float32]), st.integers(257, 6000), st.integers(2, 5),
       st.integers(0, 2**32 - 1), st.sampled_from(["1-d", "2-d", "3-d"]))
def test_a_float_sum_splits_along_numpys_pairwise_tree(dtype: Any, n: int, threads: int,
                                                       seed: int, layout: str) -> None:
    """A full float32 or float64 sum of a C-contiguous array is split along the tree of
    NumPy's pairwise summation: NumPy's bits for any length and thread count."""
    T.POOL.default = threads
    T._changed()
    a = _rounding(np.random.default_rng(seed), n, dtype)
    if layout != "1-d":
        a = a[: n - n % 6].reshape((-1, 6) if layout == "2-d" else (-1, 2, 3))
    before = _threaded()
    got = P.reduce_call(np.add, a, None)
    assert got is not P.DECLINED and _threaded() == before + 1
    same(got, np.add.reduce(a, axis=None))
    same(P.reduce_call(np.add, a, tuple(range(a.ndim)), keepdims=True),
         np.add.reduce(a, axis=None, keepdims=True))


def test_the_tree_is_what_keeps_the_bits() -> None:
    """The check above can fail: the same sum cut in halves anywhere but where NumPy's
    pairwise summation cuts gives other bits, here and for most such arrays."""
    a = _rounding(np.random.default_rng(7), 10_001, np.float32)
    half = (10_001 // 2) - (10_001 // 2) % 8
    assert np.add.reduce(a[:half]) + np.add.reduce(a[half:]) == np.add.reduce(a)
    for cut in (half + 8, half - 64, half + 100):  # (NumPy's tree, moved by whole blocks)
        assert np.add.reduce(a[:cut]) + np.add.reduce(a[cut:]) != np.add.reduce(a)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(st.sampled_from([np.int8, np.int32, np.int64, np.uint8, np.uint64,
                                   np.bool_]), st.integers(32, 3000)),
       st.sampled_from([np.add, np.multiply]), st.integers(2, 5))
def test_an_integer_reduction_splits_anywhere(a: np.ndarray, ufunc: Any, threads: int) -> None:
    """Integer sums and products (wrapping as NumPy's do, in the dtype NumPy accumulates
    in) are exact in any order: every full one is split."""
    T.POOL.default = threads
    T._changed()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (NumPy's reduction wraps silently: so must this)
        got = P.reduce_call(ufunc, a, None)
    assert got is not P.DECLINED
    same(got, ufunc.reduce(a, axis=None))


def test_what_a_full_reduction_leaves_to_numpy() -> None:
    """Not split: a float sum of another layout (NumPy then sums row by row), a float16
    or complex sum, a float product, any maximum or minimum (cheaper than a split), a sum cast to another dtype, a
    sum NumPy adds whole (at most its pairwise block), and out=, where= or initial=."""
    a = np.random.default_rng(3).random((300, 300))
    declined = [
        (np.add, a.T, {}), (np.add, a[:, ::2], {}), (np.add, a.astype(np.float16), {}),
        (np.add, a.astype(np.complex128), {}), (np.multiply, a, {}), (np.maximum, a, {}),
        (np.minimum, np.arange(5000), {}),
        (np.add, a.astype(np.float32), {"dtype": np.float64}),
        (np.add, np.arange(256, dtype=np.int64) > 3, {"dtype": np.float64}),
        (np.add, a.reshape(-1)[:128], {}), (np.add, a, {"initial": 1.0}),
        (np.add, a, {"where": a > 0.5}), (np.add, a, {"out": np.zeros(())}),
    ]
    for ufunc, x, keywords in declined:
        assert P.reduce_call(ufunc, x, None, **keywords) is P.DECLINED, (ufunc, x.dtype)


def test_full_sums_and_means_split_through_autodev() -> None:
    """``autodev.sum(a)``, ``a.sum()``, ``numpy.sum(a)``, ``a.prod()`` of integers and
    ``mean`` of floats reach the split, with NumPy's results."""
    h = _rounding(np.random.default_rng(5), 5000, np.float32)
    x = autodev.asarray(h.copy())
    for got, want in [(lambda: autodev.sum(x), h.sum()), (lambda: x.sum(), h.sum()),
                      (lambda: np.sum(x), np.sum(h)), (lambda: autodev.mean(x), np.mean(h)),
                      (lambda: x.mean(), h.mean()), (lambda: np.mean(x), np.mean(h)),
                      (lambda: autodev.asarray(h > 0).sum(), (h > 0).sum()),
                      (lambda: autodev.asarray(h.astype(np.int16)).prod(),
                       h.astype(np.int16).prod())]:
        before = _threaded()
        same(got(), want)
        assert _threaded() == before + 1
    same(autodev.mean(autodev.asarray(h.astype(np.int64))), np.mean(h.astype(np.int64)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_reductions_along_axes_split_through_methods_and_functions(dtype: Any) -> None:
    """``a.sum(axis=2)``, ``a.max(0, keepdims=True)``, ``a.mean(axis=(0, 2))`` and the
    like, as methods and as functions: split along a kept axis, with NumPy's bits."""
    h = _rounding(np.random.default_rng(6), 4 * 6 * 5, dtype).reshape(4, 6, 5)
    x = autodev.asarray(h.copy())
    cases = [("sum", (2,), {}), ("sum", (), {"axis": 0, "keepdims": True}),
             ("prod", (1,), {}), ("max", (0,), {"keepdims": True}), ("min", (-1,), {}),
             ("mean", (2,), {}), ("mean", (), {"axis": (0, 2)}),
             ("mean", (), {"axis": 1, "keepdims": True}), ("mean", (-1,), {})]
    for name, args, kwargs in cases:
        want = getattr(h, name)(*args, **kwargs)
        for got in (lambda: getattr(x, name)(*args, **kwargs),
                    lambda: getattr(autodev, name)(x, *args, **kwargs)):
            before = _threaded()
            same(got(), want)
            assert _threaded() == before + 1, (name, args, kwargs)


def test_where_splits_with_numpys_values_dtype_and_layout() -> None:
    """``where(condition, x, y)`` of a boolean condition splits (fill, then a masked copy
    a block), with NumPy's bits, dtype and memory order: scalars (300 into int8 wraps as
    NumPy's where wraps it), broadcasting, casts, NaN and -0.0, views; a condition of
    another dtype, and NumPy's errors, as NumPy's."""
    rng = np.random.default_rng(10)
    h = rng.standard_normal((30, 20))
    h[::7, ::3] = np.nan
    h[1::5] = -0.0
    c = rng.random((30, 20)) > 0.5
    i8 = rng.integers(-100, 100, (30, 20)).astype(np.int8)
    cases = [(c, h, 0.0), (c, 2, h), (c[:, :1], h, h[:1]), (c, h.astype(np.float32), 0.1),
             (c, i8, 7), (c, i8, h), (c, np.asfortranarray(h), -1.5), (c.T, h.T, 1j),
             (c[::-1], h[::-1, ::2].repeat(2, axis=1), h), (c, h > 0, i8), (c, i8, 300),
             (c, np.float32(0.1), i8), (c, True, 2.5), (c, i8.astype(np.uint8), -1)]
    for cond, x, y in cases:
        want = np.where(cond, x, y)
        before = _threaded()
        got = autodev.where(*(autodev.asarray(v) if isinstance(v, np.ndarray) else v
                              for v in (cond, x, y)))
        assert _threaded() == before + 1, (cond.shape, np.result_type(want))
        same(got, want)
    same(autodev.where(autodev.asarray(h), h, 0.0), np.where(h, h, 0.0))  # (not split)
    with pytest.raises(ValueError, match="broadcast"):
        autodev.where(autodev.asarray(c), autodev.asarray(h[:3]), 0.0)


def test_a_where_below_the_floor_never_reaches_the_split(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """A ``where`` below the floor (16 here) runs NumPy's own call: the compiled path calls
    ``numpy.where`` itself and the backend's callable looks at the sizes first, so no
    small call pays the split's checks (a broadcast, a probe: 3.3 us on 100 elements, 5x
    NumPy's call, before this was so)."""
    from autodev import _threaded

    seen: list[int] = []
    real = _threaded.where_call

    def where_call(*args: Any) -> Any:
        seen.append(1)
        return real(*args)

    monkeypatch.setattr(_threaded, "where_call", where_call)
    c, h = np.arange(8) > 3, np.arange(8.0)
    same(autodev.where(autodev.asarray(c), autodev.asarray(h), 0.0), np.where(c, h, 0.0))
    assert seen == []
    big = np.arange(64) > 3
    same(autodev.where(autodev.asarray(big), 1.0, 0.0), np.where(big, 1.0, 0.0))
    assert seen == [1]


def test_a_masked_fill_splits_with_numpys_values_and_errors() -> None:
    """``a[mask] = value`` with a boolean mask of the array's shape and a scalar value
    splits (a masked copy a block), converting the value as NumPy's assignment does: its
    bits, its errors (300 into int8, NaN into int64, 1j into float64) and warnings
    (overflow in the cast); other keys and values as NumPy's own assignment."""
    rng = np.random.default_rng(11)
    base = rng.standard_normal((30, 20))
    mask = rng.random((30, 20)) > 0.5
    for dtype, value in [(np.float64, 0.0), (np.float64, np.nan), (np.int32, 1.7),
                         (np.int8, np.int64(300)), (np.bool_, 2), (np.complex64, 1 + 2j),
                         (np.float32, -0.0), (np.uint8, True), (np.int8, 300),
                         (np.int64, np.nan), (np.float64, 1j), (np.float32, 1e300)]:
        for layout in (lambda v: v, np.asfortranarray, lambda v: v.T):
            h = layout(base.astype(dtype) if dtype is not np.bool_ else base > 0)
            m = layout(mask)
            x = autodev.asarray(h.copy(order="K"))
            want = h.copy(order="K")
            try:
                with warnings.catch_warnings(record=True) as numpy_warned:
                    warnings.simplefilter("always")
                    want[m] = value
            except Exception as error:  # noqa: BLE001 (its type is what autodev must raise)
                with pytest.raises(type(error)):
                    x[autodev.asarray(m)] = value
                same(x, h)
                continue
            before = _threaded()
            with warnings.catch_warnings(record=True) as warned:
                warnings.simplefilter("always")
                x[autodev.asarray(m)] = value
            assert _threaded() == before + 1, (dtype, value)
            assert [w.category for w in warned] == [w.category for w in numpy_warned]
            same(x, want)
    x = autodev.asarray(base.copy())
    x[mask[:, 0]] = 1.5  # (a mask of the leading axis: NumPy's own assignment)
    want = base.copy()
    want[mask[:, 0]] = 1.5
    same(x, want)
    x[autodev.asarray(mask)] = np.arange(int(mask.sum()), dtype=float)  # (an array value)
    want[mask] = np.arange(int(mask.sum()), dtype=float)
    same(x, want)


def test_a_reduction_outer_to_its_split_needs_long_runs(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """``x.sum(axis=0)`` of a C-ordered matrix adds whole rows: split along its columns,
    each block would add short parts of them (2.6-5.6x NumPy's time measured with parts of
    25-250 elements), so it splits only where a block's part of a row spans
    ``_INNER_RUN_BYTES``. A reduction along the inner axis splits along the outer one."""
    monkeypatch.setattr(P, "_INNER_RUN_BYTES", 1 << 19)
    rng = np.random.default_rng(9)
    for shape, axis, split in [((64, 40), 0, False), ((64, 40), 1, True),
                               ((4, 1 << 17), 0, False), ((4, 1 << 18), 0, True),
                               ((6, 5, 40), 0, False), ((6, 5, 40), 2, True)]:
        h = _rounding(rng, math.prod(shape), np.float64).reshape(shape)
        x = autodev.asarray(h.copy())
        for got in (lambda: x.sum(axis=axis), lambda: autodev.max(x, axis=axis),
                    lambda: x.mean(axis=axis)):
            before = _threaded()
            result = got()
            assert (_threaded() > before) == split, (shape, axis)
        same(x.sum(axis=axis), h.sum(axis=axis))
        same(x.max(axis=axis), h.max(axis=axis))
        same(x.mean(axis=axis), h.mean(axis=axis))
        assert result.shape == h.mean(axis=axis).shape


def test_an_array_of_the_face_keeps_it_when_split() -> None:
    """The array-API face's methods split as NumPy's do, and their results stay arrays of
    the face (0-d ones too)."""
    import autodev.array_api as xp

    h = _rounding(np.random.default_rng(8), 4 * 6 * 50, np.float64).reshape(4, 6, 50)
    a = xp.asarray(h.copy())
    for name, kwargs in [("sum", {"axis": 2}), ("mean", {"axis": 0}), ("max", {"axis": 1}),
                         ("sum", {}), ("mean", {})]:
        before = _threaded()
        got = getattr(a, name)(**kwargs)
        assert _threaded() == before + 1, (name, kwargs)
        assert type(got) is autodev.ndarray and got._face, (name, kwargs)
        same(got._native, getattr(h, name)(**kwargs))


def test_a_mean_the_split_leaves_to_numpy() -> None:
    """A mean with ``dtype``, ``out`` or ``where``, of integers, or over an empty axis runs
    as NumPy's own, with its results, warnings and errors."""
    h = np.arange(60.0).reshape(3, 4, 5)
    x = autodev.asarray(h.copy())
    same(x.mean(axis=1, dtype=np.float32), h.mean(axis=1, dtype=np.float32))
    same(x.mean(axis=0, where=h > 3), h.mean(axis=0, where=h > 3))
    same(autodev.asarray(h.astype(np.int64)).mean(axis=2), h.astype(np.int64).mean(axis=2))
    out = autodev.empty((4, 5))
    assert x.mean(axis=0, out=out) is out
    same(out, h.mean(axis=0))
    empty = np.zeros((40, 0))
    with np.errstate(invalid="ignore"):
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            want = empty.mean(axis=1)
        with pytest.warns(RuntimeWarning, match="Mean of empty slice"):
            same(autodev.asarray(empty).mean(axis=1), want)
    with pytest.raises(np.exceptions.AxisError):
        x.mean(axis=3)
    with pytest.raises(TypeError):
        x.mean(axis=1, keepdims=True, bogus=1)


def test_a_broadcast_result_is_split_by_its_own_size() -> None:
    """``x[:, None] - c``: each operand below the floor (16 here), the result above it is
    split, through operators, ufuncs and NumPy's functions; a result below it is not."""
    rng = np.random.default_rng(7)
    a, c = rng.random((4, 1)), rng.random((1, 5))
    x, y = autodev.asarray(a.copy()), autodev.asarray(c.copy())
    for got, want in [(lambda: x - y, a - c), (lambda: y * x, c * a),
                      (lambda: autodev.subtract(x, y), a - c),
                      (lambda: autodev.arctan2(x, c), np.arctan2(a, c)),
                      (lambda: np.add(x, y), a + c), (lambda: 1.5 - x - y, 1.5 - a - c)]:
        before = _threaded()
        same(got(), want)
        assert _threaded() > before
    small = autodev.asarray(a[:3].copy())
    before = _threaded()
    same(small - y, a[:3] - c)  # (15 elements)
    assert _threaded() == before
    with pytest.raises(ValueError, match="broadcast"):
        autodev.asarray(rng.random((4, 6))) - autodev.asarray(rng.random((5, 1)).T)


def test_a_subclass_sum_calling_its_base_is_split_once() -> None:
    """``a.sum()`` of a large array runs as ``autodev.sum(a)``, which hands a subclass to
    its own ``sum``: a subclass whose ``sum`` calls the base's is still summed, once."""
    class Mine(autodev.ndarray):
        def sum(self, *args: Any, **kwargs: Any) -> Any:
            return super().sum(*args, **kwargs) * 2

    h = _rounding(np.random.default_rng(2), 5000, np.float64)
    x = autodev.asarray(h.copy()).view(Mine)
    same(x.sum(), h.sum() * 2)
    same(np.sum(x), h.sum() * 2)


def test_a_full_sum_warns_once_as_numpys() -> None:
    """An overflow in a part, or only where the parts' sums are added, is NumPy's one
    warning (or its FloatingPointError), once."""
    in_a_part = np.full(4000, 3e38, np.float32)
    where_added = np.zeros(4000, np.float32)
    where_added[[0, -1]] = 3e38
    for a in (in_a_part, where_added):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            same(P.reduce_call(np.add, a, None), np.float32(np.inf))
        assert [str(w.message) for w in seen] == ["overflow encountered in reduce"]
        with np.errstate(over="raise"), pytest.raises(FloatingPointError,
                                                      match="overflow encountered in reduce"):
            P.reduce_call(np.add, a, None)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(over="ignore"):
                same(P.reduce_call(np.add, a, None), np.float32(np.inf))


def test_a_mask_of_another_shape_is_left_to_numpy() -> None:
    a, out = np.ones((300, 30)), np.zeros(30)
    mask = np.ones((200, 30), bool)
    assert P.reduce_call(np.add, a, 0, out=out, where=mask) is P.DECLINED
    assert not out.any()
    with pytest.raises(ValueError):
        np.add.reduce(a, 0, out=out, where=mask)


def test_a_casting_reduction_is_left_to_numpy() -> None:
    a = np.ones((300, 300), np.float32)
    assert P.reduce_call(np.add, a, 0, dtype=np.float64) is P.DECLINED
    assert P.reduce_call(np.add, np.ones((300, 300), np.int8), 0) is P.DECLINED


# --------------------------------------------------------------------------- errstate

def _divide_by_zero_late() -> tuple[np.ndarray, np.ndarray]:
    """Operands whose only division by zero falls in the last block."""
    a, b = np.ones(1000), np.ones(1000)
    b[-1] = 0.0
    return a, b


def test_a_warning_appears_once_as_numpys() -> None:
    a, b = _divide_by_zero_late()
    with warnings.catch_warnings(record=True) as numpy_seen:
        warnings.simplefilter("always")
        want = np.divide(a, b)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = autodev.divide(autodev.asarray(a), autodev.asarray(b))
    same(got._native, want)
    assert [str(w.message) for w in seen] == [str(w.message) for w in numpy_seen] \
        == ["divide by zero encountered in divide"]
    assert seen[0].category is RuntimeWarning and seen[0].filename == __file__


def test_errstate_raise_ignore_and_call_hold_in_every_block() -> None:
    a, b = _divide_by_zero_late()
    before = _threaded()
    with np.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero encountered in divide"):
            P.ufunc_call(np.divide, "elementwise", (a, b), {})
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        P.ufunc_call(np.divide, "elementwise", (a, b), {})
    calls: list[tuple[Any, ...]] = []
    numpy_calls: list[tuple[Any, ...]] = []
    with np.errstate(all="call", call=lambda *args: calls.append(args)):
        P.ufunc_call(np.divide, "elementwise", (a - 1, b), {})
    with np.errstate(all="call", call=lambda *args: numpy_calls.append(args)):
        np.divide(a - 1, b)
    assert calls == numpy_calls and calls
    assert _threaded() == before + 3


def test_errors_in_several_blocks_are_reported_once_in_numpys_order() -> None:
    a, b = np.ones(1000), np.ones(1000)
    b[5], a[-5], b[-5] = 0.0, 0.0, 0.0  # divide by zero first, invalid value last
    for order in (slice(None), slice(None, None, -1)):
        with warnings.catch_warnings(record=True) as numpy_seen:
            warnings.simplefilter("always")
            np.divide(a[order], b[order])
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            P.ufunc_call(np.divide, "elementwise", (a[order], b[order]), {})
        assert [str(w.message) for w in seen] == [str(w.message) for w in numpy_seen]


def test_a_warning_made_an_error_by_the_filters() -> None:
    a, b = _divide_by_zero_late()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            autodev.divide(autodev.asarray(a), autodev.asarray(b))


# --------------------------------------------------------------------------- the ecosystem

def test_threadpoolctl_lists_and_limits_the_pool() -> None:
    info = [i for i in threadpoolctl.threadpool_info() if i["internal_api"] == "autodev"]
    assert len(info) == 1 and info[0]["num_threads"] == 3
    a = np.ones(1000)
    with threadpoolctl.threadpool_limits(1):
        assert P.ufunc_call(np.add, "elementwise", (a, a), {}) is P.DECLINED
        # (only calls large enough for the host buffer pool leave the hot path)
        assert T.least_floor() == autodev._host_buffers.POOLED_FROM
    with threadpoolctl.threadpool_limits(2, user_api="autodev"):
        assert T.POOL.threads == 2
    with threadpoolctl.threadpool_limits(1, user_api="blas"):
        assert P.ufunc_call(np.add, "elementwise", (a, a), {}) is not P.DECLINED
    assert T.POOL.threads == 3


def test_only_the_main_thread_splits() -> None:
    a = np.ones(1000)
    found: list[Any] = []
    worker = threading.Thread(target=lambda: found.append(
        P.ufunc_call(np.add, "elementwise", (a, a), {})))
    worker.start()
    worker.join()
    assert found == [P.DECLINED]


def _child(code: str, **env: str) -> str:
    """``code``'s output in a new process with ``env`` and no host buffer pool (whose
    size also sends calls to the general path: tests/test_host_buffers.py)."""
    environ = {k: v for k, v in os.environ.items()
               if k not in ("AUTODEV_NUM_THREADS", "OMP_NUM_THREADS")}
    environ["AUTODEV_HOST_POOL"] = "0"
    return subprocess.run([sys.executable, "-c", code], env={**environ, **env},
                          capture_output=True, text=True, check=True).stdout.strip()


def test_thread_count_from_the_environment() -> None:
    code = "from autodev import _threads as T; print(T.POOL.threads, T.least_floor() == T.NEVER)"
    assert _child(code, AUTODEV_NUM_THREADS="1") == "1 True"
    assert _child(code, OMP_NUM_THREADS="5,2") == "5 False"
    assert _child(code, OMP_NUM_THREADS="5", AUTODEV_NUM_THREADS="2") == "2 False"
    bad = subprocess.run([sys.executable, "-c", "import autodev"], capture_output=True,
                         text=True, env={**os.environ, "AUTODEV_NUM_THREADS": "many"})
    assert bad.returncode != 0 and "AUTODEV_NUM_THREADS must be a positive integer" in bad.stderr


def test_one_thread_keeps_the_hot_path() -> None:
    code = ("import autodev as np; from autodev import _threads as T\n"
            "a = np.ones(10**6); b = a + a; c = np.sin(a)\n"
            "print(np.stats()['threaded_calls'], T.least_floor() == T.NEVER)")
    assert _child(code, AUTODEV_NUM_THREADS="1") == "0 True"


# --------------------------------------------------------------------------- profile, calibration

def test_the_crossover_is_where_splitting_pays_from_then_on() -> None:
    from autodev._calibrate.threads import crossover

    points = {"n": [1e5, 1e6, 1e7, 1e8], "single": [1, 10, 100, 1000],
              "split": [3, 8, 120, 600]}
    assert crossover(points) == 1e8  # 1e6 paid, but 1e7 did not
    points["split"][2] = 60
    assert crossover(points) == 1e6
    assert crossover({"n": [1e6], "single": [1.0], "split": [1.0]}) is None


def test_calibration_measures_threads() -> None:
    from autodev._calibrate.threads import measure_threads

    section = measure_threads(0.05, quick=True, threads=2)
    assert section["count"] == 2 and set(section["crossover"]) == set(T.FAMILIES)
    points = section["measurements"]["elementwise"]
    assert points["n"] and len(points["n"]) == len(points["single"]) == len(points["split"])
    assert measure_threads(1.0, threads=1)["crossover"] == {f: None for f in T.FAMILIES}


def test_profile_threads_section_is_validated() -> None:
    from autodev._cost import profile as _profile

    good = _profile.embedded_default()
    assert set(good["threads"]["crossover"]) == set(T.FAMILIES)
    for bad in ({"crossover": {"elementwise": -1}}, {"crossover": {"nope": 1e6}},
                {"count": 0, "crossover": {}}, {"crossover": []}, []):
        with pytest.raises(_profile.ProfileError, match="threads"):
            _profile.validate(dict(good, threads=bad), "test")
    _profile.validate(dict(good, threads={"count": 4, "crossover": {"reduction": None}}), "t")


def test_floors_follow_the_profile_and_the_thread_count(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(T, "MIN_BLOCK", 32768)
    floors = T.floors_for({"elementwise": 5e6, "transcendental": 10.0, "reduction": None}, 4)
    assert floors == {"elementwise": 5_000_000, "transcendental": 65536, "reduction": T.NEVER}
    assert set(T.floors_for({"elementwise": 5e6}, 1).values()) == {T.NEVER}
    threads = autodev.info()["threads"]
    assert threads["count"] == 3 and set(threads["floors"]) == set(T.FAMILIES)
    # (a full sum splits from twice the reduction floor: info says so, and the split does)
    assert threads["total"] == T.TOTAL_FLOORS * threads["floors"]["reduction"]
    T._changed()
    least = T.TOTAL_FLOORS * T.floor("reduction")
    assert T.total_from() == least
    part = _rounding(np.random.default_rng(1), least - 1, np.float64)
    assert P.total_call(np.add, part) is P.DECLINED
    assert P.total_call(np.add, np.append(part, 1.0)) is not P.DECLINED


def test_a_family_never_split_reads_the_floors_once() -> None:
    """The floor of a family with none (``copy``, ``matmul``) is NEVER once the floors are
    computed, without computing them again: that told every listener the floors had
    changed, and so emptied the table of host bounds each time a call of another such
    family read its own (a GPU usable: dot, concatenate and sort alternated at 7 us a
    call, every bound recomputed)."""
    from autodev._cost.cache import HOST_FLOOR_WORK, host_floor_work
    from autodev._cost.families import WORK

    told: list[int] = []
    T._changed()
    T.LISTENERS.append(told.append)
    try:
        assert T.floor("copy") == T.NEVER and len(told) == 1  # (computed once, here)
        assert T.floor("matmul") == T.floor("copy") == T.NEVER and len(told) == 1
        assert T.floor("elementwise") == T.FLOORS["elementwise"] and len(told) == 1
        with autodev.testing.simulated_gpu():
            for family in WORK:
                host_floor_work(family)
            assert set(HOST_FLOOR_WORK) == set(WORK) and len(told) == 1
    finally:
        T.LISTENERS.remove(told.append)


@pytest.mark.parametrize("name", ["fft", "ifft", "rfft", "fft2", "irfft2", "fftn", "hfft",
                                  "dct", "dstn"])
def test_scipy_transforms_run_on_scipys_threads(name: str) -> None:
    """A large ``autodev.scipy.fft`` transform on the host runs with SciPy's ``workers=``,
    its result SciPy's one-thread result, bit for bit; ``workers=`` given, a
    ``scipy.fft.set_workers`` in force, or a call off the main thread keep SciPy's own."""
    import scipy.fft

    import autodev.scipy.fft as afft

    rng = np.random.default_rng(8)
    h = rng.standard_normal((48, 40))
    if name in ("irfft2", "hfft"):
        h = scipy.fft.rfft2(h) if name == "irfft2" else h + 1j * rng.standard_normal(h.shape)
    x = autodev.asarray(h.copy())
    function = getattr(afft, name)
    want = getattr(scipy.fft, name)(h)
    before = _threaded()
    _WorkersSeen.seen.clear()
    with scipy.fft.set_backend(_WorkersSeen), autodev.trace() as records:
        same(function(x), want)
        same(function(x, workers=1), want)
        with scipy.fft.set_workers(2):
            same(function(x), want)
        done: list[Any] = []
        worker = threading.Thread(target=lambda: done.append(function(x)))
        worker.start()
        worker.join()
        same(done[0], want)
    # (what SciPy's function was given: the backend is this thread's, so the call off the
    # main thread shows in the count of split calls alone)
    assert _WorkersSeen.seen == [3, 1, None]
    assert _threaded() == before + 1 and records[0].threads == 3


class _WorkersSeen:
    """A ``scipy.fft`` backend that notes the ``workers`` each transform is given, then
    declines, so that SciPy's own backend runs it."""

    __ua_domain__ = "numpy.scipy.fft"
    seen: list[Any] = []

    @staticmethod
    def __ua_function__(method: Any, args: Any, kwargs: dict[str, Any]) -> Any:
        _WorkersSeen.seen.append(kwargs.get("workers"))
        return NotImplemented


def test_host_calls_split_with_a_gpu_usable() -> None:
    from autodev.testing import simulated_gpu

    a = np.random.default_rng(4).random((200, 50))
    with simulated_gpu():
        x = autodev.asarray(a)
        before = _threaded()
        with autodev.policy("cpu"):
            same((x * 2.0)._native, a * 2.0)
        with autodev.policy("auto"), autodev.trace() as t:
            y = x[:1, :10] + 1.0  # below the thread floor: not split
        assert t[-1].threads == 1 and str(y.location) == "cpu"
        assert _threaded() == before + 1


def test_subclasses_keep_their_class_when_split() -> None:
    class Tagged(autodev.ndarray):
        def __array_finalize__(self, obj: Any) -> None:
            self.tag = getattr(obj, "tag", "finalized")

    a = np.random.default_rng(5).random((100, 40))
    x = autodev.asarray(a).view(Tagged)
    x.tag = "mine"
    before = _threaded()
    with autodev.policy("cpu"):
        y = x * 3.0
        z = autodev.sin(x)
    assert type(y) is Tagged and type(z) is Tagged and y.tag == z.tag == "mine"
    same(np.asarray(y), a * 3.0)
    same(np.asarray(z), np.sin(a))
    assert _threaded() == before + 2


def test_dask_worker_threads_run_single_threaded() -> None:
    da = pytest.importorskip("dask.array")
    a = np.random.default_rng(6).random((400, 50))
    d = da.from_array(autodev.asarray(a), chunks=(100, 50))
    want = (a * 2.0 + 1.0).sum(axis=0)
    with autodev.policy("cpu"):
        before = _threaded()
        got = (d * 2.0 + 1.0).sum(axis=0).compute(scheduler="threads")
        assert _threaded() == before  # tasks ran on Dask's worker threads
        got_here = (d * 2.0 + 1.0).sum(axis=0).compute(scheduler="sync")
        assert _threaded() > before  # the same tasks on the main thread are split
    np.testing.assert_allclose(np.asarray(got), want)
    np.testing.assert_allclose(np.asarray(got_here), want)
