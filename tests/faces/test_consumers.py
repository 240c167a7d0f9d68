"""scikit-learn (``array_api_dispatch=True``) and SciPy (``SCIPY_ARRAY_API=1``) give
NumPy's results on autodev arrays, in autodev's namespace and placement.

Each setting runs tests/consumers_check.py in a fresh interpreter, because both
need ``SCIPY_ARRAY_API=1`` and SciPy reads it once, when it is first imported
(this test session has imported SciPy long before).
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

CHECK = Path(__file__).resolve().parents[1] / "consumers_check.py"
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
    for library in ("sklearn", "scipy"):
        wrong = {case: r for case, r in results[library].items() if not r["equal"]}
        assert not wrong, f"{setting} {library}: {wrong}"


def test_sklearn_arrays_stay_in_autodevs_namespace_and_placement(report):
    """fit and predict see one device, ``auto``, wherever the data went (issue 9)."""
    setting, results = report
    location = "sim:0" if setting == "sim-gpu" else "cpu"
    arrays = {case: r for case, r in results["sklearn"].items() if r["type"] == "ndarray"}
    assert len(arrays) == 9  # the estimators' outputs; metrics are Python floats
    for case, r in arrays.items():
        assert (r["namespace"], r["device"]) == ("autodev.array_api", "auto"), case
        if setting != "sim-gpu":  # under the GPU policy the data is wherever calls ran
            assert r["location"] == location, case
    floats = {case for case, r in results["sklearn"].items() if r["type"] == "float"}
    assert floats == {"f1_score", "log_loss", "r2_score", "accuracy_score"}


#: SciPy functions that compute with NumPy for any namespace other than NumPy's,
#: CuPy's, PyTorch's and JAX's: what they return says where (docs/array-api.md).
SCIPY_ON_HOST = {"linalg.solve": "ndarray@numpy", "fft.dct": "ndarray@cpu",
                 "signal.convolve": "ndarray@cpu"}


def test_scipy_results_stay_where_scipy_allows(report):
    setting, results = report
    location = "sim:0" if setting == "sim-gpu" else "cpu"
    for case, r in results["scipy"].items():
        if case in SCIPY_ON_HOST:
            where = r["location"] if r["namespace"] else "numpy"
            assert f"{r['type']}@{where}" == SCIPY_ON_HOST[case], case
            continue
        assert (r["type"], r["namespace"], r["device"]) == \
            ("ndarray", "autodev.array_api", "auto"), case
        if setting != "sim-gpu":
            assert r["location"] == location, case


def test_consumer_suites_flag_what_passes_with_array_api_strict_only(tmp_path):
    # .ci/consumer-suites' comparison (tests/plugins/consumer_backends.py) on ids as SciPy
    # and scikit-learn make them
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugins"))
    try:
        import consumer_backends as cb
    finally:
        sys.path.pop(0)
    m = "scipy/stats/tests/test_stats.py::TestSEM::test_sem"
    s = "sklearn/utils/tests/test_array_api.py::test_nanmin"
    c = "sklearn/tests/test_common.py::test_estimators[PCA()-check_array_api_input("
    strict = {f"{m}[array_api_strict]": "passed", f"{m}x[array_api_strict]": "failed",
              f"{s}[array_api_strict-CPU_DEVICE-float64]": "passed",
              f"{c}array_namespace=array_api_strict,device_name=device1,dtype_name=float32)]":
              "passed"}
    autodev_ = {f"{m}[autodev]": "failed", f"{m}x[autodev]": "failed",
                f"{s}[autodev.array_api-sim:0-float64]": "failed",
                f"{s}[autodev.array_api-None-float32]": "failed",
                f"{c}array_namespace=autodev.array_api,device_name=cpu,dtype_name=float32)]":
                "error"}
    paths = []
    for name, outcomes in (("strict", strict), ("autodev", autodev_)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(outcomes))
    broken = cb.compare(str(paths[0]), str(paths[1]))
    assert sorted(line.split(": ", 1)[1] for line in broken) == sorted([
        f"{m}[autodev]", f"{s}[autodev.array_api-sim:0-float64]",
        f"{c}array_namespace=autodev.array_api,device_name=cpu,dtype_name=float32)]"])
