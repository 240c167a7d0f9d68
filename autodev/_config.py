"""Configuration: the ``AUTODEV_*`` environment, read once, and the scoped policy.

Every environment variable autodev reads is listed in ``ENV_VARS`` (and in
``docs/configuration.md``). The policy is a ContextVar so that threads and
asyncio tasks do not leak their choice into each other.
"""

from __future__ import annotations

import contextlib
import os
from contextvars import ContextVar, Token
from typing import Callable, Iterator, Literal

Policy = Literal["auto", "cpu", "gpu"]
FallbackMode = Literal["once", "warn", "raise"]

POLICIES: tuple[str, ...] = ("auto", "cpu", "gpu")
FALLBACK_MODES: tuple[str, ...] = ("once", "warn", "raise")

ENV_VARS: dict[str, str] = {
    "AUTODEV_DEVICE": "Default policy: auto (cost model decides), cpu or gpu.",
    "AUTODEV_SIMULATE_GPU": "1 enables the simulated GPU device sim:0 (for tests).",
    "AUTODEV_TRACE": "1 logs one line per dispatched call to the 'autodev' logger.",
    "AUTODEV_FALLBACK": "once (default: warn once per process), warn (every time) or raise.",
    "AUTODEV_CACHE_DIR": "Directory for calibrated profiles (default: platformdirs user cache).",
    "AUTODEV_PROFILE": "Path of a profile JSON to use instead of the cached one.",
    "AUTODEV_MIRROR_BUDGET": "Fraction of GPU memory that reuse-credit mirrors may hold "
                             "(default 0.5; 0 turns reuse moves off).",
}


def _check_choice(name: str, value: str, choices: tuple[str, ...]) -> str:
    value = value.strip().lower()
    if value not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(choices)}. Got {value!r} instead. "
            f"Unset it or set e.g. {name}={choices[0]}."
        )
    return value


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


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


class _Env:
    """The environment as it was when autodev was imported."""

    __slots__ = ("device", "simulate_gpu", "trace", "fallback", "cache_dir", "profile",
                 "mirror_budget")

    def __init__(self) -> None:
        self.device: str = _check_choice(
            "AUTODEV_DEVICE", os.environ.get("AUTODEV_DEVICE", "auto"), POLICIES
        )
        self.simulate_gpu: bool = _env_flag("AUTODEV_SIMULATE_GPU")
        self.trace: bool = _env_flag("AUTODEV_TRACE")
        self.fallback: str = _check_choice(
            "AUTODEV_FALLBACK", os.environ.get("AUTODEV_FALLBACK", "once"), FALLBACK_MODES
        )
        self.cache_dir: str | None = os.environ.get("AUTODEV_CACHE_DIR") or None
        self.profile: str | None = os.environ.get("AUTODEV_PROFILE") or None
        self.mirror_budget: float = _fraction(
            "AUTODEV_MIRROR_BUDGET", os.environ.get("AUTODEV_MIRROR_BUDGET", "0.5"))


ENV = _Env()

_policy: ContextVar[str] = ContextVar("autodev_policy", default=ENV.device)


def get_policy() -> str:
    """Return the policy in force in this context: ``"auto"``, ``"cpu"`` or ``"gpu"``."""
    return _policy.get()


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
