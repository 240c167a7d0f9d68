"""The function namespace: every public NumPy name, as autodev runs it.

Dispatched names become functions over their specs in the function table
(:mod:`autodev._capability.specs`; made in :mod:`autodev._functions`), NumPy's ufuncs
become :class:`~autodev._ufuncs.ufunc` objects, creation functions place their results
(:mod:`autodev._creation`), and everything else NumPy has is either run on the CPU (its
inputs moved to the host once) or handed out as NumPy's own object. The metadata
functions (``shape``, ``result_type``, ``shares_memory``, ...) and ``copyto`` are here.
:func:`resolve_name` is what ``autodev.X``, ``autodev.linalg.X`` and
``autodev.fft.X`` are; NumPy's protocols on an array find their callables here
(:data:`autodev._operators.PROTOCOLS`).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ._array import ndarray
from ._methods import _in_place
from ._operators import PROTOCOLS
from ._backends import backend_for
from ._device import CPU, Device
from ._dispatch import cpu_arg, native_arg, placed
from ._capability.specs import SPECS
from ._typing import Casting, DeviceLike
from ._creation import array, asanyarray, asarray, from_dlpack, make_creation
from ._functions import cpu_function, make_function, writing_function
from ._numpy_code import on_autodev
from ._subclass import SUBCLASSES
from ._ufuncs import UFUNCS, _REDUCE_AS, _build_ufuncs, make_reduction, ufunc, ufunc_for
# what each name takes, by its row: NUMPY_CODE's own NumPy code runs on autodev arrays
# (autodev._numpy_code), and NUMPY_CODE_FOR_SUBCLASSES's for a subclass array; PLACED
# take device= as any autodev device (NumPy: "cpu" only) and put the result there
from ._names import (CREATION, DIRECT as DIRECT_NAMES, NUMPY_CODE, NUMPY_CODE_FOR_SUBCLASSES,
                     PLACED, WRITES_INTO)


#: ``require``'s requirement names, each to its flag letter (NumPy's spellings).
_REQUIREMENTS = {
    "C": "C", "C_CONTIGUOUS": "C", "CONTIGUOUS": "C", "F": "F", "F_CONTIGUOUS": "F",
    "FORTRAN": "F", "A": "A", "ALIGNED": "A", "W": "W", "WRITEABLE": "W", "O": "O",
    "OWNDATA": "O", "E": "E", "ENSUREARRAY": "E",
}


def require(a: Any, dtype: Any = None, requirements: Any = None, *,
            like: Any = None) -> ndarray:
    """An array of ``dtype`` meeting ``requirements`` (NumPy's ``require``): ``a`` itself
    where it meets them, else a copy; a subclass is kept unless "E" (ENSUREARRAY) is asked.
    An unknown requirement raises KeyError and "C" with "F" ValueError, as NumPy's."""
    if not requirements:
        return asanyarray(a, dtype=dtype)
    wanted = {_REQUIREMENTS[r.upper()] for r in (
        [requirements] if isinstance(requirements, str) else requirements)}
    if {"C", "F"} <= wanted:
        raise ValueError("Cannot specify both \"C\" and \"F\" order")
    result = asarray(a, dtype=dtype) if "E" in wanted else asanyarray(a, dtype=dtype)
    order = "C" if "C" in wanted else "F" if "F" in wanted else "A"
    for flag in wanted - {"E"}:
        if not result.flags[flag]:
            return result.copy(order)
    return result


# ---------------------------------------------------------------------- metadata

def shape(a: Any) -> tuple[int, ...]:
    """Shape of ``a`` (no transfer)."""
    return a.shape if isinstance(a, ndarray) else np.shape(a)


def ndim(a: Any) -> int:
    """Number of dimensions of ``a`` (no transfer)."""
    return a.ndim if isinstance(a, ndarray) else np.ndim(a)


def size(a: Any, axis: int | None = None) -> int:
    """Number of elements of ``a`` (no transfer)."""
    if isinstance(a, ndarray):
        return a.size if axis is None else a.shape[axis]
    return np.size(a, axis)


def _meta(x: Any) -> Any:
    return x.dtype if type(x) is ndarray and not x._scalar else (
        np.empty((), x.dtype) if type(x) is ndarray else x)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """NumPy's ``result_type`` (reads dtypes only)."""
    return np.result_type(*(_meta(x) for x in arrays_and_dtypes))


def iscomplexobj(x: Any) -> bool:
    """True if ``x`` has a complex dtype (no transfer)."""
    return x.dtype.kind == "c" if type(x) is ndarray else np.iscomplexobj(x)


def isrealobj(x: Any) -> bool:
    """True if ``x`` does not have a complex dtype (no transfer)."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """True for scalars, including autodev's device-resident scalar results."""
    return bool(element._scalar) if type(element) is ndarray else np.isscalar(element)


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """NumPy's ``may_share_memory`` on the data where it lives (the memory bounds)."""
    on_device = _device_memory(a, b)
    if on_device is not None:
        return on_device and bool(
            backend_for(a._device).xp.may_share_memory(a._native, b._native))
    return bool(np.may_share_memory(cpu_arg(a), cpu_arg(b)))


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """NumPy's ``shares_memory`` on the data where it lives (exact on a device, where
    CuPy has no bounded search)."""
    on_device = _device_memory(a, b)
    if on_device is not None:
        return on_device and bool(backend_for(a._device).xp.shares_memory(a._native, b._native))
    return bool(np.shares_memory(cpu_arg(a), cpu_arg(b)))


def _device_memory(a: Any, b: Any) -> bool | None:
    """For two autodev arrays of which one lives on a device: False if they live on two
    devices (no memory in common), True if on the same one (the device's own check
    decides); None where NumPy's check on the host decides."""
    if not (isinstance(a, ndarray) and isinstance(b, ndarray)):
        return None
    if a._device is not b._device:
        return False
    return None if a._device is CPU else True


def copyto(dst: ndarray, src: Any, casting: Casting = "same_kind", where: Any = True) -> None:
    """Copy ``src`` into ``dst`` where ``dst`` lives (NumPy's ``copyto``)."""
    if not isinstance(dst, ndarray):  # a NumPy destination
        np.copyto(dst, cpu_arg(src), casting=casting, where=cpu_arg(where))
        return
    def copy(data: Any, device: Device) -> None:
        xp = backend_for(device).xp
        xp.copyto(data, native_arg(src, device, None), casting=casting,
                  where=native_arg(where, device, None))

    _in_place(dst, "copyto", copy)


#: autodev's own implementations, by name: each direct row's function of this name here.
DIRECT: dict[str, Callable[..., Any]] = {name: globals()[name] for name in DIRECT_NAMES}


# ---------------------------------------------------------------------- resolution

class builtin(functools.partial):
    """An autodev function whose NumPy twin is a builtin (``array``, ``zeros``, ...).

    Held by a class (``class C: array = np.array``), it stays a plain function, as
    NumPy's builtins and ufuncs do: Python functions would become methods. A
    ``functools.partial`` over the function (called in C, without binding).
    """

    def __get__(self, obj: Any, objtype: Any = None) -> "builtin":
        return self  # Python 3.14 makes functools.partial a method descriptor

    __name__: str
    __qualname__: str

    def __repr__(self) -> str:
        name = getattr(self, "__name__", None)  # (a callable object has none: numpy.test)
        return f"<autodev function {name}>" if name is not None else \
            f"<autodev function over {self.func!r}>"

    def __reduce__(self) -> str:  # pickled by name
        return str(self.__qualname__)


def _as_numpys(function: Any, np_value: Any, prefix: str) -> Any:
    """``function`` as its NumPy twin is to a class and to ``inspect.signature``.

    Where NumPy's twin is a builtin, ``function`` becomes a :class:`builtin` (a class
    holding it does not bind it) whose ``__wrapped__`` and ``__text_signature__`` are
    NumPy's; where NumPy's carries a ``__signature__`` (its C dispatchers), so does
    ``function``.
    """
    if not callable(function) or isinstance(function, (type, ufunc, builtin)) \
            or not callable(np_value) or isinstance(np_value, type):
        return function
    if hasattr(np_value, "__signature__"):
        function.__signature__ = np_value.__signature__
    if hasattr(type(np_value), "__get__"):
        return function  # a Python function or dispatcher: a method on a class, as NumPy's
    text = getattr(np_value, "__text_signature__", None)
    if type(function).__name__ != "FastFunction":  # else unbound already (compiled zeros)
        function = functools.update_wrapper(builtin(function), function)
        function.__module__ = "autodev" + ("." + prefix.rstrip(".") if prefix else "")
    function.__wrapped__ = np_value  # inspect.signature: NumPy's own
    if text is not None:
        function.__text_signature__ = text
    return function


@functools.lru_cache(maxsize=None)
def resolve_name(module: Any, prefix: str, name: str) -> Any:
    """What ``autodev<prefix>.name`` is: dispatched function, CPU function or NumPy object."""
    return _as_numpys(_resolve(module, prefix, name), getattr(module, name, None), prefix)


def _resolve(module: Any, prefix: str, name: str) -> Any:
    if prefix == "" and name in DIRECT:
        return DIRECT[name]
    if prefix == "" and name in CREATION:
        return make_creation(name)
    if prefix == "" and name == "ndarray":
        return ndarray
    value = getattr(module, name)  # AttributeError propagates: not a NumPy name
    if prefix == "" and isinstance(value, np.ufunc):
        return UFUNCS[value.__name__]
    if prefix == "" and name in NUMPY_CODE:
        return on_autodev(value, _autodev_for)
    spec = SPECS.get(prefix + name)
    if prefix == "" and name in WRITES_INTO:
        return writing_function(value, *WRITES_INTO[name],
                                make_function(spec, value) if spec is not None else None)
    path = prefix + name

    def checked(function: Callable[..., Any]) -> Callable[..., Any]:
        # what NumPy checks first (the count of concatenate's arrays), a subclass's own
        # NumPy code, device=: the compiled path takes none of these calls, so these
        # wrap only the Python path where there is a compiled one
        if path == "concatenate":
            function = _counting_arrays(function)
        if path in NUMPY_CODE_FOR_SUBCLASSES:
            function = _numpy_code_for_subclasses(function, value)
        return placing(function) if path in PLACED else function

    if spec is not None:
        if prefix == "" and name in _REDUCE_AS:
            return make_reduction(spec, value, *_REDUCE_AS[name])
        function = make_function(spec, value, checked)
    elif _is_plain_function(value):
        function = checked(cpu_function(value, path))
    else:
        return value  # dtypes, constants, classes (errstate, finfo, ...), submodules
    return _diff_of_order_zero(function) if path == "diff" else function



def _numpy_code_for_subclasses(function: Callable[..., Any], np_func: Any
                               ) -> Callable[..., Any]:
    """``function`` running NumPy's own code where its array is a subclass's."""
    numpy_code = on_autodev(np_func, _autodev_for)

    def run(*args: Any, **kwargs: Any) -> Any:
        if SUBCLASSES and type(args[0] if args else kwargs.get("a")) in SUBCLASSES:
            return numpy_code(*args, **kwargs)
        return function(*args, **kwargs)

    return functools.update_wrapper(run, function)


def _autodev_for(value: Any) -> Any:
    """autodev's object where NumPy's code names ``value``: its function for a public
    NumPy function or ufunc, its array class for NumPy's, else ``value`` itself."""
    if value is np.ndarray:
        return ndarray
    if isinstance(value, np.ufunc) or _is_plain_function(value):
        found = _numpy_index().get(id(value))
        if found is not None:
            prefix, name = found
            return resolve_name(_module(prefix), prefix, name)
    return value


def _diff_of_order_zero(diff: Callable[..., Any]) -> Callable[..., Any]:
    """``diff`` returning its input itself for ``n=0``, whatever it is, as NumPy's."""
    def diffed(a: Any, n: Any = 1, *args: Any, **kwargs: Any) -> Any:
        if isinstance(n, (int, np.integer)) and n == 0:
            return a
        return diff(a, n, *args, **kwargs)

    return functools.update_wrapper(diffed, diff)


#: The most arrays NumPy's ``concatenate`` takes (a C int counts them).
MAX_CONCATENATED = int(np.iinfo(np.intc).max)


def _counting_arrays(concatenate: Callable[..., Any]) -> Callable[..., Any]:
    """``concatenate`` refusing more arrays than NumPy takes before it reads any of them,
    as NumPy does (dispatching reads each item: 2**31 of them would run for hours). It
    wraps the Python path: the compiled one walks no list that long."""
    def counted(arrays: Any, *args: Any, **kwargs: Any) -> Any:
        if type(arrays) in (tuple, list) and len(arrays) > MAX_CONCATENATED:
            raise ValueError(f"concatenate() only supports up to {MAX_CONCATENATED} arrays "
                             f"but got {len(arrays)}.")
        return concatenate(arrays, *args, **kwargs)

    return functools.update_wrapper(counted, concatenate)


def placing(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` taking ``device=`` as an autodev device (or a string naming one)."""

    def placed(*args: Any, device: DeviceLike | None = None, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        return result if device is None else result.to_device(device)

    return functools.update_wrapper(placed, function)


def _is_plain_function(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and (
        type(value).__name__ in ("function", "builtin_function_or_method",
                                 "_ArrayFunctionDispatcher", "cython_function_or_method")
    )


@functools.lru_cache(maxsize=None)
def _numpy_index() -> dict[int, tuple[str, str]]:
    """id(numpy function) -> (prefix, name) for numpy, numpy.linalg, numpy.fft."""
    index: dict[int, tuple[str, str]] = {}
    for prefix, module in (("fft.", np.fft), ("linalg.", np.linalg), ("", np)):
        for name in dir(module):
            if not name.startswith("_"):
                index[id(getattr(module, name))] = (prefix, name)
    return index


def _module(prefix: str) -> Any:
    """NumPy's module of ``prefix`` (read when asked: ``np.fft`` loads ``numpy.fft``, which
    ``import numpy`` does not)."""
    return {"": np, "linalg.": np.linalg, "fft.": np.fft}[prefix]

_FOREIGN_FUNCTIONS: dict[Any, Callable[..., Any]] = {}


def function_for(func: Callable[..., Any]) -> Callable[..., Any] | None:
    """The autodev function standing for the NumPy function ``func``."""
    found = _numpy_index().get(id(func))
    if found is not None:
        prefix, name = found
        return resolve_name(_module(prefix), prefix, name)
    wrapper = _FOREIGN_FUNCTIONS.get(func)
    if wrapper is None:
        wrapper = _FOREIGN_FUNCTIONS[func] = cpu_function(func, getattr(func, "__name__", "?"))
    return wrapper


_build_ufuncs()
PROTOCOLS.ufunc_for = ufunc_for
PROTOCOLS.function_for = function_for
