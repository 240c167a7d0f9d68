"""NumPy vs autodev on large elementwise chains, one thread and all, fused and not.

Every workload of ``benchmarks/benchmarks/bench_threads.py`` is timed in one run as
NumPy, and as autodev unfused (every call at once) and fused (deferred chains, one
blocked pass each), each limited to one thread (``threadpoolctl.threadpool_limits(1)``)
and with every thread it may use, with the one timing primitive
(``autodev._calibrate.timing.measure``). The three are interleaved round by round and
each row reports medians over the rounds, so that load from other processes slows all
columns alike; on a shared machine the ratios are still indicative only. It also checks
that the results are bit-identical. Cells: milliseconds and NumPy's time over the column's.

Usage (from the repository root)::

    python benchmarks/threads.py                 # n = 1e6 and 4e6, 5 rounds
    python benchmarks/threads.py --sizes 4000000 --rounds 9 --json
    AUTODEV_HOST_POOL=0 python benchmarks/threads.py   # autodev without its host buffer pool

(``benchmarks/host_pool.py`` times the pool off and on side by side.)
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
from typing import Any

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "benchmarks"))

from bench_threads import SIZES, WORKLOADS, fusion, prepare, thread_limit  # noqa: E402

#: (implementation, threads, fusion)
COLUMNS = (("numpy", "1", "unfused"), ("autodev", "1", "unfused"), ("autodev", "all", "unfused"),
           ("autodev", "1", "fused"), ("autodev", "all", "fused"))
_NAMES = {col: "numpy" if col[0] == "numpy" else f"{col[2]}-{col[1]}" for col in COLUMNS}


def _bits(result: Any) -> bytes:
    parts = result if isinstance(result, tuple) else (result,)
    return b"".join(np.asarray(p).tobytes() for p in parts)


def time_row(name: str, n: int, rounds: int) -> dict[str, Any]:
    """Median seconds of each column over ``rounds`` interleaved rounds, and whether the
    results are bit-identical."""
    from autodev._calibrate.timing import measure

    calls = {col: prepare(name, col[0], n) for col in COLUMNS}
    bits = set()
    for col, call in calls.items():
        with thread_limit(col[1]), fusion(col[2]):
            bits.add(_bits(call()))
    samples: dict[tuple[str, str, str], list[float]] = {col: [] for col in COLUMNS}
    for _ in range(rounds):
        for col, call in calls.items():
            with thread_limit(col[1]), fusion(col[2]):
                samples[col].append(measure(call, warmup=0, min_repeats=1, max_repeats=3,
                                            budget=0.2).median)
    medians = {_NAMES[col]: statistics.median(s) for col, s in samples.items()}
    numpy_time = medians["numpy"]
    return {"workload": name, "n": n, "seconds": medians, "identical": len(bits) == 1,
            "speedup": {k: numpy_time / v for k, v in medians.items() if k != "numpy"}}


def main(argv: list[str] | None = None) -> int:
    """Print the table (or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS),
                        choices=list(WORKLOADS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    import autodev
    from autodev import _threads

    rows = [time_row(name, n, args.rounds) for n in args.sizes for name in args.workloads]
    keys = [_NAMES[col] for col in COLUMNS[1:]]
    gmean = {k: math.exp(statistics.fmean(math.log(r["speedup"][k]) for r in rows))
             for k in keys}
    report = {"threads": _threads.POOL.threads, "cores": os.cpu_count(),
              "floors": autodev.info()["threads"]["floors"], "rows": rows,
              "host_pool": autodev.stats()["host_pool"]["status"],
              "fusion_block": autodev.info()["fusion"]["block"],
              "fusion_threaded_block": autodev.info()["fusion"]["threaded_block"],
              "geometric_mean_speedup": gmean}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"threads: {report['threads']} (cores {report['cores']}); floors {report['floors']}; "
          f"host pool {report['host_pool']}; fused blocks of {report['fusion_block']:,} "
          f"({report['fusion_threaded_block']:,} split over threads)")
    print(f"{'workload':<15}{'n':>9}{'numpy ms':>10}"
          + "".join(f"{k:>15}" for k in keys) + "  identical")
    for r in rows:
        print(f"{r['workload']:<15}{r['n']:>9}{r['seconds']['numpy'] * 1e3:>10.1f}"
              + "".join(f"{r['seconds'][k] * 1e3:>7.1f} {r['speedup'][k]:>5.2f}x"
                        for k in keys) + f"  {r['identical']}")
    print("geometric mean NumPy/autodev: "
          + ", ".join(f"{k} {gmean[k]:.2f}x" for k in keys))
    return 0


if __name__ == "__main__":
    sys.exit(main())
