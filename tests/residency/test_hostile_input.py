"""Inputs and states a new user reaches by accident: structured dtypes, stale mirrors."""

from __future__ import annotations

import gc
import weakref

import numpy
import pytest

import autodev
from autodev.testing import simulated_gpu, to_numpy

RECORD = numpy.dtype([("a", "i4"), ("b", "f8")])


@pytest.mark.parametrize("policy", ["auto", "gpu"])
@pytest.mark.parametrize("gpu", [False, True], ids=["no-gpu", "sim"])
def test_structured_equality(policy, gpu):
    h = numpy.array([(1, 2.0), (3, 4.0)], dtype=RECORD)
    other = numpy.array([(1, 2.0), (3, 5.0)], dtype=RECORD)
    with (simulated_gpu() if gpu else autodev.policy("auto")), autodev.policy(policy):
        x, y = autodev.asarray(h.copy()), autodev.asarray(other.copy())
        for got, expected in ((x == y, h == other), (x != y, h != other),
                              (x == x[0], h == h[0]), (x[0] == x, h[0] == h)):
            assert numpy.array_equal(to_numpy(got), expected)
        with pytest.raises(TypeError) as numpy_error:
            _ = h + h
        with pytest.raises(numpy_error.type):  # arithmetic fails as NumPy's does
            _ = x + x


def test_a_write_releases_stale_mirrors_of_every_view():
    with simulated_gpu() as sim, autodev.policy("gpu"):
        h = autodev.array(numpy.arange(10.0), device="cpu").to_device("auto")
        view = h[2:5]
        d = autodev.ones(10, device=sim.device).to_device("auto")
        _ = h + d  # leaves a mirror of h on the device
        ref = weakref.ref(h._mirror[2])
        view[0] = 5.0  # h's mirror is stale now
        gc.collect()
        assert ref() is None  # its device memory is released at the write, not later
        assert to_numpy(h + d)[2] == 6.0


def test_a_write_releases_the_mirrors_reuse_credit_shares():
    from autodev._residency import storage as R

    with simulated_gpu() as sim, autodev.policy("gpu"):
        h = autodev.array(numpy.arange(6.0), device="cpu").to_device("auto")
        storage = R.storage_of(h)
        storage.shared = {("sim", (6,)): (storage.version, object())}  # as reuse credit leaves
        h[0] = 1.0
        assert not storage.shared  # released at the write, not when next looked up
