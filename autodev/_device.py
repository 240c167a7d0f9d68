"""Devices: hashable values naming where an array's data lives, or that autodev places it.

``cpu``, ``cuda:N`` and ``sim:0`` are *locations*. ``auto`` is a *placement*: the
logical device of every array autodev is free to place (``x.device`` reports it; the
physical home is ``x.location``). See docs/dispatch.md, "Placement".
"""

from __future__ import annotations

from typing import Any

KINDS: tuple[str, ...] = ("auto", "cpu", "cuda", "sim")


class Device:
    """A place data can live: ``cpu``, ``cuda:N`` or, in tests, ``sim:0``; or ``auto``,
    the logical device of arrays autodev places itself.

    Devices are interned (``Device("cuda", 0) is Device("cuda", 0)``) so that the
    hot path compares them with ``is``. A device also compares equal to its string
    form, so ``x.device == "cpu"`` works as it does for NumPy 2 arrays.
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
        if kind not in KINDS:
            raise ValueError(
                f"device kind must be one of {', '.join(KINDS)}. Got {kind!r} instead."
            )
        self = object.__new__(cls)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "index", int(index))
        object.__setattr__(self, "_name",
                           kind if kind in ("cpu", "auto") else f"{kind}:{index}")
        cls._interned[key] = self
        return self

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Device is immutable")

    @property
    def is_gpu(self) -> bool:
        """True for a CUDA or simulated GPU device."""
        return self.kind != "cpu" and self.kind != "auto"

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
            return other == self._name or (other == "cuda" and self._name == "cuda:0")
        return NotImplemented

    def __reduce__(self) -> tuple[Any, ...]:
        return (Device, (self.kind, self.index))


CPU = Device("cpu")
#: The placement "autodev decides": never a location.
AUTO = Device("auto")


def parse_device(spec: "Device | str") -> Device:
    """Turn ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"sim:0"`` or a Device into a Device.

    ``"gpu"`` names the active GPU (simulated or CUDA); resolving it needs the
    backend registry, so it is handled by :func:`autodev._backends.resolve_device`.
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
    if kind not in KINDS or (index and not index.isdigit()):
        raise ValueError(
            f"device must be 'auto', 'cpu', 'gpu', 'cuda', 'cuda:N' or 'sim:0'. "
            f"Got {spec!r} instead."
        )
    return Device(kind, int(index or 0))
