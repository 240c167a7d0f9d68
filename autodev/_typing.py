"""Type aliases for arguments that take one of several forms: the keywords NumPy accepts
as fixed strings (``order=``, ``casting=``) and autodev's ``device=``.

Only annotations use them: the values are checked at run time, as they always were.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, Protocol, Sequence, SupportsIndex, TypeAlias

from ._device import Device

if TYPE_CHECKING:
    import numpy as np

#: An ``autodev.ndarray``, named so in the modules below the class (its operators, methods
#: and indexing), which cannot import it: the class binds itself there when it is made.
Array: TypeAlias = Any
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


class NativeArray(Protocol):
    """The layout of a backend's own array (``numpy.ndarray``, ``cupy.ndarray``, the
    simulator's ``SimArray``), for code that reads it without computing on it. Computing
    needs the backend's module ``xp``, which is untyped (CuPy) or a simulator of it: there
    the honest type stays ``Any``."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def dtype(self) -> np.dtype[Any]: ...

    @property
    def ndim(self) -> int: ...

    @property
    def size(self) -> int: ...

    @property
    def nbytes(self) -> int: ...
