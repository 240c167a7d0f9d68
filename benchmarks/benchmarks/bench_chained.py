"""Chained workloads: where keeping results on the device pays (or a bad decision costs)."""

from __future__ import annotations

from .common import WorkloadBenchmark as _Base


class PowerIteration(_Base):
    """50 steps of ``x = a @ x; x = x / norm(x)`` (the issue's example), n × n."""

    workload = "power_iteration"

    def time_power_iteration(self, *params: object) -> None:
        self.call()

    def peakmem_power_iteration(self, *params: object) -> None:
        self.call()


class ElementwiseChain(_Base):
    """20 steps of ``x = x*0.5 + sin(x)*0.25`` over n elements."""

    workload = "elementwise_chain"

    def time_elementwise_chain(self, *params: object) -> None:
        self.call()


class SparseMatvecLoop(_Base):
    """50 steps of ``x = A @ x``, A n × n CSR with ten nonzeros per row."""

    workload = "sparse_matvec_loop"

    def time_sparse_matvec_loop(self, *params: object) -> None:
        self.call()
