"""Deferred chains that read memory through views (autodev._fusion, *watched* inputs):
a chain over ``u[1:]`` and ``u[:-1]`` is recorded, and any write that can reach ``u``'s
memory -- through ``u``, any view of it, or a buffer handed out -- evaluates it first,
so its values are the ones NumPy computed at the call, bit for bit. Each write route is
run on the host (compiled, or pure Python in that suite's run) and with the simulated
GPU usable."""

from __future__ import annotations

import ctypes
import operator
import threading
from typing import Any, Callable, Iterator

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

import autodev
from autodev import _blocked as B, _fusion as F
from autodev.testing import simulated_gpu
from fusecheck import pending, same_bits


@pytest.fixture(params=["host", "sim"])
def deferring(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Every elementwise call of 8 elements or more deferred (blocks of 5 elements), with
    no GPU usable or with the simulated one (whose cost model keeps these on the CPU)."""
    monkeypatch.setattr(B, "BLOCK", 5)
    monkeypatch.setattr(B, "THREADED_BLOCK", 5)
    if request.param == "sim":
        with simulated_gpu():
            F.set_floor(8)
            yield "sim"
            F.set_floor(None)
        return
    from autodev._backends import STATE

    autodev.ones(1) + 1  # (settles whether a GPU is usable)
    if STATE.gpu is not None:
        pytest.skip("the host case needs no GPU usable")
    F.set_floor(8)
    yield "host"
    F.set_floor(None)


BASE = np.random.default_rng(7).random((6, 8))
MASK = BASE > 0.5
ROWS = np.array([[0], [3], [1], [5], [2], [4]])


def _ctypes_write(m: Any, b: Any, v: Any) -> None:
    pointer = b.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    pointer[3] = 99.0


def _in_thread(m: Any, b: Any, v: Any) -> None:
    worker = threading.Thread(target=v.__setitem__, args=((0, 2), -3.0))
    worker.start()
    worker.join()


def _flat_assign(m: Any, b: Any, v: Any) -> None:
    b.flat = np.arange(5.0)


#: Every way a program writes memory that a pending chain reads: (module, the base array,
#: a view of it). Each must evaluate the chain before the write.
WRITES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "setitem base": lambda m, b, v: b.__setitem__((0, slice(None)), 5.0),
    "setitem view": lambda m, b, v: v.__setitem__(slice(1, 3), -1.0),
    "setitem view int": lambda m, b, v: v.__setitem__(2, 4.0),
    "setitem array value": lambda m, b, v: v.__setitem__(0, m.arange(8.0)),
    "setitem pending value": lambda m, b, v: v.__setitem__(slice(None), v * 2 + 1),
    "setitem fancy": lambda m, b, v: b.__setitem__([0, 2], 3.0),
    "setitem mask": lambda m, b, v: b.__setitem__(b > 0.5, 0.0),
    "setitem view of view": lambda m, b, v: v[1:][:, ::2].__setitem__(Ellipsis, 8.0),
    "iadd base": lambda m, b, v: operator.iadd(b, 1.0),
    "iadd view": lambda m, b, v: operator.iadd(v, 1.0),
    "imul view by overlapping view": lambda m, b, v: operator.imul(v, b[:-1]),
    "out= ufunc": lambda m, b, v: m.add(v, 1.0, out=v),
    "out= ufunc base": lambda m, b, v: m.negative(b, out=b),
    "out= by position": lambda m, b, v: m.multiply(v, 3.0, v),
    "out= where": lambda m, b, v: m.subtract(v, 1.0, out=v, where=MASK[1:]),
    "out= method": lambda m, b, v: v.clip(0.2, 0.7, out=v),
    "out= reduction": lambda m, b, v: m.sum(b, axis=0, out=v[0]),
    "out= matmul": lambda m, b, v: m.matmul(m.ones((5, 5)), v, out=v),
    "copyto": lambda m, b, v: m.copyto(v, 1.5),
    "copyto where": lambda m, b, v: m.copyto(b, 0.0, where=MASK),
    "put method": lambda m, b, v: b.put([0, 5, 9], [1.0, 2.0, 3.0]),
    "put function": lambda m, b, v: m.put(v, [1, 2], 7.0),
    "place": lambda m, b, v: m.place(b, MASK, [9.0, 8.0]),
    "putmask": lambda m, b, v: m.putmask(b, MASK, -2.0),
    "fill_diagonal": lambda m, b, v: m.fill_diagonal(b, 4.0),
    "put_along_axis": lambda m, b, v: m.put_along_axis(b, ROWS, 6.0, axis=1),
    "nan_to_num": lambda m, b, v: m.nan_to_num(v, copy=False, nan=0.0),
    "fill base": lambda m, b, v: b.fill(0.5),
    "fill view": lambda m, b, v: v.fill(0.25),
    "sort view": lambda m, b, v: v.sort(axis=1),
    "sort base": lambda m, b, v: b.sort(axis=0),
    "flat setitem": lambda m, b, v: b.flat.__setitem__([1, 7, 30], 8.0),
    "flat assign": _flat_assign,
    "ufunc at": lambda m, b, v: m.add.at(b, ([0, 1], [2, 3]), 10.0),
    "setfield": lambda m, b, v: v.setfield(2.0, np.float64, 0),
    "base": lambda m, b, v: v.base.__setitem__((1, 1), 11.0),
    "shared buffer": lambda m, b, v: m.ndarray((8,), np.float64, buffer=b).__setitem__(0, 1.0),
    "byteswap": lambda m, b, v: v.byteswap(True),
    "random out": lambda m, b, v: m.random.default_rng(3).random(out=v),
    "shuffle": lambda m, b, v: m.random.default_rng(3).shuffle(b),
    "another thread": _in_thread,
    "asarray": lambda m, b, v: np.asarray(b).__setitem__((0, 0), 99.0),
    "memoryview": lambda m, b, v: np.asarray(memoryview(v)).__setitem__((0, 1), 99.0),
    "ctypes": _ctypes_write,
    "dlpack": lambda m, b, v: np.from_dlpack(v).__setitem__((1, 1), 99.0),
    "resize": lambda m, b, v: b.resize((8, 8), refcheck=False),
}


def _scenario(m: Any, write: Callable[[Any, Any, Any], Any], deferred: bool) -> list[Any]:
    """A chain reading ``b`` through two views, a write, and a chain after the write."""
    b = m.array(BASE)
    top, bottom = b[:-1], b[1:]
    r = top * 2.0 + bottom
    t = m.sqrt(bottom) - top  # (a second chain over the same memory)
    if m is autodev and deferred:
        assert pending(r) and pending(t) and F.WATCHED and not F.LEAVES
    write(m, b, bottom)
    if m is autodev:
        assert not F.WATCHED and not F.NODES  # the write evaluated the chains first
    s = b[1:] * 3.0 - b[:-1]  # (fresh views: a resize leaves the old ones dangling)
    return [r, t, s, b]


@pytest.mark.parametrize("route", sorted(WRITES))
def test_write_evaluates_chains_reading_its_memory(deferring: str, route: str) -> None:
    if route == "dlpack" and not hasattr(np, "from_dlpack"):
        pytest.skip("NumPy without from_dlpack")
    want = _scenario(np, WRITES[route], False)
    got = _scenario(autodev, WRITES[route], True)
    for g, w in zip(got, want):
        same_bits(g, w)


def test_real_and_imag_writes(deferring: str) -> None:
    z0 = BASE + 1j * BASE[::-1]
    results = []
    for m in (np, autodev):
        z = m.array(z0)
        r = z[1:] * 2 - z[:-1]
        if m is autodev:
            assert pending(r)
        z.real = 1.0
        q = z[1:] + z[:-1]
        z[:-1].imag[...] = 2.0
        results.append((r, q, z))
    for g, w in zip(results[1], results[0]):
        same_bits(g, w)


def test_shape_set_on_a_watched_view_keeps_the_chain(deferring: str) -> None:
    b = autodev.array(BASE)
    v = b[1:]
    r = v + 1.0
    assert pending(r)
    v.shape = (40,)  # (not a write: the chain still reads the 5 x 8 view)
    same_bits(r, BASE[1:] + 1.0)
    same_bits(b, BASE)


def test_write_elsewhere_evaluates_too(deferring: str) -> None:
    """A write while a chain over views is pending evaluates it, whatever it writes (the
    written array's memory is not always known to be another's)."""
    b, other = autodev.array(BASE), autodev.array(BASE)
    r = b[1:] + b[:-1]
    assert pending(r)
    other[0, 0] = 1.0
    assert not F.NODES
    same_bits(r, BASE[1:] + BASE[:-1])


def test_escaped_memory_is_not_watched(deferring: str) -> None:
    b = autodev.array(BASE)
    handed = np.asarray(b)  # handed out: it may be written behind autodev's back
    r = b[1:] + 1.0
    assert not pending(r)
    handed[1, 0] = 50.0
    same_bits(r, BASE[1:] + 1.0)
    host = BASE.copy()
    wrapped = autodev.asarray(host)  # wraps the caller's array
    s = wrapped[1:] * 2
    assert not pending(s)


def test_a_chain_never_writes_into_watched_memory(deferring: str) -> None:
    """An in-place call on a view runs at once (after the chains): a chain writes only
    memory nothing else reaches."""
    b = autodev.array(BASE)
    v = b[1:]
    r = v * 2.0
    v += 1.0
    assert not pending(v)
    same_bits(r, BASE[1:] * 2.0)
    same_bits(b, np.concatenate([BASE[:1], BASE[1:] + 1.0]))


def test_a_write_missed_is_reported(deferring: str) -> None:
    """The safety net: a write to watched memory that bypassed every write path (here
    through the private native array) is detected when the chain runs."""
    b = autodev.array(BASE)
    r = b[1:] + 1.0
    assert pending(r)
    native = b._native
    native[2, 2] = -5.0  # (no autodev write path: the version is bumped by hand)
    b._storage.version += 1
    with pytest.raises(RuntimeError, match="written before the chain ran"):
        r.tolist()
    assert not F.NODES and not F.WATCHED


def test_stencil_in_place_update(deferring: str) -> None:
    u0 = np.random.default_rng(1).random((9, 11))
    f0 = np.random.default_rng(2).random((9, 11))
    results = []
    for m in (np, autodev):
        u, f = m.array(u0), m.array(f0)
        for _ in range(3):
            new = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) \
                - 0.25 * f[1:-1, 1:-1]
            if m is autodev:
                assert pending(new)
            u[1:-1, 1:-1] = new
        results.append(u)
    same_bits(results[1], results[0])


def _assignments(m: Any, arrays: dict[str, Any]) -> None:
    """Assignments of temporaries that read the memory they are written into."""
    u, x, w = arrays["u"], arrays["x"], arrays["w"]
    for _ in range(2):  # (a stencil's sweeps; the second reads what the first wrote)
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) \
            - 0.25 * arrays["f"][1:-1, 1:-1]
    x[1:] = x[:-1] * 0.5 + x[1:]
    x[:-3] = x[3:] - x[:-3]  # (three rows ahead)
    w[1:-1] = w[:-2] + w[2:] * 0.5  # (3-d: rows of 5x4)
    w[:, 1:] = w[:, :-1] * 2.0 + w[:, 1:]  # (a shift within each row)
    y = arrays["y"]  # (55 rows over three threads: 19, 18, 18; blocks of 5: a short last)
    y[4:] = y[:-4] * 0.5 + y[4:]


def _updates(m: Any, arrays: dict[str, Any]) -> None:
    """In-place updates of views by a pending chain reading the memory they write."""
    u, x, y = arrays["u"], arrays["x"], arrays["y"]
    for _ in range(2):  # (the heat equation's explicit step; a view's own operator)
        x[1:-1] += 0.1 * (x[2:] - 2.0 * x[1:-1] + x[:-2])
    v = u[1:-1, 1:-1]
    v -= 0.25 * (u[:-2, 1:-1] * u[2:, 1:-1] - u[1:-1, :-2])
    m.multiply(y[4:], y[:-4] + 1.0, out=y[4:])  # (out= a view, the short last block)


@pytest.mark.parametrize("threads", [1, 3])
def test_an_assigned_chain_is_written_straight_into_its_target(
        deferring: str, threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``u[1:-1, 1:-1] = <a pending temporary reading u>``: with no GPU usable the chain
    writes its blocks into u one block late, no fresh array copied in (on the simulated
    GPU, where a chain may move, the value is made, then copied); NumPy's bits, on one
    thread and split over three."""
    from autodev import _indexing, _threads

    monkeypatch.setattr(_threads, "threads_for", lambda work, family: threads)
    done: list[bool] = []
    assign = _indexing.assign
    monkeypatch.setattr(_indexing, "assign", lambda dest, value: done.append(
        assign(dest, value)) or done[-1])
    rng = np.random.default_rng(3)
    start = {"u": rng.random((23, 17)), "f": rng.random((23, 17)), "x": rng.random(61),
             "w": rng.random((12, 5, 4)), "y": rng.random(59)}
    results = []
    for m in (np, autodev):
        arrays = {k: m.array(v) for k, v in start.items()}
        _assignments(m, arrays)
        results.append(arrays)
    for k in start:
        same_bits(results[1][k], results[0][k])
    assert done == [deferring == "host"] * 7
    if threads > 1 and deferring == "host":
        assert B.LAST_THREADS[0] == 3


@pytest.mark.parametrize("threads", [1, 3])
def test_a_views_update_by_a_chain_runs_at_once_writing_late(
        deferring: str, threads: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """``x[1:-1] += 0.1 * (x[2:] - ...)``: the update joins the chain it reads and all of it
    runs at the call, the view written one block late (no fresh array, then NumPy's add);
    with the simulated GPU usable, the chain runs first and the update at once, as before.
    NumPy's bits either way; nothing left pending."""
    from autodev import _threads

    monkeypatch.setattr(_threads, "threads_for", lambda work, family: threads)
    late: list[int] = []
    init = B._Late.__init__
    monkeypatch.setattr(B._Late, "__init__", lambda self, *a: late.append(1) or init(self, *a))
    rng = np.random.default_rng(5)
    start = {"u": rng.random((23, 17)), "x": rng.random(61), "y": rng.random(59)}
    results = []
    for m in (np, autodev):
        arrays = {k: m.array(v) for k, v in start.items()}
        _updates(m, arrays)
        if m is autodev:
            assert not F.NODES
        results.append(arrays)
    for k in start:
        same_bits(results[1][k], results[0][k])
    assert len(late) == (4 * threads if deferring == "host" else 0)  # (one per thread)


def test_an_update_that_fails_to_run_leaves_its_view_and_the_chain(
        deferring: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass raising (memory, say) as an update of a view runs it: the error is the
    call's, the view keeps its values, and the chain it read stays pending without the
    update (a later read gives NumPy's values)."""
    if deferring != "host":
        pytest.skip("the update is deferred with no GPU usable")
    x0 = np.random.default_rng(9).random(40)
    x = autodev.array(x0)
    step = 0.1 * (x[2:] - x[:-2])
    evaluate = F.evaluate
    monkeypatch.setattr(F, "evaluate", lambda *a, **k: (_ for _ in ()).throw(MemoryError()))
    view = x[1:-1]
    with pytest.raises(MemoryError):
        view += step
    monkeypatch.setattr(F, "evaluate", evaluate)
    assert pending(step) and len(F.NODES) == 2
    same_bits(step, 0.1 * (x0[2:] - x0[:-2]))
    same_bits(x, x0)


def test_assignments_the_pass_cannot_write_late_make_the_value_first(
        deferring: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain that reads the target's memory through a view of other strides, or
    broadcast, or a value of another dtype, or a value someone holds: the value is made,
    then copied in (NumPy's order), with NumPy's bits."""
    from autodev import _indexing

    done: list[bool] = []
    assign = _indexing.assign
    monkeypatch.setattr(_indexing, "assign", lambda dest, value: done.append(
        assign(dest, value)) or done[-1])

    def cases(m: Any) -> list[Any]:
        u, s, i = m.array(BASE), m.array(BASE[:, :6]), m.zeros((6, 8), int)
        u[1:-1] = u[::-1][1:-1] * 2.0  # (reversed rows: not deferred, nothing pending)
        s[...] = s.T.T * 0.5 + s.T.T  # (a view of its own geometry: in place)
        s[1:, :] = s[:-1, :] + s[1, :]  # (a row read by every row)
        u[:, ::2] = u[:, 1::2] + u[:, ::2]  # (the odd columns: the target's strides)
        u[:, :4] = u[:, ::2] * 2.0  # (other strides than the target's)
        i[...] = u * 3.0  # (float into int: NumPy casts)
        t = u * 2.0 + 1.0
        u[...] = t  # (t is held: it keeps its values)
        u += 1.0
        return [u, s, i, t]

    want = cases(np)
    got = cases(autodev)
    for g, w in zip(got, want):
        same_bits(g, w)
    host = deferring == "host"
    assert done == [host, False, host, False, False]


# --------------------------------------------------------------------------- stateful

_VIEWS = [(slice(None),), (slice(1, None),), (slice(None, -1),), (slice(None), slice(1, 5)),
          (slice(2, 4), slice(None)), (slice(None), slice(3, 7))]
_SHAPES = [np.empty((6, 8))[k].shape for k in _VIEWS]
#: Pairs of views of one shape (the target, and a view it reads besides its own).
_SAME_SHAPE = [(k, j) for k in range(len(_VIEWS)) for j in range(len(_VIEWS))
               if _SHAPES[k] == _SHAPES[j]]

_STEP = st.one_of(
    st.tuples(st.just("op"), st.sampled_from(range(len(_VIEWS))),
              st.sampled_from(["add", "multiply", "subtract", "maximum"]),
              st.floats(-2, 2, width=32)),
    st.tuples(st.just("op2"), st.sampled_from(range(len(_VIEWS))),
              st.sampled_from(range(len(_VIEWS)))),
    st.tuples(st.just("set"), st.sampled_from(range(len(_VIEWS))), st.integers(0, 4),
              st.floats(-9, 9, width=32)),
    st.tuples(st.just("iadd"), st.sampled_from(range(len(_VIEWS))),
              st.floats(-1, 1, width=32)),
    st.tuples(st.just("write_result"), st.integers(0, 30), st.sampled_from(range(len(_VIEWS)))),
    st.tuples(st.just("read"), st.integers(0, 30)),
    st.tuples(st.just("assign"), st.sampled_from(_SAME_SHAPE)),
    st.tuples(st.just("update"), st.sampled_from(_SAME_SHAPE)),
)


def _run(m: Any, steps: list[tuple[Any, ...]]) -> list[Any]:
    base = m.array(BASE)
    results: list[Any] = []
    for step in steps:
        kind = step[0]
        if kind == "op":
            _, k, name, c = step
            results.append(getattr(m, name)(base[_VIEWS[k]], c))
        elif kind == "op2":
            _, k, j = step
            if _SHAPES[k] == _SHAPES[j]:
                results.append(base[_VIEWS[k]] * 0.5 + base[_VIEWS[j]])
        elif kind == "set":
            _, k, row, c = step
            view = base[_VIEWS[k]]
            view[min(row, len(view) - 1)] = c
        elif kind == "iadd":
            _, k, c = step
            view = base[_VIEWS[k]]
            view += c
        elif kind == "write_result" and results:
            _, i, k = step
            r = results[i % len(results)]
            view = base[_VIEWS[k]]
            if r.shape == view.shape:
                view[...] = r
        elif kind == "assign":  # (a temporary reading the memory it is written into)
            k, j = step[1]
            base[_VIEWS[k]] = base[_VIEWS[j]] * 0.5 - base[_VIEWS[k]]
        elif kind == "update":  # (a view's in-place operator, reading a pending chain)
            k, j = step[1]
            view = base[_VIEWS[k]]
            view += base[_VIEWS[j]] * 0.5
        elif kind == "read" and results:
            float(results[step[1] % len(results)].sum())
    return [*results, base]


@settings(max_examples=60, deadline=None)
@given(steps=st.lists(_STEP, min_size=1, max_size=14))
@example(steps=[("assign", (1, 2)), ("op2", 1, 2), ("assign", (2, 1)), ("update", (2, 1)),
                ("update", (1, 2))])  # (late writes)
def test_interleaved_chains_views_and_writes(steps: list[tuple[Any, ...]]) -> None:
    """Chains over views of one array, writes through the array and its views, results
    written back into it, temporaries assigned into it, reads: NumPy's values, bit for bit
    (in blocks of one row: an assignment is written one row late)."""
    with np.errstate(all="ignore"):
        want = _run(np, steps)
        F.set_floor(8)
        blocks = B.BLOCK, B.THREADED_BLOCK
        B.BLOCK = B.THREADED_BLOCK = 1
        try:
            got = _run(autodev, steps)
        finally:
            B.BLOCK, B.THREADED_BLOCK = blocks
            F.set_floor(None)
        for g, w in zip(got, want):
            same_bits(g, w)
