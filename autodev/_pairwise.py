"""NumPy's pairwise summation, as a tree of runs: where NumPy's float sum of one run of
elements (``add.reduce`` of a C-contiguous float32 or float64 array) splits it, so that a
sum cut along that tree and added back up it is NumPy's, bit for bit. Both the split full
sums of :mod:`autodev._parallel` and the sums fused into chains
(:class:`autodev._blocked.Total`) cut there.

NumPy's ``pairwise_sum`` (``loops_utils.h.src``) adds a run of at most
:data:`PAIRWISE_BLOCK` elements whole (in eight partial sums) and splits a longer run of
``n`` at ``n // 2`` rounded down to a multiple of 8, summing the two halves the same way
and adding their sums. :func:`mean_of` is NumPy's mean of such a sum.
"""

from __future__ import annotations

from typing import Any

import numpy as np

#: The float dtypes whose sum NumPy makes by this summation over the one run of a
#: C-contiguous array's elements (a float16 sum rounds its partial sums to half: not these).
DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
#: The longest run NumPy's pairwise summation adds whole (``PW_BLOCKSIZE``): a run is
#: split in two, at :func:`first_half`, only when longer.
PAIRWISE_BLOCK = 128


def first_half(n: int) -> int:
    """Where NumPy's pairwise summation splits a run of ``n`` elements."""
    half = n // 2
    return half - half % 8


def pairwise_runs(lo: int, n: int, run: int, runs: list[tuple[int, int]]) -> None:
    """Append to ``runs`` the leaves ``(start, stop)`` of NumPy's pairwise summation tree
    over ``n`` elements from ``lo``, cut down to runs of at most ``run`` (at least
    :data:`PAIRWISE_BLOCK`: NumPy sums a shorter run whole)."""
    if n <= run:
        runs.append((lo, lo + n))
        return
    half = first_half(n)
    pairwise_runs(lo, half, run, runs)
    pairwise_runs(lo + half, n - half, run, runs)


def pairwise_total(lo: int, n: int, run: int, partial: dict[int, Any]) -> Any:
    """The sum of the partial sums of the runs from ``lo`` (by their start), added up the
    tree :func:`pairwise_runs` walks."""
    if n <= run:
        return partial[lo]
    half = first_half(n)
    return pairwise_total(lo, half, run, partial) \
        + pairwise_total(lo + half, n - half, run, partial)


def mean_of(total: Any, count: int) -> Any:
    """NumPy's mean from the sum ``total`` (a NumPy scalar of one of :data:`DTYPES`) of
    ``count`` elements, divided as ``numpy._core._methods._mean`` divides it: the sum's
    type of the sum over the count as an ``intp``."""
    return total.dtype.type(total / np.intp(count))
