"""The backend registry: a device kind registered by a test works end to end.

The fake kind ``fake`` is a GPU-like backend over NumPy memory: its arrays are a type of
their own (:class:`FakeArray`), so that nothing mistakes them for host arrays, and its
module counts the functions it runs, so that a test sees the call really ran there.
"""

from __future__ import annotations

import contextlib
import functools
import types
from typing import Any, Callable, Iterator

import numpy
import pytest

import autodev
from autodev import _backends, _device
from autodev._backends import (
    CUDA_PRIORITY, SIM_PRIORITY, active_gpu, register_backend, resolve_device,
    unregister_backend,
)
from autodev._backends._numpy import NumpyBackend
from autodev.testing import simulated_gpu, to_numpy

from conftest import HAS_CUDA


class FakeArray(numpy.ndarray):
    """An array on the fake device: NumPy memory under a type of its own, as a GPU's is."""


def _on_fake(value: Any) -> Any:
    if type(value) is numpy.ndarray:
        return value.view(FakeArray)
    if type(value) is tuple:
        return tuple(_on_fake(v) for v in value)
    return value


class _FakeUfunc:
    """A NumPy ufunc whose calls and methods are counted and return fake arrays."""

    def __init__(self, ufunc: numpy.ufunc, calls: list[str]) -> None:
        self._ufunc, self._calls = ufunc, calls

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._calls.append(self._ufunc.__name__)
        return _on_fake(self._ufunc(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._ufunc, name)
        return _counted(value, f"{self._ufunc.__name__}.{name}", self._calls) \
            if callable(value) else value


def _counted(func: Callable[..., Any], name: str, calls: list[str]) -> Callable[..., Any]:
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        calls.append(name)
        return _on_fake(func(*args, **kwargs))

    return call


class _FakeModule:
    """NumPy (or a submodule) whose functions are counted and return fake arrays."""

    def __init__(self, module: types.ModuleType, calls: list[str]) -> None:
        self._module, self._calls = module, calls

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if isinstance(value, types.ModuleType):
            return _FakeModule(value, self._calls)
        if isinstance(value, numpy.ufunc):
            return _FakeUfunc(value, self._calls)
        if callable(value) and not isinstance(value, type):
            return _counted(value, name, self._calls)
        return value


class FakeBackend(NumpyBackend):
    """A GPU-like backend of kind ``fake``: NumPy underneath, its own array type on top."""

    is_gpu = True

    def __init__(self) -> None:
        super().__init__()
        self.device = autodev.Device("fake", 0)
        self.calls: list[str] = []
        self.h2d = 0
        self.d2h = 0
        self._xp = _FakeModule(numpy, self.calls)

    @property
    def xp(self) -> Any:
        return self._xp

    def scipy(self, name: str) -> Any | None:
        return None  # no SciPy on this device: those calls run on the CPU

    def from_host(self, array: numpy.ndarray) -> FakeArray:
        self.h2d += 1
        return numpy.array(array, copy=True, order="K").view(FakeArray)

    def write_host(self, native: Any, host: numpy.ndarray) -> None:
        self.h2d += 1
        native[...] = host

    def to_host(self, native: Any) -> numpy.ndarray:
        self.d2h += 1
        return numpy.array(native, copy=True, order="K")  # subok=False: a plain ndarray

    def is_native(self, obj: object) -> bool:
        return type(obj) is FakeArray


FAKE = "fake"
#: Above CUDA, below the simulated GPU: the active GPU whenever the sim is off.
FAKE_PRIORITY = 50


@contextlib.contextmanager
def registered(kind: str, probe: Callable[[], Any], priority: int = 0) -> Iterator[None]:
    """``kind`` registered for the block, with the simulated GPU off; everything restored."""
    previous = _backends.sim_backend()
    _backends.use_sim(None)
    register_backend(kind, probe, priority=priority)
    try:
        yield
    finally:
        unregister_backend(kind)
        _backends.use_sim(previous)


@pytest.fixture
def fake() -> Iterator[FakeBackend]:
    """The fake kind registered above CUDA (so it is the active GPU), then removed."""
    backend: list[FakeBackend] = []

    def probe() -> tuple[FakeBackend, str]:
        backend.append(FakeBackend())
        return backend[-1], ""

    with registered(FAKE, probe, FAKE_PRIORITY):
        assert not backend  # probes run lazily, never at registration
        yield _backends.backend_for(autodev.Device(FAKE, 0))  # type: ignore[misc]
        assert len(backend) == 1  # and once
    assert FAKE not in _device.kinds()


def _active() -> str:
    gpu = active_gpu()
    return "none" if gpu is None else str(gpu.device)


def _host(*shape: int) -> numpy.ndarray:
    return numpy.arange(float(numpy.prod(shape))).reshape(shape) / 7 - 1


def _check(result: Any, expected: Any, where: str = "fake:0") -> None:
    assert type(result) is autodev.ndarray
    assert str(result.location) == where
    value = to_numpy(result)
    assert value.dtype == expected.dtype and value.shape == expected.shape
    numpy.testing.assert_allclose(value, expected, rtol=1e-12)


# ------------------------------------------------------------------ a kind end to end

def test_devices_lists_the_registered_kind(fake: FakeBackend) -> None:
    table = {str(d["device"]): d for d in autodev.devices()}
    assert table["fake:0"]["usable"] and table["fake:0"]["reason"] == ""
    assert list(table)[:2] == ["auto", "cpu"]
    assert active_gpu() is fake
    assert resolve_device("gpu") is fake.device  # "gpu" is the active GPU


@pytest.mark.parametrize("spec", ["fake", "fake:0", "FAKE:0"])
def test_device_and_parse_accept_the_kind(fake: FakeBackend, spec: str) -> None:
    device = _device.parse_device(spec)
    assert device is autodev.Device("fake", 0) and device.is_gpu
    assert device == "fake" and device == "fake:0" and repr(device) == "Device('fake:0')"


def test_creation_and_moves_pin_to_the_kind(fake: FakeBackend) -> None:
    host = _host(3, 4)
    moved = autodev.asarray(host).to_device("fake:0")
    _check(moved, host)
    assert moved.device is fake.device  # pinned there
    assert type(moved._native) is FakeArray
    placed = autodev.asarray(host, device="fake")
    _check(placed, host)
    assert placed.device is fake.device
    ones = autodev.ones(3, device="fake:0")
    _check(ones, numpy.ones(3))
    assert "ones" in fake.calls  # made on the device, not copied there
    back = ones.to_device("cpu")
    _check(back, numpy.ones(3), where="cpu")
    assert fake.d2h >= 1


def test_a_ufunc_a_reduction_and_a_matmul_run_on_the_kind(fake: FakeBackend) -> None:
    a, b = _host(4, 3), _host(3, 5)
    x, y = autodev.asarray(a, device="fake"), autodev.asarray(b, device="fake")
    fake.calls.clear()
    _check(autodev.sin(x), numpy.sin(a))
    _check(x * 2 + 1, a * 2 + 1)
    _check(autodev.sum(x, axis=0), numpy.sum(a, axis=0))
    total = x.sum()
    assert float(total) == pytest.approx(float(a.sum()), rel=1e-12)
    _check(x @ y, a @ b)
    _check(autodev.matmul(x, y), numpy.matmul(a, b))
    for name in ("sin", "multiply", "add", "sum", "matmul"):
        assert any(call.split(".")[0] == name for call in fake.calls), (name, fake.calls)
    assert (x @ y).device is fake.device  # results of pinned inputs stay pinned


def test_auto_dispatch_uses_the_kind_as_the_active_gpu(fake: FakeBackend) -> None:
    a = _host(200, 200)
    with autodev.policy("gpu"):
        result = autodev.asarray(a) @ autodev.asarray(a)
    _check(result, a @ a)
    assert result.device == "auto"  # placed by autodev, living on the fake GPU
    assert autodev.stats()["calls"].get("fake:0", 0) >= 1


def test_the_simulated_gpu_outranks_the_kind(fake: FakeBackend) -> None:
    with simulated_gpu() as sim:
        assert active_gpu() is sim
        assert resolve_device("gpu") == "sim:0"
        assert [str(d["device"]) for d in autodev.devices()][2:4] == ["sim:0", "fake:0"]
    assert active_gpu() is fake


def test_calls_on_a_kind_that_is_not_the_active_gpu_raise(fake: FakeBackend) -> None:
    x = autodev.asarray(_host(3), device="fake")
    with simulated_gpu():
        moved = x.to_device("cpu")  # moving off it works
        numpy.testing.assert_array_equal(to_numpy(moved), _host(3))
        with pytest.raises(RuntimeError, match="pinned to fake:0.*the GPU in use is sim:0"):
            autodev.sin(x)


def test_unregistering_removes_the_kind() -> None:
    with registered(FAKE, lambda: (FakeBackend(), ""), FAKE_PRIORITY):
        assert autodev.Device("fake", 0).is_gpu
    with pytest.raises(ValueError, match="registered"):
        autodev.Device("fake", 0)
    with pytest.raises(ValueError, match="'fake:0'"):
        _device.parse_device("fake:0")
    assert all(d["device"].kind != FAKE for d in autodev.devices())
    assert _active() in ("none", "cuda:0", "sim:0")


# ------------------------------------------------------------------ priorities

def test_a_kind_below_cuda_is_active_only_without_cuda() -> None:
    with registered(FAKE, lambda: (FakeBackend(), ""), CUDA_PRIORITY - 1):
        assert _active() == ("cuda:0" if HAS_CUDA else "fake:0")


def test_ties_go_to_the_kind_registered_first() -> None:
    with registered(FAKE, lambda: (FakeBackend(), ""), SIM_PRIORITY + 1), \
            registered("fake2", lambda: (None, "never asked"), SIM_PRIORITY + 1):
        assert _backends.REGISTRY.ranked()[:2] == [FAKE, "fake2"]
        assert _active() == "fake:0"
        assert not _backends.REGISTRY.is_probed("fake2")  # the winner made probing it moot


def test_an_unusable_kind_is_listed_with_its_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    """Registering "rocm" used to make devices() raise (the kinds were hard-coded)."""
    from autodev._config import ENV

    monkeypatch.setattr(ENV, "fallback", "raise")  # "gpu" with none usable: an error
    with registered("rocm", lambda: (None, "ROCm is not installed"), CUDA_PRIORITY + 1):
        table = {str(d["device"]): d for d in autodev.devices()}
        assert table["rocm:0"] == {"device": autodev.Device("rocm", 0), "usable": False,
                                   "reason": "ROCm is not installed"}
        with pytest.raises(RuntimeError, match="rocm:0 is not usable: ROCm is not installed"):
            autodev.ones(3).to_device("rocm")
        if not HAS_CUDA:
            with pytest.raises(RuntimeError, match="rocm: ROCm is not installed"):
                resolve_device("gpu")


# ------------------------------------------------------------------ bad input

@pytest.mark.parametrize("kind", ["cpu", "auto", "gpu"])
def test_reserved_kinds_are_refused(kind: str) -> None:
    with pytest.raises(ValueError, match="reserved"):
        register_backend(kind, lambda: (None, ""))


@pytest.mark.parametrize("kind", ["", "Fake", "fake:0", "1fake", "fa ke", 3])
def test_malformed_kinds_are_refused(kind: Any) -> None:
    with pytest.raises(ValueError, match="lowercase name"):
        register_backend(kind, lambda: (None, ""))


def test_bad_probe_and_priority_are_refused() -> None:
    with pytest.raises(TypeError, match="probe must be callable"):
        register_backend(FAKE, None)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="priority must be an int"):
        register_backend(FAKE, lambda: (None, ""), priority="high")  # type: ignore[arg-type]
    assert FAKE not in _device.kinds()


@pytest.mark.parametrize("kind, match", [("cuda", "built in"), ("sim", "built in"),
                                         ("nope", "not registered")])
def test_unregistering_a_builtin_or_unknown_kind_is_refused(kind: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        unregister_backend(kind)


@pytest.mark.parametrize("make", [NumpyBackend, FakeBackend], ids=["cpu", "other-kind"])
def test_a_probe_returning_a_backend_of_another_kind_is_refused(make: Any) -> None:
    with registered(FAKE, lambda: (None, "off"), CUDA_PRIORITY - 1), \
            registered("other", lambda: (make(), ""), SIM_PRIORITY + 1):
        with pytest.raises(ValueError, match="must return a GPU backend whose device is "
                                             "of kind 'other'"):
            _backends.devices()


def test_a_kind_above_the_simulator_runs_the_calls_while_the_simulator_is_on() -> None:
    # the dispatcher follows the declared priority, not the simulator's slot
    backend: list[FakeBackend] = []

    def probe() -> tuple[FakeBackend, str]:
        backend.append(FakeBackend())
        return backend[-1], ""

    with registered(FAKE, probe, 200), simulated_gpu():
        assert _active() == "fake:0"
        a = _host(40, 40)
        with autodev.policy("gpu"):
            x = autodev.asarray(a)
            _check(x + x, a + a)
            _check(autodev.sin(x), numpy.sin(a))
        pinned = autodev.asarray(a, device="gpu")
        assert pinned.device == "fake:0"
        _check(autodev.sin(pinned), numpy.sin(a))


def test_a_policy_block_keeps_the_cost_model() -> None:
    # entering a policy settles the active GPU: once settled, nothing is re-read
    from autodev._cost.cache import cost_model

    with simulated_gpu():
        x = autodev.ones(10)
        x + 1
        model = cost_model()
        for policy in ("auto", "cpu", "gpu", "auto"):
            with autodev.policy(policy):
                x + 1
            assert cost_model() is model
