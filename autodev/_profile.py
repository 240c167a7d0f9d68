"""Profiles: the measured cost-model parameters of one machine, as versioned JSON.

A profile is only ever read as JSON and validated before use; anything that
does not validate is rejected with one warning naming the file and the fix,
and the embedded default is used instead.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import warnings
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ._config import ENV
from ._cost import DEVICE_CLASSES, DTYPE_CLASSES, FAMILIES

FORMAT = "autodev-profile"
VERSION = 1
FILENAME = "profile.json"
#: Bounds outside which a number is taken as garbage rather than a measurement.
_LATENCY_RANGE = (0.0, 10.0)          # seconds
_RATE_RANGE = (1.0, 1e18)             # work units or bytes per second


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


def validate(data: Any, where: str) -> dict[str, Any]:
    """Check ``data`` against the profile schema; return it or raise ProfileError."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ProfileError(f"{where}: not an autodev profile (no 'format': {FORMAT!r})")
    version = data.get("version")
    if version != VERSION:
        raise ProfileError(
            f"{where}: profile version must be {VERSION}. Got {version!r} instead."
        )
    devices = data.get("devices")
    if not isinstance(devices, dict) or "cpu" not in devices:
        raise ProfileError(f"{where}: 'devices' must be an object with a 'cpu' entry")
    for device_class, entry in devices.items():
        if device_class not in DEVICE_CLASSES or not isinstance(entry, dict):
            raise ProfileError(f"{where}: unknown device class {device_class!r}")
        _check_compute(entry.get("compute", {}), f"{where}: devices.{device_class}")
        for direction, link in entry.get("transfer", {}).items():
            _check_numbers(link, ("latency", "bandwidth"),
                           f"{where}: devices.{device_class}.transfer.{direction}")
    return data


def _check_compute(compute: Any, where: str) -> None:
    if not isinstance(compute, dict):
        raise ProfileError(f"{where}.compute must be an object")
    for family, by_dtype in compute.items():
        if family not in FAMILIES or not isinstance(by_dtype, dict):
            raise ProfileError(f"{where}.compute: unknown family {family!r}")
        for dclass, curve in by_dtype.items():
            if dclass not in DTYPE_CLASSES:
                raise ProfileError(f"{where}.compute.{family}: unknown dtype class {dclass!r}")
            _check_numbers(curve, ("latency", "throughput"), f"{where}.compute.{family}.{dclass}")


def _check_numbers(entry: Any, keys: tuple[str, str], where: str) -> None:
    if not isinstance(entry, dict):
        raise ProfileError(f"{where} must be an object")
    for key, (lo, hi) in zip(keys, (_LATENCY_RANGE, _RATE_RANGE)):
        value = entry.get(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or \
                not math.isfinite(value) or not lo <= value <= hi:
            raise ProfileError(
                f"{where}.{key} must be a finite number in [{lo:g}, {hi:g}]. Got {value!r} instead."
            )
        if key != "latency" and value <= 0:
            raise ProfileError(f"{where}.{key} must be positive. Got {value!r} instead.")


def read(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate the profile at ``path`` (raises ProfileError or OSError)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ProfileError(f"{path}: not valid JSON ({err})") from err
    return validate(data, str(path))


def write(profile: Mapping[str, Any], path: str | os.PathLike[str] | None = None) -> Path:
    """Validate and write ``profile`` atomically (temp file + rename); return the path."""
    target = Path(path) if path is not None else default_path()
    validate(dict(profile), str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".profile-", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(profile, handle, indent=1, sort_keys=True, allow_nan=False)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def load(path: str | os.PathLike[str] | None = None) -> tuple[dict[str, Any], str]:
    """The profile to use and where it came from.

    Returns the profile at ``path`` (default: the cache file) when it exists and
    validates, else the embedded default; a broken file costs one warning.
    """
    target = Path(path) if path is not None else default_path()
    if not target.exists():
        return embedded_default(), "embedded default"
    try:
        return read(target), str(target)
    except (ProfileError, OSError) as err:
        warnings.warn(
            f"autodev: ignoring profile {target}: {err}. Using the embedded default; "
            "run `autodev calibrate` to write a new one.",
            RuntimeWarning,
            stacklevel=2,
        )
        return embedded_default(), "embedded default"
