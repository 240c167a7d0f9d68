"""Read-only arrays (NumPy's WRITEABLE flag) hold on every device: each write path refuses
a read-only array with NumPy's ValueError and message, views take their base's flag,
and the flags read as NumPy's. Compared with NumPy on the host, on every device."""

from __future__ import annotations

from typing import Any, Callable

import numpy
import pytest

import autodev as np

WRITES: dict[str, Callable[[Any, Any], Any]] = {
    "setitem": lambda xp, a: a.__setitem__(0, 1),
    "setitem slice": lambda xp, a: a.__setitem__(slice(1, 3), 1),
    "iadd": lambda xp, a: a.__iadd__(1),
    "imul array": lambda xp, a: a.__imul__(xp.ones(6)),
    "out=": lambda xp, a: xp.add(a, 1, out=a),
    "positional out": lambda xp, a: xp.negative(a, a),
    "reduction out=": lambda xp, a: xp.sum(xp.ones((2, 6)), axis=0, out=a),
    "view": lambda xp, a: a[1:4].__setitem__(0, 1),
    "reshape": lambda xp, a: a.reshape(2, 3).__setitem__((0, 0), 1),
    "transpose": lambda xp, a: a.reshape(2, 3).T.__setitem__((0, 0), 1),
    "view()": lambda xp, a: a.view().__setitem__(0, 1),
    "real": lambda xp, a: setattr(a, "real", 1),
    "flat =": lambda xp, a: setattr(a, "flat", 1),
    "flat[i] =": lambda xp, a: a.flat.__setitem__(0, 1),
    "fill": lambda xp, a: a.fill(0),
    "sort": lambda xp, a: a.sort(),
    "partition": lambda xp, a: a.partition(2),
    "method put": lambda xp, a: a.put([0], 1),
    "copyto": lambda xp, a: xp.copyto(a, 1),
    "put": lambda xp, a: xp.put(a, [0], 1),
    "putmask": lambda xp, a: xp.putmask(a, a > 1, 0),
    "place": lambda xp, a: xp.place(a, a > 1, 0),
    "fill_diagonal": lambda xp, a: xp.fill_diagonal(a.reshape(2, 3), 0),
    "shuffle": lambda xp, a: xp.random.shuffle(a),
}


def _read_only(xp: Any) -> Any:
    a = xp.arange(6.0)
    a.setflags(write=False)
    return a


def _error(run: Callable[[], Any]) -> tuple[type, str] | None:
    try:
        run()
    except ValueError as err:
        return ValueError, str(err)
    return None


@pytest.mark.parametrize("name", list(WRITES))
def test_writes_refused(device, name):
    """Each write path raises NumPy's ValueError (same message) and leaves the data."""
    write = WRITES[name]
    expected = _error(lambda: write(numpy, _read_only(numpy)))
    assert expected is not None
    a = _read_only(np)
    assert a.location == device
    assert _error(lambda: write(np, a)) == expected
    numpy.testing.assert_array_equal(a.get(), numpy.arange(6.0))


def test_ufunc_at_refused(device):
    """``ufunc.at`` refuses too (NumPy 2.4's own writes into a read-only array)."""
    a = _read_only(np)
    with pytest.raises(ValueError, match="read-only"):
        np.add.at(a, [0], 1)
    assert a[0] == 0


def test_flags_and_views(device):
    """Flags read as NumPy's; views take their base's flag; a copy is writable; NumPy's
    rule for making a view writable again holds."""
    for xp in (numpy, np):
        a = _read_only(xp)
        assert repr(a.flags) == repr(_read_only(numpy).flags)
        assert not a.flags.writeable and not a.flags["W"] and not a[1:].flags.writeable
        assert not a.reshape(2, 3).flags.writeable
        assert a.copy().flags.writeable
        with pytest.raises(ValueError, match="cannot set WRITEABLE flag"):
            a[1:].setflags(write=True)
        a.flags.writeable = True
        a[0] = 7
        assert a[0] == 7
        b = xp.arange(4.0)
        view = b[:]
        view.flags.writeable = False
        b[0] = 9  # the base stays writable
        again = view[:]
        again.setflags(write=True)  # its memory's owner is writable
        again[1] = 8
        assert b[1] == 8
        assert a[::2].flags.c_contiguous == numpy.arange(6.0)[::2].flags.c_contiguous


@pytest.mark.parametrize("make", [
    lambda xp: xp.diagonal(xp.eye(3)),
    lambda xp: xp.eye(3).diagonal(),
    lambda xp: xp.diag(xp.eye(3)),
    lambda xp: xp.broadcast_to(xp.arange(3.0), (2, 3)),
    lambda xp: xp.lib.stride_tricks.sliding_window_view(xp.arange(5.0), 2),
    lambda xp: xp.lib.stride_tricks.as_strided(xp.arange(5.0), (2,), (8,), writeable=False),
])
def test_read_only_views(device, make):
    """NumPy's always read-only views are read-only on the device too (CuPy's are not)."""
    assert make(np).flags.writeable is make(numpy).flags.writeable is False
    with pytest.raises(ValueError, match="read-only"):
        make(np)[...] = 0


def test_diag_of_a_vector_is_writable(device):
    """``diag`` of a vector is a new matrix, writable as NumPy's."""
    assert np.diag(np.arange(3.0)).flags.writeable


def test_device_flags_are_cupys():
    """The simulated GPU's arrays have CuPy's flags: no WRITEABLE to read or set."""
    from autodev.testing import simulated_gpu

    with simulated_gpu(), np.policy("gpu"):
        native = np.arange(3.0)._native
        assert native.flags.c_contiguous and native.flags["OWNDATA"]
        with pytest.raises(KeyError):
            native.flags["WRITEABLE"]
        with pytest.raises(AttributeError):
            native.flags.writeable = False
