"""The calibrate, info and doctor commands: in-process, and one real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import autodev
from autodev import _cli
from autodev._calibrate import calibrate as _calibrate
from autodev._cost import profile as _profile

_ROOT = Path(__file__).resolve().parents[2]
TINY = ["--quick", "--ops", "elementwise,matmul", "--dtypes", "f64", "--max-seconds", "0.3",
        "--no-progress"]



def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = _cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_explains_how_to_calibrate(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _cli.main(["calibrate", "--help"])
    text = capsys.readouterr().out
    for needle in ("--quick", "--output", "--ops", "--dtypes", "--max-seconds", "Ctrl-C",
                   "AUTODEV_CACHE_DIR", "autodev info"):
        assert needle in text


def test_calibrate_writes_and_reports(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    target = tmp_path / "out" / "machine.json"
    code, out, err = _run(capsys, "calibrate", *TINY, "--output", str(target), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["path"] == str(target) and report["mode"] == "quick"
    assert set(report["measured"]) == {"elementwise", "matmul"}
    assert _profile.read(target)["report"]["measured"] == report["measured"]


def test_calibrate_summary_on_this_machine(capsys: pytest.CaptureFixture[str], _cache: Path
                                           ) -> None:
    code, out, _ = _run(capsys, "calibrate", *TINY)
    assert code == 0
    assert str(_cache / "profile.json") in out
    if autodev.info()["gpu"] is None:
        assert "nothing to choose between" in out


def test_calibrate_bad_option_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "calibrate", "--ops", "warp_drive")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "ops must be among" in err and "warp_drive" in err


def test_calibrate_interrupted_leaves_the_profile(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    old = _profile.write(_profile.embedded_default())
    before = old.read_bytes()

    def interrupted(*args: Any, **kwargs: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(_calibrate, "calibrate", interrupted)
    code, _, err = _run(capsys, "calibrate", "--quick")
    assert code == 130 and "left as it was" in err
    assert old.read_bytes() == before


def test_info_json_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    _calibrate.calibrate(quick=True, ops=["matmul"], dtypes=["f64"], max_seconds=0.2)
    code, out, _ = _run(capsys, "info", "--json")
    assert code == 0
    printed = json.loads(out)
    expected = json.loads(json.dumps(autodev.info()))
    for data in (printed, expected):
        data["profile"].pop("age_seconds")
    assert printed == expected
    assert printed["profile"]["source"] == "calibrated"
    assert printed["profile"]["fingerprint"] == "match"
    assert "matmul" in printed["crossovers"]


def test_info_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "info")
    assert code == 0
    for needle in ("Devices:", "cpu", "Profile: embedded default", "autodev calibrate",
                   "Crossovers", "matmul"):
        assert needle in out


def test_info_of_a_missing_file_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "info", "--profile", "/nonexistent/profile.json")
    assert code == 1 and "must name an existing file" in err


def test_info_plot(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    target = tmp_path / "profile.png"
    code, out, _ = _run(capsys, "info", "--plot", str(target))
    assert code == 0 and target.stat().st_size > 10_000
    assert str(target) in out


def test_info_plot_without_matplotlib(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._backends import _base

    monkeypatch.setattr(_base, "import_optional", lambda name: None)
    code, _, err = _run(capsys, "info", "--plot", str(tmp_path / "x.png"))
    assert code == 1 and "pip install 'autodev[plot]'" in err


def test_numpy_info_still_works(capsys: pytest.CaptureFixture[str]) -> None:
    autodev.info(autodev.float32)
    assert "float32" in capsys.readouterr().out.lower()


def test_doctor(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "doctor", "--json")
    checks = json.loads(out)
    assert {c["status"] for c in checks} <= {"ok", "info", "warn", "fail"}
    assert code == (1 if any(c["status"] == "fail" for c in checks) else 0)
    assert any(c["check"] == "profile" for c in checks)
    for check in checks:
        if check["status"] in ("warn", "fail"):
            assert check["fix"], check


def test_doctor_names_the_missing_cuda_libraries() -> None:
    """CuPy 14 without a CUDA Toolkit or its [ctk] wheels: doctor names the fix (it
    used to crash on the RuntimeError of the first kernel)."""
    from autodev import _doctor

    fake = _fake_cupy(missing="cusolver")
    check = _doctor._toolkit_check(fake, (12, 4), "pip install 'cupy-cuda12x[ctk]>=14'")
    assert check["status"] == "fail" and "[ctk]" in check["fix"]
    assert "cusolver" in check["detail"]
    assert _doctor._toolkit_check(fake, None, "")["status"] == "info"
    assert _doctor._toolkit_check(_fake_cupy(), (12, 4), "")["status"] == "ok"


def _fake_cupy(missing: str = "", count: int = 1) -> Any:
    """A stand-in for CuPy 14 whose ``cupy.cuda`` loads every CUDA library but
    ``missing`` (raising ImportError, as CuPy's loader does)."""
    import types

    def load(name: str) -> object:
        if name == missing:
            raise ImportError(f"Failure finding lib{name}.so")
        return object()

    runtime = types.SimpleNamespace(CUDARuntimeError=RuntimeError, getDeviceCount=lambda: count)
    cuda = types.ModuleType("cuda")
    cuda.runtime = runtime  # type: ignore[attr-defined]
    cuda.__getattr__ = load  # type: ignore[attr-defined]
    return types.SimpleNamespace(__version__="14.2.0", cuda=cuda)


def test_probe_refuses_a_device_without_cuda_libraries(monkeypatch: pytest.MonkeyPatch) -> None:
    """A visible device with no loadable CUDA libraries is not usable, and says why."""
    from autodev._backends import _cupy

    fake = _fake_cupy(missing="cublas")
    real_import = _cupy.importlib.import_module
    monkeypatch.setattr(_cupy.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(_cupy.importlib, "import_module",
                        lambda name: fake if name == "cupy" else real_import(name))
    cupy, reason = _cupy.probe_cuda()
    assert cupy is None and "autodev doctor" in reason and "libcublas" in reason


def test_probe_refuses_cupy_13(monkeypatch: pytest.MonkeyPatch) -> None:
    """CuPy 13 installed by hand (not through the extras) is refused with the fix."""
    import types

    from autodev._backends import _cupy

    fake = types.SimpleNamespace(__version__="13.6.0")
    monkeypatch.setattr(_cupy.importlib.util, "find_spec", lambda name: object())
    monkeypatch.setattr(_cupy.importlib, "import_module", lambda name: fake)
    cupy, reason = _cupy.probe_cuda()
    assert cupy is None and "13.6.0" in reason and "14" in reason and "autodev doctor" in reason


def test_cuda_extras_require_cupy_14() -> None:
    """CuPy 13's sort takes no kind=, which autodev passes: the extras require 14."""
    text = (_ROOT / "pyproject.toml").read_text()
    for extra in ("cuda12", "cuda13", "cuda12-ctk", "cuda13-ctk"):
        line = next(l for l in text.splitlines() if l.startswith(f"{extra} ="))
        assert ">=14" in line, line


def test_cupy_to_host_keeps_fortran_order() -> None:
    """cupy.asnumpy defaults to C order: the CUDA backend asks for order='A'."""
    import types

    from autodev._backends._cupy import CupyBackend

    seen: dict[str, Any] = {}

    def asnumpy(a: Any, stream: Any = None, order: str = "C") -> Any:
        seen["order"] = order
        return a

    backend = object.__new__(CupyBackend)
    backend._cp = types.SimpleNamespace(asnumpy=asnumpy)
    backend.to_host("data")
    assert seen["order"] == "A"


def test_real_subprocess(tmp_path: Path) -> None:
    env = dict(os.environ, AUTODEV_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("AUTODEV_PROFILE", None)
    done = subprocess.run([sys.executable, "-m", "autodev", "calibrate", *TINY],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    written = tmp_path / "cache" / "profile.json"
    assert _profile.read(written)["source"] == "calibrated"
    done = subprocess.run([sys.executable, "-m", "autodev", "info", "--json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["profile"]["used"] == str(written)


# ---------------------------------------------------------------------- ordinary misuse

def test_a_closed_pipe_is_one_line_and_exit_1(tmp_path: Path) -> None:
    # `autodev demo --json | head`: the reader closes the pipe before the end
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    env["AUTODEV_CACHE_DIR"] = str(tmp_path / "cache")
    read, write = os.pipe()
    os.close(read)  # nobody will read: the first write breaks the pipe
    done = subprocess.run([sys.executable, "-m", "autodev", "info", "--json"], env=env,
                          stdout=write, stderr=subprocess.PIPE, text=True, timeout=120)
    os.close(write)
    assert done.returncode == 1
    assert done.stderr.strip() == "autodev info: output closed early (broken pipe)"


def test_a_plot_into_a_missing_folder_is_one_line(capsys: pytest.CaptureFixture[str],
                                                  tmp_path: Path) -> None:
    code, _, err = _run(capsys, "info", "--plot", str(tmp_path / "no" / "such" / "x.png"))
    assert code == 1 and "does not exist" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_demo_outlook_after_a_cpu_only_calibration_agrees_with_info() -> None:
    from autodev._cli import demo as _demo
    from autodev._backends import cpu_backend

    profile = _calibrate.calibrate(quick=True, ops=["matmul"], dtypes=["f64"],
                                   max_seconds=0.2, backends={"cpu": cpu_backend()})
    assert "gpu" not in profile["devices"]
    outlook = "\n".join(_demo.gpu_outlook())
    assert "with data on the GPU" in outlook
    matmul = next(line for line in _demo.gpu_outlook() if line.strip().startswith("matmul"))
    assert "n = never with data on the GPU" not in matmul
    assert autodev.info()["crossovers"]["matmul"]  # info has a crossover for it too


def test_demo_marks_noisy_rows(capsys: pytest.CaptureFixture[str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._calibrate import timing as _timing
    from autodev._cli import demo as _demo

    calls = iter(range(10**6))

    def jittery(func: Any, sync: Any = None, **kwargs: Any) -> _timing.Timing:
        # the first measurement of every pair is 6x slower: a burst of load
        k = next(calls)
        times = [1e-3 * (6 if k % 2 == 0 else 1)] * 3 + [1e-3] * 3
        return _timing.Timing(median=1e-3, best=1e-3, times=times)

    monkeypatch.setattr(_demo, "measure", jittery)
    code, out, _ = _run(capsys, "demo", "--quick", "--budget", "0.01")
    assert code == 0
    assert "*" in out and "this machine is busy" in out
    code, out, _ = _run(capsys, "demo", "--quick", "--budget", "0.01", "--json")
    rows = json.loads(out)
    assert all(row["spread"] > _demo.NOISY and "noisy" in row["notes"] for row in rows)


def test_bench_report_flags_cpu_rows_faster_than_numpy() -> None:
    from autodev._cli.bench import _report_module

    report = _report_module()
    row = {"family": "matmul", "size": 64, "numpy": 6e-3, "autodev": 1e-3, "cpu": 1e-3,
           "gpu": None, "ratio": 1.0, "device": "cpu"}
    fair = dict(row, family="fft", numpy=1e-3, autodev=1.05e-3)
    result = {"meta": {"date": "today", "machine": {"cpu": "x", "cores": 1}, "gpu": "none",
                       "dtype": "f32", "gpu_missing_reason": "no GPU"},
              "accuracy": {"judged": 0}, "rows": [row, fair]}
    text = report.format_report(result)
    assert "0.17x!" in text and "1.05x!" not in text
    assert "busy" in text and "matmul n=64" in text and "fft n=64" not in text


# --------------------------------------------------------------------------- the CLI's room

def test_import_autodev_leaves_the_cli_out() -> None:
    code = ("import sys, autodev; autodev.info(); autodev.stats(); "
            "print(sorted(m for m in sys.modules if m.startswith('autodev._cli')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": str(_ROOT)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def _imported_modules(path: Path, package: str) -> set[str]:
    """Every autodev module ``path`` imports, at the top or inside a function."""
    import ast

    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = ".".join(parts[: len(parts) - node.level + 1]) if node.level else ""
            module = ".".join(p for p in (base, node.module or "") if p)
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


def test_nothing_below_the_cli_imports_it() -> None:
    package_root = _ROOT / "autodev"
    offenders = []
    for path in package_root.rglob("*.py"):
        parts = path.relative_to(_ROOT).with_suffix("").parts
        if parts[:2] == ("autodev", "_cli") or parts == ("autodev", "__main__"):
            continue
        package = ".".join(parts[:-1])
        if any(m == "autodev._cli" or m.startswith("autodev._cli.")
               for m in _imported_modules(path, package)):
            offenders.append(str(path.relative_to(_ROOT)))
    assert offenders == []


def test_the_import_scan_sees_imports_inside_functions(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("def f():\n    from .._cli import info\n    from . import _cli\n")
    assert "autodev._cli.info" in _imported_modules(sample, "autodev.scipy")
    assert "autodev._cli" in _imported_modules(sample, "autodev")


def test_every_subcommand_is_a_module_of_the_cli_package() -> None:
    for name, (module, _) in _cli.COMMANDS.items():
        assert module.__name__ == f"autodev._cli.{name}"
        assert callable(module.add_arguments) and callable(module.run)


def test_coverage_command_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "coverage")
    assert code == 0
    assert out == (_ROOT / "docs" / "coverage.md").read_text()


def test_python_m_autodev_runs_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "autodev", "--help"], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(_ROOT)})
    assert done.returncode == 0, done.stderr
    for name in _cli.COMMANDS:
        assert name in done.stdout
