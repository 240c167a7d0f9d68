"""A deferred chain on a real CUDA device runs as one cupy.fuse kernel (autodev._chain_kernels):
NumPy's dtypes, CuPy's unfused values within a few units in the last place (the compiler
may contract a multiply and an add of one kernel into one rounding), no chain refused.
Skipped with a reason elsewhere; on a machine with a usable GPU, a skip here fails the run."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import numpy as np
import pytest

import autodev
from autodev import _chains as C, _fusion as F
from conftest import CUDA_REASON, HAS_CUDA

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not HAS_CUDA, reason=f"CUDA: {CUDA_REASON}")]


@pytest.fixture
def crossing(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[int], None]]:
    """Calls of 8 elements or more deferred (also those the cost model would run on the
    GPU at once); ``crossing(n)``: a chain crosses to the GPU once it holds ``n`` calls
    (0: never)."""
    F.set_floor(8)
    admit = C.PLACER.admit
    monkeypatch.setattr(C.PLACER, "admit", lambda *args: admit(*args) is not False)

    def at(calls: int) -> None:
        monkeypatch.setattr(C.PLACER, "crosses", lambda nodes: 0 < calls <= len(nodes)
                            and all(n.gpu for n in nodes))

    yield at
    F.set_floor(None)


CHAINS: dict[str, tuple[Callable[..., Any], list[Any]]] = {
    "floats": (lambda m, a, b: m.sqrt(m.abs(m.exp(-a * 0.5) + b / (1.0 + a * a))) - 3 * b,
               [np.float32, np.float64]),
    "integers": (lambda m, a, b: (a * 3 + b) // 2 - a % 5, [np.int16, np.uint8, np.int64]),
    "masks": (lambda m, a, b: (a < 3) | (b >= a), [np.int8, np.float32]),
    "mixed": (lambda m, a, b: (a / b) * np.float32(2) + a, [np.int32]),
}


@pytest.mark.parametrize("name,dtype", [(n, d) for n, (_, ds) in CHAINS.items() for d in ds])
def test_a_chain_is_one_cupy_kernel(crossing: Callable[[int], None], name: str,
                                    dtype: Any) -> None:
    func = CHAINS[name][0]
    a0 = (np.arange(4096) % 17 - 8).astype(dtype)
    b0 = (np.arange(4096) % 5 + 1).astype(dtype)
    with np.errstate(all="ignore"):
        want = func(np, a0, b0)
    with autodev.policy("gpu"), np.errstate(all="ignore"):
        unfused = np.asarray(func(autodev, autodev.array(a0), autodev.array(b0)))
    crossing(0)
    a, b = autodev.array(a0), autodev.array(b0)
    with np.errstate(all="ignore"):
        pending = func(autodev, a, b)
    calls = len(F.NODES)
    del pending
    F.flush()
    assert calls >= 3
    crossing(calls)
    autodev.stats(reset=True)
    a, b = autodev.array(a0), autodev.array(b0)
    with np.errstate(all="ignore"):
        got = func(autodev, a, b)
    assert str(got.location).startswith("cuda")
    stats = autodev.stats()
    assert stats["fused_kernels"] == 1 and stats["unfused"] == {}
    result = np.asarray(got)
    assert result.dtype == want.dtype == unfused.dtype
    if result.dtype.kind in "fc":
        np.testing.assert_allclose(result, unfused, rtol=4 * np.finfo(result.dtype).eps)
        np.testing.assert_allclose(result, want, rtol=1e-5 if result.itemsize <= 4 else 1e-12)
    else:
        np.testing.assert_array_equal(result, unfused)
        np.testing.assert_array_equal(result, want)
