"""autodev arrays handed to the libraries users already have, against NumPy/SciPy.

``scipy.fft.set_backend(autodev.scipy.fft)``; pandas masks and shared memory;
numexpr ``out=``. scikit-learn and ``SCIPY_ARRAY_API=1`` are in test_consumers.py.
"""

from __future__ import annotations

import numpy
import pytest
import scipy.fft

import autodev
import autodev.scipy.fft
from autodev.testing import to_numpy


def signal(n: int = 64) -> numpy.ndarray:
    return numpy.random.default_rng(0).standard_normal(n)


# ---------------------------------------------------------------------- scipy.fft backend

def test_scipy_fft_backend_protocol():
    assert autodev.scipy.fft.__ua_domain__ == "numpy.scipy.fft"
    unknown = type("multimethod", (), {"__name__": "not_in_scipy_fft"})()
    assert autodev.scipy.fft.__ua_function__(unknown, (), {}) is NotImplemented


@pytest.mark.parametrize("name", ["fft", "rfft", "ifft", "fft2", "dct", "idst", "fftn"])
def test_set_backend_runs_scipy_fft_through_autodev(device, name):
    x = signal(64).reshape(8, 8)
    expected = getattr(scipy.fft, name)(x)
    with scipy.fft.set_backend(autodev.scipy.fft, only=True):
        result = getattr(scipy.fft, name)(autodev.asarray(x, device=device))
    assert type(result) is autodev.ndarray
    assert result.dtype == expected.dtype and result.shape == expected.shape
    numpy.testing.assert_allclose(to_numpy(result), expected, rtol=1e-12, atol=1e-12)


def test_set_backend_takes_numpy_input_and_declines_what_it_lacks():
    x = signal()
    with scipy.fft.set_backend(autodev.scipy.fft):
        result = scipy.fft.fft(x)
        freqs = scipy.fft.fftfreq(8)  # not a multimethod: SciPy's own
    assert type(result) is autodev.ndarray
    numpy.testing.assert_allclose(to_numpy(result), scipy.fft.fft(x))
    assert type(freqs) is numpy.ndarray


# ---------------------------------------------------------------------- autodev.lib

def test_lib_imports_by_path():
    from autodev.lib import mixins
    from autodev.lib.stride_tricks import as_strided, sliding_window_view  # noqa: F401

    assert mixins is numpy.lib.mixins
    assert autodev.lib.NumpyVersion is numpy.lib.NumpyVersion
    assert autodev.lib.stride_tricks.broadcast_to is autodev.broadcast_to
    with pytest.raises(AttributeError):
        autodev.lib.no_such_name  # noqa: B018


def test_strided_views_live_with_their_array_and_write_through(device):
    from autodev.lib.stride_tricks import as_strided, sliding_window_view

    host = numpy.arange(12.0)
    x = autodev.asarray(host.copy(), device=device)
    windows = sliding_window_view(x, 4)
    expected = numpy.lib.stride_tricks.sliding_window_view(host, 4)
    assert type(windows) is autodev.ndarray and windows.location == device
    numpy.testing.assert_array_equal(to_numpy(windows), expected)
    view = as_strided(x, shape=(6,), strides=(2 * x.itemsize,))
    assert view.location == device
    view[:] = -1.0
    host[::2] = -1.0
    numpy.testing.assert_array_equal(to_numpy(x), host)
    numpy.testing.assert_array_equal(to_numpy(x * 1), host)  # no stale copy anywhere


def test_a_write_through_a_strided_view_drops_the_mirror():
    from autodev.lib.stride_tricks import as_strided
    from autodev.testing import simulated_gpu

    with simulated_gpu():
        x = autodev.arange(8.0)
        mirrored = autodev.asarray(x, device="sim:0")  # reads x on the device
        del mirrored
        view = as_strided(x, shape=(4,), strides=(2 * x.itemsize,))
        view[:] = 0.0
        with autodev.policy("gpu"):
            total = float(autodev.sum(x))
    assert total == 1.0 + 3.0 + 5.0 + 7.0


def test_numpy_testing_names_are_reachable():
    assert autodev.testing.assert_allclose.__wrapped__ is numpy.testing.assert_allclose
    assert autodev.testing.assert_raises is numpy.testing.assert_raises
    autodev.testing.assert_array_equal(autodev.arange(3), numpy.arange(3))


# ---------------------------------------------------------------------- pandas, numexpr

def test_memory_shared_with_pandas_is_seen_when_written():
    pd = pytest.importorskip("pandas")
    from autodev.testing import simulated_gpu

    with simulated_gpu():
        x = autodev.arange(6.0)
        series = pd.Series(x)  # pandas holds x's host buffer (through __array__)
        with autodev.policy("gpu"):
            assert float(autodev.sum(x)) == 15.0  # x now has a device copy
        series.iloc[0] = 100.0  # a write autodev does not see happen
        assert float(x[0]) == 100.0
        with autodev.policy("gpu"):
            assert float(autodev.sum(x)) == 115.0  # the device copy was not trusted


def test_pandas_takes_a_mask_once_it_is_a_numpy_array():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": numpy.arange(6.0)})
    mask = autodev.arange(6) > 2
    with pytest.raises(KeyError):  # pandas reads a non-NumPy array as labels (documented)
        frame.loc[mask]
    expected = frame.loc[numpy.arange(6) > 2]
    pd.testing.assert_frame_equal(frame.loc[numpy.asarray(mask)], expected)


PANDAS_TAKES = {  # what pandas reads as an array (``__array__``, ``is_list_like``)
    "Series": lambda pd, d, s, m: pd.Series(d),
    "DataFrame": lambda pd, d, s, m: pd.DataFrame({"d": d, "s": s}),
    "Series + array": lambda pd, d, s, m: pd.Series(numpy.arange(12.0)) + d,
    "iloc": lambda pd, d, s, m: pd.Series(numpy.arange(12.0)).iloc[s],
    "isin": lambda pd, d, s, m: pd.Series(numpy.arange(12)).isin(s),
    "where": lambda pd, d, s, m: pd.Series(numpy.arange(12.0)).where(m),
    "cut": lambda pd, d, s, m: pd.Series(pd.cut(d, 3)),
    "Categorical": lambda pd, d, s, m: pd.Series(pd.Categorical(s)),
}


def _pandas_inputs(xp):
    rng = numpy.random.default_rng(0)
    d, s = rng.uniform(size=12), rng.integers(0, 3, 12)
    return xp.asarray(d), xp.asarray(s), xp.asarray(d > 0.5)


@pytest.mark.parametrize("case", sorted(PANDAS_TAKES))
def test_pandas_takes_autodev_arrays_as_numpy_arrays(device, case):
    pd = pytest.importorskip("pandas")
    got = PANDAS_TAKES[case](pd, *_pandas_inputs(autodev))
    expected = PANDAS_TAKES[case](pd, *_pandas_inputs(numpy))
    assert_equal = pd.testing.assert_frame_equal if isinstance(expected, pd.DataFrame) \
        else pd.testing.assert_series_equal
    assert_equal(got, expected)


def test_pandas_groups_and_masks_by_numpy_arrays_only(device):
    # pandas tells a boolean mask and a group key from labels and mappers by
    # isinstance(key, numpy.ndarray) (com.is_bool_indexer, groupby's get_grouper and
    # Grouping): no other array type passes, CuPy's neither (docs/array-api.md)
    pd = pytest.importorskip("pandas")
    d, s, m = _pandas_inputs(autodev)
    nd, ns, nm = _pandas_inputs(numpy)
    frame = pd.DataFrame({"d": nd})
    with pytest.raises(KeyError):
        frame[m]
    with pytest.raises(TypeError, match="not callable"):
        pd.Series(d).groupby(s).mean()
    # the documented one-line fix: the NumPy array itself
    pd.testing.assert_frame_equal(frame[numpy.asarray(m)], frame[nm])
    pd.testing.assert_series_equal(pd.Series(d).groupby(numpy.asarray(s)).mean(),
                                   pd.Series(nd).groupby(ns).mean())


def test_numexpr_writes_into_an_autodev_arrays_host_buffer():
    numexpr = pytest.importorskip("numexpr")
    a, b = autodev.arange(5.0), autodev.ones(5)
    out = autodev.empty(5)
    numexpr.evaluate("a * 2 + b", out=numpy.asarray(out))  # the buffer itself, marked shared
    numpy.testing.assert_array_equal(to_numpy(out), numpy.arange(5.0) * 2 + 1)
    numpy.testing.assert_array_equal(numexpr.evaluate("a * 2 + b"), numpy.arange(5.0) * 2 + 1)


# ---------------------------------------------------------------------- subclasses

def test_subclass_views_share_storage_and_keep_their_class(device):
    class Tagged(autodev.ndarray):
        def __array_finalize__(self, obj):
            self.tag = getattr(obj, "tag", "new")

    x = autodev.asarray(numpy.arange(6.0), device=device)
    t = x.view(Tagged)
    assert type(t) is Tagged and t.tag == "new" and t.device == device
    t.tag = "mine"
    part = t[2:]
    assert type(part) is Tagged and part.tag == "mine"
    part[0] = -1.0  # a write through the subclass view reaches x
    assert float(x[2]) == -1.0
    total = autodev.sin(t) + t
    assert type(total) is Tagged and total.tag == "mine" and total.location == device
    numpy.testing.assert_allclose(to_numpy(total), numpy.sin(to_numpy(x)) + to_numpy(x))
    assert type(t.view(autodev.ndarray)) is autodev.ndarray
    assert repr(t).startswith("Tagged([")
    made = Tagged((3,))  # NumPy's constructor, finalized with None
    assert type(made) is Tagged and made.shape == (3,) and made.tag == "new"


def test_a_function_view_of_a_subclass_writes_through_to_it():
    from autodev.testing import simulated_gpu

    class Plain(autodev.ndarray):
        pass

    with simulated_gpu():
        x = autodev.arange(6.0).view(Plain)
        with autodev.policy("gpu"):
            assert float(autodev.sum(x)) == 15.0  # x gets a device copy
        autodev.transpose(x)[0] = 100.0  # a view made by a function, written
        with autodev.policy("gpu"):
            assert float(autodev.sum(x)) == 115.0  # the device copy is not reused


def test_asanyarray_keeps_a_subclass_as_numpy_does(device):
    class Tagged(autodev.ndarray):
        pass

    class NumpyTagged(numpy.ndarray):
        pass

    x = autodev.asarray(numpy.arange(4.0), device=device).view(Tagged)
    y = numpy.arange(4.0).view(NumpyTagged)
    assert (autodev.asanyarray(x) is x) == (numpy.asanyarray(y) is y) == True  # noqa: E712
    as32 = autodev.asanyarray(x, dtype=numpy.float32)
    assert type(as32) is Tagged and type(numpy.asanyarray(y, dtype=numpy.float32)) is NumpyTagged
    assert as32.dtype == numpy.float32 and as32.device == device
    numpy.testing.assert_array_equal(to_numpy(as32), numpy.arange(4.0, dtype=numpy.float32))
    assert type(autodev.asarray(x)) is autodev.ndarray  # asarray gives the base class, as NumPy


def test_a_ufunc_held_by_a_class_is_not_a_method():
    # NumPy's ufuncs are not descriptors; autodev's (functools.partial subclasses, which
    # Python 3.14 makes method descriptors) must not be either
    class Layer:
        act = autodev.tanh
        np_act = numpy.tanh

    x = numpy.linspace(-1.0, 1.0, 5)
    numpy.testing.assert_array_equal(to_numpy(Layer().act(autodev.asarray(x))),
                                     Layer().np_act(x))
    assert Layer().act is autodev.tanh
