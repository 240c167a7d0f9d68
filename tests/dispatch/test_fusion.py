"""Deferred, fused elementwise chains (autodev._fusion): NumPy's values bit for bit, every
read and every write of an input sees the chain's value, memory autodev cannot watch is
never read late, errstate and warnings as NumPy's. The floor is lowered here so that
small arrays are deferred, and blocks are a few elements long."""

from __future__ import annotations

import dataclasses

import warnings
from typing import Any, Iterator

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import autodev
from autodev import _blocked as B, _fusion as F
from autodev._device import CPU
from fusecheck import defer_small_host_calls, pending, same_bits


@pytest.fixture(autouse=True)
def fuse_small(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from defer_small_host_calls(monkeypatch)


same = same_bits


def chain(m: Any, a: Any, b: Any) -> Any:
    c = m.exp(-a * 0.5) + b / (1.0 + a * a)
    return m.sqrt(m.abs(c)) * m.tanh(b - a) - 3 * c


FLOATS = st.sampled_from([np.float64, np.float32])


@settings(max_examples=40, deadline=None)
@given(data=st.data(), dtype=FLOATS, rows=st.integers(1, 7), cols=st.integers(2, 9))
def test_chain_bit_identical(data: Any, dtype: Any, rows: int, cols: int) -> None:
    shape = (rows, cols) if rows > 1 else (cols * 3,)
    elements = st.floats(-50, 50, width=32)
    a = data.draw(hnp.arrays(dtype, shape, elements=elements))
    b = data.draw(hnp.arrays(dtype, shape, elements=elements))
    with np.errstate(all="ignore"):
        want = chain(np, a, b)
        got = chain(autodev, autodev.array(a), autodev.array(b))
        same(got, want)


def test_chain_is_deferred_and_counted() -> None:
    a = autodev.arange(40.0)
    before = autodev.stats()
    r = (a * 0.5) * 2 + a
    assert pending(r) and id(a) in F.LEAVES
    same(r, (np.arange(40.0) * 0.5) * 2 + np.arange(40.0))
    assert not pending(r) and not F.LEAVES
    after = autodev.stats()
    assert after["fused_chains"] == before["fused_chains"] + 1
    assert after["fused_ops"] == before["fused_ops"] + 3


@pytest.mark.parametrize("dtypes", [(np.int8, np.float32), (np.int64, np.float64),
                                    (np.uint8, np.int16), (np.float32, np.complex64)])
def test_mixed_dtypes_bit_identical(dtypes: tuple[Any, Any]) -> None:
    a = (np.arange(30) % 7).astype(dtypes[0])
    b = (np.arange(30) % 5 + 1).astype(dtypes[1])
    want = (a * b + 3) / b - a
    got = (autodev.array(a) * autodev.array(b) + 3) / autodev.array(b) - autodev.array(a)
    same(got, want)


def test_broadcast_leaf() -> None:
    a = np.arange(60.0).reshape(6, 10)
    row = np.arange(10.0)
    got = autodev.array(a) * autodev.array(row) + 1.5
    assert pending(got)
    same(got, a * row + 1.5)


def test_type_errors_raise_at_the_call() -> None:
    a = autodev.arange(20)
    with pytest.raises(TypeError):
        autodev.bitwise_and(autodev.arange(20.0), a)
    with pytest.raises(OverflowError):
        autodev.arange(20, dtype=np.int8) + 1000
    with pytest.raises(ValueError):
        autodev.arange(20.0) + autodev.arange(21.0)


def test_out_given_as_a_tuple_returns_the_array() -> None:
    """``np.sign(a, out)`` (NumPy hands ``__array_ufunc__`` the tuple ``(out,)``) and
    ``out=(out,)``: the call returns ``out``, deferred like ``out=out``."""
    a0 = np.linspace(-2.0, 2.0, 30)
    a, out = autodev.array(a0), autodev.zeros(30)
    got = np.sign(a, out)  # (NumPy hands it to __array_ufunc__ as out=(out,))
    assert got is out and pending(out)
    same(out, np.sign(a0))
    assert np.add(a, 1.0, out=(out,)) is out
    same(out, a0 + 1.0)


def test_only_numpys_own_ufuncs_are_deferred() -> None:
    """Another library's ufunc runs at once: its loops may raise (NumPy raises at the call)
    or keep an error state of their own (``scipy.special.errstate``)."""
    from numpy._core import _umath_tests
    from scipy import special

    a0 = np.linspace(0.1, 2.0, 30)
    a = autodev.array(a0)
    with pytest.raises(RuntimeError, match="How unexpected"):  # (its loop sets an error)
        _umath_tests.always_error(a, a)
    x = special.erf(a)
    assert not pending(x) and not F.NODES
    same(x, special.erf(a0))
    assert pending(np.exp(a))


def test_integer_power_errors_raise_at_the_call() -> None:
    """NumPy's integer ``power`` raises for a negative exponent among the values: at the
    call, not when a deferred chain is read (or dropped, with no one to see it)."""
    base, exponent = autodev.arange(1, 21), autodev.arange(20) % 3 - 1
    with pytest.raises(ValueError, match="negative integer powers"):
        base ** exponent
    with pytest.raises(ValueError, match="negative integer powers"):
        autodev.power(base, exponent)
    same(autodev.arange(20) ** 2.5, np.arange(20) ** 2.5)  # a float power is deferred


# --------------------------------------------------------------------------- reads

@pytest.mark.parametrize("read", [
    repr, str, lambda r: r.tolist(), lambda r: r[3], lambda r: r[2:5].copy(),
    lambda r: r.sum(), lambda r: bool(r[0] < 100), lambda r: r.item(4), np.asarray,
    lambda r: bytes(memoryview(r)), lambda r: r.shape, lambda r: autodev.sort(r),
    lambda r: r.reshape(4, 5), lambda r: r @ r])
def test_every_read_sees_the_value(read: Any) -> None:
    a = np.linspace(0, 3, 20)
    r = autodev.cos(autodev.array(a)) * 3
    assert pending(r)
    got, want = read(r), read(np.cos(a) * 3)
    if isinstance(want, np.ndarray) or isinstance(got, autodev.ndarray):
        same(got, np.asarray(want))
    else:
        assert got == want


# --------------------------------------------------------------------------- writes

def test_write_to_input_after_record() -> None:
    a = autodev.arange(20.0)
    r = a * 2 + 1
    a[3] = 100.0  # the chain read a before this write
    same(r, np.arange(20.0) * 2 + 1)
    assert float(a[3]) == 100.0


def test_in_place_operator_on_input() -> None:
    a = autodev.arange(20.0)
    b = autodev.arange(20.0) + 0  # (pending)
    r = a * b
    a += 5
    b *= 0
    same(r, np.arange(20.0) ** 2)
    same(a, np.arange(20.0) + 5)
    same(b, np.zeros(20))


def test_write_to_pending_result() -> None:
    a = autodev.arange(20.0)
    r = a * 2
    s = r + 1
    r[0] = -7.0
    assert s[0] == 1.0 and r[0] == -7.0 and r[1] == 2.0


def test_view_of_pending_and_its_writes() -> None:
    a = autodev.arange(20.0)
    r = a - 1
    v = r[::2]
    v[:] = 0
    same(r, np.where(np.arange(20) % 2 == 0, 0.0, np.arange(20.0) - 1))
    t = a + 1  # a now has a view? no: a is still its own, r's view is of r
    same(t, np.arange(20.0) + 1)


def test_view_of_input_is_watched_not_locked() -> None:
    a = autodev.arange(20.0)
    v = a[5:]
    r = a * 3  # a shares memory with a view: watched (tests/dispatch/test_fusion_views.py)
    assert pending(r) and id(a) not in F.LEAVES and F.WATCHED
    v[0] = 99.0  # a write through the view evaluates the chain first
    assert not pending(r)
    same(r, np.arange(20.0) * 3)


def test_escaped_memory_never_read_late() -> None:
    host = np.arange(20.0)
    a = autodev.asarray(host)  # wraps the caller's array
    r = a * 2
    host[0] = 50.0
    assert r[0] == 0.0
    b = autodev.arange(20.0)
    handed = np.asarray(b)  # a buffer handed out
    s = b + 1
    handed[1] = -1.0
    assert s[1] == 2.0


def test_out_and_where_calls_see_pending() -> None:
    a = autodev.arange(20.0)
    r = a * 2
    autodev.add(r, 1, out=r)
    autodev.multiply(a, 0, out=a, where=a > 10)
    same(r, np.arange(20.0) * 2 + 1)
    want = np.arange(20.0)
    want[want > 10] = 0
    same(a, want)


def test_stencil_write_back_bit_identical() -> None:
    u0 = np.random.default_rng(1).random((9, 11))
    f = np.random.default_rng(2).random((9, 11))
    for m, u in ((np, u0.copy()), (autodev, autodev.array(u0))):
        fu = m.asarray(f) if m is autodev else f
        for _ in range(3):
            u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2]
                                    + u[1:-1, 2:]) - 0.25 * fu[1:-1, 1:-1]
        if m is np:
            want = u
        else:
            same(u, want)


def test_particles_bit_identical() -> None:
    rng = np.random.default_rng(3)
    hx, hv = rng.standard_normal(23), rng.standard_normal(23)
    results = []
    for m in (np, autodev):
        x, v = m.array(hx), m.array(hv)
        for _ in range(3):
            xm = x + 0.5 * 0.01 * v
            vm = v - 0.5 * 0.01 * x
            x += 0.01 * vm
            v -= 0.01 * xm
        results.append((np.asarray(x), np.asarray(v)))
    same(results[1][0], results[0][0])
    same(results[1][1], results[0][1])


# --------------------------------------------------------------------------- errstate

def test_warning_once_per_op_at_evaluation() -> None:
    a = autodev.zeros(20)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = 1.0 / a
        s = r * 0
        assert pending(s)
        np.asarray(s)
    assert [str(w.message) for w in seen] == ["divide by zero encountered in divide",
                                              "invalid value encountered in multiply"]
    assert all(w.filename == __file__ for w in seen)


def test_errstate_at_the_call_applies() -> None:
    a = autodev.zeros(20)
    with np.errstate(divide="ignore"):
        r = 1.0 / a
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        same(r, np.full(20, np.inf))


def test_raise_mode_runs_at_once() -> None:
    a = autodev.zeros(20)
    with np.errstate(all="raise"), pytest.raises(FloatingPointError):
        1.0 / a


@pytest.mark.parametrize("category", [RuntimeWarning, Warning])
def test_a_warnings_filter_that_raises_runs_the_call_at_once(category: Any) -> None:
    """``warnings.simplefilter("error")`` around the call: NumPy raises there, so the call
    is not deferred (deferred, it raised at a later read, outside the ``try``)."""
    a = autodev.zeros(20)
    with warnings.catch_warnings():
        warnings.simplefilter("error", category)
        with pytest.raises(RuntimeWarning, match="divide by zero encountered in log"):
            np.log(a)
        assert not F.NODES
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # (not a RuntimeWarning's)
        assert pending(np.log(a + 1.0))


def test_warnings_go_where_the_filters_at_the_call_send_them() -> None:
    """A deferred call's warning is given as the eager call would have given it: under the
    ``warnings`` filters and hooks in force at the call, not those at the later read."""
    a = autodev.zeros(20)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = 1.0 / a
        assert pending(r)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        same(r, np.full(20, np.inf))
    assert not seen  # (silenced around the call alone, as NumPy's warning was)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        r = 1.0 / a
        assert pending(r)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (at the read only: NumPy warned at the call)
        got = np.asarray(r)
    same(got, np.full(20, np.inf))
    assert [str(w.message) for w in seen] == ["divide by zero encountered in divide"]
    assert seen[0].filename == __file__


def test_dropped_result_still_warns() -> None:
    a = autodev.zeros(20)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        a / a  # noqa: B018 (the result dropped unread)
    assert [str(w.message) for w in seen] == ["invalid value encountered in divide"]
    assert not F.NODES


# --------------------------------------------------------------------------- bounds, off

def test_chain_length_bounded() -> None:
    a = autodev.arange(20.0)
    r = a
    for _ in range(F.MAX_NODES + 5):
        r = r + 1
        assert len(F.NODES) <= F.MAX_NODES
    same(r, np.arange(20.0) + F.MAX_NODES + 5)


def test_off() -> None:
    F.set_floor(F.NEVER)
    r = autodev.arange(20.0) * 2
    assert not pending(r)


def test_other_thread_reads() -> None:
    import threading

    a = autodev.arange(20.0)
    r = a * 5
    box: list[Any] = []
    t = threading.Thread(target=lambda: box.append(np.asarray(r).copy()))
    t.start()
    t.join()
    same(box[0], np.arange(20.0) * 5)


# --------------------------------------------------------------------------- out=, where=, in place

def test_in_place_chain_is_deferred_and_bit_identical() -> None:
    rng = np.random.default_rng(4)
    hx, hv = rng.standard_normal(37), rng.standard_normal(37)
    x, v = autodev.array(hx), autodev.array(hv)
    for _ in range(2):
        xm = x + 0.005 * v
        x += 0.01 * xm
        v -= 0.01 * x
    assert pending(x) and pending(v)
    for _ in range(2):
        xm = hx + 0.005 * hv
        hx += 0.01 * xm
        hv -= 0.01 * hx
    same(x, hx)
    same(v, hv)


def test_masked_out_where_bit_identical() -> None:
    rng = np.random.default_rng(5)
    hc = rng.uniform(-1.5, 0.5, 29) + 1j * rng.uniform(-1, 1, 29)
    results = []
    for m in (np, autodev):
        c, z, counts = m.array(hc), m.zeros(29, complex), m.zeros(29, np.int64)
        for _ in range(6):
            alive = m.less(m.abs(z), 2.0)
            m.add(m.multiply(z, z, where=alive, out=z), c, where=alive, out=z)
            counts += alive
        if m is autodev:
            assert pending(counts)
        results.append((np.asarray(z), np.asarray(counts)))
    same(results[1][0], results[0][0])
    same(results[1][1], results[0][1])


def test_in_place_casting_error_at_the_call() -> None:
    a = autodev.arange(20)
    with pytest.raises(np._core._exceptions._UFuncOutputCastingError):
        a += 1.5
    same(a, np.arange(20))


def test_out_broadcast_read_runs_at_once() -> None:
    row = autodev.arange(10.0)
    grid = autodev.ones((4, 10))
    r = grid * row  # reads row broadcast to (4, 10)
    row += 1  # a write of row while a broadcast read of it is pending: not deferred
    same(r, np.ones((4, 10)) * np.arange(10.0))
    same(row, np.arange(10.0) + 1)


def test_pending_array_written_in_place() -> None:
    a = autodev.arange(20.0)
    r = a * 2
    r += 1
    s = r * 3
    r -= 100
    same(s, (np.arange(20.0) * 2 + 1) * 3)
    same(r, np.arange(20.0) * 2 + 1 - 100)


def test_trace_shows_a_chain_as_one_entry() -> None:
    a = autodev.arange(30.0)
    with autodev.trace() as records:
        r = -(a * 0.1) + 1
        assert pending(r)
    assert not pending(r)  # the block's end evaluated it
    fused = [rec for rec in records if rec.op == "fused"]
    assert len(fused) == 1 and fused[0].reason.endswith("multiply, negative, add")
    assert not [rec for rec in records if rec.op in ("multiply", "negative", "add")]
    same(r, -(np.arange(30.0) * 0.1) + 1)


@pytest.mark.parametrize("op", ["==", "!="])
@pytest.mark.parametrize("other", ["array", "int", "float", "big int", "int32 array"])
def test_equality_joins_a_chain(op: str, other: str) -> None:
    # == and != are NumPy's equal/not_equal on numeric operands: they join the pending
    # chain (they used to force it), with NumPy's results, Python integers out of range too
    def run(m: Any) -> Any:
        a = m.arange(24.0).reshape(4, 6)
        o = {"array": (a % 3) * 2, "int": 4, "float": 4.0, "big int": 2 ** 70,
             "int32 array": m.arange(24, dtype=m.int32).reshape(4, 6) % 5}[other]
        left = a * 2 - 6
        return (left == o) if op == "==" else (left != o)

    got = run(autodev)
    assert pending(got)
    same(got, run(np))


def test_equality_of_what_no_ufunc_loop_compares_still_answers_as_numpys() -> None:
    # strings and None never join a chain: the host's operator answers (all False / True)
    a = autodev.arange(10.0) * 2
    for other in ("x", None):
        for op in ("__eq__", "__ne__"):
            want = getattr(np.arange(10.0) * 2, op)(other)
            got = getattr(a, op)(other)
            assert not pending(got)
            same(got, np.asarray(want))


@pytest.mark.parametrize("first", ["exp(a)", "add(a, 1.0)"])
def test_trace_defers_a_chain_that_starts_with_a_ufunc_call(first: str) -> None:
    # traced, a ufunc called by name takes the general path: it must not keep the operand's
    # native array alive there, or the operand cannot be locked and the call runs at once
    a = autodev.arange(30.0)
    with autodev.trace() as records:
        r = (autodev.exp(a) if first == "exp(a)" else autodev.add(a, 1.0)) * 2.0
        assert pending(r)
    fused = [rec for rec in records if rec.op == "fused"]
    assert [rec.op for rec in records] == ["fused"] and fused[0].reason.endswith(
        f"{first.split('(')[0]}, multiply")
    same(r, (np.exp(np.arange(30.0)) if first == "exp(a)" else np.arange(30.0) + 1.0) * 2.0)


def test_profile_floor_and_info(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._calibrate.fusion import floor_of, measure_fusion
    from autodev._cost import profile as P

    with pytest.raises(P.ProfileError, match="fusion.floor"):
        P._check_fusion({"floor": "big"}, "p: fusion")
    P._check_fusion({"floor": None}, "p: fusion")
    points = {"n": [1.0, 2.0, 4.0], "eager": [1.0, 3.0, 3.0], "fused": [2.0, 1.0, 1.0]}
    assert floor_of(points) == 2
    assert floor_of({"n": [1.0], "eager": [1.0], "fused": [1.0]}) is None
    section = measure_fusion(0.05, quick=True)
    assert set(section) == {"floor", "measurements", "block", "threaded_block",
                            "block_measurements"} \
        and section["measurements"]["n"]
    assert F.floor() == 8  # (restored: this test's fixture set 8, calibration set it back)
    assert autodev.info()["fusion"]["floor"] is not None


def test_the_block_size_is_measured_and_read_from_the_profile(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev import _threads
    from autodev._calibrate.fusion import MARGIN, block_of, measure_fusion
    from autodev._cost import profile as P

    monkeypatch.setattr(B, "BLOCK", B.DEFAULT_BLOCK)  # (not this file's 5: calibration's)
    monkeypatch.setattr(B, "THREADED_BLOCK", B.DEFAULT_THREADED_BLOCK)

    for key in ("block", "threaded_block"):
        with pytest.raises(P.ProfileError, match=f"fusion.{key}"):
            P._check_fusion({"floor": 8, key: 1000}, "p: fusion")
        with pytest.raises(P.ProfileError, match=f"fusion.{key}"):
            P._check_fusion({"floor": 8, key: True}, "p: fusion")
    P._check_fusion({"floor": 8, "block": 65536, "threaded_block": 4096}, "p: fusion")
    # another size is kept only where it beat the default by the margin, for each of the
    # one-thread and the threaded pass
    for threaded, key, default in ((False, "seconds", B.DEFAULT_BLOCK),
                                   (True, "threaded_seconds", B.DEFAULT_THREADED_BLOCK)):
        other = 4096.0 if threaded else 65536.0
        sizes = [float(default), other]
        faster = {"block": sizes, key: [1.0, 1.0 / MARGIN - 0.01]}
        assert block_of(faster, threaded) == int(other)
        assert block_of(faster, not threaded) == (B.DEFAULT_BLOCK if threaded
                                                  else B.DEFAULT_THREADED_BLOCK)
        assert block_of({"block": sizes, key: [1.0, 0.95]}, threaded) == default
        assert block_of({"block": sizes, key: [0.9, 1.0]}, threaded) == default
    before = B.BLOCK, B.THREADED_BLOCK
    section = measure_fusion(0.5, quick=True)
    assert (B.BLOCK, B.THREADED_BLOCK) == before and F.floor() == 8  # (each restored)
    measured = section["block_measurements"]
    assert section["block"] in B.BLOCKS and section["threaded_block"] in B.BLOCKS
    assert measured["block"] and len(measured["seconds"]) == len(measured["block"])
    if _threads.POOL.threads > 1:  # (timed on every thread too)
        assert len(measured["threaded_seconds"]) == len(measured["block"])
    P._check_fusion(section, "calibrated: fusion")
    with pytest.raises(ValueError, match="block"):
        B.set_block(1000)
    with pytest.raises(ValueError, match="block"):
        B.set_block(4096, 1000)


def test_a_profiles_block_size_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._cost import profile as P

    found = P.resolve()
    profile = {**found.profile, "fusion": {"floor": 8, "block": 4096, "threaded_block": 8192}}
    monkeypatch.setattr(P, "resolve", lambda *a, **k: dataclasses.replace(found,
                                                                          profile=profile))
    try:
        F.set_floor(None)  # (the profile read again, as after calibrate)
        assert F.floor() == 8 and (B.BLOCK, B.THREADED_BLOCK) == (4096, 8192)
        assert autodev.info()["fusion"]["threaded_block"] == 8192
    finally:
        monkeypatch.undo()
        F.set_floor(None)
    assert B.BLOCK == B.DEFAULT_BLOCK or B.BLOCK in B.BLOCKS


@pytest.mark.parametrize("block", [4096, 65536, 4194304])
@pytest.mark.parametrize("threads", [1, 3])
def test_every_block_size_gives_numpys_bits(block: int, threads: int,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Results and fused sums are NumPy's, bit for bit, whatever the block size, on one
    thread and split over three (in blocks of the threaded size where it makes two or
    more, else of the one-thread size on one thread)."""
    from autodev import _threads

    monkeypatch.setattr(_threads, "threads_for", lambda work, family: threads)
    before = B.BLOCK, B.THREADED_BLOCK
    B.set_block(4096, block) if threads > 1 else B.set_block(block)
    try:
        rng = np.random.default_rng(block)
        for shape in [(70_001,), (300, 233)]:
            a0 = rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)
            b0 = rng.random(shape)
            a, b = autodev.array(a0), autodev.array(b0)
            x = chain(autodev, a, b)
            assert pending(x)
            want = chain(np, a0, b0)
            got = autodev.sum(x)
            assert got.tobytes() == np.sum(want).tobytes()
            assert B.LAST_THREADS[0] == (threads if a0.size >= 4 * block or threads == 1
                                         else 1)
            same_bits(x, want)
    finally:
        B.BLOCK, B.THREADED_BLOCK = before


def test_calibrating_the_floor_times_the_hosts_pass_with_a_gpu_usable() -> None:
    # the floor prices the host's blocked pass: a chain calibration times stays there even
    # where a GPU would take it (on the H100 the chains moved, and no floor was found)
    from autodev._calibrate.fusion import measure_fusion
    from autodev.testing import simulated_gpu

    with simulated_gpu() as sim, autodev.policy("gpu"):
        calls = sim.calls
        measure_fusion(0.05, quick=True)
        assert sim.calls == calls


# --------------------------------------------------------------------------- stateful

from hypothesis import assume  # noqa: E402
from hypothesis.stateful import Bundle, RuleBasedStateMachine, precondition, rule  # noqa: E402

_OPS = {"+": np.add, "*": np.multiply, "-": np.subtract, "max": np.maximum}


class PendingChains(RuleBasedStateMachine):
    """Arrays (autodev, and the NumPy model built by the same steps) made by elementwise
    calls that stay pending, written in place, through views and by ``out=``/``where=``,
    and read now and then: every read agrees with NumPy, bit for bit."""

    arrays = Bundle("arrays")

    def __init__(self) -> None:
        super().__init__()
        self.pairs: list[tuple[Any, np.ndarray]] = []

    def _add(self, ad: Any, model: np.ndarray) -> tuple[Any, np.ndarray]:
        self.pairs.append((ad, model))
        return ad, model

    @rule(target=arrays, start=st.integers(-5, 5))
    def root(self, start: int) -> tuple[Any, np.ndarray]:
        model = np.arange(start, start + 24, dtype=np.float64).reshape(4, 6)
        return self._add(autodev.array(model), model.copy())

    @precondition(lambda self: len(self.pairs) < 12)
    @rule(target=arrays, a=arrays, b=arrays, op=st.sampled_from(sorted(_OPS)))
    def binary(self, a: Any, b: Any, op: str) -> tuple[Any, np.ndarray]:
        assume(a[1].shape == b[1].shape)
        return self._add(_OPS[op](a[0], b[0]), _OPS[op](a[1], b[1]))

    @precondition(lambda self: len(self.pairs) < 12)
    @rule(target=arrays, a=arrays, scale=st.sampled_from([0.5, 3, -1.25]))
    def scalar_chain(self, a: Any, scale: float) -> tuple[Any, np.ndarray]:
        return self._add(autodev.sqrt(autodev.abs(a[0] * scale)) + 1,
                         np.sqrt(np.abs(a[1] * scale)) + 1)

    @rule(a=arrays, b=arrays, op=st.sampled_from(["+=", "*=", "-="]))
    def in_place(self, a: Any, b: Any, op: str) -> None:
        assume(a[1].shape == b[1].shape)
        for x, y in ((a[0], b[0]), (a[1], b[1])):
            if op == "+=":
                x += y
            elif op == "*=":
                x *= y
            else:
                x -= y

    @rule(a=arrays, row=st.integers(0, 3), value=st.integers(-9, 9))
    def write_row(self, a: Any, row: int, value: int) -> None:
        assume(row < a[1].shape[0])
        a[0][row] = value
        a[1][row] = value

    @precondition(lambda self: len(self.pairs) < 12)
    @rule(target=arrays, a=arrays)
    def view(self, a: Any) -> tuple[Any, np.ndarray]:
        return self._add(a[0][1:, ::2], a[1][1:, ::2])

    @rule(a=arrays, b=arrays, threshold=st.integers(-5, 20))
    def out_where(self, a: Any, b: Any, threshold: int) -> None:
        assume(a[1].shape == b[1].shape)
        for m, x, y in ((autodev, a[0], b[0]), (np, a[1], b[1])):
            m.add(x, y, out=x, where=y > threshold)

    @rule(a=arrays)
    def read(self, a: Any) -> None:
        same(a[0], a[1])

    def teardown(self) -> None:
        for ad, model in self.pairs:
            same(ad, model)


PendingChains.TestCase.settings = settings(max_examples=60, stateful_step_count=25,
                                           deadline=None)
test_pending_chains_state_machine = PendingChains.TestCase


# --------------------------------------------------------------------------- fused sums

@pytest.fixture
def short_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    # summation runs of at most 128 elements (NumPy's pairwise block): deep trees on
    # small arrays
    monkeypatch.setattr(B, "sum_run", lambda block: 128)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [9, 128, 129, 1000, 4099, 33_333])
@pytest.mark.parametrize("how", ["sum", "x.sum", "mean", "x.mean"])
def test_a_sum_of_a_chain_is_made_as_it_runs_bit_identical(short_runs: None, dtype: Any,
                                                           n: int, how: str) -> None:
    rng = np.random.default_rng(n)  # (magnitudes 1e-6 to 1e6: any other order of the
    a0 = (rng.standard_normal(n) * 10.0 ** rng.uniform(-6, 6, n)).astype(dtype)  # sums
    a0[::7] = -0.0  # rounds differently)
    b0 = rng.random(n).astype(dtype)
    reduce = how.removeprefix("x.")
    want = getattr(np, reduce)(np.sin(a0) * a0 - b0)
    a, b = autodev.array(a0), autodev.array(b0)
    sums = autodev.stats()["fused_sums"]
    x = autodev.sin(a) * a - b
    assert pending(x)
    got = getattr(x, reduce)() if how.startswith("x.") else getattr(autodev, reduce)(x)
    assert type(got) is type(want) and got.tobytes() == want.tobytes()
    assert autodev.stats()["fused_sums"] == sums + 1
    same_bits(x, np.sin(a0) * a0 - b0)  # (the chain's array has its value too)


def test_a_fused_sums_errors_are_numpys(short_runs: None) -> None:
    a0 = np.full(1000, 1e306)
    for mode, expect in (("warn", "overflow encountered in reduce"), ("raise", None)):
        a = autodev.array(a0)
        x = a * 10.0  # (no overflow in the chain itself)
        with np.errstate(over=mode):
            if expect:
                with pytest.warns(RuntimeWarning, match=expect) as caught:
                    got = autodev.sum(x)
                assert len(caught) == 1 and got == np.inf
            else:
                with pytest.raises(FloatingPointError, match="overflow encountered in reduce"):
                    autodev.sum(x)
    with np.errstate(over="ignore"):
        assert autodev.sum(autodev.array(a0) * 10.0) == np.inf


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("shape", [(37, 41), (1, 500), (5, 6, 7)])
def test_a_sum_of_an_n_dimensional_chain_is_numpys_flat_sum(short_runs: None, shape: Any,
                                                            reduce: str) -> None:
    # NumPy sums a C-contiguous array over all axes as the flat run of its elements: the
    # chain runs so too, and its array keeps its shape
    rng = np.random.default_rng(len(shape))
    a0 = rng.standard_normal(shape) * 10.0 ** rng.uniform(-6, 6, shape)
    want = getattr(np, reduce)(np.sin(a0) * a0 + 1.0)
    sums = autodev.stats()["fused_sums"]
    x = autodev.sin(autodev.array(a0)) * autodev.array(a0) + 1.0
    got = getattr(autodev, reduce)(x)
    assert type(got) is type(want) and got.tobytes() == want.tobytes()
    assert autodev.stats()["fused_sums"] == sums + 1
    same_bits(x, np.sin(a0) * a0 + 1.0)


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("case", ["broadcast", "int", "axis", "dtype", "float16"])
def test_sums_a_chain_cannot_make_are_numpys(short_runs: None, case: str, reduce: str) -> None:
    dtype = {"int": np.int64, "float16": np.float16}.get(case, np.float64)
    shape = (40, 30) if case == "broadcast" else (1200,)
    a0 = (np.arange(np.prod(shape)).reshape(shape) % 17).astype(dtype)
    row = (np.arange(shape[-1]) % 5 + 1).astype(dtype)  # (a 2-d chain reading it: by rows)
    kwargs = {"axis": 0} if case == "axis" else {"dtype": np.float32} if case == "dtype" else {}
    want = getattr(np, reduce)(a0 * row + 1, **kwargs)
    sums = autodev.stats()["fused_sums"]
    got = getattr(autodev, reduce)(autodev.array(a0) * autodev.array(row) + 1, **kwargs)
    same_bits(got, np.asarray(want))
    assert autodev.stats()["fused_sums"] == sums


# --------------------------------------------------------------------------- the pass

def test_a_chains_threads_price_its_transcendental_calls_as_theirs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A chain's pass splits over threads when its transcendental calls' work would split
    such calls (a chain of exp and one multiply is not priced as cheap calls only)."""
    from autodev import _threads

    monkeypatch.setattr(_threads, "threads_for",
                        lambda work, family: 3 if family == "transcendental" else 1)
    a0 = np.linspace(0.0, 1.0, 60)
    a = autodev.array(a0)
    x = autodev.exp(a) * 2.0
    same(x, np.exp(a0) * 2.0)
    assert B.LAST_THREADS[0] == 3
    y = (a * 2.0 + 1.0) * a
    same(y, (a0 * 2.0 + 1.0) * a0)
    assert B.LAST_THREADS[0] == 1


def test_the_pass_writes_in_place_into_a_temporary_it_reads_last(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """As NumPy's elision: a call writes into the scratch of an operand nothing reads
    after it (of its dtype), so a chain of one running temporary needs one scratch
    buffer; the bits are NumPy's."""
    plans: list[tuple[list[Any], list[Any]]] = []
    plan = B._plan
    monkeypatch.setattr(B, "_plan", lambda group, outs: plans.append(plan(group, outs))
                        or plans[-1])
    a0, b0 = np.linspace(-1.0, 1.0, 40), np.linspace(0.5, 2.0, 40)
    a, b = autodev.array(a0), autodev.array(b0)
    same(((a * b + 1.0) * a - b) * 0.5, ((a0 * b0 + 1.0) * a0 - b0) * 0.5)
    assert plans[-1] == ([0, 0, 0, 0, None], [np.dtype(np.float64)])
    # a temporary read again later keeps its own buffer; a narrower one is not reused
    x = a * b
    y = (x + 1.0) * x
    del x  # (no longer alive: a temporary of the chain)
    z = y - 2.0
    del y
    same(z, (a0 * b0 + 1.0) * (a0 * b0) - 2.0)
    assert plans[-1] == ([0, 1, 1, None], [np.dtype(np.float64)] * 2)
    c0 = np.arange(40, dtype=np.float32)
    c = autodev.array(c0)
    same((c * np.float32(2.0) + a) * 3.0, (c0 * np.float32(2.0) + a0) * 3.0)
    assert plans[-1] == ([0, 1, None], [np.dtype(np.float32), np.dtype(np.float64)])


def test_the_pass_keeps_its_scratch_buffers_and_gives_them_up() -> None:
    """Scratch buffers are kept from one pass to the next (a fresh one faults in every
    page), bounded, and released under memory pressure (autodev._residency.memory.free)."""
    from autodev._residency import memory

    B.release_spare()
    a0 = np.linspace(0.0, 1.0, 40)
    a = autodev.array(a0)
    same((a * 2.0 + 1.0) * a - a, (a0 * 2.0 + 1.0) * a0 - a0)
    kept = [id(b) for spare in B._SPARE.values() for b in spare]
    assert kept
    same((a * 3.0 + 1.0) * a - a, (a0 * 3.0 + 1.0) * a0 - a0)
    assert sorted(id(b) for spare in B._SPARE.values() for b in spare) == sorted(kept)
    memory.free(CPU)
    assert not B._SPARE


def test_kept_scratch_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(B, "SPARE_LIMIT", 3 * 8 * 100)
    B.release_spare()
    B._give([np.empty(100), np.empty(100), np.empty(50), np.empty(100)])
    assert sum(b.nbytes for kept in B._SPARE.values() for b in kept) <= B.SPARE_LIMIT
    assert B._take((50,), np.dtype(float)).shape == (50,)
    B.release_spare()
