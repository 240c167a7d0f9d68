"""The CUDA backend: CuPy and cupyx.scipy, imported only when first probed."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from typing import Any, ContextManager

import numpy as np

from .._device import Device
from ._base import Backend

INSTALL_HINT = "pip install 'autodev[cuda12-ctk]' (or 'autodev[cuda13-ctk]' for a CUDA 13 driver)"
#: CuPy 14 loads these CUDA libraries from a CUDA Toolkit or its [ctk] wheels; without
#: them CuPy imports and sees the device, and then every call fails.
TOOLKIT_MODULES = ("cupy_backends.cuda.libs.cublas", "cupy_backends.cuda.libs.cusolver",
                   "cupy_backends.cuda.libs.cusparse", "cupy_backends.cuda.libs.curand",
                   "cupy.cuda.cufft")
TOOLKIT_HINT = ("pip install 'cupy-cuda12x[ctk]' (the CUDA libraries as wheels; 'autodev"
                "[cuda12-ctk]' does the same, cuda13 for a CUDA 13 driver), or install the "
                "CUDA Toolkit matching CuPy's CUDA major")


def missing_toolkit() -> str:
    """Why CuPy cannot load the CUDA libraries it needs (empty when it can)."""
    for name in TOOLKIT_MODULES:
        try:
            importlib.import_module(name)
        except ImportError as err:
            return str(err)
    return ""


def probe_cuda() -> tuple[Any | None, str]:
    """Import CuPy and check for a usable CUDA device.

    Returns ``(cupy, "")`` when usable, else ``(None, reason)``. Only the named
    conditions (not installed, import failure, CUDA runtime error) are caught.
    """
    if importlib.util.find_spec("cupy") is None:
        return None, f"CuPy is not installed; {INSTALL_HINT}"
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as err:
        return None, f"CuPy is installed but failed to import ({err}); {INSTALL_HINT}"
    runtime_error = cupy.cuda.runtime.CUDARuntimeError
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except runtime_error as err:
        return None, f"no usable CUDA device ({err})"
    if count < 1:
        return None, "no CUDA device found"
    missing = missing_toolkit()
    if missing:
        return None, (f"CuPy {cupy.__version__} sees a CUDA device but cannot load the CUDA "
                      f"libraries ({missing}); {TOOLKIT_HINT}")
    return cupy, ""


class CupyBackend(Backend):
    """Runs calls with CuPy on one CUDA device."""

    is_gpu = True

    def __init__(self, cupy: Any, index: int = 0) -> None:
        self._cp = cupy
        self.device = Device("cuda", index)
        self.oom_errors = (cupy.cuda.memory.OutOfMemoryError,)
        self._scipy: dict[str, Any] = {}
        self._cupyx = importlib.import_module("cupyx")

    @property
    def xp(self) -> Any:
        return self._cp

    def scipy(self, name: str) -> Any | None:
        if name not in self._scipy:
            try:
                self._scipy[name] = importlib.import_module(f"cupyx.scipy.{name}")
            except ImportError:
                self._scipy[name] = None
        return self._scipy[name]

    def from_host(self, array: np.ndarray) -> Any:
        with self._cp.cuda.Device(self.device.index):
            return self._cp.asarray(array)

    def to_host(self, native: Any) -> np.ndarray:
        # order="A" keeps a Fortran-ordered array Fortran-ordered (asnumpy's default "C"
        # would make an extra copy and change the layout that views depend on)
        return self._cp.asnumpy(native, order="A")

    def address(self, native: Any) -> int:
        return int(native.data.ptr)

    def write_host(self, native: Any, host: np.ndarray) -> None:
        flags = native.flags
        if flags.c_contiguous or flags.f_contiguous:
            native.set(host)  # straight into the existing memory: no device allocation
        else:  # CuPy's set() takes contiguous arrays only; this stages a device copy
            native[...] = self.from_host(np.ascontiguousarray(host))

    def is_native(self, obj: object) -> bool:
        return type(obj) is self._cp.ndarray

    def synchronize(self) -> None:
        self._cp.cuda.Device(self.device.index).synchronize()

    def free_memory(self) -> None:
        self._cp.get_default_memory_pool().free_all_blocks()
        self._cp.get_default_pinned_memory_pool().free_all_blocks()

    def memory_info(self) -> tuple[int, int] | None:
        free, total = self._cp.cuda.runtime.memGetInfo()
        return int(free), int(total)

    def linalg_errors(self) -> ContextManager[None]:
        # CuPy's default (linalg='ignore') returns inf/nan for singular input;
        # 'raise' makes cuSOLVER's info flag raise numpy.linalg.LinAlgError.
        errstate = getattr(self._cupyx, "errstate", None)
        return errstate(linalg="raise") if errstate else contextlib.nullcontext()
