"""autodev: NumPy and SciPy that run each call where this machine runs it fastest.

``import autodev as np`` in place of ``import numpy as np``. Each call runs on
the CPU (NumPy) or the GPU (CuPy), whichever the measured cost model predicts is
faster, transfers included; results stay on the device that made them. With no
GPU, no CUDA or no CuPy, autodev is NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as _np

from ._array import API_VERSIONS as _API_VERSIONS, ndarray
from ._operators import PROTOCOLS as _PROTOCOLS
from ._backends import devices as _devices_table
from ._config import VERSION as _VERSION, get_policy, policy, set_policy, reset_policy
from ._device import CPU, Device
from ._namespace import DIRECT as _DIRECT, resolve_name as _resolve_name
from ._ufuncs import ufunc
from ._broadcast import broadcast
from ._trace import FallbackWarning, Record, stats, trace as _trace_block


#: NumPy's version, as ``numpy.__version__``: ``import autodev as np`` behaves as the NumPy
#: installed, so code that gates on ``np.lib.NumpyVersion(np.__version__)`` takes that NumPy's
#: branch. autodev's own version is :data:`__autodev_version__`
#: (``importlib.metadata.version("autodev")`` says the same).
__version__ = _np.__version__
__autodev_version__ = _VERSION

# -- autodev's own API ---------------------------------------------------------------


def devices() -> list[dict[str, Any]]:
    """Every device autodev knows: ``{"device", "usable", "reason"}`` each.

    ``reason`` says why an unusable device cannot be used (CuPy not installed,
    no CUDA device, driver too old, ...).
    """
    return _devices_table()


def residency(x: ndarray) -> dict[str, Any]:
    """Where ``x``'s data is now: ``{"placement", "primary", "mirrors"}``.

    ``placement`` is ``x.device`` (``auto``, or the device it is pinned to);
    ``primary`` is the device holding its primary copy (``x.location``); ``mirrors``
    lists the devices holding a valid read-only copy (made by a transfer or by reuse
    credit; a write drops them). Reading it changes nothing.
    """
    from ._residency import storage as _residency
    from ._backends import active_gpu

    gpu = active_gpu()
    places = [CPU] + ([gpu.device] if gpu is not None else [])
    mirrors = [d for d in places if d is not x.location and _residency.has_mirror(x, d)]
    return {"placement": x.device, "primary": x.location, "mirrors": mirrors}


def calibrate(output: Any = None, **kwargs: Any) -> dict[str, Any]:
    """Measure this machine, write its profile, and return it (``autodev calibrate``).

    See :func:`autodev._calibrate.calibrate.calibrate` for the options (``quick``, ``ops``,
    ``dtypes``, ``max_seconds``, ``write``, ``progress``).
    """
    from ._calibrate.calibrate import calibrate as _calibrate

    return _calibrate(output, **kwargs)


def info(*args: Any, profile: Any = None, **kwargs: Any) -> Any:
    """Devices, the profile in use and the GPU crossover table (``autodev info --json``).

    ``profile=PATH`` describes that file instead of the profile in use. Called
    with arguments, it is NumPy's ``info`` (help on an object), so that
    ``np.info(np.sum)`` keeps working under ``import autodev as np``.
    """
    if args or kwargs:
        return _np.info(*args, **kwargs)
    from ._info import info as _info

    return _info(profile)


def trace(*args: Any, **kwargs: Any) -> Any:
    """``with autodev.trace() as t:`` collects the dispatch decisions of a block.

    Called with an array, it is NumPy's ``trace`` (sum along a diagonal), so that
    ``np.trace(a)`` keeps working under ``import autodev as np``.
    """
    if args or kwargs:
        return _resolve_name(_np, "", "trace")(*args, **kwargs)
    return _trace_block()


_OWN_API = [
    "Device", "FallbackWarning", "Record", "calibrate", "devices", "get_policy", "info",
    "ndarray", "policy", "reset_policy", "residency", "set_policy", "stats", "trace", "ufunc",
]

# -- NumPy's constants, dtypes and helper classes (the very same objects) ------------
from numpy import (  # noqa: E402
    e, euler_gamma, inf, nan, newaxis, pi,
    bool_, int8, int16, int32, int64, uint8, uint16, uint32, uint64, intp, uintp,
    float16, float32, float64, complex64, complex128, longdouble, clongdouble,
    byte, ubyte, short, ushort, intc, uintc, int_, uint, longlong, ulonglong,
    half, single, double, csingle, cdouble, object_, str_, bytes_, void,
    datetime64, timedelta64, generic, number, integer, signedinteger, unsignedinteger,
    inexact, floating, complexfloating, flexible, character,
    dtype, finfo, iinfo, errstate, printoptions, ufunc as _np_ufunc,
)

_NUMPY_OBJECTS = [
    "e", "euler_gamma", "inf", "nan", "newaxis", "pi",
    "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "intp", "uintp", "float16", "float32", "float64", "complex64", "complex128",
    "longdouble", "clongdouble", "byte", "ubyte", "short", "ushort", "intc", "uintc",
    "int_", "uint", "longlong", "ulonglong", "half", "single", "double", "csingle",
    "cdouble", "object_", "str_", "bytes_", "void", "datetime64", "timedelta64",
    "generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact",
    "floating", "complexfloating", "flexible", "character",
    "dtype", "finfo", "iinfo", "errstate", "printoptions",
]
bool = _np.bool  # noqa: A001  (NumPy 2 exports ``bool`` too)

# -- submodules ----------------------------------------------------------------------
from . import linalg, testing  # noqa: E402

# imported on first use, as NumPy itself imports numpy.fft and numpy.random
_SUBMODULES = ["array_api", "fft", "lib", "linalg", "random", "testing", "scipy"]
_LAZY_SUBMODULES = frozenset({"array_api", "fft", "lib", "random", "scipy"})

# -- everything else NumPy has: resolved on first use, then cached --------------------
_NUMPY_NAMES = sorted(n for n in dir(_np) if not n.startswith("_"))

__all__ = sorted(set(_OWN_API + _NUMPY_OBJECTS + _SUBMODULES + _NUMPY_NAMES + ["bool"]))


from ._backends import STATE as _STATE  # noqa: E402

_STATE.refresh()  # every hot-path flag now reflects the environment


#: The newest version of the array API standard autodev follows: that of the array-API face
#: (``x.__array_namespace__()``, ``autodev.array_api``), which standard-aware code uses.
__array_api_version__ = _API_VERSIONS[-1]


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        import importlib

        value: Any = importlib.import_module(f"autodev.{name}")
    elif name == "__array_namespace_info__":
        from ._inspection import __array_namespace_info__ as value
    elif name.startswith("_") or not (hasattr(_np, name) or name in _DIRECT):
        raise AttributeError(f"module 'autodev' has no attribute {name!r}")
    else:
        value = _resolve_name(_np, "", name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


def _array_api_face() -> Any:
    """``x.__array_namespace__()``: the array-API face, imported on first use."""
    return __getattr__("array_api")


_PROTOCOLS.array_namespace = _array_api_face


from ._dask.register import install as _install_dask  # noqa: E402

# Last: registering may use any public name (dask.array may be loaded already).
_install_dask()  # autodev arrays as Dask chunks: now, or when autodev and Dask first meet
