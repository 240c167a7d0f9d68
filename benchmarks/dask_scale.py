"""Scale-out report: one multi-GiB Dask array, autodev chunks against NumPy chunks.

Run ``python -m benchmarks.dask_scale`` from the source checkout. It starts one
``distributed.LocalCluster`` of worker processes, persists a ``--gib``-sized
float64 array of standard normals there (NumPy chunks), and the same data as
autodev chunks (``to_backend("autodev")`` wraps each chunk, no copy), then times
each workload on both, interleaved, on that same cluster: the ratio
autodev ÷ NumPy should be at most 1.05 on a CPU-only machine. It reports wall time
and the CPU time the workers spent; on a machine shared with other work, compare
the CPU times.

With ``--simulate`` the workers run the simulated GPU ``sim:0``
(``AUTODEV_SIMULATE_GPU=1``, ``AUTODEV_TRACE=1`` in their environment) and the
report lists the per-chunk decisions the workers' cost models made instead of
times (the simulated device's wall time means nothing).

The defaults (4 GiB, two workers of one thread) fit a 24 GiB, 2-core machine.
Nothing here imports autodev at module level: Dask's worker processes re-import
this module, and autodev must first see the environment they are given.
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import time
from collections import Counter
from typing import Any, Callable

#: Workloads over an (n, 8192) float64 array in 4096 × 4096 chunks; each ends in a
#: small result so that timing measures the cluster's work, not the gather.
WORKLOADS: dict[str, Callable[[Any], Any]] = {
    "elementwise chain, mean": lambda x: (_da().exp(x / 4) * 2 - _da().sin(x) ** 2 + 1
                                          ).mean(axis=0),
    "std per row": lambda x: x.std(axis=1),
    "matmul with a 64-row strip": lambda x: (x @ x[:64].T).sum(axis=0),
    "sum of squares": lambda x: (x * x).sum(),
}
COLUMNS, CHUNK = 8192, 4096


def _da() -> Any:
    import dask.array as da

    return da


def shape_for(gib: float) -> tuple[int, int]:
    """Rows × 8192 float64 columns for about ``gib`` GiB (whole 4096-row chunks)."""
    rows = max(int(gib * 2**30 / (COLUMNS * 8)) // CHUNK, 1) * CHUNK
    return rows, COLUMNS


def inputs(client: Any, gib: float) -> tuple[Any, Any]:
    """The persisted NumPy-chunked array and the same data in autodev chunks."""
    import dask
    from distributed import wait

    with dask.config.set({"array.backend": "numpy"}):
        x_numpy = _da().random.default_rng(0).standard_normal(shape_for(gib), chunks=CHUNK)
    x_numpy = client.persist(x_numpy)
    wait(x_numpy)
    x_autodev = client.persist(x_numpy.to_backend("autodev"))
    wait(x_autodev)
    return x_numpy, x_autodev


def _cpu_seconds() -> float:
    return time.process_time()


def _timed(client: Any, result: Any) -> tuple[float, float]:
    """Wall seconds of one compute, and the CPU seconds the workers spent on it.

    The CPU time is the figure to compare on a machine other work shares: it does not
    count the time the workers waited for a core.
    """
    before = client.run(_cpu_seconds)
    start = time.perf_counter()
    client.compute(result).result()
    wall = time.perf_counter() - start
    after = client.run(_cpu_seconds)
    return wall, sum(after[w] - before[w] for w in after)


def compare(client: Any, gib: float, repeats: int = 3) -> list[dict[str, Any]]:
    """Best-of-``repeats`` wall and worker-CPU seconds per workload on NumPy and autodev
    chunks, alternating which goes first."""
    x_numpy, x_autodev = inputs(client, gib)
    rows = []
    for name, workload in WORKLOADS.items():
        times: dict[str, list[tuple[float, float]]] = {"numpy": [], "autodev": []}
        _timed(client, workload(x_numpy))  # warm both (imports, first-call caches)
        _timed(client, workload(x_autodev))
        for rep in range(repeats):
            order = ("numpy", "autodev") if rep % 2 == 0 else ("autodev", "numpy")
            for which in order:
                x = x_numpy if which == "numpy" else x_autodev
                times[which].append(_timed(client, workload(x)))
        # best of the repeats: the run least disturbed by other work (as timeit advises);
        # the medians go into the JSON as well
        row: dict[str, Any] = {"workload": name, "repeats": repeats}
        for k in ("numpy", "autodev"):
            row[f"{k}_s"] = min(t[0] for t in times[k])
            row[f"{k}_cpu_s"] = min(t[1] for t in times[k])
            row[f"{k}_median_s"] = statistics.median(t[0] for t in times[k])
            row[f"{k}_median_cpu_s"] = statistics.median(t[1] for t in times[k])
        row["ratio"] = row["autodev_s"] / row["numpy_s"]
        row["cpu_ratio"] = row["autodev_cpu_s"] / row["numpy_cpu_s"]
        rows.append(row)
    del x_numpy, x_autodev
    return rows


# ------------------------------------------------------------------ simulated GPU decisions

_LINE = re.compile(r"^(?P<op>\S+) \[(?P<shapes>[^\]]*)\] (?P<dtype>\S+) -> (?P<device>\S+) "
                   r"\((?P<reason>[^)]*)\)")
_KEPT: list[str] = []


class _Keep(logging.Handler):
    """Keeps the worker's ``AUTODEV_TRACE`` lines (one per dispatched call) for the report."""

    def emit(self, record: logging.LogRecord) -> None:
        _KEPT.append(record.getMessage())


def _start_keeping() -> None:
    logger = logging.getLogger("autodev")
    logger.handlers = [_Keep()]  # instead of the stderr handler AUTODEV_TRACE adds
    logger.setLevel(logging.INFO)
    _KEPT.clear()


def _kept() -> list[str]:
    return list(_KEPT)


def decisions(client: Any, gib: float) -> list[dict[str, Any]]:
    """Each workload once on autodev chunks; the workers' decisions, counted per op and device."""
    _, x_autodev = inputs(client, gib)
    rows = []
    for name, workload in WORKLOADS.items():
        client.run(_start_keeping)
        client.compute(workload(x_autodev)).result()
        counts: Counter[tuple[str, str, str, str]] = Counter()
        for worker, lines in client.run(_kept).items():
            for line in lines:
                match = _LINE.match(line)
                if match:
                    counts[(match["op"], match["shapes"], match["device"], match["reason"])] += 1
        rows.append({"workload": name, "decisions": [
            {"op": op, "shapes": shapes, "device": device, "reason": reason, "calls": n}
            for (op, shapes, device, reason), n in sorted(counts.items())]})
    return rows


# ------------------------------------------------------------------ command line

def cluster(workers: int, simulate: bool) -> Any:
    """A LocalCluster of ``workers`` single-threaded worker processes."""
    from distributed import LocalCluster

    env = {"AUTODEV_SIMULATE_GPU": "1" if simulate else "0",
           "AUTODEV_TRACE": "1" if simulate else "0"}
    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                        dashboard_address=None, env=env)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.dask_scale", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--gib", type=float, default=None,
                        help="array size in GiB (default 4; 1 with --simulate)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--simulate", action="store_true",
                        help="workers run the simulated GPU; report their decisions")
    parser.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    args = parser.parse_args(argv)
    gib = args.gib if args.gib is not None else (1.0 if args.simulate else 4.0)

    from distributed import Client

    with cluster(args.workers, args.simulate) as local, Client(local) as client:
        rows = decisions(client, gib) if args.simulate else compare(client, gib, args.repeats)
    rows_, cols = shape_for(gib)
    print(f"{rows_} x {cols} float64 ({rows_ * cols * 8 / 2**30:.1f} GiB) in {CHUNK} x {CHUNK}"
          f" chunks, {args.workers} worker processes x 1 thread"
          f"{', simulated GPU' if args.simulate else ''}")
    if args.simulate:
        for row in rows:
            print(f"\n{row['workload']}:")
            for d in row["decisions"]:
                print(f"  {d['calls']:4d} x {d['op']} [{d['shapes']}] -> {d['device']} "
                      f"({d['reason']})")
    else:
        print(f"{'best of ' + str(args.repeats):32s} {'wall seconds':>27s}   "
              f"{'worker CPU seconds':>27s}")
        print(f"{'workload':32s} {'numpy':>9s} {'autodev':>9s} {'ratio':>7s}   "
              f"{'numpy':>9s} {'autodev':>9s} {'ratio':>7s}")
        for row in rows:
            print(f"{row['workload']:32s} {row['numpy_s']:9.3f} {row['autodev_s']:9.3f} "
                  f"{row['ratio']:7.3f}   {row['numpy_cpu_s']:9.3f} {row['autodev_cpu_s']:9.3f} "
                  f"{row['cpu_ratio']:7.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump({"gib": gib, "workers": args.workers, "simulate": args.simulate,
                       "rows": rows}, handle, indent=1)
    return 0


if __name__ == "__main__":
    # Run from the importable module, not ``__main__``: the functions sent to the workers
    # are then pickled by reference, and the trace lines they keep stay in one place.
    from benchmarks import dask_scale

    sys.exit(dask_scale.main())
