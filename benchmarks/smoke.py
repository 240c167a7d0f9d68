"""CI smoke check of the asv suite: every benchmark imports and runs once at its smallest size.

``python benchmarks/smoke.py`` imports each module of benchmarks/benchmarks,
and for every benchmark class calls ``setup``, each ``time_*``/``peakmem_*``
method once and ``teardown``, over every implementation and start at the
smallest size and the first dtype — first on this machine as it is, then again
with the simulated GPU ``sim:0`` on, so the GPU-policy and resident-data paths
run too. A ``NotImplementedError`` from ``setup`` is asv's skip and is fine;
anything else is a broken benchmark and makes the exit status 1. Where asv is
installed, its own discovery must find the same benchmark classes.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import pkgutil
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
BENCH_PREFIXES = ("time_", "peakmem_", "mem_", "track_", "timeraw_")


def benchmark_classes() -> Iterator[tuple[str, type]]:
    """``(module.Class, class)`` for every class asv would collect."""
    package = importlib.import_module("benchmarks.benchmarks")
    for info in pkgutil.iter_modules(package.__path__, "benchmarks.benchmarks."):
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (not name.startswith("_") and inspect.isclass(obj) and not inspect.isabstract(obj)
                    and _methods(obj)):
                yield f"{info.name.rsplit('.', 1)[1]}.{name}", obj


def _methods(cls: type) -> list[str]:
    return [n for n in dir(cls) if n.startswith(BENCH_PREFIXES) and callable(getattr(cls, n))]


def smallest_params(cls: type) -> list[tuple[Any, ...]]:
    """Every implementation × start (and other string axes) at the first size and dtype."""
    params = getattr(cls, "params", None)
    if not params:
        return [()]
    if not isinstance(params[0], list):
        params = [params]
    names = getattr(cls, "param_names", [""] * len(params))
    axes = [values if name in ("implementation", "start", "op") else values[:1]
            for name, values in zip(names, params)]
    return list(itertools.product(*axes))


def run_class(label: str, cls: type) -> tuple[int, int, list[str]]:
    """Run each benchmark of ``cls`` once per parameter set; return (ran, skipped, failures)."""
    ran = skipped = 0
    failures = []
    for params in smallest_params(cls):
        bench = cls()
        try:
            if hasattr(bench, "setup"):
                bench.setup(*params)
        except NotImplementedError:
            skipped += 1
            continue
        except Exception:  # noqa: BLE001  (any other error is what this check reports)
            failures.append(f"{label}.setup{params}:\n{traceback.format_exc()}")
            continue
        try:
            for name in _methods(cls):
                getattr(bench, name)(*params)
            ran += 1
        except Exception:  # noqa: BLE001
            failures.append(f"{label}{params}:\n{traceback.format_exc()}")
        finally:
            if hasattr(bench, "teardown"):
                bench.teardown(*params)
    return ran, skipped, failures


def check_asv_discovery(expected: set[str]) -> list[str]:
    """Compare our class list with asv's own discovery (skipped if asv is absent)."""
    try:
        from asv_runner.discovery import disc_benchmarks
    except ImportError:
        print("asv not installed: its discovery was not checked (pip install 'autodev[bench]')")
        return []
    root = str(ROOT / "benchmarks" / "benchmarks")
    # asv imports the benchmark directory as the top-level package "benchmarks":
    # set ours aside while it looks, then put it back
    ours = {n: m for n, m in sys.modules.items() if n.split(".")[0] == "benchmarks"}
    for name in ours:
        del sys.modules[name]
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        found = {".".join(b.name.split(".")[:2]) for b in disc_benchmarks(root)}
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
        for name in [n for n in sys.modules if n.split(".")[0] == "benchmarks"]:
            del sys.modules[name]
        sys.modules.update(ours)
    missing = sorted(expected - found)
    extra = sorted(found - expected)
    problems = []
    if missing or extra:
        problems.append(f"asv discovery differs: missing {missing}, unexpected {extra}")
    return problems


def main() -> int:
    start = time.perf_counter()
    sys.path.insert(0, str(ROOT))
    from autodev.testing import simulated_gpu

    classes = list(benchmark_classes())
    failures: list[str] = []
    for mode in ("this machine", "simulated GPU"):
        ran = skipped = 0
        for label, cls in classes:
            if mode == "simulated GPU":
                with simulated_gpu():
                    r, s, f = run_class(label, cls)
            else:
                r, s, f = run_class(label, cls)
            ran, skipped = ran + r, skipped + s
            failures += [f"[{mode}] {x}" for x in f]
            # a class measuring real device time says so; here it must skip, with a reason
            if r == 0 and not getattr(cls, "needs_real_gpu", False):
                failures.append(f"[{mode}] {label}: every parameter set was skipped")
        print(f"{mode}: {len(classes)} classes, {ran} parameter sets ran, {skipped} skipped")
    failures += check_asv_discovery({label for label, _ in classes})
    for failure in failures:
        print(f"FAIL {failure}", file=sys.stderr)
    print(f"benchmark smoke: {'FAILED' if failures else 'ok'} "
          f"in {time.perf_counter() - start:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
