"""``np.testing`` under ``import autodev as np``: NumPy's assertions, reading autodev arrays
on every device as they read NumPy's (numpy.testing's own branch on numpy.ndarray and,
fed two autodev arrays, asked one array for its truth value)."""

from __future__ import annotations

import numpy
import pytest

import autodev as np


def test_equal_arrays_pass(device):
    a, b = np.arange(6.0), np.arange(6.0)
    assert a.location == device
    np.testing.assert_equal(a, b)
    np.testing.assert_equal([a, {"k": (a, 1)}], [b, {"k": (b, 1)}])
    np.testing.assert_array_equal(a, b, strict=True)
    np.testing.assert_allclose(a, b * (1 + 1e-12))
    np.testing.assert_almost_equal(a, b)
    np.testing.assert_array_almost_equal(a, b)
    np.testing.assert_array_less(a, b + 1)
    np.testing.assert_array_max_ulp(a, b)
    np.testing.assert_equal(a.sum(), 15.0)


@pytest.mark.parametrize("check", [
    lambda xp, a, b: xp.testing.assert_equal(a, b),
    lambda xp, a, b: xp.testing.assert_array_equal(a, b),
    lambda xp, a, b: xp.testing.assert_allclose(a, b),
    lambda xp, a, b: xp.testing.assert_almost_equal(a, b),
    lambda xp, a, b: xp.testing.assert_equal([a], [b]),
    lambda xp, a, b: xp.testing.assert_array_equal(a, b.astype(xp.float32), strict=True),
])
def test_differences_fail_as_numpys(device, check):
    """Each assertion fails with the AssertionError NumPy's gives on NumPy arrays."""
    with pytest.raises(AssertionError) as ours:
        check(np, np.arange(6.0), np.arange(6.0) + 1)
    with pytest.raises(AssertionError) as numpys:
        check(numpy, numpy.arange(6.0), numpy.arange(6.0) + 1)
    assert str(ours.value) == str(numpys.value)


def test_other_helpers_pass_arguments_untouched(device):
    """``assert_raises`` hands the code under test its own arguments: autodev arrays."""
    seen = []
    np.testing.assert_raises(ZeroDivisionError, lambda x: seen.append(x) or 1 / 0,
                             np.arange(3))
    assert type(seen[0]) is np.ndarray
    assert np.testing.assert_raises is numpy.testing.assert_raises


def test_names_resolve_once():
    assert np.testing.assert_equal is np.testing.assert_equal
    assert np.testing.assert_equal.__name__ == "assert_equal"
    assert "assert_allclose" in dir(np.testing) and "simulated_gpu" in dir(np.testing)


def test_ufuncs_equal_numpys():
    """An autodev ufunc equals (and hashes as) the NumPy ufunc it stands for, so NumPy's
    lists and tables of ufuncs find it (test_ufunc.py's ``.remove(np.bitwise_count)``)."""
    import numpy

    ufuncs = [numpy.sin, numpy.bitwise_count]
    ufuncs.remove(np.bitwise_count)
    assert ufuncs == [numpy.sin]
    assert {numpy.sin: 1}[np.sin] == 1
    assert np.sin == numpy.sin and numpy.sin == np.sin and np.sin != numpy.cos
    assert np.sin == np.sin and np.sin != np.cos
