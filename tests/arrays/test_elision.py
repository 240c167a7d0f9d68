"""Temporary elision: ``a*b + c`` may reuse the buffer of the temporary ``a*b`` (as NumPy
does), but never the buffer of anything a user can still reach."""

import numpy
import pytest

import autodev

N = 300  # 300 x 300 float64 = 720 KB: above the 256 KiB elision threshold


@pytest.fixture
def pair():
    rng = numpy.random.default_rng(0)
    host = rng.standard_normal((N, N))
    return host, autodev.array(host)


def test_chain_equals_numpy(pair) -> None:
    host, a = pair
    result = a * 2.0 + autodev.sin(a) - a / 3.0
    expected = host * 2.0 + numpy.sin(host) - host / 3.0
    numpy.testing.assert_array_equal(result.get(), expected)
    assert result.dtype == expected.dtype


def test_reflected_chain_equals_numpy(pair) -> None:
    host, a = pair
    numpy.testing.assert_array_equal((1.0 - (a * 3.0)).get(), 1.0 - host * 3.0)


def test_named_values_are_never_reused(pair) -> None:
    host, a = pair
    t = a * 2.0
    u = t + 1.0
    numpy.testing.assert_array_equal(t.get(), host * 2.0)
    numpy.testing.assert_array_equal(u.get(), host * 2.0 + 1.0)
    items = [a * 2.0]
    _ = items[0] + 1.0
    numpy.testing.assert_array_equal(items[0].get(), host * 2.0)


def test_views_and_shared_buffers_are_never_reused(pair) -> None:
    host, a = pair
    base = a * 1.0
    view = base[:10]
    _ = base + 1.0  # base has a view: its storage is shared
    numpy.testing.assert_array_equal(view.get(), host[:10])
    raw = host.copy()
    wrapped = autodev.asarray(raw)
    _ = wrapped + 1.0
    numpy.testing.assert_array_equal(raw, host)


def test_dtype_or_shape_changes_are_not_elided() -> None:
    ints = autodev.arange(100_000)
    halves = (ints * 1) / 2
    assert halves.dtype == numpy.float64
    numpy.testing.assert_array_equal(halves.get(), numpy.arange(100_000) / 2)
    column = autodev.ones((N, 1)) * 1.0
    grown = column + autodev.ones((N, N))
    assert grown.shape == (N, N)
    f32 = autodev.ones((N, N), dtype=numpy.float32) * 1
    widened = f32 + numpy.ones((N, N))
    assert widened.dtype == numpy.float64


def test_errors_are_numpys(pair) -> None:
    _, a = pair
    with pytest.raises(ValueError):
        _ = (a * 1.0) + autodev.ones((N + 1, N))
    with pytest.raises(TypeError):
        _ = (autodev.arange(100_000) * 1) << 1.5


def test_a_temporary_is_reused() -> None:
    """The elision happens: ``(a*b) + c`` holds one new buffer at its peak, as NumPy's
    does, not two (NumPy reports its buffers to tracemalloc). It fails if the refcount
    checks drift from the operator's own (as they once did, silently)."""
    import tracemalloc

    n = 1 << 17  # 1 MiB of float64
    for make in (numpy.ones, autodev.ones):
        a, b, c = make(n), make(n), make(n)
        for _ in range(3):  # warm: first calls load and cache what the path needs
            _ = (a * b) + c
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            result = (a * b) + c
            peak = tracemalloc.get_traced_memory()[1] - start
        finally:
            tracemalloc.stop()
        assert float(result[0]) == 2.0
        assert peak < 1.5 * 8 * n, (make, peak / (8 * n))


def test_arrays_held_by_c_callers_are_never_reused() -> None:
    """A partial or ``map`` passes the array it holds by a borrowed reference, so it shows
    a temporary's refcount: the operator must not take its buffer (NumPy 2.4 does)."""
    import functools
    import operator

    n = 1 << 17
    p = functools.partial(operator.add, autodev.ones(n))
    assert [float(p(1.0)[0]) for _ in range(3)] == [2.0, 2.0, 2.0]
    inc = autodev.ones(n).__add__
    assert [float(inc(1.0)[0]) for _ in range(3)] == [2.0, 2.0, 2.0]
    held = [autodev.ones(n)]
    for _ in range(2):
        out = list(map(operator.mul, held, [3.0]))
    assert float(held[0][0]) == 1.0 and float(out[0][0]) == 3.0


#: Expressions whose temporary NumPy reuses (a peak of one new buffer), each with the
#: ones autodev reuses besides: ``1 - t`` and ``b - t`` (NumPy takes only a temporary left
#: operand, or the right one of a commutative operator). ``abs(t)`` is a call, which C
#: code makes too, so autodev leaves it (NumPy tells the two apart by its C stack).
_ELIDED = {
    "t + b": lambda a, b: (a * b) + b,
    "b + t": lambda a, b: b + (a * b),
    "b - t": lambda a, b: b - (a * b),
    "1 - t": lambda a, b: 1.0 - (a * b),
    "-t": lambda a, b: -(a * b),
    "+t": lambda a, b: +(a * b),
    "~t": lambda a, b: ~(a.astype(numpy.int64) + 1),
    "t ** 2": lambda a, b: (a * b) ** 2,
    "t ** 0.5": lambda a, b: (a * b) ** 0.5,
    "t ** -1": lambda a, b: (a * b) ** -1,
}


@pytest.mark.parametrize("name", sorted(_ELIDED))
def test_each_operator_reuses_its_temporary(name) -> None:
    """Each of these holds one new buffer at its peak, as NumPy's does for its own, and
    gives NumPy's values and dtype. It fails where the operator makes a second buffer."""
    import tracemalloc

    n = 1 << 17  # 1 MiB of float64
    expression = _ELIDED[name]
    expected = expression(numpy.full(n, 1.5), numpy.full(n, 2.0))
    a, b = autodev.full(n, 1.5), autodev.full(n, 2.0)
    for _ in range(3):  # warm: first calls load and cache what the path needs
        expression(a, b)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        result = expression(a, b)
        peak = tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()
    numpy.testing.assert_array_equal(result.get(), expected)
    assert result.dtype == expected.dtype
    assert peak < 1.5 * 8 * n, (name, peak / (8 * n))


def test_unary_and_power_errors_and_dtypes_are_numpys() -> None:
    """A temporary whose dtype the result does not keep, or that the ufunc refuses, is
    left to the ordinary call: NumPy's result or NumPy's error."""
    n = 1 << 17
    flags = autodev.arange(n) > 5
    with pytest.raises(TypeError):
        _ = -(flags & flags)  # NumPy refuses the boolean negative
    with pytest.raises(TypeError):
        _ = ~(autodev.ones(n) * 1.0)
    ints = autodev.arange(n) * 1
    numpy.testing.assert_array_equal((ints * 1) ** 2, (numpy.arange(n) * 1) ** 2)
    assert ((ints * 1) ** 0.5).dtype == numpy.float64
    numpy.testing.assert_array_equal(((ints * 1) ** 0.5).get(), numpy.arange(n) ** 0.5)
    c = autodev.ones(n, dtype=numpy.complex128) * 1j
    assert abs(c * 1).dtype == numpy.float64


def test_right_and_unary_operands_held_elsewhere_are_never_reused() -> None:
    """The right operand and a unary operator's operand, held by a name, a list, a view
    or C code (a partial passes what it holds by a borrowed reference), keep their values."""
    import functools
    import operator

    n = 1 << 17
    b = autodev.ones(n)
    t = b * 2.0
    _ = b + t
    _ = -t
    _ = t ** 2
    numpy.testing.assert_array_equal(t.get(), numpy.full(n, 2.0))
    base = b * 3.0
    view = base[:10]
    _ = b + base
    _ = -base
    numpy.testing.assert_array_equal(view.get(), numpy.full(10, 3.0))
    held = functools.partial(operator.add, b, b * 4.0)
    assert [float(held()[0]) for _ in range(3)] == [5.0, 5.0, 5.0]
    negated = functools.partial(operator.neg, b * 4.0)
    assert [float(negated()[0]) for _ in range(3)] == [-4.0, -4.0, -4.0]
    squared = functools.partial(operator.pow, b * 4.0, 2)
    assert [float(squared()[0]) for _ in range(3)] == [16.0, 16.0, 16.0]
    raw = numpy.ones(n)
    _ = b + autodev.asarray(raw)
    _ = -autodev.asarray(raw)
    numpy.testing.assert_array_equal(raw, numpy.ones(n))


def test_host_temporaries_are_reused_with_a_gpu_usable(monkeypatch) -> None:
    """With a GPU usable, a binary operator of host data below the model's host bound runs
    on the host at once, and reuses a temporary operand as it does with none: one new
    buffer at the peak, NumPy's values, the result on the host."""
    import tracemalloc

    from autodev._cost.cache import HOST_NOW
    from autodev.testing import simulated_gpu

    n = 1 << 17
    with simulated_gpu():
        a, b = autodev.full(n, 1.5), autodev.full(n, 2.0)
        _ = a + b  # (the first call settles the devices and reads the bounds)
        monkeypatch.setitem(HOST_NOW["auto"], "elementwise", 4 * n)
        for expression in (lambda: (a * b) + b, lambda: b - (a * b), lambda: 1.0 - (a * b)):
            for _ in range(3):
                expression()
            tracemalloc.start()
            try:
                start = tracemalloc.get_traced_memory()[0]
                result = expression()
                peak = tracemalloc.get_traced_memory()[1] - start
            finally:
                tracemalloc.stop()
            assert result.location == "cpu"
            assert peak < 1.5 * 8 * n, peak / (8 * n)
        numpy.testing.assert_array_equal(((a * b) + b).get(), numpy.full(n, 5.0))
        numpy.testing.assert_array_equal((b - (a * b)).get(), numpy.full(n, -1.0))


@pytest.mark.parametrize("n", [10, 1 << 17, 1 << 21])  # (1 << 21: above the thread floor)
def test_each_operator_is_counted_once(n) -> None:
    """An operator is one call in ``stats()``, whichever path runs it: the compiled or
    Python one, a temporary reused, or a call large enough for the general path (the
    Python operator once counted such a call twice)."""
    x = autodev.ones(n)
    for expression, operators in (("x * 2.0", 1), ("x + x", 1), ("(x * 2.0) + 1.0", 2),
                                  ("1.0 - (x * 2.0)", 2), ("x + (x * 2.0)", 2),
                                  ("-(x * 2.0)", 2), ("(x - 1.0) ** 2", 2)):
        autodev.stats(reset=True)
        float(eval(expression)[0])
        assert sum(autodev.stats()["calls"].values()) == operators, expression
