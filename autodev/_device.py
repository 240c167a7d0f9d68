"""Devices: hashable values naming where an array's data lives, or that autodev places it.

``cpu`` and every registered GPU kind (``cuda:N``, ``sim:0``, a kind a test registers)
are *locations*. ``auto`` is a *placement*: the logical device of every array autodev
is free to place (``x.device`` reports it; the physical home is ``x.location``). See
docs/dispatch.md, "Placement".

Device kinds are registered (:func:`register_kind`): the backend registry
(:func:`autodev._backends.register_backend`) adds one per backend kind, so this module
knows no GPU by name.
"""

from __future__ import annotations

import re
from typing import Any

#: The kinds that are not backends: never registered, never removed.
BUILTIN_KINDS: tuple[str, ...] = ("auto", "cpu")
#: Words a kind may not take: the built-in kinds, and ``gpu`` (an alias of the active GPU).
RESERVED_KINDS: frozenset[str] = frozenset(BUILTIN_KINDS + ("gpu",))

_KINDS: dict[str, None] = dict.fromkeys(BUILTIN_KINDS)  # ordered: registration order
_KIND_PATTERN = re.compile(r"[a-z][a-z0-9_]*\Z")


def kinds() -> tuple[str, ...]:
    """Every device kind known now: ``auto``, ``cpu``, then the registered ones."""
    return tuple(_KINDS)


def register_kind(kind: str) -> None:
    """Make ``kind`` a device kind (``Device(kind, i)`` and ``"kind:i"`` then work)."""
    if not isinstance(kind, str) or not _KIND_PATTERN.match(kind):
        raise ValueError(
            "a device kind must be a lowercase name (letters, digits, underscores, starting "
            f"with a letter), like 'cuda' or 'rocm'. Got {kind!r} instead."
        )
    if kind in RESERVED_KINDS:
        raise ValueError(
            f"device kind {kind!r} is reserved ({', '.join(sorted(RESERVED_KINDS))} are "
            "autodev's own). Choose another name for the backend."
        )
    _KINDS[kind] = None


def unregister_kind(kind: str) -> None:
    """Forget ``kind``; its interned devices go too, so ``Device(kind)`` raises again."""
    if kind in RESERVED_KINDS or kind not in _KINDS:
        raise ValueError(f"device kind {kind!r} is not a registered kind. "
                         f"Registered: {', '.join(_KINDS)}.")
    del _KINDS[kind]
    for key in [key for key in Device._interned if key[0] == kind]:
        del Device._interned[key]


def _check_kind(kind: str) -> None:
    if kind not in _KINDS:
        raise ValueError(
            f"device kind must be one of {', '.join(map(repr, _KINDS))} (a kind exists once "
            f"its backend is registered: autodev._backends.register_backend). "
            f"Got {kind!r} instead."
        )


class Device:
    """A place data can live: ``cpu``, ``cuda:N``, ``sim:0`` (tests) or any registered
    kind; or ``auto``, the logical device of arrays autodev places itself.

    Devices are interned (``Device("cuda", 0) is Device("cuda", 0)``) so that the
    hot path compares them with ``is``. A device also compares equal to its string
    form, so ``x.device == "cpu"`` works as it does for NumPy 2 arrays, and index 0
    equals its bare kind (``Device("cuda", 0) == "cuda"``).
    """

    __slots__ = ("kind", "index", "_name")
    _interned: dict[tuple[str, int], "Device"] = {}

    kind: str
    index: int
    _name: str

    def __new__(cls, kind: str, index: int = 0) -> "Device":
        key = (kind, index)
        found = cls._interned.get(key)
        if found is not None:
            return found
        _check_kind(kind)
        self = object.__new__(cls)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "index", int(index))
        object.__setattr__(self, "_name",
                           kind if kind in BUILTIN_KINDS else f"{kind}:{index}")
        cls._interned[key] = self
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Device is immutable")

    @property
    def is_gpu(self) -> bool:
        """True for a device of a registered backend kind (CUDA, simulated, ...)."""
        return self.kind not in BUILTIN_KINDS

    def __repr__(self) -> str:
        return f"Device({self._name!r})"

    def __str__(self) -> str:
        return self._name

    def __hash__(self) -> int:
        return hash(self._name)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Device):
            return self is other
        if isinstance(other, str):
            return other == self._name or (self.index == 0 and other == self.kind)
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (self.kind, self.index))


CPU = Device("cpu")
#: The placement "autodev decides": never a location.
AUTO = Device("auto")


def parse_device(spec: "Device | str") -> Device:
    """Turn ``"auto"``, ``"cpu"``, ``"KIND"`` or ``"KIND:N"`` for a registered kind
    (``"cuda"``, ``"cuda:1"``, ``"sim:0"``), or a Device, into a Device.

    ``"gpu"`` names the active GPU (the usable kind of highest priority); resolving it
    needs the backend registry, so it is handled by
    :func:`autodev._backends.resolve_device`.
    """
    if isinstance(spec, Device):
        return spec
    if not isinstance(spec, str):
        raise TypeError(
            f"device must be a Device or a string like 'auto', 'cpu' or 'cuda:0'. "
            f"Got {spec!r} instead."
        )
    text = spec.strip().lower()
    kind, _, index = text.partition(":")
    if kind not in _KINDS or (index and not index.isdigit()):
        gpus = [k for k in _KINDS if k not in BUILTIN_KINDS]
        raise ValueError(
            "device must be 'auto', 'cpu', 'gpu', or a registered kind with an optional "
            f"index ({', '.join(repr(k) + ', ' + repr(k + ':N') for k in gpus) or 'none'}). "
            f"Got {spec!r} instead."
        )
    return Device(kind, int(index or 0))
