"""Fault injection on the simulated GPU: out-of-memory retry and fallback, device errors."""

from __future__ import annotations

import sys
import warnings
from typing import Any, Iterator

import numpy
import pytest

import autodev
from autodev import _config, _trace
from autodev.testing import (SimDeviceError, SimOutOfMemoryError, gpu_costs, simulated_gpu,
                             to_numpy)
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
    assert autodev._residency.storage.mirror_on(h, sim.device) is not None
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
    with pytest.warns(autodev.FallbackWarning, match="out of memory"):
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
    with autodev.trace() as records, pytest.warns(autodev.FallbackWarning):
        autodev.sin(x)
    assert records[-1].device == "cpu" and "out of memory" in records[-1].reason


def test_fallback_into_device_out_array(sim):
    a, b = sample((4, 4)), sample((4, 4), seed=1)
    x, y = on_sim(a, sim), on_sim(b, sim)
    sim.inject_fault("oom", count=2)
    with pytest.warns(autodev.FallbackWarning):
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
        with pytest.warns(autodev.FallbackWarning):
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
    assert autodev._residency.storage.mirror_on(h, sim.device) is None
    assert_same(h.to_device(sim.device), a, sim.device)


# ---------------------------------------------------------------------- every allocation

def _sort(xp, x):
    x.sort()


def _fill(xp, x):
    x.fill(3.5)


def _setitem_list(xp, x):
    x[[0, 2]] = 9.0


def _setitem_mask(xp, x):
    x[x > 0.5] = 0.0


def _setitem_array(xp, x):
    x[1] = xp.arange(5.0)


def _setitem_slice_view(xp, x):
    x[:, 1:3] = x[:, 2:4] * 2


def _ufunc_at(xp, x):
    xp.add.at(x, [0, 0, 3], 1.0)


def _copyto(xp, x):
    xp.copyto(x, xp.ones((4, 5)))


def _put(xp, x):
    x.put([0, 7], [5.0, 6.0])


def _shuffle(xp, x):
    xp.random.default_rng(3).shuffle(x)


#: Calls that allocate on the device (or write into device memory), each as NumPy writes it.
ALLOCATING = {
    "copy": lambda xp, x: x.copy(),
    "astype": lambda xp, x: x.astype(xp.float32),
    "flatten": lambda xp, x: x.flatten(),
    "byteswap": lambda xp, x: x.byteswap(),
    "list index": lambda xp, x: x[[0, 2]],
    "mask index": lambda xp, x: x[x > 0.5],
    "array(x)": lambda xp, x: xp.array(x),
    "add": lambda xp, x: x + 1,
    "sum axis": lambda xp, x: x.sum(axis=0),
    "zeros": lambda xp, x: xp.zeros((3, 2)),
    "array": lambda xp, x: xp.array([1.0, 2.0]),
    "eye": lambda xp, x: xp.eye(3),
    "linspace": lambda xp, x: xp.linspace(0, 1, 5),
    "random": lambda xp, x: xp.random.default_rng(0).random(4),
    "fill": _fill, "sort": _sort, "setitem list": _setitem_list,
    "setitem mask": _setitem_mask, "setitem array": _setitem_array,
    "setitem view": _setitem_slice_view, "ufunc.at": _ufunc_at, "copyto": _copyto,
    "put": _put, "shuffle": _shuffle,
}


#: Calls that compute on the host and write the result into existing device memory.
FROM_HOST = frozenset({"shuffle"})


@pytest.mark.parametrize("persistent", [False, True], ids=["transient", "persistent"])
@pytest.mark.parametrize("name", sorted(ALLOCATING))
def test_out_of_memory_at_every_allocating_call(sim, name, persistent):
    a = sample((4, 5))
    expected_x = a.copy()
    expected = ALLOCATING[name](numpy, expected_x)
    x = on_sim(a, sim)
    view = x[1:3]  # must see any write into x, whatever the fallback
    autodev.stats(reset=True)
    sim.inject_fault("oom", count=None if persistent else 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", autodev.FallbackWarning)
        got = ALLOCATING[name](autodev, x)
    sim.clear_faults()
    if expected is None:
        assert got is None
    else:
        assert numpy.array_equal(to_numpy(got), expected)
        assert to_numpy(got).dtype == expected.dtype
    assert x.location == sim.device  # an input never leaves its device
    assert numpy.array_equal(to_numpy(x), expected_x)  # no lost write
    assert numpy.array_equal(to_numpy(view), expected_x[1:3])
    if name in FROM_HOST:
        return  # nothing was allocated on the device: nothing to fall back from
    fallbacks = autodev.stats()["fallbacks"]
    assert sim.freed >= 1
    assert (fallbacks >= 1) if persistent else (fallbacks == 0)


def test_to_device_and_asarray_device_fall_back_to_the_host(sim):
    a = sample((3, 3))
    h = autodev.asarray(a.copy())
    sim.inject_fault("oom", count=None)
    with pytest.warns(autodev.FallbackWarning, match="to_device ran out of memory"):
        moved = h.to_device(sim.device)
    placed = autodev.asarray(a, device=sim.device)
    sim.clear_faults()
    assert moved.location == "cpu" and placed.location == "cpu"
    assert numpy.array_equal(to_numpy(moved), a) and numpy.array_equal(to_numpy(placed), a)
    moved[0, 0] = -1.0  # a copy, as to_device gives: the source is untouched
    assert to_numpy(h)[0, 0] == a[0, 0]
    assert autodev.stats()["fallbacks"] == 2


def test_fallback_raise_mode_covers_methods(sim, monkeypatch):
    monkeypatch.setattr(_config.ENV, "fallback", "raise")
    x = on_sim(sample((3,)), sim)
    sim.inject_fault("oom", count=None)
    for op in (x.copy, x.sort, lambda: autodev.zeros(3), lambda: x[[0, 1]]):
        with pytest.raises(SimOutOfMemoryError):
            op()
    assert autodev.stats()["fallbacks"] == 0


# ---------------------------------------------------------------------- views under fallback

#: Every way to make a view of a 2-D array, each as NumPy writes it.
VIEWS = {
    "T": lambda xp, x: x.T, "mT": lambda xp, x: x.mT, "transpose": lambda xp, x: x.transpose(),
    "reshape": lambda xp, x: x.reshape(5, 4), "ravel": lambda xp, x: x.ravel(),
    "swapaxes": lambda xp, x: x.swapaxes(0, 1), "squeeze": lambda xp, x: x[:1].squeeze(),
    "diagonal": lambda xp, x: x.diagonal(), "view": lambda xp, x: x.view(),
    "real": lambda xp, x: x.real, "slice": lambda xp, x: x[1:, ::2],
    "row": lambda xp, x: x[2], "ellipsis": lambda xp, x: x[..., 1],
    "newaxis": lambda xp, x: x[None], "xp.reshape": lambda xp, x: xp.reshape(x, (20,)),
    "xp.transpose": lambda xp, x: xp.transpose(x), "moveaxis": lambda xp, x: xp.moveaxis(x, 0, 1),
    "expand_dims": lambda xp, x: xp.expand_dims(x, 0), "atleast_3d": lambda xp, x: xp.atleast_3d(x),
    "split": lambda xp, x: xp.split(x, 2)[1], "squeeze fn": lambda xp, x: xp.squeeze(x[None]),
    "permute_dims": lambda xp, x: xp.permute_dims(x, (1, 0)),
    "matrix_transpose": lambda xp, x: xp.matrix_transpose(x),
    "swapaxes fn": lambda xp, x: xp.swapaxes(x, 0, 1),
}
_VIEW_MAKERS = [n for n in VIEWS if n not in ("diagonal",)]  # NumPy's diagonal is read-only


def _write_through(xp, v):
    v[...] = -7.0


@pytest.mark.parametrize("name", sorted(_VIEW_MAKERS))
def test_a_view_made_under_out_of_memory_stays_a_view(sim, name):
    a = sample((4, 5))
    expected = a.copy()
    _write_through(numpy, VIEWS[name](numpy, expected))
    x = on_sim(a, sim)
    sim.inject_fault("oom", count=None)  # CuPy allocates nothing for a view
    v = VIEWS[name](autodev, x)
    _write_through(autodev, v)
    sim.clear_faults()
    assert v.location == sim.device
    assert numpy.array_equal(to_numpy(x), expected)


@pytest.mark.parametrize("kind", ["oom", "unimplemented"])
@pytest.mark.parametrize("name", sorted(VIEWS))
def test_a_view_the_device_cannot_make_is_refused_not_copied(sim, name, kind, monkeypatch):
    # Where a view call does fail (for memory, or not implemented), its host fallback
    # would view a host copy: it must refuse loudly, never hand out a copy that drops writes.
    from autodev._backends import _sim

    monkeypatch.setattr(_sim, "_makes_view", lambda name, args: False)
    a = sample((4, 5))
    x = on_sim(a, sim)
    sim.inject_fault(kind, count=None)
    error = MemoryError if kind == "oom" else NotImplementedError
    try:
        v = VIEWS[name](autodev, x)
    except error as err:
        assert "view" in str(err) and "x.to_device('cpu')" in str(err)
        v = None
    sim.clear_faults()
    if v is not None:  # made on the device without allocating (basic indexing)
        assert v.location == sim.device
        assert autodev.shares_memory(v, x)
    assert numpy.array_equal(to_numpy(x), a)


def test_a_copying_reshape_falls_back_to_the_host(sim):
    a = sample((4, 5))
    x = on_sim(a, sim).T  # not contiguous: reshape must copy, on either device
    sim.inject_fault("oom", count=None)
    with pytest.warns(autodev.FallbackWarning):
        r = x.reshape(20)
    sim.clear_faults()
    assert r.location == "cpu"
    assert numpy.array_equal(to_numpy(r), a.T.reshape(20))


def test_transpose_write_then_solve_under_persistent_oom(sim):
    a = sample((6, 6)) + 6 * numpy.eye(6)
    b = sample((6,), seed=2)
    expected = a.copy()
    expected.T[0] = 1.0
    x = on_sim(a, sim)
    sim.inject_fault("oom", count=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", autodev.FallbackWarning)
        x.T[0] = 1.0
        got = autodev.linalg.solve(x, b)
    sim.clear_faults()
    assert numpy.allclose(to_numpy(got), numpy.linalg.solve(expected, b), rtol=1e-12)


def test_fallback_warnings_point_at_the_users_line(sim, monkeypatch):
    monkeypatch.setattr(_config.ENV, "fallback", "warn")
    x = on_sim(sample((3, 3)), sim)
    sim.inject_fault("oom", count=None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")  # once per location, as Python shows by default
        x.copy()  # first line
        x.copy()  # another line: its own warning, as NumPy's stacklevel rules give
        autodev.sin(x)
        x[[0, 1]]  # noqa: B018
    sim.clear_faults()
    first = sys._getframe().f_code.co_firstlineno
    assert [w.filename for w in caught] == [__file__] * 4
    assert [w.lineno - first for w in caught] == [6, 7, 8, 9]


def test_sparse_to_device_falls_back_to_the_host(sim):
    import scipy.sparse

    from autodev.scipy import sparse

    dense = numpy.eye(5) * 2.0
    a = sparse.csr_matrix(scipy.sparse.csr_matrix(dense))
    sim.inject_fault("oom", count=None)
    with pytest.warns(autodev.FallbackWarning, match="to_device"):
        moved = a.to_device(sim.device)
    sim.clear_faults()
    assert moved.location == "cpu"
    assert numpy.array_equal(to_numpy(moved.toarray()), dense)
    assert autodev.stats()["fallbacks"] == 1


# ---------------------------------------------------------------------- moves, transfers, creation

#: A GPU where a small host matrix that calls keep reusing is moved by reuse credit.
FAST_GPU = gpu_costs(latency=1e-9, transfer=(1e-6, 1e9))


def _reused_matrix() -> tuple[numpy.ndarray, numpy.ndarray]:
    a = sample((48, 48))
    return a, a @ numpy.ones(48)


@pytest.fixture
def fast() -> Iterator[Any]:
    """A simulated GPU on which reuse credit moves a reused 48x48 matrix, policy auto."""
    warned = _trace.STATS.warned
    _trace.STATS.warned = False
    with simulated_gpu(FAST_GPU) as backend:
        yield backend
    _trace.STATS.warned = warned


def test_a_reuse_move_retries_after_one_out_of_memory(fast):
    a, expected = _reused_matrix()
    x, ones = autodev.array(a), autodev.ones(48)
    fast.inject_fault("oom")  # the first device call is the move's transfer
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a successful retry warns nothing
        for _ in range(30):
            y = x @ ones
    assert fast.freed == 1
    s = autodev.stats()
    assert s["reuse_moves"] == 1 and s["fallbacks"] == 0
    assert autodev._residency.storage.mirror_on(x, fast.device) is not None
    assert_same(y, expected, y.location)


@pytest.mark.parametrize("kind", ["oom", "unimplemented"])
def test_a_reuse_move_the_device_fails_is_not_made_and_seen(fast, kind):
    a, expected = _reused_matrix()
    x, ones = autodev.array(a), autodev.ones(48)
    fast.inject_fault(kind, count=None)
    reason = "out of memory" if kind == "oom" else "not implemented"
    with autodev.trace() as records, pytest.warns(autodev.FallbackWarning, match="reuse move"):
        for _ in range(30):
            y = x @ ones
    fast.clear_faults()
    moves = [r for r in records if r.op == "move"]
    assert moves and all(r.device == "cpu" and "failed to make the mirror" in r.reason
                         for r in moves)
    s = autodev.stats()
    assert s["reuse_moves"] == 0
    assert s["fallbacks"] == s["fallback_reasons"][f"reuse move: {reason}"] >= 1
    assert autodev._residency.storage.mirror_on(x, fast.device) is None
    assert y.location == "cpu"
    assert_same(y, expected, "cpu")
    # the credit started over: not one attempt per call (3 of them at most in 30 calls)
    assert len(moves) <= 3
    for _ in range(30):  # once the device works again, the move is made
        y = x @ ones
    assert autodev.stats()["reuse_moves"] == 1


def test_a_reuse_move_in_raise_mode_raises(fast, monkeypatch):
    monkeypatch.setattr(_config.ENV, "fallback", "raise")
    x, ones = autodev.array(_reused_matrix()[0]), autodev.ones(48)
    fast.inject_fault("unimplemented", count=None)
    with pytest.raises(NotImplementedError, match="fault injected"):
        for _ in range(30):
            x @ ones
    assert autodev.stats()["fallbacks"] == 0


#: Moves, transfers and creation on the device, each as a user writes it (``sim`` is the
#: device), with what NumPy gives.
MOVES = {
    "to_device": (lambda sim, a: autodev.asarray(a).to_device(sim.device), lambda a: a),
    "asarray device=": (lambda sim, a: autodev.asarray(a, device=sim.device), lambda a: a),
    "array device=": (lambda sim, a: autodev.array(a, device=sim.device), lambda a: a),
    "zeros": (lambda sim, a: autodev.zeros(3), lambda a: numpy.zeros(3)),
    "zeros device=": (lambda sim, a: autodev.zeros(3, device=sim.device),
                      lambda a: numpy.zeros(3)),
    "arange": (lambda sim, a: autodev.arange(4.0), lambda a: numpy.arange(4.0)),
    "linspace": (lambda sim, a: autodev.linspace(0, 1, 5), lambda a: numpy.linspace(0, 1, 5)),
    "random": (lambda sim, a: autodev.random.default_rng(1).random(3),
               lambda a: numpy.random.default_rng(1).random(3)),
    "index array": (lambda sim, a: autodev.asarray(a, device=sim.device).to_device("auto")[
        numpy.array([0, 2])], lambda a: a[[0, 2]]),
}


@pytest.mark.parametrize("name", sorted(MOVES))
def test_not_implemented_in_a_move_or_creation_runs_on_the_host(sim, name):
    make, expected = MOVES[name]
    a = sample((4, 5))
    if name == "index array":
        made = make(sim, a)  # noqa: F841 (warm: the array is on the device before the fault)
    sim.inject_fault("unimplemented", count=None)
    with pytest.warns(autodev.FallbackWarning, match="not implemented"):
        got = make(sim, a)
    sim.clear_faults()
    numpy.testing.assert_array_equal(to_numpy(got), expected(a))
    assert got.location == "cpu"
    s = autodev.stats()
    assert s["fallbacks"] >= 1
    assert all(key.endswith("not implemented") for key in s["fallback_reasons"])


def test_not_implemented_after_an_out_of_memory_falls_back_once(sim):
    a = sample((3, 3))
    h = autodev.asarray(a.copy())
    sim.inject_fault("oom")
    sim.inject_fault("unimplemented", at_call=2)
    with pytest.warns(autodev.FallbackWarning, match="not implemented"):
        moved = h.to_device(sim.device)
    assert moved.location == "cpu" and sim.freed == 1
    assert autodev.stats()["fallback_reasons"] == {"to_device: not implemented": 1}


def test_not_implemented_in_a_move_raises_in_raise_mode(sim, monkeypatch):
    monkeypatch.setattr(_config.ENV, "fallback", "raise")
    sim.inject_fault("unimplemented", count=None)
    with pytest.raises(NotImplementedError):
        autodev.asarray(sample((3,))).to_device(sim.device)
    with pytest.raises(NotImplementedError):
        autodev.zeros(3)
    assert autodev.stats()["fallbacks"] == 0


def test_the_hosts_own_not_implemented_error_propagates(sim, monkeypatch):
    from autodev._residency import memory

    def declined() -> None:
        raise NotImplementedError("on the device")

    def host_declines() -> None:
        raise NotImplementedError("on the host too")

    with pytest.raises(NotImplementedError, match="on the host too"):
        memory.retrying("op", sim.device, declined, host_declines)
    assert autodev.stats()["fallbacks"] == 0


def test_a_view_call_takes_no_fault_on_the_simulator(sim):
    # CuPy allocates nothing for a view and implements every view it makes: a fault meant
    # for one passes to the next call that allocates
    x = on_sim(sample((4, 5)), sim)
    for kind, count in (("oom", 2), ("unimplemented", 1)):
        autodev.stats(reset=True)
        sim.inject_fault(kind, count=count)
        calls = sim.calls
        v = autodev.transpose(x)
        assert sim.calls == calls + 1  # a call on the device
        assert v.location == sim.device and autodev.stats()["fallbacks"] == 0
        with pytest.warns(autodev.FallbackWarning):
            x + 1  # the fault's next call
        _trace.STATS.warned = False
        assert autodev.stats()["fallbacks"] == 1


def test_in_place_on_a_subclass_living_on_the_host_writes_it(sim):
    # a creation fallback leaves an array on the host under policy gpu: an in-place
    # operator on a subclass view of it must write it, not a device copy of it
    class Tracked(autodev.ndarray):
        pass

    sim.inject_fault("oom", count=2)
    with pytest.warns(autodev.FallbackWarning):
        base = autodev.zeros(5)
    assert base.location == "cpu"
    a = base.view(Tracked)
    a[1] = 3.0
    a *= 2.0
    autodev.multiply(a, 2.0, out=a)
    expected = numpy.array([0.0, 12.0, 0.0, 0.0, 0.0])
    numpy.testing.assert_array_equal(to_numpy(a), expected)
    numpy.testing.assert_array_equal(to_numpy(base), expected)
    numpy.testing.assert_array_equal(to_numpy(base + 0), expected)  # no stale mirror read


def test_reuse_credit_moves_a_subclass_instance(fast):
    class Tracked(autodev.ndarray):
        pass

    a, expected = _reused_matrix()
    x, ones = autodev.array(a).view(Tracked), autodev.ones(48)
    for _ in range(30):
        y = x @ ones
    assert autodev.stats()["reuse_moves"] >= 1
    assert type(y) is Tracked
    numpy.testing.assert_allclose(to_numpy(y), expected, rtol=1e-12)
