"""Cost families: which cost curve prices each function, and how much work a call is.

The cost model (:mod:`autodev._cost.model`) fits one curve per family and dtype class;
each dispatched name's family is its row's (:mod:`autodev._names`: the function table
builds its specs from the rows, the simulated GPU charges its virtual clock by them).
This module says how a call's *work*, the curve's x, is counted from its arrays. It
imports nothing else of autodev but those rows.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable

from .._names import DISPATCHED, UFUNC_FAMILIES as _UFUNC_FAMILIES

WorkFn = Callable[[list[Any]], float]

def work_elements(arrays: list[Any]) -> float:
    """Largest input size."""
    largest = 1
    for a in arrays:
        size = a.size
        if size > largest:
            largest = size
    return largest


def broadcast_elements(shapes: list[tuple[int, ...]]) -> int:
    """Elements of the result of broadcasting arrays of ``shapes`` together (``x[:, None]
    - c`` has more than either operand); for shapes that do not broadcast, a count of no
    meaning (NumPy's own call raises)."""
    size = 1
    for i in range(1, max(len(s) for s in shapes) + 1):
        d = 1
        for s in shapes:
            if i <= len(s) and s[-i] != 1:
                d = s[-i]
        size *= d
    return size


def work_broadcast(arrays: list[Any]) -> float:
    """Output size of an elementwise call: its arrays broadcast together (at least the
    largest's size)."""
    largest = work_elements(arrays)
    if len(arrays) > 1:
        shape = arrays[0].shape
        for a in arrays:
            if a.shape != shape:
                return max(largest, broadcast_elements([b.shape for b in arrays]))
    return largest


def work_first(arrays: list[Any]) -> float:
    """Size of the first array (reductions, sorts' n)."""
    return arrays[0].size if arrays else 1


def work_matmul(arrays: list[Any]) -> float:
    """Multiply-adds of ``a @ b``: size(a) * size(b) / k."""
    if len(arrays) < 2:
        return work_first(arrays)
    a, b = arrays[0], arrays[1]
    k = a.shape[-1] if a.ndim else 1
    return a.size * b.size / max(k, 1)


def work_nlogn(arrays: list[Any]) -> float:
    """n * log2(n) of the first array."""
    n = work_first(arrays)
    return n * math.log2(max(n, 2))


def work_cubic(arrays: list[Any]) -> float:
    """n^3 per matrix (times the batch) of the first array."""
    if not arrays or arrays[0].ndim < 2:
        return work_first(arrays)
    a = arrays[0]
    return a.size * min(a.shape[-2:])


WORK: dict[str, WorkFn] = {
    "elementwise": work_broadcast,
    "transcendental": work_broadcast,
    "copy": work_elements,
    "creation": work_elements,
    "reduction": work_first,
    "matmul": work_matmul,
    "fft": work_nlogn,
    "sort": work_nlogn,
    "solve": work_cubic,
    "cholesky": work_cubic,
    "svd": work_cubic,
    "eigh": work_cubic,
    "sparse_matmul": work_elements,
}


#: family -> how its work is bounded by its operands' element counts, for the paths that
#: count nothing else (the compiled hot path, autodev/_speedups.c): "largest", the largest
#: operand's elements, which is the work of these families; "broadcast", the elements of
#: the operands broadcast together (:func:`work_broadcast`: at least the largest's);
#: "product", the product of the two operands' elements, which a matmul's multiply-adds
#: never exceed (so a call below a bound by that product is below it by its work; one that
#: is not is counted exactly by the Python path). A family not here is never bounded so:
#: Python counts its work.
ELEMENTS_BOUND: dict[str, str] = {
    "elementwise": "broadcast", "transcendental": "broadcast", "reduction": "largest",
    "copy": "largest", "creation": "largest", "matmul": "product",
}


def family_of_ufunc(name: str) -> str:
    """The cost family of the NumPy ufunc ``name``."""
    return _UFUNC_FAMILIES.get(name, "elementwise")


def dispatched_families(ufunc_names: Iterable[str]) -> dict[str, str]:
    """Dispatched name (``"sum"``, ``"linalg.solve"``, a ufunc's) -> its cost family; the
    names that run where their input lives (``primary``) are not priced and left out."""
    found = {row.name: row.family for row in DISPATCHED
             if row.family is not None and not row.view}
    found.update((name, family_of_ufunc(name)) for name in ufunc_names)
    return found
