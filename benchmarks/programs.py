"""NumPy vs autodev on whole everyday programs at everyday sizes.

The other scripts time one call at a time (``overhead.py``) or large elementwise chains
(``threads.py``). These are whole programs of the kind people write with NumPy, each at a
size where most arrays hold thousands to a few million elements: k-means (20,000 points,
8 dimensions, 8 clusters), logistic regression by gradient descent (20,000 x 20), a small
two-layer network trained by hand (2,000 x 64 -> 128 -> 10), a Monte Carlo estimate in
batches of 100,000, feature scaling and a softmax (100,000 x 50), a ReLU layer's forward
and backward pass (1,000 x 2,000: ``where`` and a masked assignment), nearest centres by
broadcasting (50,000 points, 32 centres), and a loop of tiny calls on 10 elements. Each program is written once
against a namespace ``np`` and run with NumPy's and with autodev's, on inputs made from
the same NumPy arrays (autodev's copies of them); the two are timed in alternating rounds (NumPy first in even
rounds) and each row reports the median over the rounds, with the ratio autodev / NumPy
(below 1: faster than NumPy) and whether the results are bit-identical.

Each row also says where autodev ran the program's calls in one run (calls per device,
host-device copies). On a GPU machine that is the placement the times reflect; with the
simulated GPU (``AUTODEV_SIMULATE_GPU=1``) it shows the placement only: the calls placed
there take the simulator's time, NumPy's own plus its bookkeeping, not a GPU's.

Usage (from the repository root)::

    python benchmarks/programs.py                      # this machine, as it is
    python benchmarks/programs.py --rounds 15 --json programs.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy


def kmeans(np: Any, x: Any, k: int = 8, iterations: int = 15) -> Any:
    """Lloyd's algorithm: distances by broadcasting, nearest centre, centres as means."""
    centres = x[:k].copy()
    for _ in range(iterations):
        distances = ((x[:, None, :] - centres[None, :, :]) ** 2).sum(axis=2)
        nearest = distances.argmin(axis=1)
        for j in range(k):
            members = nearest == j
            if members.any():
                centres[j] = x[members].mean(axis=0)
    return centres


def logistic_regression(np: Any, x: Any, y: Any, iterations: int = 50,
                        rate: float = 0.1) -> Any:
    """Batch gradient descent on the logistic loss."""
    w = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(x @ w)))
        w -= rate * (x.T @ (p - y)) / len(y)
    return w


def two_layer_network(np: Any, x: Any, y: Any, w1: Any, w2: Any, iterations: int = 30,
                      rate: float = 0.01) -> Any:
    """A ReLU network trained on the squared error, its gradients written out by hand."""
    w1, w2 = w1.copy(), w2.copy()
    for _ in range(iterations):
        hidden = np.maximum(x @ w1, 0.0)
        error = hidden @ w2 - y
        grad2 = hidden.T @ error
        back = error @ w2.T
        back[hidden <= 0] = 0.0
        w1 -= rate * (x.T @ back) / len(x)
        w2 -= rate * grad2 / len(x)
    return w2


def monte_carlo(np: Any, samples: Any) -> float:
    """pi from points in the unit square, one batch of ``samples`` at a time."""
    inside = 0
    for batch in samples:
        inside += int(np.count_nonzero(batch[0] ** 2 + batch[1] ** 2 <= 1.0))
    return 4.0 * inside / (samples.shape[0] * samples.shape[2])


def feature_scaling(np: Any, x: Any) -> Any:
    """Standardise the columns of a tall matrix, then a softmax along its rows."""
    z = (x - x.mean(axis=0)) / x.std(axis=0)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def relu_layer(np: Any, z: Any, upstream: Any) -> Any:
    """A ReLU forward and backward over a batch: a selection and a masked assignment."""
    hidden = np.where(z > 0.0, z, 0.0)
    grad = upstream * 1.0
    grad[z <= 0.0] = 0.0
    return hidden.sum(axis=1) + grad.sum(axis=0).mean()


def nearest_centres(np: Any, points: Any, centres: Any) -> Any:
    """Each point's distance to its nearest centre, by broadcasting."""
    differences = points[:, None, :] - centres[None, :, :]
    return np.sqrt((differences * differences).sum(axis=2).min(axis=1))


def tiny_calls(np: Any, v: Any, iterations: int = 2000) -> float:
    """A loop of calls on 10 elements, each result read back into Python."""
    total = 0.0
    for i in range(iterations):
        a = v * 1.5 + 0.5
        total += float(a.sum()) + float(np.sqrt(a)[i % 10])
    return total


def inputs() -> dict[str, tuple[Callable[..., Any], tuple[numpy.ndarray, ...]]]:
    """Each program with its inputs (NumPy arrays, the same for both namespaces)."""
    rng = numpy.random.default_rng(0)
    return {
        "kmeans": (kmeans, (rng.random((20_000, 8)),)),
        "logistic_regression": (logistic_regression, (
            rng.random((20_000, 20)), (rng.random(20_000) > 0.5).astype(float))),
        "two_layer_network": (two_layer_network, (
            rng.random((2_000, 64)), rng.random((2_000, 10)), rng.random((64, 128)) * 0.1,
            rng.random((128, 10)) * 0.1)),
        "monte_carlo": (monte_carlo, (rng.random((20, 2, 100_000)),)),
        "feature_scaling": (feature_scaling, (rng.standard_normal((100_000, 50)),)),
        "relu_layer": (relu_layer, (rng.standard_normal((1_000, 2_000)),
                                    rng.standard_normal((1_000, 2_000)))),
        "nearest_centres": (nearest_centres, (rng.standard_normal((50_000, 4)),
                                              rng.standard_normal((32, 4)))),
        "tiny_calls": (tiny_calls, (rng.random(10),)),
    }


def _bits(result: Any) -> bytes:
    return numpy.asarray(result).tobytes()


def time_row(name: str, program: Callable[..., Any], data: tuple[numpy.ndarray, ...],
             rounds: int) -> dict[str, Any]:
    """Median seconds of NumPy and autodev over ``rounds`` alternating rounds."""
    import autodev

    # (autodev's own copies, as a program written for ``import autodev as np`` makes them:
    # an asarray view of a NumPy array the caller holds could be written behind autodev's
    # back, so autodev never keeps a GPU copy of it between calls)
    arguments = {"numpy": data, "autodev": tuple(autodev.array(d) for d in data)}
    namespaces = {"numpy": numpy, "autodev": autodev}
    results = {k: program(namespaces[k], *arguments[k]) for k in namespaces}  # (warm-up)
    autodev.stats(reset=True)
    program(autodev, *arguments["autodev"])
    stats = autodev.stats()
    placement = {"calls": dict(stats["calls"]), "h2d": stats["h2d_count"],
                 "d2h": stats["d2h_count"]}
    samples: dict[str, list[float]] = {"numpy": [], "autodev": []}
    for r in range(rounds):
        for k in (("numpy", "autodev") if r % 2 == 0 else ("autodev", "numpy")):
            start = time.perf_counter()
            program(namespaces[k], *arguments[k])
            samples[k].append(time.perf_counter() - start)
    seconds = {k: statistics.median(v) for k, v in samples.items()}
    ratios = [a / n for a, n in zip(samples["autodev"], samples["numpy"])]
    return {"program": name, "seconds": seconds, "ratio": statistics.median(ratios),
            "identical": _bits(results["numpy"]) == _bits(results["autodev"]),
            "placement": placement}


def main(argv: list[str] | None = None) -> int:
    """Print the table (or ``--json``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--programs", nargs="+", default=list(inputs()),
                        choices=list(inputs()))
    parser.add_argument("--json", metavar="PATH", help="also write the rows here")
    args = parser.parse_args(argv)
    import autodev

    programs = inputs()
    rows = [time_row(name, *programs[name], args.rounds) for name in args.programs]
    gmean = math.exp(statistics.fmean(math.log(r["ratio"]) for r in rows))
    gpu = autodev.info()["gpu"]  # (after the first call: the devices are settled)
    report = {"cores": os.cpu_count(), "gpu": str(gpu), "rows": rows,
              "geometric_mean_ratio": gmean}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=1)
    print(f"{'program':<22}{'numpy ms':>10}{'autodev ms':>12}{'ratio':>8}  identical  placement")
    for r in rows:
        where = r["placement"]
        print(f"{r['program']:<22}{r['seconds']['numpy'] * 1e3:>10.2f}"
              f"{r['seconds']['autodev'] * 1e3:>12.2f}{r['ratio']:>7.3f}x  {r['identical']!s:<9}"
              f"  {where['calls']}, {where['h2d']} h2d, {where['d2h']} d2h")
    print(f"geometric mean autodev/NumPy: {gmean:.3f}x (cores {report['cores']}, "
          f"GPU {report['gpu']})")
    return 0 if all(r["identical"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
