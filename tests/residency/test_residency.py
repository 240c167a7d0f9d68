"""Residency on the simulated GPU: mirrors, write versions, transfers counted, and the
power iteration of issue 2 moving its matrix to the device exactly once."""

from __future__ import annotations

from typing import Any, Iterator

import numpy
import pytest

import autodev
from autodev._residency import storage as R
from autodev.testing import simulated_gpu, to_numpy
from diffcheck import assert_same, sample


@pytest.fixture
def sim() -> Iterator[Any]:
    with simulated_gpu() as backend, autodev.policy("gpu"):
        yield backend


def host(a: numpy.ndarray) -> autodev.ndarray:
    """An autodev array on the CPU that owns its memory (so mirrors are allowed)."""
    return autodev.array(a, device="cpu").to_device("auto")  # on the host, unpinned


def test_power_iteration_moves_a_once(sim):
    n = 64
    expected_a = numpy.random.default_rng(0).standard_normal((n, n), dtype=numpy.float32)
    ex = numpy.ones(n, dtype=numpy.float32)
    for _ in range(50):
        ex = expected_a @ ex
        ex = ex / numpy.linalg.norm(ex)

    autodev.stats(reset=True)
    a = autodev.random.default_rng(0).standard_normal((n, n), dtype=autodev.float32)
    x = autodev.ones(n, dtype=autodev.float32)
    for _ in range(50):
        x = a @ x
        x = x / autodev.linalg.norm(x)
    s = autodev.stats()
    assert s["h2d_count"] == 1 and s["h2d_bytes"] == a.nbytes
    # only the norms come back: NumPy scalars live on the host (docs/guide.md, "Scalars")
    assert s["d2h_count"] == 50 and s["d2h_bytes"] == 50 * 4
    assert x.location == sim.device and a.location == sim.device
    assert s["calls"].get("sim:0", 0) >= 100 and s["calls"].get("cpu", 0) == 0
    assert str(x[:3]) == str(ex[:3])
    assert_same(x, ex, sim.device)


def test_power_iteration_from_host_matrix(sim):
    """A host matrix used on the device leaves a mirror: it crosses once, not 50 times."""
    a = host(sample((32, 32), "float32"))
    x = autodev.ones(32, dtype=autodev.float32)
    autodev.stats(reset=True)
    for _ in range(20):
        x = a @ x
        x = x / autodev.linalg.norm(x)
    assert autodev.stats()["h2d_count"] == 1
    assert a.location == "cpu" and x.location == sim.device


def test_mirror_invalidated_by_every_kind_of_write(sim):
    a = sample((4, 4))
    writes = [
        lambda h: h.__setitem__((0, 0), 9.0),
        lambda h: h[1:3].__setitem__(0, -1.0),  # through a view
        lambda h: h.T.__setitem__((2, 1), 5.0),
        lambda h: h.__iadd__(1.0),
        lambda h: autodev.multiply(h, 2, out=h),
        lambda h: h.fill(3.0),
        lambda h: h.sort(axis=0),
        lambda h: h.__setitem__(h > 0.5, 0.0),
        lambda h: autodev.copyto(h, 7.0),
        lambda h: autodev.add.at(h, ([0, 0], [1, 1]), 1.0),
        lambda h: h.reshape(-1).__setitem__(3, 11.0),
        lambda h: h.flat.__setitem__(5, 12.0),
    ]
    for write in writes:
        model = a.copy()
        h = host(a)
        assert_same(h + 0, model, sim.device)  # leaves a mirror of h on sim
        assert R.mirror_on(h, sim.device) is not None
        with autodev.policy("cpu"):
            write(h)
        write(autodev.asarray(model))  # the same write through NumPy semantics
        assert_same(h * 1, model, sim.device)  # must not read the stale mirror


def test_escaped_host_buffer_is_never_mirrored(sim):
    a = sample((5,))
    h = host(a)
    buf = numpy.asarray(h)  # a writable host buffer handed out
    assert_same(h + 0, a, sim.device)
    buf[0] = 100.0  # written behind autodev's back
    a[0] = 100.0
    assert_same(h + 0, a, sim.device)
    wrapped = autodev.asarray(a)  # shares the user's NumPy memory
    assert_same(wrapped * 2, a * 2, sim.device)
    a[1] = -7.0
    assert_same(wrapped * 2, a * 2, sim.device)


def test_device_writes_visible_to_host_reads(sim):
    a = sample((3, 3))
    x = autodev.asarray(a.copy()).to_device(sim.device).to_device("auto")
    host_copy = x.to_device("cpu")
    x[0] = 1.0
    assert to_numpy(host_copy)[0, 0] == a[0, 0]  # a copy, not a view
    assert to_numpy(x)[0, 0] == 1.0
    v = x[:, 1]
    v += 10
    expected = a.copy()
    expected[0] = 1.0
    expected[:, 1] += 10
    assert_same(x, expected, sim.device)
    assert float(x[2, 1]) == expected[2, 1]


def test_views_of_mirrors_do_not_alias(sim):
    a = sample((4, 4))
    h = host(a)
    t = h.T
    r = autodev.sin(t)  # reads h's mirror through a transposed view
    assert_same(r, numpy.sin(a.T), sim.device)
    r2 = autodev.reshape(h + 0, (2, 8))
    r2[0, 0] = -1.0
    assert to_numpy(h)[0, 0] == a[0, 0]


def test_transfer_counts(sim):
    a = sample((10,))
    h = host(a)
    autodev.stats(reset=True)
    y = h * 2
    s = autodev.stats()
    assert s["h2d_count"] == 1 and s["h2d_bytes"] == a.nbytes
    assert y.location == sim.device
    str(y)
    s = autodev.stats()
    assert s["d2h_count"] == 1 and s["d2h_bytes"] == a.nbytes


def test_policy_cpu_keeps_host_and_auto_tiny_stays_on_cpu():
    with simulated_gpu(), autodev.policy("cpu"):
        x = autodev.ones(3) + 1
        assert x.location == "cpu"
    with simulated_gpu():
        assert autodev.get_policy() == "auto"
        x = autodev.ones(4) * 2  # tiny: a kernel launch costs more than the CPU work
        assert x.location == "cpu"


@pytest.mark.parametrize("policy", ["cpu", "auto", "gpu"])
def test_mixed_device_operands(policy):
    """Inputs on different devices: any policy gives NumPy's values; gpu keeps them on sim."""
    a, b = sample((2, 3)), sample((2, 3), seed=1)
    with simulated_gpu() as backend, autodev.policy(policy):
        x = autodev.asarray(a.copy()).to_device(backend.device).to_device("auto")
        h = host(b)
        results = {
            "add": (x + h, a + b), "radd": (h + x, b + a), "matmul": (x @ h.T, a @ b.T),
            "concat": (autodev.concatenate([x, h]), numpy.concatenate([a, b])),
            "where": (autodev.where(x > 0.5, x, h), numpy.where(a > 0.5, a, b)),
        }
        for name, (got, expected) in results.items():
            assert_same(got, expected, backend.device if policy == "gpu" else None)
        y = h.copy()
        y += x
        assert_same(y, b + a, "cpu")  # in place: the result stays where y lives
        z = x.copy()
        z[h > 0.5] = h[h > 0.5]
        expected = a.copy()
        expected[b > 0.5] = b[b > 0.5]
        assert_same(z, expected, backend.device)
        assert_same(x, a, backend.device)
        assert_same(h, b, "cpu")
