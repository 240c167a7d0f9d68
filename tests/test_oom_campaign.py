"""Fault-injection campaign: out-of-memory at every k-th device allocation.

Each realistic program (tests/programs/, plus a sparse mat-vec) runs once on the
simulated GPU to count its device calls; it then runs again with a transient
out-of-memory (one failed call) and with a persistent one (every call from the k-th
on) injected at evenly spread positions k, under policy gpu and auto. Every run must
print exactly what NumPy prints (so no write was lost), and a persistent fault must
end in counted fallbacks. The capability table's functions get the same treatment,
one call each.
"""

from __future__ import annotations

import contextlib
import io
import warnings
from pathlib import Path
from typing import Any

import numpy
import pytest
import scipy.sparse

import autodev
from autodev import _trace
from autodev._backends._sim import _VIEW_CALLS
from autodev._namespace import SPECS
from autodev.testing import simulated_gpu, to_numpy

PROGRAMS = {p.stem: p.read_text() for p in sorted((Path(__file__).parent / "programs").glob("*.py"))}
PROGRAMS["sparse_matvec"] = '''
import numpy as np
import scipy.sparse as sparse
rng = np.random.default_rng(5)
dense = rng.random((60, 60))
dense[dense < 0.9] = 0.0
A = sparse.csr_matrix(dense)
x = np.ones(60)
for _ in range(8):
    x = A @ x
    x = x / np.linalg.norm(x)
print(np.round(x[:6], 10), A.nnz)
'''
#: Positions per program and mode (spread over its device calls).
POSITIONS = 12


def run(source: str, use_autodev: bool) -> str:
    """Run a program's source in-process; return what it printed."""
    if use_autodev:
        source = source.replace("import numpy as np\n", "import autodev as np\n").replace(
            "import scipy.sparse as sparse\n", "from autodev.scipy import sparse\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(compile(source, "<program>", "exec"), {"__name__": "__main__"})
    return out.getvalue()


@pytest.fixture
def rearmed() -> Any:
    warned = _trace.STATS.warned
    yield
    _trace.STATS.warned = warned


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["gpu", "auto"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_survive_out_of_memory_anywhere(name, policy, rearmed):
    source = PROGRAMS[name]
    expected = run(source, False)
    with simulated_gpu() as sim, autodev.policy(policy):
        assert run(source, True) == expected
        total = sim.calls
        if total == 0:
            pytest.skip(f"{name} makes no device call under policy {policy}")
        positions = sorted({1 + (total - 1) * i // (POSITIONS - 1) for i in range(POSITIONS)})
        for k in positions:
            for count in (1, None):
                autodev.stats(reset=True)
                sim.inject_fault("oom", at_call=k, count=count)
                got = run(source, True)
                sim.clear_faults()
                mode = "transient" if count == 1 else "persistent"
                assert got == expected, f"{name}: {mode} out-of-memory at device call {k}"
                if count is None:
                    assert autodev.stats()["fallbacks"] > 0, f"{name}: no fallback from {k}"


def _table_calls() -> list[str]:
    """Dispatched names of the capability table that take one float matrix."""
    names = []
    a = numpy.random.default_rng(0).random((4, 4)) + 4 * numpy.eye(4)
    for name, spec in sorted(SPECS.items()):
        if spec.where != "dispatch":
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                _resolve(numpy, name)(a.copy())
            except (TypeError, ValueError, numpy.linalg.LinAlgError, IndexError):
                continue  # needs more arguments than a matrix
        names.append(name)
    return names


def _resolve(module: Any, name: str) -> Any:
    for part in name.split("."):
        module = getattr(module, part)
    return module


def _same(got: Any, expected: Any) -> bool:
    if isinstance(expected, tuple):
        return all(_same(g, e) for g, e in zip(got, expected))
    got = to_numpy(got)
    return numpy.allclose(got, expected, rtol=1e-10, atol=1e-12, equal_nan=True) \
        and numpy.shape(got) == numpy.shape(expected)


@pytest.mark.parametrize("name", _table_calls())
def test_table_ops_fall_back_under_persistent_out_of_memory(name, rearmed):
    a = numpy.random.default_rng(0).random((4, 4)) + 4 * numpy.eye(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = _resolve(numpy, name)(a.copy())
    with simulated_gpu() as sim, autodev.policy("gpu"):
        x = autodev.asarray(a.copy(), device=sim.device)
        autodev.stats(reset=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _resolve(autodev, name)(x)
        on_device = autodev.stats(reset=True)["calls"].get("sim:0", 0) > 0
        sim.inject_fault("oom", count=None)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = _resolve(autodev, name)(x)
        sim.clear_faults()
        assert _same(got, expected), name
        assert numpy.array_equal(to_numpy(x), a)  # the input is untouched
        assert x.location == sim.device
        if on_device and name not in _VIEW_CALLS:  # a view allocates nothing: no fault
            assert autodev.stats()["fallbacks"] >= 1, name
            assert sim.freed >= 1
