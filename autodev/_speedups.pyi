"""Types of the compiled hot path (autodev/_speedups.c)."""

from contextvars import ContextVar
from typing import Any, Callable

class FastCall:
    fallback: Callable[..., Any]
    func: Any
    def __init__(self, kind: str, func: Any, fallback: Callable[..., Any],
                 other: Callable[..., Any] | None = ..., can_elide: bool = ...,
                 family: str | None = ..., bound: int = ..., threads: str | None = ...,
                 positional: int = ..., primary: bool = ...) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

class FastFunction(FastCall):
    """A FastCall that a class holding it does not bind (NumPy's builtins are not)."""

class DataAttribute:
    """The array's data's own attribute ``name`` (``a.size``), read from its slot."""
    name: str
    def __init__(self, name: str, doc: str | None = ...,
                 setter: Callable[[Any, Any], None] | None = ...) -> None: ...
    def __get__(self, obj: Any, objtype: Any = ...) -> Any: ...
    def __set__(self, obj: Any, value: Any) -> None: ...
    def __delete__(self, obj: Any) -> None: ...

class BufferExporter:
    """A base class whose buffer protocol is its instances' ``__buffer__``."""

refcount_probe: Any
#: The array class's slots, in its order, that new arrays are made with (a test checks
#: them against ``ndarray.__slots__``).
SLOTS: tuple[str, ...]
#: The bytes from which an operand that may be a temporary goes to the Python operator,
#: which may reuse its buffer (``autodev._refcounts._ELIDE_BYTES``).
ELIDE_BYTES: int
#: How a family's work is bounded by its operands' elements (``FastCall``'s ``bound``), by
#: the names of ``autodev._cost.families.ELEMENTS_BOUND``.
BOUNDS: dict[str, int]

def configure(array: type, numpy_array: type, cpu: Any, plain_operands: frozenset[type],
              plain_scalars: frozenset[type], storage: type,
              temporary_refs: int, host_now: dict[str, dict[str, int]],
              made_on_host: dict[str, bool], policy: ContextVar[str],
              plain_values: frozenset[type],
              basic_keys: frozenset[type]) -> None: ...
def set_sequence(depth: int, keywords: tuple[str, ...]) -> None: ...
def set_fast(fast: bool, host_fast: bool, host_made: bool) -> None: ...
def set_split_from(n: int, total: int) -> None: ...
def set_pool(swap: Callable[[Any], Any] | None, handler: Any, elements: int,
             nbytes: int) -> None: ...
def set_arguments(types: frozenset[type]) -> None: ...
def set_watching(flag: bool) -> None: ...
def set_pending(pending: bool) -> None: ...
def inherit_vectorcall(cls: type) -> bool: ...
def calls() -> int: ...
