"""Adversarial checks: writes through every path NumPy offers, mixed devices, raw NumPy
arrays mixed in, out= in all its forms, scalar semantics, CPU-only functions on device
arrays. Each result is compared with NumPy's.

The residency tests read an array back both on the simulated GPU and on the CPU, with
its data placed two ways: primary on the CPU with a mirror on ``sim:0``, and primary
on ``sim:0`` (with a host mirror once read there). A write that forgets to bump the
storage's version shows up as a stale read on one side.
"""

from __future__ import annotations

import contextlib

import copy
import pickle
from typing import Any, Callable, Iterator

import numpy
import pytest

import autodev
from autodev.testing import simulated_gpu, to_numpy

from diffcheck import assert_same, differential, error_parity, sample


@pytest.fixture(params=["cpu+mirror", "sim"])
def place(request: pytest.FixtureRequest) -> Iterator[Callable[[Any], Any]]:
    """Make an autodev copy of a NumPy array, placed as the parameter says."""
    with simulated_gpu():
        def make(host: Any) -> Any:
            x = autodev.array(host)
            if request.param == "sim":
                x = x.to_device("sim:0").to_device("auto")  # moved, still placed by autodev
                with autodev.policy("cpu"):
                    x * 1  # leaves a host mirror
            else:
                with autodev.policy("gpu"):
                    x * 1  # leaves a device mirror
            assert x._mirror is not None
            return x

        yield make


def check_everywhere(x: Any, expected: numpy.ndarray) -> None:
    """``x`` reads as ``expected`` on the simulated GPU, on the CPU, and directly."""
    for policy in ("gpu", "cpu"):
        with autodev.policy(policy):
            assert_same(x * 1, expected * 1)
    assert_same(x, expected)


# ---------------------------------------------------------------------- writes

WRITES: dict[str, Callable[[Any, Any], Any]] = {
    "put": lambda xp, x: xp.put(x, [0, 2], [7.0, 8.0]),
    "put-kw": lambda xp, x: xp.put(a=x, ind=[1], v=5.0),
    "place": lambda xp, x: xp.place(x, x > 0.5, [9.0]),
    "putmask": lambda xp, x: xp.putmask(x, x < 0.5, -1.0),
    "fill_diagonal": lambda xp, x: xp.fill_diagonal(x.reshape(2, 3), 4.0),
    "put_along_axis": lambda xp, x: xp.put_along_axis(x, xp.asarray([1, 3]), 6.0, axis=0),
    "nan_to_num": lambda xp, x: xp.nan_to_num(x, copy=False, nan=3.0),
    "copyto": lambda xp, x: xp.copyto(x, 2.0, where=x > 0.5),
    "shuffle": lambda xp, x: xp.random.RandomState(1).shuffle(x),
    "rng-out": lambda xp, x: xp.random.default_rng(2).random(out=x),
    "rng-normal-out": lambda xp, x: xp.random.default_rng(3).standard_normal(out=x),
    "permuted-out": lambda xp, x: xp.random.default_rng(4).permuted(x, out=x),
    "ufunc-out": lambda xp, x: xp.add(x, 1.0, out=x),
    "ufunc-out-tuple-where": lambda xp, x: xp.multiply(x, 2.0, out=(x,), where=x > 0.5),
    "ufunc.at": lambda xp, x: xp.add.at(x, [0, 0, 1], 1.0),
    "accumulate-out": lambda xp, x: xp.add.accumulate(x, out=x),
    "method-out": lambda xp, x: x.cumsum(out=x),
    "clip-out": lambda xp, x: xp.clip(x, 0.3, 0.6, out=x),
    "numpy-ufunc-out": lambda xp, x: numpy.subtract(x, 1.0, out=x),
    "iadd": lambda xp, x: x.__iadd__(1.0),
    "setitem-overlap": lambda xp, x: x.__setitem__(slice(1, None), x[:-1]),
    "setitem-reversed": lambda xp, x: x.__setitem__(Ellipsis, x[::-1]),
    "real": lambda xp, x: x.real.__setitem__(0, 5.0),
    "T": lambda xp, x: x.reshape(2, 3).T.__setitem__((0, 1), 5.0),
    "flat": lambda xp, x: x.flat.__setitem__([1, 4], 5.0),
    "view": lambda xp, x: x.view().__setitem__(2, 5.0),
    "reshape": lambda xp, x: x.reshape(3, 2).__setitem__((2, 1), 5.0),
    "sort-view": lambda xp, x: x[::-2].sort(),
    "fill": lambda xp, x: x[1:3].fill(1.5),
    "ascontiguousarray": lambda xp, x: xp.ascontiguousarray(x).__setitem__(0, 5.0),
    "atleast_1d": lambda xp, x: xp.atleast_1d(x).__setitem__(1, 5.0),
}


@pytest.mark.parametrize("name", WRITES)
def test_every_write_is_seen_on_both_devices(name: str, place: Any) -> None:
    host = sample(6, "float64", seed=5)
    host[3] = numpy.nan if name == "nan_to_num" else host[3]
    expected = host.copy()
    WRITES[name](numpy, expected)
    x = place(host)
    WRITES[name](autodev, x)
    check_everywhere(x, expected)


def test_a_write_through_an_exported_host_buffer_is_seen(place: Any) -> None:
    x = place(numpy.arange(6.0))
    if x.location.kind != "cpu":
        pytest.skip("a device array exports a copy")
    numpy.asarray(x[2:])[0] = 50.0
    check_everywhere(x, numpy.array([0.0, 1.0, 50.0, 3.0, 4.0, 5.0]))


def test_a_wrapped_numpy_array_written_behind_autodevs_back() -> None:
    with simulated_gpu():
        for make in (autodev.asarray, autodev.ascontiguousarray, autodev.atleast_1d):
            raw = numpy.arange(4.0)
            x = make(raw)
            with autodev.policy("gpu"):
                x * 1
            raw[0] = 40.0
            check_everywhere(x, raw)


def test_shape_assignment_keeps_mirrors_in_step(place: Any) -> None:
    x = place(numpy.arange(6.0))
    x.shape = (2, 3)
    check_everywhere(x, numpy.arange(6.0).reshape(2, 3))


def test_inputs_returned_as_is_are_the_same_array(device: Any) -> None:
    x = autodev.arange(4.0, device=device)
    assert autodev.ascontiguousarray(x) is x
    assert autodev.nan_to_num(x, copy=False) is x
    assert numpy.ascontiguousarray(numpy.arange(4.0)) is not None  # (NumPy does the same)


# ---------------------------------------------------------------------- raw NumPy arrays

def test_numpy_out_arrays_are_written_and_returned(device: Any) -> None:
    x = autodev.arange(4.0, device=device)
    out = numpy.zeros(4)
    assert autodev.add(x, 1.0, out=out) is out
    numpy.testing.assert_array_equal(out, numpy.arange(4.0) + 1)
    host = numpy.ones(4)
    host += x  # numpy's in-place operator hands autodev an out= tuple of a NumPy array
    numpy.testing.assert_array_equal(host, numpy.arange(4.0) + 1)
    res = numpy.zeros(2)
    assert autodev.arange(4.0, device=device).reshape(2, 2).sum(axis=0, out=res) is res
    numpy.testing.assert_array_equal(res, [2.0, 4.0])


def test_copyto_a_numpy_destination(device: Any) -> None:
    dst = numpy.zeros(3)
    autodev.copyto(dst, autodev.arange(3.0, device=device))
    numpy.copyto(dst, autodev.arange(3.0, device=device) * 2, where=numpy.array([1, 0, 1], bool))
    numpy.testing.assert_array_equal(dst, [0.0, 1.0, 4.0])


def test_numpy_functions_on_a_mix_of_arrays(device: Any) -> None:
    a = sample(4, seed=1)
    b = sample(4, seed=2)
    differential(lambda xp, x: numpy.concatenate([x, b]), a, device=device)
    differential(lambda xp, x: numpy.add(b, x), a, device=device)
    differential(lambda xp, x: b * x - x, a, device=device)


# ---------------------------------------------------------------------- out= elsewhere

def test_out_on_the_device_for_a_function_only_numpy_runs(device: Any) -> None:
    values = numpy.array([1.0, -numpy.inf, numpy.inf, numpy.nan])
    x = autodev.asarray(values).to_device(device)
    out = autodev.zeros(4, dtype=bool).to_device(device)
    assert autodev.isposinf(x, out=out) is out
    numpy.testing.assert_array_equal(to_numpy(out), numpy.isposinf(values))
    assert out.location == device


def test_outputs_given_by_position_are_written_returned_and_counted(device: Any) -> None:
    """``sin(x, out)``/``add(x, 1, out)``: NumPy returns ``out``; the write moves the
    version of its storage (a mirror of it must not be read again)."""
    x = autodev.asarray(numpy.arange(4.0)).to_device(device)
    out = autodev.zeros(4).to_device(device)
    _ = out[1:3]  # a view: ``out`` has a storage whose version a write moves
    version = out._storage.version
    assert autodev.sin(x, out) is out
    assert out._storage.version > version
    numpy.testing.assert_array_equal(to_numpy(out), numpy.sin(numpy.arange(4.0)))
    assert autodev.add(x, 1.0, out) is out
    numpy.testing.assert_array_equal(to_numpy(out), numpy.arange(4.0) + 1)
    frac = autodev.zeros(4).to_device(device)
    got = autodev.modf(x + 0.5, frac)  # one of two outputs by position
    assert got[0] is frac and type(got[1]) is autodev.ndarray
    numpy.testing.assert_array_equal(to_numpy(frac), numpy.full(4, 0.5))


@pytest.mark.parametrize("sim", [False, True], ids=["no-gpu", "sim"])
def test_outputs_given_by_position_on_the_fast_paths(sim: bool) -> None:
    """The same with arrays autodev places (tiny host calls take the fast paths)."""
    with simulated_gpu() if sim else contextlib.nullcontext():
        x, out = autodev.arange(4.0), autodev.zeros(4)
        assert autodev.sin(x, out) is out and autodev.add(x, 1.0, out) is out
        numpy.testing.assert_array_equal(to_numpy(out), numpy.arange(4.0) + 1)


def test_two_outputs_into_device_arrays(device: Any) -> None:
    x = autodev.asarray(numpy.array([1.5, -2.25])).to_device(device)
    frac, whole = autodev.zeros(2).to_device(device), autodev.zeros(2).to_device(device)
    got = autodev.modf(x, out=(frac, whole))
    assert got[0] is frac and got[1] is whole
    numpy.testing.assert_array_equal(to_numpy(frac), [0.5, -0.25])
    numpy.testing.assert_array_equal(to_numpy(whole), [1.0, -2.0])


# ---------------------------------------------------------------------- mixed devices

@pytest.mark.parametrize("policy", ["auto", "cpu", "gpu"])
def test_inputs_on_two_devices(policy: str) -> None:
    a, b = sample((3, 3), seed=3), sample((3, 3), seed=4)
    with simulated_gpu():
        x = autodev.asarray(a)
        y = autodev.asarray(b).to_device("sim:0")
        with autodev.policy(policy):
            assert_same(x + y, a + b)
            assert_same(y @ x, b @ a)
            assert_same(autodev.where(x > y, x, y), numpy.where(a > b, a, b))
            assert_same(autodev.concatenate([x, y]), numpy.concatenate([a, b]))
            x[0] = y[1]
            a[0] = b[1]
            assert_same(x - 0, a - 0)


# ---------------------------------------------------------------------- semantics

def test_comparison_with_a_string(device: Any) -> None:
    differential(lambda xp, x: x == "a", sample(3), device=device, resident=False)
    differential(lambda xp, x: "a" != x, sample(3), device=device, resident=False)
    error_parity(lambda xp, x: x < "a", sample(3), device=device)


def test_comparison_with_none(device: Any) -> None:
    differential(lambda xp, x: x == None, sample(3), device=device, resident=False)  # noqa: E711
    differential(lambda xp, x: None != x, sample(3), device=device, resident=False)  # noqa: E711
    error_parity(lambda xp, x: x + None, sample(3), device=device)


def test_asarray_refuses_a_copy_it_cannot_avoid(device: Any) -> None:
    error_parity(lambda xp, x: xp.asarray(x, dtype="float32", copy=False), sample(3),
                 device=device)


def test_resize_with_a_view_alive_raises_as_numpy() -> None:
    x = autodev.arange(6.0)
    view = x[1:]
    with pytest.raises(ValueError):
        x.resize(8)
    numpy.testing.assert_array_equal(to_numpy(view), numpy.arange(1.0, 6.0))
    y = autodev.arange(3.0)
    y.resize(5)
    numpy.testing.assert_array_equal(to_numpy(y), [0.0, 1.0, 2.0, 0.0, 0.0])


def test_host_scalars_are_numpys_types() -> None:
    with simulated_gpu(), autodev.policy("cpu"):
        x = autodev.arange(4.0)
        assert isinstance(x.sum(), float) and type(x.sum()) is numpy.float64
        assert type(autodev.arange(4).sum()) is numpy.int64
        assert type((autodev.ones(2, dtype="float32") + 1.5).sum()) is numpy.float32
        assert type(autodev.ones(2, dtype=bool).any()) is numpy.bool_
        assert type(autodev.allclose(x, x)) is bool
        assert repr(x.mean()) == repr(numpy.arange(4.0).mean())
        assert (autodev.ones(2, dtype="int8") + numpy.int64(3)).dtype == numpy.int64
        assert (autodev.ones(2, dtype="float32") * numpy.float64(2)).dtype == numpy.float64


@pytest.mark.parametrize("func", [
    lambda xp, x: len(x[0, 0, ...]), lambda xp, x: bool(x), lambda xp, x: list(x[0, 0, ...]),
    lambda xp, x: float(x), lambda xp, x: xp.sum(x, axis=2), lambda xp, x: x[3],
    lambda xp, x: x.reshape(4), lambda xp, x: x @ x[:, :1].T,
], ids=["len-0d", "bool", "iter-0d", "float", "axis", "index", "reshape", "matmul"])
def test_errors_match(func: Any, device: Any) -> None:
    error_parity(func, sample((2, 3)), device=device)


def test_keyword_arguments(device: Any) -> None:
    differential(lambda xp, x: xp.sum(a=x), sample(5), device=device)
    differential(lambda xp, x: xp.mean(a=x, axis=0), sample((2, 3)), device=device)
    differential(lambda xp, x: xp.transpose(a=x), sample((2, 3)), device=device)


@pytest.mark.parametrize("func", [
    lambda xp, x: xp.histogram(x, bins=3),
    lambda xp, x: xp.polyfit(x, 2 * x + 1, 1),
    lambda xp, x: xp.apply_along_axis(lambda r: r.sum(), 0, x.reshape(2, 3)),
    lambda xp, x: xp.piecewise(x, [x < 0.5], [-1.0, 1.0]),
    lambda xp, x: xp.einsum_path("i,i->", x, x)[0],
    lambda xp, x: [(i, float(v)) for i, v in xp.ndenumerate(x)],
    lambda xp, x: [float(v) for v in xp.nditer(x)],
    lambda xp, x: xp.vectorize(lambda v: v + 1)(x),
], ids=["histogram", "polyfit", "apply_along_axis", "piecewise", "einsum_path",
        "ndenumerate", "nditer", "vectorize"])
def test_functions_only_numpy_runs(func: Any, device: Any) -> None:
    expected = func(numpy, sample(6))
    got = func(autodev, autodev.asarray(sample(6)).to_device(device))
    if isinstance(expected, numpy.ndarray) and not isinstance(got, numpy.ndarray):
        assert_same(got, expected)
    elif isinstance(expected, tuple):
        assert_same(got, expected)
    else:
        assert repr(to_numpy(got)) == repr(expected)


def test_pickle_and_copies_of_views(device: Any) -> None:
    host = sample((4, 3), seed=6)
    x = autodev.asarray(host).to_device(device)
    view = x[::2, 1:]
    for clone in (pickle.loads(pickle.dumps(view)), copy.copy(view), copy.deepcopy(view)):
        assert_same(clone, host[::2, 1:])
        clone[0, 0] = 99.0
    assert_same(x, host)  # clones never alias their source
    scalar = pickle.loads(pickle.dumps(x.sum()))
    assert float(scalar) == pytest.approx(host.sum())
