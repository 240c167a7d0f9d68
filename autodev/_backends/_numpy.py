"""The CPU backend: NumPy and SciPy."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

from .. import _host_buffers, _threaded
from .._device import CPU
from ._base import Backend


class NumpyBackend(Backend):
    """Runs calls with NumPy and SciPy on the host."""

    device = CPU
    is_gpu = False

    def __init__(self) -> None:
        self._scipy: dict[str, Any] = {}

    @property
    def xp(self) -> Any:
        return np

    def scipy(self, name: str) -> Any | None:
        module = self._scipy.get(name)
        if module is None:
            module = importlib.import_module(f"scipy.{name}")
            self._scipy[name] = module
        return module

    def from_host(self, array: np.ndarray) -> np.ndarray:
        return array

    def write_host(self, native: Any, host: np.ndarray) -> None:
        native[...] = host

    def to_host(self, native: Any) -> np.ndarray:
        return np.asarray(native)

    def is_native(self, obj: object) -> bool:
        return type(obj) is np.ndarray

    def supports_dtype(self, dtype: np.dtype) -> bool:
        return True

    def free_memory(self) -> None:
        """Give the host buffer pool's free blocks back (:mod:`autodev._host_buffers`)."""
        _host_buffers.release()

    def resolve(self, path: str) -> Any | None:
        """NumPy's callable at ``path``; ufuncs and reductions come able to split a large
        call over threads (:func:`autodev._threaded.threaded`)."""
        found = super().resolve(path)
        return found if found is None else _threaded.threaded(path, found)
