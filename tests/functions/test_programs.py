"""Realistic NumPy programs print the same output under ``import autodev as np``.

Each program in tests/programs/ is run as written (with NumPy), then with its
import line changed to ``import autodev as np`` under four settings: policy cpu,
the default policy, the simulated GPU with the default policy, and the simulated
GPU with policy gpu. Standard output must be identical, byte for byte.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROGRAMS = sorted((Path(__file__).resolve().parents[1] / "programs").glob("*.py"))
IMPORT_LINE = "import numpy as np\n"
SETTINGS = {
    "cpu": {"AUTODEV_DEVICE": "cpu"},
    "default": {},
    "sim-auto": {"AUTODEV_SIMULATE_GPU": "1"},
    "sim-gpu": {"AUTODEV_SIMULATE_GPU": "1", "AUTODEV_DEVICE": "gpu"},
}


def run(source: str, env_extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.stem for p in PROGRAMS])
def test_program_prints_what_numpy_prints(program):
    source = program.read_text()
    assert source.count(IMPORT_LINE) == 1, "a program imports NumPy once, as np"
    autodev_source = source.replace(IMPORT_LINE, "import autodev as np\n")
    jobs = {"numpy": (source, {})}
    jobs.update({name: (autodev_source, env) for name, env in SETTINGS.items()})
    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        futures = {name: pool.submit(run, *job) for name, job in jobs.items()}
        results = {name: f.result() for name, f in futures.items()}
    expected = results.pop("numpy")
    assert expected.returncode == 0, expected.stderr
    assert expected.stdout.strip()
    for name, result in results.items():
        assert result.returncode == 0, f"{name}: {result.stderr}"
        assert result.stdout == expected.stdout, f"{name} printed something else"
