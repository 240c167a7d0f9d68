"""Dispatch overhead: autodev against NumPy, side by side, in one process.

Run ``python benchmarks/overhead.py`` (``--quick`` for a rough figure in a few
seconds, ``--json PATH`` to keep the numbers). Each case is timed for NumPy and
for autodev in alternating rounds (NumPy first in even rounds, autodev first in
odd ones) so that drift in clock speed or cache state falls on both alike. A
sample is one :func:`autodev._calibrate.timing.measure` call over an inner loop of the
case, minus the cost of the same loop around an empty call, divided by the loop
length. The ratio of a case is the median over rounds of autodev ÷ NumPy. The
*floor* column (``--no-floor`` leaves it out) times the least a pure-Python wrapper
with autodev's array slots can do per tiny case, the same way: what autodev's own
ratios can approach, not pass, without compiled code. With ``--modes sim`` (the default
includes it) a last section times tiny calls that stay on a simulated GPU winning every
call, against its library called directly: what autodev adds per device call.

Aims (issue 2, item 11; DESIGN.md invariant 4): on a CPU-only machine the
geometric mean of the tiny cases ≤ 1.5×, of the large cases ≤ 1.02×. The *everyday*
group (issue 20, item 1) times the small calls a program makes between its array
operations (an element of a matrix, ``a[()]``, a string element, a copy, a view, a loop
over ``.size``, ``numpy.asarray(a.flat)``): each within 2× NumPy. The *functions* group
times dispatched functions and array methods on small arrays (``concatenate``, ``where``,
``m.reshape(-1)``, ``m.sum(0)``, ...): geometric mean ≤ 1.5× without a GPU.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
from dataclasses import dataclass
from typing import Any, Callable

import numpy

AIMS = {"tiny": 1.5, "large": 1.02, "everyday": 2.0, "functions": 1.5}
#: Aims with a GPU usable (issue 13): a call may pay for a decision; on host data below
#: its family's bound it reads one table entry (the compiled paths, functions included).
AIMS_GPU = {"tiny": 2.0, "large": 1.03, "everyday": 2.0, "functions": 2.0}
#: The groups of cases, in the order they are timed and shown.
GROUPS = ("tiny", "large", "everyday", "functions")


@dataclass
class Case:
    """One timed call: ``build(xp)`` returns the no-argument callable to time."""

    name: str
    size: str
    build: Callable[[Any], Callable[[], Any]]


def _vectors(xp: Any, n: int) -> tuple[Any, Any]:
    return xp.linspace(0.0, 1.0, n), xp.linspace(1.0, 2.0, n)


def _matrices(xp: Any, n: int) -> tuple[Any, Any]:
    a = xp.reshape(xp.linspace(0.0, 1.0, n * n), (n, n))
    return a, a + 1.0


def _add(n: int) -> Callable[[Any], Callable[[], Any]]:
    def build(xp: Any) -> Callable[[], Any]:
        a, b = _vectors(xp, n)
        return lambda: a + b
    return build


def _sin(n: int) -> Callable[[Any], Callable[[], Any]]:
    def build(xp: Any) -> Callable[[], Any]:
        a, _ = _vectors(xp, n)
        sin = xp.sin
        return lambda: sin(a)
    return build


def _matmul(n: int) -> Callable[[Any], Callable[[], Any]]:
    def build(xp: Any) -> Callable[[], Any]:
        a, b = _matrices(xp, n)
        return lambda: a @ b
    return build


def _sum(n: int) -> Callable[[Any], Callable[[], Any]]:
    def build(xp: Any) -> Callable[[], Any]:
        a, _ = _vectors(xp, n)
        total = xp.sum
        return lambda: total(a)
    return build


def _index(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    return lambda: a[3]


def _slice(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    return lambda: a[2:7]


def _slice_assign(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)

    def assign() -> None:
        a[2:7] = 1.5
    return assign


def _zeros(xp: Any) -> Callable[[], Any]:
    zeros = xp.zeros
    return lambda: zeros(10)


TINY = [
    Case("a + b", "10", _add(10)),
    Case("sin(a)", "10", _sin(10)),
    Case("a @ b", "10x10", _matmul(10)),
    Case("sum(a)", "100", _sum(100)),
    Case("a[3]", "10", _index),
    Case("a[2:7]", "10", _slice),
    Case("a[2:7] = 1.5", "10", _slice_assign),
    Case("zeros(10)", "10", _zeros),
]
LARGE = [
    Case("a + b", "1e6", _add(1_000_000)),
    Case("sum(a)", "1e6", _sum(1_000_000)),
    Case("a @ b", "300x300", _matmul(300)),
]


# ---------------------------------------------------------- everyday small operations
# (issue 20, item 1): the calls a program makes between its array operations.

def _matrix_item(xp: Any) -> Callable[[], Any]:
    b = xp.reshape(xp.linspace(0.0, 1.0, 12), (3, 4))
    return lambda: b[1, 2]


def _matrix_item_assign(xp: Any) -> Callable[[], Any]:
    b = xp.reshape(xp.linspace(0.0, 1.0, 12), (3, 4))

    def assign() -> None:
        b[1, 2] = 3.0
    return assign


def _empty_tuple(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    return lambda: a[()]


def _ellipsis(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    return lambda: a[...]


def _str_assign(xp: Any) -> Callable[[], Any]:
    s = xp.array(["a", "b", "c"])

    def assign() -> None:
        s[1] = "x"
    return assign


def _str_round_trip(xp: Any) -> Callable[[], Any]:
    arr = xp.asarray("abc")

    def round_trip() -> Any:
        arr[()] = "xy"
        arr[()]
        return arr.item()
    return round_trip


def _copy(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    return a.copy


def _bool_list(xp: Any) -> Callable[[], Any]:
    values = [True, False, True, False, True]
    array = xp.array
    return lambda: array(values, dtype=bool)


def _count_nonzero(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    count = xp.count_nonzero
    return lambda: count(a)


def _view(xp: Any) -> Callable[[], Any]:
    a, _ = _vectors(xp, 10)
    uint8 = xp.uint8
    return lambda: a.view(uint8)


def _size_loop(xp: Any) -> Callable[[], Any]:
    x = xp.arange(20.0)

    def shrink() -> Any:
        y = x
        while y.size > 2:
            y = y[:-2]
        return y
    return shrink


def _flat_asarray(xp: Any) -> Callable[[], Any]:
    a = xp.arange(100_000.0)
    return lambda: numpy.asarray(a.flat)


EVERYDAY = [
    Case("b[1, 2]", "3x4", _matrix_item),
    Case("b[1, 2] = 3.0", "3x4", _matrix_item_assign),
    Case("a[()]", "10", _empty_tuple),
    Case("a[...]", "10", _ellipsis),
    Case("s[1] = 'x'", "3 str", _str_assign),
    Case("0-d str trip", "0-d", _str_round_trip),
    Case("a.copy()", "10", _copy),
    Case("array(bools)", "5", _bool_list),
    Case("count_nonzero", "10", _count_nonzero),
    Case("a.view(uint8)", "10", _view),
    Case(".size/x[:-2]", "20", _size_loop),
    Case("asarray(a.flat)", "1e5", _flat_asarray),
]


class _FloorArray:
    """The least a pure-Python wrapper can do per tiny case (the *floor*): the same slots
    as ``autodev.ndarray``, each operation one Python-level call that runs NumPy's own
    call and makes one array object: no devices, no counting, no checks but the
    operand's type in ``+``. autodev cannot
    go below it without compiled code; its figures are read against it."""

    __slots__ = ("_native", "_device", "_storage", "_mirror", "_scalar", "_pin", "__weakref__")

    def __add__(self, other: Any) -> Any:  # (b = a + 1.0 in the setup: one type check)
        return _floor_array(numpy.add(self._native, other._native if type(other) is _FloorArray
                                      else other))

    def __matmul__(self, other: Any) -> Any:
        return _floor_array(numpy.matmul(self._native, other._native))

    def __getitem__(self, key: Any) -> Any:
        result = self._native[key]
        return _floor_array(result) if type(result) is numpy.ndarray else result

    def __setitem__(self, key: Any, value: Any) -> None:
        self._native[key] = value


def _floor_array(data: Any) -> _FloorArray:
    a = _onew(_FloorArray)  # one store per slot: cheaper than a tuple unpacked into six
    a._native = data
    a._device = None
    a._storage = None
    a._mirror = None
    a._scalar = False
    a._pin = None
    return a


_onew = object.__new__


class _FloorModule:
    """The floor's namespace: what each case's ``build(xp)`` reads from ``xp``."""

    @staticmethod
    def linspace(start: float, stop: float, n: int) -> _FloorArray:
        return _floor_array(numpy.linspace(start, stop, n))

    @staticmethod
    def reshape(a: _FloorArray, shape: Any) -> _FloorArray:
        return _floor_array(numpy.reshape(a._native, shape))

    @staticmethod
    def sin(x: Any) -> Any:
        return _floor_array(numpy.sin(x._native))

    @staticmethod
    def sum(x: Any) -> Any:  # as autodev's: ufunc.reduce, not numpy.sum's Python layer
        return numpy.add.reduce(x._native, None)

    @staticmethod
    def zeros(shape: Any) -> _FloorArray:
        return _floor_array(numpy.zeros(shape))


FLOOR = _FloorModule()


def _inner_loops(func: Callable[[], Any], target: float) -> int:
    """Calls per sample so that one sample lasts about ``target`` seconds."""
    from autodev._calibrate.timing import measure

    once = measure(func, warmup=3, min_repeats=5, max_repeats=20, budget=0.01).median
    return max(1, min(100_000, int(target / max(once, 1e-9))))


def _looped(func: Callable[[], Any], loops: int) -> Callable[[], None]:
    steps = range(loops)

    def run() -> None:
        for _ in steps:
            func()
    return run


def _sample(func: Callable[[], Any], loops: int, baseline: float, budget: float) -> float:
    """Seconds per call of ``func`` net of the loop and call overhead ``baseline``."""
    from autodev._calibrate.timing import measure

    t = measure(_looped(func, loops), warmup=1, min_repeats=3, max_repeats=15, budget=budget)
    return max(t.median / loops - baseline, 1e-12)


def time_case(case: Case, np_mod: Any, ad_mod: Any, rounds: int, target: float,
              baseline: float) -> dict[str, Any]:
    """Time one case for NumPy and autodev in ``rounds`` alternating rounds."""
    funcs = {"numpy": case.build(np_mod), "autodev": case.build(ad_mod)}
    loops = _inner_loops(funcs["numpy"], target)
    budget = target * 4
    samples: dict[str, list[float]] = {"numpy": [], "autodev": []}
    for r in range(rounds):
        order = ("numpy", "autodev") if r % 2 == 0 else ("autodev", "numpy")
        for impl in order:
            samples[impl].append(_sample(funcs[impl], loops, baseline, budget))
    ratios = [a / n for a, n in zip(samples["autodev"], samples["numpy"])]
    return {
        "case": case.name, "size": case.size, "loops": loops,
        "numpy_s": statistics.median(samples["numpy"]),
        "autodev_s": statistics.median(samples["autodev"]),
        "ratio": statistics.median(ratios),
        # with the loop's own cost left in, as a plain timeit loop would report it
        "raw_ratio": statistics.median((a + baseline) / (n + baseline) for a, n in
                                       zip(samples["autodev"], samples["numpy"])),
    }


def on_device(case: Case, gpu: Any, ad_mod: Any, rounds: int, target: float,
              baseline: float) -> dict[str, Any]:
    """``case`` in autodev against the same program written for the GPU's own library
    (``gpu.xp``: CuPy, or the simulator's imitation of it), each call followed by a device
    synchronize in both; ``ran_on``: where autodev ran the timed calls. Where autodev ran
    them on that GPU, the ratio is autodev's own overhead over the library that did the
    work; on a simulated GPU that library is NumPy plus the simulator's bookkeeping, so
    this, not the ratio to NumPy, is the decision's cost there."""
    sync = gpu.synchronize

    def synced(xp: Any) -> Callable[[], Any]:
        func = case.build(xp)
        return lambda: (func(), sync())

    synced_case = Case(case.name, case.size, synced)
    warm = case.build(ad_mod)
    for _ in range(10):  # as the timed loop will: reuse credit has mirrored what it will
        warm()
    before = dict(ad_mod.stats()["calls"])
    warm()
    after = ad_mod.stats()["calls"]
    ran = [d for d in after if after[d] != before.get(d, 0)]
    row = time_case(synced_case, gpu.xp, ad_mod, rounds, target, baseline)
    row["ran_on"] = ",".join(ran) or "-"
    return row


def _called(name: str, matrices: bool = False) -> Callable[[Any], Callable[[], Any]]:
    def build(xp: Any) -> Callable[[], Any]:
        a, b = _matrices(xp, 10) if matrices else _vectors(xp, 10)
        func = getattr(xp, name)
        return lambda: func(a, b)
    return build


#: The calls timed as they stay on the device (``--modes sim``): see :func:`resident`.
#: Functions, not operators, on both sides: the simulator's own operators skip the
#: bookkeeping its functions do (CuPy's cost the same either way).
RESIDENT = [Case("add(a, b)", "10", _called("add")), Case("sin(a)", "10", _sin(10)),
            Case("matmul(a, b)", "10x10", _called("matmul", True)),
            Case("sum(a)", "100", _sum(100))]


def resident(rounds: int, target: float, baseline: float) -> list[dict[str, Any]]:
    """Tiny calls on arrays living on a simulated GPU that wins every call
    (``gpu_costs(latency=1e-9)``), autodev against the simulator's library called directly:
    the difference is what autodev adds to a call that stays on the device (deciding,
    moving nothing, running, wrapping). On a real GPU a CuPy call costs a few
    microseconds, so this is the figure to keep small there."""
    import autodev
    from autodev.testing import gpu_costs, simulated_gpu

    with simulated_gpu(gpu_costs(latency=1e-9)) as gpu:
        return [on_device(c, gpu, autodev, rounds, target, baseline) for c in RESIDENT]


def _empty_call_cost(target: float) -> float:
    """Seconds per iteration of the inner loop around a call that does nothing."""
    from autodev._calibrate.timing import measure

    loops = 100_000
    t = measure(_looped(lambda: None, loops), warmup=1, min_repeats=5, max_repeats=15,
                budget=target * 5)
    return t.median / loops


def geomean(values: list[float]) -> float:
    """Geometric mean of positive numbers."""
    return math.exp(sum(math.log(v) for v in values) / len(values))


def _function(name: str) -> Callable[[Any], Callable[[], Any]]:
    def make(xp: Any) -> Callable[[], Any]:
        a, b = _vectors(xp, 100)
        mask = a > 0.5
        args = {"concatenate": ([a, b],), "where": (mask, a, b), "clip": (a, 0.2, 0.8),
                "dot": (a, b)}[name]
        f = getattr(xp, name)
        return lambda: f(*args)
    return make


def _method(name: str, *args: Any) -> Callable[[Any], Callable[[], Any]]:
    def make(xp: Any) -> Callable[[], Any]:
        m = xp.reshape(xp.linspace(0.0, 1.0, 1000), (100, 10))
        bound = getattr(m, name)
        return lambda: bound(*args)
    return make


#: Dispatched functions and array methods on small arrays, with positional arguments.
FUNCTIONS = [
    Case("concatenate([a, b])", "100", _function("concatenate")),
    Case("where(m, a, b)", "100", _function("where")),
    Case("clip(a, 0.2, 0.8)", "100", _function("clip")),
    Case("dot(a, b)", "100", _function("dot")),
    Case("m.reshape(-1)", "100x10", _method("reshape", -1)),
    Case("m.transpose()", "100x10", _method("transpose")),
    Case("m.sum(0)", "100x10", _method("sum", 0)),
    Case("m.argmax()", "100x10", _method("argmax")),
]


def run(rounds: int = 15, target: float = 0.002, floor: bool = False) -> dict[str, Any]:
    """Time every case; return ``{"machine", "baseline_s", "tiny", "large", "geomean"}``
    (and ``"floor"``, the floor's tiny cases against NumPy, with ``floor=True``)."""
    import autodev

    _warm_up(autodev)
    baseline = _empty_call_cost(target)
    out: dict[str, Any] = {"machine": machine(), "baseline_s": baseline}
    for group, cases in (("tiny", TINY), ("large", LARGE), ("everyday", EVERYDAY),
                         ("functions", FUNCTIONS)):
        out[group] = [time_case(c, numpy, autodev, rounds, max(target, 0.02) if group ==
                                "large" else target, baseline) for c in cases]
    from autodev._backends import active_gpu
    gpu = active_gpu()
    if gpu is not None:  # the large calls against the GPU's own library, called directly
        out["large_direct"] = [on_device(c, gpu, autodev, rounds, max(target, 0.02), baseline)
                               for c in LARGE]
    if floor:
        out["floor"] = [time_case(c, numpy, FLOOR, rounds, target, baseline) for c in TINY]
        out["floor_geomean"] = geomean([r["ratio"] for r in out["floor"]])
    out["geomean"] = {g: geomean([r["ratio"] for r in out[g]]) for g in GROUPS}
    out["geomean_raw"] = {g: geomean([r["raw_ratio"] for r in out[g]]) for g in GROUPS}
    out["aims"] = AIMS
    return out


def _warm_up(autodev: Any) -> None:
    """Make autodev probe its devices and resolve lazy names before timing."""
    x = autodev.zeros(4)
    _ = autodev.sin(x) + x
    devices = [str(d["device"]) for d in autodev.devices() if d["usable"] and d["device"].is_gpu]
    if devices:
        print(f"note: GPU devices are usable here ({', '.join(devices)}); the aims are "
              "stated for a CPU-only machine.", file=sys.stderr)


def machine() -> dict[str, Any]:
    """A short description of where the figures were taken."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(),
            "numpy": numpy.__version__, "platform": platform.platform()}


def format_table(result: dict[str, Any]) -> str:
    """The figures as a fixed-width table, one line per case, with the geometric means."""
    lines = [f"{'group':8} {'case':15} {'size':8} {'numpy':>10} {'autodev':>10} {'ratio':>7} "
             f"{'raw':>6}"]
    for group in GROUPS:
        for r in result[group]:
            lines.append(f"{group:8} {r['case']:15} {r['size']:8} {_fmt(r['numpy_s']):>10} "
                         f"{_fmt(r['autodev_s']):>10} {r['ratio']:6.2f}x {r['raw_ratio']:5.2f}x")
    for group in GROUPS:
        g, aim = result["geomean"][group], AIMS[group]
        verdict = "meets" if g <= aim else "MISSES"
        lines.append(f"geometric mean, {group}: {g:.3f}x ({verdict} the aim <= {aim}x "
                     f"without a GPU); raw (loop cost left in): "
                     f"{result['geomean_raw'][group]:.3f}x")
    m = result["machine"]
    lines.append(f"machine: {m['cpu']}, {m['cores']} cores, Python {m['python']}, "
                 f"NumPy {m['numpy']}; empty-loop cost subtracted: "
                 f"{result['baseline_s'] * 1e9:.0f} ns/call")
    return "\n".join(lines)


def _fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.3f} us"
    return f"{seconds * 1e3:.3f} ms"


def run_modes(rounds: int, target: float, modes: list[str], floor: bool = False
              ) -> dict[str, Any]:
    """Run the cases in each mode: ``here`` (this machine as it is: no GPU, or its real
    GPU) and ``sim`` (a simulated GPU usable, so every call pays for a decision); the
    first mode times the floor too if asked."""
    from autodev._backends import active_gpu
    from autodev.testing import simulated_gpu

    out: dict[str, Any] = {}
    for mode in modes:
        with_floor = floor and mode == modes[0]
        if mode == "sim":
            with simulated_gpu():
                out["sim"] = run(rounds=rounds, target=target, floor=with_floor)
            out["sim"]["resident"] = resident(rounds, target, out["sim"]["baseline_s"])
        else:
            out["here"] = run(rounds=rounds, target=target, floor=with_floor)
            gpu = active_gpu()
            out["here"]["gpu"] = str(gpu.device) if gpu is not None else None
    return out


def format_side_by_side(results: dict[str, Any]) -> str:
    """One line per case: NumPy, then autodev ÷ NumPy in each mode (and the floor's, if
    timed), and the geomeans."""
    modes = list(results)
    floor = results[modes[0]].get("floor")
    names = {"here": "here", "sim": "sim GPU"}
    if "here" in results:
        names["here"] = f"GPU {results['here']['gpu']}" if results["here"].get("gpu") \
            else "no GPU"
    lines = [f"{'group':8} {'case':15} {'size':8} {'numpy':>10} " +
             " ".join(f"{names[m]:>18}" for m in modes) + (f" {'floor':>18}" if floor else "")]
    first = results[modes[0]]
    for group in GROUPS:
        for i, r in enumerate(first[group]):
            cells = " ".join(f"{_fmt(results[m][group][i]['autodev_s']):>10} "
                             f"{results[m][group][i]['ratio']:6.2f}x" for m in modes)
            if floor and group == "tiny":
                f = floor[i]
                cells += f" {_fmt(f['autodev_s']):>10} {f['ratio']:6.2f}x"
            lines.append(f"{group:8} {r['case']:15} {r['size']:8} {_fmt(r['numpy_s']):>10} "
                         f"{cells}")
    for group in GROUPS:
        cells = []
        for m in modes:
            aim = (AIMS_GPU if m == "sim" or results[m].get("gpu") else AIMS).get(group)
            g = results[m]["geomean"][group]
            cells.append(f"{names[m]} {g:.3f}x (no aim)" if aim is None else
                         f"{names[m]} {g:.3f}x ({'meets' if g <= aim else 'MISSES'} <= {aim}x)")
        if floor and group == "tiny":
            cells.append(f"floor {results[modes[0]]['floor_geomean']:.3f}x (pure Python "
                         "cannot go below)")
        lines.append(f"geometric mean, {group}: " + "; ".join(cells))
    return "\n".join(lines)


def format_direct(results: dict[str, Any]) -> str:
    """With a GPU usable, the large calls against its own library called directly."""
    lines = []
    for mode, result in results.items():
        direct = result.get("large_direct")
        if not direct:
            continue
        gpu = "simulated GPU" if mode == "sim" else f"GPU {result.get('gpu')}"
        lines.append(f"== {gpu}: large calls against its library called directly (each call "
                     "synchronized); where autodev ran them there, autodev's own overhead")
        lines.extend(f"large  {r['case']:14} {r['size']:8} ran on {r['ran_on']:8} direct "
                     f"{_fmt(r['numpy_s']):>11}  autodev {_fmt(r['autodev_s']):>11} "
                     f"{r['ratio']:6.2f}x" for r in direct)
        there = [r["ratio"] for r in direct if r["ran_on"] not in ("cpu", "-")]
        if there:
            lines.append(f"geometric mean of the calls autodev ran there: {geomean(there):.3f}x")
    return "\n".join(lines)


def format_resident(rows: list[dict[str, Any]]) -> str:
    """The :func:`resident` figures: per call, what autodev adds on the device."""
    lines = ["== simulated GPU winning every call: tiny calls on its arrays against its "
             "library called directly; extra: what autodev adds per call"]
    lines.extend(f"tiny   {r['case']:14} {r['size']:8} ran on {r['ran_on']:8} direct "
                 f"{_fmt(r['numpy_s']):>11}  autodev {_fmt(r['autodev_s']):>11}  extra "
                 f"{_fmt(r['autodev_s'] - r['numpy_s']):>10}" for r in rows)
    extra = statistics.median(r["autodev_s"] - r["numpy_s"] for r in rows)
    lines.append(f"median extra per call: {_fmt(extra)}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter rounds")
    parser.add_argument("--rounds", type=int, default=None, help="alternating rounds per case")
    parser.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--modes", default="here,sim", metavar="LIST",
                        help="here (this machine as it is), sim (a simulated GPU usable), or "
                             "both side by side (default)")
    parser.add_argument("--floor", action=argparse.BooleanOptionalAction, default=True,
                        help="also time the floor: the least a pure-Python wrapper can do "
                             "per tiny case (one call, NumPy's call, one array object); "
                             "on by default")
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a geometric mean misses its aim")
    args = parser.parse_args(argv)
    rounds = args.rounds or (5 if args.quick else 15)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or set(modes) - {"here", "sim"}:
        parser.error(f"--modes must list here and/or sim. Got {args.modes!r} instead.")
    results = run_modes(rounds, 0.001 if args.quick else 0.002, modes, args.floor)
    for mode, result in results.items():
        print(f"== {mode}")
        print(format_table(result))
    if len(results) > 1 or args.floor:
        print("== side by side")
        print(format_side_by_side(results))
    if any(r.get("large_direct") for r in results.values()):
        print(format_direct(results))
    if "sim" in results:
        print(format_resident(results["sim"]["resident"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    missed = any(r["geomean"][g] > (AIMS_GPU if m == "sim" or r.get("gpu") else AIMS).get(
        g, float("inf")) for m, r in results.items() for g in AIMS)
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    sys.exit(main())
