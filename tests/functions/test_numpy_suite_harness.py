"""The rewrite that runs NumPy's own test modules under ``import autodev as np``
(tests/numpy_suite/autodev_numpy_suite.py, used by .ci/numpy-suite)."""

from __future__ import annotations

import ast
import os
import sys

import numpy
import numpy.testing

import autodev

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "numpy_suite"))
import autodev_numpy_suite as suite  # noqa: E402


def _run(source: str) -> dict:
    namespace: dict = {}
    exec(compile(suite.rewrite(ast.parse(source)), "<test module>", "exec"), namespace)
    return namespace


def test_public_names_and_testing_are_autodevs_internals_numpys():
    ns = _run(
        "import numpy as np\n"
        "import numpy._core.umath as ncu\n"
        "import numpy.linalg as la\n"
        "from numpy import array, ndarray, ma\n"
        "from numpy.linalg import inv\n"
        "from numpy.testing import assert_equal\n"
        "from numpy._core.numeric import normalize_axis_tuple\n"
    )
    np = ns["np"]
    assert np.array is autodev.array and np.ndarray is autodev.ndarray
    assert np.add is autodev.add and np.linalg.inv is autodev.linalg.inv
    # numpy.testing is autodev.testing's (its comparisons read autodev arrays); _core NumPy's
    assert np.testing.assert_equal is autodev.testing.assert_equal
    assert np._core is numpy._core
    assert ns["ncu"] is numpy._core.umath and ns["la"].inv is autodev.linalg.inv
    assert ns["array"] is autodev.array and ns["ndarray"] is autodev.ndarray
    assert ns["ma"] is numpy.ma and ns["inv"] is autodev.linalg.inv
    assert ns["assert_equal"] is autodev.testing.assert_equal
    assert ns["normalize_axis_tuple"] is numpy._core.numeric.normalize_axis_tuple
    assert dir(np) == dir(numpy)  # what a test module walks is NumPy's list


def test_a_module_docstring_and_future_import_stay_first():
    ns = _run('"""doc"""\nfrom __future__ import annotations\nimport numpy\nx = numpy.zeros(2)\n')
    assert type(ns["x"]) is autodev.ndarray and ns["numpy"].zeros is autodev.zeros


def test_only_numpys_test_folders_are_rewritten():
    tests = os.path.join(os.path.dirname(numpy.__file__), "_core", "tests")
    assert suite._is_numpy_test(os.path.join(tests, "test_numeric.py"))
    assert not suite._is_numpy_test(os.path.join(tests, "conftest.py"))
    assert not suite._is_numpy_test(os.path.join(os.path.dirname(numpy.__file__), "_core",
                                                 "numeric.py"))
    assert not suite._is_numpy_test(__file__)


def test_xfails_file_reading(tmp_path):
    listing = tmp_path / "xfails.txt"
    listing.write_text("# ====\n# why one\na::b\n[host] a::c\n\n# why two\n"
                       "[sim-gpu] a::d\n[not-run] a::e\n[fused] a::f\n")
    host = suite.read_xfails(str(listing), "host")
    assert host == {"a::b": ("why one", True), "a::c": ("why one", True),
                    "a::e": ("why two", False)}
    assert set(suite.read_xfails(str(listing), "sim-gpu")) == {"a::b", "a::d", "a::e"}
    assert set(suite.read_xfails(str(listing), "fused")) == {"a::b", "a::e", "a::f"}


def test_the_mode_follows_the_environment(monkeypatch):
    monkeypatch.delenv("AUTODEV_SIMULATE_GPU", raising=False)
    monkeypatch.delenv("AUTODEV_NUMPY_SUITE_FUSED", raising=False)
    assert suite._mode() == "host"
    monkeypatch.setenv("AUTODEV_NUMPY_SUITE_FUSED", "1")
    assert suite._mode() == "fused"
    monkeypatch.setenv("AUTODEV_SIMULATE_GPU", "1")
    assert suite._mode() == "sim-gpu"
