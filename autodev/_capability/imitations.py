"""The simulated GPU's imitations of CuPy, named by the capability table without loading
the simulator.

A row of the table says ``imitation=S.quiet_singular()`` or ``imitation=S.wrapping_take``:
``S`` here only records the name (and the arguments of a factory), an :class:`Imitation`.
The simulator's imitations (:mod:`autodev._backends._sim_cupy`) are loaded with the
simulator, and only then is each reference resolved there (:meth:`Imitation.resolve`), so
``import autodev`` loads none of them.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any, Callable

#: An imitation: a function (or bound method) in, the same behaving as CuPy's out.
Quirk = Callable[[Callable[..., Any]], Callable[..., Any]]


class Imitation:
    """A quirk of :mod:`autodev._backends._sim_cupy` by name: the quirk itself
    (``S.wrapping_take``), or what its factory returns for these arguments
    (``S.quiet_singular(always=True)``)."""

    __slots__ = ("name", "args", "kwargs")

    def __init__(self, name: str, args: tuple[Any, ...] | None = None,
                 kwargs: dict[str, Any] | None = None) -> None:
        self.name, self.args, self.kwargs = name, args, kwargs

    def __call__(self, *args: Any, **kwargs: Any) -> Imitation:
        """The factory ``name`` called with these arguments (when the simulator loads)."""
        if self.args is not None:
            raise TypeError(f"the imitation {self!r} is already a factory's call")
        return Imitation(self.name, args, kwargs)

    def resolve(self, sim: ModuleType) -> Quirk:
        """The quirk in ``sim`` (the loaded :mod:`autodev._backends._sim_cupy`)."""
        found = getattr(sim, self.name)
        return found if self.args is None else found(*self.args, **(self.kwargs or {}))

    def __repr__(self) -> str:
        call = "" if self.args is None else "(...)"
        return f"S.{self.name}{call}"


class _Names:
    """``S.<name>``: an :class:`Imitation` of that name (see the module's docstring)."""

    def __getattr__(self, name: str) -> Imitation:
        if name.startswith("__"):
            raise AttributeError(name)
        return Imitation(name)


#: The simulator's imitations, by name, as the capability table's rows give them.
S = _Names()
