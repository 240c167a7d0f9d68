"""The compiled hot path's callables (:mod:`autodev._speedups`), made in front of the
pure-Python functions they stand for: :func:`compiled` and :func:`compiled_method`.

Each does what its *fallback*'s own fast path does for the commonest calls and passes
every other call to the fallback untouched; where the extension is not built, or with
``AUTODEV_PURE_PYTHON=1``, the fallback stands alone.
"""

from __future__ import annotations

from typing import Any, Callable, TypeVar, cast

from ._config import SPEEDUPS
from ._cost.families import ELEMENTS_BOUND

_F = TypeVar("_F", bound=Callable[..., Any])
#: ``positional`` where a function takes no ``out`` by position: any number (the compiled
#: path's own bound applies).
ANY_NUMBER = 1 << 16


def compiled(kind: str, func: Any, fallback: _F, other: Callable[..., Any] | None = None,
             can_elide: bool = False, family: str | None = None, binds: bool = True,
             threads: str | None = None, positional: int = ANY_NUMBER,
             primary: bool = False) -> _F:
    """``fallback`` behind its compiled fast path (``fallback`` itself where there is none).

    ``kind``: binary, reflected, getitem, setitem, ufunc, reduce, create, method
    (``a.copy()``, ``a.view(dtype)``, ``a.astype(dtype)``), unary (a reduction of one array:
    ``count_nonzero(a)``), sequence (``array`` of numbers in lists), made (a creation
    function taking no arrays: ``arange``, ``linspace``), function (any other
    dispatched function, no ``out=``) or array_method (a dispatched array method, plain
    arguments, no ``out=``); ``func``: NumPy's
    callable; ``other``: what a result that is not one NumPy array goes through;
    ``can_elide``: a binary operator whose temporary left operand the fallback may reuse;
    ``family``: the cost family whose :data:`autodev._cost.cache.HOST_NOW` bound a host call
    with a GPU usable must be below, its work as
    :data:`autodev._cost.families.ELEMENTS_BOUND` says (None, or a family not there: the
    fallback decides every such call); ``binds``: whether a class holding it makes it a
    method (False for NumPy's builtins' twins); ``threads``: with no GPU usable, the family
    below whose :func:`autodev._threads.split_floors` size the compiled path runs a call
    itself (None: below the least of them; for an array method, one whose function may
    split it, ``a.sum(axis=1)``: None for any other; for a function, one the CPU backend
    splits, ``where``, from that family's size with a GPU usable too: None for any other); ``positional``: for a function, the most
    positional arguments its compiled path takes (where ``out`` may come by position);
    ``primary``: for an array method, one that runs where its array lives (a view method),
    so on host data at once with a GPU usable too."""
    if SPEEDUPS is None:
        return fallback
    kind_of = SPEEDUPS.FastCall if binds else SPEEDUPS.FastFunction
    bound = ELEMENTS_BOUND.get(family) if family is not None else None
    return cast(_F, kind_of(kind, func, fallback, other, can_elide,
                            None if bound is None else family,
                            SPEEDUPS.BOUNDS["largest" if bound is None else bound], threads,
                            positional, primary))


def compiled_method(kind: str) -> Callable[[_F], _F]:
    """Decorator: the method behind its compiled fast path (see :func:`compiled`)."""
    return lambda method: compiled(kind, None, method)
