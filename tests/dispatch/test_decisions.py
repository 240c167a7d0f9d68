"""Cached decisions (issue 13): an unwatched call whose inputs repeat (op, policy,
devices, dtypes, shapes, mirrors, plain keywords) reuses the decision made for them,
and every program decides exactly as it does with each call priced afresh: the same
device per call, the same reuse-credit moves, the same credit left on each array.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable

import numpy
import pytest

import autodev
from autodev._config import ENV
from autodev import _decide, _dispatch
from autodev._residency import reuse as _reuse
from autodev._residency import storage as R
from autodev.testing import gpu_costs, simulated_gpu, to_numpy

SIM = autodev.Device("sim", 0)


def _host(shape: tuple[int, ...], seed: int) -> Any:
    return autodev.array(numpy.random.default_rng(seed).standard_normal(shape))


def power_loop() -> tuple[list[Any], Any]:
    """The README's loop: a host matrix reused until its credit pays for the move."""
    a = _host((1024, 1024), 0)
    x = autodev.ones(1024)
    for _ in range(40):
        x = a @ x
        x = x / autodev.linalg.norm(x)
    return [a], x


def rewritten() -> tuple[list[Any], Any]:
    """An array written every iteration: its credit is reset, it never moves."""
    a = _host((1024, 1024), 1)
    x = autodev.ones(1024)
    for i in range(30):
        a[0, 0] = float(i)
        x = a @ x
        x = x / autodev.linalg.norm(x)
    return [a], x


def mixed() -> tuple[list[Any], Any]:
    """Tiny, medium and large calls, keywords, policies, device-resident chains and
    pinned arrays in one loop, so that decisions of every kind repeat."""
    big = _host((600, 600), 2)
    col = _host((600,), 3)
    small = _host((8,), 4)
    g = _host((300, 300), 5).to_device("sim:0").to_device("auto")
    pinned = _host((50,), 6).to_device("sim:0")
    acc = []
    for i in range(25):
        acc.append(float(autodev.sum(big, axis=0, keepdims=True)[0, i]))
        acc.append(float(((big @ col) * 2.0).max()))
        acc.append(float(autodev.sin(small).sum()))
        h = autodev.tanh(g @ g) + 1.0
        acc.append(float(h.mean(axis=1)[i]))
        acc.append(float((pinned * 3.0).sum()))
        with autodev.policy("gpu"):
            acc.append(float(autodev.add(small, 1.0).sum()))
        with autodev.policy("cpu"):
            acc.append(float(autodev.cos(col).sum()))
        if i % 5 == 4:
            col = col + 0.5  # a new array: a new storage, its credit from nothing
    return [big, col, small], autodev.asarray(acc)


PROGRAMS: dict[str, Callable[[], tuple[list[Any], Any]]] = {
    "power": power_loop, "rewritten": rewritten, "mixed": mixed}


def run(program: Callable[[], tuple[list[Any], Any]], cached: bool,
        monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run ``program`` on a fresh simulated GPU; with ``cached=False`` every call is
    priced afresh. Returns each dispatched call's device, the transfer and move counts,
    the priced calls counted for credit's decay, the credit left, and the result."""
    devices: list[tuple[str, str]] = []
    predictions = [0]
    real_execute, real_predict = _dispatch.execute, _decide._predict

    def execute(spec: Any, device: Any, *rest: Any) -> Any:
        devices.append((spec.name, str(device)))
        return real_execute(spec, device, *rest)

    def predict(*args: Any, **kwargs: Any) -> Any:
        predictions[0] += 1
        return real_predict(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(_dispatch, "execute", execute)
        m.setattr(_decide, "_predict", predict)
        m.setattr(_reuse, "_CLOCK", itertools.count(1))
        if not cached:
            m.setattr(_decide, "_decision_key", lambda *args: None)
        with simulated_gpu():
            autodev.stats(reset=True)
            kept, result = program()
            stats = autodev.stats()
            credit = [(s.credit, s.credit_calls, s.credit_at)
                      for s in (R.storage_of(a) for a in kept)]
            result = to_numpy(result)
            _reuse.forget_all()
        priced = next(_reuse._CLOCK)
    return {"devices": devices, "predictions": predictions[0], "priced": priced,
            "credit": credit, "result": result,
            "stats": {k: stats[k] for k in ("calls", "h2d_count", "h2d_bytes", "d2h_count",
                                            "reuse_moves", "reuse_bytes")}}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_cached_decisions_are_the_fresh_ones(name: str, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    fresh = run(PROGRAMS[name], False, monkeypatch)
    cached = run(PROGRAMS[name], True, monkeypatch)
    assert cached["devices"] == fresh["devices"]
    assert cached["stats"] == fresh["stats"]
    assert cached["priced"] == fresh["priced"]
    assert cached["credit"] == fresh["credit"]
    numpy.testing.assert_array_equal(cached["result"], fresh["result"])
    counts = (cached["predictions"], fresh["predictions"])
    # the cache decided most calls, those that earn credit too ("rewritten": every product
    # earns it, and is credited at each use as when it was priced)
    assert counts[0] < counts[1] / 2, counts
    if name == "power":
        assert fresh["stats"]["reuse_moves"] == 1  # the program exercised a move


@pytest.fixture
def sim() -> Any:
    with simulated_gpu() as backend:
        yield backend


def test_a_new_mirror_changes_the_decision(sim: Any) -> None:
    """The decision to stay on the CPU (moving the matrix costs more than the product
    saves) is not reused once the matrix has a valid mirror on the GPU."""
    a = _host((1024, 1024), 7)
    x = autodev.ones(1024)
    assert (a @ x).location == "cpu"
    assert (a @ x).location == "cpu"
    R.native_on(a, SIM)  # a mirror, as a transfer leaves one
    assert (a @ x).location == SIM
    a[0, 0] = 1.0  # a write: the mirror is stale, the CPU wins again
    assert (a @ x).location == "cpu"


def test_keywords_and_policy_are_part_of_the_decision(sim: Any) -> None:
    a, b = _host((100_000,), 8), _host((100_000,), 9)  # above the host floor: priced
    assert autodev.add(a, b).location == "cpu"  # auto: moving both costs more than it saves
    with autodev.policy("gpu"):
        assert autodev.add(a, b).location == SIM
        # CuPy's ufuncs take no where=: the capability table runs it on the CPU
        assert autodev.add(a, b, where=True).location == "cpu"
        assert autodev.add(a, b).location == SIM
    # auto again: the GPU calls left mirrors of a and b there, so nothing has to move
    assert autodev.add(a, b).location == SIM
    key = _decide._decision_key
    spec = _dispatch.ndarray  # any hashable stands for the op here
    assert key(spec, [a], {"axis": True}, "auto", SIM) != key(spec, [a], {"axis": 1}, "auto",
                                                               SIM)
    assert key(spec, [a], {"axis": [0]}, "auto", SIM) is None  # not a plain value
    assert key(spec, [a, numpy.ones(3)], {}, "auto", SIM) is None  # not an autodev array


def test_a_new_cost_model_forgets_the_decisions() -> None:
    """The same call on ``sim:0`` under curves where the GPU wins everything, then under
    the default curves: the second is decided afresh."""
    a, b = _host((16,), 10), _host((16,), 11)
    with simulated_gpu(gpu_costs(latency=1e-9)):
        assert (a + b).location == SIM
    with simulated_gpu():
        assert (a + b).location == "cpu"


def test_the_cache_stays_bounded(sim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_decide, "_DECISIONS_MAX", 8)
    # (no reuse credit: a call that earns credit, as these may, is decided afresh each time)
    monkeypatch.setattr(ENV, "mirror_budget", 0.0)
    sizes = []
    for n in range(100_000, 100_030):  # above the host floor: each shape decided once
        numpy.testing.assert_array_equal(to_numpy(autodev.exp(autodev.ones(n))),
                                         numpy.exp(numpy.ones(n)))
        sizes.append(len(_decide._DECISIONS))
    assert max(sizes) == 8 and min(sizes) >= 1
