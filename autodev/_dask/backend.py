"""Dask's ``array.backend = "autodev"``: Dask creation functions that make autodev chunks.

Loaded by Dask through the ``dask.array.backends`` entry point when a program sets
``dask.config.set({"array.backend": "autodev"})``; this module imports Dask.
``da.ones``, ``zeros``, ``empty``, ``full``, ``arange`` and ``da.random`` then
create autodev chunks, and ``x.to_backend("autodev")`` converts an existing
collection (NumPy or CuPy chunks) chunk by chunk.
"""

from __future__ import annotations

from typing import Any

import dask.array as da
import numpy as np
from dask import config
from dask.array.backends import ArrayBackendEntrypoint
from dask.utils import Dispatch

from .. import random as _random
from .._array import ndarray
from .._creation import asarray
from .._namespace import resolve_name
from .register import register

_empty = resolve_name(np, "", "empty")

#: Moves a chunk to autodev (``Array.to_backend("autodev")``); NumPy, CuPy and anything
#: ``autodev.asarray`` takes.
to_autodev_dispatch = Dispatch("to_autodev_dispatch")


@to_autodev_dispatch.register(object)
def _to_autodev(data: Any, **kwargs: Any) -> ndarray:
    return asarray(data, **kwargs)


@to_autodev_dispatch.register_lazy("cupy")
def _register_cupy() -> None:
    import cupy

    @to_autodev_dispatch.register(cupy.ndarray)
    def _cupy_to_autodev(data: Any, **kwargs: Any) -> ndarray:
        # probe the GPU first: asarray keeps a CuPy array where it is only once autodev
        # has a CUDA backend, and this worker may not have made a GPU call yet
        from .._backends import active_gpu

        active_gpu()
        return asarray(data, **kwargs)


class PCG64(np.random.PCG64):
    """NumPy's PCG64, under autodev's name: Dask picks the array library of its random
    chunks by the bit generator's module, so this one makes ``autodev.random`` draw them
    (the very numbers NumPy's backend draws, as autodev arrays)."""

    __module__ = "autodev._dask.backend"


def _meta() -> ndarray:
    # 1-d, not 0-d: Dask slices a meta to its ndim, and a 0-d array indexed by ``()``
    # is a NumPy scalar (as in NumPy), which would make the meta NumPy's
    return _empty((0,), dtype=np.float64)


def _with_meta(name: str, *args: Any, meta: Any = None, **kwargs: Any) -> da.Array:
    """``da.<name>`` with autodev chunks (Dask's NumPy backend, given autodev's meta)."""
    with config.set({"array.backend": "numpy"}):
        return getattr(da, name)(*args, meta=_meta() if meta is None else meta, **kwargs)


class AutodevBackendEntrypoint(ArrayBackendEntrypoint):
    """The ``autodev`` array backend: creation functions and ``to_backend`` for Dask."""

    def __init__(self) -> None:
        register()  # the data-directed dispatch (concatenate, percentile, ...) as well

    @classmethod
    def to_backend_dispatch(cls) -> Dispatch:
        """The per-chunk conversion ``to_backend("autodev")`` maps over the blocks."""
        return to_autodev_dispatch

    @classmethod
    def to_backend(cls, data: da.Array, **kwargs: Any) -> da.Array:
        """``data`` with autodev chunks, chunk by chunk.

        Mapped even when ``data._meta`` is already autodev's: some Dask functions
        (``linalg.solve``, ``unique``) make NumPy chunks under an autodev meta, and the
        map is free for chunks that are autodev arrays already.
        """
        meta = _empty((0,) * data.ndim, dtype=data.dtype)
        # Dask's stubs lose map_blocks' binding to the array (functools.wraps)
        return data.map_blocks(to_autodev_dispatch, meta=meta, **kwargs)  # type: ignore[arg-type]

    @property
    def RandomState(self) -> type:  # noqa: N802  (Dask's name)
        """The legacy generator class ``da.random.RandomState`` uses per chunk."""
        return _random.RandomState

    @property
    def default_bit_generator(self) -> type:
        """The bit generator ``da.random.default_rng`` seeds (see :class:`PCG64`)."""
        return PCG64

    @staticmethod
    def ones(*args: Any, **kwargs: Any) -> da.Array:
        """``da.ones`` with autodev chunks."""
        return _with_meta("ones", *args, **kwargs)

    @staticmethod
    def zeros(*args: Any, **kwargs: Any) -> da.Array:
        """``da.zeros`` with autodev chunks."""
        return _with_meta("zeros", *args, **kwargs)

    @staticmethod
    def empty(*args: Any, **kwargs: Any) -> da.Array:
        """``da.empty`` with autodev chunks."""
        return _with_meta("empty", *args, **kwargs)

    @staticmethod
    def full(*args: Any, **kwargs: Any) -> da.Array:
        """``da.full`` with autodev chunks."""
        return _with_meta("full", *args, **kwargs)

    @staticmethod
    def arange(*args: Any, like: Any = None, **kwargs: Any) -> da.Array:
        """``da.arange`` with autodev chunks."""
        with config.set({"array.backend": "numpy"}):
            return da.arange(*args, like=_meta() if like is None else like, **kwargs)
