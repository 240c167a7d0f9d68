"""``xp.special``: ``autodev.scipy.special`` seen through the array-API face.

Not a name of the standard (a ``special`` extension is only proposed, data-apis/
array-api#725), but SciPy already looks it up: with ``SCIPY_ARRAY_API=1``,
``scipy.special.f(x)`` on a namespace that has ``xp.special.f`` calls it rather
than converting to NumPy and back. So ``scipy.special`` on autodev arrays runs
through autodev's dispatcher and leaves its result where it ran.
"""

from __future__ import annotations

from typing import Any

from ._wrap import standard


class _Special:
    """Each ``autodev.scipy.special`` function, returning 0-d arrays, not scalars."""

    def __getattr__(self, name: str) -> Any:
        import autodev.scipy.special as module

        if name.startswith("_"):
            raise AttributeError(name)
        value = getattr(module, name)  # AttributeError: SciPy falls back to its own
        if callable(value) and not isinstance(value, type):
            value = standard(value, name)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return "<autodev.array_api.special: autodev.scipy.special, array-API results>"


special = _Special()
