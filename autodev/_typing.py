"""Type aliases for arguments that take one of several forms: the keywords NumPy accepts
as fixed strings (``order=``, ``casting=``) and autodev's ``device=``.

Only annotations use them: the values are checked at run time, as they always were.
"""

from __future__ import annotations

from typing import Literal, Sequence, SupportsIndex, TypeAlias

from ._device import Device

#: ``order=`` of NumPy's array creation and copies.
Order = Literal["K", "A", "C", "F"]
#: ``casting=`` of ``astype``, ``copyto`` and ``can_cast`` (``same_value``: NumPy 2.4+).
Casting = Literal["no", "equiv", "safe", "same_kind", "same_value", "unsafe"]
#: A ``device=`` argument: a Device or its name (``"cpu"``, ``"gpu"``, ``"cuda:1"``).
DeviceLike: TypeAlias = "Device | str"
#: ``axis=`` naming one axis or None (``sort``, ``take``, ``partition``).
Axis: TypeAlias = "SupportsIndex | None"
#: ``axis=`` of reductions: one axis, several, or None for all.
Axes: TypeAlias = "SupportsIndex | Sequence[SupportsIndex] | None"
#: ``order=`` of ``sort``/``partition`` on structured arrays: field names.
FieldOrder: TypeAlias = "str | Sequence[str] | None"
