"""Dispatch overhead on tiny arrays: what a call costs when the work itself is nothing.

``benchmarks/overhead.py`` gives the finer autodev ÷ NumPy ratios in one process;
these cases keep their history in asv and cover the GPU implementations too.
"""

from __future__ import annotations

from typing import Any

from .common import (DTYPES, IMPLEMENTATIONS, STARTS, TINY, WORKLOADS, bind_call,
                     host_inputs, release_call)
from .common import implementation as _implementation


class DispatchOverhead:
    """One tiny call: ``a + b`` (10), ``sin(a)`` (10), ``sum(a)`` (100), ``a @ b`` (10 × 10).

    ``gpu``: ``here`` is this machine as it is; ``sim`` makes a simulated GPU usable, so
    that autodev pays for a decision on every call, as on a machine with a GPU.
    """

    params = [list(IMPLEMENTATIONS), list(TINY), list(DTYPES[1:]), list(STARTS), ["here", "sim"]]
    param_names = ["implementation", "op", "dtype", "start", "gpu"]

    def setup(self, implementation_name: str, op: str, dtype: str, start: str,
              gpu: str) -> None:
        self._sim = None
        if gpu == "sim":
            if implementation_name != "autodev" or start != "host":
                raise NotImplementedError("the simulated GPU mode measures autodev's "
                                          "decision on host data only")
            from autodev.testing import simulated_gpu

            self._sim = simulated_gpu()
            self._sim.__enter__()
        workload = WORKLOADS[op]
        try:
            impl = _implementation(implementation_name, start)
            bind_call(self, impl, workload, host_inputs(workload, workload.sizes[0], dtype))
        except BaseException:
            self.teardown()
            raise

    def teardown(self, *params: Any) -> None:
        release_call(self)
        if self._sim is not None:
            self._sim.__exit__(None, None, None)
            self._sim = None

    def time_call(self, *params: object) -> None:
        self.call()
