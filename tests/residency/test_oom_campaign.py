"""Fault-injection campaign: a fault at every device call of realistic programs.

Six kinds of program (power iteration, k-means, FFT convolution, conjugate gradients, a
scatter mat-vec and a CSR mat-vec; from tests/programs/ made small, the last written here)
run once on the simulated GPU to count their device calls (module calls, transfers,
mirrors made by reuse credit, creation). Each then runs again with a fault injected at
*every* one of those positions: out of memory once, twice, three times in a row or from
there on, and NotImplementedError once or from there on, under policy gpu and under auto
with a GPU fast enough that reuse credit moves arrays. Every run must print exactly what NumPy
prints (no write lost), and a persistent fault must end in counted fallbacks.

The other programs of tests/programs/ take faults (out of memory once and from there on,
NotImplementedError from there on) at eight spread positions each; the capability table's
functions an out-of-memory fault at one call each.
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
from autodev._residency import reuse as _reuse
from autodev.testing import gpu_costs, simulated_gpu, to_numpy

PROGRAMS = {p.stem: p.read_text() for p in sorted((Path(__file__).resolve().parents[1] / "programs").glob("*.py"))}
PROGRAMS["csr_matvec"] = '''
import numpy as np
import scipy.sparse as sparse
rng = np.random.default_rng(5)
dense = rng.random((30, 30))
dense[dense < 0.8] = 0.0
A = sparse.csr_matrix(dense)
x = np.ones(30)
for _ in range(3):
    x = A @ x
    x = x / np.linalg.norm(x)
print(np.round(x[:6], 10), A.nnz)
'''
#: The campaign's programs, each made small by these replacements (every fault position
#: is one more run of the program): iterations and sizes.
SMALL = {
    "power": {"range(50)": "range(4)", "(512, 512)": "(48, 48)", "ones(512": "ones(48"},
    "kmeans": {"range(12)": "range(2)", "(80, 2)": "(10, 2)", "[0, 100, 200]": "[0, 10, 20]",
               "it % 4": "it % 1"},
    "fft_convolution": {},
    "cg": {"range(12)": "range(3)", "< 1e-4": "< 1e3"},
    "scatter_matvec": {"range(4)": "range(2)"},
    "csr_matvec": {},
}
#: Programs in which reuse credit moves an array under policy auto on ``FAST_GPU``.
MOVED_BY_CREDIT = frozenset({"power", "cg"})
#: Faults: (kind, how many calls in a row; None: every call from there on).
FAULTS = {"oom once": ("oom", 1), "oom twice": ("oom", 2), "oom three times": ("oom", 3),
          "oom from there on": ("oom", None), "not implemented once": ("unimplemented", 1),
          "not implemented from there on": ("unimplemented", None)}
#: Positions per program and mode for the other programs (spread over its device calls).
POSITIONS = 8


def small(name: str) -> str:
    """The campaign's version of program ``name``."""
    source = PROGRAMS[name]
    for old, new in SMALL[name].items():
        assert old in source, f"tests/programs/{name}.py changed: update SMALL[{name!r}]"
        source = source.replace(old, new)
    return source


#: GPU curves under which small arrays go to the GPU where they are reused: calls cost
#: almost nothing there, transfers a microsecond plus a slow link.
FAST_GPU = gpu_costs(latency=1e-9, transfer=(1e-6, 1e9))


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


def campaign(name: str, policy: str, fault: str) -> tuple[int, list[str], dict[str, int]]:
    """Run program ``name`` with ``fault`` at each of its device calls under ``policy``
    (``auto`` on ``FAST_GPU``, where reuse credit moves arrays).

    Returns how many runs were made, what went wrong in each that did (a crash, or output
    other than NumPy's), and the baseline run's stats (reuse moves, device calls).
    """
    source = small(name)
    expected = run(source, False)
    kind, count = FAULTS[fault]
    failures = []
    with simulated_gpu(FAST_GPU if policy == "auto" else None) as sim, \
            autodev.policy(policy):
        _reuse.forget_all()
        autodev.stats(reset=True)
        start = sim.calls
        assert run(source, True) == expected
        total = sim.calls - start
        baseline = {"device calls": total, "reuse moves": autodev.stats()["reuse_moves"]}
        for k in range(1, total + 1):
            _reuse.forget_all()
            autodev.stats(reset=True)
            sim.inject_fault(kind, at_call=k, count=count)
            try:
                got = run(source, True)
            except Exception as err:  # the campaign counts crashes, whatever they are
                failures.append(f"{fault} at call {k}: {type(err).__name__}: {err}")
                continue
            finally:
                sim.clear_faults()
            if got != expected:
                failures.append(f"{fault} at call {k}: printed something else")
            elif count is None and autodev.stats()["fallbacks"] == 0:
                failures.append(f"{fault} at call {k}: no fallback counted")
    return total, failures, baseline


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("policy", ["gpu", "auto"])
@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_fault_at_any_device_call_changes_no_result(name, policy, fault, rearmed):
    runs, failures, baseline = campaign(name, policy, fault)
    assert baseline["device calls"] > 0, f"{name} made no device call under {policy}"
    if policy == "auto" and name in MOVED_BY_CREDIT:  # faults meet mirrors made by credit
        assert baseline["reuse moves"] > 0, f"{name} moved nothing by reuse credit"
    assert not failures, f"{len(failures)} of {runs} runs failed:\n" + "\n".join(failures[:10])


#: Faults at spread positions of the other programs.
SPREAD_FAULTS = ("oom once", "oom from there on", "not implemented from there on")


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["gpu", "auto"])
@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - set(SMALL)))
def test_programs_survive_faults_anywhere(name, policy, rearmed):
    source = PROGRAMS[name]
    expected = run(source, False)
    with simulated_gpu(FAST_GPU if policy == "auto" else None) as sim, autodev.policy(policy):
        start = sim.calls
        assert run(source, True) == expected
        total = sim.calls - start
        if total == 0:
            pytest.skip(f"{name} makes no device call under policy {policy}")
        positions = sorted({1 + (total - 1) * i // (POSITIONS - 1) for i in range(POSITIONS)})
        for k in positions:
            for fault in SPREAD_FAULTS:
                kind, count = FAULTS[fault]
                _reuse.forget_all()
                autodev.stats(reset=True)
                sim.inject_fault(kind, at_call=k, count=count)
                got = run(source, True)
                sim.clear_faults()
                assert got == expected, f"{name}: {fault} at device call {k}"
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
        # a view allocates nothing: no fault (diag of a matrix is diagonal's view there)
        if on_device and name not in _VIEW_CALLS and name != "diag":
            assert autodev.stats()["fallbacks"] >= 1, name
            assert sim.freed >= 1
