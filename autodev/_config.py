"""Configuration: the ``AUTODEV_*`` environment, read once, and the scoped policy.

Every environment variable autodev reads is listed in ``ENV_VARS`` (and in
``docs/configuration.md``). The policy is a ContextVar so that threads and
asyncio tasks do not leak their choice into each other.
"""

from __future__ import annotations

import contextlib
import os
from types import ModuleType
from contextvars import ContextVar, Token
from typing import Callable, Iterator, Literal

Policy = Literal["auto", "cpu", "gpu"]
FallbackMode = Literal["once", "warn", "raise"]

POLICIES: tuple[str, ...] = ("auto", "cpu", "gpu")
FALLBACK_MODES: tuple[str, ...] = ("once", "warn", "raise")

#: autodev's version (``autodev.__version__``; pyproject.toml's).
VERSION = "0.1.0"

ENV_VARS: dict[str, str] = {
    "AUTODEV_DEVICE": "Default policy: auto (cost model decides), cpu or gpu.",
    "AUTODEV_SIMULATE_GPU": "1 enables the simulated GPU device sim:0 (for tests).",
    "AUTODEV_TRACE": "1 logs one line per dispatched call to the 'autodev' logger.",
    "AUTODEV_FALLBACK": "once (default: warn once per process), warn (every time) or raise.",
    "AUTODEV_CACHE_DIR": "Directory for calibrated profiles (default: platformdirs user cache).",
    "AUTODEV_PROFILE": "Path of a profile JSON to use instead of the cached one.",
    "AUTODEV_MIRROR_BUDGET": "Fraction of GPU memory that reuse-credit mirrors may hold "
                             "(default 0.5; 0 turns reuse moves off).",
    "AUTODEV_PURE_PYTHON": "1 runs the pure-Python hot path even where the compiled one "
                           "(autodev._speedups) is built, and no host buffer pool "
                           "(autodev._hostpool).",
    "AUTODEV_NUM_THREADS": "Threads a large host call may be split over (default: "
                           "OMP_NUM_THREADS, else the cores this process may use; 1 turns "
                           "threads off).",
    "AUTODEV_HOST_POOL": "Most bytes of freed large host buffers autodev keeps for reuse "
                         "(e.g. 512M, 2G; default the smaller of 1G and an eighth of physical "
                         "memory; 0 turns the pool off).",
    "AUTODEV_FUSE": "0 turns deferred, fused elementwise chains off (default 1: large "
                    "elementwise calls are deferred and run in one blocked pass).",
}


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    """``value`` without surrounding spaces, in lower case, if it is one of ``choices``."""
    word = value.strip().lower()
    if word not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(choices)}. Got {value!r} instead. "
            f"Unset it or set e.g. {name}={choices[0]}."
        )
    return word


def _fraction(name: str, value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not 0.0 <= number <= 1.0:
        raise ValueError(
            f"{name} must be a fraction between 0 and 1. Got {value!r} instead. "
            f"Unset it or set e.g. {name}=0.5."
        )
    return number


_FLAG_VALUES = {"1": True, "true": True, "yes": True, "on": True,
                "0": False, "false": False, "no": False, "off": False}


def _env(name: str) -> str | None:
    """The variable's value as written; unset, empty and only spaces (``AUTODEV_X=``) are
    the same: None, the default."""
    value = os.environ.get(name, "")
    return value if value.strip() else None


def _env_path(name: str) -> str | None:
    """A path variable's value without the spaces around it (its case kept), or None."""
    value = _env(name)
    return None if value is None else value.strip()


def _env_choice(name: str, choices: tuple[str, ...]) -> str:
    value = _env(name)
    return choices[0] if value is None else _check_choice(name, value, choices)


def _env_count(name: str) -> int | None:
    """A positive integer, or None when unset."""
    value = _env(name)
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{name} must be a positive integer. Got {value!r} instead. "
                         f"Unset it or set e.g. {name}=1.")
    return int(value)


_SIZE_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def _env_bytes(name: str) -> int | None:
    """A number of bytes (digits, then K, M, G or T for 2**10, 2**20, ..., an optional B),
    or None when unset."""
    value = _env(name)
    if value is None:
        return None
    word = value.strip().upper().removesuffix("B").removesuffix("I")
    digits, unit = word.rstrip("KMGT"), word[len(word.rstrip("KMGT")):]
    if not digits.isdigit() or unit not in _SIZE_UNITS:
        raise ValueError(f"{name} must be a number of bytes, such as 0, 536870912, 512M or "
                         f"2G. Got {value!r} instead. Unset it or set e.g. {name}=1G.")
    return int(digits) * _SIZE_UNITS[unit]


def _env_flag(name: str) -> bool:
    value = _env(name)
    if value is None:
        return False
    word = value.strip().lower()
    if word not in _FLAG_VALUES:
        raise ValueError(
            f"{name} must be 1 or 0 (or true/false, yes/no, on/off). Got {value!r} instead. "
            f"Unset it or set e.g. {name}=1."
        )
    return _FLAG_VALUES[word]


class _Env:
    """The environment as it was when autodev was imported.

    One rule for every variable (docs/configuration.md states it): a value is read
    without the spaces around it, and a word in any case; unset or empty means the
    default; any other value that is not one the variable takes raises ``ValueError``
    naming the variable, the values it takes and the value it got (so a typo never
    silently changes behaviour).
    """

    __slots__ = ("device", "simulate_gpu", "trace", "fallback", "cache_dir", "profile",
                 "mirror_budget", "pure_python", "num_threads", "host_pool", "fuse")

    def __init__(self) -> None:
        self.device: str = _env_choice("AUTODEV_DEVICE", POLICIES)
        self.simulate_gpu: bool = _env_flag("AUTODEV_SIMULATE_GPU")
        self.trace: bool = _env_flag("AUTODEV_TRACE")
        self.fallback: str = _env_choice("AUTODEV_FALLBACK", FALLBACK_MODES)
        self.cache_dir: str | None = _env_path("AUTODEV_CACHE_DIR")
        self.profile: str | None = _env_path("AUTODEV_PROFILE")
        self.mirror_budget: float = _fraction("AUTODEV_MIRROR_BUDGET",
                                              _env("AUTODEV_MIRROR_BUDGET") or "0.5")
        self.pure_python: bool = _env_flag("AUTODEV_PURE_PYTHON")
        self.num_threads: int | None = _env_count("AUTODEV_NUM_THREADS")
        self.host_pool: int | None = _env_bytes("AUTODEV_HOST_POOL")
        #: False with AUTODEV_FUSE=0: large elementwise calls run at once, never deferred
        self.fuse: bool = _env("AUTODEV_FUSE") is None or _env_flag("AUTODEV_FUSE")


ENV = _Env()


def _load_speedups() -> tuple[ModuleType | None, str]:
    """The compiled hot path, or None, and why (shown by ``autodev info``)."""
    if ENV.pure_python:
        return None, "off (AUTODEV_PURE_PYTHON=1)"
    try:
        import autodev._speedups as speedups
    except ImportError as error:  # not built here (no compiler at install) or not loadable
        return None, f"not built ({error}); the pure-Python path runs"
    return speedups, "on"


#: ``autodev._speedups`` (the compiled fast paths, autodev/_speedups.c), or None where it
#: is not built or ``AUTODEV_PURE_PYTHON=1``: then the pure-Python paths run alone.
SPEEDUPS, SPEEDUPS_STATUS = _load_speedups()

_policy: ContextVar[str] = ContextVar("autodev_policy", default=ENV.device)


#: policy -> whether an array made of host values (``zeros(n)``, ``array`` of numbers) is
#: made on the host while a GPU is usable: under every policy but ``gpu``, which makes it
#: on the GPU. Read by the creation paths and their compiled twins.
MADE_ON_HOST: dict[str, bool] = {p: p != "gpu" for p in POLICIES}


def get_policy() -> str:
    """Return the policy in force in this context: ``"auto"``, ``"cpu"`` or ``"gpu"``."""
    return _policy.get()


#: :func:`get_policy` without a Python frame (a bound C method), for the per-call hot paths.
policy_now = _policy.get
#: The context variable itself: the compiled hot path reads it with no call at all.
POLICY = _policy


#: Called with the new policy whenever one other than ``"cpu"`` is set: the backend
#: registry uses it to probe for a GPU only once some context may want one.
POLICY_HOOKS: list[Callable[[str], None]] = []


def set_policy(value: str) -> Token[str]:
    """Set the policy for this context; return a token for :func:`reset_policy`."""
    value = _check_choice("policy", value, POLICIES)
    if value != "cpu":
        for hook in POLICY_HOOKS:
            hook(value)
    return _policy.set(value)


def reset_policy(token: Token[str]) -> None:
    """Restore the policy that was in force before ``set_policy`` returned ``token``."""
    _policy.reset(token)


@contextlib.contextmanager
def policy(value: str) -> Iterator[None]:
    """Run the block under ``value``: ``"auto"`` (measured cost model), ``"cpu"`` or ``"gpu"``.

    ``"gpu"`` sends every call the GPU can run there; ``"cpu"`` keeps every call on
    the host. The setting is scoped to the current thread or task.
    """
    token = set_policy(value)
    try:
        yield
    finally:
        reset_policy(token)
