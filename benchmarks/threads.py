"""NumPy vs autodev on large elementwise chains, one thread and all, side by side.

Every workload of ``benchmarks/benchmarks/bench_threads.py`` is timed in one run as
NumPy, autodev limited to one thread (``threadpoolctl.threadpool_limits(1)``) and
autodev with every thread it may use, with the one timing primitive
(``autodev._calibrate.timing.measure``). The three are interleaved round by round and
each row reports medians over the rounds, so that load from other processes slows all
three alike; on a shared machine the ratios are still indicative only. It also checks
that the three results are bit-identical.

Usage (from the repository root)::

    python benchmarks/threads.py                 # n = 1e6 and 4e6, 5 rounds
    python benchmarks/threads.py --sizes 4000000 --rounds 9 --json
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

from bench_threads import SIZES, WORKLOADS, prepare, thread_limit  # noqa: E402

COLUMNS = (("numpy", "1"), ("autodev", "1"), ("autodev", "all"))


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
        with thread_limit(col[1]):
            bits.add(_bits(call()))
    samples: dict[tuple[str, str], list[float]] = {col: [] for col in COLUMNS}
    for _ in range(rounds):
        for col, call in calls.items():
            with thread_limit(col[1]):
                samples[col].append(measure(call, warmup=0, min_repeats=1, max_repeats=3,
                                            budget=0.2).median)
    medians = {f"{impl}-{threads}": statistics.median(s) for (impl, threads), s in samples.items()}
    numpy_time = medians["numpy-1"]
    return {"workload": name, "n": n, "seconds": medians, "identical": len(bits) == 1,
            "speedup": {k: numpy_time / v for k, v in medians.items() if k != "numpy-1"}}


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
    gmean = {k: math.exp(statistics.fmean(math.log(r["speedup"][k]) for r in rows))
             for k in ("autodev-1", "autodev-all")}
    report = {"threads": _threads.POOL.threads, "cores": os.cpu_count(),
              "floors": autodev.info()["threads"]["floors"], "rows": rows,
              "geometric_mean_speedup": gmean}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"threads: {report['threads']} (cores {report['cores']}); floors {report['floors']}")
    print(f"{'workload':<15}{'n':>10}{'numpy ms':>10}{'1 thread':>10}{'all':>10}"
          f"{'NumPy/1':>9}{'NumPy/all':>10}  identical")
    for r in rows:
        s = r["seconds"]
        print(f"{r['workload']:<15}{r['n']:>10}{s['numpy-1'] * 1e3:>10.1f}"
              f"{s['autodev-1'] * 1e3:>10.1f}{s['autodev-all'] * 1e3:>10.1f}"
              f"{r['speedup']['autodev-1']:>8.2f}x{r['speedup']['autodev-all']:>9.2f}x  "
              f"{r['identical']}")
    print(f"geometric mean NumPy/autodev: one thread {gmean['autodev-1']:.2f}x, "
          f"all threads {gmean['autodev-all']:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
