"""autodev arrays as Dask chunks: registration, the ``autodev`` array backend, NEP 13/18
deferral, and a ``distributed`` cluster of worker processes, on the CPU and with one
simulated GPU per worker.

Every result is compared with the same computation on NumPy-backed Dask (values, dtype,
shape), and every chunk must be an autodev array.
"""

from __future__ import annotations

import copy
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Callable, Iterator

import numpy
import pytest

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import autodev  # noqa: E402
from autodev._cost import fingerprint as _fingerprint, profile as _profile  # noqa: E402
from autodev.testing import simulated_gpu, to_numpy  # noqa: E402
from conftest import CUDA_REASON, HAS_CUDA  # noqa: E402

SHAPE, CHUNKS = (200, 200), 100


def autodev_backed(shape: tuple[int, ...] = SHAPE, chunks: int = CHUNKS) -> Any:
    """The issue's input, small: standard normals drawn by Dask's ``autodev`` backend."""
    with dask.config.set({"array.backend": "autodev"}):
        return da.random.default_rng(0).standard_normal(shape, chunks=chunks)


def numpy_backed(shape: tuple[int, ...] = SHAPE, chunks: int = CHUNKS) -> Any:
    with dask.config.set({"array.backend": "numpy"}):
        return da.random.default_rng(0).standard_normal(shape, chunks=chunks)


def chunks_of(result: Any, **compute: Any) -> list[Any]:
    """The computed chunks of a Dask array, in block order."""
    return list(dask.compute(*result.to_delayed().ravel().tolist(), **compute))


def assemble(chunks: list[Any], numblocks: tuple[int, ...]) -> Any:
    """The whole array (or scalar) from its chunks, as NumPy."""
    grid = numpy.empty(numblocks, dtype=object)
    for index, chunk in zip(numpy.ndindex(numblocks), chunks):
        grid[index] = to_numpy(chunk)
    return grid[()] if grid.ndim == 0 else numpy.block(grid.tolist())


def assert_like_numpy(got: Any, expected: Any) -> None:
    """Same shape, dtype and values (to rounding: chunk sums may be ordered differently)."""
    expected = numpy.asarray(expected)
    assert numpy.shape(got) == expected.shape
    assert numpy.asarray(got).dtype == expected.dtype
    numpy.testing.assert_allclose(numpy.asarray(got), expected, rtol=1e-12, atol=1e-12)


def assert_autodev_chunks(chunks: list[Any]) -> None:
    """Array chunks are autodev arrays; a 0-d result may be a NumPy scalar, as NumPy's is."""
    for chunk in chunks:
        if numpy.ndim(chunk) == 0 and isinstance(chunk, numpy.generic):
            continue
        assert type(chunk) is autodev.ndarray, type(chunk)


#: The issue's computations (mean, std, matmul, an elementwise chain, fft, percentile),
#: each keeping autodev chunks throughout.
OPS: dict[str, Callable[[Any], Any]] = {
    "mean": lambda x: x.mean(),
    "std": lambda x: x.std(axis=0),
    "matmul": lambda x: x @ x.T,
    "chain": lambda x: da.exp(x / 4) * 2 - da.sin(x) ** 2 + 1,
    "fft": lambda x: da.fft.fft(x.rechunk((CHUNKS, SHAPE[1]))),
    "percentile": lambda x: da.percentile(x.ravel(), [5.0, 50.0, 95.0]),
}
#: Dask builds these from ``scipy.linalg`` calls and NumPy structured arrays inside its
#: own tasks, whatever the chunk type; their values match, their chunks come back NumPy
#: (see docs/scale-out.md); ``to_backend("autodev")`` rewraps them without a copy.
NUMPY_INSIDE: dict[str, Callable[[Any], Any]] = {
    "solve": lambda x: da.linalg.solve(x, x[:, :3]),
    "unique": lambda x: da.unique(da.floor(x * 2)),
}


# ----------------------------------------------------------------------- a cluster

@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One cluster of worker processes: ``cpu-0``/``cpu-1`` without a GPU, and
    ``gpu-0``/``gpu-1`` each seeing one (simulated) GPU, picked by CUDA_VISIBLE_DEVICES
    as dask-cuda does, with a calibrated profile found by fingerprint."""
    cache = tmp_path_factory.mktemp("autodev-cache")
    write_simulated_profile(cache)
    common = {"AUTODEV_CACHE_DIR": str(cache), "AUTODEV_PROFILE": "", "AUTODEV_TRACE": "0"}
    workers = {
        f"cpu-{i}": _nanny({**common, "AUTODEV_SIMULATE_GPU": "0", "AUTODEV_DEVICE": "auto"})
        for i in range(2)
    }
    workers.update({
        # policy gpu: these chunks are small, and must live on the GPU to test moving them
        f"gpu-{i}": _nanny({**common, "AUTODEV_SIMULATE_GPU": "1", "AUTODEV_DEVICE": "gpu",
                            "CUDA_VISIBLE_DEVICES": str(i)})
        for i in range(2)
    })
    scheduler = {"cls": distributed.Scheduler, "options": {"dashboard": False,
                                                         "dashboard_address": ":0"}}
    with distributed.SpecCluster(workers=workers, scheduler=scheduler,
                                 silence_logs=logging.ERROR) as spec_cluster, \
            distributed.Client(spec_cluster) as client:
        client.wait_for_workers(len(workers))
        yield client


def _nanny(env: dict[str, str]) -> dict[str, Any]:
    return {"cls": distributed.Nanny, "options": {"nthreads": 1, "env": env}}


def write_simulated_profile(cache: Path) -> Path:
    """A profile keyed to this machine and the simulated GPU, where the workers look."""
    profile = copy.deepcopy(_profile.embedded_default())
    with simulated_gpu() as sim:
        profile["fingerprint"] = _fingerprint.machine(sim)
    return _profile.write(profile, cache / _profile.FILENAME)


def _workers(client: Any) -> dict[str, Any]:
    """The scheduler's workers, asked of it now: ``client.scheduler_info()`` returns a
    cache that the client's periodic update may have just replaced by one without them."""
    return dict(client.sync(client.scheduler.identity, n_workers=-1)["workers"])


def worker_names(client: Any, prefix: str) -> list[str]:
    names = [w["name"] for w in _workers(client).values()]
    return sorted(n for n in names if n.startswith(prefix))


def addresses(client: Any, prefix: str) -> list[str]:
    return sorted(a for a, w in _workers(client).items() if w["name"].startswith(prefix))


@pytest.mark.parametrize("workers", ["cpu", "gpu"])
def test_cluster_computes_like_numpy_backed_dask(cluster: Any, workers: str) -> None:
    x, xn = autodev_backed(), numpy_backed()
    allowed = worker_names(cluster, workers)
    ops = {**OPS, **NUMPY_INSIDE}
    results = {name: op(x) for name, op in ops.items()}
    blocks = {name: r.to_delayed().ravel().tolist() for name, r in results.items()}
    computed = iter(cluster.gather(cluster.compute(sum(blocks.values(), []), workers=allowed)))
    for name, r in results.items():
        chunks = [next(computed) for _ in blocks[name]]
        expected = ops[name](xn).compute(scheduler="sync")
        assert_like_numpy(assemble(chunks, r.numblocks), expected)
        if name in OPS:
            assert_autodev_chunks(chunks)
    if workers == "gpu":  # the chunks were computed on the workers' (simulated) GPUs
        calls = cluster.run(lambda: autodev.stats()["calls"], workers=addresses(cluster, "gpu"))
        assert sum(c.get("sim:0", 0) for c in calls.values()) > 0, calls


@pytest.mark.xfail(strict=True, reason="Dask runs scipy.linalg.lu/solve_triangular and "
                   "builds NumPy structured arrays in solve's and unique's own tasks")
@pytest.mark.parametrize("name", sorted(NUMPY_INSIDE))
def test_solve_and_unique_keep_autodev_chunks(name: str) -> None:
    assert_autodev_chunks(chunks_of(NUMPY_INSIDE[name](autodev_backed()), scheduler="sync"))


@pytest.mark.parametrize("name", sorted(NUMPY_INSIDE))
def test_to_backend_rewraps_solve_and_unique(name: str) -> None:
    x, xn = autodev_backed(), numpy_backed()
    result = NUMPY_INSIDE[name](x).to_backend("autodev")
    chunks = chunks_of(result, scheduler="sync")
    assert_autodev_chunks(chunks)
    assert_like_numpy(assemble(chunks, result.numblocks),
                      NUMPY_INSIDE[name](xn).compute(scheduler="sync"))


def test_each_worker_sees_its_own_gpu_and_finds_its_profile(cluster: Any) -> None:
    def seen() -> dict[str, Any]:
        info = autodev.info()
        return {"visible": os.environ.get("CUDA_VISIBLE_DEVICES"),
                "gpus": [str(d["device"]) for d in autodev.devices()
                         if d["usable"] and str(d["device"]) not in ("cpu", "auto")],
                "profile": info["profile"]}

    gpu = cluster.run(seen, workers=addresses(cluster, "gpu"))
    assert sorted(s["visible"] for s in gpu.values()) == ["0", "1"]
    for s in gpu.values():
        assert s["gpus"] == ["sim:0"]  # one GPU, index 0 of what it sees
        assert s["profile"]["source"] == "calibrated"
        assert (s["profile"]["fingerprint"], s["profile"]["gpu_fingerprint"]) == ("match",
                                                                                  "match")
    for s in cluster.run(seen, workers=addresses(cluster, "cpu")).values():
        assert s["gpus"] == []


def test_gpu_chunks_move_between_workers_with_their_placement(cluster: Any) -> None:
    gpu0, gpu1 = worker_names(cluster, "gpu")
    cpu0 = worker_names(cluster, "cpu")[0]
    made = cluster.submit(lambda: autodev.arange(12.0).reshape(3, 4) * 2, workers=[gpu0],
                          pure=False)

    def where(a: Any) -> tuple[str, str, Any]:
        return location(a), str(a.device), a.get()

    at_home = cluster.submit(where, made, workers=[gpu0], pure=False).result()
    on_gpu = cluster.submit(where, made, workers=[gpu1], pure=False).result()
    on_cpu = cluster.submit(where, made, workers=[cpu0], pure=False).result()
    assert at_home[:2] == on_gpu[:2] and on_gpu[0] == "sim:0"  # same placement, same device
    assert on_cpu[0] == "cpu"  # no GPU there: the host copy
    for *_, values in (at_home, on_gpu, on_cpu):
        numpy.testing.assert_array_equal(values, numpy.arange(12.0).reshape(3, 4) * 2)
    pinned = cluster.submit(lambda: autodev.arange(4.0).to_device("sim:0"), workers=[gpu0],
                            pure=False)
    assert cluster.submit(where, pinned, workers=[gpu1], pure=False).result()[:2] == (
        "sim:0", "sim:0")  # a pin travels with the array


def location(a: Any) -> str:
    """Where an array's data is (``x.location`` once placement and location are separate)."""
    return str(getattr(a, "location", a.device))


# ----------------------------------------------------------------------- in this process

def test_backend_creates_autodev_chunks_with_numpy_backed_values() -> None:
    makers: dict[str, Callable[[], Any]] = {
        "ones": lambda: da.ones((6, 4), chunks=3, dtype=numpy.float32),
        "zeros": lambda: da.zeros((6,), chunks=4, dtype=numpy.int16),
        "full": lambda: da.full((5, 2), 7.5, chunks=2),
        "arange": lambda: da.arange(3, 30, 2, chunks=4),
        "empty": lambda: da.empty((4, 4), chunks=2),
        "default_rng": lambda: da.random.default_rng(7).standard_normal((8, 6), chunks=3),
        "RandomState": lambda: da.random.RandomState(7).uniform(size=(8,), chunks=3),
    }
    for name, make in makers.items():
        with dask.config.set({"array.backend": "autodev"}):
            x = make()
        with dask.config.set({"array.backend": "numpy"}):
            expected = make().compute()
        assert type(x._meta) is autodev.ndarray, name
        chunks = chunks_of(x, scheduler="sync")
        assert_autodev_chunks(chunks)
        got = assemble(chunks, x.numblocks)
        assert (got.shape, got.dtype) == (expected.shape, expected.dtype), name
        if name != "empty":
            numpy.testing.assert_array_equal(got, expected, err_msg=name)


def test_to_backend_both_ways() -> None:
    x = autodev_backed((8, 8), 4)
    as_numpy = x.to_backend("numpy")
    assert type(as_numpy._meta) is numpy.ndarray
    assert all(type(c) is numpy.ndarray for c in chunks_of(as_numpy, scheduler="sync"))
    back = as_numpy.to_backend("autodev")
    assert type(back._meta) is autodev.ndarray
    assert_autodev_chunks(chunks_of(back, scheduler="sync"))
    numpy.testing.assert_array_equal(to_numpy(back.compute(scheduler="sync")),
                                     numpy_backed((8, 8), 4).compute())


@pytest.mark.parametrize("mix", ["dask+autodev", "autodev+dask", "autodev.add",
                                 "autodev.matmul", "ufunc"])
def test_mixing_gives_a_dask_array_of_autodev_chunks(mix: str) -> None:
    x, xn = autodev_backed((8, 8), 4), numpy_backed((8, 8), 4)
    a = autodev.linspace(0.0, 1.0, 8)
    n = numpy.linspace(0.0, 1.0, 8)
    forms: dict[str, Callable[[Any, Any], Any]] = {
        "dask+autodev": lambda d, v: d + v,
        "autodev+dask": lambda d, v: v * d,
        "autodev.add": lambda d, v: (autodev.add if type(v) is autodev.ndarray
                                     else numpy.add)(v, d),
        "autodev.matmul": lambda d, v: (autodev.matmul if type(v) is autodev.ndarray
                                        else numpy.matmul)(v, d),
        "ufunc": lambda d, v: numpy.hypot(v, d),
    }
    result = forms[mix](x, a)
    assert isinstance(result, da.Array), type(result)
    chunks = chunks_of(result, scheduler="sync")
    assert_autodev_chunks(chunks)
    assert_like_numpy(assemble(chunks, result.numblocks), forms[mix](xn, n).compute())


def test_autodev_functions_of_a_dask_array_are_dask_arrays() -> None:
    x = autodev_backed((8, 8), 4)
    result = autodev.mean(x, axis=0)
    assert isinstance(result, da.Array)
    assert_autodev_chunks(chunks_of(result, scheduler="sync"))


@pytest.mark.gpu
@pytest.mark.skipif(not HAS_CUDA, reason=f"CUDA: {CUDA_REASON}")
def test_cupy_backend_both_ways() -> None:
    import cupy

    x = autodev_backed((8, 8), 4)
    as_cupy = x.to_backend("cupy")
    assert all(type(c) is cupy.ndarray for c in chunks_of(as_cupy, scheduler="sync"))
    back = as_cupy.to_backend("autodev")
    chunks = chunks_of(back, scheduler="sync")
    assert_autodev_chunks(chunks)
    assert {location(c) for c in chunks} == {"cuda:0"}  # no trip through the host
    numpy.testing.assert_array_equal(assemble(chunks, back.numblocks),
                                     numpy_backed((8, 8), 4).compute())


def test_sizeof_counts_the_data() -> None:
    from dask.sizeof import sizeof

    assert sizeof(autodev.zeros((1000, 10))) == 80_000


def test_simulated_gpu_chunks_compute_here() -> None:
    x, xn = autodev_backed(), numpy_backed()
    with simulated_gpu(), autodev.policy("gpu"):
        for name, op in OPS.items():
            chunks = chunks_of(op(x), scheduler="sync")
            assert_autodev_chunks(chunks)
            assert all(location(c) == "sim:0" for c in chunks if type(c) is autodev.ndarray)
            assert_like_numpy(assemble(chunks, op(x).numblocks),
                              op(xn).compute(scheduler="sync"))


# ----------------------------------------------------------------------- registration

def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout (fail on a non-zero exit)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


IMPORT_AUTODEV_FIRST = """
    import sys
    before = list(sys.meta_path)
    import autodev
    assert sys.meta_path == before, sys.meta_path  # no import hook (issue 20)
    assert not [m for m in sys.modules if m.split(".")[0] in ("dask", "distributed")]
    import dask, dask.array as da
"""
IMPORT_DASK_FIRST = """
    import dask, dask.array as da
    import autodev
"""

#: Each a fresh interpreter's first meeting of autodev and Dask, and its chunks' types.
FIRST_MEETINGS: dict[str, str] = {
    "dask+autodev": "da.ones((8, 8), chunks=4) + autodev.linspace(0.0, 1.0, 8)",
    "autodev*dask": "autodev.linspace(0.0, 1.0, 8) * da.ones((8, 8), chunks=4)",
    "dask<autodev": "da.ones((8, 8), chunks=4) < autodev.linspace(0.0, 1.0, 8)",
    "numpy.add(dask, autodev)": "numpy.add(da.ones((8, 8), chunks=4), autodev.ones(8))",
    "concatenate": "da.concatenate([da.from_array(autodev.ones((4, 8)), chunks=2)] * 2)",
    "from_array": "da.from_array(autodev.ones((8, 8)), chunks=4)",
    "percentile": "da.percentile(da.from_array(autodev.arange(16.0), chunks=4), [50.0])",
    "tensordot": "da.tensordot(*[da.from_array(autodev.ones((8, 8)), chunks=4)] * 2, axes=1)",
}
CHECK_MEETING = """
    import numpy
    from dask.array.chunk_types import is_valid_chunk_type
    from dask.array.dispatch import percentile_lookup
    from dask.sizeof import sizeof
    from autodev._dask import register as _dask
    result = {expression}
    assert isinstance(result, da.Array), type(result)
    chunks = dask.compute(*result.to_delayed().ravel().tolist(), scheduler="sync")
    assert {{type(c) for c in chunks}} == {{autodev.ndarray}}, chunks
    assert _dask.is_registered() and is_valid_chunk_type(autodev.ndarray)
    assert percentile_lookup.dispatch(autodev.ndarray) is not None
    assert sizeof(autodev.zeros((1000, 10))) == 80_000
    print("ok")
"""


@pytest.mark.parametrize("meeting", FIRST_MEETINGS)
@pytest.mark.parametrize("first", ["autodev", "dask"])
def test_registration_in_either_import_order(first: str, meeting: str) -> None:
    """autodev first: ``import autodev`` adds no import hook and imports no Dask, and the
    first meeting registers; Dask first: ``import autodev`` registers."""
    imports = IMPORT_AUTODEV_FIRST if first == "autodev" else IMPORT_DASK_FIRST
    code = textwrap.dedent(imports) + textwrap.dedent(
        CHECK_MEETING.format(expression=FIRST_MEETINGS[meeting]))
    assert run_python(code).strip() == "ok"
