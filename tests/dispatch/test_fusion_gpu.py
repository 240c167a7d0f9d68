"""Deferred chains while a GPU is usable (the simulated one; autodev._chains): calls on host
data that the cost model keeps on the CPU are deferred as with no GPU, calls on device data
stay eager, and a chain priced as one call runs on the GPU when that is cheaper, its
inputs moved once."""

from __future__ import annotations

import math
from typing import Any, Iterator

import numpy as np
import pytest

import autodev
from autodev import _blocked as B, _fusion as F
from autodev._residency import storage as R
from fusecheck import pending, same_bits
from autodev.testing import gpu_costs, simulated_gpu

#: A GPU where one transcendental call on host data stays on the CPU (the move costs
#: more) but a chain of a few pays for it.
#: A link slow enough that one call does not pay for its move, and a chain of calls does
#: (a float32 sin of 1e6 elements: 0.27 ms on the host, by the embedded CPU curve).
SLOW_LINK = gpu_costs(transfer=(1e-5, 12e9))
BIG = 10**6


@pytest.fixture
def big_deferred() -> Iterator[None]:
    """Calls of ``BIG`` elements deferred, whatever the floor in force."""
    F.set_floor(BIG // 4)
    yield
    F.set_floor(None)


@pytest.fixture
def sim(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The simulated GPU (default curves), every call of 8 elements or more deferred, in
    blocks of 5 elements."""
    with simulated_gpu() as backend:
        monkeypatch.setattr(B, "BLOCK", 5)
        monkeypatch.setattr(B, "THREADED_BLOCK", 5)
        F.set_floor(8)
        yield backend
        F.set_floor(None)


def same(got: Any, want: np.ndarray) -> None:
    same_bits(got, want, strides=False)


def chain(m: Any, a: Any, b: Any) -> Any:
    c = m.exp(-a * 0.5) + b / (1.0 + a * a)
    return m.sqrt(m.abs(c)) * m.tanh(b - a) - 3 * c


@pytest.mark.parametrize("policy", ["auto", "cpu"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16])
def test_host_chain_is_deferred_and_bit_identical(sim: Any, policy: str, dtype: Any) -> None:
    a0 = (np.arange(60) % 17 - 8).astype(dtype)
    b0 = (np.arange(60) % 5 + 1).astype(dtype)
    with autodev.policy(policy):
        a, b = autodev.array(a0), autodev.array(b0)
        calls, moved = sim.calls, sim.h2d
        got = chain(autodev, a, b)
        assert pending(got) and id(a) in F.LEAVES
        with np.errstate(all="ignore"):
            same(got, chain(np, a0, b0))
    assert (sim.calls, sim.h2d) == (calls, moved)  # (nothing ran on the GPU)
    assert str(got.location) == "cpu"


READS = {
    "repr": repr, "str": str, "item": lambda x: x[3].item(), "index": lambda x: x[2:5],
    "array": np.asarray, "tolist": lambda x: x.tolist(), "bool": lambda x: bool(x[0]),
    "sum": lambda x: autodev.sum(x), "method": lambda x: x.max(), "shape": lambda x: x.shape,
    "buffer": lambda x: bytes(memoryview(x)), "copy": lambda x: x.copy(),
}


@pytest.mark.parametrize("read", sorted(READS))
def test_every_read_evaluates(sim: Any, read: str) -> None:
    a = autodev.arange(40.0)
    r = a * 2 + 1
    assert pending(r)
    READS[read](r)
    assert not F.NODES and not pending(r)
    same(r, np.arange(40.0) * 2 + 1)


def test_write_to_an_input_evaluates_first(sim: Any) -> None:
    a = autodev.arange(40.0)
    r = a * 2
    a[0] = 100.0
    same(r, np.arange(40.0) * 2)
    assert float(a[0]) == 100.0


def test_device_operand_stays_eager(sim: Any) -> None:
    with autodev.policy("gpu"):
        d = autodev.arange(40.0) * 2  # lives on the GPU, placed auto
    assert str(d.location) == "sim:0" and not pending(d)
    h = autodev.arange(40.0)
    for r in (d + 1, d * h, h - d, autodev.sin(d)):
        assert not pending(r) and not F.NODES
    same(d * h, np.arange(40.0) ** 2 * 2)


def test_policy_gpu_is_not_deferred(sim: Any) -> None:
    a = autodev.arange(40.0)
    with autodev.policy("gpu"):
        r = a * 2
    assert not pending(r) and str(r.location) == "sim:0"


def test_errors_raise_at_the_call(sim: Any) -> None:
    a = autodev.arange(40.0)
    with pytest.raises(ValueError):
        a + autodev.arange(3.0)
    with pytest.raises(TypeError):
        autodev.arange(40) << 1.5
    assert not F.NODES


def test_fuse_off(sim: Any) -> None:
    F.set_floor(F.NEVER)
    r = autodev.arange(40.0) * 2
    assert not pending(r)


def _loop(x: Any, sin: Any, rounds: int = 3) -> Any:
    for _ in range(rounds):
        x = x * 0.5 + sin(x) * 0.25
    return x


def test_chain_cheaper_on_the_gpu_moves_once_and_runs_there(big_deferred: None) -> None:
    x0 = np.linspace(0, 1, BIG, dtype=np.float32)
    with simulated_gpu(SLOW_LINK) as sim:
        x = autodev.array(x0)
        calls, moved, kernels = sim.calls, sim.h2d, sim.kernels
        with autodev.trace() as records:
            got = _loop(x, autodev.sin)
        fused = [r for r in records if r.op == "fused"]
        assert len(fused) == 1 and fused[0].device == "sim:0"
        assert fused[0].costs["sim:0"] < fused[0].costs["cpu"]
        assert fused[0].transfers == [("h2d", x0.nbytes)]
        assert "one fused kernel of" in fused[0].reason
        assert sim.h2d == moved + 1  # the chain's one input, moved once
        assert sim.kernels == kernels + 1  # the chain: one launch
        eager = len(records) - 1  # (the calls after it, on its results, one call each)
        assert sim.calls == calls + 2 + eager
        assert str(got.location) == "sim:0" and got._pin is None
        assert autodev.stats()["fused_on"].get("sim:0", 0) >= 1
        same(got, _loop(x0, np.sin))  # (the simulator runs NumPy's loops)


def test_chain_out_of_memory_on_the_gpu_runs_on_the_cpu(monkeypatch: pytest.MonkeyPatch,
                                                         big_deferred: None) -> None:
    """A chain that crosses takes the device's one fault mechanism: out of memory frees and
    retries once, then the CPU's pass runs it, counted and warned as every fallback."""
    from autodev import _trace

    monkeypatch.setattr(_trace.STATS, "warned", False)  # (the once-per-process warning)
    x0 = np.linspace(0, 1, BIG, dtype=np.float32)
    with simulated_gpu(SLOW_LINK) as sim:
        x = autodev.array(x0)
        sim.inject_fault("oom", count=None)
        with pytest.warns(autodev.FallbackWarning):
            got = _loop(x, autodev.sin)
            same(got, _loop(x0, np.sin))
        sim.clear_faults()
        assert str(got.location) == "cpu"
        assert autodev.stats()["fallback_reasons"]
        assert sim.freed >= 1


def test_chain_cheaper_on_the_cpu_stays_there(big_deferred: None) -> None:
    x0 = np.linspace(0, 1, BIG, dtype=np.float32)
    with simulated_gpu(SLOW_LINK) as sim, autodev.policy("cpu"):
        x = autodev.array(x0)
        moved = sim.h2d
        with autodev.trace() as records:
            got = _loop(x, autodev.sin, rounds=1)
        fused = [r for r in records if r.op == "fused"]
        assert len(fused) == 1 and fused[0].device == "cpu"
        assert set(fused[0].costs) == {"cpu", "sim:0"}
        assert sim.h2d == moved and str(got.location) == "cpu"
        same(got, _loop(x0, np.sin, rounds=1))


def test_one_call_cheaper_on_the_gpu_runs_at_once() -> None:
    with simulated_gpu(gpu_costs(latency=1e-9, transfer=(1e-9, 1e12))) as sim:
        x = autodev.array(np.linspace(0, 1, BIG, dtype=np.float32))
        r = autodev.sin(x)
        assert not pending(r) and str(r.location) == "sim:0" and sim.h2d >= 1


def _loop_body(m: Any, x: Any, y: Any) -> Any:
    return (x * 1.5 + y) * 0.5 - y


def test_a_loop_over_the_same_host_data_moves_it_once_with_chains(big_deferred: None) -> None:
    """Chains that run on the CPU credit their inputs as decided calls do (reuse credit):
    a loop over the same two host arrays, each iteration a chain that the GPU does not
    win while both must move, mirrors them once their credit pays for the moves (without
    it, the loop stayed on the CPU for ever); the iterations after it run on the GPU, bit
    for bit, and nothing is moved again. Each input is priced and moved once however many
    calls of a chain read it (here, after the first iteration, through watched memory)."""
    rng = np.random.default_rng(2)
    x0, y0 = rng.random(BIG), rng.random(BIG)
    with simulated_gpu() as gpu:
        x, y = autodev.array(x0), autodev.array(y0)
        for _ in range(12):
            same(_loop_body(autodev, x, y), _loop_body(np, x0, y0))
        assert R.has_mirror(x, gpu.device) and R.has_mirror(y, gpu.device)
        moved = autodev.stats()["h2d_bytes"]
        with autodev.trace() as records:
            same(_loop_body(autodev, x, y), _loop_body(np, x0, y0))
        assert {r.device for r in records} == {str(gpu.device)}
        assert autodev.stats()["h2d_bytes"] == moved


def test_the_pending_chain_is_priced_as_it_grows_as_if_whole(sim: Any) -> None:
    """The pending chain's price is kept between joins and extended by the calls that
    joined (n node prices for n calls, not n²/2); at every length it is the price of the
    chain priced whole, a dtype that widens the chain midway included."""
    from autodev import _chains as C

    a = autodev.array(np.arange(40, dtype=np.float32))
    b = autodev.array(np.arange(40.0))
    x = a * 2
    seen = []
    for step in range(6):
        x = x + (b if step == 3 else 1)  # (float64 from the fourth call on)
        assert pending(x)
        seen.append(C.price(F.NODES))
        assert seen[-1] == C.price(list(F.NODES))  # (a copy: priced whole, nothing kept)
        _every_call_priced_in_the_widest_class(list(F.NODES))
    assert len({cost for cost in seen}) == len(seen)
    same(x, ((np.arange(40, dtype=np.float32) * 2 + 1 + 1 + 1) + np.arange(40.0)) + 1 + 1)


def _every_call_priced_in_the_widest_class(nodes: list[Any]) -> None:
    """Each call's arithmetic in a chain's price is at the curves of the chain's widest
    dtype, the calls before a wider one joined included."""
    from autodev import _chains as C
    from autodev._cost.cache import cost_model
    from autodev._cost.model import dtype_class

    model = cost_model()
    widest = max((node.dtype for node in nodes), key=lambda d: d.itemsize)
    dclass = dtype_class(widest)
    _, cpu_inv, _, gpu_inv = model.curves("elementwise", dclass)
    cpu = gpu = 0.0
    for node in nodes:
        _, f_cpu_inv, _, f_gpu_inv = model.curves(C._family(node.ufunc), dclass)
        size = math.prod(node.shape)
        cpu += size * max(f_cpu_inv - (1.0 - C.IN_CACHE) * cpu_inv, C.IN_CACHE * cpu_inv)
        gpu += size * max(f_gpu_inv - (1.0 - C.IN_CACHE) * gpu_inv, C.IN_CACHE * gpu_inv)
    sums = C._sums(nodes, model, False)
    assert (sums.widest, sums.cpu, sums.gpu) == (widest, cpu, gpu)
