"""NumPy's own Python code run on autodev arrays (``vectorize``, ``apply_along_axis``, a
subclass's ``median`` and ``mean``).

Some NumPy functions owe how they treat subclasses to the calls their Python code makes:
``asanyarray`` keeps a subclass, ``zeros_like`` and ``empty_like`` give their prototype's
class, ``mean`` hands a subclass to its own ``mean`` method, ``__array_wrap__`` wraps the
result. Run as NumPy ships it, that code first makes an autodev array a NumPy one (autodev's
class is no subclass of NumPy's), and the subclass is lost. :func:`on_autodev` runs the very
same code with its module's names as autodev has them (``np.asanyarray``, ``zeros_like``,
``ndarray``, ... are autodev's), so those calls meet autodev arrays, where they live.
"""

from __future__ import annotations

import functools
import importlib
import sys
import types
from typing import Any, Callable

import numpy as np

from ._creation import asanyarray
from ._subclass import of_inputs
from ._ufuncs import cpu_ufunc

_array_converter = importlib.import_module("numpy._core._multiarray_umath")._array_converter

#: ``autodev_for(value)``: autodev's object standing for the NumPy object ``value``, or
#: ``value`` itself (given by the namespace, which resolves autodev's names).
AutodevFor = Callable[[Any], Any]


def on_autodev(np_obj: Any, autodev_for: AutodevFor) -> Any:
    """NumPy's function or class ``np_obj`` with its module's names resolved by
    ``autodev_for``: a function (its Python implementation, past ``__array_function__``)
    rebuilt on first call, or a subclass of the class whose methods are rebuilt."""
    if isinstance(np_obj, type):
        methods = {k: _on_first_call(f, autodev_for) for k, f in _functions_of(np_obj).items()}
        return type(np_obj.__name__, (np_obj,),
                    {**methods, "__module__": "autodev", "__qualname__": np_obj.__qualname__})
    return _on_first_call(getattr(np_obj, "_implementation", np_obj), autodev_for)


def _on_first_call(function: types.FunctionType, autodev_for: AutodevFor
                   ) -> Callable[..., Any]:
    """``function`` rebuilt on autodev's names when first called, not before: the module's
    names include the function autodev is resolving now (``apply_along_axis``), and
    resolving them all at ``import autodev`` would load NumPy submodules (``numpy.fft``)
    that ``import numpy`` does not."""
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        names = _names(function.__globals__["__name__"], autodev_for)
        return _rebuilt(function, names)(*args, **kwargs)

    return run


def _functions_of(cls: type) -> dict[str, types.FunctionType]:
    return {k: f for k, f in vars(cls).items() if isinstance(f, types.FunctionType)}


@functools.lru_cache(maxsize=None)
def _rebuilt(function: types.FunctionType, names: "_Names") -> types.FunctionType:
    """``function``'s code with ``names`` as its globals."""
    copy = types.FunctionType(function.__code__, names.globals, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    functools.update_wrapper(copy, function)
    return copy


class _Names:
    """The globals of a NumPy module as NumPy's code sees them here: its functions rebuilt
    on them, ``numpy`` as :class:`_AsAutodev` and the other names as ``autodev_for``
    gives them (hashable, for the caches: one per module and resolver)."""

    def __init__(self, module: str, autodev_for: AutodevFor) -> None:
        source = vars(sys.modules[module])
        self.globals: dict[str, Any] = {}
        numpy = _AsAutodev(np, autodev_for)
        for name, value in source.items():
            if value is np:
                value = numpy
            elif not (isinstance(value, types.FunctionType) and value.__globals__ is source):
                value = _standing_for(value, autodev_for)
            self.globals[name] = value
        for name, value in self.globals.items():  # the module's own helpers (``_ureduce``)
            if isinstance(value, types.FunctionType) and value.__globals__ is source:
                self.globals[name] = _rebuilt(value, self)


@functools.lru_cache(maxsize=None)
def _names(module: str, autodev_for: AutodevFor) -> _Names:
    return _Names(module, autodev_for)


class _AsAutodev:
    """The ``numpy`` module as NumPy's code run here names it: ``np.X`` is autodev's."""

    def __init__(self, module: types.ModuleType, autodev_for: AutodevFor) -> None:
        self._module, self._autodev_for = module, autodev_for

    def __getattr__(self, name: str) -> Any:
        return _standing_for(getattr(self._module, name), self._autodev_for)


def _standing_for(value: Any, autodev_for: AutodevFor) -> Any:
    """What the code run here calls where NumPy's names ``value``."""
    if value is np.asanyarray:
        return _asanyarray
    if value is _array_converter:
        return ArrayConverter
    if value is np.frompyfunc:
        return _frompyfunc
    return autodev_for(value)


def _frompyfunc(*args: Any, **kwargs: Any) -> Any:
    """``frompyfunc``'s ufunc as an autodev ufunc, new for each call (``vectorize`` makes
    one per call; a cache would keep each), so ``ufunc(..., out=...)`` on autodev arrays
    gives 0-d arrays, as NumPy's does: NumPy hands no ``out=...`` to an override."""
    return cpu_ufunc(np.frompyfunc(*args, **kwargs))


def _asanyarray(a: Any, *args: Any, **kwargs: Any) -> Any:
    """autodev's ``asanyarray``, keeping NumPy's own subclasses (masked arrays, matrices)
    as NumPy's does: autodev has no class of theirs (``apply_along_axis`` of a ``func1d``
    returning masked arrays gives a masked array)."""
    if isinstance(a, np.ndarray) and type(a) is not np.ndarray:
        return np.asanyarray(a, *args, **kwargs)
    return asanyarray(a, *args, **kwargs)


class ArrayConverter:
    """NumPy's ``_array_converter`` for autodev arrays, as far as the code run here uses it:
    ``conv[i]`` is argument ``i`` as an array (a subclass kept), ``conv.wrap(result)`` wraps
    ``result`` as NumPy wraps a function's result (by the ``__array_wrap__`` of the subclass
    argument of highest priority; otherwise as it is)."""

    def __init__(self, *array_likes: Any) -> None:
        self._arrays = tuple(asanyarray(a) for a in array_likes)

    def __getitem__(self, index: int) -> Any:
        return self._arrays[index]

    def wrap(self, result: Any) -> Any:
        return of_inputs(self._arrays, result)
