"""Which arrays a deferred chain (:mod:`autodev._fusion`) may read late: an input only its
own autodev array reaches (*locked* while the chain is pending), or one whose memory
views share but whose every write autodev sees (*watched*). Anything else is read at the
call or makes the call run at once. And what a call's operands give at the call: their
shapes, and its result's dtype (NumPy's own errors raised there)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ._blocked import Node, row_major
from ._device import CPU
from ._refcounts import holders

#: The dtype kinds a chain computes in (bool, integers, floats, complex).
KINDS = frozenset("biufc")


def late_reach(dest: np.ndarray, nodes: list[Node]) -> int | None:
    """How the pending ``nodes`` may write a result of ``dest``'s shape and dtype straight
    into ``dest`` (memory of an array being assigned the result): 0 where they read none of
    its memory except through ``dest``'s own geometry (block ``i`` of it then read only by
    block ``i``, as in place); else the rows of the first axis, around a block's own, that
    they read of it through views of its shape and strides (``u[:-2, 1:-1]`` for
    ``u[1:-1, 1:-1]``: one row before; a shift within a row counts one row more), for
    :class:`autodev._blocked._Late`; None where a view of another geometry, a broadcast
    read or a call of another shape reaches it."""
    first = dest.strides[0] if dest.ndim else 0
    if first <= 0 or not row_major(dest) or dest.itemsize + sum(  # (rows that do not overlap)
            (n - 1) * s for n, s in zip(dest.shape[1:], dest.strides[1:])) > first:
        return None
    data = dest.ctypes.data
    reach = 0
    for node in nodes:
        for a in (*node.args, node.where, node.target):
            if type(a) is not np.ndarray or not np.may_share_memory(a, dest):
                continue
            if node.shape != dest.shape or a.shape != dest.shape or a.strides != dest.strides:
                return None
            rows, within = divmod(abs(a.ctypes.data - data), first)
            reach = max(reach, rows + (within != 0))
    return reach


def lockable(x: Any) -> np.ndarray | None:
    """``x``'s native array if nothing but ``x`` can reach its memory (see
    :mod:`autodev._fusion`), else None."""
    if x._storage is not None or x._mirror is not None or x._scalar or x._face \
            or x._pin is not None or x._device is not CPU:
        return None
    native = x._native
    # held by x's slot alone: nobody else holds it
    if type(native) is not np.ndarray or native.base is not None \
            or holders(native) > 1 or native.dtype.kind not in KINDS \
            or not native.flags.writeable or not row_major(native) or native.ndim == 0:
        return None
    return native


def watchable(x: Any) -> np.ndarray | None:
    """``x``'s native array if autodev watches every write to its memory, though other
    arrays share it (a view, or an array views were made of), else None: its storage
    (what the arrays sharing one buffer share) never escaped (no buffer of it was handed
    out, it wraps no memory a caller holds), holds no mirror, and its memory is owned by
    a NumPy array, which only autodev's arrays reach."""
    storage = x._storage
    if storage is None or storage.escaped or storage.mirrored or storage.shared \
            or x._mirror is not None or x._scalar or x._face or x._pin is not None \
            or x._device is not CPU:
        return None
    native = x._native
    if type(native) is not np.ndarray or native.dtype.kind not in KINDS \
            or native.ndim == 0 or not row_major(native):
        return None
    root = native.base
    if root is not None and (type(root) is not np.ndarray or root.base is not None):
        return None
    # (a view of its own: setting x.shape or x.strides later changes x's, not the chain's)
    return native.view()


def shape_of(a: Any) -> tuple[int, ...] | None:
    """The shape of a chain's operand that has one (a node, a native array), else None."""
    return a.shape if type(a) is Node or type(a) is np.ndarray else None


def result_dtype(ufunc: np.ufunc, args: list[Any], mask: Any, out: Any) -> np.dtype | None:
    """The call's result dtype, found by running it on empty stand-ins: NumPy's own
    errors (types, casting, Python integers out of range) raise here, at the call. None
    (not deferred) for an integer ``power``, whose error for a negative exponent depends on
    the values: NumPy raises it at the call."""
    keywords: dict[str, Any] = {}
    if out is not None:
        keywords["out"] = np.empty(0, out.dtype)
    if mask is not True:
        keywords["where"] = np.empty(0, np.bool_)
    probe = ufunc(*(_stand_in(a) for a in args), **keywords)
    dtype = probe.dtype
    if ufunc is np.power and dtype.kind in "iu":
        return None
    return dtype if dtype.kind in KINDS else None


def _stand_in(a: Any) -> Any:
    return np.empty(0, a.dtype) if type(a) is Node or type(a) is np.ndarray else a
