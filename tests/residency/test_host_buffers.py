"""The host buffer pool (autodev._host_buffers over autodev._hostpool): large host calls
reuse freed blocks, with NumPy's results; the pool is scoped, bounded, emptied under
memory pressure, thread-safe, leak-free, visible in ``stats()``, and absent (with
everything working) in pure-Python mode or with ``AUTODEV_HOST_POOL=0``."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import threading
import tracemalloc
from typing import Any, Iterator

import numpy as np
import pytest

import autodev
from autodev import _host_buffers as H
from autodev import _threads as T
from autodev._device import CPU
from autodev._residency import memory

needs_pool = pytest.mark.skipif(H.POOL is None, reason=f"no host buffer pool: {H.STATUS}")
MiB = 1 << 20
#: float64 elements of a 2 MiB array: above the default threshold of 256 KiB.
N = 2 * MiB // 8


def handler_name(array: Any = None) -> str:
    """The NumPy memory handler of ``array``'s memory (of this context, if None)."""
    get = np._core.multiarray.get_handler_name
    if array is None:
        return str(get())
    if type(array) is autodev.ndarray:
        array = array._native
    while isinstance(array.base, np.ndarray):  # (a view has none: its owner has)
        array = array.base
    return str(get(array))


def pool() -> dict[str, Any]:
    return dict(autodev.stats()["host_pool"])


@pytest.fixture(autouse=True)
def empty_pool() -> Iterator[None]:
    """Each test starts and ends with an empty pool at its default settings."""
    H.release()
    yield
    H.configure(limit=H.default_limit() if autodev._config.ENV.host_pool is None
                else autodev._config.ENV.host_pool, threshold=H.DEFAULT_THRESHOLD)
    H.release()


def _vectors(n: int = N, dtype: Any = np.float64) -> tuple[Any, ...]:
    rng = np.random.default_rng(0)
    return tuple(rng.standard_normal(n).astype(dtype) for _ in range(3))


# --------------------------------------------------------------------------- results

@needs_pool
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.complex128])
def test_a_chain_gives_numpys_bits_with_reused_blocks(dtype: Any) -> None:
    a, b, c = _vectors(dtype=dtype)
    want = a * b + c
    x, y, z = (autodev.asarray(v) for v in (a, b, c))
    before = pool()
    for _ in range(4):
        got = x * y + z
        assert np.asarray(got).tobytes() == want.tobytes() and got.dtype == want.dtype
    after = pool()
    assert after["hits"] > before["hits"], "the later rounds reuse freed blocks"
    assert handler_name(got) == "autodev_host_pool"


@needs_pool
def test_zeros_from_a_reused_block_are_zero() -> None:
    with H.large_buffers():
        dirty = np.full(N, 7.0)
        del dirty  # its block, full of sevens, goes to the pool
        hits = pool()["hits"]
        zeros = np.zeros(N)  # calloc: the same block, zeroed
    assert pool()["hits"] == hits + 1
    assert not zeros.any()


@needs_pool
def test_realloc_keeps_the_data() -> None:
    with H.large_buffers():
        a = np.arange(10.0)
        a.resize(N, refcheck=False)  # plain block -> pooled block
        assert a[:10].tolist() == list(range(10)) and not a[10:].any()
        a.resize(20, refcheck=False)  # pooled block -> pooled block of another class
        assert a[:10].tolist() == list(range(10))
        b = np.fromiter((float(i) for i in range(N)), float)  # grows by realloc
    assert b[-1] == N - 1 and handler_name(b) == "autodev_host_pool"


# --------------------------------------------------------------------------- scope

@needs_pool
def test_the_handler_is_scoped_to_autodevs_calls() -> None:
    assert handler_name() == "default_allocator"
    with H.large_buffers():
        assert handler_name() == "autodev_host_pool"
        with H.large_buffers():
            pass
        assert handler_name() == "autodev_host_pool"
    assert handler_name() == "default_allocator"
    a, b, _ = _vectors()
    assert handler_name(a + b) == "default_allocator"  # NumPy's own call: not ours
    got = autodev.asarray(a) + autodev.asarray(b)
    assert handler_name(got) == "autodev_host_pool"
    small = autodev.ones(10) + 1  # a tiny call: NumPy's allocator
    assert handler_name(small) == "default_allocator"


@needs_pool
def test_the_scope_is_restored_after_an_error() -> None:
    with pytest.raises(ZeroDivisionError):
        with H.large_buffers():
            1 / 0
    assert handler_name() == "default_allocator"


@needs_pool
def test_a_block_freed_after_the_scope_returns_to_the_pool() -> None:
    with H.large_buffers():
        a = np.ones(N)
    held = pool()["held_bytes"]
    del a
    assert pool()["held_bytes"] > held


@needs_pool
def test_small_blocks_are_never_pooled() -> None:
    with H.large_buffers():
        for _ in range(10):
            np.ones(1000)
    assert pool()["held_blocks"] == 0 and pool()["hits"] == pool()["misses"] == 0


@needs_pool
def test_one_thread_sends_pooled_sizes_to_the_general_path() -> None:
    assert T.least_floor() <= H.POOLED_FROM


@needs_pool
@pytest.mark.skipif(autodev._config.SPEEDUPS is None, reason="no compiled hot path here")
def test_the_compiled_path_runs_a_call_below_its_familys_floor_in_the_scope(
        monkeypatch: Any) -> None:
    """A call large enough for the pool but below its own family's thread floor runs on
    the compiled path, in the pool's scope; one of a family whose floor it reaches goes to
    the general path (in the scope there too)."""
    from autodev import _dispatch

    general: list[bool] = []

    def host_pooled(attempt: Any, repeatable: bool) -> Any:
        general.append(repeatable)
        return memory.host_pooled(attempt, repeatable)

    monkeypatch.setattr(_dispatch, "host_pooled", host_pooled)
    T.floor("elementwise")  # (the floors computed, then two of them set for the test)
    saved = dict(T.FLOORS)
    T.FLOORS.update(elementwise=T.NEVER, transcendental=2 * T.MIN_BLOCK)
    T._tell()
    try:
        a, b, _ = _vectors()
        x, y = autodev.asarray(a), autodev.asarray(b)
        x[:3] + 1.0  # (the first call settles the devices: no GPU usable, the fast state)
        added, negated = x + y, autodev.negative(x)
        chosen = autodev.where(a > 0, x, y)  # (a function: the compiled path, in the scope)
        assert general == []
        assert np.asarray(chosen).tobytes() == np.where(a > 0, a, b).tobytes()
        assert handler_name(chosen) == "autodev_host_pool"
        sine = autodev.sin(x)  # (transcendental: its floor reached, the general path)
        assert general == [True]
        assert np.asarray(added).tobytes() == (a + b).tobytes()
        assert np.asarray(negated).tobytes() == (-a).tobytes()
        assert np.asarray(sine).tobytes() == np.sin(a).tobytes()
        assert handler_name(added) == handler_name(negated) == "autodev_host_pool"
        assert handler_name(sine) == "autodev_host_pool"
        small = autodev.asarray(a[:1000]) + 1.0
        assert handler_name(small) == "default_allocator"
    finally:
        T.FLOORS.clear()
        T.FLOORS.update(saved)
        T._tell()


@needs_pool
@pytest.mark.skipif(autodev._config.SPEEDUPS is None, reason="no compiled hot path here")
def test_blocks_from_numpys_elision_bound_are_pooled(monkeypatch: Any) -> None:
    """The threshold is NumPy's own bound for reusing a temporary, 256 KiB: a call on
    65,536 float64s (512 KiB) runs in the pool's scope, on the compiled path whatever its
    kind (a one-array reduction's too, below the threads' floors); one on 16,384 (128 KiB)
    keeps NumPy's allocator."""
    from autodev import _dispatch, _refcounts

    general: list[bool] = []

    def host_pooled(attempt: Any, repeatable: bool) -> Any:
        general.append(repeatable)
        return memory.host_pooled(attempt, repeatable)

    monkeypatch.setattr(_dispatch, "host_pooled", host_pooled)
    assert H.THRESHOLD == _refcounts._ELIDE_BYTES == 256 * 1024
    rng = np.random.default_rng(3)
    mid, low = rng.random(1 << 16), rng.random(1 << 14)
    x, y = autodev.asarray(mid), autodev.asarray(low)
    x[:3] + 1.0  # (the first call settles the devices)
    if T.floor("elementwise") <= mid.size or T.floor("reduction") <= mid.size:
        pytest.skip("this machine's thread floors split such a call")
    doubled, cumulated, mean = x * 2.0, autodev.cumsum(x), autodev.mean(x)
    assert handler_name(doubled) == handler_name(cumulated) == "autodev_host_pool"
    assert mean == np.mean(mid) and type(mean) is np.float64
    assert general == []
    assert handler_name(y * 2.0) == handler_name(autodev.cumsum(y)) == "default_allocator"
    assert np.asarray(doubled).tobytes() == (mid * 2.0).tobytes()
    assert np.asarray(cumulated).tobytes() == np.cumsum(mid).tobytes()


# --------------------------------------------------------------------------- bound, pressure

@needs_pool
def test_the_bound_holds() -> None:
    H.configure(limit=5 * MiB)
    with H.large_buffers():
        arrays = [np.ones(N) for _ in range(6)]  # 6 blocks of a bit over 2 MiB each
    del arrays
    after = pool()
    assert 0 < after["held_bytes"] <= 5 * MiB and after["released"] >= 4
    H.configure(limit=0)  # a lower bound gives the free blocks back
    assert pool()["held_bytes"] == 0


@needs_pool
def test_a_bound_of_zero_turns_the_pool_off() -> None:
    x, y, _ = (autodev.asarray(v) for v in _vectors())
    H.configure(limit=0)
    assert handler_name(x + y) == "default_allocator" and H.POOLED_FROM == H.NEVER
    assert pool()["status"] == "off (its bound set to 0)"
    with H.large_buffers():
        assert handler_name() == "default_allocator"
    H.configure(limit=64 * MiB)
    assert handler_name(x + y) == "autodev_host_pool"


@needs_pool
def test_a_failed_allocation_empties_the_pool_first() -> None:
    with H.large_buffers():
        held = np.ones(N)
        del held
        assert pool()["held_blocks"] == 1
        with pytest.raises(MemoryError):
            np.empty(1 << 60, dtype=np.uint8)  # more than any machine: fails twice
    assert pool()["held_blocks"] == 0


@needs_pool
def test_a_memory_error_frees_host_memory_and_runs_once_more() -> None:
    with H.large_buffers():
        del_me = np.ones(N)
        del del_me
    attempts: list[int] = []

    def attempt() -> str:
        attempts.append(pool()["held_blocks"])
        if len(attempts) == 1:
            raise MemoryError("first")
        return "done"

    assert memory.host_pooled(attempt, repeatable=True) == "done"
    assert attempts == [1, 0]  # the retry found the pool emptied
    attempts.clear()
    with pytest.raises(MemoryError, match="first"):  # (it may have written into out=)
        memory.host_pooled(attempt, repeatable=False)
    assert len(attempts) == 1


@needs_pool
def test_the_cpu_backends_free_memory_empties_the_pool() -> None:
    with H.large_buffers():
        a = np.ones(N)
    del a
    assert pool()["held_bytes"] > 0
    memory.free(CPU)
    assert pool()["held_bytes"] == 0


# --------------------------------------------------------------------------- threads

@needs_pool
def test_blocks_freed_and_taken_on_many_threads() -> None:
    H.configure(limit=64 * MiB)
    made: list[np.ndarray] = []
    lock = threading.Lock()
    errors: list[BaseException] = []

    def work(seed: int) -> None:
        try:
            for i in range(30):
                with H.large_buffers():
                    a = np.full(N + 512 * (i % 3), float(seed))
                if not (a == seed).all():  # (outside: its mask is not one of the 180)
                    raise AssertionError("a block was shared by two live arrays")
                with lock:
                    made.append(a)
                    if len(made) > 4:
                        made.pop(0)  # freed here, on whichever thread this is
        except BaseException as error:  # noqa: BLE001 (reported on the main thread)
            errors.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    made.clear()
    after = pool()
    assert after["hits"] + after["misses"] == 180 and after["hits"] > 0
    assert after["held_bytes"] <= 64 * MiB


# --------------------------------------------------------------------------- leaks

@needs_pool
def test_no_reference_leak() -> None:
    handler = H.POOL.handler  # type: ignore[union-attr]
    x, y, z = (autodev.asarray(v) for v in _vectors())

    def rounds() -> None:
        for _ in range(50):
            with H.large_buffers():
                np.ones(N)
            (x * y + z).sum()
            H.POOL.stats()  # type: ignore[union-attr]
            H.POOL.swap(H.POOL.swap(None))  # type: ignore[union-attr]
            with pytest.raises(TypeError):
                H.POOL.swap(object())  # type: ignore[union-attr]
            with pytest.raises(ValueError):
                H.POOL.configure(-1, 0)  # type: ignore[union-attr]

    rounds()
    gc.collect()
    refs, objects = sys.getrefcount(handler), len(gc.get_objects())
    tracemalloc.start()
    try:
        rounds()
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sys.getrefcount(handler) == refs
    assert len(gc.get_objects()) <= objects + 10
    assert current < 256 * 1024  # Python memory still held by the second 50 rounds


# --------------------------------------------------------------------------- absent, exit

def _child(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    return subprocess.run([sys.executable, "-c", code], env={**environ, **env},
                          capture_output=True, text=True, timeout=120)


_ABSENT = """
import numpy, autodev as np
from autodev._host_buffers import large_buffers
a = np.ones(1 << 19)
for _ in range(3):
    b = a * 2.0 + a
with large_buffers():
    c = numpy.ones(1 << 19)
s = np.stats()["host_pool"]
print(s["status"], s["hits"], s["misses"], float(b[5]),
      numpy._core.multiarray.get_handler_name(c))
"""


@pytest.mark.parametrize(("env", "status"), [
    ({"AUTODEV_PURE_PYTHON": "1"}, "off (AUTODEV_PURE_PYTHON=1)"),
    ({"AUTODEV_HOST_POOL": "0"}, "off (AUTODEV_HOST_POOL=0)"),
])
def test_without_the_pool_everything_works(env: dict[str, str], status: str) -> None:
    done = _child(_ABSENT, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [*status.split(), "0", "0", "3.0", "default_allocator"]


def test_a_bad_bound_is_refused() -> None:
    done = _child("import autodev", AUTODEV_HOST_POOL="lots")
    assert done.returncode != 0 and "AUTODEV_HOST_POOL must be a number of bytes" in done.stderr


@needs_pool
def test_exit_with_blocks_in_the_pool_and_live_arrays_is_clean() -> None:
    code = ("import numpy, autodev as np, threading\n"
            "from autodev._host_buffers import large_buffers\n"
            "a = np.ones(1 << 19)\n"
            "for _ in range(3): b = a * 2.0 + a\n"
            "with large_buffers(): keep = [numpy.ones(1 << 19) for _ in range(3)]\n"
            "t = threading.Thread(target=lambda: keep.pop()); t.start(); t.join()\n"
            "assert np.stats()['host_pool']['held_blocks'] >= 1\n"
            "print('ok')\n")
    done = _child(code, AUTODEV_HOST_POOL="64M")
    assert (done.returncode, done.stdout.strip(), done.stderr) == (0, "ok", "")


# --------------------------------------------------------------------------- the build

def test_ci_builds_the_pool() -> None:
    """The README's install (pip install -e .) compiles the pool where a compiler is."""
    if not os.environ.get("CI") or autodev._config.ENV.pure_python:
        pytest.skip("only CI's install is known to have a C compiler")
    assert H.POOL is not None, H.STATUS


def test_the_source_is_clean_under_wall_wextra() -> None:
    """autodev/_hostpool.c compiles without a warning under -Wall -Wextra."""
    import shutil
    import sysconfig

    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        pytest.skip(f"no C compiler here ({compiler})")
    source = os.path.join(os.path.dirname(autodev.__file__), "_hostpool.c")
    done = subprocess.run(
        [compiler, "-fsyntax-only", "-Wall", "-Wextra", "-Werror",
         f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}", source],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
