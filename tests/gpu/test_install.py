"""The GPU install: CUDA libraries checked as CuPy loads them, and the one command
``autodev doctor`` names for a machine (nothing without an NVIDIA driver).

The real install (CuPy's [ctk] wheels, only the device count faked) is
``.ci/cuda-install-check``; these tests fake the driver and the installed packages.
"""

from __future__ import annotations

import importlib.machinery
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from autodev import _doctor
from autodev._backends import _cupy
from autodev._cli import main

ROOT = Path(__file__).resolve().parents[2]


class _Loader(types.ModuleType):
    """A ``cupy.cuda`` whose CUDA libraries load only through its ``__getattr__`` (as
    CuPy 14's do: cuda-pathfinder first, then the binding)."""

    def __init__(self, missing: str = "") -> None:
        super().__init__("cupy.cuda")
        self.loaded: list[str] = []
        self.missing = missing

    def __getattr__(self, name: str) -> object:
        if name == self.missing:
            raise ImportError(f'Failure finding "lib{name}.so.12"')
        self.loaded.append(name)
        return object()


def _cupy_with(loader: _Loader) -> Any:
    cupy = types.ModuleType("cupy")
    cupy.__spec__ = importlib.machinery.ModuleSpec("cupy", None)
    cupy.__version__ = "14.2.0"  # type: ignore[attr-defined]
    cupy.cuda = loader  # type: ignore[attr-defined]
    return cupy


def test_the_library_check_goes_through_cupys_loader() -> None:
    """Importing ``cupy_backends.cuda.libs.cublas`` directly skipped CuPy's loader, so
    a venv with the [ctk] wheels was reported as missing them."""
    loader = _Loader()
    assert _cupy.missing_toolkit(_cupy_with(loader)) == ""
    assert loader.loaded == list(_cupy.TOOLKIT_LIBRARIES)
    assert set(_cupy.TOOLKIT_LIBRARIES) == {"cublas", "cusolver", "cusparse", "curand", "cufft"}


def test_the_library_check_names_the_library_it_cannot_load() -> None:
    missing = _cupy.missing_toolkit(_cupy_with(_Loader(missing="cusparse")))
    assert missing.startswith("cusparse: ") and "libcusparse.so.12" in missing


def test_the_library_check_agrees_with_a_users_import() -> None:
    """With the installed CuPy: the check says what ``from cupy.cuda import ...`` does."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        from cupy.cuda import cublas, cufft, curand, cusolver, cusparse  # noqa: F401
        loads = True
    except ImportError:
        loads = False
    assert (_cupy.missing_toolkit(cupy) == "") == loads


# ---------------------------------------------------------------------- the one command

def _machine(monkeypatch: pytest.MonkeyPatch, found: list[str], version: str = "14.2.0",
             missing: str = "") -> None:
    """Installed CuPy packages ``found`` (each at ``version``), whose libraries load but
    ``missing``."""
    monkeypatch.setattr(_doctor, "_cupy_distributions", lambda: sorted(found))
    monkeypatch.setattr(_doctor.metadata, "version", lambda name: version)
    monkeypatch.setattr(_cupy, "missing_toolkit", lambda cupy: missing)


@pytest.mark.parametrize("driver, found, plan", [
    (None, [], []),  # a laptop: nothing, whatever is installed
    (None, ["cupy-cuda12x"], []),
    ((12, 4), [], [["install", "cupy-cuda12x[ctk]>=14"]]),
    ((13, 0), [], [["install", "cupy-cuda13x[ctk]>=14"]]),
    ((14, 1), [], [["install", "cupy-cuda13x[ctk]>=14"]]),  # drivers run older CUDA
    ((11, 8), [], []),  # too old for any CuPy wheel: the install check says so
    ((13, 0), ["cupy-cuda12x"], []),  # a CUDA 12 CuPy on a CUDA 13 driver works: kept
    ((12, 4), ["cupy-cuda13x"], [["uninstall", "-y", "cupy-cuda13x"],
                                 ["install", "cupy-cuda12x[ctk]>=14"]]),
    ((12, 4), ["cupy-cuda12x", "cupy-cuda13x"], [["uninstall", "-y", "cupy-cuda12x",
                                                  "cupy-cuda13x"],
                                                 ["install", "cupy-cuda12x[ctk]>=14"]]),
])
def test_install_plan(monkeypatch: pytest.MonkeyPatch, driver: Any, found: list[str],
                      plan: list[list[str]]) -> None:
    _machine(monkeypatch, found)
    assert _doctor.install_plan(driver) == plan


def test_install_plan_adds_the_libraries_to_the_cupy_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy without its CUDA libraries: its own CUDA major's [ctk], not another."""
    _machine(monkeypatch, ["cupy-cuda12x"], missing="cublas: not found")
    assert _doctor.install_plan((13, 0)) == [["install", "cupy-cuda12x[ctk]>=14"]]
    _machine(monkeypatch, ["cupy-cuda12x"], version="13.6.0")
    assert _doctor.install_plan((12, 4)) == [["install", "cupy-cuda12x[ctk]>=14"]]


def test_doctor_does_not_ask_to_install_what_is_installed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy and its libraries in place: no check names a pip command (it named
    `pip install 'cupy-cuda12x[ctk]'` whenever its own import of the libraries failed)."""
    _machine(monkeypatch, ["cupy-cuda12x"])
    fake = _cupy_with(_Loader())
    monkeypatch.setitem(sys.modules, "cupy", fake)
    plan = _doctor.install_plan((12, 4))
    checks, _ = _doctor._cupy_checks((12, 4), plan)
    checks.append(_doctor._install_check((12, 4), plan))
    assert plan == [] and all("pip" not in check["fix"] for check in checks), checks
    assert checks[-1]["status"] == "ok"


def test_doctor_names_one_command_for_this_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    _machine(monkeypatch, [])
    command = _doctor.install_command((12, 4))
    assert command == f"{sys.executable} -m pip install 'cupy-cuda12x[ctk]>=14'" or \
        "'" in sys.executable  # a path that needs quoting is quoted
    check = _doctor._install_check((12, 4), _doctor.install_plan((12, 4)))
    assert check["status"] == "warn" and check["fix"] == command
    cupy_check, _ = _doctor._cupy_checks((12, 4), _doctor.install_plan((12, 4)))
    assert cupy_check[0]["fix"] == command  # every fix is the same one command


def test_a_machine_without_a_gpu_needs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    _machine(monkeypatch, [])
    check = _doctor._install_check(None, [])
    assert check["status"] == "ok" and not check["fix"]
    cupy_check, _ = _doctor._cupy_checks(None, [])
    assert cupy_check[0]["status"] == "info" and not cupy_check[0]["fix"]
    old = _doctor._install_check((11, 8), [])
    assert old["status"] == "fail" and "update the NVIDIA driver" in old["fix"]


def test_the_extras_require_what_doctor_installs() -> None:
    """`autodev[cuda12-ctk]` (the CI step's install) and doctor's command agree."""
    text = (ROOT / "pyproject.toml").read_text()
    for major in (12, 13):
        line = next(l for l in text.splitlines() if l.startswith(f"cuda{major}-ctk ="))
        assert f'"{_doctor.cupy_requirement(major)}"' in line, line


def test_doctor_install_runs_the_plan_then_checks_in_a_fresh_process(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from autodev._cli import doctor as cli

    calls: list[list[str]] = []
    monkeypatch.setattr(cli, "driver_cuda_version", lambda: (12, 4))
    monkeypatch.setattr(cli, "install_plan", lambda driver: [["install", "cupy-cuda12x[ctk]>=14"]])
    monkeypatch.setattr(_doctor.subprocess, "call", lambda argv: calls.append(argv) or 0)
    monkeypatch.setattr(cli.subprocess, "call", lambda argv: calls.append(argv) or 0)
    assert main(["doctor", "--install"]) == 0
    assert calls == [[sys.executable, "-m", "pip", "install", "cupy-cuda12x[ctk]>=14"],
                     [sys.executable, "-m", "autodev", "doctor"]]
    assert "pip install 'cupy-cuda12x[ctk]>=14'" in capsys.readouterr().out


def test_doctor_install_without_a_gpu_installs_nothing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from autodev._cli import doctor as cli

    monkeypatch.setattr(cli, "driver_cuda_version", lambda: None)
    monkeypatch.setattr(_doctor, "driver_cuda_version", lambda: None)
    monkeypatch.setattr(_doctor.subprocess, "call", lambda argv: pytest.fail(f"ran {argv}"))
    main(["doctor", "--install"])
    assert "nothing to install" in capsys.readouterr().out


def test_the_ci_step_fakes_only_the_device_count() -> None:
    script = (ROOT / ".ci" / "cuda-install-check").read_text()
    assert "[cuda12-ctk]" in script
    fakes = [line for line in script.splitlines() if " = lambda" in line]
    assert fakes == ["cupy.cuda.runtime.getDeviceCount = lambda: 1  # the one fake: a driver "
                     "that sees one device"]
