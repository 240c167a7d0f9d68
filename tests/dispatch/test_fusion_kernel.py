"""A deferred chain that crosses to the GPU runs as one fused kernel (autodev._chain_kernels),
on the simulated GPU, which imitates cupy.fuse: one launch per chain, each call in the
dtypes NumPy resolved for it, results equal to the unfused GPU run's and NumPy's; where
the device cannot fuse a chain, its calls run in order, for a reason the trace and stats
name."""

from __future__ import annotations

import warnings
from typing import Any, Callable, Iterator

import numpy as np
import pytest

import autodev
from autodev import _blocked as B, _chain_kernels as K, _chains as C, _fusion as F
from autodev.testing import simulated_gpu
from fusecheck import pending, same_bits


@pytest.fixture
def sim(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """The simulated GPU, every call of 8 elements or more deferred; chains cross to the
    GPU only when a test says so (:func:`crossing_at`)."""
    with simulated_gpu() as backend:
        monkeypatch.setattr(B, "BLOCK", 5)
        monkeypatch.setattr(B, "THREADED_BLOCK", 5)
        monkeypatch.setattr(C.PLACER, "crosses", lambda nodes: False)
        F.set_floor(8)
        yield backend
        F.set_floor(None)


def crossing_at(monkeypatch: pytest.MonkeyPatch, calls: int) -> None:
    """From now on a chain crosses to the GPU once it holds ``calls`` calls (each one
    that may run there)."""
    monkeypatch.setattr(C.PLACER, "crosses",
                        lambda nodes: len(nodes) >= calls and all(n.gpu for n in nodes))


def calls_of(func: Callable[..., Any], hosts: tuple[np.ndarray, ...]) -> int:
    """How many calls ``func`` defers (with no chain crossing)."""
    arrays = [autodev.array(h) for h in hosts]
    with np.errstate(all="ignore"):
        result = func(autodev, *arrays)
        count = len(F.NODES)
        F.flush()
    del result
    return count


def on_the_gpu(sim: Any, monkeypatch: pytest.MonkeyPatch, func: Callable[..., Any],
               *hosts: np.ndarray) -> tuple[Any, list[Any], int]:
    """``func`` run by autodev, its whole chain crossing to the GPU at its last call: the
    result, the trace records and the kernels launched."""
    count = calls_of(func, hosts)
    crossing_at(monkeypatch, count)
    arrays = [autodev.array(h) for h in hosts]
    kernels = sim.kernels
    with autodev.trace() as records, np.errstate(all="ignore"):
        got = func(autodev, *arrays)
    return got, list(records), sim.kernels - kernels


def unfused_gpu(func: Callable[..., Any], *hosts: np.ndarray) -> np.ndarray:
    """``func`` run as the GPU's calls, one by one (policy gpu: nothing is deferred)."""
    with autodev.policy("gpu"), np.errstate(all="ignore"):
        got = func(autodev, *(autodev.array(h) for h in hosts))
    assert str(got.location) == "sim:0"
    return host(got)


def host(x: Any) -> np.ndarray:
    """``x``'s values on the host (pinning nothing: a pin turns deferral off)."""
    return np.asarray(x)


def floats(m: Any, a: Any, b: Any) -> Any:
    c = m.exp(-a * 0.5) + b / (1.0 + a * a)
    return m.sqrt(m.abs(c)) * m.tanh(b - a) - 3 * c


def integers(m: Any, a: Any, b: Any) -> Any:
    return (a * 3 + b) // 2 - a % 5 + (b - a) * 7


def int_division(m: Any, a: Any, b: Any) -> Any:
    return (a / b) * 2 + a  # true_divide of integers: float64


def masks(m: Any, a: Any, b: Any) -> Any:
    return ((a < 3) | (b >= a)) & ~m.not_equal(a, b)


def mixed(m: Any, a: Any, b: Any) -> Any:
    return a.astype(np.int32) * b + np.float32(2) * a  # (a NumPy scalar is strong)


def complexes(m: Any, a: Any, b: Any) -> Any:
    return (a * 1j + b) * (a - 2.5j)


CASES: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "floats": (floats, [np.float32, np.float64, np.float16]),
    "integers": (integers, [np.int16, np.uint8, np.int64, np.int32]),
    "int_division": (int_division, [np.int64, np.uint16, np.int8]),
    "masks": (masks, [np.int8, np.int32, np.float32, np.uint64]),
    "mixed": (mixed, [np.float32, np.float16]),
    "complexes": (complexes, [np.float32, np.complex64, np.complex128]),
}
PARAMS = [(name, dtype) for name, (_, dtypes) in CASES.items() for dtype in dtypes]


def inputs(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
    a = (np.arange(60) % 17 - 8).astype(dtype)
    b = (np.arange(60) % 5 + 1).astype(dtype)
    return a, b


@pytest.mark.parametrize("name,dtype", PARAMS)
def test_a_chain_is_one_kernel_equal_to_the_unfused_gpu_run(
        sim: Any, monkeypatch: pytest.MonkeyPatch, name: str, dtype: Any) -> None:
    func = CASES[name][0]
    a0, b0 = inputs(dtype)
    count = calls_of(func, (a0, b0))
    assert count >= 3
    calls, moved = sim.calls, sim.h2d
    got, records, kernels = on_the_gpu(sim, monkeypatch, func, a0, b0)
    assert kernels == 1
    assert sim.calls - calls == (sim.h2d - moved) + 1  # the inputs' moves, then one launch
    assert str(got.location) == "sim:0" and not pending(got)
    result = host(got)
    same_bits(result, unfused_gpu(func, a0, b0))
    with np.errstate(all="ignore"):
        same_bits(result, func(np, a0, b0))  # (the simulator computes with NumPy's loops)
    fused = [r for r in records if r.op == "fused"]
    assert len(fused) == 1 and fused[0].device == "sim:0"
    assert f"one fused kernel of {count} calls" in fused[0].reason
    assert autodev.stats()["fused_kernels"] >= 1 and not autodev.stats()["unfused"]


def test_the_trace_lists_the_chains_calls(sim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    a0, b0 = inputs(np.float64)
    got, records, kernels = on_the_gpu(sim, monkeypatch,
                                       lambda m, a, b: m.sin(a * 2.0 + b) - b, a0, b0)
    (record,) = records
    assert record.op == "fused" and record.device == "sim:0" and kernels == 1
    assert record.reason.endswith("one fused kernel of 4 calls: multiply, add, sin, subtract")
    assert record.transfers == [("h2d", a0.nbytes), ("h2d", b0.nbytes)]


def test_results_kept_alive_are_the_kernels_outputs(sim: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    a0, b0 = inputs(np.float32)
    crossing_at(monkeypatch, 4)
    a, b = autodev.array(a0), autodev.array(b0)
    kernels = sim.kernels
    first = a * b
    second = first + 1.5
    third = autodev.cos(second)
    fourth = third * first
    assert sim.kernels == kernels + 1
    for got, want in zip((first, second, third, fourth),
                         (a0 * b0, a0 * b0 + 1.5, np.cos(a0 * b0 + 1.5),
                          np.cos(a0 * b0 + 1.5) * (a0 * b0))):
        assert str(got.location) == "sim:0"
        same_bits(host(got), want)


def test_one_kernel_serves_a_loop_whose_scalars_change(sim: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    x0, v0 = inputs(np.float64)
    crossing_at(monkeypatch, 3)
    K.forget()
    kernels = sim.kernels
    for dt in (0.1, 0.25, 3.0):
        x, v = autodev.array(x0), autodev.array(v0)
        got = x + dt * v - dt
        same_bits(host(got), x0 + dt * v0 - dt)
    assert sim.kernels == kernels + 3 and len(K._KERNELS) == 1
    (fused,) = K._KERNELS.values()
    assert len(fused._memo) == 1  # traced once


def test_a_kernel_reports_no_floating_point_errors(sim: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """As CuPy's kernels: a chain run as one kernel warns nothing (docs/performance.md)."""
    a0 = np.array([0.0, 1.0, -1.0, 2.0] * 10)
    b0 = np.array([0.0, 1.0, 2.0, 0.0] * 10)
    count = calls_of(lambda m, a, b: m.log(a) + 1.0 / b - b, (a0, b0))
    crossing_at(monkeypatch, count)
    a, b = autodev.array(a0), autodev.array(b0)
    with warnings.catch_warnings(record=True) as seen:  # (a filter "error" would make
        warnings.simplefilter("always")  # every call run at once, undeferred)
        got = autodev.log(a) + 1.0 / b - b
        result = host(got)
    assert not seen
    with np.errstate(all="ignore"):
        same_bits(result, np.log(a0) + 1.0 / b0 - b0)
    assert sim.last_kernel == "autodev_chain"


def test_a_python_integer_out_of_range_runs_the_calls_in_order(
        sim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """NumPy compares a uint8 array with -1 exactly: no uint8 stands for -1, so no kernel
    can take it; the chain runs as the GPU's calls, visibly."""
    a0 = np.arange(60, dtype=np.uint8)
    func: Callable[..., Any] = lambda m, a, b: (a < -1) | (a + b > 300 - 250)
    got, records, kernels = on_the_gpu(sim, monkeypatch, func, a0, a0.copy())
    assert kernels == 0 and str(got.location) == "sim:0"
    same_bits(host(got), func(np, a0, a0.copy()))
    (record,) = records
    reason = "`less` compares with the Python integer -1, outside uint8's range"
    assert f"4 calls in order ({reason})" in record.reason
    assert autodev.stats()["unfused"] == {reason: 1}


def test_a_chain_the_device_refuses_runs_in_order_from_then_on(
        sim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The device's fusion raising one of its backend's ``fusion_errors`` (here: the
    kernel's launch declined as not implemented) runs the chain's calls in order; the
    refusal is kept for the chain's structure."""
    a0, b0 = inputs(np.float32)
    func: Callable[..., Any] = lambda m, a, b: m.exp(a) * b + a
    count = calls_of(func, (a0, b0))
    crossing_at(monkeypatch, count)
    K.forget()
    sim.inject_fault("unimplemented", at_call=3)  # (two moves, then the kernel)
    kernels = sim.kernels
    for _ in range(2):
        a, b = autodev.array(a0), autodev.array(b0)
        got = func(autodev, a, b)
        assert str(got.location) == "sim:0"
        same_bits(host(got), func(np, a0, b0))
    assert sim.kernels == kernels
    (reason,) = autodev.stats()["unfused"]
    assert "sim:0's fusion refused it (NotImplementedError" in reason
    assert autodev.stats()["unfused"][reason] == 2


def test_out_of_memory_at_the_kernel_frees_and_retries(sim: Any,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    a0, b0 = inputs(np.float64)
    func: Callable[..., Any] = lambda m, a, b: m.sqrt(a * a + b) - b
    count = calls_of(func, (a0, b0))
    crossing_at(monkeypatch, count)
    sim.inject_fault("oom", at_call=3)
    kernels, freed = sim.kernels, sim.freed
    a, b = autodev.array(a0), autodev.array(b0)
    got = func(autodev, a, b)
    assert sim.freed == freed + 1 and sim.kernels == kernels + 1
    same_bits(host(got), func(np, a0, b0))



UFUNCS = sorted(name for name, u in vars(np).items()
                if isinstance(u, np.ufunc) and name == u.__name__ and u.nout == 1
                and u.nin in (1, 2) and u.signature is None and hasattr(autodev, name))
DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint64, np.float16,
          np.float32, np.float64, np.complex64, np.complex128]
SCALARS: list[Any] = [None, 3, -2, 2.5, 1 - 2j, np.float32(1.5), np.int16(-3)]


def _operands(name: str, dtype: Any, scalar: Any) -> tuple[np.ndarray, ...] | None:
    a = (np.arange(24) % 7 - 3).astype(dtype)
    b = (np.arange(24) % 5 + 1).astype(dtype)
    if getattr(np, name).nin == 1:
        return (a,) if scalar is None else None
    return (a, b) if scalar is None else (a,)


@pytest.mark.parametrize("name", UFUNCS)
def test_every_ufunc_as_a_kernel_computes_in_numpys_dtypes(
        sim: Any, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Each call a chain may hold, alone in a chain that crosses at once: as one kernel
    (or, for a named reason, the GPU's call: a Python integer out of range, a loop CuPy
    lacks), NumPy's result, bit for bit, in NumPy's dtype (weak Python scalars, strong
    NumPy ones, mixed kinds)."""
    crossing_at(monkeypatch, 1)
    np_ufunc, ours = getattr(np, name), getattr(autodev, name)
    fused = 0
    for dtype in DTYPES:
        for scalar in SCALARS:
            hosts = _operands(name, dtype, scalar)
            if hosts is None:
                continue
            args = hosts if scalar is None else (*hosts, scalar)
            try:
                with np.errstate(all="ignore"):
                    want = np_ufunc(*args)
            except (TypeError, ValueError, OverflowError) as err:
                with pytest.raises(type(err)):
                    ours(*(autodev.array(h) for h in hosts), *args[len(hosts):])
                continue
            arrays = [autodev.array(h) for h in hosts]
            kernels, unfused = sim.kernels, dict(autodev.stats()["unfused"])
            with np.errstate(all="ignore"):
                got = ours(*arrays, *args[len(hosts):])
            ran = sim.kernels - kernels
            fused += ran
            if ran == 0 and str(got.location) == "sim:0":  # (crossed, yet not one kernel)
                assert autodev.stats()["unfused"] != unfused
            same_bits(host(got), want)
    assert fused > 0 or getattr(sim.xp, name, None) is None  # (one the GPU lacks stays)


def test_each_result_shape_is_one_kernel_and_broadcasts(sim: Any,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two chains pending together cross as two kernels (one per result shape); a kernel
    broadcasts its inputs as the calls did; a chain whose results are all dropped runs
    nothing on the GPU."""
    col0 = np.arange(8.0).reshape(8, 1)
    row0 = np.linspace(-1, 1, 5).reshape(1, 5)
    flat0 = np.arange(40, dtype=np.float32)
    crossing_at(monkeypatch, 7)
    col, row, flat = autodev.array(col0), autodev.array(row0), autodev.array(flat0)
    other = autodev.array(np.arange(12.0))
    kernels, moved = sim.kernels, sim.h2d
    with autodev.trace() as records:
        grid = col * row + 1.0
        line = flat * 2
        dropped = flat - 1
        unused = other * 2 + 1
        del dropped, unused
        grid = autodev.sin(grid)
    assert sim.kernels == kernels + 2 and sim.h2d == moved + 3  # (other is not moved)
    (record,) = records
    assert record.reason.count("one fused kernel of") == 2
    assert "2 calls whose results are unused: not run" in record.reason
    same_bits(host(grid), np.sin(col0 * row0 + 1.0))
    same_bits(host(line), flat0 * 2)

