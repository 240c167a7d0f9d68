"""The asv set-up: a configuration that installs no CUDA wheels by default, the install
script's choice of extra, and committed results that asv can read and that describe their
machine in words only."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks"


def _config() -> dict:
    # asv's configuration is JSON with // comment lines
    text = "\n".join(line for line in (BENCH / "asv.conf.json").read_text().splitlines()
                     if not line.lstrip().startswith("//"))
    return json.loads(text)


def _install_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("asv_install", BENCH / "asv_install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_environments_install_no_cuda_wheels_by_default() -> None:
    conf = _config()
    commands = " ".join(conf["install_command"] + conf["build_command"])
    assert "cuda" not in commands and "asv_install.py" in commands
    assert conf["results_dir"] == "results" and conf["benchmark_dir"] == "benchmarks"


def test_install_extra_comes_from_the_environment_variable() -> None:
    script = _install_script()
    assert script.requirement("w.whl", "") == "w.whl"
    assert script.requirement("w.whl", " cuda12 ") == "w.whl[cuda12]"
    with pytest.raises(ValueError, match="AUTODEV_ASV_EXTRA must be one of"):
        script.requirement("w.whl", "cuda11")


def test_gpu_run_keeps_results_where_the_configuration_does() -> None:
    text = (BENCH / "gpu-run.sh").read_text()
    results = _config()["results_dir"]
    assert f'-C benchmarks {results}/"$tag"' in text
    assert "--python=same" in text and '--machine "$tag"' in text


def _machines() -> list[Path]:
    root = BENCH / "results"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


@pytest.mark.parametrize("machine", _machines(), ids=lambda p: p.name)
def test_committed_results_describe_the_machine_in_words(machine: Path) -> None:
    described = json.loads((machine / "machine.json").read_text())
    assert described["machine"] == machine.name
    for key in ("arch", "cpu", "num_cpu", "os", "ram"):
        assert str(described[key]).strip(), key
    runs = [json.loads(p.read_text()) for p in machine.glob("*.json") if p.name != "machine.json"]
    assert runs, "a machine directory without results"
    for run in runs:
        assert re.fullmatch(r"[0-9a-f]{40}", run["commit_hash"])
        assert run["params"]["machine"] == machine.name and run["results"]
    text = "".join(p.read_text() for p in machine.glob("*.json"))
    assert not re.search(r"/(work|root|home|tmp)/", text), "a local path in committed results"


def test_a_threaded_chains_set_its_setup_skips_tears_down_cleanly() -> None:
    # asv calls teardown after a setup that raised NotImplementedError (NumPy has no
    # threads or fusion to turn on): it must not fail on what setup never entered
    spec = importlib.util.spec_from_file_location(
        "bench_threads", BENCH / "benchmarks" / "bench_threads.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    bench = module.ThreadedChains()
    args = ("black_scholes", "numpy", "all", "unfused", 1000)
    with pytest.raises(NotImplementedError):
        bench.setup(*args)
    bench.teardown(*args)


def test_the_programs_script_runs_each_program_alike(tmp_path: Path) -> None:
    """benchmarks/programs.py runs each program with NumPy and with autodev: the results
    are bit-identical, and its report says where autodev ran the calls."""
    spec = importlib.util.spec_from_file_location("programs", BENCH / "programs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = tmp_path / "programs.json"
    assert module.main(["--rounds", "1", "--programs", "monte_carlo", "tiny_calls",
                        "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert [r["program"] for r in report["rows"]] == ["monte_carlo", "tiny_calls"]
    for row in report["rows"]:
        assert row["identical"] and row["ratio"] > 0
        assert sum(row["placement"]["calls"].values()) > 0


def test_the_asv_programs_run_the_scripts_bodies() -> None:
    """The asv suite's Programs class times the bodies and inputs of
    benchmarks/programs.py (one source), for NumPy and autodev alike."""
    spec = importlib.util.spec_from_file_location(
        "bench_programs", BENCH / "benchmarks" / "bench_programs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.Programs.params[0] == list(module.PROGRAMS.inputs())
    assert "tiny_calls" in module.Programs.params[0]
    for implementation in module.IMPLEMENTATIONS:
        bench = module.Programs()
        bench.setup("tiny_calls", implementation)
        bench.time_program("tiny_calls", implementation)
