"""Fault injection on the simulated GPU: out-of-memory retry and fallback, device errors."""

from __future__ import annotations

import warnings
from typing import Any, Iterator

import numpy
import pytest

import autodev
from autodev import _config, _trace
from autodev.testing import SimDeviceError, SimOutOfMemoryError, simulated_gpu, to_numpy
from diffcheck import assert_same, sample


@pytest.fixture
def sim() -> Iterator[Any]:
    """The simulated GPU under policy gpu, with the once-per-process warning re-armed."""
    warned = _trace.STATS.warned
    _trace.STATS.warned = False
    with simulated_gpu() as backend, autodev.policy("gpu"):
        yield backend
    _trace.STATS.warned = warned


def on_sim(a: numpy.ndarray, sim: Any) -> autodev.ndarray:
    return autodev.asarray(a.copy()).to_device(sim.device).to_device("auto")  # moved, unpinned


def test_one_oom_retries_after_dropping_mirrors(sim):
    a, b = sample((4, 5)), sample((4, 5), seed=1)
    x = on_sim(a, sim)
    h = autodev.array(b, device="cpu").to_device("auto")  # on the host, placed by autodev
    autodev.stats(reset=True)
    _ = x + h  # leaves a mirror of h on the device
    assert autodev._residency.mirror_on(h, sim.device) is not None
    before = autodev.stats(reset=True)
    assert before["h2d_count"] == 1
    sim.inject_fault("oom")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a successful retry warns nothing
        z = x * h
    assert sim.freed == 1
    assert_same(z, a * b, sim.device)
    s = autodev.stats()
    assert s["fallbacks"] == 0
    assert s["h2d_count"] == 1  # the dropped mirror of h was sent again on the retry


def test_two_ooms_fall_back_to_cpu_and_warn_once(sim):
    a = sample((6, 6))
    x = on_sim(a, sim)
    sim.inject_fault("oom", count=2)
    with pytest.warns(ResourceWarning, match="out of memory"):
        z = autodev.linalg.inv(x)
    assert z.location == "cpu"
    assert_same(z, numpy.linalg.inv(a), "cpu")
    assert autodev.stats()["fallbacks"] == 1
    assert sim.freed == 1
    sim.inject_fault("oom", count=2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once per process by default
        w = x @ x
    assert_same(w, a @ a, "cpu")
    assert autodev.stats()["fallbacks"] == 2
    assert_same(x, a, sim.device)  # the input is untouched and still on the device


def test_fallback_visible_in_trace(sim):
    x = on_sim(sample((3,)), sim)
    sim.inject_fault("oom", count=2)
    with autodev.trace() as records, pytest.warns(ResourceWarning):
        autodev.sin(x)
    assert records[-1].device == "cpu" and "out of memory" in records[-1].reason


def test_fallback_into_device_out_array(sim):
    a, b = sample((4, 4)), sample((4, 4), seed=1)
    x, y = on_sim(a, sim), on_sim(b, sim)
    sim.inject_fault("oom", count=2)
    with pytest.warns(ResourceWarning):
        x += y
    assert x.location == sim.device
    assert_same(x, a + b, sim.device)
    out = on_sim(numpy.zeros((4, 4)), sim)
    sim.inject_fault("oom", count=2)
    r = autodev.multiply(x, 2, out=out)
    assert r is out
    assert_same(out, (a + b) * 2, sim.device)


def test_fallback_warn_mode_warns_every_time(sim, monkeypatch):
    monkeypatch.setattr(_config.ENV, "fallback", "warn")
    x = on_sim(sample((3,)), sim)
    for _ in range(2):
        sim.inject_fault("oom", count=2)
        with pytest.warns(ResourceWarning):
            autodev.exp(x)


def test_fallback_raise_mode(sim, monkeypatch):
    monkeypatch.setattr(_config.ENV, "fallback", "raise")
    a = sample((3,))
    x = on_sim(a, sim)
    sim.inject_fault("oom", count=2)
    with pytest.raises(SimOutOfMemoryError):
        autodev.exp(x)
    assert autodev.stats()["fallbacks"] == 0
    assert_same(x, a, sim.device)


def test_device_error_propagates_and_arrays_survive(sim):
    a, b = sample((4, 4)), sample((4, 4), seed=1)
    x, y = on_sim(a, sim), on_sim(b, sim)
    h = autodev.asarray(b.copy())
    for op in (lambda: x + y, lambda: autodev.linalg.solve(x, y), lambda: x.sum(),
               lambda: x @ h):
        sim.inject_fault("error")
        with pytest.raises(SimDeviceError):
            op()
    sim.inject_fault("error")
    with pytest.raises(SimDeviceError):
        x += y
    assert autodev.stats()["fallbacks"] == 0
    assert_same(x, a, sim.device)
    assert_same(y, b, sim.device)
    assert numpy.array_equal(to_numpy(h), b)
    assert_same(x + y, a + b, sim.device)  # the device works again afterwards


def test_device_error_during_transfer(sim):
    a = sample((5,))
    h = autodev.asarray(a.copy())
    sim.inject_fault("error")
    with pytest.raises(SimDeviceError):
        h.to_device(sim.device)
    assert numpy.array_equal(to_numpy(h), a)
    assert autodev._residency.mirror_on(h, sim.device) is None
    assert_same(h.to_device(sim.device), a, sim.device)
