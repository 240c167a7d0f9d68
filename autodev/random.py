"""``autodev.random``: NumPy's random numbers, bit for bit, as autodev arrays.

Draws always come from NumPy's generators (so a seed gives exactly NumPy's
stream); the result is then placed like any new array: on the host, or on the
GPU under ``policy("gpu")``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as _np

from ._residency import storage as _R
from ._array import ndarray as _ndarray
from ._device import CPU as _CPU
from ._dispatch import cpu_arg as _cpu_arg, new as _new
from ._fusion import before_write as _before_write
from ._residency.memory import write_back as _write_back
from ._creation import creation_device as _creation_device, place as _place_array

__all__ = sorted(n for n in dir(_np.random) if not n.startswith("_"))


def _place(result: object) -> Any:
    if type(result) is _np.ndarray:
        return _place_array("random", result, _creation_device(None))
    if type(result) is tuple:
        return tuple(_place(r) for r in result)
    return result


def _drawing(func: Callable[..., Any]) -> Callable[..., Any]:
    def draw(*args: Any, **kwargs: Any) -> Any:
        out = kwargs.get("out")
        if type(out) is _ndarray:  # draw into the host data of out=, wherever it lives
            _before_write()
            host = _R.host_to_write(out)  # read-only as out is: NumPy refuses the write
            func(*(_cpu_arg(a) for a in args),
                 **{k: host if k == "out" else _cpu_arg(v) for k, v in kwargs.items()})
            if out._device is not _CPU:
                _write_back(out._native, out._device, host)
            _R.mark_written(out)
            return out
        return _place(func(*(_cpu_arg(a) for a in args),
                           **{k: _cpu_arg(v) for k, v in kwargs.items()}))

    draw.__name__ = getattr(func, "__name__", "draw")
    draw.__doc__ = getattr(func, "__doc__", None)
    draw.__wrapped__ = func  # type: ignore[attr-defined]  # NumPy's signature
    return draw


def _shuffle_with(shuffle: Callable[..., Any], x: object, **kwargs: Any) -> None:
    """Shuffle ``x`` in place with NumPy's stream, wherever ``x`` lives."""
    if type(x) is not _ndarray:
        shuffle(x, **kwargs)
        return
    _before_write()
    if x._device is _CPU:
        shuffle(x._native, **kwargs)
    else:
        host = _R.host_to_write(x)  # read-only as x is: NumPy refuses the shuffle
        shuffle(host, **kwargs)
        _write_back(x._native, x._device, host)
    _R.mark_written(x)


class _Wrapped:
    """Base for generator wrappers: methods draw with NumPy and return autodev arrays."""

    _np_cls: Any = None

    def __init__(self, inner: _np.random.Generator | _np.random.RandomState) -> None:
        object.__setattr__(self, "_inner", inner)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._inner, name)
        return _drawing(value) if callable(value) and not isinstance(value, type) else value

    def shuffle(self, x: Any, axis: int = 0) -> None:
        """Shuffle ``x`` in place (NumPy's stream)."""
        kwargs = {"axis": axis} if isinstance(self._inner, _np.random.Generator) else {}
        _shuffle_with(self._inner.shuffle, x, **kwargs)

    def __repr__(self) -> str:
        return repr(self._inner)

    def __getstate__(self) -> _np.random.Generator | _np.random.RandomState:
        return self._inner

    def __setstate__(self, inner: _np.random.Generator | _np.random.RandomState) -> None:
        object.__setattr__(self, "_inner", inner)


class Generator(_Wrapped):
    """``numpy.random.Generator`` whose draws are autodev arrays."""

    def __init__(self, bit_generator: _np.random.BitGenerator | _np.random.Generator) -> None:
        inner = bit_generator if isinstance(bit_generator, _np.random.Generator) \
            else _np.random.Generator(bit_generator)
        super().__init__(inner)


class RandomState(_Wrapped):
    """``numpy.random.RandomState`` whose draws are autodev arrays."""

    def __init__(self, seed: Any = None) -> None:
        inner = seed if isinstance(seed, _np.random.RandomState) \
            else _np.random.RandomState(_cpu_arg(seed))
        super().__init__(inner)


def default_rng(seed: Any = None) -> Generator:
    """NumPy's ``default_rng``: same seed, same numbers, autodev arrays out."""
    if isinstance(seed, Generator):
        return seed
    return Generator(_np.random.default_rng(_cpu_arg(seed)))


def shuffle(x: Any) -> None:
    """Shuffle ``x`` in place with the legacy global stream."""
    _shuffle_with(_np.random.shuffle, x)


def __getattr__(name: str) -> Any:
    if name.startswith("_") or not hasattr(_np.random, name):
        raise AttributeError(f"module 'autodev.random' has no attribute {name!r}")
    value = getattr(_np.random, name)
    if callable(value) and not isinstance(value, type):
        value = _drawing(value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
