"""What ``import autodev as np`` answers where a program asks about NumPy or a device:
``np.__version__``, ``np.__array_api_version__``, ``"gpu"`` on a machine without one,
and ``"cuda:0"`` on the simulated GPU."""

from __future__ import annotations

import contextlib
import importlib.metadata
import warnings
from typing import Iterator

import numpy
import pytest

import autodev
from autodev import _backends, _trace
from autodev._config import ENV
from autodev.testing import simulated_gpu, to_numpy


def test_version_is_numpys() -> None:
    """Code gating on NumPy's version took the wrong branch: np.__version__ was 0.1.0."""
    np = autodev
    assert np.__version__ == numpy.__version__
    assert np.lib.NumpyVersion(np.__version__) >= "2.0.0"
    assert autodev.__autodev_version__ == importlib.metadata.version("autodev")


def test_array_api_versions_agree() -> None:
    face = autodev.asarray([1.0]).__array_namespace__()
    assert autodev.__array_api_version__ == autodev.array_api.__array_api_version__
    assert face.__array_api_version__ == autodev.__array_api_version__
    assert autodev.__array_api_version__ in autodev.array_api.API_VERSIONS


# ---------------------------------------------------------------------- no GPU here

@contextlib.contextmanager
def no_gpu() -> Iterator[None]:
    """A machine where no GPU is usable (CUDA's probe says so; the simulated GPU off),
    with the once-per-process warning re-armed."""
    sim = _backends.sim_backend()
    warned, _trace.STATS.warned = _trace.STATS.warned, False
    _backends.register_backend("cuda", lambda: (None, "no CUDA device here"),
                               priority=_backends.CUDA_PRIORITY)
    _backends.use_sim(None)
    try:
        yield
    finally:
        _backends.register_backend("cuda", _backends._probe_cuda,
                                   priority=_backends.CUDA_PRIORITY)
        _backends.use_sim(sim)
        _trace.STATS.warned = warned


def test_gpu_without_a_gpu_runs_on_the_cpu_warned_once() -> None:
    """x.to_device("gpu") raised on a machine without a GPU, while policy("gpu") ran."""
    host = numpy.arange(6.0)
    with no_gpu():
        with pytest.warns(autodev.FallbackWarning, match="no GPU is usable here "
                          r"\(no CUDA device here\).*autodev doctor"):
            x = autodev.asarray(host).to_device("gpu")
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # once: no second warning
            y = autodev.zeros(6, device="gpu")
            z = autodev.asarray(host, device="gpu")
    for a in (x, y, z):
        assert a.device == "auto" and a.location == "cpu"
    numpy.testing.assert_array_equal(to_numpy(x + y + z), 2 * host)
    assert autodev.stats()["fallback_reasons"] == {"device 'gpu': no GPU usable": 3}


def test_gpu_without_a_gpu_raises_if_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ENV, "fallback", "raise")
    with no_gpu(), pytest.raises(RuntimeError, match="no GPU is usable: no CUDA device here"):
        autodev.ones(3).to_device("gpu")


@pytest.mark.parametrize("name", ["cuda", "cuda:0", "cuda:1"])
def test_a_named_cuda_device_that_is_not_there_raises(name: str) -> None:
    """"gpu" is a wish; "cuda:N" is that device: without it, an error saying why."""
    with no_gpu(), pytest.raises(RuntimeError, match=f"{name.split(':')[0]}.* is not usable: "
                                 "no CUDA device here.*autodev doctor"):
        autodev.ones(3).to_device(name)


# ---------------------------------------------------------------------- the simulated GPU

def test_the_simulated_gpu_answers_to_cuda_0() -> None:
    """The guide's `np.zeros(10, device="cuda:0")` failed on the simulated GPU (sim:0)."""
    np = autodev
    with simulated_gpu() as sim:
        z = np.zeros(10, device="cuda:0")
        assert z.device is sim.device and z.location is sim.device
        assert np.ones(3).to_device("cuda").device is sim.device
        assert np.asarray([1.0], device=autodev.Device("cuda", 0)).device is sim.device
        y = (z + 1).to_device("cuda:0")
        assert y.device is sim.device and float(y.sum()) == 10.0
        with pytest.raises(RuntimeError, match="cuda:1 is not usable"):
            np.ones(3).to_device("cuda:1")  # it stands in for one device


def test_every_public_name_has_a_repr() -> None:
    """``repr`` of each name ``autodev`` shares with NumPy works, as NumPy's does (a
    callable object without ``__name__``, ``numpy.test``, included)."""
    for name in dir(numpy):
        if not name.startswith("_") and hasattr(autodev, name):
            assert isinstance(repr(getattr(autodev, name)), str), name
    assert "PytestTester" in repr(autodev.test)
