"""The array-API face (``x.__array_namespace__()``) against NumPy, on every device.

The face has the standard's semantics where they differ from NumPy's (0-d arrays,
sorted ``unique_*``, ``descending=``, ``astype``, ``device=``), NumPy's values
everywhere, and keeps results where their inputs live. ``import autodev as np``
stays NumPy. The conformance suite itself runs in CI (.ci/array-api-tests).
"""

from __future__ import annotations

import inspect
import subprocess
import sys

import numpy
import pytest

import autodev
import autodev.array_api as xp
from autodev._namespace import DIRECT
from autodev.testing import simulated_gpu, to_numpy


def values(seed: int = 0, n: int = 12) -> numpy.ndarray:
    """Floats with repeats, in no particular order."""
    return numpy.random.default_rng(seed).integers(0, 5, n).astype(numpy.float64)


def put(a: numpy.ndarray, device) -> autodev.ndarray:
    return autodev.asarray(a, device=device)


def check(result, expected, device) -> None:
    """``result`` is an autodev array on ``device`` equal to NumPy's ``expected``.

    A 0-d result of a reduction may be on the host whatever ``device`` is: the NumPy
    face gives NumPy scalars, which live on the host (docs/guide.md), and the face makes
    them 0-d arrays there; its placement is the input's all the same.
    """
    assert type(result) is autodev.ndarray
    if result.ndim == 0 and result.device == "auto":
        assert result.location in (device, "cpu")
    else:
        assert result.location == device
    expected = numpy.asarray(expected)
    assert result.shape == expected.shape and result.dtype == expected.dtype
    numpy.testing.assert_array_equal(to_numpy(result), expected)


# ---------------------------------------------------------------------- the two faces

def test_array_namespace_is_the_face():
    x = autodev.asarray([1.0])
    assert x.__array_namespace__() is xp
    assert x.__array_namespace__(api_version="2024.12") is xp
    with pytest.raises(ValueError, match="api_version must be one of"):
        x.__array_namespace__(api_version="2019.01")
    assert xp.__array_api_version__ == "2025.12"
    assert autodev.__array_api_version__ == xp.__array_api_version__  # the face's, one answer


def test_numpy_face_is_unchanged():
    a = values()
    x = autodev.asarray(a)
    assert type(autodev.sum(x)) is type(numpy.sum(a))  # a NumPy scalar, as NumPy gives
    numpy.testing.assert_array_equal(to_numpy(autodev.unique_values(x)),
                                     numpy.unique_values(a))
    assert not hasattr(autodev, "unique_all") or autodev.unique_all is not xp.unique_all


def test_face_holds_only_the_standards_names():
    assert "acos" in xp.__all__ and "arccos" not in xp.__all__
    with pytest.raises(AttributeError, match="standard's names only"):
        xp.arccos  # noqa: B018
    for name in xp.__all__:
        assert hasattr(xp, name), name


def test_import_autodev_does_not_load_the_face():
    code = ("import sys, autodev; print('array_api_compat' in sys.modules, "
            "'autodev.array_api' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.split() == ["False", "False"]


# ---------------------------------------------------------------------- semantics

def test_reductions_give_0d_arrays(device):
    a = values()
    x = put(a, device)
    check(xp.sum(x), numpy.asarray(numpy.sum(a)), device)
    check(xp.max(x), numpy.asarray(numpy.max(a)), device)
    check(xp.std(x, correction=1), numpy.asarray(numpy.std(a, ddof=1)), device)
    check(xp.sin(xp.sum(x)), numpy.asarray(numpy.sin(numpy.sum(a))), device)
    count = xp.count_nonzero(x)
    assert count.shape == () and count.dtype == numpy.intp
    assert int(count) == numpy.count_nonzero(a)


def test_unique_functions_are_sorted(device):
    a = values(1)
    x = put(a, device)
    values_, index, inverse, counts = numpy.unique(a, return_index=True, return_inverse=True,
                                                   return_counts=True)
    check(xp.unique_values(x), values_, device)
    u = xp.unique_all(x)
    assert u._fields == ("values", "indices", "inverse_indices", "counts")
    for got, expected in zip(u, (values_, index, inverse.reshape(a.shape), counts)):
        check(got, expected, device)
    check(xp.unique_counts(x).counts, counts, device)
    check(xp.unique_inverse(x).inverse_indices, inverse.reshape(a.shape), device)


def test_sort_and_argsort_descending_are_stable(device):
    a = values(2)
    x = put(a, device)
    check(xp.sort(x, descending=True), numpy.sort(a)[::-1], device)
    # stable descending: equal values keep their order
    expected = len(a) - 1 - numpy.argsort(a[::-1], kind="stable")[::-1]
    check(xp.argsort(x, descending=True), expected, device)
    check(xp.argsort(x), numpy.argsort(a, kind="stable"), device)


def test_astype_keeps_placement(device):
    x = put(values(), device)
    check(xp.astype(x, xp.int32), values().astype(numpy.int32), device)
    same = xp.astype(x, xp.float64, copy=False)  # x's memory, seen as the face's array
    assert same._native is x._native
    face = xp.asarray(x)
    assert xp.astype(face, xp.float64, copy=False) is face
    moved = xp.astype(x, xp.float32, device="cpu")
    check(moved, values().astype(numpy.float32), autodev.Device("cpu"))


def test_devices_of_autodev_are_accepted(device):
    x = put(values(), device)
    for like, fill in ((xp.zeros_like, 0), (xp.ones_like, 1), (xp.full_like, 7)):
        args = (x, fill) if like is xp.full_like else (x,)
        check(like(*args, device=x.device), numpy.full(x.shape, fill, dtype=x.dtype), device)
        check(like(*args), numpy.full(x.shape, fill, dtype=x.dtype), device)
    check(xp.from_dlpack(x, device=x.device), values(), device)
    check(xp.zeros((2, 3), device=x.device), numpy.zeros((2, 3)), device)
    check(xp.asarray([1, 2], device=x.device), numpy.asarray([1, 2]), device)
    check(xp.fft.fftfreq(8, d=0.5, device=x.device), numpy.fft.fftfreq(8, d=0.5), device)
    assert xp.empty_like(x, device=str(device)).device == device


def test_numpy_face_takes_autodevs_devices_too(device):
    x = put(values(), device)
    check(autodev.zeros_like(x, device=x.device), numpy.zeros(x.shape), device)
    check(autodev.full_like(x, 3, device=x.device), numpy.full(x.shape, 3.0), device)
    empty = autodev.empty_like(x, device="cpu")
    assert (empty.location, empty.shape, empty.dtype) == ("cpu", x.shape, x.dtype)
    check(autodev.fft.fftfreq(8, device=x.device), numpy.fft.fftfreq(8), device)
    check(autodev.from_dlpack(x, device=x.device), values(), device)
    assert inspect.signature(autodev.zeros_like) == inspect.signature(numpy.zeros_like)


def test_from_dlpack_of_a_numpy_array():
    a = values()
    check(xp.from_dlpack(a), a, autodev.Device("cpu"))
    check(autodev.from_dlpack(a, device=autodev.Device("cpu")), a, autodev.Device("cpu"))
    shared = autodev.from_dlpack(a, copy=False)
    a[0] = 42.0  # the producer's buffer, shared
    assert to_numpy(shared)[0] == 42.0
    with simulated_gpu():
        check(xp.from_dlpack(a, device="sim:0"), a, autodev.Device("sim", 0))
        with pytest.raises(ValueError, match="cannot move data from cpu to sim:0"):
            xp.from_dlpack(a, device="sim:0", copy=False)


def test_linalg_and_fft_extensions(device):
    rng = numpy.random.default_rng(3)
    m = rng.standard_normal((4, 4))
    x = put(m, device)
    eig = xp.linalg.eig(x)
    assert eig.eigenvalues.dtype == numpy.complex128 and eig.eigenvalues.location == device
    check(xp.linalg.eigvals(xp.eye(3, device=device)), numpy.ones(3, numpy.complex128), device)
    s, logdet = xp.linalg.slogdet(x)
    numpy.testing.assert_allclose(to_numpy(s) * numpy.exp(to_numpy(logdet)), numpy.linalg.det(m))
    assert logdet.shape == () and logdet.device == device  # 0-d, placed as x is
    f = xp.fft.fft(xp.astype(x, xp.float32))
    assert f.dtype == numpy.complex64 and f.location == device  # single stays single


def test_operators_on_0d_arrays_follow_each_face(device):
    """The standard's 0-d arrays give 0-d arrays of the face (SciPy's code stays in one
    namespace); the NumPy face's give NumPy's immutable scalars, as NumPy does."""
    for a in (xp.asarray(put(numpy.asarray(2.5), device)), xp.zeros((), device=device) + 2.5,
              xp.sum(xp.asarray([1.0, 1.5], device=device))):
        for result, expected in ((a * 2, numpy.float64(5.0)), (-a, numpy.float64(-2.5)),
                                 (a > 1, numpy.True_), (2 * a, numpy.float64(5.0))):
            assert type(result) is autodev.ndarray and result.__array_namespace__() is xp
            assert repr(result) == repr(numpy.asarray(expected))
            assert result.location in (device, "cpu")  # 0-d: see check()
            assert type(result * 1) is autodev.ndarray  # and so on
    a = put(numpy.asarray(2.5), device)
    for result, expected in ((a * 2, numpy.float64(5.0)), (-a, numpy.float64(-2.5)),
                             (a > 1, numpy.True_)):
        assert type(result) is type(expected) and result == expected


ELEMENTS = {  # what NumPy gives as a scalar, on an array of the face
    "x[i]": lambda x: x[1],
    "x[i, j]": lambda x: x.reshape((3, 4))[1, 2],
    "x[()]": lambda x: x[2][()],
    "x.sum()": lambda x: x.sum(),
    "x.max()": lambda x: x.max(),
    "-x[i]": lambda x: -x[1],
    "x[i] * 2": lambda x: x[1] * 2,
    "2 - x[i]": lambda x: 2 - x[1],
    "x[i] > 1": lambda x: x[1] > 1,
    "(x * 2)[i]": lambda x: (x * 2)[3],
    "x.T[i]": lambda x: x.T[3],
    "iteration": lambda x: list(x)[4],
    "x.copy()[i]": lambda x: x.copy()[5],
    "x.real[i]": lambda x: x.real[6],
    "x.astype(float32)[i]": lambda x: x.astype(numpy.float32)[7],
    "xp.sum": lambda x: xp.sum(x),
}


@pytest.mark.parametrize("pin", [False, True], ids=["auto", "pinned"])
@pytest.mark.parametrize("name", sorted(ELEMENTS))
def test_arrays_of_the_face_give_0d_arrays_placed_as_they_are(device, name, pin):
    a = values()
    x = xp.asarray(a, device=device if pin else None)
    got = ELEMENTS[name](x)
    expected = ELEMENTS[name](numpy.asarray(a))
    assert type(got) is autodev.ndarray and got.shape == () and got.dtype == expected.dtype
    assert got.__array_namespace__() is xp and got._face
    assert got.device == (device if pin else "auto")
    assert to_numpy(got)[()] == expected
    if pin:
        assert got.location == device  # on the device: no synchronisation for an index


def test_arrays_of_the_numpy_face_still_give_numpy_scalars(device):
    a = values()
    x = autodev.asarray(a, device=device)
    face = xp.asarray(x)  # the same memory, seen as the face's array: x keeps its face
    assert face is not x and face._face and not x._face
    for name, element in ELEMENTS.items():
        if name != "xp.sum":
            got = element(x)
            assert type(got) is type(element(a)), name
    assert type(xp.asarray(face)) is autodev.ndarray and xp.asarray(face) is face
    face[0] = 100.0  # one memory
    assert x[0] == 100.0


def test_0d_results_of_the_face_are_arrays_and_of_the_numpy_face_are_scalars():
    s = xp.sum(xp.asarray(values()))
    t = s
    s += 1  # an array: the standard's in-place semantics, as NumPy's 0-d arrays have
    assert t is s
    n = autodev.sum(autodev.asarray(values()))
    m = n
    n += 1  # a NumPy scalar: rebinds
    assert m == n - 1 and type(m) is numpy.float64


@pytest.mark.parametrize("pin", [False, True], ids=["auto", "pinned"])
def test_an_element_of_the_face_is_a_copy(device, pin):
    x = xp.asarray(values(), device=device if pin else None)
    s = x[1]
    s += 10  # NumPy's element is a copy, so is the face's (on a device too: CuPy's
    assert float(s) == values()[1] + 10  # x[1] would be a view)
    numpy.testing.assert_array_equal(to_numpy(x), values())


def test_the_face_survives_pickling_and_to_device(device):
    import pickle

    x = xp.asarray(values())
    assert pickle.loads(pickle.dumps(x))._face
    y = x.to_device(device)
    assert y._face and type(y[0]) is autodev.ndarray and y[0].device == device


def test_scalars_made_by_numpy_become_arrays():
    from autodev.array_api._wrap import as_arrays

    got = as_arrays((numpy.float32(2.5), [numpy.int64(3)]))
    assert type(got[0]) is autodev.ndarray and got[0].dtype == numpy.float32
    assert type(got[1][0]) is autodev.ndarray and got[1][0].shape == ()


# ---------------------------------------------------------------------- inspection

def test_inspection_namespace(device):
    info = xp.__array_namespace_info__()
    assert type(info.devices()) is tuple  # 2025.12
    assert type(autodev.__array_namespace_info__().devices()) is list  # NumPy's (2024.12)
    assert device in info.devices()
    assert info.default_device() == device  # the fixture's policy decides creation
    assert info.default_dtypes(device=device)["indexing"] == numpy.intp
    assert list(info.dtypes(kind="integral")) == [
        "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
    assert list(info.dtypes(kind=("bool", "complex floating"))) == [
        "bool", "complex64", "complex128"]
    assert info.capabilities()["boolean indexing"] is True
    with pytest.raises(ValueError, match="kind must be one of"):
        info.dtypes(kind="floating")
    with pytest.raises(ValueError, match="device must be one of"):
        info.dtypes(device="elsewhere")
    numpy_info = numpy.__array_namespace_info__()
    assert info.default_dtypes() == numpy_info.default_dtypes()
    assert info.dtypes() == numpy_info.dtypes()


def test_finfo_gives_python_numbers():
    info = xp.finfo(xp.float32)
    assert type(info.eps) is float and info.bits == 32 and info.dtype == numpy.float32
    assert xp.finfo(autodev.ones(2, dtype=numpy.complex64)).dtype == numpy.float32


# ---------------------------------------------------------------------- signatures

def _public_functions():
    for module, reference in ((autodev, numpy), (autodev.linalg, numpy.linalg),
                              (autodev.fft, numpy.fft)):
        for name in module.__all__:
            original = getattr(reference, name, None)
            if original is None or isinstance(original, type) or not callable(original):
                continue
            yield f"{module.__name__}.{name}", getattr(module, name), original


def _signature(func):
    try:
        return inspect.signature(func)
    except (TypeError, ValueError):
        return None  # NumPy's own has none to show


def test_public_functions_show_numpys_signature_and_doc():
    missing = []
    for name, function, original in _public_functions():
        if name in ("autodev.trace", "autodev.info") or name.split(".")[-1] in DIRECT:
            continue  # autodev's own functions under NumPy's names, with their own docs
        if _signature(function) != _signature(original):
            missing.append(name)
        assert function.__doc__ == original.__doc__, name
    assert not missing, missing


def test_array_methods_show_numpys_signature():
    x = autodev.ones(3)
    for name in ("sum", "mean", "argsort", "reshape", "transpose", "take", "clip"):
        assert inspect.signature(getattr(x, name)) == \
            inspect.signature(getattr(numpy.ones(3), name)), name


def test_scipy_functions_show_scipys_signature():
    import scipy.linalg
    import scipy.special

    import autodev.scipy.linalg
    import autodev.scipy.special

    assert inspect.signature(autodev.scipy.linalg.solve) == \
        inspect.signature(scipy.linalg.solve)
    assert inspect.signature(autodev.scipy.linalg.lu_factor) == \
        inspect.signature(scipy.linalg.lu_factor)


def test_face_functions_show_the_standards_parameters():
    sort = list(inspect.signature(xp.sort).parameters)
    assert sort[:4] == ["x", "axis", "descending", "stable"]
    assert list(inspect.signature(xp.zeros_like).parameters) == ["x", "dtype", "device"]
    assert list(inspect.signature(xp.astype).parameters) == ["x", "dtype", "copy", "device"]
