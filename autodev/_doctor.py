"""The GPU set-up checks behind ``doctor()``: each a status, a detail and the fix.

What is checked, in order, is the help text of ``autodev doctor``
(:mod:`autodev._cli.doctor`), which prints them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import sys
import tempfile
from importlib import metadata
from typing import Any

from ._config import ENV

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"


def _check(name: str, status: str, detail: str, fix: str = "") -> dict[str, str]:
    return {"check": name, "status": status, "detail": detail, "fix": fix}


def doctor() -> list[dict[str, str]]:
    """Every check as ``{"check", "status", "detail", "fix"}``; status ok/info/warn/fail."""
    driver = driver_cuda_version()
    checks = [_driver_check(driver)]
    cupy_checks, cupy = _cupy_checks(driver)
    checks += cupy_checks
    if cupy is not None and driver is None:
        checks.append(_check("CUDA device", INFO, "CuPy is installed but there is no NVIDIA "
                             "driver, so no GPU: autodev runs every call on NumPy"))
    elif cupy is not None:
        checks += _device_checks(cupy, driver)
    checks += _profile_checks()
    return checks


def driver_cuda_version() -> tuple[int, int] | None:
    """The CUDA version the installed NVIDIA driver supports, or None without a driver.

    Asks the driver library itself (``cuDriverGetVersion``), so it works before
    CuPy is installed.
    """
    names = ["nvcuda.dll"] if sys.platform == "win32" else ["libcuda.so.1", "libcuda.so",
                                                            ctypes.util.find_library("cuda")]
    for name in filter(None, names):
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        version = ctypes.c_int(0)
        if lib.cuDriverGetVersion(ctypes.byref(version)) == 0 and version.value:
            return version.value // 1000, (version.value % 1000) // 10
    return None


def install_command(driver: tuple[int, int] | None) -> str:
    """The pip command installing CuPy for this driver's CUDA major."""
    major = driver[0] if driver else 12
    extra = {12: "cuda12-ctk", 13: "cuda13-ctk"}.get(major)
    if extra is None:
        return (f"your driver supports CUDA {major}, which autodev has no extra for; update the "
                "NVIDIA driver to one supporting CUDA 12 or 13, then pip install 'autodev[cuda12]'")
    return f"pip install 'autodev[{extra}]'"


def _driver_check(driver: tuple[int, int] | None) -> dict[str, str]:
    if driver is None:
        return _check("NVIDIA driver", INFO, "no NVIDIA driver found (libcuda not loadable); "
                      "autodev runs every call on NumPy",
                      "on a machine with an NVIDIA GPU, install its driver "
                      "(https://www.nvidia.com/Download/index.aspx)")
    return _check("NVIDIA driver", OK, f"driver supports CUDA up to {driver[0]}.{driver[1]}")


def _cupy_distributions() -> list[str]:
    return sorted({d.metadata["Name"] for d in metadata.distributions()
                   if (d.metadata["Name"] or "").lower().startswith("cupy")})


def _cupy_checks(driver: tuple[int, int] | None) -> tuple[list[dict[str, str]], Any]:
    found = _cupy_distributions()
    if not found:
        status = WARN if driver else INFO
        return [_check("CuPy", status, "not installed", install_command(driver))], None
    checks = []
    if len(found) > 1:
        checks.append(_check("CuPy", FAIL, f"several CuPy packages installed ({', '.join(found)}); "
                             "they overwrite each other",
                             f"pip uninstall -y {' '.join(found)} && {install_command(driver)}"))
    wheel_major = _wheel_cuda_major(found[0])
    if driver and wheel_major and wheel_major > driver[0]:
        checks.append(_check("CuPy vs driver", FAIL,
                             f"{found[0]} needs a CUDA {wheel_major} driver; this driver supports "
                             f"CUDA {driver[0]}.{driver[1]}",
                             f"pip uninstall -y {found[0]} && {install_command(driver)} "
                             "(or update the NVIDIA driver)"))
    if importlib.util.find_spec("cupy") is None:
        return checks + [_check("CuPy import", FAIL, f"{found[0]} is installed but `cupy` is "
                                "not importable", f"pip install --force-reinstall {found[0]}")], None
    try:
        import cupy
    except ImportError as err:
        return checks + [_check("CuPy import", FAIL, f"import cupy failed: {err}",
                                f"pip install --force-reinstall {found[0]}")], None
    checks.append(_check("CuPy import", OK, f"cupy {cupy.__version__} ({found[0]})"))
    from ._backends._cupy import MIN_CUPY, _major

    if _major(cupy.__version__) < MIN_CUPY:
        checks.append(_check("CuPy version", FAIL, f"CuPy {cupy.__version__} is older than "
                             f"{MIN_CUPY}, which autodev needs", install_command(driver)))
    checks.append(_toolkit_check(cupy, driver))
    return checks, cupy


def _toolkit_check(cupy: Any, driver: tuple[int, int] | None) -> dict[str, str]:
    """CuPy 14 needs the CUDA libraries (a CUDA Toolkit or its [ctk] wheels)."""
    from ._backends._cupy import TOOLKIT_HINT, missing_toolkit

    missing = missing_toolkit()
    if not missing:
        return _check("CUDA libraries", OK, "CuPy loads cuBLAS, cuSOLVER, cuSPARSE, cuRAND "
                      "and cuFFT")
    status = FAIL if driver else INFO
    return _check("CUDA libraries", status, f"CuPy {cupy.__version__} cannot load the CUDA "
                  f"libraries ({missing}); no GPU call would run", TOOLKIT_HINT)


def _wheel_cuda_major(name: str) -> int | None:
    tail = name.lower().removeprefix("cupy-cuda")
    digits = tail[:2] if tail[:2].isdigit() else ""
    return int(digits) if digits else None


def _device_checks(cupy: Any, driver: tuple[int, int] | None) -> list[dict[str, str]]:
    runtime = cupy.cuda.runtime
    errors = (runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError)
    try:
        count = runtime.getDeviceCount()
    except errors as err:
        return [_check("CUDA device", FAIL, f"CuPy cannot reach a device: {err}",
                       "check `nvidia-smi`; if the driver is too old for this CuPy, "
                       + install_command(driver))]
    if count < 1:
        return [_check("CUDA device", WARN, "no CUDA device visible",
                       "check CUDA_VISIBLE_DEVICES and `nvidia-smi`")]
    name = runtime.getDeviceProperties(0)["name"]
    checks = [_check("CUDA device", OK, f"{count} device(s); cuda:0 is "
                     f"{name.decode() if isinstance(name, bytes) else name}")]
    from ._backends._cupy import missing_toolkit

    if missing_toolkit():  # a kernel would raise; the "CUDA libraries" check names the fix
        return checks
    compile_error = getattr(cupy.cuda.compiler, "CompileException", errors[0])
    try:
        total = float(cupy.arange(1000, dtype=cupy.float64).sum())
        good = total == 499500.0
        checks.append(_check("kernel", OK if good else FAIL,
                             "allocated memory and ran a kernel" if good
                             else f"a kernel gave a wrong sum ({total})",
                             "" if good else "update the NVIDIA driver"))
    except (*errors, compile_error, cupy.cuda.memory.OutOfMemoryError) as err:
        checks.append(_check("kernel", FAIL, f"running a kernel failed: {err}",
                             "check the CUDA toolkit libraries (NVRTC) match the CuPy wheel: "
                             + install_command(driver)))
        return checks
    try:
        import cupyx

        cupyx.empty_pinned((1024,), dtype="float64")
        checks.append(_check("pinned memory", OK, "page-locked host memory allocates"))
    except (*errors, cupy.cuda.memory.OutOfMemoryError) as err:
        checks.append(_check("pinned memory", WARN, f"cannot allocate pinned memory: {err}",
                             "raise the locked-memory limit (ulimit -l) or the container's"))
    return checks


def _profile_checks() -> list[dict[str, str]]:
    from ._cost import profile as _profile
    from ._backends import active_gpu

    checks = []
    directory = _profile.default_path().parent
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=directory):
            pass
        checks.append(_check("profile directory", OK, f"{directory} is writable"))
    except OSError as err:
        checks.append(_check("profile directory", FAIL, f"cannot write to {directory}: {err}",
                             "set AUTODEV_CACHE_DIR to a writable directory"))
    found = _profile.resolve(gpu=active_gpu())
    if found.problem:
        checks.append(_check("profile", WARN, found.problem, found.fix))
    elif found.used is None:
        checks.append(_check("profile", WARN if active_gpu() else INFO,
                             "not calibrated: using the embedded default",
                             "autodev calibrate  (or --quick, about 10 s)"))
    else:
        checks.append(_check("profile", OK, f"{found.used} ({found.source}; fingerprint "
                             f"{found.fingerprint}; GPU {found.gpu_fingerprint})"))
    if ENV.simulate_gpu:  # as read at import, by the rule every variable follows
        checks.append(_check("simulated GPU", INFO, "AUTODEV_SIMULATE_GPU is set: sim:0 stands "
                             "in for a GPU (for tests)", "unset AUTODEV_SIMULATE_GPU"))
    return checks
