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
    """One tiny call: ``a + b`` (10), ``sin(a)`` (10), ``sum(a)`` (100), ``a @ b`` (10 × 10)."""

    params = [list(IMPLEMENTATIONS), list(TINY), list(DTYPES[1:]), list(STARTS)]
    param_names = ["implementation", "op", "dtype", "start"]

    def setup(self, implementation_name: str, op: str, dtype: str, start: str) -> None:
        workload = WORKLOADS[op]
        impl = _implementation(implementation_name, start)
        bind_call(self, impl, workload, host_inputs(workload, workload.sizes[0], dtype))

    def teardown(self, *params: Any) -> None:
        release_call(self)

    def time_call(self, *params: object) -> None:
        self.call()
