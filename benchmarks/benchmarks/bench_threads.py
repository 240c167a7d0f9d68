"""Large elementwise chains on the host: NumPy, and autodev with one thread or all.

Each workload is a body written against a namespace ``m`` (``numpy`` or ``autodev``)
over host arrays of n elements: option pricing, a logistic-loss chain, a 2-D stencil
with an in-place update, a masked iteration, a particle integrator, and a loss chain ending
in a sum. ``threads`` is 1
(inside ``threadpoolctl.threadpool_limits(1)``: autodev runs every call as NumPy's one
call) or ``all`` (the calls past the profile's thread floors are split over the cores).
``fusion`` is ``fused`` (autodev defers large elementwise calls and runs each chain in
one blocked pass, :mod:`autodev._fusion`) or ``unfused`` (every call at once). Each
timed call reads its result, so a deferred chain is evaluated inside it.
``benchmarks/threads.py`` times the same bodies side by side in one run.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ContextManager

import numpy as np

SIZES = (1_000_000, 4_000_000)
THREADS = ("1", "all")
IMPLEMENTATIONS = ("numpy", "autodev")
FUSION = ("fused", "unfused")


def black_scholes(m: Any, s: Any, k: Any, t: Any) -> Any:
    """European call prices (the normal CDF as a tanh approximation: ufuncs only)."""
    r, v = 0.02, 0.3
    sqrt_t = m.sqrt(t)
    d1 = (m.log(s / k) + (r + 0.5 * v * v) * t) / (v * sqrt_t)
    d2 = d1 - v * sqrt_t
    cdf1 = 0.5 * (1.0 + m.tanh(0.7978845608 * (d1 + 0.044715 * d1 * d1 * d1)))
    cdf2 = 0.5 * (1.0 + m.tanh(0.7978845608 * (d2 + 0.044715 * d2 * d2 * d2)))
    return s * cdf1 - k * m.exp(-r * t) * cdf2


def logistic_loss(m: Any, z: Any, y: Any, w: Any) -> Any:
    """Loss and gradient weights of a logistic model, margins ``z``, labels ``y``."""
    yz = y * z
    loss = m.log1p(m.exp(-yz))
    grad = -y / (1.0 + m.exp(yz))
    return loss * w, grad * w


def loss_total(m: Any, z: Any, y: Any, w: Any) -> Any:
    """The weighted logistic loss summed: a chain ending in ``sum``."""
    return m.sum(m.log1p(m.exp(-y * z)) * w)


def stencil(m: Any, u: Any, f: Any, g: Any) -> Any:
    """Five Jacobi sweeps on a square grid, each written back in place."""
    for _ in range(5):
        u[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]) \
            - 0.25 * f[1:-1, 1:-1]
    return u


def masked(m: Any, c: Any, z: Any, counts: Any) -> Any:
    """Five escape-time steps: z = z*z + c where |z| stays small, counting survivors."""
    for _ in range(5):
        alive = m.less(m.abs(z), 2.0)
        m.add(m.multiply(z, z, where=alive, out=z), c, where=alive, out=z)
        counts += alive
    return counts


def particles(m: Any, x: Any, v: Any, dt: Any) -> Any:
    """Three midpoint (RK2) steps of x'' = -x for n particles."""
    for _ in range(3):
        xm = x + 0.5 * dt * v
        vm = v - 0.5 * dt * x
        x += dt * vm
        v -= dt * xm
    return x


def _grid(n: int) -> int:
    return int(n ** 0.5)


#: name -> (body, inputs(n, rng)): host arrays made once (each timed call copies those it
#: writes, so every call starts from the same data).
WORKLOADS: dict[str, tuple[Callable[..., Any], Callable[[int, Any], tuple[Any, ...]]]] = {
    "black_scholes": (black_scholes, lambda n, rng: (
        rng.uniform(50, 150, n), rng.uniform(50, 150, n), rng.uniform(0.1, 2.0, n))),
    "logistic_loss": (logistic_loss, lambda n, rng: (
        rng.standard_normal(n), np.sign(rng.standard_normal(n)), rng.random(n))),
    "loss_total": (loss_total, lambda n, rng: (
        rng.standard_normal(n), np.sign(rng.standard_normal(n)), rng.random(n))),
    "stencil": (stencil, lambda n, rng: (
        rng.random((_grid(n), _grid(n))), rng.random((_grid(n), _grid(n))), None)),
    "masked": (masked, lambda n, rng: (
        rng.uniform(-1.5, 0.5, n) + 1j * rng.uniform(-1, 1, n), np.zeros(n, complex),
        np.zeros(n, np.int64))),
    "particles": (particles, lambda n, rng: (
        rng.standard_normal(n), rng.standard_normal(n), 0.01)),
}
#: Inputs each body writes (copied afresh for every call).
WRITES = {"stencil": (0,), "masked": (1, 2), "particles": (0, 1)}


def prepare(name: str, implementation: str, n: int, seed: int = 0
            ) -> Callable[[], Any]:
    """A call running workload ``name`` on fresh copies of its inputs, as NumPy or autodev."""
    body, make = WORKLOADS[name]
    host = make(n, np.random.default_rng(seed))
    if implementation == "numpy":
        m: Any = np
        wrap: Callable[[Any], Any] = np.array
    else:
        import autodev

        m, wrap = autodev, autodev.array
    writes = WRITES.get(name, ())
    fixed = [wrap(x) if isinstance(x, np.ndarray) and i not in writes else x
             for i, x in enumerate(host)]

    def run() -> Any:
        args = [wrap(host[i]) if i in writes else fixed[i] for i in range(len(host))]
        return _read(body(m, *args))

    return run


def _read(result: Any) -> Any:
    """``result`` with its values read (as a program reads what it computed): a deferred
    chain is evaluated inside the timed call, never left for later."""
    for part in result if isinstance(result, tuple) else (result,):
        np.asarray(part)
    return result


#: ``"fused"``: every call of this many elements or more deferred, whatever floor the
#: machine's profile holds (the workloads' arrays are larger), so that the column measures
#: the blocked pass itself; the floor in force is calibration's decision.
FUSED_FLOOR = 1 << 18


def fusion(fused: str) -> ContextManager[Any]:
    """autodev's deferred chains on (``"fused"``: from :data:`FUSED_FLOOR`) or off."""
    import autodev._fusion as F

    @contextlib.contextmanager
    def setting() -> Any:
        F.set_floor(FUSED_FLOOR if fused == "fused" else F.NEVER)
        try:
            yield
        finally:
            F.set_floor(None)

    return setting()


def thread_limit(threads: str) -> ContextManager[Any]:
    """``threadpool_limits(1)`` for ``"1"``, nothing for ``"all"``."""
    if threads == "1":
        from threadpoolctl import threadpool_limits

        return threadpool_limits(1)
    return contextlib.nullcontext()


class ThreadedChains:
    """Large elementwise chains, NumPy or autodev, one thread or all, fused or not (asv)."""

    params = [list(WORKLOADS), list(IMPLEMENTATIONS), list(THREADS), list(FUSION),
              list(SIZES)]
    param_names = ["workload", "implementation", "threads", "fusion", "n"]
    timeout = 300.0

    def setup(self, workload: str, implementation: str, threads: str, fused: str,
              n: int) -> None:
        self.fusion = self.limit = None  # (entered below; teardown exits what was)
        if implementation == "numpy" and (threads == "all" or fused == "fused"):
            raise NotImplementedError("NumPy runs every ufunc on one thread, one at a time")
        self.run = prepare(workload, implementation, n)
        self.limit = thread_limit(threads)
        self.limit.__enter__()
        self.fusion = fusion(fused) if implementation == "autodev" \
            else contextlib.nullcontext()
        self.fusion.__enter__()
        self.run()  # warm-up: profile read, pool started, pages touched

    def teardown(self, workload: str, implementation: str, threads: str, fused: str,
                 n: int) -> None:
        # (asv calls it after a setup that skipped the set too)
        for entered in (self.fusion, self.limit):
            if entered is not None:
                entered.__exit__(None, None, None)

    def time_chain(self, workload: str, implementation: str, threads: str, fused: str,
                   n: int) -> None:
        self.run()
