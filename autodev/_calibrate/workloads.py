"""What calibration times: one representative call per cost family.

Each :class:`Workload` turns a size ``n`` into host inputs, says what ``work``
(in the family's unit, as :data:`autodev._dispatch.WORK` counts it) and how many
input bytes that is, and finds the call on a backend. ``autodev info`` reads the
same table to express crossovers in sizes a user recognises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._backends import Backend

DTYPES: dict[str, np.dtype] = {
    "f32": np.dtype(np.float32), "f64": np.dtype(np.float64),
    "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
}
ALL = ("f32", "f64", "c64", "c128")
REAL = ("f32", "f64")

Inputs = list[Any]


@dataclass(frozen=True)
class Workload:
    """One family's calibration call.

    Attributes
    ----------
    family : str
        Cost family (``autodev._cost.model.FAMILIES``).
    op : str
        The call timed, as autodev's function table names it.
    unit : str
        What ``n`` counts, for people ("elements", "n for n x n").
    dtypes : tuple of str
        Dtype classes the call is measured for.
    smallest, largest : int
        The size ladder's ends.
    work : callable
        ``n -> work`` in the family's unit.
    nbytes : callable
        ``(n, itemsize) -> bytes`` of the inputs (what host data must move).
    make : callable
        ``(n, dtype, rng) -> inputs`` on the host.
    matrix : bool
        True when ``n`` is a matrix side (ladders step more finely).
    """

    family: str
    op: str
    unit: str
    dtypes: tuple[str, ...]
    smallest: int
    largest: int
    work: Callable[[float], float]
    nbytes: Callable[[float, int], float]
    make: Callable[[int, np.dtype, np.random.Generator], Inputs]
    matrix: bool = False

    def function(self, backend: Backend) -> Callable[..., Any] | None:
        """The callable timed on ``backend``, or None where it has none."""
        if self.family == "sparse_matmul":
            # the simulated GPU has no sparse matrices behind its wall
            if backend.device.kind == "sim" or backend.scipy("sparse") is None:
                return None
            return _sparse_matvec
        return backend.resolve(self.op)

    def to_device(self, backend: Any, inputs: Inputs) -> Inputs:
        """``inputs`` copied onto ``backend``'s device."""
        if self.family == "sparse_matmul" and backend.is_gpu:
            matrix, vector = inputs
            return [backend.scipy("sparse").csr_matrix(matrix), backend.from_host(vector)]
        return [backend.from_host(x) for x in inputs]

    def nice_size(self, n: float) -> int:
        """A size near ``n`` the call runs at full speed on (FFTs want 2^k or 3*2^k)."""
        if self.family == "fft":
            k = max(int(math.log2(max(n, 2))), 1)
            return min((2**k, 3 * 2 ** (k - 1), 2 ** (k + 1)), key=lambda c: abs(c - n))
        return max(int(round(n)), 1)


def _sparse_matvec(matrix: Any, vector: Any) -> Any:
    return matrix @ vector


def _random(shape: tuple[int, ...], dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    real = rng.random(shape, dtype=np.float64)
    if dtype.kind == "c":
        return (real + 1j * rng.random(shape)).astype(dtype)
    return real.astype(dtype)


def _vectors(count: int) -> Callable[[int, np.dtype, np.random.Generator], Inputs]:
    def make(n: int, dtype: np.dtype, rng: np.random.Generator) -> Inputs:
        return [_random((n,), dtype, rng) + 0.5 for _ in range(count)]

    return make


def _matrices(n: int, dtype: np.dtype, rng: np.random.Generator) -> Inputs:
    return [_random((n, n), dtype, rng), _random((n, n), dtype, rng)]


def _system(n: int, dtype: np.dtype, rng: np.random.Generator) -> Inputs:
    # diagonally dominant: well conditioned at every size
    a = _random((n, n), dtype, rng) + n * np.eye(n, dtype=dtype)
    return [a, _random((n,), dtype, rng)]


def _hermitian(n: int, dtype: np.dtype, rng: np.random.Generator) -> Inputs:
    a = _random((n, n), dtype, rng)
    # Hermitian and diagonally dominant, hence positive definite
    return [((a + a.conj().T) / 2 + n * np.eye(n, dtype=dtype)).astype(dtype)]


def _square(n: int, dtype: np.dtype, rng: np.random.Generator) -> Inputs:
    return [_random((n, n), dtype, rng)]


_NNZ_PER_ROW = 8


def _sparse(n: int, dtype: np.dtype, rng: np.random.Generator) -> Inputs:
    import scipy.sparse

    rows = np.repeat(np.arange(n), _NNZ_PER_ROW)
    cols = rng.integers(0, n, size=rows.size)
    values = _random((rows.size,), dtype, rng)
    matrix = scipy.sparse.csr_matrix((values, (rows, cols)), shape=(n, n))
    return [matrix, _random((n,), dtype, rng)]


def _nlogn(n: float) -> float:
    return n * math.log2(max(n, 2))


WORKLOADS: dict[str, Workload] = {w.family: w for w in (
    Workload("elementwise", "add", "elements", ALL, 2**6, 2**25,
             lambda n: n, lambda n, s: 2 * n * s, _vectors(2)),
    # (exp, not sin: with NumPy 2 a float64 sin or cos runs libm's scalar loop, about 13x
    # slower than exp, log, tanh or arctan on the same CPU (136 against 1,300-1,900 million
    # elements a second on an AVX-512 EPYC, where float32 sin is as fast as exp), so a
    # curve of sin priced the family's commonest calls an order of magnitude too high on
    # the host and sent them to a GPU at sizes where the move cost more than it saved)
    Workload("transcendental", "exp", "elements", ALL, 2**6, 2**24,
             lambda n: n, lambda n, s: n * s, _vectors(1)),
    Workload("reduction", "sum", "elements", ALL, 2**6, 2**25,
             lambda n: n, lambda n, s: n * s, _vectors(1)),
    Workload("sort", "sort", "elements", REAL, 2**6, 2**23,
             _nlogn, lambda n, s: n * s, _vectors(1)),
    Workload("fft", "fft.fft", "elements", ALL, 2**6, 2**22,
             _nlogn, lambda n, s: n * s, _vectors(1)),
    Workload("matmul", "matmul", "n for n x n", ALL, 4, 4096,
             lambda n: n**3, lambda n, s: 2 * n * n * s, _matrices, matrix=True),
    Workload("solve", "linalg.solve", "n for n x n", ALL, 4, 2048,
             lambda n: n**3, lambda n, s: (n * n + n) * s, _system, matrix=True),
    Workload("cholesky", "linalg.cholesky", "n for n x n", ALL, 4, 2048,
             lambda n: n**3, lambda n, s: n * n * s, _hermitian, matrix=True),
    Workload("svd", "linalg.svd", "n for n x n", ALL, 4, 1024,
             lambda n: n**3, lambda n, s: n * n * s, _square, matrix=True),
    Workload("eigh", "linalg.eigh", "n for n x n", ALL, 4, 1024,
             lambda n: n**3, lambda n, s: n * n * s, _hermitian, matrix=True),
    Workload("sparse_matmul", "csr_matrix @ vector", f"rows ({_NNZ_PER_ROW} nonzeros each)",
             REAL, 2**8, 2**22, lambda n: _NNZ_PER_ROW * n,
             lambda n, s: _NNZ_PER_ROW * n * (s + 4) + (n + 1) * 4 + n * s, _sparse),
)}
