"""autodev arrays as Dask chunks: registration with Dask's dispatch registries.

Dask finds the implementation of ``concatenate``, ``tensordot``, ``percentile``,
... for a chunk by the chunk's type. :func:`register` tells it autodev's, marks
autodev's array as a chunk type Dask wraps (so ``dask_array + autodev_array``
stays a Dask array of autodev chunks, NEP 13), tells autodev to hand calls that
involve a Dask array to Dask (NEP 13/18), and gives Dask's ``sizeof`` the bytes
an autodev array holds (distributed's memory accounting and transfer costs).

Nothing here imports Dask at ``import autodev``. :func:`install` registers at
once when ``dask.array`` is already loaded, and otherwise waits for it with an
import hook that fires once, when ``dask.array`` finishes loading, and then
removes itself. The ``array.backend`` entry point (``autodev._dask.backend``)
calls :func:`register` as well.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
from types import ModuleType
from typing import Any, Sequence

import numpy as np

from .._array import ndarray
from .._dispatch import DEFER_TO
from .._namespace import resolve_name

_LOCK = threading.Lock()
_REGISTERED = False


def is_registered() -> bool:
    """True once autodev's array is registered with Dask in this process."""
    return _REGISTERED


def install() -> None:
    """Register with Dask now if ``dask.array`` is loaded, else when it is (no Dask import)."""
    if "dask.array" in sys.modules:
        register()
    elif not any(isinstance(f, _AfterDaskArray) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterDaskArray())


def register() -> None:
    """Register autodev's array with Dask's dispatch registries (idempotent; imports Dask)."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED:
            return
        _register_lookups()
        _register_chunk_type()
        _REGISTERED = True


def _register_lookups() -> None:
    from dask.array import backends, dispatch
    from dask.array.percentile import _percentile
    from dask.sizeof import sizeof

    array = ndarray
    dispatch.concatenate_lookup.register(array, _public("concatenate"))
    dispatch.take_lookup.register(array, _public("take"))
    dispatch.tensordot_lookup.register(array, _public("tensordot"))
    dispatch.einsum_lookup.register(array, _public("einsum"))
    dispatch.empty_lookup.register(array, _public("empty"))
    dispatch.divide_lookup.register(array, _public("divide"))
    dispatch.percentile_lookup.register(array, _percentile)
    # counts stay autodev arrays, so a mean's sum and count live on one device
    dispatch.numel_lookup.register(array, backends._numel_arraylike)
    dispatch.nannumel_lookup.register(array, backends._nannumel)
    dispatch.to_numpy_dispatch.register(array, _to_numpy)
    dispatch.to_cupy_dispatch.register(array, _to_cupy)
    sizeof.register(array, _sizeof)


def _register_chunk_type() -> None:
    from dask.array import Array
    from dask.array.chunk_types import register_chunk_type

    register_chunk_type(ndarray)
    DEFER_TO.add(Array)  # autodev hands ``autodev_array + dask_array`` to Dask


def _public(name: str) -> Any:
    """``autodev.<name>``, the very object (the namespace resolves and caches it)."""
    return resolve_name(np, "", name)


def _to_numpy(data: Any, **kwargs: Any) -> np.ndarray:
    """A chunk as a NumPy array (a copy when it lives on a GPU)."""
    return np.asarray(data, **kwargs)


def _to_cupy(data: Any, **kwargs: Any) -> Any:
    """A chunk as a CuPy array: its data on the CUDA GPU (moved there, counted, if need be)."""
    import cupy

    from .._backends import active_gpu
    from .._residency import storage as _residency

    gpu = active_gpu()
    if gpu is not None and gpu.device.kind == "cuda":
        return cupy.asarray(_residency.native_on(data, gpu.device), **kwargs)
    return cupy.asarray(data.get(), **kwargs)


def _sizeof(data: Any) -> int:
    return int(data.nbytes)


class _AfterDaskArray:
    """Runs :func:`register` right after ``dask.array`` has loaded, then leaves ``sys.meta_path``.

    (A meta path finder by protocol, not by ``importlib.abc``: importing that module
    loads ``importlib.resources``, ``tempfile`` and ``shutil``, ~3 ms of ``import autodev``.)

    It loads nothing itself: it takes the spec the standard path finder gives for
    ``dask.array`` and wraps its loader, so the module loads exactly as it would have.
    It stays in place until the module actually executes (a mere ``find_spec`` probe
    for ``dask.array`` must not use it up).
    """

    def find_spec(self, name: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if name != "dask.array":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _RegisteringLoader(spec.loader, self)  # type: ignore[assignment]
        return spec


class _RegisteringLoader:
    """A loader that runs the wrapped one, then removes the finder and calls :func:`register`."""

    def __init__(self, inner: Any, finder: _AfterDaskArray) -> None:
        self._inner = inner
        self._finder = finder

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self._inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self._inner.exec_module(module)
        if self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        register()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)
