"""The cost model: predictions, and the shortcut that skips them for tiny host calls."""

import math

import numpy
import pytest

import autodev
from autodev._cost.model import DTYPE_CLASSES, FAMILIES, CostModel
from autodev._cost.profile import embedded_default
from autodev.testing import simulated_gpu


@pytest.fixture
def model() -> CostModel:
    return CostModel(embedded_default()["devices"])


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_below_the_floor_the_cpu_wins_for_every_dtype_even_with_data_resident(model, family):
    floor = model.cpu_only_below(family)
    assert floor >= 0
    if floor == 0:
        return
    work = floor * 0.99
    for dclass in DTYPE_CLASSES:
        cpu_lat, cpu_inv, gpu_lat, gpu_inv = model.curves(family, dclass)
        if math.isinf(gpu_lat):
            continue
        assert cpu_lat + work * cpu_inv < gpu_lat + work * gpu_inv


def test_curves_missing_for_a_device_read_as_never_faster() -> None:
    cpu_only = CostModel({"cpu": embedded_default()["devices"]["cpu"]})
    lat = cpu_only.curves("matmul", "f32")
    assert math.isinf(lat[2])
    assert cpu_only.crossover("matmul", "f32") is None


def test_tiny_host_calls_stay_on_the_host_untraced_and_traced() -> None:
    with simulated_gpu():
        a = autodev.arange(10.0)
        autodev.stats(reset=True)
        b = a * 2 + 1  # decided by the shortcut (nothing watches)
        assert b.location == "cpu"
        with autodev.trace() as records:
            c = a * 2 + 1  # decided by a full prediction, which the record shows
        assert c.location == "cpu"
        assert all(r.reason == "cost model" and r.costs["cpu"] < r.costs["sim:0"]
                   for r in records)
        assert autodev.stats()["h2d_count"] == 0
        numpy.testing.assert_array_equal(b.get(), numpy.arange(10.0) * 2 + 1)
