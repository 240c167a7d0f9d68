"""Chained workloads: where keeping results on the device pays (or a bad decision costs)."""

from __future__ import annotations

from .common import CHAINED, WORKLOADS, gpu_reason, host_inputs, implementation
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


class PlacementVsBestFixed:
    """autodev ÷ the best fixed placement of each chained workload (issue 9).

    The best fixed placement is the cheaper of: everything on the CPU, or the inputs
    moved to the GPU once (the move timed too) and every step there. autodev starts
    from host data it owns, so reuse credit may move it; a value near 1 means the
    placement it found is as good as the best one chosen in hindsight. Skipped where
    no GPU is usable (one device: nothing to place) and on the simulated GPU, whose
    wall time is NumPy's.
    """

    params = [list(CHAINED), [0, 1]]
    param_names = ["workload", "size_index"]
    needs_real_gpu = True  # skipped, with its reason, where none is usable
    timeout = 600.0

    def setup(self, workload: str, size_index: int) -> None:
        from autodev._backends import active_gpu

        gpu = active_gpu()
        if gpu is None or gpu.device.kind == "sim":
            raise NotImplementedError(f"needs a real GPU: {gpu_reason() or 'simulated'}")
        w = WORKLOADS[workload]
        self.inputs = host_inputs(w, w.sizes[size_index], "float32")
        self.workload, self.gpu = w, gpu

    def track_autodev_vs_best_fixed(self, workload: str, size_index: int) -> float:
        from autodev._calibrate.timing import measure

        times = {}
        for name, start in (("autodev", "host"), ("autodev-cpu", "host"),
                            ("autodev-gpu", "resident")):
            impl = implementation(name, start)
            impl.enter()
            try:
                run = impl.bind(self.workload, self.inputs)
                times[name] = measure(run, budget=1.0, max_repeats=10).median
            finally:
                impl.exit()
        move = measure(lambda: implementation("autodev-gpu", "resident").bind(
            self.workload, self.inputs), self.gpu.synchronize, budget=0.5, max_repeats=5)
        best = min(times["autodev-cpu"], times["autodev-gpu"] + move.median)
        return times["autodev"] / best

    track_autodev_vs_best_fixed.unit = "ratio"  # type: ignore[attr-defined]
