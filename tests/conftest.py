"""Shared fixtures: the ``device`` fixture over cpu, sim and cuda, and state resets.

A run on a machine with a usable CUDA device fails if any ``gpu``-marked test
(or any ``cuda`` instance of the ``device`` fixture) was skipped: GPU tests must
run wherever a GPU is at hand.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import os

import pytest
from hypothesis import settings

# CI runs the same examples every time (a random failure there would block a whole
# submission); developers' runs keep exploring new ones.
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

import autodev
from autodev.testing import simulated_gpu

DEVICES = ("cpu", "sim", "cuda")


def cuda_reason() -> str:
    """Why no CUDA device is usable here (empty if one is)."""
    for entry in autodev.devices():
        if entry["device"].kind == "cuda":
            return "" if entry["usable"] else str(entry["reason"])
    return "no CUDA backend registered"


CUDA_REASON = cuda_reason()
HAS_CUDA = CUDA_REASON == ""


@contextlib.contextmanager
def on_device(name: str) -> Iterator[Any]:
    """Run the block with every dispatchable call going to device ``name``."""
    if name == "cpu":
        with autodev.policy("cpu"):
            yield autodev.Device("cpu")
    elif name == "sim":
        with simulated_gpu(), autodev.policy("gpu"):
            yield autodev.Device("sim", 0)
    else:
        with autodev.policy("gpu"):
            yield autodev.Device("cuda", 0)


@pytest.fixture(params=[
    "cpu",
    "sim",
    pytest.param("cuda", marks=pytest.mark.gpu),
])
def device(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Each test body runs with calls sent to cpu, the simulated GPU, or CUDA."""
    if request.param == "cuda" and not HAS_CUDA:
        pytest.skip(f"CUDA: {CUDA_REASON}")
    with on_device(request.param) as dev:
        yield dev


@pytest.fixture(autouse=True)
def _cache(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Profiles go to a temporary cache dir, never to the user's home."""
    from autodev._config import ENV
    from autodev._dispatch import reset_cost_model

    monkeypatch.setattr(ENV, "cache_dir", str(tmp_path / "cache"))
    monkeypatch.setattr(ENV, "profile", None)
    reset_cost_model()
    yield tmp_path / "cache"
    reset_cost_model()


@pytest.fixture(autouse=True)
def _reset_autodev_state() -> Iterator[None]:
    """Each test starts and ends with zeroed stats, the default policy, and the once-per-
    process fallback warning not yet given (a test that expects it does not depend on
    which tests ran before it in the same process)."""
    from autodev._backends import STATE
    from autodev._residency import reuse as _reuse
    from autodev._trace import STATS

    autodev.stats(reset=True)
    STATS.warned = False
    token = autodev.set_policy("auto")
    try:
        yield
    finally:
        autodev.reset_policy(token)
        autodev.stats(reset=True)
        _reuse.forget_all()
        if STATE.pinned:  # pins end with the test: let the next one take the fast path
            STATE.pinned = False
            STATE.refresh()


_skipped_gpu: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # A skip at set-up means no GPU reached the test; a skip the body raises is the test's
    # own decision (a case the device does not run), reported with its reason.
    if report.skipped and report.when == "setup" and "gpu" in report.keywords:
        _skipped_gpu.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if HAS_CUDA and _skipped_gpu:
        session.config.pluginmanager.get_plugin("terminalreporter").write_line(
            f"FAILED: a CUDA device is usable but {len(_skipped_gpu)} gpu test(s) were "
            f"skipped, e.g. {_skipped_gpu[0]}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
