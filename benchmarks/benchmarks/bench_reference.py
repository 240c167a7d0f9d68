"""The reference benchmark (REFERENCE.md): seven families at the published sizes.

Each class runs over implementation × size × dtype × start (see ``common``).
CPU runs above a family's size cap are skipped unless AUTODEV_BENCH_FULL=1:
matmul n ≤ 1000, elementwise and reductions n ≤ 5000, svd n ≤ 1024.
"""

from __future__ import annotations

from .common import WorkloadBenchmark as _Base


class MatMul(_Base):
    """``a @ b``, n × n."""

    workload = "matmul"

    def time_matmul(self, *params: object) -> None:
        self.call()

    def peakmem_matmul(self, *params: object) -> None:
        self.call()


class Elementwise(_Base):
    """``a*b + sin(a) + cos(b)``, n × n."""

    workload = "elementwise"

    def time_elementwise(self, *params: object) -> None:
        self.call()

    def peakmem_elementwise(self, *params: object) -> None:
        self.call()


class Sum(_Base):
    """``sum(a)``, n × n."""

    workload = "sum"

    def time_sum(self, *params: object) -> None:
        self.call()


class Mean(_Base):
    """``mean(a)``, n × n."""

    workload = "mean"

    def time_mean(self, *params: object) -> None:
        self.call()


class Std(_Base):
    """``std(a)``, n × n."""

    workload = "std"

    def time_std(self, *params: object) -> None:
        self.call()


class FFT2(_Base):
    """``scipy.fft.fft2(a)``, n × n."""

    workload = "fft2"

    def time_fft2(self, *params: object) -> None:
        self.call()


class SolvePos(_Base):
    """``scipy.linalg.solve(A, b, assume_a='pos')`` with A = XᵀX/n + I."""

    workload = "solve"

    def time_solve(self, *params: object) -> None:
        self.call()


class SparseMatMul(_Base):
    """CSR @ CSR, n × n, density 0.01."""

    workload = "sparse_matmul"

    def time_sparse_matmul(self, *params: object) -> None:
        self.call()

    def peakmem_sparse_matmul(self, *params: object) -> None:
        self.call()


class SVD(_Base):
    """``scipy.linalg.svd(a, full_matrices=False)``, n × n."""

    workload = "svd"

    def time_svd(self, *params: object) -> None:
        self.call()
