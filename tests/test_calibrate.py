"""Calibration: fitting, crossovers, the simulated GPU's known truth, interruption."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from autodev._calibrate import calibrate as C
from autodev._cost import profile as _profile
from autodev._backends import cpu_backend
from autodev._cost.model import CostModel
from autodev._calibrate.workloads import WORKLOADS
from autodev.testing import SimBackend



def _devices(cpu: tuple[float, float], gpu: tuple[float, float],
             link: tuple[float, float] = (1e-5, 1e10)) -> dict[str, Any]:
    def curve(lat_thr: tuple[float, float]) -> dict[str, Any]:
        return {"elementwise": {"f64": {"latency": lat_thr[0], "throughput": lat_thr[1]}},
                "matmul": {"f64": {"latency": lat_thr[0], "throughput": lat_thr[1]}}}

    transfer = {"latency": link[0], "bandwidth": link[1]}
    return {"cpu": {"compute": curve(cpu)},
            "gpu": {"compute": curve(gpu), "transfer": {"h2d": transfer, "d2h": transfer}}}


# --------------------------------------------------------------------------- fitting

def test_fit_recovers_an_exact_curve() -> None:
    work = np.geomspace(1e2, 1e8, 12)
    curve, error = C.fit_curve(work, 3e-6 + work / 2e9)
    assert curve["latency"] == pytest.approx(3e-6, rel=1e-6)
    assert curve["throughput"] == pytest.approx(2e9, rel=1e-6)
    assert error < 1e-6


def test_fit_recovers_a_noisy_curve() -> None:
    rng = np.random.default_rng(3)
    work = np.geomspace(1e2, 1e8, 20)
    seconds = (2e-5 + work / 5e10) * np.exp(0.05 * rng.standard_normal(work.size))
    curve, _ = C.fit_curve(work, seconds)
    assert curve["latency"] == pytest.approx(2e-5, rel=0.2)
    assert curve["throughput"] == pytest.approx(5e10, rel=0.2)


def test_fit_never_goes_negative_or_out_of_range() -> None:
    curve, _ = C.fit_curve([1, 10, 100], [1e-3, 1e-3, 1e-3])  # no growth: infinite throughput
    assert curve["latency"] == pytest.approx(1e-3)
    assert curve["throughput"] == 1e18
    curve, _ = C.fit_curve([1e3, 1e6], [1e-9, 1e-3])  # would need a negative latency
    assert curve["latency"] >= 0 and curve["throughput"] > 0
    _profile.validate({"format": "autodev-profile", "version": 2,
                       "devices": {"cpu": {"compute": {"sort": {"f64": curve}}}}}, "fit")


def test_weights_favour_points_near_the_crossover() -> None:
    assert C.near([100, 1e4], [100])[0] == pytest.approx(5.0)
    assert C.near([100, 1e4], [100])[1] < 1.01
    assert C.near([5], []) == [1.0]


# --------------------------------------------------------------------------- crossovers

def test_crossover_for_data_on_the_device_is_where_the_lines_cross() -> None:
    model = CostModel(_devices(cpu=(1e-6, 1e9), gpu=(1e-5, 1e11)))
    expected = (1e-5 - 1e-6) / (1e-9 - 1e-11)
    found = C.crossover_size(model, WORKLOADS["elementwise"], "f64", host_data=False)
    assert found == pytest.approx(expected, rel=0.01)


def test_crossover_for_host_data_counts_the_copy() -> None:
    # copying 16 bytes per element costs more than the CPU's whole add: never worth it
    model = CostModel(_devices(cpu=(1e-6, 1e9), gpu=(1e-5, 1e11)))
    assert C.crossover_size(model, WORKLOADS["elementwise"], "f64", host_data=True) is None
    # matmul: n^3 work against 2 n^2 * 8 bytes moved; solve t_cpu(n) = t_gpu(n) + h2d(n)
    model = CostModel(_devices(cpu=(1e-6, 1e10), gpu=(2e-5, 1e13), link=(1e-5, 1e10)))
    n = C.crossover_size(model, WORKLOADS["matmul"], "f64", host_data=True)
    assert n is not None
    gap = lambda m: (1e-6 + m**3 / 1e10) - (2e-5 + m**3 / 1e13 + 1e-5 + 16 * m * m / 1e10)  # noqa: E731
    assert gap(n * 0.999) <= 0 <= gap(n * 1.01)
    assert n > C.crossover_size(model, WORKLOADS["matmul"], "f64", host_data=False)


def test_crossover_is_always_and_never_at_the_ends() -> None:
    model = CostModel(_devices(cpu=(1e-3, 1e6), gpu=(1e-6, 1e12)))
    assert C.crossover_size(model, WORKLOADS["elementwise"], "f64", False) == 1.0
    model = CostModel(_devices(cpu=(1e-7, 1e12), gpu=(1e-3, 1e6)))
    assert C.crossover_size(model, WORKLOADS["elementwise"], "f64", False) is None


def test_no_gpu_curves_means_no_crossover_table() -> None:
    assert C.crossover_table({"cpu": {"compute": {}}}) == {}


# --------------------------------------------------------------------------- the simulated GPU

def test_sim_virtual_clock_charges_true_costs() -> None:
    sim = SimBackend()
    truth = sim.true_model()
    host = np.ones((100, 100))
    start = sim.clock()
    x = sim.from_host(host)
    assert sim.clock() - start == pytest.approx(truth.h2d(host.nbytes))
    start = sim.clock()
    sim.xp.matmul(x, x)
    assert sim.clock() - start == pytest.approx(truth.compute("gpu", "matmul", "f64", 1e6))
    start = sim.clock()
    sim.xp.linalg.solve(x, x[0])
    assert sim.clock() - start == pytest.approx(truth.compute("gpu", "solve", "f64", 1e6))
    sim.noise = 0.1
    start = sim.clock()
    sim.xp.sin(x)
    assert sim.clock() - start != pytest.approx(truth.compute("gpu", "transcendental", "f64", 1e4))


def _truth_and_found(ops: list[str], noise: float, seconds: float
                     ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    default = _profile.embedded_default()["devices"]
    cpu, gpu = SimBackend(default["cpu"]), SimBackend(default["gpu"])
    cpu.noise = gpu.noise = noise
    profile = C.calibrate(write=False, quick=True, ops=ops, max_seconds=seconds,
                          backends={"cpu": cpu, "gpu": gpu})
    truth = C.crossover_table(default, ops, ("f32", "f64"))
    return truth, profile["report"]["crossovers"], profile


def _worst_ratio(truth: dict[str, Any], found: dict[str, Any]) -> float:
    worst = 1.0
    for family, row in truth.items():
        for dclass, sides in row.items():
            if dclass == "unit":
                continue
            for side, expected in sides.items():
                got = found[family][dclass][side]
                if expected is None or got is None:
                    assert expected is got, (family, dclass, side, expected, got)
                    continue
                worst = max(worst, got / expected, expected / got)
    return worst


def test_calibrating_the_simulated_gpu_finds_its_crossovers() -> None:
    ops = ["elementwise", "reduction", "fft", "matmul", "solve"]
    # both devices are simulated: the budget is spent in virtual seconds, so a loaded
    # machine finds exactly what an idle one finds
    truth, found, profile = _truth_and_found(ops, noise=0.05, seconds=0.25)
    assert set(found) == set(ops)
    assert _worst_ratio(truth, found) < 2.0
    check = profile["report"]["selfcheck"]
    assert check["decisions"] >= 10
    assert check["share"] >= 0.95
    _profile.validate(json.loads(json.dumps(profile)), "calibrated sim")


def test_a_simulated_calibration_does_not_read_the_wall_clock(monkeypatch) -> None:
    ops = ["elementwise", "matmul"]
    _, idle, idle_profile = _truth_and_found(ops, noise=0.05, seconds=0.1)
    start = time.perf_counter()
    wall = itertools.count()  # a machine so busy that each reading is 1000 s later
    monkeypatch.setattr(C.time, "perf_counter", lambda: start + 1000.0 * next(wall))
    _, busy, busy_profile = _truth_and_found(ops, noise=0.05, seconds=0.1)
    assert busy == idle
    points = {f: len(s["f64"]["n"]) for f, s in busy_profile["measurements"]["gpu"].items()}
    assert points == {f: len(s["f64"]["n"])
                      for f, s in idle_profile["measurements"]["gpu"].items()}
    assert max(points.values()) > 4  # not cut short at the minimum of a spent budget


def test_calibrating_cpu_against_the_sim_recovers_the_sim_curves() -> None:
    sim = SimBackend()
    profile = C.calibrate(write=False, quick=True, ops=["matmul"], dtypes=["f64"],
                          max_seconds=0.5, backends={"cpu": cpu_backend(), "gpu": sim})
    fitted = profile["devices"]["gpu"]["compute"]["matmul"]["f64"]
    true = _profile.embedded_default()["devices"]["gpu"]["compute"]["matmul"]["f64"]
    assert fitted["latency"] == pytest.approx(true["latency"], rel=0.05)
    assert fitted["throughput"] == pytest.approx(true["throughput"], rel=0.05)
    truth = C.crossover_table({"cpu": profile["devices"]["cpu"],
                               "gpu": _profile.embedded_default()["devices"]["gpu"]},
                              ["matmul"], ["f64"])
    assert _worst_ratio(truth, profile["report"]["crossovers"]) < 2.0
    assert set(profile["devices"]["gpu"]["transfer"]) == {"h2d", "d2h"}


def test_cpu_only_measures_the_cpu_and_says_so() -> None:
    profile = C.calibrate(write=False, quick=True, ops=["elementwise", "matmul"],
                          dtypes=["f64"], max_seconds=0.5, backends={"cpu": cpu_backend()})
    assert "gpu" not in profile["devices"]
    assert profile["report"]["crossovers"] == {}
    assert "nothing to choose between" in profile["report"]["note"]
    points = profile["measurements"]["cpu"]["matmul"]["f64"]
    assert len(points["n"]) >= 3 and len(points["seconds"]) == len(points["n"])
    # families not measured keep curves (here: the default's) so nothing becomes infinite
    assert "svd" in profile["devices"]["cpu"]["compute"]
    assert profile["report"]["selfcheck"]["points"] >= 1


def test_quick_settings_and_bad_choices() -> None:
    quick = C.make_settings(quick=True)
    assert quick.dtypes == ("f32", "f64") and quick.max_seconds <= 8
    with pytest.raises(ValueError, match="ops must be among .*Got nonsense"):
        C.make_settings(ops=["nonsense"])
    with pytest.raises(ValueError, match="dtypes must be among"):
        C.make_settings(dtypes=["f16"])
    with pytest.raises(ValueError, match="max_seconds must be a positive number"):
        C.make_settings(max_seconds=float("nan"))


def test_writes_the_profile_and_the_dispatcher_uses_it(_cache: Path) -> None:
    from autodev._cost.cache import cost_model

    profile = C.calibrate(quick=True, ops=["elementwise"], dtypes=["f64"], max_seconds=0.3,
                          backends={"cpu": cpu_backend()})
    path = Path(profile["report"]["path"])
    assert path == _cache / "profile.json"
    assert _profile.resolve().used == path
    curve = profile["devices"]["cpu"]["compute"]["elementwise"]["f64"]
    model = cost_model()
    assert model.compute("cpu", "elementwise", "f64", 1e6) == \
        pytest.approx(curve["latency"] + 1e6 / curve["throughput"])


def test_interrupted_calibration_leaves_the_old_profile(_cache: Path) -> None:
    old = _profile.write(_profile.embedded_default())
    before = old.read_bytes()

    def interrupt(fraction: float, label: str) -> None:
        if fraction > 0.3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        C.calibrate(quick=True, ops=["elementwise", "reduction"], dtypes=["f64"],
                    max_seconds=0.5, progress=interrupt, backends={"cpu": cpu_backend()})
    assert old.read_bytes() == before
    assert [p.name for p in _cache.iterdir()] == ["profile.json"]
