"""What autodev reads of the interpreter itself: reference counts and frames.

NumPy reuses a temporary operand's buffer for the result of ``a*b + c`` (temporary
elision) and refuses ``resize`` on an array something else refers to; both read reference
counts that autodev's wrapper hides, so the operators and ``ndarray.resize`` make the same
checks themselves (:func:`temporary`, :func:`resize_refused`), against counts measured here
once, at import. The same counts tell who else holds a storage or a native array
(:func:`holders`: device memory that may move, a fused chain's input), and the frames tell
the user's line a warning names (:func:`user_stacklevel`). Every rule that depends on how
CPython counts references or lays out frames is in this module (the compiled hot path
reads the count :func:`_probe_temporary_refcount` measures for it): revisit it for each
CPython release (the probes below return None or other counts where the interpreter
changes its ways, and elision then stays off). It sits at the foundation, so that every
room may ask it.
"""

from __future__ import annotations

import dis
import sys
from sys import getrefcount
from types import FrameType
from typing import Any, Callable

import numpy as np

from ._typing import Array

_np_ndarray = np.ndarray


def _probe_temporary_refcount(add: Callable[[Any, Any], int]) -> int | None:
    """The reference count the binary operator ``add`` (an ``__add__`` that returns the
    count it sees on its left operand) sees on a temporary left operand, or None if this
    interpreter does not tell temporaries from named values that way."""

    class Probe:
        __add__ = add

    named = Probe()
    seen_named = named + 1
    seen_temporary = Probe() + 1
    return seen_temporary if seen_temporary < seen_named else None


def _refcount_seen(self: Any, other: Any) -> int:
    """What a Python-level operator sees through :func:`temporary` (the probe of
    :func:`_probe_temporary_refcount`)."""
    return _seen(self)


def _seen(x: Any) -> int:
    """The count a one-argument function here sees (the shape :func:`temporary` and
    :func:`resize_refused` have)."""
    return getrefcount(x)


def temporary(x: Any) -> bool:
    """True if ``x``, the left operand of the Python operator calling this, is a temporary
    nothing else refers to (only where :data:`_TEMPORARY_REFS` is an int)."""
    return getrefcount(x) <= _TEMPORARY_REFS  # type: ignore[operator]


def _probe_right_refcount() -> int | None:
    """The reference count a binary operator sees on a temporary right operand, or None
    if this interpreter does not tell it from a named one (as
    :func:`_probe_temporary_refcount` for the left operand)."""

    class Probe:
        def __add__(self, other: Any) -> int:
            return _seen(other)

    named = Probe()
    seen_named = Probe() + named
    seen_temporary = Probe() + Probe()
    return seen_temporary if seen_temporary < seen_named else None


def _probe_held_refcount() -> int:
    """The reference count ``_elide`` sees on a buffer only its wrapper holds: read from
    the slot into the operator's local and passed on, as the operator does."""

    class Holder:
        __slots__ = ("data",)
        data: object

    def callee(data: object) -> int:
        return getrefcount(data)

    def caller(holder: Holder) -> int:
        data = holder.data
        return callee(data)

    holder = Holder()
    holder.data = object()
    return caller(holder)


#: NumPy reuses a temporary operand's buffer for the result of ``a*b + c`` when the
#: temporary is large (>= 256 KiB) and nothing else refers to it; autodev's wrapper
#: hides that refcount from NumPy, so the operators do the same check themselves.
_TEMPORARY_REFS = _probe_temporary_refcount(_refcount_seen)
#: True where a temporary right operand shows the left one's count, which
#: :func:`temporary` tests (``c + (a*b)`` may then reuse ``a*b``).
_RIGHT_TOO = _TEMPORARY_REFS is not None and _probe_right_refcount() == _TEMPORARY_REFS
_ELIDE_BYTES = 256 * 1024
_HELD_REFS = _probe_held_refcount()


def _probe_assigned_refcount() -> int | None:
    """The reference count :func:`assigned` sees on a temporary assigned by ``a[k] = x``
    to a class whose ``__setitem__`` passes it on, or None if it does not tell a temporary
    from a named value."""
    seen: list[int] = []

    class Probe:
        def __setitem__(self, key: Any, value: Any) -> None:
            seen.append(_seen(value))

    named = object()
    Probe()[0] = named
    Probe()[0] = object()
    return seen[1] if seen[1] < seen[0] else None


_ASSIGNED_REFS = _probe_assigned_refcount()
_STORE_SUBSCR = dis.opmap.get("STORE_SUBSCR")


def assigned(x: Any) -> bool:
    """True if ``x``, the value ``__setitem__`` (the function calling this) is given, is a
    temporary of the statement ``a[k] = <expression>`` in Python code: nothing else refers
    to it, and nothing reads it after the assignment."""
    if _ASSIGNED_REFS is None or getrefcount(x) > _ASSIGNED_REFS:
        return False
    frame = sys._getframe(2)  # (0: this function, 1: __setitem__)
    lasti = frame.f_lasti
    return lasti >= 0 and frame.f_code.co_code[lasti] == _STORE_SUBSCR


#: The opcodes of a binary operator in Python code (3.11+: BINARY_OP; 3.10: one each).
_BINARY_OPCODES = frozenset(code for name, code in dis.opmap.items()
                            if name.startswith("BINARY_") and "SUBSCR" not in name
                            and "SLICE" not in name)

#: The opcodes of ``-a`` and ``~a`` in Python code, and of ``+a`` up to 3.11 (from 3.12
#: ``+a`` is CALL_INTRINSIC_1 with :data:`_POSITIVE_INTRINSIC`). ``abs(a)`` is a call, which
#: C code makes too: it is not elided (NumPy's is).
_UNARY_OPCODES = frozenset(code for name, code in dis.opmap.items()
                           if name in ("UNARY_NEGATIVE", "UNARY_INVERT", "UNARY_POSITIVE"))
_CALL_INTRINSIC_1 = dis.opmap.get("CALL_INTRINSIC_1")
_POSITIVE_INTRINSIC = 5  # (INTRINSIC_UNARY_POSITIVE, 3.12+)


def _from_opcode(opcodes: frozenset[int]) -> bool:
    """True if the operator runs for an operator of Python code whose opcode is one of
    ``opcodes`` (the frame above ``_elide`` or ``_elide_unary`` and the operator): its
    operands are then on that frame's evaluation stack, which holds each by a reference
    of its own. Not so for C code calling the operator with a reference it only borrows
    (``functools.partial(operator.add, a)``, ``map``): there a held array shows the
    refcount of a temporary."""
    frame = sys._getframe(3)  # (0: this function, 1: _elide, 2: the operator)
    lasti = frame.f_lasti
    if lasti < 0:
        return False
    code = frame.f_code.co_code
    opcode = code[lasti]
    return opcode in opcodes or (opcodes is _UNARY_OPCODES and opcode == _CALL_INTRINSIC_1
                                 and code[lasti + 1] == _POSITIVE_INTRINSIC)


def _unshared(self: Array, data: Any) -> bool:
    """True if ``data``, the operator's local holding ``self``'s buffer, is referred to by
    ``self`` alone: no storage (no view, no user's array behind it), no mirror on a
    device, no other reference, a base of its own, writeable."""
    return (self._storage is None and self._mirror is None
            and getrefcount(data) == _HELD_REFS + 1  # (+1: the caller's argument here)
            and data.base is None and data.flags.writeable)


def _elide(func: Any, self: Array, data: Any, o: Any, reflected: bool) -> bool:
    """Compute ``func`` into ``self``'s buffer (``data``, the operator's local) if ``self``
    is an unshared temporary whose dtype and shape the result keeps (as NumPy's temporary
    elision does); ``reflected``: ``self`` is ``func``'s right operand."""
    if not _unshared(self, data) or not _from_opcode(_BINARY_OPCODES):
        return False
    o_type = type(o)
    if o_type is _np_ndarray:
        if o.shape != data.shape:
            return False
        o_dtype = o.dtype
    elif o_type in (int, float, complex):
        o_dtype = o_type
    else:
        return False
    dtypes = (o_dtype, data.dtype, None) if reflected else (data.dtype, o_dtype, None)
    try:
        resolved = func.resolve_dtypes(dtypes)
    except (TypeError, np.exceptions.DTypePromotionError):
        return False  # let the ordinary call raise NumPy's own error
    if resolved[2] != data.dtype or resolved[0] != resolved[1]:
        return False
    if reflected:
        func(o, data, out=data)
    else:
        func(data, o, out=data)
    return True


def _elide_unary(func: Any, self: Array, data: Any, opcodes: frozenset[int]) -> bool:
    """Compute the one-input ufunc ``func`` into ``self``'s buffer (``data``, the
    operator's local) if ``self`` is an unshared temporary whose dtype the result keeps,
    as NumPy does for ``-a``, ``+a``, ``~a`` and ``a ** 2`` (``opcodes``: the operator's
    opcodes in Python code)."""
    if not _unshared(self, data) or not _from_opcode(opcodes):
        return False
    try:
        resolved = func.resolve_dtypes((data.dtype, None))
    except (TypeError, np.exceptions.DTypePromotionError):
        return False  # let the ordinary call raise NumPy's own error
    if resolved[1] != data.dtype:
        return False
    func(data, out=data)
    return True


#: Operators whose result may reuse a temporary operand's buffer (same dtype, shape).
_ELIDABLE = frozenset({"add", "subtract", "multiply", "divide", "true_divide", "floor_divide",
                       "remainder", "power", "bitwise_and", "bitwise_or", "bitwise_xor",
                       "left_shift", "right_shift"})

#: Unary operators whose result may reuse a temporary operand's buffer (same dtype):
#: ``-a``, ``+a``, ``~a`` (``abs(a)`` is a call: see :data:`_UNARY_OPCODES`).
_UNARY_ELIDABLE = frozenset({"negative", "positive", "invert"})


def _resize_refs() -> int:
    """References to an array inside ``resize`` when only its caller's name holds it."""

    def method(self: Any) -> int:
        return _seen(self)  # (as resize calls resize_refused)

    return method(object()) + 1  # (any new object, and the caller's own variable)


#: More references than this inside ``ndarray.resize``: someone else holds the array.
_RESIZE_REFS = _resize_refs()


def resize_refused(self: Any) -> bool:
    """True if ``self``, the array of the ``resize`` method calling this, is referred to by
    more than its caller's one name: NumPy's ``refcheck``."""
    return getrefcount(self) > _RESIZE_REFS


def holders(obj: object) -> int:
    """References to ``obj`` besides the one local variable its caller holds it in (and
    this call's own): the slots, containers and other names that hold it. The caller must
    hold ``obj`` in exactly one local variable, as the probe below does."""
    return getrefcount(obj) - _CALL_REFS


def _probe_call_refs() -> int:
    """What :func:`holders` counts, before it is corrected, for an object one local of its
    caller holds and nothing else."""

    def caller() -> int:
        held = object()
        return holders(held)

    return caller()


_CALL_REFS = 0
_CALL_REFS = _probe_call_refs()


def user_stacklevel(package: str) -> int:
    """The ``stacklevel`` at which ``warnings.warn``, called by this function's caller,
    names the first frame whose file is outside ``package`` (a directory, with its
    separator): NumPy's rule for a warning raised at the user's line."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame = frame.f_back
        level += 1
    return level
