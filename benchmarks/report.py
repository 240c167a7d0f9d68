"""Side-by-side report: the reference set with NumPy, autodev, and each device forced.

Run ``python -m benchmarks.report`` (or ``autodev bench``) from the source
checkout. For each family and size of the reference benchmark (REFERENCE.md)
it prints NumPy's time, autodev's time (policy auto, data starting on the host),
the device autodev chose (from ``autodev.trace()``), the other device's time
(autodev with that device forced), and autodev ÷ min(CPU, GPU); then the
decision accuracy: the share of cases where the chosen device was the faster
one, and the worst miss. It writes the figures as JSON and, with matplotlib,
a PNG of time against size per family (both devices, the crossover).

On a CPU-only machine the GPU columns say why they are empty. With
``--simulate`` (or AUTODEV_SIMULATE_GPU=1) the simulated GPU ``sim:0`` stands in:
its times come from its virtual clock (the true cost curves it charges each
call and transfer), the CPU's from the wall clock.

Each case times its implementations in ``ROUNDS`` interleaved rounds; a figure is
the median of its round medians. A ratio is marked when it is not a finding:
``!`` the two columns ran the same backend calls yet timed further apart than
autodev's wrapper explains, in either direction (a busy machine); ``~`` the two
columns' round medians overlap (the run did not resolve the difference); ``=``
(``ad/min`` only) autodev and the best device's column ran the same calls, so
the ratio is the decision's cost, not a device difference.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

from .benchmarks.common import (CHAINED, FULL, REFERENCE, WORKLOADS, Workload, gpu_reason,
                                host_inputs, implementation)

QUICK_SIZES = 2  # --quick: the two smallest sizes of each family
ROUNDS = 3  # interleaved rounds per case: each figure is the median of the round medians
#: implementation -> its column in the row
_COLUMN = {"numpy": "numpy", "autodev": "autodev", "autodev-cpu": "cpu", "autodev-gpu": "gpu"}


def _measure(func: Callable[[], Any], budget: float, clock: Callable[[], float] | None = None
             ) -> float:
    from autodev._calibrate.timing import measure

    kwargs: dict[str, Any] = {"clock": clock} if clock is not None else {}
    return measure(func, warmup=1, min_repeats=3, max_repeats=30, budget=budget,
                   **kwargs).median


def _chosen(records: list[Any]) -> str:
    """The device(s) autodev ran a workload's dispatched calls on, e.g. ``cpu``, ``sim:0``."""
    counts: dict[str, int] = {}
    for r in records:
        counts[r.device] = counts.get(r.device, 0) + 1
    if not counts:
        return "cpu"  # nothing dispatched: NumPy ran it directly
    if len(counts) == 1:
        return next(iter(counts))
    return "+".join(f"{d}×{n}" for d, n in sorted(counts.items()))


def _predicted(records: list[Any]) -> dict[str, float]:
    """Sum of the cost model's predictions over the workload's calls, per device."""
    total: dict[str, float] = {}
    for r in records:
        for device, seconds in r.costs.items():
            total[device] = total.get(device, 0.0) + seconds
    return total


def run_case(workload: Workload, size: int, dtype: str, budget: float,
             sim: Any) -> dict[str, Any]:
    """Time one family at one size; every figure in seconds, None where it cannot run."""
    import autodev

    inputs = host_inputs(workload, size, dtype)
    row: dict[str, Any] = {"family": workload.name, "call": workload.label, "size": size,
                           "dtype": dtype}
    funcs: dict[str, Callable[[], Any] | None] = {}
    impls = {}
    for name in ("numpy", "autodev", "autodev-cpu", "autodev-gpu"):
        try:
            impls[name] = implementation(name, "host")
            impls[name].enter()
            try:
                funcs[name] = impls[name].bind(workload, inputs)
            finally:
                impls[name].exit()
        except NotImplementedError as err:
            funcs[name] = None
            row.setdefault("skipped", {})[name] = str(err)
    virtual = sim.clock if sim is not None else None
    with _policy(impls.get("autodev")):
        if funcs.get("autodev") is not None:
            with autodev.trace() as records:
                funcs["autodev"]()
            row["device"] = _chosen(records)
            row["predicted"] = _predicted(records)
            row["calls"] = max(1, len(records))
            row["fused"] = sum(r.op == "fused" for r in records)  # chains run as one call
            row["numpy_call"] = runs_numpy_call(records)
    # interleave the implementations over ROUNDS rounds; each figure is the median of its
    # round medians, and the rounds' spread says which differences the run resolved
    rounds: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        for name, func in funcs.items():
            if func is None:
                continue
            clock = virtual if name == "autodev-gpu" else None
            if name == "autodev" and sim is not None:
                clock = _autodev_clock(sim, row.get("device", "cpu"))
            with _policy(impls.get(name)):
                t = _measure(func, budget / (4 * ROUNDS), clock)
            rounds.setdefault(_COLUMN[name], []).append(t)
    row["rounds"] = rounds
    for column in _COLUMN.values():
        row[column] = statistics.median(rounds[column]) if column in rounds else None
    _judge(row)
    if workload.name in CHAINED:
        _best_fixed(row, inputs)
    row["flags"] = flags(row)
    return row


def _best_fixed(row: dict[str, Any], inputs: tuple[Any, ...]) -> None:
    """Best fixed placement of a chained workload: all on the CPU, or its inputs moved
    to the GPU once (priced by the profile's transfer curve) and every step there."""
    from autodev._cost.cache import cost_model

    moved = None
    if row["gpu"] is not None:
        nbytes = sum(getattr(x, "nbytes", 0) for x in inputs)
        moved = row["gpu"] + cost_model().h2d(nbytes)
    known = [t for t in (row["cpu"], moved) if t is not None]
    row["best_fixed"] = min(known) if known else None
    row["vs_fixed"] = (row["autodev"] / row["best_fixed"]
                       if row["autodev"] is not None and row["best_fixed"] else None)


def _autodev_clock(sim: Any, device: str) -> Callable[[], float] | None:
    """The clock that times autodev on the simulated GPU.

    All calls on the CPU: the wall clock. All on ``sim:0``: its virtual clock (its
    wall time is NumPy's, not a GPU's). Mixed: wall plus virtual time, an upper
    bound, since the wall clock also runs while the sim computes.
    """
    if device == "cpu":
        return None
    if device == str(sim.device):
        return sim.clock
    return lambda: time.perf_counter() + sim.clock()


@contextlib.contextmanager
def _policy(impl: Any) -> Iterator[None]:
    if impl is None:
        yield
        return
    impl.enter()
    try:
        yield
    finally:
        impl.exit()


def _judge(row: dict[str, Any]) -> None:
    """Ratio autodev ÷ min(CPU, GPU) and whether the chosen device was the faster one."""
    cpu, gpu, ad = row["cpu"], row["gpu"], row["autodev"]
    known = [t for t in (cpu, gpu) if t is not None]
    row["ratio"] = ad / min(known) if ad is not None and known and min(known) > 0 else None
    row["correct"] = None
    row["miss"] = None
    device = row.get("device")
    if cpu is None or gpu is None or device is None or "+" in device or "×" in device \
            or not cpu or not gpu:
        return
    chosen, other = (cpu, gpu) if device == "cpu" else (gpu, cpu)
    row["correct"] = chosen <= other
    row["miss"] = chosen / other  # > 1: how many times slower the chosen device was


def accuracy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Share of judged cases where the chosen device was the faster, and the worst miss;
    ``fused``: the same count over the cases autodev ran as deferred, fused chains (each
    chain placed as one call, :mod:`autodev._chains`)."""
    judged = [r for r in rows if r.get("correct") is not None]
    fused = [r for r in judged if r.get("fused")]
    counts = {"judged": len(fused), "correct": sum(r["correct"] for r in fused)}
    if not judged:
        return {"judged": 0, "correct": 0, "share": None, "worst": None, "fused": counts}
    worst = max(judged, key=lambda r: r["miss"])
    return {
        "judged": len(judged),
        "correct": sum(r["correct"] for r in judged),
        "share": sum(r["correct"] for r in judged) / len(judged),
        "worst": {k: worst[k] for k in ("family", "size", "dtype", "device", "miss")},
        "fused": counts,
    }


def sizes_for(workload: Workload, quick: bool) -> list[int]:
    """The reference sizes this run covers: under the CPU cap, the smallest two if quick."""
    sizes = [n for n in workload.sizes if FULL or n <= workload.cpu_max]
    return sizes[:QUICK_SIZES] if quick else sizes


def run(families: list[str], quick: bool = False, dtype: str = "float32",
        budget: float | None = None, sim: Any = None,
        progress: Callable[[str], None] = lambda s: None,
        saved: Callable[[dict[str, Any]], None] = lambda r: None) -> dict[str, Any]:
    """Run the report; return ``{"meta", "rows", "accuracy"}``.

    ``saved`` receives the result so far after every row, so a run stopped part-way
    (a time limit) keeps what it measured.
    """
    budget = budget if budget is not None else (0.4 if quick else 2.0)
    rows = []
    for name in families:
        workload = WORKLOADS[name]
        for size in sizes_for(workload, quick):
            progress(f"{name} n={size}")
            rows.append(run_case(workload, size, dtype, budget, sim))
            saved({"meta": meta(sim, quick, dtype), "rows": rows, "accuracy": accuracy(rows)})
    return {"meta": meta(sim, quick, dtype), "rows": rows, "accuracy": accuracy(rows)}


def meta(sim: Any, quick: bool, dtype: str) -> dict[str, Any]:
    """Where and when the figures were taken."""
    import numpy
    import scipy

    import autodev

    from .overhead import machine

    gpu = "" if sim is not None else gpu_reason()
    return {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(), "numpy": numpy.__version__, "scipy": scipy.__version__,
        "autodev": autodev.__autodev_version__, "quick": quick, "dtype": dtype,
        "data_start": "host", "gpu": "sim:0 (simulated; virtual clock)" if sim is not None
        else (gpu_device() or "none"),
        "gpu_missing_reason": gpu, "full_sizes": FULL,
    }


def gpu_device() -> str:
    """The usable GPU autodev would use, as text ('' if none)."""
    import autodev

    for entry in autodev.devices():
        if entry["device"].is_gpu and entry["usable"]:
            return str(entry["device"])
    return ""


# --------------------------------------------------------------------------- output

def _ms(seconds: float | None) -> str:
    if seconds is None:
        return "—"
    return f"{seconds * 1e3:.3f}" if seconds < 1 else f"{seconds * 1e3:.0f}"


def format_report(result: dict[str, Any]) -> str:
    """The table, the accuracy and the reason for any empty column, as text."""
    m = result["meta"]
    lines = [f"autodev side-by-side report — {m['date']}, {m['machine']['cpu']} "
             f"({m['machine']['cores']} cores), GPU: {m['gpu']}, dtype {m['dtype']}, "
             "data starting on the host; times in ms (median)",
             f"{'family':14} {'n':>6} {'numpy':>10} {'autodev':>10} {'chosen':>10} "
             f"{'other dev':>10} {'cpu':>10} {'gpu':>10} {'ad/min':>7} {'ad/np':>6} "
             f"{'ad/fixed':>8}"]
    for r in result["rows"]:
        device = r.get("device", "—")
        other = r["gpu"] if device == "cpu" else r["cpu"]
        marks = flags(r)
        ratio = (f"{r['ratio']:.2f}x" if r["ratio"] is not None else "—") + marks["ad/min"]
        if "+" in device:
            device = "mixed*"
        vs_numpy = (f"{r['autodev'] / r['numpy']:.2f}x" if r["autodev"] and r["numpy"]
                    else "—") + marks["ad/np"]
        vs_fixed = f"{r['vs_fixed']:.2f}x" if r.get("vs_fixed") else "—"
        lines.append(f"{r['family']:14} {r['size']:>6} {_ms(r['numpy']):>10} "
                     f"{_ms(r['autodev']):>10} {device:>10} {_ms(other):>10} "
                     f"{_ms(r['cpu']):>10} {_ms(r['gpu']):>10} {ratio:>7} {vs_numpy:>6} "
                     f"{vs_fixed:>8}")
    lines.extend(_notes(result))
    return "\n".join(lines)


# --------------------------------------------------------------------------- noise marks

#: Marks after a ratio (``ad/min``, ``ad/np``), explained under the table.
BUSY = "!"  # the same backend call, timed further apart than autodev's wrapper explains
WITHIN_SPREAD = "~"  # a difference the run did not resolve: the round medians overlap
SAME_CALL = "="  # ad/min: autodev and the best device's column ran the same backend calls

#: Two columns making the same backend call and timed further apart than this share
#: (beyond WRAPPER per call when autodev is the slower) were measured on a busy machine.
NOISE = 0.25
#: Seconds autodev's wrapper may add per dispatched call (generous: a few µs is typical).
WRAPPER = 20e-6
#: A ratio within this share of 1 claims no difference, so it is never marked ``~``.
CLAIM = 0.05


def runs_numpy_call(records: list[Any]) -> bool:
    """True if every traced call ran on the CPU as NumPy's own call, on one thread."""
    return all(r.device == "cpu" and getattr(r, "threads", 1) <= 1 for r in records)


def best_column(row: dict[str, Any]) -> str | None:
    """``"cpu"`` or ``"gpu"``: the faster of the measured device columns (None if neither)."""
    known = [(row[c], c) for c in ("cpu", "gpu") if row.get(c)]
    return min(known)[1] if known else None


def same_call(row: dict[str, Any], column: str) -> bool:
    """True if autodev and ``column`` ran the same backend calls.

    ``numpy``: autodev ran every call on the CPU as NumPy's own call (not split over
    threads). ``cpu``/``gpu``: autodev chose that device for every call, so the forced
    column made the very calls it made. Such columns differ only by autodev's wrapper
    and by noise.
    """
    device = row.get("device")
    if not isinstance(device, str):
        return False
    if column == "numpy":
        return device == "cpu" and bool(row.get("numpy_call", True))
    if column == "cpu":
        return device == "cpu"
    return column == "gpu" and device != "cpu" and "+" not in device and "×" not in device


def _overlap(a: list[float], b: list[float]) -> bool:
    """True if the ranges of two lists of round medians overlap."""
    return bool(a) and bool(b) and min(a) <= max(b) and min(b) <= max(a)


def _busy(autodev: float, other: float, calls: int) -> bool:
    """True if two runs of the same backend calls differ by more than the wrapper explains.

    autodev faster by more than NOISE: nothing explains it. autodev slower by more than
    NOISE and by more than WRAPPER per dispatched call: more than its wrapper costs.
    """
    if autodev * (1 + NOISE) < other:
        return True
    return autodev > other * (1 + NOISE) and autodev - other > calls * WRAPPER


def mark(row: dict[str, Any], column: str | None) -> str:
    """The mark for autodev ÷ ``column`` in ``row``: BUSY, WITHIN_SPREAD, SAME_CALL or ''."""
    ad = row.get("autodev")
    ref = row.get(column) if column else None
    if column is None or not ad or not ref:
        return ""
    same = same_call(row, column)
    if same and _busy(ad, ref, int(row.get("calls", 1))):
        return BUSY
    rounds = row.get("rounds") or {}
    if abs(ad / ref - 1) > CLAIM and _overlap(rounds.get("autodev", []), rounds.get(column, [])):
        return WITHIN_SPREAD
    if same and column != "numpy":
        return SAME_CALL
    return ""


def flags(row: dict[str, Any]) -> dict[str, str]:
    """The marks of a row's two ratio columns: ``{"ad/min": mark, "ad/np": mark}``."""
    return {"ad/min": mark(row, best_column(row)), "ad/np": mark(row, "numpy")}


def _flagged(rows: list[dict[str, Any]], sign: str) -> list[str]:
    """``family n=size`` of the rows with ``sign`` in either ratio column."""
    return [f"{r['family']} n={r['size']}" for r in rows if sign in flags(r).values()]


def _notes(result: dict[str, Any]) -> list[str]:
    m, acc = result["meta"], result["accuracy"]
    notes = []
    if any(r.get("best_fixed") is not None for r in result["rows"]):
        notes.append("ad/fixed (chained workloads): autodev ÷ the best fixed placement, all "
                     "on the CPU or the inputs moved to the GPU once (the move priced by the "
                     "profile's transfer curve). Repeats after the first find reuse-credit "
                     "mirrors already made, as a long loop would.")
    if m["gpu_missing_reason"]:
        notes.append(f"GPU columns are empty: {m['gpu_missing_reason']}.")
        notes.append("Decision accuracy: not measurable without a GPU (every call ran on "
                     "the CPU, which is the only device here).")
    elif acc["judged"]:
        w = acc["worst"]
        notes.append(f"Decision accuracy: {acc['correct']}/{acc['judged']} cases "
                     f"({acc['share']:.0%}) chose the faster device; worst miss: "
                     f"{w['family']} n={w['size']} on {w['device']}, "
                     f"{w['miss']:.2f}x the other device's time"
                     f"{' (none slower)' if w['miss'] <= 1 else ''}.")
        fused = acc.get("fused") or {"judged": 0}
        notes.append(f"Of them, run as fused chains (each placed as one call): "
                     f"{fused['correct']}/{fused['judged']} chose the faster device."
                     if fused["judged"] else
                     "No judged case ran as a fused chain (decision accuracy of fused "
                     "chains: not measured in this run).")
    for r in result["rows"]:
        if r.get("correct") is False:
            predicted = ", ".join(f"{d} {t * 1e3:.3g}" for d, t in r.get("predicted", {}).items())
            notes.append(f"miss: {r['family']} n={r['size']} ran on {r['device']}; predicted "
                         f"(ms) {predicted or '—'}; measured cpu {_ms(r['cpu'])}, "
                         f"gpu {_ms(r['gpu'])}")
    skipped = sorted({f"{r['family']}: {why}" for r in result["rows"]
                      for name, why in r.get("skipped", {}).items()
                      if name != "autodev-gpu" or not m["gpu_missing_reason"]})
    notes.extend(f"skipped {s}" for s in skipped)
    if m["gpu"].startswith("sim"):
        notes.append("Simulated GPU: 'gpu' is virtual time charged by sim:0's true cost "
                     "curves; 'cpu' and 'numpy' are wall time on this machine; a mixed "
                     "autodev run (mixed*: some calls on each device) is timed as wall + "
                     "virtual time, an upper bound.")
    notes.extend(_noise_notes(result["rows"]))
    mixed = [f"{r['family']} n={r['size']}: {r['device']}" for r in result["rows"]
             if "+" in r.get("device", "")]
    if mixed:
        notes.append("mixed* decisions: " + "; ".join(mixed))
    return notes


def _noise_notes(rows: list[dict[str, Any]]) -> list[str]:
    """One note per noise mark that appears in the table."""
    notes = []
    busy = _flagged(rows, BUSY)
    if busy:
        notes.append(f"! busy: the two columns ran the same backend calls, yet timed more than "
                     f"{1 + NOISE:.2f}x apart, beyond what autodev's wrapper adds "
                     f"({', '.join(busy)}): this machine was busy while measuring, so these "
                     "ratios are not performance; rerun when idle.")
    spread = _flagged(rows, WITHIN_SPREAD)
    if spread:
        notes.append(f"~ within spread: the {ROUNDS} interleaved round medians of the two "
                     f"columns overlap ({', '.join(spread)}): the run did not resolve the "
                     "difference; rerun with a larger --budget or on an idle machine.")
    if any(flags(r)["ad/min"] == SAME_CALL for r in rows):
        notes.append("= ad/min compares autodev with the device it chose for every call: both "
                     "columns ran the same backend calls, so the ratio is the cost of the "
                     "decision and noise, not a difference between devices.")
    return notes


def write_json(result: dict[str, Any], path: str) -> None:
    """Write the result (atomically: a temporary file, then a rename)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(result, f, indent=1, default=str)
    os.replace(tmp, path)


def write_png(result: dict[str, Any], path: str) -> str:
    """Plot time against size per family (NumPy, CPU, GPU, autodev); return a message."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ("no PNG: matplotlib is not installed "
                "(pip install 'autodev[plot]' or pip install matplotlib)")
    families = list(dict.fromkeys(r["family"] for r in result["rows"]))
    cols = 3
    rows_n = max(1, math.ceil(len(families) / cols))
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.2 * cols, 3.2 * rows_n), squeeze=False)
    for ax, family in zip(axes.flat, families):
        _plot_family(ax, [r for r in result["rows"] if r["family"] == family], family)
    for ax in list(axes.flat)[len(families):]:
        ax.set_visible(False)
    m = result["meta"]
    fig.suptitle(f"autodev vs NumPy — {m['machine']['cpu']}, GPU: {m['gpu']}, {m['date']}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return f"wrote {path}"


def _plot_family(ax: Any, rows: list[dict[str, Any]], family: str) -> None:
    sizes = [r["size"] for r in rows]
    for key, style in (("numpy", "k:"), ("cpu", "b-o"), ("gpu", "g-s"), ("autodev", "r--x")):
        pts = [(s, r[key] * 1e3) for s, r in zip(sizes, rows) if r.get(key)]
        if pts:
            ax.plot(*zip(*pts), style, label=key, markersize=4)
    crossing = _crossover(rows)
    if crossing is not None:
        ax.axvline(crossing, color="grey", alpha=0.5, label=f"crossover ≈ {crossing:.0f}")
    ax.set(xscale="log", yscale="log", title=family, xlabel="n", ylabel="ms")
    ax.legend(fontsize=7)


def _crossover(rows: list[dict[str, Any]]) -> float | None:
    """Size where the GPU overtakes the CPU (geometric midpoint of the first flip)."""
    pairs = [(r["size"], r["cpu"], r["gpu"]) for r in rows if r["cpu"] and r["gpu"]]
    for (n0, c0, g0), (n1, c1, g1) in zip(pairs, pairs[1:]):
        if (g0 >= c0) != (g1 >= c1):
            return math.sqrt(n0 * n1)
    return None


# --------------------------------------------------------------------------- command line

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared by ``python -m benchmarks.report`` and ``autodev bench``."""
    parser.add_argument("--quick", action="store_true",
                        help="two smallest sizes per family, short budgets (well under a minute)")
    parser.add_argument("--simulate", action="store_true",
                        help="use the simulated GPU sim:0 (as AUTODEV_SIMULATE_GPU=1 does)")
    parser.add_argument("--families", metavar="LIST",
                        help=f"comma-separated subset of: {', '.join(REFERENCE)}")
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--budget", type=float, metavar="S",
                        help="seconds of timing per implementation and case")
    parser.add_argument("--json", metavar="PATH", default="bench-report.json",
                        help="where to write the figures (default %(default)s)")
    parser.add_argument("--png", metavar="PATH", default="bench-report.png",
                        help="where to write the plot (default %(default)s; needs matplotlib)")


def main_with(args: argparse.Namespace) -> int:
    """Run the report for parsed arguments; print the table; write JSON and PNG."""
    families = _families(args.families)
    with _simulation(args.simulate) as sim:
        result = run(families, quick=args.quick, dtype=args.dtype, budget=args.budget,
                     sim=sim, progress=lambda s: print(f"  … {s}", file=sys.stderr, flush=True),
                     saved=lambda partial: write_json(partial, args.json))
    print(format_report(result))
    write_json(result, args.json)
    print(f"wrote {args.json}")
    print(write_png(result, args.png))
    return 0


def _families(text: str | None) -> list[str]:
    if not text:
        return list(REFERENCE) + list(CHAINED)
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    unknown = [f for f in chosen if f not in REFERENCE and f not in CHAINED]
    if unknown:
        raise SystemExit(f"--families must name families of the reference set "
                         f"({', '.join(REFERENCE)}) or chained workloads "
                         f"({', '.join(CHAINED)}). Got {', '.join(unknown)} instead.")
    return chosen


@contextlib.contextmanager
def _simulation(requested: bool) -> Iterator[Any]:
    """The simulated GPU's backend if asked for (flag or environment), else None."""
    from autodev._backends import STATE

    if STATE.sim is not None and not requested:
        yield STATE.sim  # AUTODEV_SIMULATE_GPU=1
        return
    if not requested:
        yield None
        return
    from autodev.testing import simulated_gpu

    with simulated_gpu() as sim:
        yield sim


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report",
                                     description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return main_with(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
