"""The GPU set-up checks behind ``doctor()``: each a status, a detail and the fix.

What is checked, in order, is the help text of ``autodev doctor``
(:mod:`autodev._cli.doctor`), which prints them.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
import shlex
import subprocess
import sys
import tempfile
from importlib import metadata
from typing import Any

from ._config import ENV

OK, INFO, WARN, FAIL = "ok", "info", "warn", "fail"


def _check(name: str, status: str, detail: str, fix: str = "") -> dict[str, str]:
    return {"check": name, "status": status, "detail": detail, "fix": fix}


def doctor() -> list[dict[str, str]]:
    """Every check as ``{"check", "status", "detail", "fix"}``; status ok/info/warn/fail.

    The last check, ``install``, names the one command that installs what this machine
    still needs for its GPU (nothing on a machine without an NVIDIA driver).
    """
    driver = driver_cuda_version()
    plan = install_plan(driver)
    checks = [_driver_check(driver)]
    cupy_checks, cupy = _cupy_checks(driver, plan)
    checks += cupy_checks
    if cupy is not None and driver is None:
        checks.append(_check("CUDA device", INFO, "CuPy is installed but there is no NVIDIA "
                             "driver, so no GPU: autodev runs every call on NumPy"))
    elif cupy is not None:
        checks += _device_checks(cupy, driver)
    checks += _profile_checks()
    checks.append(_install_check(driver, plan))
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


#: The CUDA majors CuPy has wheels for (``cupy-cuda12x``, ``cupy-cuda13x``).
CUDA_MAJORS = (12, 13)


def wheel_cuda_major(driver: tuple[int, int]) -> int | None:
    """The CUDA major of the CuPy wheel for this driver: its own, or the newest CuPy has
    for a driver newer than that (drivers run older CUDA); None for a driver too old."""
    fitting = [major for major in CUDA_MAJORS if major <= driver[0]]
    return fitting[-1] if fitting else None


def cupy_requirement(major: int) -> str:
    """CuPy for CUDA ``major`` with the CUDA libraries as wheels (its ``[ctk]`` extra);
    the same requirement as autodev's ``cuda12-ctk`` / ``cuda13-ctk`` extras."""
    from ._backends._cupy import MIN_CUPY

    return f"cupy-cuda{major}x[ctk]>={MIN_CUPY}"


def pip_command(step: list[str]) -> str:
    """``step`` (pip's arguments) as a shell command for this interpreter's pip."""
    return " ".join(shlex.quote(word) for word in [sys.executable, "-m", "pip", *step])


def install_command(driver: tuple[int, int] | None) -> str:
    """The one command that installs what this machine still needs for its GPU
    (empty when nothing is missing, or without an NVIDIA driver)."""
    return _command(install_plan(driver))


def _command(plan: list[list[str]]) -> str:
    return " && ".join(pip_command(step) for step in plan)


def install_plan(driver: tuple[int, int] | None) -> list[list[str]]:
    """What to run with pip, step by step, so that CuPy uses this machine's GPU: CuPy
    for the driver's CUDA major with its CUDA libraries, after removing CuPy packages
    that clash. Empty when that is all there already, and without a driver (a machine
    with no GPU needs no CuPy) or with one too old for any CuPy wheel."""
    major = wheel_cuda_major(driver) if driver is not None else None
    if driver is None or major is None:
        return []
    found = _cupy_distributions()
    clashing = len(found) > 1 or any((_wheel_cuda_major(name) or 0) > driver[0]
                                     for name in found)
    if clashing:
        return [["uninstall", "-y", *found], ["install", cupy_requirement(major)]]
    if not found:
        return [["install", cupy_requirement(major)]]
    return _repair_plan(found[0], _wheel_cuda_major(found[0]) or major)


def _repair_plan(name: str, major: int) -> list[list[str]]:
    """The steps for the one CuPy package installed: none if it imports, is new enough
    and loads the CUDA libraries; else its [ctk] requirement (the same CUDA major)."""
    from ._backends._cupy import MIN_CUPY, _major, missing_toolkit

    if _major(metadata.version(name)) < MIN_CUPY:
        return [["install", cupy_requirement(major)]]
    try:
        import cupy
    except ImportError:
        return [["install", "--force-reinstall", name]]
    return [["install", cupy_requirement(major)]] if missing_toolkit(cupy) else []


def install(plan: list[list[str]]) -> int:
    """Run ``plan`` (from :func:`install_plan`) with this interpreter's pip, printing
    each command first; pip's exit status (0 when there was nothing to run)."""
    for step in plan:
        print(pip_command(step), flush=True)
        code = subprocess.call([sys.executable, "-m", "pip", *step])
        if code:
            return code
    return 0


def _install_check(driver: tuple[int, int] | None, plan: list[list[str]]) -> dict[str, str]:
    if plan:
        return _check("install", WARN, "this machine has an NVIDIA GPU that CuPy cannot use "
                      "yet (see above); one command installs what is missing "
                      "(`autodev doctor --install` runs it)", _command(plan))
    if driver is not None and wheel_cuda_major(driver) is None:
        return _check("install", FAIL, f"the NVIDIA driver supports CUDA {driver[0]}."
                      f"{driver[1]}, older than any CuPy wheel (CUDA {CUDA_MAJORS[0]})",
                      "update the NVIDIA driver (https://www.nvidia.com/Download/index.aspx)")
    what = ("CuPy and the CUDA libraries for this driver are installed" if driver else
            "no NVIDIA GPU here: autodev runs as NumPy and needs no CuPy")
    return _check("install", OK, f"nothing to install ({what})")


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


def _cupy_checks(driver: tuple[int, int] | None,
                 plan: list[list[str]]) -> tuple[list[dict[str, str]], Any]:
    """CuPy installed once, for this driver, importable, new enough, with its CUDA
    libraries. Every fix is the one command of ``plan``."""
    fix = _command(plan)
    found = _cupy_distributions()
    if not found:
        if driver is None:
            return [_check("CuPy", INFO, "not installed; not needed on a machine with no "
                           "NVIDIA GPU")], None
        return [_check("CuPy", WARN, "not installed: the GPU is unused", fix)], None
    checks = []
    if len(found) > 1:
        checks.append(_check("CuPy", FAIL, f"several CuPy packages installed ({', '.join(found)}); "
                             "they overwrite each other",
                             fix or f"pip uninstall -y {' '.join(found[1:])}"))
    wheel_major = _wheel_cuda_major(found[0])
    if driver and wheel_major and wheel_major > driver[0]:
        checks.append(_check("CuPy vs driver", FAIL,
                             f"{found[0]} needs a CUDA {wheel_major} driver; this driver supports "
                             f"CUDA {driver[0]}.{driver[1]}",
                             f"{fix} (or update the NVIDIA driver)" if fix
                             else "update the NVIDIA driver"))
    return _cupy_import_checks(found[0], driver, fix, checks)


def _cupy_import_checks(name: str, driver: tuple[int, int] | None, fix: str,
                        checks: list[dict[str, str]]) -> tuple[list[dict[str, str]], Any]:
    reinstall = fix or f"pip install --force-reinstall {name}"
    if importlib.util.find_spec("cupy") is None:
        return checks + [_check("CuPy import", FAIL, f"{name} is installed but `cupy` is "
                                "not importable", reinstall)], None
    try:
        import cupy
    except ImportError as err:
        return checks + [_check("CuPy import", FAIL, f"import cupy failed: {err}",
                                reinstall)], None
    checks.append(_check("CuPy import", OK, f"cupy {cupy.__version__} ({name})"))
    from ._backends._cupy import MIN_CUPY, _major

    if _major(cupy.__version__) < MIN_CUPY:
        checks.append(_check("CuPy version", WARN if driver is None else FAIL,
                             f"CuPy {cupy.__version__} is older than {MIN_CUPY}, which "
                             "autodev needs", fix or f"pip install '{name}>={MIN_CUPY}'"))
    checks.append(_toolkit_check(cupy, driver, fix))
    return checks, cupy


def _toolkit_check(cupy: Any, driver: tuple[int, int] | None, fix: str) -> dict[str, str]:
    """CuPy 14 needs the CUDA libraries (its [ctk] wheels, conda's or a CUDA Toolkit),
    loaded as CuPy loads them."""
    from ._backends._cupy import missing_toolkit

    missing = missing_toolkit(cupy)
    if not missing:
        return _check("CUDA libraries", OK, "CuPy loads cuBLAS, cuSOLVER, cuSPARSE, cuRAND "
                      "and cuFFT")
    if driver is None:
        return _check("CUDA libraries", INFO, f"CuPy {cupy.__version__} cannot load the CUDA "
                      f"libraries ({missing}); needed only on a machine with an NVIDIA GPU")
    return _check("CUDA libraries", FAIL, f"CuPy {cupy.__version__} cannot load the CUDA "
                  f"libraries ({missing}); no GPU call would run",
                  fix or "reinstall CuPy's [ctk] extra or a CUDA Toolkit matching its CUDA major")


def _wheel_cuda_major(name: str) -> int | None:
    tail = name.lower().removeprefix("cupy-cuda")
    digits = tail[:2] if tail[:2].isdigit() else ""
    return int(digits) if digits else None


def _reinstall_command(driver: tuple[int, int] | None) -> str:
    """CuPy and its CUDA libraries installed again, for this driver's CUDA major."""
    major = wheel_cuda_major(driver) if driver else None
    return pip_command(["install", "--force-reinstall", cupy_requirement(major or CUDA_MAJORS[0])])


def _device_checks(cupy: Any, driver: tuple[int, int] | None) -> list[dict[str, str]]:
    runtime = cupy.cuda.runtime
    errors = (runtime.CUDARuntimeError, cupy.cuda.driver.CUDADriverError)
    try:
        count = runtime.getDeviceCount()
    except errors as err:
        return [_check("CUDA device", FAIL, f"CuPy cannot reach a device: {err}",
                       "check `nvidia-smi`; if the driver is too old for this CuPy: "
                       + _reinstall_command(driver))]
    if count < 1:
        return [_check("CUDA device", WARN, "no CUDA device visible",
                       "check CUDA_VISIBLE_DEVICES and `nvidia-smi`")]
    name = runtime.getDeviceProperties(0)["name"]
    checks = [_check("CUDA device", OK, f"{count} device(s); cuda:0 is "
                     f"{name.decode() if isinstance(name, bytes) else name}")]
    from ._backends._cupy import missing_toolkit

    if missing_toolkit(cupy):  # a kernel would raise; the "CUDA libraries" check names the fix
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
                             + _reinstall_command(driver)))
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
