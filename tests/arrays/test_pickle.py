"""Pickling keeps what an array is: values, dtype, placement, and a read-only flag."""

from __future__ import annotations

import pickle
from typing import Any

import numpy
import pytest

import autodev
from autodev.testing import to_numpy

PROTOCOLS = range(pickle.HIGHEST_PROTOCOL + 1)


def _read_only(pin: str | None) -> Any:
    host = numpy.arange(6.0).reshape(2, 3)
    host.flags.writeable = False
    x = autodev.asarray(host)
    return x if pin is None else x.to_device(pin)


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("pin", [None, "cpu"])
def test_a_read_only_array_stays_read_only(device: Any, protocol: int, pin: str | None) -> None:
    x = _read_only(pin)
    assert not x.flags.writeable and x.location == "cpu"
    y = pickle.loads(pickle.dumps(x, protocol=protocol))
    assert not y.flags.writeable
    assert y.device == x.device
    numpy.testing.assert_array_equal(to_numpy(y), numpy.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match="read-only"):
        y[0, 0] = 1.0  # as NumPy refuses
    assert y.sum(axis=0).flags.writeable  # what is computed from it is writable


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_writable_array_stays_writable(device: Any, protocol: int) -> None:
    x = autodev.arange(6.0).to_device(device)  # on the device under test
    y = pickle.loads(pickle.dumps(x, protocol=protocol))
    assert y.flags.writeable
    y[0] = -1.0
    assert to_numpy(x)[0] == 0.0  # a copy
