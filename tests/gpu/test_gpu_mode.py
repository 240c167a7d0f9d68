"""Differences NumPy's own test suite found between autodev on a GPU and NumPy, each
compared with NumPy on every device (values, types, exception types)."""

from __future__ import annotations

import numpy
import pytest

from diffcheck import differential, error_parity, sample


@pytest.mark.parametrize("pair", [
    lambda a: (a, a), lambda a: (a, a[1:]), lambda a: (a[:2], a[2:]), lambda a: (a, a.copy()),
    lambda a: (a.T, a), lambda a: (a[::2], a[1::2]),
])
def test_may_share_memory(device, pair):
    """Memory overlap is the device's own answer (it was the storage's: a fresh array
    did not share memory with itself)."""
    def run(xp, a):
        x, y = pair(a)
        return xp.may_share_memory(x, y), xp.shares_memory(x, y)

    differential(run, sample((4, 3)), device=device, resident=False)


@pytest.mark.parametrize("index, axis", [
    (numpy.array(1), 1), (numpy.ones((4, 2), bool), 1), (numpy.ones((4, 2)), 1),
    (numpy.ones((4, 2), numpy.intp), 10), (numpy.ones((4, 2), numpy.intp), -3),
])
def test_take_along_axis_errors(device, index, axis):
    """Bad indices or axis raise NumPy's exception types (AxisError, not a bare IndexError
    from reading the shape) on the device too."""
    error_parity(lambda xp, a, i: xp.take_along_axis(a, i, axis=axis), sample((4, 3)), index,
                 device=device)
    if axis not in (0, 1):
        error_parity(lambda xp, a: xp.take(a, [0], axis=axis), sample((4, 3)), device=device)


@pytest.mark.parametrize("func, q", [("percentile", 50), ("quantile", 0.5),
                                     ("percentile", [25, 75]), ("quantile", 0.25)])
@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_quantile_out_is_returned(device, func, q, dtype):
    """``percentile(..., out=o)`` writes into ``o`` and returns ``o`` itself (CuPy returns a
    view of it; the sim's imitation ignored ``out=`` altogether)."""
    def run(xp, d):
        shape = numpy.shape(q) + (1, 3)
        out = xp.empty(shape)
        result = getattr(xp, func)(d, q, axis=0, keepdims=True, out=out)
        assert result is out
        return out

    differential(run, sample((4, 3), dtype), device=device)


@pytest.mark.parametrize("run", [
    lambda xp: xp.bincount([], minlength=3), lambda xp: xp.bincount([]),
    lambda xp: xp.bincount([0, 2, 2]), lambda xp: xp.bincount([], weights=[]),
])
def test_bincount_of_a_list(device, run):
    """An empty list counts nothing, as NumPy reads it (integers), on the device too."""
    differential(lambda xp: run(xp), device=device)


def test_bincount_refusals(device):
    """An empty float array is NumPy's TypeError everywhere."""
    error_parity(lambda xp, x: xp.bincount(x), numpy.array([]), device=device)


@pytest.mark.parametrize("run", [
    lambda xp, a, o: xp.outer(a[:2], a, o[:2]),
    lambda xp, a, o: xp.sum(xp.stack([a, a]), 0, None, o[0]),
    lambda xp, a, o: xp.take(a, [1, 3], 0, o[0, :2], "raise"),
    lambda xp, a, o: xp.clip(a, 0.2, 0.6, o[0]),
])
@pytest.mark.parametrize("out_on", ["same", "cpu"])
def test_out_by_position(device, run, out_on):
    """An ``out`` given by position is written and returned as the very object, wherever
    it lives (on a device it was taken as one more operand, and its write lost)."""
    def check(xp, a):
        o = xp.zeros((5, 5))
        if out_on == "cpu" and xp is not numpy:
            o = o.to_device("cpu").to_device("auto")
        result = run(xp, a, o)
        assert type(result) is type(o)
        return o

    differential(check, sample((5,)), device=device, resident=out_on == "same")


@pytest.mark.parametrize("make", [
    lambda xp: xp.zeros(5, dtype="i1,i8,i8"), lambda xp: xp.zeros(5, dtype="i1,i8,i8")["f2"],
    lambda xp: xp.zeros(65, dtype=xp.int8)[1:].view(xp.int64),
    lambda xp: xp.zeros((3, 3), dtype=[("a", "f4"), ("b", "u1")])["a"].T,
    lambda xp: xp.zeros((0, 3), dtype="i1,i8")["f1"],
])
def test_aligned_flag(device, make):
    """``flags.aligned`` follows NumPy's rule on the device (it was always True)."""
    assert make(np_autodev()).flags.aligned is make(numpy).flags.aligned


def np_autodev():
    import autodev

    return autodev


def test_concatenate_counts_before_reading(device, monkeypatch):
    """Too many arrays are refused before any is read, as NumPy does (2**31 of them made
    autodev read each item for hours: test_shape_base.py's test_huge_list_error)."""
    import autodev
    from autodev import _namespace

    monkeypatch.setattr(_namespace, "MAX_CONCATENATED", 3)
    python_path = getattr(autodev.concatenate, "fallback", autodev.concatenate)
    with pytest.raises(ValueError, match=r"only supports up to 3 arrays but got 4\."):
        python_path((autodev.ones(1),) * 4)
    assert python_path((autodev.ones(1),) * 3).shape == (3,)
    # the compiled path walks no list longer than 2**20: a longer one reaches the count
    with pytest.raises(ValueError, match=r"only supports up to 3 arrays but got 1048577\."):
        autodev.concatenate((autodev.ones(1),) * ((1 << 20) + 1))


class _Zero:
    def __index__(self) -> int:
        return 0


class _ArrayLike:
    """An index known by its ``__array__`` alone, written for autodev (gives its array)."""

    def __init__(self, xp):
        self.xp = xp

    def __array__(self, dtype=None, copy=None):
        return self.xp.array(0)


@pytest.mark.parametrize("run", [
    lambda xp, a: a[_Zero(), _ArrayLike(xp)],
    lambda xp, a: a[_Zero(), xp.array(0)],
    lambda xp, a: xp.zeros((), [("a", "f8"), ("b", "i4")])["a"],
    lambda xp, a: xp.zeros((), [("a", "f8"), ("b", "i4")])[["a"]],
    lambda xp, a: xp.zeros(3, [("a", "f8"), ("b", "i4")])[["b", "a"]],
])
def test_index_types(device, run):
    """Indices as NumPy reads them on the device: an array-like's ``__array__``, and field
    names (an array, even 0-d: field access is a view, never a scalar)."""
    def check(xp, a):
        result = run(xp, a)
        return type(result).__name__, result

    got = differential(check, sample((1, 1)), device=device, resident=False)
    assert got[0] in ("float64", "ndarray")
