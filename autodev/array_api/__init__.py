"""autodev's array-API face: the standard's semantics over autodev's arrays.

``x.__array_namespace__()`` returns this module (``import autodev.array_api as
xp`` gives it too). It works on the very arrays ``import autodev as np`` makes,
through the same dispatcher, but with the array API standard's semantics where
they differ from NumPy's: 0-d arrays instead of scalars, sorted ``unique_*``,
``sort``/``argsort(descending=)``, ``astype``, ``device=`` on every creation
function, ``__array_namespace_info__``. It holds only the standard's names.

It is array-api-compat's generic code bound to autodev (see ``_aliases``), not a
second implementation; ``import autodev as np`` stays NumPy, exactly.
"""

from __future__ import annotations

from typing import Any

from .._array import API_VERSIONS as _API_VERSIONS
from .._inspection import Info2025 as __array_namespace_info__
from . import fft, linalg
from ._aliases import *  # noqa: F403
from ._aliases import __all__ as _names

#: The newest version of the standard this face follows (array-api-compat's).
__array_api_version__ = "2025.12"

#: Versions ``x.__array_namespace__(api_version=...)`` accepts.
API_VERSIONS = _API_VERSIONS

__all__ = sorted([*_names, "__array_api_version__", "__array_namespace_info__", "fft",
                  "linalg"])


def __dir__() -> list[str]:
    return __all__


def __getattr__(name: str) -> Any:
    if name == "special":
        # SciPy (SCIPY_ARRAY_API=1) looks for ``xp.special`` before falling back to
        # NumPy: with it, scipy.special on autodev arrays runs dispatched, on their device.
        from ._special import special

        globals()["special"] = special
        return special
    raise AttributeError(
        f"module 'autodev.array_api' has no attribute {name!r}: it holds the array API "
        "standard's names only. Use 'import autodev as np' for the rest of NumPy."
    )
