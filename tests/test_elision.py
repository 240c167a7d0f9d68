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
