"""Run NumPy's own test modules as users of ``import autodev as np`` (a pytest plugin).

NumPy ships its tests inside the installed package (``numpy/**/tests``). Loaded with
this plugin (``-p autodev_numpy_suite``, with this folder on ``sys.path``), every module
in a ``tests`` folder of the ``numpy`` package is rewritten as it is imported, so that its
``numpy`` imports bind autodev:

- ``import numpy as np``, ``from numpy import x``, ``import numpy.linalg as la``,
  ``from numpy.fft import fft``: public names are autodev's (``np.array`` is
  ``autodev.array``, ``np.ndarray`` is ``autodev.ndarray``, ``np.linalg`` is
  ``autodev.linalg``); public names autodev takes as they are (``np.dtype``,
  ``np.ma``) are NumPy's own objects either way.
- ``numpy.testing`` is ``autodev.testing``, as ``np.testing`` is under ``import autodev
  as np``: NumPy's own assertions, its comparisons handed NumPy copies of autodev arrays
  (NumPy's branch on ``isinstance(x, numpy.ndarray)``, and cannot read a foreign array).
- NumPy's internals (any name or module path with a part that starts with ``_``:
  ``np._core``, ``numpy._core._multiarray_tests``, ``numpy.lib._function_base_impl``) stay NumPy's: they are the judge and its tools,
  not the code under test.

The modules stay NumPy's files: nothing is copied, and a new NumPy brings its new
tests. ``--numpy-xfails FILE`` marks the test ids listed there as strict expected
failures (a test listed that passes fails the run, so the list cannot go stale);
lines ``[host] id``, ``[sim-gpu] id`` or ``[fused] id`` apply to one mode only (the mode
is ``sim-gpu`` when ``AUTODEV_SIMULATE_GPU`` is set, ``fused`` when
``AUTODEV_NUMPY_SUITE_FUSED`` is: every elementwise call of two elements or more
deferred, its chain run in blocks of three), and ``[not-run] id`` is expected to
fail without being run (a C test helper that crashes on a foreign array). A line naming
a module alone (no ``::``) keeps that module from being collected in that mode (it
cannot be imported there). ``--numpy-plain`` turns the
rewriting off: the same run on NumPy itself, for comparison.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
import types
from typing import Any, Iterator, Sequence

import pytest

_HELPER = "_autodev_numpy_suite"  # the name the rewritten modules reach this module by


# -- the namespaces a rewritten module sees -------------------------------------------


def _stays_numpy(path: str) -> bool:
    """Whether the dotted NumPy module ``path`` is NumPy's own even under autodev."""
    parts = path.split(".")[1:]
    return any(p.startswith("_") or p == "tests" for p in parts)


class AutodevView(types.ModuleType):
    """A NumPy module seen through autodev: public names autodev's, the rest NumPy's."""

    def __init__(self, name: str, numpy_module: types.ModuleType,
                 autodev_module: types.ModuleType) -> None:
        super().__init__(name, numpy_module.__doc__)
        self._numpy = numpy_module
        self._autodev = autodev_module

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("_"):
            return getattr(self._numpy, attr)
        try:
            value = getattr(self._autodev, attr)
        except AttributeError:
            return getattr(self._numpy, attr)
        if isinstance(value, types.ModuleType) and value.__name__.startswith("autodev") \
                and hasattr(self._numpy, attr):
            return view(f"{self.__name__}.{attr}")
        return value

    def __dir__(self) -> list[str]:
        return dir(self._numpy)  # NumPy's names: what a test module walks is NumPy's list


_VIEWS: dict[str, Any] = {}


def view(path: str) -> Any:
    """``numpy`` module ``path`` as a rewritten test module sees it."""
    if path not in _VIEWS:
        numpy_module = importlib.import_module(path)
        _VIEWS[path] = numpy_module
        if not _stays_numpy(path):
            try:
                autodev_module = importlib.import_module("autodev" + path[len("numpy"):])
            except ImportError:  # no autodev counterpart (numpy.ma, ...): NumPy's own
                pass
            else:
                _VIEWS[path] = AutodevView(path, numpy_module, autodev_module)
    return _VIEWS[path]


def import_from(path: str, name: str) -> Any:
    """``from <path> import <name>`` in a rewritten module (ImportError as Python's)."""
    module = view(path)
    try:
        return getattr(module, name)
    except AttributeError:
        try:  # a submodule not yet imported by its package
            return view(f"{path}.{name}")
        except ImportError:
            raise ImportError(f"cannot import name {name!r} from {path!r}") from None


# -- the rewriting ---------------------------------------------------------------------


def _is_numpy(path: str | None) -> bool:
    return path is not None and (path == "numpy" or path.startswith("numpy."))


def _call(func: str, *args: str) -> ast.expr:
    return ast.Call(ast.Attribute(ast.Name(_HELPER, ast.Load()), func, ast.Load()),
                    [ast.Constant(a) for a in args], [])


def _assign(target: str, value: ast.expr) -> ast.stmt:
    return ast.Assign([ast.Name(target, ast.Store())], value)


class _Rewriter(ast.NodeTransformer):
    """Turns each ``numpy`` import into a binding of :func:`view` / :func:`import_from`."""

    def visit_Import(self, node: ast.Import) -> Any:
        if not any(_is_numpy(a.name) for a in node.names):
            return node
        out: list[ast.stmt] = []
        for alias in node.names:
            if not _is_numpy(alias.name):
                out.append(ast.Import([alias]))
            elif alias.asname:  # import numpy.linalg as la
                out.append(_assign(alias.asname, _call("view", alias.name)))
            else:  # import numpy.linalg binds numpy (and loads numpy.linalg)
                out.append(ast.Expr(_call("view", alias.name)))
                out.append(_assign("numpy", _call("view", "numpy")))
        return out

    def visit_ImportFrom(self, node: ast.ImportFrom) -> Any:
        if node.level or not _is_numpy(node.module):
            return node
        if any(a.name == "*" for a in node.names):
            raise ImportError(f"'from {node.module} import *' is not rewritten")
        return [_assign(a.asname or a.name, _call("import_from", node.module or "", a.name))
                for a in node.names]


def rewrite(tree: ast.Module) -> ast.Module:
    """``tree`` with its ``numpy`` imports bound to autodev (see the module docstring)."""
    tree = _Rewriter().visit(tree)
    body = tree.body
    first = 0
    while first < len(body) and (
            (isinstance(body[first], ast.Expr) and isinstance(getattr(body[first], "value", None), ast.Constant))
            or (isinstance(body[first], ast.ImportFrom) and getattr(body[first], "module", "") == "__future__")):
        first += 1
    body.insert(first, ast.Import([ast.alias("autodev_numpy_suite", _HELPER)]))
    return ast.fix_missing_locations(tree)


class _Loader(importlib.machinery.SourceFileLoader):
    """Loads a NumPy test module rewritten, never from (or into) its bytecode cache."""

    def get_code(self, fullname: str) -> types.CodeType:
        path = self.get_filename(fullname)
        source = self.get_data(path)
        tree = rewrite(ast.parse(source, filename=path))
        return compile(tree, path, "exec", dont_inherit=True)


class _Finder(importlib.abc.MetaPathFinder):
    """Finds NumPy's test modules and hands them to :class:`_Loader`.

    A module is NumPy's test module when its file is in a ``tests`` folder inside the
    ``numpy`` package: pytest imports ``numpy/_core/tests/test_numeric.py`` (a folder
    without ``__init__.py``) as the top-level ``test_numeric``, the others by their
    package path (``numpy.lib.tests.test_shape_base``).
    """

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> Any:
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not _is_numpy_test(spec.origin) \
                or not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None  # the next finder (pytest's, then Python's) imports it as usual
        spec.loader = _Loader(fullname, spec.origin or "")
        return spec


def _is_numpy_test(origin: str | None) -> bool:
    """Whether the file ``origin`` is a module of a ``tests`` folder of NumPy's package."""
    if not origin or not origin.endswith(".py"):
        return False
    folder, name = os.path.split(os.path.realpath(origin))
    if name in ("conftest.py", "__init__.py") or os.path.basename(folder) != "tests":
        return False
    return os.path.commonpath([folder, _numpy_dir()]) == _numpy_dir()


@functools.lru_cache(maxsize=1)
def _numpy_dir() -> str:
    spec = importlib.util.find_spec("numpy")
    assert spec is not None and spec.origin is not None
    return os.path.dirname(os.path.realpath(spec.origin))


_FINDER = _Finder()


def install() -> None:
    """Rewrite NumPy's test modules imported from now on."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


# -- pytest hooks ----------------------------------------------------------------------


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("autodev-numpy-suite")
    group.addoption("--numpy-xfails", default=None, metavar="FILE",
                    help="test ids expected to fail under autodev, one a line")
    group.addoption("--numpy-plain", action="store_true",
                    help="run NumPy's tests on NumPy itself (no rewriting)")


def pytest_configure(config: Any) -> None:
    if not config.getoption("--numpy-plain"):
        install()


def _mode() -> str:
    if os.environ.get("AUTODEV_SIMULATE_GPU", "0") not in ("", "0"):
        return "sim-gpu"
    return "fused" if os.environ.get("AUTODEV_NUMPY_SUITE_FUSED", "0") not in ("", "0") \
        else "host"


@pytest.fixture(autouse=True)
def _autodev_fused() -> Iterator[None]:
    """In the ``fused`` mode, every elementwise call of two elements or more that autodev
    may defer is deferred, and each chain runs in blocks of three elements: NumPy's tests
    then judge the deferred chains, not only the large arrays where they apply by default
    (the pending chains of a test are evaluated when it ends)."""
    if _mode() != "fused":
        yield
        return
    from autodev import _blocked, _fusion

    blocks = _blocked.BLOCK, _blocked.THREADED_BLOCK
    _blocked.BLOCK = _blocked.THREADED_BLOCK = 3
    _fusion.set_floor(2)
    try:
        yield
    finally:
        _fusion.set_floor(None)
        _blocked.BLOCK, _blocked.THREADED_BLOCK = blocks


def read_xfails(path: str, mode: str) -> dict[str, tuple[str, bool]]:
    """Test id -> (reason, whether to run it) for ``mode``, from an xfails file.

    The reason is the ``#`` lines above the id's group.
    """
    xfails: dict[str, tuple[str, bool]] = {}
    reason: list[str] = []
    after_id = False
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line:
                continue
            if line.startswith("#"):
                if not line.strip("#= "):
                    continue  # a rule between sections
                if after_id:
                    reason, after_id = [], False
                reason.append(line.lstrip("# "))
                continue
            after_id = True
            run = True
            while tag := re.match(r"^\[(host|sim-gpu|fused|not-run)\]\s+", line):
                line = line[tag.end():]
                if tag.group(1) == "not-run":
                    run = False
                elif tag.group(1) != mode:
                    break
            else:
                xfails[line] = (" ".join(reason) or "listed in the xfails file", run)
    return xfails


@pytest.hookimpl(tryfirst=True)
def pytest_make_collect_report(collector: Any) -> Any:
    """A module listed by its path alone (no ``::``) is skipped in that mode, with the
    list's reason: it cannot be imported there (so no test id of it can be listed)."""
    config = collector.config
    path = config.getoption("--numpy-xfails")
    if not path or config.getoption("--numpy-plain") or not isinstance(collector, pytest.Module):
        return None
    listed = read_xfails(path, _mode()).get(collector.nodeid)
    if listed is None:
        return None
    return pytest.CollectReport(collector.nodeid, "skipped",
                                (str(collector.path), 0, f"Skipped: {listed[0]}"), [])


def pytest_collection_modifyitems(config: Any, items: list[Any]) -> None:
    path = config.getoption("--numpy-xfails")
    if not path or config.getoption("--numpy-plain"):
        return
    xfails = read_xfails(path, _mode())
    for item in items:
        if item.nodeid in xfails:
            reason, run = xfails[item.nodeid]
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True, run=run))
