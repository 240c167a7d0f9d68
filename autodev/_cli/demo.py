"""Run a short workload over every family and show where each call went and why.

For each family (matmul, elementwise chain, reductions, fft2, solve, SVD,
sparse matmul) at a small and a large size, the demo prints the device autodev
chose, the predicted costs behind the choice, and the measured time next to
plain NumPy on the same data. On a machine without a GPU every call runs on
NumPy; the table then shows what autodev's wrapper costs, and the notes say
where a GPU of the default profile's class would start to win.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy

import autodev

from .._backends import Backend, active_gpu, devices_reason
from .._calibrate.timing import measure
from .._cost.model import CostModel
from .._cost.profile import load
from .._device import Device
from .._info import with_gpu_curves


@dataclass
class Case:
    """One family at one size: how to make its data and run it with either module."""

    family: str
    size: str
    make: Callable[[Any], tuple[Any, ...]]
    run: Callable[..., Any]


@dataclass
class Row:
    """What the demo measured for one case."""

    family: str
    size: str
    device: str
    why: str
    numpy_ms: float
    autodev_ms: float
    calls: int = 0
    notes: list[str] = field(default_factory=list)
    #: interquartile range / median of the noisier of the two timings
    spread: float = 0.0

    @property
    def ratio(self) -> float:
        return self.autodev_ms / self.numpy_ms if self.numpy_ms else float("nan")


def _elementwise(xp: Any, a: Any, b: Any) -> Any:
    return a * b + xp.sin(a) + xp.cos(b)


def _reductions(xp: Any, a: Any) -> Any:
    return xp.sum(a), xp.mean(a), xp.std(a)


def _spd(xp: Any, n: int) -> tuple[Any, Any]:
    x = xp.random.default_rng(1).standard_normal((n, n), dtype=numpy.float32)
    return x.T @ x + n * xp.eye(n, dtype=numpy.float32), xp.ones(n, dtype=numpy.float32)


def _square(n: int) -> Callable[[Any], tuple[Any, ...]]:
    return lambda xp: (xp.random.default_rng(0).standard_normal((n, n), dtype=numpy.float32),)


def _pair(n: int) -> Callable[[Any], tuple[Any, ...]]:
    def make(xp: Any) -> tuple[Any, ...]:
        rng = xp.random.default_rng(0)
        return (rng.standard_normal((n, n), dtype=numpy.float32),
                rng.standard_normal((n, n), dtype=numpy.float32))
    return make


def _sparse_pair(n: int) -> Callable[[Any], tuple[Any, ...]]:
    def make(xp: Any) -> tuple[Any, ...]:
        sparse = _sparse_module(xp)
        a = sparse.random(n, n, density=0.01, format="csr", dtype=numpy.float32, random_state=0)
        b = sparse.random(n, n, density=0.01, format="csr", dtype=numpy.float32, random_state=1)
        return a, b
    return make


def _sparse_module(xp: Any) -> Any:
    if xp is numpy:
        import scipy.sparse

        return scipy.sparse
    from autodev.scipy import sparse

    return sparse


def cases(quick: bool = False) -> list[Case]:
    """The demo's workload: each family at a small and (unless quick) a large size."""
    sizes = {"matmul": (64, 1024), "elementwise": (64, 2048), "reductions": (64, 2048),
             "fft2": (64, 1024), "solve": (64, 1024), "svd": (32, 256), "sparse": (100, 2048)}
    out: list[Case] = []
    for label, index in (("small", 0), ("large", 1)):
        if quick and label == "large":
            break
        n = {k: v[index] for k, v in sizes.items()}
        out += [
            Case("matmul", f"{n['matmul']}x{n['matmul']}", _pair(n["matmul"]),
                 lambda xp, a, b: a @ b),
            Case("elementwise", f"{n['elementwise']}x{n['elementwise']}",
                 _pair(n["elementwise"]), _elementwise),
            Case("reductions", f"{n['reductions']}x{n['reductions']}",
                 _square(n["reductions"]), _reductions),
            Case("fft2", f"{n['fft2']}x{n['fft2']}", _square(n["fft2"]),
                 lambda xp, a: xp.fft.fft2(a)),
            Case("solve", f"{n['solve']}x{n['solve']}",
                 lambda xp, n=n["solve"]: _spd(xp, n),  # type: ignore[misc]  # n bound now
                 lambda xp, a, b: xp.linalg.solve(a, b)),
            Case("svd", f"{n['svd']}x{n['svd']}", _square(n["svd"]),
                 lambda xp, a: xp.linalg.svd(a, full_matrices=False)),
            Case("sparse matmul", f"{n['sparse']}x{n['sparse']} 1%",
                 _sparse_pair(n["sparse"]), lambda xp, a, b: a @ b),
        ]
    return out


def _sync() -> None:
    gpu = active_gpu()
    if gpu is not None:
        gpu.synchronize()


def _decision(records: list[Any]) -> tuple[str, str, int]:
    if not records:
        return "cpu", "no GPU usable: NumPy ran every call (no cost model needed)", 0
    main = max(records, key=lambda r: max(r.costs.values(), default=0.0))
    devices = sorted({r.device for r in records})
    if main.costs:
        why = "predicted " + ", ".join(f"{d} {t * 1e3:.3g} ms" for d, t in main.costs.items())
    else:
        why = main.reason
    return "+".join(devices), why, len(records)


def run_case(case: Case, budget: float) -> Row | None:
    """Measure one case with NumPy and with autodev; None if it cannot run here."""
    try:
        host = case.make(numpy)
        data = case.make(autodev)
    except ImportError:
        return None
    with autodev.trace() as records:
        case.run(autodev, *data)
    device, why, calls = _decision(records)
    np_times: list[float] = []
    ad_times: list[float] = []
    for _ in range(2):  # alternate the two so background load hits both alike
        np_times += measure(lambda: case.run(numpy, *host), budget=budget / 2,
                            max_repeats=20).times
        ad_times += measure(lambda: case.run(autodev, *data), _sync, budget=budget / 2,
                            max_repeats=20).times
    np_ms, ad_ms = _median_ms(np_times), _median_ms(ad_times)
    row = Row(case.family, case.size, device, why, np_ms, ad_ms, calls)
    row.spread = max(_spread(np_times), _spread(ad_times))
    if row.spread > NOISY:
        row.notes.append("noisy")
    elif device == "cpu" and row.ratio < 1 / (1 + NOISY):  # the same NumPy call, faster?
        row.notes.append("noisy")
    return row


#: Relative spread (interquartile range / median) of the repeats beyond which a row's
#: times are too noisy to compare: a busy machine, not the code, made the difference.
NOISY = 0.25


def _median_ms(times: list[float]) -> float:
    return float(numpy.median(times)) * 1e3 if times else float("inf")


def _spread(times: list[float]) -> float:
    if len(times) < 4:
        return 0.0
    q25, q50, q75 = numpy.percentile(times, [25, 50, 75])
    return float((q75 - q25) / q50) if q50 > 0 else 0.0


#: family -> (label, work of size n, bytes moved to the device for size n)
_OUTLOOK: dict[str, tuple[str, Callable[[float], float], Callable[[float], float]]] = {
    "matmul": ("matmul n x n @ n x n", lambda n: n ** 3, lambda n: 8 * n * n),
    "elementwise": ("a*b + ... (n elements)", lambda n: n, lambda n: 8 * n),
    "fft": ("fft2 n x n", lambda n: n * n * numpy.log2(max(n * n, 2)), lambda n: 4 * n * n),
    "solve": ("solve n x n", lambda n: n ** 3, lambda n: 4 * n * n),
    "svd": ("svd n x n", lambda n: n ** 3, lambda n: 4 * n * n),
}


def gpu_outlook() -> list[str]:
    """Where a GPU of the profile's class would start to win (for CPU-only machines)."""
    # the profile's CPU curves against its GPU curves, or the default's where it has
    # none (a CPU-only calibration): what `autodev info` shows
    model = CostModel(with_gpu_curves(load()[0]))
    lines = []
    for family, (label, work, nbytes) in _OUTLOOK.items():
        resident = model.crossover(family, "f32", work, largest=_LARGEST)
        hosted = model.crossover(family, "f32", work, nbytes, largest=_LARGEST)
        lines.append(f"  {label:26s} GPU wins from n = {_fmt(resident)} with data on the GPU, "
                     f"n = {_fmt(hosted)} with data on the host")
    return lines


#: The largest n the outlook looks at: past it, "never".
_LARGEST = float(1 << 26)


def _fmt(value: float | None) -> str:
    return "never" if value is None else f"{math.ceil(value):,}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quick", action="store_true", help="small sizes only (a few seconds)")
    parser.add_argument("--budget", type=float, default=0.3, metavar="SECONDS",
                        help="timing budget per measurement (default 0.3)")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")


def run(args: argparse.Namespace) -> int:
    gpu = active_gpu()
    rows = []
    started = time.perf_counter()
    for case in cases(args.quick):
        row = run_case(case, args.budget)
        if row is not None:
            rows.append(row)
    if args.json:
        print(json.dumps([asdict(r) | {"ratio": r.ratio} for r in rows], indent=1))
        return 0
    _print_table(rows, gpu)
    print(f"\n({time.perf_counter() - started:.1f} s; medians of repeated runs, "
          "warm-up excluded, GPU synchronised)")
    if gpu is not None:
        print()
        print("\n".join(reuse_story(1024 if args.quick else 4096)))
    return 0


def reuse_story(n: int, steps: int = 50) -> list[str]:
    """The README's power iteration traced: where its matrix went, and why."""
    a = autodev.random.default_rng(0).standard_normal((n, n), dtype=autodev.float32)
    x = autodev.ones(n, dtype=autodev.float32)
    with autodev.trace() as records:
        for _ in range(steps):
            x = a @ x
            x = x / autodev.linalg.norm(x)
    products = [r for r in records if r.op == "matmul"]
    on_gpu = sum(r.device != "cpu" for r in products)
    lines = [f"Power iteration, {steps} x (x = a @ x; x /= norm(x)), a {n}x{n} float32 "
             f"({a.nbytes / 2**20:.0f} MiB) made on the host:"]
    moves = [r for r in records if r.op == "move" and r.shapes == ((n, n),)]
    lines += [f"  {r.line()}" for r in moves] or ["  a never moved: each product "
                                                   "stays cheaper on the CPU here"]
    lines.append(f"  {on_gpu} of {len(products)} products ran on the GPU; "
                 f"x.device is {x.device}, its data is on {x.location}")
    return lines


def _print_table(rows: list[Row], gpu: Backend | None) -> None:
    if gpu is None:
        print(f"No GPU is usable here ({devices_reason(Device('cuda', 0))}).")
        print("Every call runs on NumPy: the ratio column is the cost of autodev's wrapper.\n")
    else:
        print(f"GPU in use: {gpu.device}. Policy: {autodev.get_policy()}.\n")
    header = f"{'family':14s} {'size':16s} {'device':8s} {'numpy ms':>10s} {'autodev ms':>11s} " \
             f"{'ratio':>6s}  why"
    print(header)
    print("-" * len(header))
    for r in rows:
        mark = "*" if "noisy" in r.notes else " "
        print(f"{r.family:14s} {r.size:16s} {r.device:8s} {r.numpy_ms:10.3f} "
              f"{r.autodev_ms:11.3f} {r.ratio:6.2f}{mark} {r.why}")
    noisy = sum("noisy" in r.notes for r in rows)
    if noisy:
        print(f"\n* {noisy} row(s) varied by more than {NOISY:.0%} between repeats, or show "
              "autodev faster than the very NumPy call it makes: this machine is busy, so "
              "their ratios are noise. Rerun on an idle machine or with a larger --budget.")
    if gpu is None:
        print("\nWith a GPU like the default profile's (H100-class, through CuPy):")
        print("\n".join(gpu_outlook()))
        print("Run `autodev doctor` to see what a GPU set-up needs.")
