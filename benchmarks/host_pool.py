"""The host buffer pool alone: NumPy vs autodev with the pool off vs on, side by side.

Each workload (``a * b + c``, and the chains of ``benchmarks/benchmarks/bench_threads.py``,
Black–Scholes first) is timed in one process as NumPy, autodev with the pool off
(``autodev._host_buffers.configure(limit=0)``, what ``AUTODEV_HOST_POOL=0`` does) and
autodev with it on (its bound in force), with the one timing primitive
(``autodev._calibrate.timing.measure``). The three are interleaved round by round and each
row reports medians over the rounds, so that load from other processes slows all three
alike; the results are checked bit for bit. ``--threads 1`` runs autodev on one thread
(``threadpoolctl.threadpool_limits(1)``), so that only the pool differs from NumPy.

Usage (from the repository root)::

    python benchmarks/host_pool.py                        # n = 1e7, 7 rounds
    python benchmarks/host_pool.py --threads 1 --workloads chain black_scholes --json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "benchmarks"))

from bench_threads import WORKLOADS, prepare, thread_limit  # noqa: E402

COLUMNS = ("numpy", "pool off", "pool on")


def chain(m: Any, a: Any, b: Any, c: Any) -> Any:
    """``a * b + c``: one temporary, one result."""
    return a * b + c


def _prepare(name: str, implementation: str, n: int) -> Callable[[], Any]:
    if name != "chain":
        return prepare(name, implementation, n)
    rng = np.random.default_rng(0)
    host = [rng.standard_normal(n) for _ in range(3)]
    if implementation == "numpy":
        return lambda: chain(np, *host)
    import autodev

    arrays = [autodev.asarray(h) for h in host]
    return lambda: chain(autodev, *arrays)


def _pool(on: bool) -> contextlib.AbstractContextManager[None]:
    """The pool on (its bound as configured at import) or off, for one timed block."""
    from autodev import _host_buffers as H

    @contextlib.contextmanager
    def switched() -> Any:
        limit = H.LIMIT
        if not on:
            H.configure(limit=0)
        try:
            yield
        finally:
            H.configure(limit=limit)
    return switched()


def _bits(result: Any) -> bytes:
    parts = result if isinstance(result, tuple) else (result,)
    return b"".join(np.asarray(p).tobytes() for p in parts)


def time_row(name: str, n: int, rounds: int, threads: str) -> dict[str, Any]:
    """Median seconds of each column over ``rounds`` interleaved rounds."""
    from autodev._calibrate.timing import measure

    calls = {"numpy": _prepare(name, "numpy", n), "pool off": _prepare(name, "autodev", n),
             "pool on": _prepare(name, "autodev", n)}
    samples: dict[str, list[float]] = {col: [] for col in COLUMNS}
    bits = set()
    with thread_limit(threads):
        for col, call in calls.items():
            with _pool(col != "pool off"):
                bits.add(_bits(call()))  # (also the warm-up: pages touched, pool filled)
        for _ in range(rounds):
            for col, call in calls.items():
                with _pool(col != "pool off"):
                    # (warm-up: switching the pool off gave its blocks back)
                    samples[col].append(measure(call, warmup=1, min_repeats=1,
                                                max_repeats=3, budget=0.3).median)
    medians = {col: statistics.median(s) for col, s in samples.items()}
    return {"workload": name, "n": n, "seconds": medians, "identical": len(bits) == 1,
            "speedup": {col: medians["numpy"] / medians[col] for col in COLUMNS[1:]},
            "on_vs_off": medians["pool off"] / medians["pool on"]}


def main(argv: list[str] | None = None) -> int:
    """Print the table (or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    names = ["chain", *WORKLOADS]
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000_000])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", choices=("1", "all"), default="all")
    parser.add_argument("--workloads", nargs="+", default=["chain", "black_scholes"],
                        choices=names)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    import autodev

    pool = autodev.stats()["host_pool"]
    rows = [time_row(name, n, args.rounds, args.threads) for n in args.sizes
            for name in args.workloads]
    gmean = math.exp(statistics.fmean(math.log(r["on_vs_off"]) for r in rows))
    report = {"threads": args.threads, "pool": {k: pool[k] for k in ("status", "limit")},
              "rows": rows, "geometric_mean_on_vs_off": gmean}
    if args.json:
        print(json.dumps(report, indent=1))
        return 0
    print(f"pool: {pool['status']}, bound {pool['limit'] / 2**20:.0f} MiB; "
          f"autodev threads: {args.threads}")
    print(f"{'workload':<15}{'n':>10}{'numpy ms':>10}{'off ms':>9}{'on ms':>9}"
          f"{'NumPy/off':>10}{'NumPy/on':>9}{'off/on':>8}  identical")
    for r in rows:
        s = r["seconds"]
        print(f"{r['workload']:<15}{r['n']:>10}{s['numpy'] * 1e3:>10.1f}"
              f"{s['pool off'] * 1e3:>9.1f}{s['pool on'] * 1e3:>9.1f}"
              f"{r['speedup']['pool off']:>9.2f}x{r['speedup']['pool on']:>8.2f}x"
              f"{r['on_vs_off']:>7.2f}x  {r['identical']}")
    print(f"geometric mean, pool off / pool on: {gmean:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
