"""The cost model: predictions, and the shortcut that skips them for tiny host calls."""

import math
from typing import Any

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
    assert cpu_only.crossover("matmul", "f32", lambda n: n**3) is None


def test_predict_is_the_curves_plus_each_copy(model) -> None:
    cpu_lat, cpu_inv, gpu_lat, gpu_inv = model.curves("fft", "c64")
    work, copies = 3.0e6, (2.0e6, 5.0e5)
    assert model.predict("fft", "c64", work) == pytest.approx(
        (cpu_lat + work * cpu_inv, gpu_lat + work * gpu_inv))
    cpu, gpu = model.predict("fft", "c64", work, h2d=copies, d2h=copies[:1])
    assert gpu == pytest.approx(gpu_lat + work * gpu_inv + model.h2d(2e6) + model.h2d(5e5))
    assert cpu == pytest.approx(cpu_lat + work * cpu_inv + model.d2h(2e6))


def test_predict_reads_no_faster_than_a_reduction(model) -> None:
    # a matrix-vector product: few multiply-adds per element read
    matvec = model.predict("matmul", "f32", 1000.0 * 1000, read=1000.0 * 1000 + 2000)
    floor = model.predict("reduction", "f32", 1000.0 * 1000 + 2000)
    assert matvec[0] >= floor[0] and matvec[1] >= floor[1]
    assert matvec[0] > model.predict("matmul", "f32", 1000.0 * 1000)[0]


def _first_win_by_stepping(model: CostModel, family: str, dclass: str, work: Any,
                           h2d: Any) -> float | None:
    """Where the GPU first wins, found the slow way: every size 0.05 % apart."""
    n = 1.0
    while n < 1e7:
        moved = (h2d(n),) if h2d is not None else ()
        cpu, gpu = model.predict(family, dclass, work(n), h2d=moved)
        if gpu < cpu:
            return n
        n *= 1.0005
    return None


@pytest.mark.parametrize("family, work, moved", [
    ("matmul", lambda n: n**3, lambda n: 8 * n * n),
    ("matmul", lambda n: n**3, None),
    ("elementwise", lambda n: n, lambda n: 8 * n),
    ("elementwise", lambda n: n, None),
    ("svd", lambda n: n**3, lambda n: 4 * n * n),
])
def test_crossover_is_the_first_size_the_gpu_wins(model, family, work, moved) -> None:
    found = model.crossover(family, "f32", work, moved, largest=1e7)
    slow = _first_win_by_stepping(model, family, "f32", work, moved)
    if slow is None:
        assert found is None
        return
    assert found == pytest.approx(slow, rel=2e-3)
    cpu, gpu = model.predict(family, "f32", work(found * 1.002),
                             h2d=(moved(found * 1.002),) if moved else ())
    assert gpu < cpu


def test_crossover_with_copies_is_later_than_without(model) -> None:
    resident = model.crossover("matmul", "f64", lambda n: n**3)
    hosted = model.crossover("matmul", "f64", lambda n: n**3, lambda n: 16 * n * n)
    assert resident is not None and hosted is not None and hosted > resident


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


def _matmul_operands(draw: Any) -> tuple[Any, Any]:
    """Two NumPy arrays ``a @ b`` accepts: 1-d or stacked matrices, k possibly 0."""
    from hypothesis import strategies as st

    m, k, n = (draw(st.integers(0, 6)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    a = (k,) if draw(st.booleans()) else (*batch, m, k)
    b = (k,) if draw(st.booleans()) else (*batch, k, n)
    return numpy.zeros(a), numpy.zeros(b)


def test_elements_bound_bounds_each_family_work() -> None:
    """What the compiled hot path counts for a family (``ELEMENTS_BOUND``) is never below
    the family's work: the largest operand's elements is the work of the "largest"
    families, and a matmul's multiply-adds never exceed the product of its operands'
    elements, for every shape ``a @ b`` accepts."""
    from hypothesis import given, settings, strategies as st

    from autodev._cost.families import ELEMENTS_BOUND, WORK

    @settings(max_examples=300, deadline=None)
    @given(st.data())
    def check(data: Any) -> None:
        a, b = data.draw(st.composite(lambda draw: _matmul_operands(draw))())
        numpy.matmul(a, b)  # (a shape pair NumPy accepts)
        for family, bound in ELEMENTS_BOUND.items():
            operands = [a] if family == "reduction" else [a, b]
            assert bound in ("largest", "product", "broadcast")
            if bound == "broadcast":
                continue  # (below: these operands need not broadcast)
            counted = max(x.size for x in operands) if bound == "largest" else a.size * b.size
            # (an empty operand: the model counts 1, the paths 0, both below any floor)
            assert WORK[family](operands) <= max(counted, 1)

    check()


def test_broadcast_work_is_the_results_elements() -> None:
    """An elementwise call's work is the elements of its operands broadcast together
    (``x[:, None] - c`` has more than either), at least the largest operand's: the count
    ``broadcast`` families of ``ELEMENTS_BOUND`` are bounded by, as the compiled path
    counts it."""
    from hypothesis import given, settings
    from hypothesis.extra import numpy as hnp

    from autodev._cost.families import ELEMENTS_BOUND, WORK, broadcast_elements

    families = [f for f, bound in ELEMENTS_BOUND.items() if bound == "broadcast"]
    assert set(families) == {"elementwise", "transcendental"}

    @settings(max_examples=300, deadline=None)
    @given(hnp.mutually_broadcastable_shapes(num_shapes=3, max_dims=4, max_side=5))
    def check(shapes: Any) -> None:
        arrays = [numpy.zeros(s) for s in shapes.input_shapes]
        result = numpy.broadcast_shapes(*shapes.input_shapes)
        assert broadcast_elements(list(shapes.input_shapes)) == math.prod(result)
        for family in families:
            for operands in (arrays, arrays[:2], arrays[:1]):
                size = math.prod(numpy.broadcast_shapes(*(x.shape for x in operands)))
                assert WORK[family](operands) == max(size, *(x.size for x in operands), 1)

    check()
