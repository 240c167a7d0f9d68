"""Placement (``auto`` or pinned) and reuse credit, on the simulated GPU.

Loop costs are the cost model's predictions for each call as it was decided (the
sim's true curves are the model's GPU curves), never wall-clock time.
"""

from __future__ import annotations

import pickle
from typing import Any, Callable

import numpy
import pytest
import scipy.sparse

import autodev
from autodev._residency import reuse as _reuse
from autodev._config import ENV
from autodev._cost.cache import cost_model
from autodev.testing import simulated_gpu, to_numpy

from diffcheck import assert_same

AUTO = autodev.Device("auto")
SIM = autodev.Device("sim", 0)


@pytest.fixture
def sim() -> Any:
    with simulated_gpu() as backend:
        yield backend


# ---------------------------------------------------------------------- placement

def test_results_of_auto_arrays_are_auto_on_every_policy(sim: Any) -> None:
    a = numpy.arange(12.0).reshape(3, 4)
    for policy in ("auto", "cpu", "gpu"):
        with autodev.policy(policy):
            x = autodev.asarray(a)
            for result in (x + 1, x.sum(axis=0), x.T, x[1:], autodev.linalg.norm(x, axis=1),
                           autodev.sort(x, axis=0), x.astype(numpy.float32)):
                assert result.device == AUTO and result.device == "auto"
            assert (x + 1).location == (SIM if policy == "gpu" else autodev.Device("cpu"))


def test_pins_are_obeyed_and_kept(sim: Any) -> None:
    a = numpy.arange(6.0)
    g = autodev.asarray(a).to_device("sim:0")
    c = autodev.asarray(a, device="cpu")
    assert g.device == SIM and g.location == SIM and c.device == "cpu"
    with autodev.policy("cpu"):  # a policy steers auto arrays only
        r = g * 2 + 1
    assert r.device == SIM and r.location == SIM
    assert_same(r, a * 2 + 1)
    with autodev.policy("gpu"):
        s = c * 2
    assert s.device == "cpu" and s.location == "cpu"
    # an auto array meeting a pinned one follows the pin
    assert (autodev.asarray(a) + g).device == SIM
    for made in (autodev.zeros(3, device="sim:0"), autodev.ones_like(c, device="sim:0"),
                 autodev.asarray([1.0, 2.0], device="sim:0"), autodev.full(2, 3.0, device=SIM)):
        assert made.device == SIM and made.location == SIM


def test_device_auto_is_accepted_wherever_a_device_is(sim: Any) -> None:
    x = autodev.asarray(numpy.ones(3))
    assert x.device == AUTO
    for made in (autodev.zeros(3, device=x.device), autodev.zeros_like(x, device=x.device),
                 autodev.asarray([1, 2], device="auto"), autodev.arange(3, device="auto"),
                 autodev.empty_like(x, device="auto"), x.to_device("auto")):
        assert made.device == AUTO
    pinned = x.to_device("sim:0")
    back = pinned.to_device("auto")
    assert back.device == AUTO and back.location == SIM  # unpinning moves nothing
    assert autodev.devices()[0]["device"] == AUTO


def test_two_pins_in_one_call_raise_naming_both(sim: Any) -> None:
    g = autodev.ones(3).to_device("sim:0")
    c = autodev.ones(3).to_device("cpu")
    with pytest.raises(ValueError, match=r"sim:0 and cpu|cpu and sim:0"):
        g + c
    with pytest.raises(ValueError, match="pinned to different devices"):
        autodev.concatenate([g, c])


def test_unpin_and_pin_share_memory_on_the_same_device(sim: Any) -> None:
    x = autodev.asarray(numpy.zeros(3))
    y = x.to_device("cpu")
    y[0] = 5.0
    assert float(x[0]) == 5.0  # NumPy's to_device on its own device: the same data


def test_pickling_keeps_placement(sim: Any) -> None:
    a = numpy.arange(4.0)
    for x in (autodev.asarray(a), autodev.asarray(a).to_device("sim:0"),
              autodev.asarray(a, device="cpu")):
        y = pickle.loads(pickle.dumps(x))
        assert y.device == x.device and y.location == x.location
        assert_same(y, a)


def test_residency_reports_placement_primary_and_mirrors(sim: Any) -> None:
    x = autodev.array(numpy.ones(4))
    assert autodev.residency(x) == {"placement": AUTO, "primary": autodev.Device("cpu"),
                                    "mirrors": []}
    with autodev.policy("gpu"):
        x + 1  # leaves a mirror on the device
    assert autodev.residency(x)["mirrors"] == [SIM]
    x[0] = 2.0
    assert autodev.residency(x)["mirrors"] == []


def test_trace_records_show_placement_and_location(sim: Any) -> None:
    g = autodev.ones(3).to_device("sim:0")
    with autodev.trace() as t:
        g + 1
        autodev.ones(3) + 1
    assert (t[0].device, t[0].placement) == ("sim:0", "sim:0")
    assert (t[1].device, t[1].placement) == ("cpu", "auto")
    assert "pinned sim:0" in t[0].line()


# ---------------------------------------------------------------------- reuse credit

def loop_cost(records: list[Any]) -> float:
    """Predicted seconds of a traced loop: each call on the device it ran on (its
    transfers included), plus the reuse moves."""
    model = cost_model()
    total = 0.0
    for r in records:
        if r.op == "move":
            total += sum(model.h2d(n) if d == "h2d" else model.d2h(n) for d, n in r.transfers)
        elif r.costs:
            total += r.costs[r.device]
    return total


def run_placed(body: Callable[[Any], Any], fixed: dict[str, numpy.ndarray], start: str,
               monkeypatch: pytest.MonkeyPatch) -> tuple[float, Any, list[Any]]:
    """Run ``body(arrays)`` traced; ``start``: ``auto`` (reuse credit on, data on the host),
    ``cpu`` (no credit, data on the host) or ``gpu`` (data moved once first, no credit)."""
    arrays = {k: autodev.array(v) for k, v in fixed.items()}  # owned: a mirror can be trusted
    monkeypatch.setattr(ENV, "mirror_budget", 0.5 if start == "auto" else 0.0)
    cost = 0.0
    if start == "gpu":
        moved = {}
        for k, v in arrays.items():
            moved[k] = v.to_device("sim:0").to_device("auto")
            cost += cost_model().h2d(v.nbytes)
        arrays = moved
    with autodev.trace() as t:
        result = body(arrays)
    return cost + loop_cost(t), result, t


def power(n_iter: int) -> Callable[[Any], Any]:
    def body(d: Any) -> Any:
        a, x = d["a"], autodev.ones(d["a"].shape[0], dtype=d["a"].dtype)
        for _ in range(n_iter):
            x = a @ x
            x = x / autodev.linalg.norm(x)
        return x
    return body


def kmeans(n_iter: int) -> Callable[[Any], Any]:
    def body(d: Any) -> Any:
        X = d["X"]
        c = X[:4] + 0.0
        for _ in range(n_iter):
            dist = (X * X).sum(axis=1)[:, None] - 2.0 * (X @ c.T) + (c * c).sum(axis=1)
            label = dist.argmin(axis=1)
            c = autodev.stack([X[label == k].mean(axis=0) if (label == k).any() else c[k]
                               for k in range(4)])
        return c
    return body


def gradient_descent(n_iter: int) -> Callable[[Any], Any]:
    def body(d: Any) -> Any:
        X, y = d["X"], d["y"]
        w = autodev.zeros(X.shape[1], dtype=X.dtype)
        for _ in range(n_iter):
            w = w - 1e-4 * (X.T @ (X @ w - y))
        return w
    return body


def conjugate_gradient(n_iter: int) -> Callable[[Any], Any]:
    def body(d: Any) -> Any:
        A, b = d["A"], d["b"]
        x = autodev.zeros_like(b)
        r = b - A @ x
        p = r
        rr = r @ r
        for _ in range(n_iter):
            Ap = A @ p
            alpha = rr / (p @ Ap)
            x = x + alpha * p
            r = r - alpha * Ap
            rr_new = r @ r
            p = r + (rr_new / rr) * p
            rr = rr_new
        return x
    return body


def _native(seed: int = 0) -> dict[str, dict[str, numpy.ndarray]]:
    rng = numpy.random.default_rng(seed)
    m = rng.standard_normal((1000, 1000))
    X = rng.standard_normal((12000, 32))
    return {
        "power": {"a": rng.standard_normal((1024, 1024))},
        "kmeans": {"X": X},
        "gd": {"X": X, "y": X @ rng.standard_normal(32)},
        "cg": {"A": m @ m.T / 1000 + numpy.eye(1000), "b": rng.standard_normal(1000)},
    }


LOOPS = {"power": power(100), "kmeans": kmeans(40), "gd": gradient_descent(100),
         "cg": conjugate_gradient(100)}
#: the same loops, short: no more than a few times their break-even length
SHORT = {"power": power(8), "kmeans": kmeans(4), "gd": gradient_descent(10),
         "cg": conjugate_gradient(8)}


@pytest.mark.parametrize("name", list(LOOPS))
def test_loops_over_a_fixed_host_array_move_it_once(name: str, sim: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Each fixed input crosses once (gradient descent reads ``X`` and ``X.T``: one move
    each), and the loop costs at most 1.25x its best fixed placement."""
    fixed = _native()[name]
    auto, got, t = run_placed(LOOPS[name], fixed, "auto", monkeypatch)
    cpu, expected, _ = run_placed(LOOPS[name], fixed, "cpu", monkeypatch)
    gpu, _, _ = run_placed(LOOPS[name], fixed, "gpu", monkeypatch)
    numpy.testing.assert_allclose(to_numpy(got), to_numpy(expected), rtol=1e-6, atol=1e-9)
    sizes = {v.nbytes for v in fixed.values() if v.nbytes > 100_000}
    uploads = [n for r in t if r.op == "move" for d, n in r.transfers if d == "h2d"]
    assert sizes <= set(uploads)
    assert len([n for n in uploads if n in sizes]) <= (2 if name == "gd" else 1) * len(sizes)
    assert auto <= 1.25 * min(cpu, gpu), (auto, cpu, gpu)


@pytest.mark.parametrize("name", list(SHORT))
def test_short_loops_stay_within_twice_the_best_fixed_placement(
        name: str, sim: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fixed = _native()[name]
    auto, _, _ = run_placed(SHORT[name], fixed, "auto", monkeypatch)
    cpu, _, _ = run_placed(SHORT[name], fixed, "cpu", monkeypatch)
    gpu, _, _ = run_placed(SHORT[name], fixed, "gpu", monkeypatch)
    assert auto <= 2.0 * min(cpu, gpu), (auto, cpu, gpu)


def test_the_readme_loop_moves_its_matrix_once(sim: Any) -> None:
    """The README's power iteration exactly as printed, default policy and profile."""
    rng = numpy.random.default_rng(0)
    a_np = rng.standard_normal((4096, 4096), dtype=numpy.float32)
    x_np = numpy.ones(4096, dtype=numpy.float32)
    for _ in range(50):
        x_np = a_np @ x_np
        x_np = x_np / numpy.linalg.norm(x_np)
    autodev.stats(reset=True)
    a = autodev.random.default_rng(0).standard_normal((4096, 4096), dtype=autodev.float32)
    x = autodev.ones(4096, dtype=autodev.float32)
    with autodev.trace() as t:
        for _ in range(50):
            x = a @ x
            x = x / autodev.linalg.norm(x)
    s = autodev.stats()
    products = [r for r in t if r.op == "matmul"]
    assert sum(r.device == "sim:0" for r in products) >= 45
    assert s["reuse_moves"] == 1 and s["reuse_bytes"] == a.nbytes
    assert a.nbytes <= s["h2d_bytes"] < 2 * a.nbytes  # the matrix crossed once
    assert a.device == AUTO and a.location == "cpu"
    numpy.testing.assert_allclose(to_numpy(x), x_np, rtol=1e-4, atol=1e-6)
    move = next(r for r in t if r.op == "move")
    assert "reuse credit" in move.reason and move.transfers == [("h2d", a.nbytes)]


def test_sparse_pagerank_moves_its_matrix_once(sim: Any) -> None:
    from autodev.scipy import sparse

    n = 200_000  # large enough for the product to pay on the GPU once the matrix is there
    rng = numpy.random.default_rng(1)
    rows, cols = rng.integers(0, n, 10 * n), rng.integers(0, n, 10 * n)
    host = scipy.sparse.csr_matrix((numpy.ones(10 * n), (rows, cols)), shape=(n, n))
    host = scipy.sparse.csr_matrix(host.multiply(1.0 / numpy.maximum(host.sum(axis=0), 1)))
    expected = numpy.full(n, 1.0 / n)
    for _ in range(40):
        expected = 0.85 * (host @ expected) + 0.15 / n
    M = sparse.csr_matrix(host)
    r = autodev.full(n, 1.0 / n)
    with autodev.trace() as t:
        for _ in range(40):
            r = 0.85 * (M @ r) + 0.15 / n
    moves = [rec for rec in t if rec.op == "move" and rec.shapes == ((n, n),)]
    assert len(moves) == 1
    assert sum(rec.device == "sim:0" for rec in t if rec.op.endswith("matmul")) >= 30
    numpy.testing.assert_allclose(to_numpy(r), expected, rtol=1e-10)


def test_a_single_use_stays_on_the_cpu(sim: Any) -> None:
    a = autodev.array(numpy.random.default_rng(2).standard_normal((1024, 1024)))
    x = autodev.ones(1024)
    with autodev.trace() as t:
        a @ x
    assert [r.device for r in t] == ["cpu"]
    assert autodev.stats()["h2d_count"] == 0 and autodev.stats()["reuse_moves"] == 0


def test_an_array_rewritten_every_iteration_never_moves(sim: Any) -> None:
    a = autodev.array(numpy.random.default_rng(3).standard_normal((1024, 1024)))
    x = autodev.ones(1024)
    for i in range(40):
        a[0, 0] = float(i)  # a write resets the credit
        x = a @ x
        x = x / autodev.linalg.norm(x)
    assert autodev.stats()["reuse_moves"] == 0
    assert autodev.stats()["h2d_count"] == 0


def test_alternating_devices_do_not_thrash(sim: Any) -> None:
    """A host array used by GPU-winning calls on a device-resident partner and by CPU
    calls moves at most once: its mirror stays valid while nobody writes."""
    a = autodev.array(numpy.random.default_rng(4).standard_normal((1024, 1024)))
    g = autodev.array(numpy.random.default_rng(5).standard_normal((1024, 1024)))
    g = g.to_device("sim:0").to_device("auto")
    for _ in range(30):
        (a @ g[:, 0]).sum()
        a[:4, :4].copy()
    assert autodev.stats()["reuse_moves"] <= 1


def test_moves_respect_the_device_memory_budget(sim: Any, monkeypatch: pytest.MonkeyPatch
                                                ) -> None:
    sim.memory = 20 << 20  # 20 MiB: half of it for mirrors
    big = [autodev.array(numpy.random.default_rng(k).standard_normal((1024, 1024)))
           for k in range(3)]  # 8 MiB each
    x = autodev.ones(1024)
    for _ in range(20):
        for a in big:
            a @ x
    assert autodev.stats()["reuse_moves"] >= 2
    assert _reuse.credited_bytes() <= 10 << 20
    sim.memory = 4 << 20  # no single array fits: none moves
    _reuse.forget_all()
    autodev.stats(reset=True)
    c = autodev.array(numpy.random.default_rng(9).standard_normal((1024, 1024)))
    for _ in range(20):
        c @ x
    assert autodev.stats()["reuse_moves"] == 0


def test_credit_decays_with_disuse(sim: Any) -> None:
    from autodev._residency import storage as R

    storage = R.Storage()
    storage.credit, storage.credit_at = 1.0, 10
    assert _reuse.decayed(storage, 10 + int(_reuse.HALF_LIFE)) == pytest.approx(0.5)
    storage.version += 1  # a write: nothing left
    assert _reuse.decayed(storage, 11) == 0.0


def test_no_credit_under_a_policy_or_a_pin(sim: Any) -> None:
    a = autodev.array(numpy.random.default_rng(6).standard_normal((1024, 1024)))
    x = autodev.ones(1024)
    with autodev.policy("cpu"):
        for _ in range(20):
            a @ x
    c = a.to_device("cpu")
    for _ in range(20):
        c @ x
    assert autodev.stats()["reuse_moves"] == 0


def test_unpickling_an_auto_device_array_pins_nothing(sim: Any) -> None:
    from autodev._backends import STATE

    x = autodev.array(numpy.arange(4.0)).to_device("sim:0").to_device("auto")
    STATE.pinned = False  # as in a fresh process that receives the pickle
    STATE.refresh()
    y = pickle.loads(pickle.dumps(x))
    assert (y.device, y.location) == (AUTO, SIM)
    assert not STATE.pinned  # the fast path of that process stays on
    assert_same(y, numpy.arange(4.0))


def test_a_shared_mirror_is_not_trusted_once_the_memory_escapes(sim: Any) -> None:
    from autodev._backends import STATE

    x = autodev.array(numpy.arange(6.0).reshape(2, 3))
    _reuse._mirror(x, SIM, STATE.sim, "test", False)
    view = x.T.T  # a new array of x's geometry: reads the mirror its storage shares
    assert autodev.residency(view)["mirrors"] == [SIM]
    host = numpy.asarray(x)  # a writable host buffer handed out: escaped
    host[0, 0] = 42.0  # written behind autodev's back
    with autodev.policy("gpu"):
        assert float((x.T.T + 0)[0, 0]) == 42.0
