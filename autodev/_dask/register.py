"""autodev arrays as Dask chunks: registration with Dask's dispatch registries.

Dask finds the implementation of ``concatenate``, ``tensordot``, ``percentile``,
... for a chunk by the chunk's type. :func:`register` tells it autodev's, marks
autodev's array as a chunk type Dask wraps (so ``dask_array + autodev_array``
stays a Dask array of autodev chunks, NEP 13), tells autodev to hand calls that
involve a Dask array to Dask (NEP 13/18), and gives Dask's ``sizeof`` the bytes
an autodev array holds (distributed's memory accounting and transfer costs).

Nothing here imports Dask at ``import autodev``, and nothing waits on imports: no
``sys.meta_path`` finder (issue 20). :func:`install` registers at once when
``dask.array`` is loaded already (as in every worker process, which unpickles autodev's
arrays after Dask is running). Where autodev comes first, registration waits for the
first meeting, which Dask's protocols and autodev's own bring to autodev before Dask
needs it: Dask hashing an autodev array for a graph's key (``__dask_tokenize__``:
``da.from_array``, ``da.asarray``, ``delayed``, array arguments of ``map_blocks``), or an
autodev operator, ufunc or NumPy function meeting a Dask array (a finder in
``autodev._dispatch.WRAPPER_FINDERS``, which is handed only types that override NumPy).
The ``array.backend`` entry point (``autodev._dask.backend``) registers as well.
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import numpy as np

from .._array import ndarray
from .._dispatch import DEFER_TO, WRAPPER_FINDERS
from .._operators import PROTOCOLS
from .._namespace import resolve_name

_LOCK = threading.Lock()
_REGISTERED = False


def is_registered() -> bool:
    """True once autodev's array is registered with Dask in this process."""
    return _REGISTERED


def install() -> None:
    """Register with Dask now if ``dask.array`` is loaded, else on first meeting Dask
    (no Dask import, no import hook)."""
    PROTOCOLS.dask_tokenize = _token
    if "dask.array" in sys.modules:
        register()
    elif _meets not in WRAPPER_FINDERS:
        WRAPPER_FINDERS.append(_meets)


def register() -> None:
    """Register autodev's array with Dask's dispatch registries (idempotent; imports Dask)."""
    global _REGISTERED
    with _LOCK:
        if _REGISTERED:
            return
        _register_lookups()
        _register_chunk_type()
        _REGISTERED = True
        if _meets in WRAPPER_FINDERS:
            WRAPPER_FINDERS.remove(_meets)


def _meets(t: type) -> bool:
    """The finder: registers, and says so, where ``t`` is Dask's array (whose module is
    loaded where one exists: nothing is imported to find out)."""
    dask_array = sys.modules.get("dask.array")
    found = getattr(dask_array, "Array", None)
    if found is None or not isinstance(t, type) or not issubclass(t, found):
        return False
    register()
    return True


def _token(a: ndarray) -> tuple[Any, ...]:
    """``a.__dask_tokenize__()``: what ``a`` pickles as (its values on the host, where it
    lives, its flags), each hashed as Dask hashes it. Only Dask calls it: where
    ``dask.array`` is loaded, autodev registers with it first if it has not yet."""
    if not _REGISTERED and "dask.array" in sys.modules:
        register()
    from dask.base import normalize_token

    kind = type(a)
    return (f"{kind.__module__}.{kind.__qualname__}", str(a._device), a._scalar, a._face,
            normalize_token(a._host()))


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
