"""The simulated GPU is as strict as CuPy 14, and autodev corrects every difference.

Two halves, one per side of each row of the capability table
(``autodev._capability.table.TABLE``):

- ``test_imitation_fires``: the simulated GPU's module, used directly, refuses what
  CuPy 14.2 refuses (its exception type) or returns what CuPy returns. These fail on
  a simulator that runs NumPy kindly underneath.
- the differential tests below: the same calls through autodev, on the CPU and on the
  simulated GPU, equal NumPy's (value, dtype, shape, exception type). These fail when
  autodev forgets the correction the row declares.
"""

from __future__ import annotations

import fractions
import warnings
from typing import Any, Callable

import numpy
import pytest

import autodev
from autodev._capability.table import TABLE
from autodev.testing import simulated_gpu

from conftest import CUDA_REASON, HAS_CUDA
from diffcheck import differential, error_parity, put

M = numpy.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
V = numpy.array([0.5, 2.0, 1.0, 3.0])
INTS = numpy.array([7, 1, 4, 10, 3, 3])


# ------------------------------------------------------------------ the imitations

@pytest.fixture(params=["sim", pytest.param("cuda", marks=pytest.mark.gpu)])
def sim(request: pytest.FixtureRequest) -> Any:
    """The simulated GPU's backend; on a machine with a GPU also CuPy's own, so that a GPU
    run checks each imitation against the real thing."""
    if request.param == "cuda":
        if not HAS_CUDA:
            pytest.skip(f"CUDA: {CUDA_REASON}")
        from autodev._backends import backend_for

        yield backend_for(autodev.Device("cuda", 0))
        return
    with simulated_gpu() as backend:
        yield backend


def target(sim: Any, name: str) -> Any:
    """What the row ``name`` names on the simulated GPU (function, method or ufunc)."""
    if name.startswith("ndarray."):
        return getattr(sim.from_host(M.copy()), name.removeprefix("ndarray."))
    if name == "ufunc":
        return sim.xp.add
    if name.startswith("ufunc."):
        return getattr(sim.xp.add, name.removeprefix("ufunc."))
    return sim.resolve(name)


def _returns(check: Callable[[Any, Any], bool], call: Callable[[Any], Any]
             ) -> Callable[[Any], None]:
    def probe(sim: Any) -> None:
        assert check(sim, call(sim)), "the imitation did not fire"
    return probe


def _raises(error: type[BaseException], call: Callable[[Any], Any], exact: bool = False
            ) -> Callable[[Any], None]:
    def probe(sim: Any) -> None:
        with pytest.raises(error) as caught:
            call(sim)
        if exact:
            assert type(caught.value) is error, type(caught.value)
    return probe


def _up(sim: Any, x: Any) -> Any:
    return sim.from_host(numpy.array(x))


_device_array = _returns  # readability below: "returns a device array where NumPy has a bool"
#: name -> a call on the raw simulated module that shows the imitation at work.
PROBES: dict[str, Callable[[Any], None]] = {
    "count_nonzero": _returns(lambda s, r: s.is_native(r),
                              lambda s: s.xp.count_nonzero(_up(s, V))),
    "sort": _raises(ValueError, lambda s: s.xp.sort(_up(s, V), kind="quicksort")),
    "argsort": _raises(ValueError, lambda s: s.xp.argsort(_up(s, V), kind="heapsort")),
    "partition": _raises(TypeError, lambda s: s.xp.partition(_up(s, V), numpy.int64(1))),
    "argpartition": _raises(TypeError,
                            lambda s: s.xp.argpartition(_up(s, V), numpy.int64(1))),
    "percentile": _raises(ValueError, lambda s: s.xp.percentile(
        _up(s, INTS), 50, method="closest_observation")),
    "quantile": _returns(lambda s, r: r.dtype.kind == "i",
                         lambda s: s.xp.quantile(_up(s, INTS), 1)),
    **{name: _device_array(lambda s, r: s.is_native(r),
                           lambda s, n=name: getattr(s.xp, n)(_up(s, V), _up(s, V)))
       for name in ("allclose", "array_equal", "array_equiv")},
    "reshape": _raises(TypeError, lambda s: s.xp.reshape(_up(s, V), shape=(2, 2))),
    "take": _returns(lambda s, r: True, lambda s: s.xp.take(_up(s, V), _up(s, [9]))),
    "take_along_axis": _returns(lambda s, r: True, lambda s: s.xp.take_along_axis(
        _up(s, V), _up(s, [9]), axis=0)),
    "choose": _raises(AttributeError, lambda s: s.xp.choose(
        _up(s, [0, 1]), [_up(s, [1, 2]), _up(s, [3, 4])])),
    "outer": _raises(AttributeError, lambda s: s.xp.outer(_up(s, V), [1.0, 2.0])),
    "interp": _raises(AttributeError, lambda s: s.xp.interp(0.5, _up(s, V), _up(s, V))),
    "searchsorted": _raises(NotImplementedError, lambda s: s.xp.searchsorted(
        _up(s, V), numpy.float32(0.5))),  # (numpy.float64 is a Python float: accepted)
    "linalg.pinv": _raises(TypeError, lambda s: s.xp.linalg.pinv(_up(s, M), rcond=None)),
    "linalg.svd": _returns(lambda s, r: type(r) is tuple,
                           lambda s: s.xp.linalg.svd(_up(s, M))),
    **{f"linalg.{n}": _returns(lambda s, r: type(r) is tuple,
                               lambda s, n=n: getattr(s.xp.linalg, n)(_up(s, M)))
       for n in ("eigh", "slogdet", "qr")},
    "linalg.eig": _returns(lambda s, r: r[0].dtype.kind == "c" and type(r) is tuple,
                           lambda s: s.xp.linalg.eig(_up(s, M))),
    "linalg.eigvals": _returns(lambda s, r: r.dtype.kind == "c",
                               lambda s: s.xp.linalg.eigvals(_up(s, M))),
    "scipy.linalg.lu_factor": _raises(RuntimeWarning, lambda s: _singular_lu(s), exact=True),
    # the imitation is "no LinAlgError" (what the result holds is cuSOLVER's business)
    **{f"linalg.{n}": _returns(lambda s, r: True,
                               lambda s, n=n, b=b: getattr(s.xp.linalg, n)(
                                   _up(s, numpy.zeros((2, 2))), *([_up(s, numpy.ones(2))]
                                                                  if b else [])))
       for n, b in (("solve", True), ("inv", False), ("cholesky", False))},
    "scipy.linalg.solve_triangular": _returns(
        lambda s, r: True,
        lambda s: _in_linalg_errors(s, lambda: s.scipy("linalg").solve_triangular(
            _up(s, numpy.zeros((2, 2))), _up(s, numpy.ones(2))))),
    "ndarray.__getitem__": _returns(lambda s, r: float(r.get()[0]) == V[9 % 4],
                                    lambda s: _up(s, V)[_up(s, [9])]),
    "ndarray.take": _returns(lambda s, r: True, lambda s: _up(s, V).take(_up(s, [9]))),
    "ndarray.choose": _raises(AttributeError, lambda s: _up(s, [0, 1]).choose(
        [_up(s, [1, 2]), _up(s, [3, 4])])),
    "ndarray.searchsorted": _raises(NotImplementedError, lambda s: _up(s, V).searchsorted(
        numpy.float32(0.5))),
    "dot": _raises(TypeError, lambda s: s.xp.dot(_up(s, V), 2.0)),
    "ndarray.astype": _raises(TypeError, lambda s: _up(s, V).astype("f4", casting="unsafe")),
    "ndarray.sort": _raises(NotImplementedError, lambda s: _up(s, M).T.sort()),
    "ndarray.partition": _raises(TypeError, lambda s: _up(s, V).partition(numpy.int64(1))),
    "ndarray.argsort": _raises(ValueError, lambda s: _up(s, V).argsort(kind="quicksort")),
    "ndarray.argpartition": _raises(TypeError,
                                    lambda s: _up(s, V).argpartition(numpy.int64(1))),
    "ndarray.dot": _raises(TypeError, lambda s: _up(s, V).dot(2.0)),
    "linspace": _returns(lambda s, r: type(r[1]) is float,
                         lambda s: s.xp.linspace(0.0, 1.0, 5, retstep=True)),
    "diag": _returns(lambda s, r: r.base is None, lambda s: s.xp.diag(_up(s, M))),
    "ndarray.conjugate": _raises(TypeError, lambda s: _up(s, V).conjugate(_up(s, V))),
    **{n: _raises(TypeError, lambda s, n=n: s.resolve(n)(_up(s, V), *(1.0,) * (n == "full_like"),
                                                         subok=False))
       for n in ("empty_like", "zeros_like", "ones_like", "full_like")},
    "ufunc": _raises(TypeError, lambda s: s.xp.add(_up(s, V), [1.0, 2.0, 3.0, 4.0])),
    "ufunc.reduce": _raises(NotImplementedError, lambda s: s.xp.maximum.reduce(_up(s, V))),
    "ufunc.accumulate": _raises(NotImplementedError,
                                lambda s: s.xp.minimum.accumulate(_up(s, V))),
    "ufunc.reduceat": _raises(NotImplementedError, lambda s: s.xp.multiply.reduceat(
        _up(s, V), _up(s, [0, 2]))),
    "ufunc.at": _raises(NotImplementedError, lambda s: s.xp.multiply.at(
        _up(s, V), _up(s, [0]), 2.0)),
}


def _in_linalg_errors(sim: Any, call: Callable[[], Any]) -> Any:
    with sim.linalg_errors():
        return call()


def _singular_lu(sim: Any) -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sim.scipy("linalg").lu_factor(_up(sim, numpy.zeros((2, 2))))


def _imitated() -> list[str]:
    return sorted(n for n, row in TABLE.items() if row.imitation is not None)


def test_every_imitation_has_a_probe() -> None:
    assert sorted(set(_imitated()) - set(PROBES)) == []


@pytest.mark.parametrize("name", _imitated())
def test_imitation_fires(sim: Any, name: str) -> None:
    PROBES[name](sim)


@pytest.mark.parametrize("name,keyword", [(n, k) for n, row in TABLE.items()
                                          for k in row.numpy_only])
def test_numpy_only_keyword_refused(sim: Any, name: str, keyword: str) -> None:
    """Each keyword CuPy lacks is a TypeError naming it on the sim (the check runs first)."""
    # einsum reads its operands before its keywords (CuPy's takes **kwargs)
    args = ("i", _up(sim, V)) if name == "einsum" else ()
    with pytest.raises(TypeError, match=f"'{keyword}'"):
        target(sim, name)(*args, **{keyword: None})


def test_missing_names_are_missing(sim: Any) -> None:
    for name, row in TABLE.items():
        if row.cupy is None:
            assert sim.resolve(name) is None, name


@pytest.mark.parametrize("dtype", ["U3", "S3", "M8[s]", "m8[s]", "O", "longdouble"])
def test_upload_refuses_what_cupy_asarray_refuses(sim: Any, dtype: str) -> None:
    """``cupy.asarray`` refuses strings, datetimes, objects and long doubles:
    ValueError('Unsupported dtype ...')."""
    with pytest.raises(ValueError, match="Unsupported dtype"):
        sim.from_host(numpy.zeros(3, dtype))


@pytest.mark.parametrize("dtype", ["i4,f8", "V3"])
def test_structured_data_stays_on_the_host(dtype: str) -> None:
    """CuPy 14.2 uploads structured and void arrays as raw bytes (seen on CUDA), but none
    of its functions computes on them: no GPU backend claims the dtype, so autodev keeps
    such arrays on the host, and the simulated GPU refuses their upload to prove it."""
    with simulated_gpu() as sim:
        assert not sim.supports_dtype(numpy.dtype(dtype))
        with pytest.raises(ValueError, match="Unsupported dtype"):
            sim.from_host(numpy.zeros(3, dtype))
        with autodev.policy("gpu"):
            copied = autodev.zeros(3, dtype).copy()
        assert copied.location == "cpu"
        numpy.testing.assert_array_equal(copied.get(), numpy.zeros(3, dtype))


@pytest.mark.parametrize("make", [
    lambda xp: xp.array(["Galahad", "Arthur", "zebra"]),
    lambda xp: xp.array([b"ab", b"c"]),
    lambda xp: xp.array([("a", 1), ("b", 255), ("c", 3)], dtype=[("n", "U5"), ("v", ">i2")]),
    lambda xp: xp.array([1, None, 2.5], dtype=object),
    lambda xp: xp.asarray(numpy.arange(3).astype("M8[s]")),
    lambda xp: xp.array(numpy.arange(3.0, dtype=numpy.longdouble)),
    lambda xp: xp.zeros(3, numpy.longdouble), lambda xp: xp.ones((2, 2), dtype="U3"),
    lambda xp: xp.full(3, "ab"), lambda xp: xp.eye(2, dtype=object),
    lambda xp: xp.zeros(2, "i4,f8"), lambda xp: xp.arange(3, dtype=numpy.longdouble),
], ids=["str", "bytes", "structured", "object", "datetime", "longdouble", "zeros-longdouble",
        "ones-str", "full-str", "eye-object", "zeros-structured", "arange-longdouble"])
def test_arrays_a_gpu_cannot_hold_are_made_on_the_host(device: Any, make: Any) -> None:
    """Under policy gpu a creation call whose data the GPU cannot hold (what cupy.asarray
    refuses) keeps it on the host, where NumPy computes with it."""
    got = make(autodev)
    assert got.location == autodev.Device("cpu")
    numpy.testing.assert_array_equal(got.get(), make(numpy))
    assert got.get().dtype == make(numpy).dtype


@pytest.mark.parametrize("call", [
    lambda xp: xp.nanmedian(numpy.longdouble(1.5)),
    lambda xp: xp.nanmedian(numpy.timedelta64(3, "s")),
    lambda xp: xp.median(numpy.arange(4, dtype=numpy.longdouble)),
    lambda xp: xp.clip(numpy.arange(4, dtype=numpy.longdouble), 1, 2),
    lambda xp: xp.max([numpy.datetime64("2020-01-01"), numpy.datetime64("2021-01-01")]),
    lambda xp: xp.argmin((numpy.timedelta64(3, "s"), numpy.timedelta64(1, "s"))),
    lambda xp: xp.quantile(xp.arange(8), fractions.Fraction(1, 2)),
    lambda xp: xp.arange(6).reshape(2, 3).astype(object),
    lambda xp: xp.arange(3).astype("U3"),
    lambda xp: xp.arange(3.0).astype(numpy.longdouble),
], ids=["nanmedian-longdouble", "nanmedian-timedelta", "median-longdouble", "clip-longdouble",
        "max-list-of-datetimes", "argmin-tuple-of-timedeltas", "quantile-Fraction",
        "astype-object", "astype-str", "astype-longdouble"])
def test_numpy_operands_a_gpu_cannot_hold_keep_the_call_on_the_host(device: Any,
                                                                  call: Any) -> None:
    """A NumPy array or scalar argument of a dtype no GPU holds would be uploaded (and
    refused, as by cupy.asarray): the call runs on the host, as NumPy's."""
    got, expected = call(autodev), call(numpy)
    if isinstance(expected, numpy.ndarray):
        assert type(got) is autodev.ndarray and got.location == autodev.Device("cpu")
        got = got.get()
    assert type(got) is type(expected)
    numpy.testing.assert_array_equal(got, expected)
    assert numpy.asarray(got).dtype == numpy.asarray(expected).dtype


@pytest.mark.parametrize("value", [numpy.array(["2", "-3", "-1"]),
                                   numpy.array([1.5, 2.5, 3.5], dtype=numpy.longdouble)])
def test_assigning_values_a_gpu_cannot_hold_casts_them_as_numpy(device: Any,
                                                                value: Any) -> None:
    """``a[:3] = strings`` casts as NumPy's setitem does (unsafely), on the host where the
    GPU cannot hold the value."""
    def assign(xp: Any, a: Any) -> Any:
        a[:3] = value
        a[[4, 3]] = value[:2]
        return a
    differential(assign, numpy.arange(5), device=device)


def test_ufunc_cast_error_is_plain_type_error(sim: Any) -> None:
    with pytest.raises(TypeError) as caught:
        sim.xp.add(_up(sim, V), 1.5, out=_up(sim, INTS[:4]))
    assert type(caught.value) is TypeError


def test_ufunc_keywords_refused(sim: Any) -> None:
    for keyword in ("where", "order", "subok", "signature"):
        with pytest.raises(TypeError, match="Wrong arguments"):
            sim.xp.add(_up(sim, V), 1.0, **{keyword: None})


def test_ufunc_at_dtype_refused(sim: Any) -> None:
    with pytest.raises(TypeError):
        sim.xp.subtract.at(_up(sim, V), _up(sim, [0]), 1.0)


# ------------------------------------------------------------------ autodev corrects them

@pytest.mark.parametrize("casting", ["unsafe", "same_kind", "safe", "no", "equiv"])
def test_astype_casting(device: Any, casting: str) -> None:
    if casting in ("unsafe", "same_kind"):
        differential(lambda xp, x: x.astype(xp.float32, casting=casting), V, device=device)
    else:
        error_parity(lambda xp, x: x.astype(xp.int32, casting=casting), V, device=device)
    differential(lambda xp, x: x.astype(xp.int64), V, device=device)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.maximum.reduce(x),
    lambda xp, x: xp.minimum.accumulate(x),
    lambda xp, x: xp.multiply.reduceat(x, [0, 2]),
    lambda xp, x: xp.logical_and.reduce(x > 1),
    lambda xp, x: xp.add.reduce(x, where=x > 1),
    lambda xp, x: xp.add.reduce(x, initial=2.0),
], ids=["maximum.reduce", "minimum.accumulate", "multiply.reduceat", "logical_and.reduce",
        "add.reduce-where", "add.reduce-initial"])
def test_ufunc_methods_cupy_lacks(device: Any, call: Any) -> None:
    differential(call, V, device=device, resident=False)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.add.reduce(x),
    lambda xp, x: xp.multiply.accumulate(x),
    lambda xp, x: xp.add.reduceat(x, [0, 2]),
], ids=["add.reduce", "multiply.accumulate", "add.reduceat"])
def test_ufunc_methods_cupy_has(device: Any, call: Any) -> None:
    differential(call, V, device=device)


@pytest.mark.parametrize("name,dtype", [("maximum", "f8"), ("add", "f8"), ("add", "i2"),
                                        ("subtract", "f8"), ("subtract", "i4"),
                                        ("bitwise_or", "i8"), ("multiply", "i8")])
def test_ufunc_at(device: Any, name: str, dtype: str) -> None:
    host = numpy.arange(6).astype(dtype)
    want = host.copy()
    getattr(numpy, name).at(want, [0, 2, 2], 3)
    got = put(host, device)
    getattr(autodev, name).at(got, [0, 2, 2], 3)
    assert got.location == device
    numpy.testing.assert_array_equal(got.get(), want)
    assert got.dtype == want.dtype


@pytest.mark.parametrize("keyword", [
    {"where": V > 1}, {"order": "F"}, {"subok": False}, {"signature": (None, None, None)},
], ids=["where", "order", "subok", "signature"])
def test_ufunc_keywords_cupy_lacks(device: Any, keyword: dict[str, Any]) -> None:
    def call(xp: Any, x: Any) -> Any:
        out = xp.zeros_like(x)
        kw = {k: (xp.asarray(v) if isinstance(v, numpy.ndarray) else v)
              for k, v in keyword.items()}
        return xp.add(x, 1.0, out=out, **kw)

    differential(call, V, device=device, resident=False)


def test_ufunc_output_cast_error_type(device: Any) -> None:
    error_parity(lambda xp, x, i: xp.add(x, 1.5, out=i), V, INTS[:4].copy(), device=device)

    def inplace(xp: Any, i: Any) -> Any:
        i += 1.5
    error_parity(inplace, INTS.copy(), device=device)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.add(x, [1.0, 2.0, 3.0, 4.0]),
    lambda xp, x: xp.multiply((1, 2, 3, 4), x),
    lambda xp, x: xp.outer(x, [1.0, 2.0]),
    lambda xp, x: xp.outer(2.0, x),
    lambda xp, x: xp.interp(0.7, xp.sort(x), x),
    lambda xp, x: xp.interp([0.7, 1.5], xp.sort(x), x),
    lambda xp, x: xp.searchsorted(xp.sort(x), numpy.float32(1.5)),
    lambda xp, x: xp.searchsorted(xp.sort(x), [0.6, 2.5]),
    lambda xp, x: xp.choose(xp.asarray([0, 1, 1, 0]), [x, 2 * x]),
    lambda xp, x: xp.choose(xp.asarray([0, 1, 1, 0]), (x, 7.0)),
    lambda xp, x: xp.sort(x).searchsorted(numpy.int32(1)),
    lambda xp, x: xp.asarray([0, 1, 1, 0]).choose([x, 2 * x]),
    lambda xp, x: x.take([0, 3, -1]),
], ids=["ufunc-list", "ufunc-tuple", "outer-list", "outer-scalar", "interp-scalar",
        "interp-list", "searchsorted-numpy-scalar", "searchsorted-list", "choose-list",
        "choose-broadcast", "method-searchsorted", "method-choose", "method-take"])
def test_operands_cupy_refuses(device: Any, call: Any) -> None:
    differential(call, V, device=device)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.asarray([0, 1, 1, 0]).choose(x, 2 * x, 3 * x),
    lambda xp, x: xp.asarray([0, 1, 2, 0]).choose(x, 2 * x, [5.0, 6.0, 7.0, 8.0], mode="clip"),
    lambda xp, x: xp.choose(xp.asarray([0]), (1000, xp.asarray([1], dtype=xp.uint8))),
    lambda xp, x: xp.choose(xp.asarray([0]), (-1, xp.asarray([1], dtype=xp.uint8))),
    lambda xp, x: xp.choose(xp.asarray([0]), (1.0, xp.asarray([3], dtype=xp.float32))),
    lambda xp, x: xp.choose(xp.asarray([0]), (1.0, numpy.float32(3))),
], ids=["method-positional", "method-positional-mode", "python-int-uint8",
        "negative-int-uint8", "python-float-float32", "numpy-float32-scalar"])
def test_choose_as_numpys(device: Any, call: Any) -> None:
    """NumPy's ``a.choose(c0, c1, ...)`` form, and the choices' common dtype as NumPy's
    ``result_type`` gives it (a Python scalar is weak)."""
    with numpy.errstate(over="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        differential(call, V, device=device)


def test_choose_of_choices_without_common_dtype(device: Any) -> None:
    error_parity(lambda xp, x: x.choose(numpy.void(0), [x]), V, device=device)


@pytest.mark.parametrize("view", [lambda a: a.T, lambda a: a[:, ::2], lambda a: a[::2]],
                         ids=["transposed", "strided-columns", "strided-rows"])
def test_inplace_sort_non_contiguous(device: Any, view: Any) -> None:
    host = numpy.random.default_rng(1).random((4, 6))
    want = host.copy()
    view(want).sort()
    got = put(host, device)
    view(got).sort()
    numpy.testing.assert_array_equal(got.get(), want)
    want2 = host.copy()
    view(want2).partition(numpy.int64(1), axis=0)
    got2 = put(host, device)
    view(got2).partition(numpy.int64(1), axis=0)
    numpy.testing.assert_array_equal(numpy.sort(got2.get(), axis=0)[:2],
                                     numpy.sort(want2, axis=0)[:2])
    numpy.testing.assert_array_equal(numpy.partition(view(got2.get()), 1, axis=0)[1],
                                     view(want2)[1])


@pytest.mark.parametrize("kth", [numpy.int64(2), (numpy.int32(1), 3), 2])
def test_partition_kth_numpy_ints(device: Any, kth: Any) -> None:
    host = numpy.array([5.0, 1.0, 4.0, 2.0, 3.0, 0.5])
    for name in ("partition", "argpartition"):
        got = getattr(autodev, name)(put(host, device), kth)
        want = getattr(numpy, name)(host, kth)
        ks = (kth,) if numpy.ndim(kth) == 0 else kth
        for k in ks:
            assert got.get()[int(k)] == want[int(k)]
        method = getattr(put(host, device), name)
        result = method(kth)
        if name == "argpartition":
            assert result.get()[int(ks[0])] == want[int(ks[0])]


def test_count_nonzero_is_an_int(device: Any) -> None:
    differential(lambda xp, x: xp.count_nonzero(x > 1), V, device=device)
    differential(lambda xp, x: xp.count_nonzero(x.reshape(2, 2) > 1, axis=0), V,
                 device=device)


def test_clip_one_bound(device: Any) -> None:
    error_parity(lambda xp, x: xp.clip(x, a_max=1.5), V, device=device)
    differential(lambda xp, x: xp.clip(x, max=1.5), V, device=device, resident=False)
    differential(lambda xp, x: x.clip(max=1.5), V, device=device)
    differential(lambda xp, x: xp.clip(x, 1.0, None), V, device=device)


def test_dot_with_a_scalar(device: Any) -> None:
    for x in (V, V.astype(numpy.float32)):
        differential(lambda xp, x: x.dot(2.0), x, device=device)
        differential(lambda xp, x: x.dot(x), x, device=device)
        differential(lambda xp, x: xp.dot(x, 2.0), x, device=device)
        differential(lambda xp, x: xp.dot(3, x), x, device=device)
        differential(lambda xp, x: xp.dot(x, numpy.float64(2.0)), x, device=device)
        differential(lambda xp, x: xp.dot(x, [1.0, 2.0, 3.0, 4.0]), x, device=device)


def test_lu_factor_warns_linalg_warning(device: Any) -> None:
    from scipy.linalg import LinAlgWarning

    import autodev.scipy.linalg

    with pytest.warns(LinAlgWarning, match="exactly zero"):
        autodev.scipy.linalg.lu_factor(put(numpy.zeros((3, 3)), device))


def test_pinv_rcond_none(device: Any) -> None:
    differential(lambda xp, m: xp.linalg.pinv(m, rcond=None), M, device=device)


# ------------------------------------------------------------------ simulator bugs

@pytest.mark.parametrize("key", [
    (Ellipsis, [0, -1]), (None, [-1]), ([-1], Ellipsis, [0]), (slice(None), [-1, 0]),
    ([[]],),
], ids=["ellipsis-columns", "none-rows", "rows-ellipsis-columns", "slice-columns", "empty"])
def test_negative_index_arrays_on_their_axis(device: Any, key: tuple[Any, ...]) -> None:
    host = numpy.arange(24.0).reshape(2, 3, 4)  # unequal axes: a wrong axis shows
    differential(lambda xp, a: a[key if len(key) > 1 else key[0]], host, device=device)


def test_empty_list_index(device: Any) -> None:
    differential(lambda xp, a: a[[]], V, device=device)


@pytest.mark.parametrize("method", ["linear", "midpoint", "hazen", "weibull", "median_unbiased",
                                    "normal_unbiased", "inverted_cdf", "lower", "nearest",
                                    "closest_observation"])
def test_quantile_of_integers_with_an_integer_q(device: Any, method: str) -> None:
    differential(lambda xp, x: xp.quantile(x, 1, method=method), INTS, device=device,
                 resident=False)
    differential(lambda xp, x: xp.quantile(x, numpy.array([0, 1]), method=method), INTS,
                 device=device, resident=False)
    differential(lambda xp, x: xp.percentile(x, 37.5, method=method), INTS, device=device,
                 resident=False)


def test_percentile_of_a_list_of_q(device: Any) -> None:
    differential(lambda xp, x: xp.percentile(x, [2.5, 97.5]), V, device=device)
    differential(lambda xp, x: xp.quantile(x, (0.25, 0.5)), INTS, device=device)


def test_dlpack_device_is_not_the_host(sim: Any) -> None:
    x = sim.from_host(V.copy())
    assert x.__dlpack_device__()[0] != 1  # kDLCPU


# ------------------------------------------------------------------ the declared safety net

def test_not_implemented_runs_on_the_cpu_counted_and_traced() -> None:
    x = numpy.arange(6.0)
    with simulated_gpu() as sim, autodev.policy("gpu"), autodev.trace() as records:
        a = put(x, sim.device)
        sim.inject_fault("unimplemented")
        with pytest.warns(autodev.FallbackWarning, match="not implemented"):
            got = autodev.cumsum(a)
    numpy.testing.assert_array_equal(got.get(), numpy.cumsum(x))
    assert str(got.location) == "cpu"
    stats = autodev.stats()
    assert stats["fallbacks"] == 1
    assert stats["fallback_reasons"] == {"cumsum: not implemented": 1}
    assert records[-1].device == "cpu" and "does not implement" in records[-1].reason


def test_not_implemented_raises_under_fallback_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._config import ENV

    monkeypatch.setattr(ENV, "fallback", "raise")
    with simulated_gpu() as sim, autodev.policy("gpu"):
        a = put(numpy.arange(6.0), sim.device)
        sim.inject_fault("unimplemented")
        with pytest.raises(NotImplementedError):
            autodev.cumsum(a)


def test_other_gpu_errors_propagate() -> None:
    with simulated_gpu() as sim, autodev.policy("gpu"):
        a = put(numpy.arange(6.0), sim.device)
        with pytest.raises(ValueError):
            autodev.sort(a, kind="nonsense")  # NumPy's own error, not a fallback
    assert autodev.stats()["fallbacks"] == 0


# ------------------------------------------------------------------ sparse

def _sparse_host(fmt: str, array: bool) -> Any:
    import scipy.sparse

    m = scipy.sparse.random(8, 6, density=0.4, format=fmt, random_state=3)
    return scipy.sparse.csr_array(m).asformat(fmt) if array else m


@pytest.mark.parametrize("fmt", ["coo", "dia"])
def test_sim_sparse_lacks_max_min(sim: Any, fmt: str) -> None:
    import autodev.scipy.sparse  # noqa: F401  (its capability table teaches the sim)

    # uploaded in its own format: cupyx converts csr to coo but not to dia
    # (NotImplementedError, seen on CUDA)
    matrix = getattr(sim.scipy("sparse"), f"{fmt}_matrix")(_sparse_host(fmt, False))
    for name in ("max", "min", "argmax", "argmin"):
        with pytest.raises(AttributeError):
            getattr(matrix, name)


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dia"])
@pytest.mark.parametrize("array", [False, True], ids=["matrix", "array"])
def test_sparse_max_min_every_format(device: Any, fmt: str, array: bool) -> None:
    from autodev.scipy import sparse

    host = _sparse_host("csr", array).asformat(fmt)
    cls = getattr(sparse, f"{fmt}_{'array' if array else 'matrix'}")
    a = cls(host)
    if device.kind != "cpu":
        a = a.to_device(device)
    if fmt == "dia":  # SciPy's DIA has neither: the same AttributeError everywhere
        for name in ("max", "min"):
            with pytest.raises(AttributeError):
                getattr(a, name)()
        return
    for name in ("max", "min"):
        got, want = getattr(a, name)(), getattr(host, name)()
        assert float(got) == float(want)
        got, want = getattr(a, name)(axis=0), getattr(host, name)(axis=0)
        numpy.testing.assert_array_equal(numpy.asarray(got.toarray() if hasattr(
            got, "toarray") else got.get()), numpy.asarray(want.toarray()))


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dia"])
def test_sparse_array_stays_an_array_on_the_device(device: Any, fmt: str) -> None:
    from autodev.scipy import sparse

    host = _sparse_host("csr", True).asformat(fmt)
    a = getattr(sparse, f"{fmt}_array")(host)
    if device.kind != "cpu":
        a = a.to_device(device)
    got, want = a.sum(axis=0), host.sum(axis=0)
    assert got.shape == want.shape == (6,)
    numpy.testing.assert_allclose(got.get(), want)


# ------------------------------------------------------------------ an older CuPy

class _Lacking:
    """A GPU backend whose SciPy-like modules and functions are all missing (as an older
    CuPy, or a cupyx module whose CUDA library does not load)."""

    is_gpu = True

    def __init__(self, backend: Any) -> None:
        self._backend = backend
        self.xp = type("xp", (), {"linalg": type("linalg", (), {})})()

    def resolve(self, path: str) -> None:
        return None

    def scipy(self, name: str) -> None:
        return None

    def is_native(self, obj: Any) -> bool:
        return False


def _scipy_specs() -> list[Any]:
    from autodev.scipy import fft, linalg, signal
    from autodev.scipy.sparse import linalg as splinalg

    return [spec for module in (fft, linalg, signal, splinalg)
            for spec in module.SPECS.values() if getattr(spec, "gpu_impl", None) is not None]


@pytest.mark.parametrize("spec", _scipy_specs(), ids=lambda spec: spec.name)
def test_gpu_factories_decline_what_the_backend_lacks(sim: Any, spec: Any) -> None:
    """A factory returns None (the call runs on the CPU), never a function calling None."""
    assert spec.gpu_impl(_Lacking(sim)) is None


# ------------------------------------------------------------------ the table is read-only

def test_specs_are_immutable_once_built() -> None:
    from autodev._namespace import SPECS, UFUNCS

    for spec in (SPECS["sum"], SPECS["linalg.diagonal"], UFUNCS["add"]._spec,
                 UFUNCS["add"]._methods["reduce"]):
        with pytest.raises(AttributeError, match="immutable"):
            spec.gpu_ok = None
        with pytest.raises(AttributeError, match="immutable"):
            spec.where = "cpu"
    with pytest.raises(TypeError):
        TABLE["sum"] = TABLE["prod"]  # type: ignore[index]
    with pytest.raises(AttributeError):
        TABLE["sum"].numpy_only = ()  # type: ignore[misc]


def test_matmul_into_out(device: Any) -> None:
    def call(xp: Any, m: Any) -> Any:
        out = xp.zeros_like(m)
        xp.matmul(m, m, out=out)
        n = m.copy()
        n @= m
        return out, n

    differential(call, M, device=device)
    error_parity(lambda xp, m, i: xp.matmul(m, m, out=i), M, numpy.zeros((3, 3), int),
                 device=device)


@pytest.mark.parametrize("mode", ["raise", "wrap", "clip"])
def test_take_method_modes(device: Any, mode: str) -> None:
    if mode == "raise":
        error_parity(lambda xp, x: x.take([0, 9]), V, device=device)
    else:
        differential(lambda xp, x: x.take([0, 9, -7], mode=mode), V, device=device)


# ------------------------------------------------------------------ host operands in general

@pytest.mark.parametrize("call", [
    lambda xp, x: xp.dot(x, [1.0, 2.0, 3.0, 4.0]),
    lambda xp, x: xp.isin(x, [1.0, 3.0]),
    lambda xp, x: xp.where(x > 1, x, [9.0, 8.0, 7.0, 6.0]),
    lambda xp, x: xp.allclose(x, [0.5, 2.0, 1.0, 3.0]),
    lambda xp, x: xp.clip(x, [0.0, 2.5, 0.0, 0.0], 2.0),
    lambda xp, x: xp.append(x, [1.0, 2.0]),
    lambda xp, x: xp.digitize(x, [1.0, 2.5]),
    lambda xp, x: xp.convolve(x, [1.0, 1.0]),
    lambda xp, x: xp.average(x, weights=[1.0, 2.0, 3.0, 4.0]),
    lambda xp, x: xp.isclose(x, numpy.float64(2.0)),
    lambda xp, x: xp.dot(x, numpy.float32(2.0)),
    lambda xp, x: xp.linalg.solve(xp.asarray(M), [1.0, 2.0, 3.0]),
    lambda xp, x: xp.cross(x[:3], (1.0, 0.0, 0.0)),
], ids=["dot", "isin", "where", "allclose", "clip", "append", "digitize", "convolve",
        "average-weights", "isclose-numpy-scalar", "dot-numpy-scalar", "solve", "cross"])
def test_host_operands_become_device_arrays(device: Any, call: Any) -> None:
    differential(call, V, device=device)


@pytest.mark.parametrize("call", [
    lambda xp, x: xp.isin(x, [1.0]),
    lambda xp, x: xp.dot(x, [1.0, 2.0, 3.0, 4.0]),
], ids=["isin", "dot"])
def test_sim_refuses_host_operands(sim: Any, call: Any) -> None:
    """The sim raises AttributeError; CuPy raises that or its own TypeError/ValueError.
    (CuPy 14.2's ``append`` takes a list, seen on CUDA; autodev converts it anyway.)"""
    refused = (AttributeError, TypeError, ValueError, NotImplementedError)
    with pytest.raises(refused):
        call(sim.xp, _up(sim, V))


# ------------------------------------------------------------------ cupyx.scipy keywords

@pytest.mark.parametrize("call", [
    lambda sp, x: sp.linalg.lu(x, p_indices=False),
    lambda sp, x: sp.fft.dct(x, orthogonalize=None),
    lambda sp, x: sp.fft.fft(x, workers=2),
    lambda sp, x: sp.fft.rfftn(x, workers=1),
], ids=["lu-p_indices", "dct-orthogonalize", "fft-workers", "rfftn-workers"])
def test_scipy_defaults_cupyx_lacks(device: Any, call: Any) -> None:
    """Keywords cupyx lacks, given at SciPy's default: dropped before cupyx sees them."""
    import scipy

    import autodev.scipy as asp
    import autodev.scipy.fft  # noqa: F401
    import autodev.scipy.linalg  # noqa: F401

    want = call(scipy, M)
    got = call(asp, put(M, device))
    for g, w in zip(got if isinstance(want, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        assert g.device == device
        numpy.testing.assert_allclose(g.get(), w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("casting", ["unsafe", "same_kind", "safe"])
def test_sparse_astype_casting(device: Any, casting: str) -> None:
    from autodev.scipy import sparse

    host = _sparse_host("csr", False)
    a = sparse.csr_matrix(host)
    if device.kind != "cpu":
        a = a.to_device(device)
    if casting == "safe":
        with pytest.raises(TypeError):
            host.astype(numpy.float32, casting=casting)
        with pytest.raises(TypeError):
            a.astype(numpy.float32, casting=casting)
        return
    got, want = a.astype(numpy.float32, casting=casting), host.astype(numpy.float32,
                                                                       casting=casting)
    assert got.dtype == want.dtype
    numpy.testing.assert_allclose(got.toarray().get() if hasattr(got.toarray(), "get")
                                  else got.toarray(), want.toarray())


def test_sim_sparse_astype_refuses_casting(sim: Any) -> None:
    import autodev.scipy.sparse  # noqa: F401  (its capability table teaches the sim)

    matrix = sim.scipy("sparse").csr_matrix(_sparse_host("csr", False))
    with pytest.raises(TypeError):
        matrix.astype(numpy.float32, casting="unsafe")


def test_scipy_special_ufunc_list_operand(device: Any) -> None:
    import scipy.special

    import autodev.scipy.special

    x = numpy.array([0.5, 2.0, 1.5, 3.0])
    want = scipy.special.beta(x, [1.0, 2.0, 3.0, 4.0])
    got = autodev.scipy.special.beta(put(x, device), [1.0, 2.0, 3.0, 4.0])
    assert got.device == device
    numpy.testing.assert_allclose(got.get(), want, rtol=1e-12)
