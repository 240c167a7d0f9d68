"""Type aliases for the keywords NumPy accepts as fixed strings (``order=``, ``casting=``).

Only annotations use them: NumPy checks the strings at run time, as it always did.
"""

from __future__ import annotations

from typing import Literal

#: ``order=`` of NumPy's array creation and copies.
Order = Literal["K", "A", "C", "F"]
#: ``casting=`` of ``astype``, ``copyto`` and ``can_cast`` (``same_value``: NumPy 2.4+).
Casting = Literal["no", "equiv", "safe", "same_kind", "same_value", "unsafe"]
