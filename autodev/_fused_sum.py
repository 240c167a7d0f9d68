"""A sum or mean of a pending chain, made as the chain runs (:mod:`autodev._fusion` records
the chain; :class:`autodev._blocked.Total` follows NumPy's pairwise summation, bit for bit)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import _parallel
from ._blocked import Total, flat_group
from ._pairwise import DTYPES as PAIRWISE_DTYPES, mean_of
from ._fusion import _BUSY, _LOCK, _PLACER, DECLINED, NODES, PENDING, _flush_locked
from ._trace import STATS

_REPLAYED = frozenset({"ignore", "warn", "raise"})


def fused_sum(x: Any, mean: bool = False) -> Any:
    """``numpy.sum(x)`` (``numpy.mean(x)`` with ``mean``; all axes, no keyword) for a
    pending array ``x``, made as its chain runs (:class:`autodev._blocked.Total`: NumPy's
    pairwise summation, bit for bit; the mean divides it as NumPy's ``_mean`` does), or
    :data:`DECLINED`: ``x`` is not pending, not a float32 or float64 result of a call
    without ``out=`` or ``where=``, N-dimensional where its chain reads an array that is
    broadcast or not C-contiguous (:func:`autodev._blocked.flat_group`), a GPU is usable
    (its chains run there), or the ``errstate`` in force has a mode that cannot be
    replayed."""
    node = PENDING.get(id(x))
    if node is None or node.dtype not in PAIRWISE_DTYPES or node.target is not None \
            or node.where is not True or _PLACER[0] is not None:
        return DECLINED
    if len(node.shape) != 1 and not flat_group([n for n in NODES if n.shape == node.shape]):
        return DECLINED  # (an operand broadcast, or not C-contiguous: blocks of rows)
    state = np.geterr()
    if not _REPLAYED.issuperset(state.values()):
        return DECLINED
    with _LOCK:
        if _BUSY[0] or PENDING.get(id(x)) is not node:
            return DECLINED
        total = Total(node, _parallel._Errors(state))
        _flush_locked(total=total)
    if total.value is None:  # (never expected: x's chain ran without its sum)
        return DECLINED
    total.errors.report(state, "reduce")  # (NumPy's sum is one reduce call)
    STATS.fused_sums += 1
    value = total.value
    return mean_of(value, math.prod(node.shape)) if mean else value
