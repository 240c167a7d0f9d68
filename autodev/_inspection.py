"""The array API inspection namespace: ``autodev.__array_namespace_info__()``.

Both faces share it: ``import autodev as np`` has it as NumPy has, and the
array-API face (``x.__array_namespace__()``) has the same one. Devices come from
autodev's own registry (:func:`autodev.devices`), so the list follows whatever
devices autodev knows, in its order, usable ones only.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from ._device import Device
from ._typing import DeviceLike

#: The standard's dtypes by kind, in the order NumPy's inspection lists them.
_KINDS: dict[str, tuple[str, ...]] = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]


class __array_namespace_info__:  # noqa: N801  (the standard's name)
    """The array API inspection namespace for autodev.

    ``capabilities()``, ``default_device()``, ``default_dtypes()``, ``dtypes()``
    and ``devices()``, as the standard defines them. ``devices()`` lists what
    :func:`autodev.devices` reports usable, in its order; ``default_device()`` is
    where a creation call without ``device=`` puts its array under the policy
    in force.

    Examples
    --------
    >>> import autodev
    >>> info = autodev.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    dtype('float64')
    """

    __module__ = "autodev"

    def capabilities(self) -> dict[str, Any]:
        """What the library supports: boolean indexing, data-dependent shapes, max ndim."""
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": 64}

    def default_device(self) -> Device:
        """The device a creation call puts its array on when given no ``device=``."""
        from ._creation import creation_device

        return creation_device(None)

    def devices(self) -> Sequence[Device]:
        """Every usable device, in the order :func:`autodev.devices` lists them."""
        from ._backends import devices

        return self._sequence(entry["device"] for entry in devices() if entry["usable"])

    #: ``devices()`` gives a list up to the standard's 2024.12 (NumPy's), a tuple from 2025.12.
    _sequence: Any = list

    def default_dtypes(self, *, device: DeviceLike | None = None) -> dict[str, np.dtype]:
        """The default real, complex, integer and index dtypes (the same on every device)."""
        self._check_device(device)
        return {"real floating": np.dtype(np.float64),
                "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.intp), "indexing": np.dtype(np.intp)}

    def dtypes(self, *, device: DeviceLike | None = None,
               kind: str | tuple[str, ...] | None = None) -> dict[str, np.dtype]:
        """The standard's dtypes of ``kind`` (a kind name or a tuple of them) on ``device``."""
        self._check_device(device)
        if kind is None:
            kind = ("bool", "numeric")
        kinds = (kind,) if isinstance(kind, str) else kind
        names: dict[str, np.dtype] = {}
        for k in kinds:
            if k not in _KINDS:
                raise ValueError(
                    f"kind must be one of {', '.join(map(repr, _KINDS))} or a tuple of them. "
                    f"Got {k!r} instead."
                )
            names.update((n, np.dtype(n)) for n in _KINDS[k])
        order = _KINDS["bool"] + _KINDS["numeric"]
        return {n: names[n] for n in order if n in names}

    def _check_device(self, device: DeviceLike | None) -> None:
        """Every usable device holds every standard dtype; an unknown one is an error."""
        if device is not None and device not in self.devices():
            raise ValueError(
                f"device must be one of {self.devices()} or None. Got {device!r} instead."
            )


class Info2025(__array_namespace_info__):
    """The inspection namespace of the array-API face (standard 2025.12)."""

    __module__ = "autodev.array_api"
    _sequence = tuple


Info2025.__name__ = Info2025.__qualname__ = "__array_namespace_info__"
