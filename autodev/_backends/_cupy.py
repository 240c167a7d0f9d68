"""The CUDA backend: CuPy and cupyx.scipy, imported only when first probed."""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
from typing import Any, ContextManager

import numpy as np

from .._device import Device
from ._base import Backend, byte_span

#: What to run where CuPy is missing or unusable: ``autodev doctor`` names the exact
#: command for this machine (the CuPy wheel for its driver, with the CUDA libraries).
INSTALL_HINT = "run `autodev doctor`: it names the pip command that installs CuPy for this machine"
#: The CUDA libraries autodev's calls need, as attributes of ``cupy.cuda``. Reading one runs
#: CuPy's own loader, as ``from cupy.cuda import cublas`` does: CuPy 14 finds the library
#: with cuda-pathfinder (the nvidia-* wheels of its [ctk] extra, a conda environment, a CUDA
#: Toolkit) and only then imports its binding. Importing the binding's module directly
#: (``cupy_backends.cuda.libs.cublas``) skips that loader and fails where only the wheels are.
TOOLKIT_LIBRARIES = ("cublas", "cusolver", "cusparse", "curand", "cufft")


#: The oldest CuPy major autodev runs on (the extras require it too).
MIN_CUPY = 14


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def missing_toolkit(cupy: Any) -> str:
    """Why CuPy cannot load the CUDA libraries it needs (empty when it can).

    Loads each library the way CuPy itself does on first use; CuPy raises ImportError
    (with cuda-pathfinder's message) for a library it cannot find or load. Needs no
    driver: loading a library runs none of its code.
    """
    for name in TOOLKIT_LIBRARIES:
        try:
            getattr(cupy.cuda, name)
        except ImportError as err:
            return f"{name}: {' '.join(str(err).split())}"  # pathfinder's spans lines
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
    major = _major(getattr(cupy, "__version__", "0"))
    if major < MIN_CUPY:
        return None, (f"CuPy {cupy.__version__} is too old: autodev needs CuPy {MIN_CUPY} or "
                      f"later (sort kind=, ...); {INSTALL_HINT}")
    runtime_error = cupy.cuda.runtime.CUDARuntimeError
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except runtime_error as err:
        return None, f"no usable CUDA device ({err})"
    if count < 1:
        return None, "no CUDA device found"
    missing = missing_toolkit(cupy)
    if missing:
        return None, (f"CuPy {cupy.__version__} sees a CUDA device but cannot load the CUDA "
                      f"libraries ({missing}); {INSTALL_HINT}")
    return cupy, ""


class CupyBackend(Backend):
    """Runs calls with CuPy on one CUDA device."""

    is_gpu = True

    def __init__(self, cupy: Any, index: int = 0) -> None:
        self._cp = cupy
        self.device = Device("cuda", index)
        self.oom_errors = (cupy.cuda.memory.OutOfMemoryError,)
        # cupy.fuse traces the function at its first call with new argument kinds: it
        # raises TypeError (an operand, keyword or cast its fusion lacks) or
        # NotImplementedError (a call it does not fuse); NVRTC's CompileException where
        # the generated kernel does not compile
        self.fusion_errors = (TypeError, NotImplementedError,
                              cupy.cuda.compiler.CompileException)
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

    def span_to_host(self, natives: list[Any]) -> tuple[np.ndarray, int] | None:
        span = byte_span(natives, [self.address(native) for native in natives])
        if span is None:
            return None
        low, high = span
        first = natives[0]
        with self._cp.cuda.Device(self.device.index):
            raw = self._cp.ndarray((high - low,), self._cp.uint8,
                                   first.data + (low - int(first.data.ptr)))
            return self._cp.asnumpy(raw), low

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
