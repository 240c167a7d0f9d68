"""A pytest plugin: autodev's array-API face as one more backend in SciPy's and
scikit-learn's own array-API tests.

SciPy's installed tests run each array-API test once per backend through the ``xp``
fixture of ``scipy/conftest.py``; scikit-learn's through the (namespace, device, dtype)
combinations that ``sklearn.utils._array_api.yield_namespace_device_dtype_combinations``
yields. This plugin adds autodev to both, without copying their code:

- SciPy: ``autodev.array_api`` joins the ``xp`` fixture's parameters (id ``autodev``,
  marked ``array_api_backends``) and SciPy's list of known backends, so that its
  ``skip_xp_backends(np_only=True)`` and the like apply to it. Its ``cpu_only`` tests run
  on the (simulated) GPU too: SciPy computes them with NumPy, through ``numpy.asarray``.
- scikit-learn: the combinations gain ``("autodev.array_api", device, dtype)`` for the
  placement ``auto`` (device ``None``) and for each device autodev reports usable
  (``cpu``, ``sim:0`` or ``cuda:0``: arrays pinned there), in float64 and float32.

Only the reference backend ``array_api_strict`` and autodev are kept (``--xp-backends``
changes that). ``--outcomes FILE`` writes each test's outcome as JSON; ``python
consumer_backends.py STRICT.json AUTODEV.json...`` then fails on every test that passes
with array_api_strict and fails with autodev. Use it from the project root with::

    SCIPY_ARRAY_API=1 PYTHONPATH=tests/plugins python -m pytest -p consumer_backends \
        -m array_api_backends --pyargs scipy.fft.tests.test_basic

``.ci/consumer-suites`` runs the modules CI checks, on the host and on the simulated GPU.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, Iterator

import pytest

#: The backends' names in test ids: SciPy's ids, scikit-learn's namespaces.
STRICT, AUTODEV, FACE = "array_api_strict", "autodev", "autodev.array_api"
#: (namespace, device) as they appear in test ids -> the one token both become
_BACKEND_IN_ID = re.compile(
    r"array_api_strict-(?:CPU_DEVICE|device1)|autodev\.array_api-(?:None|[a-z]+(?::\d+)?)"
    r"|array_namespace=(?:array_api_strict|autodev\.array_api),device_name=[^,)]*"
    r"|(?<![\w.])(?:array_api_strict|autodev)(?![\w.])"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("consumer_backends", "autodev as an array-API backend")
    group.addoption("--xp-backends", default=f"{STRICT},{AUTODEV}",
                    help="backends to keep, comma-separated, among numpy, array_api_strict "
                         "and autodev (default: array_api_strict,autodev)")
    group.addoption("--outcomes", default=None, metavar="FILE",
                    help="write every test's outcome to FILE as JSON")


def _kept(config: pytest.Config) -> set[str]:
    return {name.strip() for name in config.getoption("--xp-backends").split(",")}


# ------------------------------------------------------------------ scikit-learn

def _autodev_combinations() -> Iterator[tuple[str, str | None, str]]:
    import autodev.array_api as xp

    devices: list[str | None] = [None]
    devices += [str(d) for d in xp.__array_namespace_info__().devices()]
    for device in devices:
        for dtype in ("float64", "float32"):
            yield FACE, device, dtype


def _patch_sklearn(kept: set[str]) -> None:
    """Make scikit-learn's combinations yield autodev's and the kept ones only."""
    try:
        import sklearn.utils._array_api as sk_api
        import sklearn.utils.estimator_checks as sk_checks
    except ImportError:
        return
    original = sk_api.yield_namespace_device_dtype_combinations

    def combinations(include_numpy_namespaces: bool = True) -> Iterator[Any]:
        for combination in original(include_numpy_namespaces):
            if combination[0] in kept:
                yield combination
        if AUTODEV in kept:
            yield from _autodev_combinations()

    combinations.__doc__ = original.__doc__
    sk_api.yield_namespace_device_dtype_combinations = combinations
    sk_checks.yield_namespace_device_dtype_combinations = combinations  # imported by name


def pytest_configure(config: pytest.Config) -> None:
    _patch_sklearn(_kept(config))


# ------------------------------------------------------------------ SciPy

def _scipy_params(fixturedef: Any, kept: set[str]) -> None:
    """Keep the kept backends among the ``xp`` fixture's parameters and add autodev."""
    import scipy.conftest as sc

    params = [p for p in fixturedef.params if p.id in kept]
    if AUTODEV in kept:
        import autodev.array_api as face

        params.append(pytest.param(face, id=AUTODEV, marks=pytest.mark.array_api_backends))
        # so that SciPy's np_only and eager_only markers apply to it; not its cpu_only
        # ones, even on a GPU: SciPy's NumPy-only paths take autodev arrays through
        # numpy.asarray (which CuPy refuses), and they must pass there too
        sc.xp_known_backends.add(face.__name__)
    fixturedef.params = tuple(params)
    fixturedef.ids = None  # the params carry their ids
    fixturedef._autodev_added = True


@pytest.hookimpl(tryfirst=True)
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    # before pytest's own hook turns the fixture's parameters into test ids
    for fixturedef in metafunc._arg2fixturedefs.get("xp", ()):
        if fixturedef.func.__module__ == "scipy.conftest" and fixturedef.params \
                and not getattr(fixturedef, "_autodev_added", False):
            _scipy_params(fixturedef, _kept(metafunc.config))


# ------------------------------------------------------------------ outcomes

_OUTCOMES: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" or report.outcome != "passed":
        outcome = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
        if report.when != "call" and report.outcome == "failed":
            outcome = "error"
        _OUTCOMES.setdefault(_test_id(report), outcome)


def _test_id(report: pytest.TestReport) -> str:
    """The test's id, with its module: tests collected by ``--pyargs`` from outside the
    root directory have ids that start at ``::``."""
    if not report.nodeid.startswith("::"):
        return report.nodeid
    module = report.location[0].replace("\\", "/").rpartition("site-packages/")[2]
    return module + report.nodeid


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = session.config.getoption("--outcomes")
    if path:
        with open(path, "w") as f:
            json.dump(_OUTCOMES, f, indent=0, sort_keys=True)


# ------------------------------------------------------------------ comparison

def outcome_key(nodeid: str) -> tuple[str, str]:
    """(backend, id with the backend and its device replaced by ``XP``)."""
    found = _BACKEND_IN_ID.search(nodeid)
    if found is None:
        return "", nodeid
    backend = STRICT if STRICT in found.group() else AUTODEV
    return backend, _BACKEND_IN_ID.sub("XP", nodeid, count=1)


def compare(strict_file: str, *autodev_files: str) -> list[str]:
    """Tests that pass with array_api_strict and fail with autodev, one line each."""
    passed = set()
    for nodeid, outcome in _load(strict_file).items():
        backend, key = outcome_key(nodeid)
        if backend == STRICT and outcome == "passed":
            passed.add(key)
    broken = []
    for path in autodev_files:
        for nodeid, outcome in _load(path).items():
            backend, key = outcome_key(nodeid)
            if backend == AUTODEV and outcome in ("failed", "error") and key in passed:
                broken.append(f"{path}: {nodeid}")
    return broken


def _load(path: str) -> dict[str, str]:
    with open(path) as f:
        return json.load(f)


def main(argv: list[str]) -> int:
    broken = compare(*argv)
    for line in broken:
        print("passes with array_api_strict, fails with autodev:", line)
    print(f"{len(broken)} test(s) pass with array_api_strict and fail with autodev")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
