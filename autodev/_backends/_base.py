"""The Backend contract (the registry that holds backends is :mod:`autodev._backends`)."""

from __future__ import annotations

import contextlib
import importlib
from abc import ABC, abstractmethod
from types import ModuleType
from typing import Any, Callable, ContextManager

import numpy as np

from .._device import Device


class Backend(ABC):
    """What runs calls on one device.

    Contract
    --------
    - ``xp`` is a NumPy-like array module whose functions take and return this
      backend's *native* arrays (``numpy.ndarray``, ``cupy.ndarray``, ...).
    - ``scipy(name)`` returns the SciPy-like module for ``"fft"``, ``"linalg"``,
      ``"special"``, ``"sparse"``, ``"sparse.linalg"``, ``"signal"`` or None.
    - ``from_host`` copies a NumPy array onto the device; ``to_host`` copies a
      native array back into a fresh NumPy array; ``write_host`` copies a NumPy
      array into an existing native one. These are the *only* transfers; the
      dispatcher counts them.
    - ``owner(native)`` returns the object owning a native array's memory, so
      views can be tied to the storage they write through.
    - ``oom_errors`` names the exception types meaning "out of device memory";
      ``free_memory()`` releases cached blocks; ``fusion_errors`` names what ``xp.fuse``
      raises for a chain it cannot fuse. No other exception is ever caught around a call.
    - ``linalg_errors()`` is a context in which singular or not positive-definite
      matrices raise ``numpy.linalg.LinAlgError`` as NumPy does.
    - ``synchronize()`` waits for queued work (for timing).
    - A GPU backend sets ``is_gpu = True`` and a ``device`` of the kind it is registered
      under (:func:`autodev._backends.register_backend`); its native arrays must be a type
      of their own, never ``numpy.ndarray``, so that no one mistakes them for host data.
    """

    device: Device
    is_gpu: bool = False
    oom_errors: tuple[type[BaseException], ...] = ()
    #: What the array module's ``fuse`` raises for a function it cannot fuse (when it
    #: traces or compiles it): a deferred chain then runs as the device's calls in order.
    fusion_errors: tuple[type[BaseException], ...] = ()
    #: dtype kinds (``dtype.kind``) this device computes on at all.
    dtype_kinds: frozenset[str] = frozenset("biufc")

    @property
    @abstractmethod
    def xp(self) -> Any:
        """The NumPy-like array module."""

    @abstractmethod
    def scipy(self, name: str) -> Any | None:
        """The SciPy-like submodule ``name`` (e.g. ``"linalg"``), or None."""

    @abstractmethod
    def from_host(self, array: np.ndarray) -> Any:
        """Copy a NumPy array onto this device."""

    @abstractmethod
    def to_host(self, native: Any) -> np.ndarray:
        """Copy a native array of this device into a new NumPy array."""

    @abstractmethod
    def is_native(self, obj: object) -> bool:
        """True if ``obj`` is an array of this device."""

    def write_host(self, native: Any, host: np.ndarray) -> None:
        """Copy ``host`` into the existing native array ``native`` (same shape and dtype),
        allocating no new device array where the device can avoid it."""
        native[...] = self.from_host(host)

    def owner(self, native: Any) -> Any:
        """The object owning ``native``'s memory (itself when it owns it)."""
        base = getattr(native, "base", None)
        return native if base is None else base

    def owner_to_host(self, native: Any) -> tuple[np.ndarray, int] | None:
        """A host copy of the array owning ``native``'s memory, laid out as it is (so a view
        of it at the same byte offset is ``native``'s host copy), and the device address of
        its first byte; None if that owner is not a contiguous array of this device."""
        owner = self.owner(native)
        if not self.is_native(owner) or not (owner.flags.c_contiguous
                                             or owner.flags.f_contiguous):
            return None
        host = self.to_host(owner)
        return (host, self.address(owner)) if host.strides == owner.strides else None

    def span_to_host(self, natives: list[Any]) -> tuple[np.ndarray, int] | None:
        """A host copy (bytes) of the device memory from the first to the last byte any of
        ``natives`` (views of one allocation) reads, and the device address of its first
        byte; None where this device copies no raw ranges of memory."""
        return None

    def address(self, native: Any) -> int:
        """The address of ``native``'s first element (with shape, strides and dtype it
        names a view of a buffer: the key of the mirrors views share)."""
        return int(native.__array_interface__["data"][0])

    def synchronize(self) -> None:
        """Wait until queued work on this device has finished."""

    def free_memory(self) -> None:
        """Release cached device memory blocks."""

    def memory_info(self) -> tuple[int, int] | None:
        """(free, total) bytes of device memory, or None where unknown."""
        return None

    def linalg_errors(self) -> ContextManager[None]:
        """A context in which failed factorizations raise ``LinAlgError``."""
        return contextlib.nullcontext()

    def supports_dtype(self, dtype: np.dtype) -> bool:
        """True if this device can hold and compute on arrays of ``dtype``."""
        if dtype.kind not in self.dtype_kinds:
            return False
        return dtype.itemsize <= (16 if dtype.kind == "c" else 8)

    def resolve(self, path: str) -> Callable[..., Any] | None:
        """The callable at dotted ``path`` (e.g. ``"linalg.solve"``), or None if absent."""
        head, _, rest = path.rpartition(".")
        module: Any = self.xp
        if head:
            module = self._submodule(head)
            if module is None:
                return None
        return getattr(module, rest, None)

    def _submodule(self, head: str) -> Any | None:
        if head.startswith("scipy."):
            return self.scipy(head[len("scipy."):])
        module: Any = self.xp
        for part in head.split("."):
            module = getattr(module, part, None)
            if module is None:
                return None
        return module


def import_optional(name: str) -> ModuleType | None:
    """Import ``name`` if it is installed, else return None (ImportError only)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def byte_span(natives: list[Any], addresses: list[int]) -> tuple[int, int] | None:
    """The first and one past the last byte that arrays ``natives``, whose first elements
    are at ``addresses``, read (None if all are empty)."""
    spans = []
    for native, start in zip(natives, addresses):
        if native.size == 0:
            continue
        low = high = start
        for n, stride in zip(native.shape, native.strides):
            low += min(0, (n - 1) * stride)
            high += max(0, (n - 1) * stride)
        spans.append((low, high + native.itemsize))
    if not spans:
        return None
    return min(low for low, _ in spans), max(high for _, high in spans)
