"""Profiles: the measured cost-model parameters of one machine, as versioned JSON.

A profile is only ever read as JSON and validated before use; anything that
does not validate is rejected with one warning naming the file and the fix,
and the embedded default is used instead. A calibrated profile in the cache
directory is used only on the machine its fingerprint describes.

Versions: 1 had the curves only; 2 adds a structured ``fingerprint``
(``cpu``/``libraries``/``gpu``), the measured points behind each curve
(``measurements``), pinned-memory transfer links and a free-form ``report``.
Version 1 files migrate on read (their empty fingerprint means "unkeyed").
"""

from __future__ import annotations

import json
import math
import os
import stat
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, TypeGuard

from .._config import ENV
from .model import DEVICE_CLASSES, DTYPE_CLASSES, FAMILIES, PROFILE_WRITTEN, _find_curve

if TYPE_CHECKING:  # fingerprint loads lazily (platform, metadata): only its protocol here
    from .fingerprint import GpuBackend

FORMAT = "autodev-profile"
VERSION = 2
FILENAME = "profile.json"
FIX = "run `autodev calibrate` to measure this machine"
TRANSFER_LINKS = ("h2d", "d2h", "h2d_pinned", "d2h_pinned")
_MAX_POINTS = 1024
_POINT_RANGE = 1e18   # largest size, work or byte count taken as a measurement
_SECONDS_RANGE = 1e5  # largest measured time
#: Bounds outside which a number is taken as garbage rather than a measurement.
_LATENCY_RANGE = (0.0, 10.0)          # seconds
_RATE_RANGE = (1.0, 1e18)             # work units or bytes per second
#: Largest profile file read: a full calibration with its measurements is ~100 KiB, so
#: this bounds the time and memory reading any file can take (it is read only if it is
#: a regular file: a FIFO, a device such as /dev/zero or a directory is refused unopened).
MAX_BYTES = 4 * 2**20


class ProfileError(ValueError):
    """A profile file is not a valid autodev profile."""


def cache_dir() -> Path:
    """Directory holding calibrated profiles (``AUTODEV_CACHE_DIR`` overrides)."""
    if ENV.cache_dir:
        return Path(ENV.cache_dir)
    import platformdirs

    return Path(platformdirs.user_cache_dir("autodev", appauthor=False))


def default_path() -> Path:
    """Where ``autodev calibrate`` writes, and autodev looks for, this machine's profile."""
    return Path(ENV.profile) if ENV.profile else cache_dir() / FILENAME


def embedded_default() -> dict[str, Any]:
    """The profile shipped in the package (used until this machine is calibrated)."""
    text = resources.files("autodev").joinpath("_data/default_profile.json").read_text()
    return validate(json.loads(text), "<embedded default>")


def validate(data: object, where: str) -> dict[str, Any]:
    """Check ``data`` against the profile schema (migrating older versions); return
    the current-version profile or raise ProfileError."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProfileError(f"{where}: not an autodev profile (no 'format': {FORMAT!r})")
    version = data.get("version")
    if isinstance(version, bool):
        raise ProfileError(
            f"{where}: profile version must be 1 or {VERSION}. Got {_shown(version)} instead."
        )
    if version == 1:
        data = _migrate_v1(data)
    elif version != VERSION:
        raise ProfileError(
            f"{where}: profile version must be 1 or {VERSION}. Got {_shown(version)} instead."
        )
    if not isinstance(data.get("fingerprint", {}), dict) or \
            not isinstance(data.get("report", {}), dict):
        raise ProfileError(f"{where}: 'fingerprint' and 'report' must be objects")
    devices = data.get("devices")
    if not isinstance(devices, dict) or "cpu" not in devices:
        raise ProfileError(f"{where}: 'devices' must be an object with a 'cpu' entry")
    for device_class, entry in devices.items():
        if device_class not in DEVICE_CLASSES or not isinstance(entry, dict):
            raise ProfileError(f"{where}: unknown device class {device_class!r}")
        _check_compute(entry.get("compute", {}), f"{where}: devices.{device_class}")
        transfer = entry.get("transfer", {})
        if not isinstance(transfer, dict):
            raise ProfileError(f"{where}: devices.{device_class}.transfer must be an object")
        for direction, link in transfer.items():
            if direction not in TRANSFER_LINKS:
                raise ProfileError(f"{where}: unknown transfer link {direction!r}")
            _check_numbers(link, ("latency", "bandwidth"),
                           f"{where}: devices.{device_class}.transfer.{direction}")
    _check_measurements(data.get("measurements", {}), f"{where}: measurements")
    _check_threads(data.get("threads"), f"{where}: threads")
    _check_fusion(data.get("fusion"), f"{where}: fusion")
    return data


#: The block sizes a profile's ``fusion.block`` and ``fusion.threaded_block`` may hold
#: (elements: powers of two, 4K-4M).
FUSION_BLOCKS = tuple(2 ** k for k in range(12, 23))


def _check_fusion(fusion: object, where: str) -> None:
    """``fusion``: ``{"floor": elements or null, "block": elements, "threaded_block":
    elements, "measurements": {...}}``, the least result size at which elementwise calls
    are deferred (:mod:`autodev._fusion`) and the elements of one block of their pass on
    one thread and split over threads (each optional); optional."""
    if fusion is None:
        return
    if not isinstance(fusion, dict) or "floor" not in fusion:
        raise ProfileError(f"{where} must be an object with a 'floor'")
    floor = fusion["floor"]
    if floor is not None and not _is_number(floor, (2.0, _POINT_RANGE)):
        raise ProfileError(f"{where}.floor must be a number of elements (2 or more) or null "
                           f"(never). Got {floor!r} instead.")
    for key in ("block", "threaded_block"):
        block = fusion.get(key)
        if block is not None and (isinstance(block, bool) or block not in FUSION_BLOCKS):
            raise ProfileError(f"{where}.{key} must be a power of two from {FUSION_BLOCKS[0]} "
                               f"to {FUSION_BLOCKS[-1]} (elements of one block). Got {block!r} "
                               "instead.")


def _check_threads(threads: object, where: str) -> None:
    """``threads``: ``{"count": n, "crossover": {family: work or null}, "measurements":
    {...}}``, where threads pay (:mod:`autodev._parallel`); optional."""
    if threads is None:
        return
    if not isinstance(threads, dict) or not isinstance(threads.get("crossover"), dict):
        raise ProfileError(f"{where} must be an object with a 'crossover' object")
    count = threads.get("count", 1)
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= 1 << 20:
        raise ProfileError(f"{where}.count must be a positive integer. Got {count!r} instead.")
    for family, work in threads["crossover"].items():
        if family not in FAMILIES or not (work is None or _is_number(work, (1.0, _POINT_RANGE))):
            raise ProfileError(f"{where}.crossover.{family} must be a number of work units "
                               f"or null (never). Got {work!r} instead.")


def _is_number(value: object, bounds: tuple[float, float]) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) \
        and math.isfinite(value) and bounds[0] <= value <= bounds[1]


def _migrate_v1(data: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2: same curves; an unstructured fingerprint becomes unkeyed."""
    migrated = dict(data, version=VERSION)
    fingerprint = data.get("fingerprint")
    if not isinstance(fingerprint, dict) or not {"cpu", "libraries"} <= set(fingerprint):
        migrated["fingerprint"] = {}
    migrated.pop("measurements", None)
    return migrated


def _check_measurements(measurements: object, where: str) -> None:
    """Measured points: ``{cpu|gpu: {family: {dclass: series}}, transfer: {link: series}}``."""
    if not isinstance(measurements, dict):
        raise ProfileError(f"{where} must be an object")
    for key, entry in measurements.items():
        if not isinstance(entry, dict) or key not in DEVICE_CLASSES + ("transfer",):
            raise ProfileError(f"{where}: unknown entry {key!r}")
        for name, series in entry.items():
            if key == "transfer":
                _check_series(series, f"{where}.transfer.{name}")
                continue
            if name not in FAMILIES or not isinstance(series, dict):
                raise ProfileError(f"{where}.{key}: unknown family {name!r}")
            for dclass, points in series.items():
                if dclass not in DTYPE_CLASSES:
                    raise ProfileError(f"{where}.{key}.{name}: unknown dtype class {dclass!r}")
                _check_series(points, f"{where}.{key}.{name}.{dclass}")


def _check_series(series: object, where: str) -> None:
    if not isinstance(series, dict) or not isinstance(series.get("seconds"), list):
        raise ProfileError(f"{where} must be an object with a 'seconds' list")
    length = len(series["seconds"])
    for key, values in series.items():
        bound = _SECONDS_RANGE if key == "seconds" else _POINT_RANGE
        if not isinstance(values, list) or len(values) != length or length > _MAX_POINTS:
            raise ProfileError(
                f"{where}.{key} must be a list as long as 'seconds' (at most {_MAX_POINTS})"
            )
        for value in values:
            if not _is_number_in(value, 0, bound):
                raise ProfileError(
                    f"{where}.{key} must hold finite numbers in [0, {bound:g}]. "
                    f"Got {_shown(value)} instead."
                )


def _check_compute(compute: object, where: str) -> None:
    if not isinstance(compute, dict):
        raise ProfileError(f"{where}.compute must be an object")
    for family, by_dtype in compute.items():
        if family not in FAMILIES or not isinstance(by_dtype, dict):
            raise ProfileError(f"{where}.compute: unknown family {family!r}")
        for dclass, curve in by_dtype.items():
            if dclass not in DTYPE_CLASSES:
                raise ProfileError(f"{where}.compute.{family}: unknown dtype class {dclass!r}")
            _check_numbers(curve, ("latency", "throughput"), f"{where}.compute.{family}.{dclass}")


def _check_complete(compute: dict[str, Any], where: str) -> None:
    """Every family must have a curve for every dtype class (directly or by the cost
    model's fallbacks): a missing curve reads as infinitely slow, which would send every
    call of that family to the other device. ``autodev calibrate`` fills what it did not
    measure from the embedded default, so only a hand-made file can lack one."""
    missing = sorted({family for family in FAMILIES for dclass in DTYPE_CLASSES
                      if _find_curve(compute, family, dclass) is None})
    if missing:
        raise ProfileError(f"{where}.compute has no curve for the families {missing}")


def _check_numbers(entry: object, keys: tuple[str, str], where: str) -> None:
    if not isinstance(entry, dict):
        raise ProfileError(f"{where} must be an object")
    for key, (lo, hi) in zip(keys, (_LATENCY_RANGE, _RATE_RANGE)):
        value = entry.get(key)
        if not _is_number_in(value, lo, hi):
            raise ProfileError(
                f"{where}.{key} must be a finite number in [{lo:g}, {hi:g}]. "
                f"Got {_shown(value)} instead."
            )
        if key != "latency" and value <= 0:
            raise ProfileError(f"{where}.{key} must be positive. Got {value!r} instead.")


def _is_number_in(value: object, lo: float, hi: float) -> TypeGuard[float]:
    """True if ``value`` is a finite JSON number in ``[lo, hi]`` (an integer of any size
    is compared as it is: converting it to a float could overflow)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return (isinstance(value, int) or math.isfinite(value)) and lo <= value <= hi


def _shown(value: object) -> str:
    """``repr(value)``, cut short (a hostile file's value can be long)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate the profile at ``path`` (raises ProfileError or OSError)."""
    path = Path(path)
    raw = _read_regular(path)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ProfileError(f"{path}: not valid JSON ({err})") from err
    except ValueError as err:  # the one other: an integer past Python's int_max_str_digits
        raise ProfileError(f"{path}: holds an integer of more digits than Python reads "
                           "(a profile holds measurements, none so long)") from err
    except RecursionError as err:  # the C decoder's depth guard: no stack is at risk
        raise ProfileError(f"{path}: JSON nested too deeply to be a profile") from err
    profile = validate(data, str(path))
    for device_class, entry in profile["devices"].items():  # a profile used as the model
        _check_complete(entry.get("compute", {}), f"{path}: devices.{device_class}")
    return profile


def _read_regular(path: Path) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``MAX_BYTES``.

    Anything else is refused before it is opened, so that nothing can block (a FIFO) or
    stream without end (``/dev/zero`` behind a symbolic link); the opened file is checked
    again, in case it was swapped in between.
    """
    info = os.stat(path)  # follows symbolic links: the target is what would be read
    if not stat.S_ISREG(info.st_mode):
        raise ProfileError(f"{path}: not a regular file ({_file_kind(info.st_mode)})")
    if info.st_size > MAX_BYTES:
        raise ProfileError(f"{path}: {info.st_size} bytes, more than a profile's "
                           f"{MAX_BYTES} at most")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ProfileError(f"{path}: not a regular file (it changed while opened)")
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise ProfileError(f"{path}: more than a profile's {MAX_BYTES} bytes at most")
    return raw


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a file"


def write(profile: Mapping[str, Any], path: str | os.PathLike[str] | None = None) -> Path:
    """Validate and write ``profile`` atomically (temp file + rename); return the path.
    Whoever caches a model built from profiles is then told
    (:data:`autodev._cost.model.PROFILE_WRITTEN`)."""
    target = Path(path) if path is not None else default_path()
    validate(dict(profile), str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".profile-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(profile, handle, indent=1, sort_keys=True, allow_nan=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a profile is not a secret
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    for listener in PROFILE_WRITTEN:
        listener()
    return target


@dataclass
class Resolution:
    """Which profile autodev uses, and why (what ``autodev info`` shows)."""

    profile: dict[str, Any]
    #: "calibrated", "embedded default", or "calibrated CPU + embedded default GPU"
    source: str
    #: the file looked at (used or not)
    path: Path
    #: the file the curves came from, None for the embedded default
    used: Path | None
    #: why the file was not (fully) used; "" when it was, or there was none
    problem: str = ""
    #: what to do about ``problem``
    fix: str = FIX
    #: whether ``path`` exists (False too where it cannot be looked at)
    exists: bool = True
    #: "match", "unkeyed", "not checked (...)", or "mismatch: ..."
    fingerprint: str = "not checked"
    gpu_fingerprint: str = "not checked (no GPU probed)"


def resolve(path: str | os.PathLike[str] | None = None, gpu: GpuBackend | None = None) -> Resolution:
    """Decide which profile to use, without warning.

    The file at ``path`` (default: ``AUTODEV_PROFILE``, else the cache file) is
    used when it validates and, for the cache file, when its fingerprint matches
    this machine; the GPU part is compared only when ``gpu`` (a probed GPU
    backend) is given. A profile without GPU curves, or measured with another
    GPU, gets the embedded default's GPU curves.
    """
    from . import fingerprint as _fingerprint

    explicit = path is not None or ENV.profile is not None
    target = Path(path) if path is not None else default_path()
    try:
        exists = target.exists() or target.is_symlink()
    except (OSError, ValueError) as err:  # a name too long, a directory that cannot be searched
        return _unusable(target, err, explicit)
    if not exists:
        # a file named explicitly (AUTODEV_PROFILE, --profile) was meant to exist
        problem = f"ignoring profile {target}: no such file" if explicit else ""
        return Resolution(embedded_default(), "embedded default", target, None,
                          problem=problem, fingerprint="no calibrated profile", exists=False)
    try:
        profile = read(target)
    except (ProfileError, OSError) as err:
        return Resolution(embedded_default(), "embedded default", target, None,
                          problem=f"ignoring profile {target}: {err}")
    recorded = profile.get("fingerprint") or {}
    found = Resolution(profile, "calibrated", target, target)
    if not recorded:
        found.fingerprint = "unkeyed (no fingerprint recorded)"
    elif explicit:
        found.fingerprint = "not checked (profile chosen explicitly)"
    else:
        diff = _fingerprint.differences(recorded, _fingerprint.host(), ("cpu", "libraries"))
        if diff:
            return Resolution(
                embedded_default(), "embedded default", target, None,
                problem=f"profile {target} was measured on another machine or with other "
                        f"library versions ({'; '.join(diff[:3])})",
                fingerprint="mismatch: " + "; ".join(diff))
        found.fingerprint = "match"
    if gpu is not None:
        _check_gpu(found, recorded, gpu, explicit)
    return found


def _unusable(target: Path, err: Exception, explicit: bool) -> Resolution:
    """The embedded default, for a profile path that cannot even be looked at."""
    why = getattr(err, "strerror", None) or str(err)
    if explicit:
        problem = f"ignoring profile {target}: it cannot be read ({why})"
        fix = "set AUTODEV_PROFILE to a profile file that can be read"
    else:
        problem = f"cannot use the cache directory {target.parent} ({why})"
        fix = "set AUTODEV_CACHE_DIR to a directory that can be used"
    return Resolution(embedded_default(), "embedded default", target, None, problem=problem,
                      fix=fix, fingerprint="no calibrated profile", exists=False)


def _check_gpu(found: Resolution, recorded: dict[str, Any], gpu: GpuBackend, explicit: bool) -> None:
    from . import fingerprint as _fingerprint

    if "gpu" not in found.profile["devices"] or (recorded and "gpu" not in recorded):
        found.gpu_fingerprint = "no GPU curves measured"
    elif not recorded or explicit:
        found.gpu_fingerprint = "not checked"
        return
    else:
        diff = _fingerprint.differences(recorded, {"gpu": _fingerprint.gpu(gpu)}, ("gpu",))
        if not diff:
            found.gpu_fingerprint = "match"
            return
        found.gpu_fingerprint = "mismatch: " + "; ".join(diff)
        found.problem = f"profile {found.path} was measured with another GPU ({diff[0]})"
    profile = dict(found.profile)
    profile["devices"] = dict(profile["devices"], gpu=embedded_default()["devices"]["gpu"])
    found.profile = profile
    found.source = "calibrated CPU + embedded default GPU"


def load(path: str | os.PathLike[str] | None = None, gpu: GpuBackend | None = None
         ) -> tuple[dict[str, Any], str]:
    """The profile to use and where it came from.

    Returns the profile at ``path`` (default: ``AUTODEV_PROFILE``, else the cache
    file) when it exists, validates and matches this machine, else the embedded
    default; a broken or foreign file costs one warning naming it and the fix.
    ``gpu`` is the probed GPU backend, if any (its fingerprint is then checked).
    """
    found = resolve(path, gpu)
    if found.problem:
        from .._trace import warn_user

        warn_user(f"autodev: {found.problem}. Using the embedded default; {found.fix}.",
                  RuntimeWarning)
    return found.profile, str(found.used) if found.used else found.source
