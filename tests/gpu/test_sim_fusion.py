"""The simulated GPU's ``fuse`` is as strict as ``cupy.fuse`` (autodev._backends._sim_fusion):
one launch per call of a fused function, each ufunc in the loop CuPy's fusion chooses,
and CuPy's refusals; its loop lists are checked against the installed CuPy's."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

from autodev._backends._sim_array import SimArray, SimOutOfMemoryError
from autodev.testing import simulated_gpu


@pytest.fixture
def sim() -> Iterator[Any]:
    with simulated_gpu() as backend:
        yield backend


def values(x: Any) -> np.ndarray:
    assert type(x) is SimArray
    return x.get()


def test_a_fused_function_is_one_launch_traced_once(sim: Any) -> None:
    xp = sim.xp
    a = sim.from_host(np.linspace(0, 1, 50, dtype=np.float32))
    b = sim.from_host(np.arange(50, dtype=np.int16))

    @xp.fuse(kernel_name="five")
    def five(x: Any, y: Any, s: Any) -> Any:
        return xp.sin(x) * s + y - x * x, x < s

    calls, kernels = sim.calls, sim.kernels
    for s in (0.5, 0.25):
        r, mask = five(a, b, s)
        a0, b0 = a.get(), b.get()
        want = np.sin(a0) * np.float32(s) + b0 - a0 * a0
        got = values(r)
        assert got.dtype == want.dtype == np.float32
        assert got.tobytes() == want.tobytes()
        assert values(mask).tolist() == (a0 < s).tolist()
    assert (sim.calls, sim.kernels) == (calls + 2, kernels + 2)
    assert sim.last_kernel == "five" and len(five._memo) == 1


def test_cupy_fuse_without_a_device_array_runs_the_function(sim: Any) -> None:
    fused = sim.xp.fuse(lambda x, y: x * y + 1)
    calls = sim.calls
    assert fused(3, 4) == 13 and sim.calls == calls


def test_loops_are_cupys_choice(sim: Any) -> None:
    """CuPy's fusion takes every scalar for a weak one and picks the first loop each
    operand reaches: uint8 + 300 stays uint8 (300 wraps, no OverflowError as NumPy), and
    CuPy compares int8 arrays in its 64-bit loop."""
    xp = sim.xp
    a = sim.from_host(np.array([1, 2, 250], dtype=np.uint8))
    got = values(xp.fuse(lambda x: x + 300)(a))
    assert got.dtype == np.uint8 and got.tolist() == [45, 46, 38]
    assert values(xp.fuse(lambda x: x + np.float32(0.5))(a)).dtype == np.float32
    seen: list[Any] = []

    def spy(x: Any, y: Any) -> Any:
        r = xp.less(x, y)
        seen.append(r.dtype)
        return r

    c = sim.from_host(np.array([-3, 4], dtype=np.int8))
    assert values(xp.fuse(spy)(c, c)).tolist() == [False, False] and seen == [np.bool_]


def test_what_cupy_fusion_refuses(sim: Any) -> None:
    xp = sim.xp
    a = sim.from_host(np.arange(6.0))
    refused: list[tuple[Any, type[BaseException], str]] = [
        (lambda x: xp.add(x, 1, dtype="f4"), TypeError, "Wrong arguments"),
        (lambda x: x + a, TypeError, "Unsupported type"),
        (lambda x: x + [1.0], TypeError, "Unsupported type"),
        (lambda x: xp.sum(x), NotImplementedError, "ufuncs and astype only"),
        (lambda x: x.shape, NotImplementedError, "shape"),
        (lambda x: x if x else x, TypeError, "Python scalar"),
        (lambda x: float(x), TypeError, "Python scalar"),
        (lambda x: x.astype("f4", casting="unsafe"), TypeError, "casting"),
        (lambda x: [x], TypeError, "can't return"),
    ]
    for func, error, text in refused:
        calls = sim.calls
        with pytest.raises(error, match=text):
            xp.fuse(func)(a)
        assert sim.calls == calls  # (refused while traced: nothing launched)
    with pytest.raises(TypeError, match="Invalid argument type"):
        xp.fuse(lambda x, y: x + y)(a, [1.0])
    with pytest.raises(TypeError, match="Unsupported type"):
        xp.fuse(lambda x, y: x + y)(a, np.ones(6))


def test_a_launch_takes_an_injected_fault(sim: Any) -> None:
    xp = sim.xp
    a = sim.from_host(np.arange(6.0))
    fused = xp.fuse(lambda x: x * 2.0 + 1.0)
    sim.inject_fault("oom")
    kernels = sim.kernels
    with pytest.raises(SimOutOfMemoryError):
        fused(a)
    assert sim.kernels == kernels
    assert values(fused(a)).tolist() == [1.0, 3.0, 5.0, 7.0, 9.0, 11.0]


def test_a_kernel_warns_nothing(sim: Any) -> None:
    a = sim.from_host(np.array([0.0, -1.0, 1.0]))
    with np.errstate(all="raise"):
        got = values(sim.xp.fuse(lambda x: sim.xp.log(x) / x)(a))
    with np.errstate(all="ignore"):
        want = np.log(a.get()) / a.get()
    assert got.tobytes() == want.tobytes()


def test_the_simulated_loops_are_cupys() -> None:
    """Each ufunc's loops on the simulated GPU are CuPy's (those NumPy has too), in CuPy's
    order: the loop CuPy's fusion chooses is the one the simulator chooses."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")

    def normal(types: list[str]) -> list[str]:
        # (bfloat16 loops, 'E', which CuPy lists where ml_dtypes is installed, are compared
        # by test_bfloat16_loops_follow_their_float16_twins)
        return list(dict.fromkeys(t.replace("q", "l").replace("Q", "L") for t in types
                                  if "E" not in t))

    checked = 0
    with simulated_gpu() as sim:
        for name in sorted({u.__name__ for u in vars(np).values() if isinstance(u, np.ufunc)}):
            theirs = getattr(cupy, name, None)
            ours = getattr(sim.xp, name, None)
            if not isinstance(theirs, cupy.ufunc) or ours is None:
                continue
            mine, cupys = normal(ours.types), normal(theirs.types)
            assert [t for t in cupys if t in mine] == mine, name
            checked += 1
    assert checked > 80
    assert callable(cupy.fuse) and isinstance(cupy.add, cupy.ufunc)


@pytest.mark.parametrize("name", ["exp", "add", "sqrt", "less"])
def test_bfloat16_loops_follow_their_float16_twins(sim: Any, name: str) -> None:
    """CuPy lists a bfloat16 loop ('E', ml_dtypes' character, which NumPy does not know)
    right after its float16 one where ml_dtypes is installed; the simulated GPU lists them
    so (tests/dispatch/test_fusion_gpu.py runs chains through such lists)."""
    types = getattr(sim.xp, name).types
    twins = [t for t in types if "E" in t]
    assert twins and all(types[types.index(t) - 1] == t.replace("E", "e") for t in twins)
