"""The tiny-call path with a GPU usable: host operands below the cost model's floor go
straight to NumPy under ``auto``, with the decision the full prediction makes."""

from __future__ import annotations

from typing import Any

import numpy
import pytest

import autodev
from autodev._cost.cache import host_floor
from autodev.testing import simulated_gpu, to_numpy

from diffcheck import assert_same


@pytest.fixture
def sim() -> Any:
    with simulated_gpu() as backend:
        yield backend


CALLS = {
    "a + b": lambda xp, a, b: a + b,
    "b - 2.5": lambda xp, a, b: b - 2.5,
    "2 ** a": lambda xp, a, b: 2 ** a,
    "a < b": lambda xp, a, b: a < b,
    "a == b": lambda xp, a, b: a == b,
    "divmod": lambda xp, a, b: divmod(a, b),
    "sin": lambda xp, a, b: xp.sin(a),
    "add": lambda xp, a, b: xp.add(a, b),
    "hypot scalar": lambda xp, a, b: xp.hypot(a, 3.0),
    "frexp": lambda xp, a, b: xp.frexp(a),
    "0-d": lambda xp, a, b: a[0:1].reshape(()) * 2,
    "matmul": lambda xp, a, b: a[:6].reshape(2, 3) @ b[:6].reshape(3, 2),
    "rmatmul vector": lambda xp, a, b: b @ xp.ones((7, 2)),
    "sum": lambda xp, a, b: xp.sum(a),
    "max axis": lambda xp, a, b: xp.max(a.reshape(1, 7), axis=1),
    "count_nonzero": lambda xp, a, b: xp.count_nonzero(a),
    "cumsum": lambda xp, a, b: xp.cumsum(a),
    "sort": lambda xp, a, b: xp.sort(b),
    "argmax": lambda xp, a, b: xp.argmax(a),
    "fft": lambda xp, a, b: xp.fft.fft(a),
    "concatenate": lambda xp, a, b: xp.concatenate([a, b]),
    "stack axis": lambda xp, a, b: xp.stack((a, b), axis=1),
    "where": lambda xp, a, b: xp.where(a > 1.0, a, b),
    "clip": lambda xp, a, b: xp.clip(a, 1.0, b),
    "dot": lambda xp, a, b: xp.dot(a, b),
    "searchsorted": lambda xp, a, b: xp.searchsorted(a, b),
}


@pytest.mark.parametrize("name", list(CALLS))
def test_tiny_host_calls_equal_numpy_and_stay_on_the_host(name: str, sim: Any) -> None:
    a_np = numpy.linspace(0.5, 3.0, 7)
    b_np = numpy.arange(1.0, 8.0)
    expected = CALLS[name](numpy, a_np, b_np)
    a, b = autodev.array(a_np), autodev.array(b_np)
    calls_before = sim.calls
    got = CALLS[name](autodev, a, b)
    assert_same(got, expected)
    assert sim.calls == calls_before  # nothing reached the device
    with autodev.trace() as t:  # the full prediction decides the same
        CALLS[name](autodev, a, b)
    assert t and all(r.device == "cpu" for r in t)


def test_the_policy_and_pins_are_obeyed(sim: Any) -> None:
    a = autodev.array(numpy.arange(4.0))
    assert autodev.zeros(3).location == "cpu"
    with autodev.policy("gpu"):
        assert (a + 1).location == sim.device
        assert autodev.sin(a).location == sim.device
        assert (a.reshape(2, 2) @ a.reshape(2, 2)).location == sim.device
        assert autodev.zeros(3).location == sim.device
        assert autodev.sum(a) == 6.0 and sim.calls > 0
    g = a.to_device("sim:0")  # a pin turns the shortcut off for the process
    assert (g + 1).location == sim.device and (g + 1).device == sim.device
    assert (a + 1).location == "cpu"


def test_only_calls_below_the_floor_skip_the_decision(sim: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev import _dispatch

    priced: list[str] = []
    choose = _dispatch.choose
    monkeypatch.setattr(_dispatch, "choose",
                        lambda spec, *rest: priced.append(spec.name) or choose(spec, *rest))
    n = int(min(host_floor("elementwise"), host_floor("transcendental")))
    assert n > 10  # the default profile's GPU has a fixed cost the CPU beats below it
    below = autodev.array(numpy.ones(n - 1))
    above = autodev.array(numpy.ones(int(host_floor("elementwise")) + 1))
    below + below
    autodev.sin(below)
    autodev.concatenate([below, below])  # (several arrays: the same floor, their work)
    autodev.where(below > 0, below, 0.0)
    assert priced == []
    above + above
    autodev.where(above > 0, below[:1], above)
    assert priced == ["add", "greater", "where"]
    with autodev.policy("gpu"):
        autodev.concatenate([below, below])
    assert priced[-1] == "concatenate"


def test_device_operands_are_decided_in_full(sim: Any) -> None:
    a = autodev.array(numpy.arange(4.0))
    d = autodev.array(numpy.arange(4.0)).to_device("sim:0").to_device("auto")
    autodev.stats(reset=True)
    got = a + d
    numpy.testing.assert_array_equal(to_numpy(got), numpy.arange(4.0) * 2)
    moved = autodev.stats()
    assert moved["h2d_count"] + moved["d2h_count"] == 1  # one operand crossed, as decided


@pytest.mark.parametrize("name", ["concatenate", "where", "dot", "stack"])
@pytest.mark.parametrize("n", [10, 3_000, 60_000, 200_000])
def test_a_function_of_several_host_arrays_is_placed_as_the_full_decision_places_it(
        sim: Any, name: str, n: int) -> None:
    rng = numpy.random.default_rng(n)
    a, b = autodev.array(rng.random(n)), autodev.array(rng.random(n))
    mask = autodev.array(rng.random(n) > 0.5)
    call = {"concatenate": lambda: autodev.concatenate([a, b]),
            "where": lambda: autodev.where(mask, a, b), "dot": lambda: autodev.dot(a, b),
            "stack": lambda: autodev.stack([a, b])}[name]
    with autodev.trace() as t:
        call()
    decided = [r.device for r in t if r.op.endswith(name)]
    got = call()
    where = got.location if isinstance(got, autodev.ndarray) else "cpu"
    assert decided and where == decided[-1]


@pytest.mark.parametrize("name", ["sort", "cumsum", "count_nonzero", "fft.fft", "argsort"])
@pytest.mark.parametrize("n", [10, 3_000, 60_000, 200_000])
def test_a_function_of_one_host_array_is_placed_as_the_full_decision_places_it(
        sim: Any, name: str, n: int) -> None:
    # one host array, no keyword: with a GPU usable the dispatcher skips the decision's
    # bookkeeping for calls the GPU cannot win; the traced call decides in full
    func = autodev.fft.fft if name == "fft.fft" else getattr(autodev, name)
    a = autodev.array(numpy.random.default_rng(n).random(n))
    with autodev.trace() as t:
        func(a)
    decided = [r.device for r in t if r.op.endswith(name.split(".")[-1])]
    got = func(a)
    where = got.location if isinstance(got, autodev.ndarray) else "cpu"
    assert decided and where == decided[-1]
