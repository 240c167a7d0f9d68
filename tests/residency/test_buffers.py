"""Host-memory protocols in every mode: share on the host, never a silently lost write.

``numpy.asarray``, ``bytes``, ``.data``, ``__array_interface__``, ``.ctypes``,
``setflags`` and (Python 3.12+) the buffer protocol, compared with NumPy on the CPU,
the simulated GPU under policy gpu (``device`` fixture) and under auto.
"""

from __future__ import annotations

import sys
import warnings

import numpy
import pytest

import autodev
from autodev.testing import simulated_gpu, to_numpy
from diffcheck import error_parity, put, sample

DTYPES = ("float64", "int32", "complex64", "bool")


@pytest.mark.parametrize("dtype", DTYPES)
def test_bytes_and_data_are_the_raw_buffer(device, dtype):
    a = sample((3, 4), dtype)
    x = put(a, device)
    assert bytes(x) == bytes(a)
    assert bytes(x.T) == a.T.tobytes()
    assert bytes(x.data) == bytes(a.data)
    assert x.data.nbytes == a.nbytes and x.data.format == a.data.format


def test_numpy_asarray_shares_memory_and_never_loses_writes(device):
    a = sample((4,))
    x = put(a, device)
    pin = x.device
    h = numpy.asarray(x)  # shared, as NumPy shares: a device array with no views moves
    assert numpy.array_equal(h, a) and h.flags.writeable  # to the host for it (SciPy's
    h[0] = 99.0  # compiled kernels need a writable buffer)
    assert to_numpy(x)[0] == 99.0 and x.location == "cpu" and x.device == pin
    numpy.testing.assert_array_equal(to_numpy(x + 1), numpy.asarray(h) + 1)
    c = numpy.array(x)  # an explicit copy is writable everywhere
    c[1] = -1.0
    assert to_numpy(x)[1] == a[1]


def test_a_shared_host_buffer_invalidates_mirrors():
    a = sample((5,))
    with simulated_gpu() as sim, autodev.policy("gpu"):
        # owning its memory (an asarray of a NumPy array would be escaped: never mirrored)
        x = autodev.array(a.copy(), device="cpu").to_device("auto")
        d = autodev.asarray(a.copy(), device=sim.device).to_device("auto")
        _ = x + d  # leaves a mirror of x on the device
        h = numpy.asarray(x)
        h[:] = 7.0  # a write behind autodev's back
        assert numpy.array_equal(to_numpy(x + d), 7.0 + a)


def test_array_interface_and_ctypes(device):
    a = sample((2, 3))
    x = put(a, device)
    iface = x.__array_interface__  # a device array held alone moves to the host for it
    assert x.location == "cpu" and x.device == put(a, device).device
    assert iface["shape"] == (2, 3) and iface["typestr"] == a.__array_interface__["typestr"]
    assert x.ctypes.data == iface["data"][0]
    assert numpy.shares_memory(numpy.asarray(x), numpy.asarray(x))
    numpy.asarray(x)[0, 0] = 5.0  # the shared memory is the array's
    assert to_numpy(x)[0, 0] == 5.0


def test_host_pointers_move_a_device_array_to_the_host_visibly():
    """NumPy's consumers of raw memory (``__array_interface__``, ``__array_struct__``,
    ``.ctypes``, ``ndarray(buffer=)``) get the array's own memory, writes included; the
    move is a counted transfer, and a read-only array stays read-only."""
    a = sample((2, 3))
    with simulated_gpu() as sim, autodev.policy("gpu"):
        for get in (lambda x: x.__array_interface__, lambda x: x.__array_struct__,
                    lambda x: x.ctypes, lambda x: autodev.ndarray((6,), a.dtype, x)):
            x = autodev.asarray(a.copy(), device=sim.device).to_device("auto")
            before = autodev.stats()["d2h_count"]
            get(x)
            assert x.location == "cpu" and autodev.stats()["d2h_count"] == before + 1
            assert numpy.array_equal(to_numpy(x), a)
        x = autodev.asarray(a.copy(), device=sim.device)
        x.setflags(write=False)
        assert not numpy.asarray(autodev.ndarray((6,), a.dtype, x)).flags.writeable
        assert x.location == "cpu" and not x.flags.writeable


def _views(xp_array):
    """Views of one array of every kind: strided, reversed, a row, a field-like offset."""
    return (xp_array[1:, ::2], xp_array.T[::-1], xp_array[2], xp_array.reshape(-1)[3:9])


def test_host_memory_of_an_array_and_its_views_is_numpys(device):
    """A consumer of host memory given a device array that live views share gets what it
    gets from NumPy: the memory moves to the host with every view (one counted transfer,
    the array owning the memory copied once), each at NumPy's address offset and strides,
    with its own flags, and a write through any of them is seen by all."""
    a = numpy.arange(24.0).reshape(4, 6)
    x = put(a, device)
    pin, on_device = x.device, x.location != "cpu"
    views, xviews = _views(a), _views(x)
    views[1].flags.writeable = xviews[1].flags.writeable = False
    before = autodev.stats()["d2h_count"]
    h = numpy.asarray(x)
    assert autodev.stats()["d2h_count"] == before + on_device
    assert h.flags.writeable and numpy.array_equal(h, a)
    start, xstart = a.__array_interface__["data"][0], h.__array_interface__["data"][0]
    for view, xview in zip(views, xviews):
        iface = xview.__array_interface__  # no transfer: it moved with x
        assert xview.location == "cpu" and iface["strides"] == view.__array_interface__["strides"]
        assert iface["data"][0] - xstart == view.__array_interface__["data"][0] - start
        assert xview.flags.writeable == view.flags.writeable
        assert xview.flags.owndata == view.flags.owndata and not xview.flags.owndata
    assert x.flags.owndata and x.base is None and x.device == pin
    assert autodev.stats()["d2h_count"] == before + on_device
    h[2, 4] = -1.0  # NumPy's write through its pointer, and autodev's through a view
    a[2, 4] = -1.0
    xviews[0][0, 0] = views[0][0, 0] = 7.0
    for view, xview in zip(views, xviews):
        numpy.testing.assert_array_equal(to_numpy(xview), view)
    numpy.testing.assert_array_equal(to_numpy(x + 1), a + 1)
    with pytest.raises(ValueError, match="read-only"):
        xviews[1][0, 0] = 1.0


def test_host_pointers_move_views_of_a_base_that_is_gone():
    """A strided view whose base is gone moves as the view it is (NumPy's strides in its
    buffer, NumPy's ``base``), not as a contiguous copy."""
    a = numpy.arange(12.0).reshape(3, 4)
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.asarray(a.copy(), device=sim.device)[:, ::2]
        view = memoryview(numpy.asarray(x))
        assert x.location == "cpu" and view.strides == a[:, ::2].strides
        assert x.base is not None and not x.flags.owndata
        numpy.testing.assert_array_equal(to_numpy(x), a[:, ::2])


def test_a_move_home_drops_the_mirrors_of_the_views():
    """A view's mirror on another device is of the memory before the move: dropped, so a
    write through NumPy's host pointer afterwards is read everywhere."""
    a = sample((4, 4))
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.asarray(a.copy(), device=sim.device).to_device("auto")
        view = x[1:]
        with autodev.policy("cpu"):
            _ = view + 1  # leaves a host mirror of the view
        h = numpy.asarray(x)
        h[1:] = 3.0
        with autodev.policy("cpu"):
            numpy.testing.assert_array_equal(to_numpy(view + 1), numpy.full((3, 4), 4.0))
        numpy.testing.assert_array_equal(to_numpy(view * 2), numpy.full((3, 4), 6.0))


def test_device_memory_shared_outside_autodev_stays_there():
    """Memory a native device array may view (handed out by ``__dlpack__``) cannot move
    without leaving that array behind: NumPy gets a read-only copy, the consumers that
    keep a pointer are refused, and nothing moves."""
    a = sample((2, 3))
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.asarray(a.copy(), device=sim.device)
        x.__dlpack__()
        view = x[1:]
        assert not hasattr(x, "__array_interface__")  # NumPy then takes __array__
        with pytest.raises(ValueError, match="shared outside autodev"):
            x.ctypes  # noqa: B018
        with pytest.raises(ValueError, match="to_device"):
            autodev.ndarray((6,), x.dtype, x)
        h = numpy.asarray(x)
        assert not h.flags.writeable and numpy.array_equal(h, a)
        assert x.location == sim.device and view.location == sim.device


def test_setflags(device):
    """Read-only holds on every device (tests/residency/test_readonly.py tries each write path)."""
    x = put(sample((3,)), device)
    x.setflags(write=False)
    assert not x.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        x[0] = 1.0
    x.setflags(write=True)
    x[0] = 1.0
    assert to_numpy(x)[0] == 1.0
    if x.location != "cpu":
        with pytest.raises(ValueError, match="to_device"):
            x.setflags(align=False)


def test_read_only_data_of_a_device_array(device):
    x = put(sample((3,)), device)
    view = x.data
    if x.location != "cpu":
        assert view.readonly
        with pytest.raises(TypeError):
            view[0:8] = bytes(8)


@pytest.mark.skipif(autodev.ndarray.__mro__[1] is object and sys.version_info < (3, 12),
                    reason="the buffer protocol for Python classes (PEP 688 __buffer__) "
                    "needs Python 3.12, or the compiled extension before it")
def test_buffer_protocol(device):
    a = sample((2, 3))
    x = put(a, device)
    assert bytes(memoryview(x)) == bytes(a)  # a device array held alone moves to the host
    assert x.location == "cpu"
    assert numpy.array_equal(numpy.frombuffer(x, dtype=a.dtype), a.ravel())
    memoryview(x).cast("B")[:8] = bytes(8)  # the buffer is the array's memory
    assert to_numpy(x)[0, 0] == 0.0
    y = put(a, device)
    view = y[1:]  # the device memory moves with the view sharing it
    memoryview(y).cast("B")[24:32] = bytes(8)
    assert view.location == y.location == "cpu" and to_numpy(view)[0, 0] == 0.0
    z = put(a, device)
    z.__dlpack__()
    if z.location != "cpu":  # shared outside autodev: refused, so NumPy's copy=False
        with pytest.raises(BufferError, match="shared outside"):  # cannot take a copy
            memoryview(z)  # unseen
        with pytest.raises(ValueError, match="avoid a copy"):
            numpy.asarray(z, copy=False)
        assert not numpy.asarray(z).flags.writeable


@pytest.mark.skipif(autodev.ndarray.__mro__[1] is object and sys.version_info < (3, 12),
                    reason="the buffer protocol for Python classes (PEP 688 __buffer__) "
                    "needs Python 3.12, or the compiled extension before it")
def test_array_of_a_buffer_shares_it_as_numpy_does(device):
    """``array(memoryview(x), copy=False or None)`` is x's memory on every device (NumPy's
    promise for copy=False); ``copy=True`` is not."""
    x = autodev.arange(10)
    view = memoryview(x)
    for copy in (False, None, numpy._CopyMode.IF_NEEDED, numpy._CopyMode.NEVER):
        assert autodev.may_share_memory(x, autodev.array(view, copy=copy))
    for copy in (True, numpy._CopyMode.ALWAYS):
        assert not autodev.may_share_memory(x, autodev.array(view, copy=copy))


def test_numpy_shuffle_warns_and_autodev_shuffle_is_right(device):
    # numpy.random.Generator.shuffle has a fast path for numpy.ndarray only; on any other
    # array with views it swaps rows through views and may duplicate them, and says so.
    x = put(numpy.arange(12.0).reshape(6, 2), device)
    with pytest.warns(UserWarning, match="Sequence"):
        numpy.random.default_rng(0).shuffle(x)
    y = put(numpy.arange(12.0).reshape(6, 2), device)
    autodev.random.default_rng(0).shuffle(y)
    expected = numpy.arange(12.0).reshape(6, 2)
    numpy.random.default_rng(0).shuffle(expected)
    assert numpy.array_equal(to_numpy(y), expected)


def test_under_auto_with_a_gpu():
    a = sample((3, 3))
    with simulated_gpu() as sim:
        big = autodev.asarray(a.copy(), device=sim.device)
        assert bytes(big) == bytes(a)
        view = big[1:]  # the device memory is shared by a view: it moves with big, and
        h = numpy.asarray(big)  # NumPy's writes through h are the view's
        assert h.flags.writeable and big.location == view.location == "cpu"
        h[1, 0] = 99.0
        assert to_numpy(view)[0, 0] == 99.0
        view[0, 0] = 5.0
        assert h[1, 0] == 5.0
        reshaped = autodev.reshape(autodev.asarray(a.copy(), device=sim.device), (9,))
        assert numpy.asarray(reshaped).flags.writeable  # a view whose base is gone
        small = autodev.asarray(a.copy())
        assert numpy.asarray(small).flags.writeable


@pytest.mark.parametrize("make", [lambda xp: xp.zeros(3), lambda xp: xp.zeros((3, 4))[:, ::2],
                                  lambda xp: xp.zeros((2, 3)).T, lambda xp: xp.zeros(3)[1:],
                                  lambda xp: xp.zeros(())])
def test_flags_attributes_as_numpys(device, make):
    """Every attribute of NumPy's flags object, its older names and ``num`` included."""
    a, x = make(numpy), make(autodev)
    for writeable in (True, False):
        a.flags.writeable = x.flags.writeable = writeable
        for name in ("c_contiguous", "f_contiguous", "contiguous", "fortran", "owndata",
                     "writeable", "aligned", "writebackifcopy", "behaved", "carray",
                     "farray", "fnc", "forc", "num"):
            assert getattr(x.flags, name) == getattr(a.flags, name), (name, writeable)


def test_numpys_warn_on_write_flag(device):
    """NumPy's private ``flags._warn_on_write`` (its deprecations set it): a device array
    takes it by moving to the host, and its first write warns once, as NumPy's does."""
    warned = []
    for xp in (numpy, autodev):
        x = put(numpy.arange(4), device) if xp is autodev else numpy.arange(4)
        x.flags._warn_on_write = True
        assert memoryview(x).readonly and x.__array_interface__["data"][1]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            x[1] = 10
            x[2] = 10
        warned.append([type(w.message) for w in caught])
    assert warned[0] == warned[1] and len(warned[0]) == 1


def test_a_view_of_memory_no_device_array_owns_moves_as_the_bytes_it_reads(device):
    """``as_strided``'s view of one element as (10, 10) with strides (0, 0): its host memory
    is the element it reads, so NumPy's geometry and its checks against that memory hold."""
    def view(xp, a):
        return xp.lib.stride_tricks.as_strided(a, (10, 10), (0, 0))

    x = view(autodev, put(numpy.arange(1), device))
    assert numpy.asarray(x).strides == (0, 0) and x.tolist() == numpy.zeros((10, 10)).tolist()

    def restride(xp, a):
        with pytest.warns(DeprecationWarning):
            view(xp, a).strides = (80, 8)  # past the memory viewed

    error_parity(restride, numpy.arange(1), device=device)
