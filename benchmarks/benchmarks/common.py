"""What the asv suite and the side-by-side report share: implementations and workloads.

An *implementation* is one way of running a workload: plain NumPy/SciPy,
autodev under each policy, or CuPy (data resident, or copied from and to the
host on every call). A *workload* is host data made once plus a body written
against a namespace ``m`` (``m.xp``, ``m.fft``, ``m.linalg``, ``m.sparse``), so
one body serves every implementation.

*Start* says where the data is when the timed call begins: ``"host"`` (NumPy
arrays, as a NumPy user's are: autodev wraps them afresh on each call, so no
device copy survives from one call to the next) or ``"resident"`` (already on
the device the implementation computes on). The timed callable synchronises
the device before it returns.

An implementation or combination that cannot run here raises
``NotImplementedError`` with the reason, which asv reports as a skip.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

IMPLEMENTATIONS: tuple[str, ...] = (
    "numpy", "autodev", "autodev-cpu", "autodev-gpu", "cupy", "cupy-transfer",
)
STARTS: tuple[str, ...] = ("host", "resident")
DTYPES: tuple[str, ...] = ("float32", "float64")
#: AUTODEV_BENCH_FULL=1 lifts the CPU size caps (runs take minutes per case).
FULL = os.environ.get("AUTODEV_BENCH_FULL", "").strip().lower() in ("1", "true", "yes")
_POLICY = {"autodev": "auto", "autodev-cpu": "cpu", "autodev-gpu": "gpu"}


# --------------------------------------------------------------------------- workloads

@dataclass(frozen=True)
class Workload:
    """A benchmark family at a size: host inputs from ``make``, the call in ``body``.

    ``sizes`` are the reference sizes (REFERENCE.md); a CPU run above
    ``cpu_max`` is skipped unless AUTODEV_BENCH_FULL=1, because one call would
    take seconds to minutes on a small machine. ``needs`` names the SciPy-like
    module the body uses (``fft``, ``linalg``, ``sparse``), if any.
    """

    name: str
    sizes: tuple[int, ...]
    cpu_max: int
    make: Callable[[int, np.dtype, np.random.Generator], tuple[Any, ...]]
    body: Callable[..., Any]
    needs: str | None = None
    sparse_inputs: tuple[int, ...] = ()
    label: str = ""


def _square(n: int, dtype: np.dtype, rng: np.random.Generator, count: int = 1
            ) -> tuple[np.ndarray, ...]:
    return tuple(rng.standard_normal((n, n)).astype(dtype) for _ in range(count))


def _spd(n: int, dtype: np.dtype, rng: np.random.Generator) -> tuple[np.ndarray, ...]:
    x = rng.standard_normal((n, n))
    a = (x.T @ x / n + np.eye(n)).astype(dtype)  # XᵀX + I, scaled to stay well-conditioned
    return a, rng.standard_normal(n).astype(dtype)


def _csr_pair(n: int, dtype: np.dtype, rng: np.random.Generator) -> tuple[Any, ...]:
    import scipy.sparse

    make = lambda: scipy.sparse.random(n, n, density=0.01, format="csr", dtype=dtype, rng=rng)  # noqa: E731
    return make(), make()


def _csr_chain(n: int, dtype: np.dtype, rng: np.random.Generator) -> tuple[Any, ...]:
    import scipy.sparse

    # ten nonzeros per row, each below 0.1: the iterates shrink but never overflow
    a = scipy.sparse.random(n, n, density=10 / n, format="csr", dtype=dtype, rng=rng) * 0.1
    return a.tocsr(), rng.random(n).astype(dtype)


def _vector_pair(n: int, dtype: np.dtype, rng: np.random.Generator) -> tuple[Any, ...]:
    return rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)


def _power_iteration(m: Any, a: Any, x: Any) -> Any:
    norm = m.xp.linalg.norm
    for _ in range(50):
        x = a @ x
        x = x / norm(x)
    return x


def _elementwise_chain(m: Any, x: Any) -> Any:
    sin = m.xp.sin
    for _ in range(20):
        x = x * 0.5 + sin(x) * 0.25
    return x


def _sparse_matvec_loop(m: Any, a: Any, x: Any) -> Any:
    for _ in range(50):
        x = a @ x
    return x


REFERENCE = "matmul elementwise sum mean std fft2 solve sparse_matmul svd".split()
CHAINED = "power_iteration elementwise_chain sparse_matvec_loop".split()
TINY = "tiny_add tiny_sin tiny_sum tiny_matmul".split()

WORKLOADS: dict[str, Workload] = {w.name: w for w in [
    Workload("matmul", (100, 500, 1000, 5000, 10000), 1000,
             lambda n, d, r: _square(n, d, r, 2), lambda m, a, b: a @ b, label="a @ b"),
    Workload("elementwise", (100, 500, 1000, 5000, 10000), 5000,
             lambda n, d, r: _square(n, d, r, 2),
             lambda m, a, b: a * b + m.xp.sin(a) + m.xp.cos(b), label="a*b + sin(a) + cos(b)"),
    Workload("sum", (100, 500, 1000, 5000, 10000), 5000, _square,
             lambda m, a: m.xp.sum(a), label="sum(a)"),
    Workload("mean", (100, 500, 1000, 5000, 10000), 5000, _square,
             lambda m, a: m.xp.mean(a), label="mean(a)"),
    Workload("std", (100, 500, 1000, 5000, 10000), 5000, _square,
             lambda m, a: m.xp.std(a), label="std(a)"),
    Workload("fft2", (100, 500, 512, 1024, 2048), 2048, _square,
             lambda m, a: m.fft.fft2(a), needs="fft", label="scipy.fft.fft2(a)"),
    Workload("solve", (100, 500, 512, 1024, 2048), 2048, _spd,
             lambda m, a, b: m.linalg.solve(a, b, assume_a="pos"), needs="linalg",
             label="scipy.linalg.solve(A, b, assume_a='pos')"),
    Workload("sparse_matmul", (100, 500, 512, 1024, 2048), 2048, _csr_pair,
             lambda m, a, b: a @ b, needs="sparse", sparse_inputs=(0, 1),
             label="CSR @ CSR, density 0.01"),
    Workload("svd", (100, 500, 512, 1024, 2048), 1024, _square,
             lambda m, a: m.linalg.svd(a, full_matrices=False), needs="linalg",
             label="scipy.linalg.svd(a, full_matrices=False)"),
    Workload("power_iteration", (1024, 4096), 4096, lambda n, d, r: (
             _square(n, d, r)[0], np.ones(n, dtype=d)), _power_iteration,
             label="50 x (x = a @ x; x /= norm(x))"),
    Workload("elementwise_chain", (10_000, 1_000_000, 10_000_000), 1_000_000,
             lambda n, d, r: (r.standard_normal(n).astype(d),), _elementwise_chain,
             label="20 x (x = x*0.5 + sin(x)*0.25)"),
    Workload("sparse_matvec_loop", (10_000, 100_000, 1_000_000), 100_000, _csr_chain,
             _sparse_matvec_loop, needs="sparse", sparse_inputs=(0,),
             label="50 x (x = A @ x), CSR, 10 nonzeros per row"),
    Workload("tiny_add", (10,), 10, _vector_pair, lambda m, a, b: a + b, label="a + b"),
    Workload("tiny_sin", (10,), 10, lambda n, d, r: _vector_pair(n, d, r)[:1],
             lambda m, a: m.xp.sin(a), label="sin(a)"),
    Workload("tiny_sum", (100,), 100, lambda n, d, r: _vector_pair(n, d, r)[:1],
             lambda m, a: m.xp.sum(a), label="sum(a)"),
    Workload("tiny_matmul", (10,), 10, lambda n, d, r: _square(n, d, r, 2),
             lambda m, a, b: a @ b, label="a @ b (10x10)"),
]}


def host_inputs(workload: Workload, size: int, dtype: str, seed: int = 0) -> tuple[Any, ...]:
    """The workload's inputs as NumPy arrays / SciPy CSR matrices (same for every implementation)."""
    return workload.make(size, np.dtype(dtype), np.random.default_rng(seed))


# --------------------------------------------------------------------------- implementations

class Implementation:
    """One way to run a workload: its namespace, how data gets there, how to wait.

    Build with :func:`implementation`, which raises ``NotImplementedError``
    when the implementation or the start cannot run here.
    """

    def __init__(self, name: str, start: str, namespace: Any,
                 load: Callable[[Any, bool], Any], sync: Callable[[], None],
                 finish: Callable[[Any], Any] = lambda r: r,
                 on_cpu: bool = True) -> None:
        self.name = name
        self.start = start
        self.m = namespace
        self._load = load
        self.sync = sync
        self._finish = finish
        self.on_cpu = on_cpu
        self._token: Any = None

    def enter(self) -> None:
        """Apply the implementation's autodev policy (until :meth:`exit`)."""
        policy = _POLICY.get(self.name)
        if policy is not None:
            import autodev

            self._token = autodev.set_policy(policy)

    def exit(self) -> None:
        """Undo :meth:`enter`."""
        if self._token is not None:
            import autodev

            autodev.reset_policy(self._token)
            self._token = None

    def bind(self, workload: Workload, inputs: Sequence[Any]) -> Callable[[], Any]:
        """The timed callable: the body on this implementation's data, synchronised."""
        if workload.needs and getattr(self.m, workload.needs) is None:
            raise NotImplementedError(
                f"{self.name} has no {workload.needs} module here: "
                f"{self.m.missing.get(workload.needs, 'not available')}")
        body, m, sync, finish = workload.body, self.m, self.sync, self._finish
        sparse = [i in workload.sparse_inputs for i in range(len(inputs))]
        if self.start == "resident":
            data = [self._load(x, s) for x, s in zip(inputs, sparse)]
            sync()

            def resident() -> Any:
                result = body(m, *data)
                sync()
                return result
            return resident
        load = self._load
        pairs = list(zip(inputs, sparse))
        if workload.name in CHAINED and self.name.startswith("autodev"):
            # a loop's fixed data, made the autodev way (an array autodev owns, which reuse
            # credit may mirror); kept across repeats, as a long loop keeps it
            data = [load(x, s) if s else m.xp.array(x) for x, s in pairs]

            def chained() -> Any:
                result = finish(body(m, *data))
                sync()
                return result
            return chained

        def from_host() -> Any:
            result = finish(body(m, *[load(x, s) for x, s in pairs]))
            sync()
            return result
        return from_host


def implementation(name: str, start: str = "host") -> Implementation:
    """Build implementation ``name`` for data starting at ``start``, or raise NotImplementedError."""
    if name not in IMPLEMENTATIONS:
        raise ValueError(f"implementation must be one of {', '.join(IMPLEMENTATIONS)}. "
                         f"Got {name!r} instead.")
    if start not in STARTS:
        raise ValueError(f"start must be one of {', '.join(STARTS)}. Got {start!r} instead.")
    if name == "numpy":
        return _numpy_impl(start)
    if name.startswith("autodev"):
        return _autodev_impl(name, start)
    return _cupy_impl(name, start)


def _numpy_impl(start: str) -> Implementation:
    if start == "resident":
        raise NotImplementedError("NumPy data always lives on the host: see start='host'")
    import scipy.fft
    import scipy.linalg
    import scipy.sparse

    m = SimpleNamespace(xp=np, fft=scipy.fft, linalg=scipy.linalg, sparse=scipy.sparse,
                        missing={})
    return Implementation("numpy", start, m, lambda x, sparse: x, lambda: None)


def gpu_reason() -> str:
    """Why autodev has no usable GPU here ('' when it has one)."""
    import autodev

    for entry in autodev.devices():
        if entry["device"].is_gpu and entry["usable"]:
            return ""
    reasons = [f"{e['device']}: {e['reason']}" for e in autodev.devices()
               if e["device"].is_gpu]
    return "; ".join(reasons) or "no GPU device is known"


def _autodev_gpu() -> Any:
    from autodev._backends import active_gpu

    return active_gpu()


def _autodev_scipy(missing: dict[str, str]) -> dict[str, Any]:
    import importlib

    modules: dict[str, Any] = {}
    for sub in ("fft", "linalg", "sparse"):
        try:
            modules[sub] = importlib.import_module(f"autodev.scipy.{sub}")
        except ImportError as err:
            modules[sub] = None
            missing[sub] = f"autodev.scipy.{sub} cannot be imported ({err})"
    return modules


def _autodev_impl(name: str, start: str) -> Implementation:
    import autodev

    if name == "autodev-cpu" and start == "resident":
        raise NotImplementedError("autodev-cpu data lives on the host: see start='host'")
    gpu = _autodev_gpu()
    if gpu is None and (name == "autodev-gpu" or start == "resident"):
        raise NotImplementedError(f"{name} with data {start} needs a GPU: {gpu_reason()}")
    missing: dict[str, str] = {}
    m = SimpleNamespace(xp=autodev, missing=missing, **_autodev_scipy(missing))
    target = gpu.device if (gpu is not None and start == "resident") else None

    def load(x: Any, sparse: bool) -> Any:
        if sparse:
            return _autodev_sparse(m.sparse, x, target)
        if target is None:
            return autodev.asarray(x)  # a fresh wrapper: no device copy survives the call
        return autodev.array(x).to_device(target)

    sync = gpu.synchronize if gpu is not None else (lambda: None)
    # the simulated GPU computes with NumPy on this CPU: its runs are CPU-sized too
    on_cpu = gpu is None or name == "autodev-cpu" or gpu.device.kind == "sim"
    return Implementation(name, start, m, load, sync, on_cpu=on_cpu)


def _autodev_sparse(module: Any, matrix: Any, target: Any) -> Any:
    if module is None:
        raise NotImplementedError("autodev.scipy.sparse is not available")
    make = getattr(module, "csr_matrix", None) or getattr(module, "csr_array", None)
    if make is None:
        raise NotImplementedError("autodev.scipy.sparse has no csr_matrix/csr_array")
    result = make(matrix)
    if target is not None:
        move = getattr(result, "to_device", None)
        if move is None:
            raise NotImplementedError("autodev sparse matrices have no to_device()")
        result = move(target)
    return result


def _cupy_impl(name: str, start: str) -> Implementation:
    if name == "cupy" and start == "host":
        raise NotImplementedError("cupy means data resident on the GPU; see cupy-transfer")
    if name == "cupy-transfer" and start == "resident":
        raise NotImplementedError("cupy-transfer copies host data each call; see cupy")
    try:
        import cupy
    except ImportError as err:
        raise NotImplementedError(f"CuPy is not installed ({err})") from None
    try:
        usable = cupy.is_available()
    except Exception as err:  # noqa: BLE001  (a broken driver is a reason to skip, stated)
        raise NotImplementedError(f"CuPy cannot reach a GPU: {err}") from None
    if not usable:
        raise NotImplementedError("CuPy is installed but no CUDA GPU is usable")
    import cupyx.scipy.fft
    import cupyx.scipy.linalg
    import cupyx.scipy.sparse

    # cupyx.scipy.linalg has neither solve nor svd: the SciPy calls the workloads make are
    # written with the CuPy functions a CuPy user would reach for.
    def solve(a: Any, b: Any, assume_a: str = "gen") -> Any:
        if assume_a != "pos":
            return cupy.linalg.solve(a, b)
        low = cupy.linalg.cholesky(a)
        y = cupyx.scipy.linalg.solve_triangular(low, b, lower=True)
        return cupyx.scipy.linalg.solve_triangular(low, y, lower=True, trans="T")

    linalg = SimpleNamespace(solve=solve, svd=cupy.linalg.svd)
    m = SimpleNamespace(xp=cupy, fft=cupyx.scipy.fft, linalg=linalg,
                        sparse=cupyx.scipy.sparse, missing={})

    def load(x: Any, sparse: bool) -> Any:
        if sparse:
            return cupyx.scipy.sparse.csr_matrix(x)
        return cupy.asarray(x)

    def finish(result: Any) -> Any:
        if isinstance(result, tuple):
            return tuple(finish(r) for r in result)
        get = getattr(result, "get", None)
        return get() if get is not None else result

    sync = cupy.cuda.get_current_stream().synchronize
    return Implementation(name, start, m, load, sync,
                          finish=finish if name == "cupy-transfer" else (lambda r: r),
                          on_cpu=False)


def check_size(impl: Implementation, workload: Workload, size: int) -> None:
    """Raise NotImplementedError for a CPU run above the workload's CPU size cap."""
    if impl.on_cpu and size > workload.cpu_max and not FULL:
        raise NotImplementedError(
            f"{workload.name} at n={size} on the CPU is above the cap n={workload.cpu_max} "
            "(too slow for a routine run); set AUTODEV_BENCH_FULL=1 to include it")


# --------------------------------------------------------------------------- asv base class

class WorkloadBenchmark(ABC):
    """asv base: a workload over implementation × size × dtype × start.

    A subclass names its workload (``workload = "matmul"``) and defines its
    ``time_*`` / ``peakmem_*`` methods as ``self.call()``. The base is abstract
    so that asv does not collect it.
    """

    param_names = ["implementation", "size", "dtype", "start"]
    timeout = 600.0

    @property
    @abstractmethod
    def workload(self) -> str:
        """The name of the workload in :data:`WORKLOADS`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("workload")
        if isinstance(name, str):
            w = WORKLOADS[name]
            cls.params = [list(IMPLEMENTATIONS), list(w.sizes), list(DTYPES), list(STARTS)]

    def setup(self, implementation_name: str, size: int, dtype: str, start: str) -> None:
        workload = WORKLOADS[self.workload]
        impl = implementation(implementation_name, start)
        check_size(impl, workload, size)
        bind_call(self, impl, workload, host_inputs(workload, size, dtype))

    def teardown(self, *params: Any) -> None:
        release_call(self)


def bind_call(bench: Any, impl: Implementation, workload: Workload, inputs: Any) -> None:
    """Enter ``impl``, set ``bench.call`` to the bound workload and warm it up once
    (plans, lazy imports, kernels stay outside the timing); undo on failure."""
    impl.enter()
    try:
        bench.call = impl.bind(workload, inputs)
        bench.call()
    except BaseException:
        impl.exit()
        raise
    bench._impl = impl


def release_call(bench: Any) -> None:
    """Leave the implementation :func:`bind_call` entered, if any."""
    impl = getattr(bench, "_impl", None)
    if impl is not None:
        impl.exit()
        bench._impl = None
