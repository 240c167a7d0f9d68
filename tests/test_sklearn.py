"""scikit-learn under ``array_api_dispatch=True`` gives NumPy's results on autodev arrays.

Each setting runs tests/sklearn_check.py in a fresh interpreter, because
scikit-learn needs ``SCIPY_ARRAY_API=1`` and SciPy reads it once, when it is
first imported (this test session has imported SciPy long before).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("sklearn")

CHECK = Path(__file__).parent / "sklearn_check.py"
SETTINGS = ("cpu", "sim-auto", "sim-gpu")


def _run(setting: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    env["SCIPY_ARRAY_API"] = "1"
    done = subprocess.run([sys.executable, str(CHECK), setting], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def reports() -> dict[str, dict]:
    with ThreadPoolExecutor(max_workers=len(SETTINGS)) as pool:  # three interpreters at once
        return dict(zip(SETTINGS, pool.map(_run, SETTINGS)))


@pytest.fixture(params=SETTINGS)
def report(request: pytest.FixtureRequest, reports: dict[str, dict]) -> tuple[str, dict]:
    return request.param, reports[request.param]


def test_results_equal_numpys(report):
    setting, results = report
    wrong = {case: r for case, r in results.items() if not r["equal"]}
    assert not wrong, f"{setting}: {wrong}"


def test_arrays_stay_in_autodevs_namespace_and_placement(report):
    setting, results = report
    device = "sim:0" if setting == "sim-gpu" else "cpu"
    arrays = {case: r for case, r in results.items() if r["type"] == "ndarray"}
    assert len(arrays) == 9  # the estimators' outputs; metrics are Python floats
    for case, r in arrays.items():
        assert (r["namespace"], r["device"]) == ("autodev.array_api", device), case
    floats = {case for case, r in results.items() if r["type"] == "float"}
    assert floats == {"f1_score", "log_loss", "r2_score", "accuracy_score"}
