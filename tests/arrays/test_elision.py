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
