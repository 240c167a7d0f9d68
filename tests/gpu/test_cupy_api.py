"""What autodev claims of CuPy, checked against the installed CuPy module.

CuPy imports without a GPU (CI installs cupy-cuda12x). Every name autodev would run
on the GPU must exist in ``cupy``/``cupyx.scipy``, and every keyword autodev passes
to it must be one the CuPy function takes. A ``cupyx.scipy`` module whose CUDA
library does not load here (no CUDA Toolkit) is read from its installed source
instead: its functions' names and parameters are all this needs.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
from pathlib import Path
from typing import Any

import numpy
import pytest

cupy = pytest.importorskip("cupy", reason="CuPy is not installed (pip install 'autodev[cuda12]')")

from autodev._capability.table import TABLE  # noqa: E402
from autodev._namespace import SPECS, UFUNCS  # noqa: E402
from autodev._capability.specs import METHODS  # noqa: E402


# ------------------------------------------------------------------ reading CuPy

class Params:
    """A CuPy callable's keyword-capable parameter names (``any_keyword``: it has **kwargs;
    ``known``: False where its signature cannot be read, e.g. a Cython method)."""

    def __init__(self, names: set[str], any_keyword: bool, known: bool = True) -> None:
        self.names, self.any_keyword, self.known = names, any_keyword, known

    def takes(self, keyword: str) -> bool:
        return not self.known or self.any_keyword or keyword in self.names


def _params_of(func: Any) -> Params:
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return Params(set(), False, known=False)
    values = signature.parameters.values()
    return Params({p.name for p in values if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)},
                  any(p.kind == p.VAR_KEYWORD for p in values))


def _package_dir() -> Path:
    spec = importlib.util.find_spec("cupyx")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent.parent


def _source_params(module: str, name: str, depth: int = 0) -> Params | None:
    """``name`` in ``module`` read from the installed source (following ``from ... import``)."""
    base = _package_dir() / module.replace(".", "/")
    path = base / "__init__.py" if base.is_dir() else base.with_suffix(".py")
    if depth > 5 or not path.exists():
        return None
    tree = ast.parse(path.read_text())
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            args = node.args
            names = {a.arg for a in (*args.args, *args.kwonlyargs)}
            return Params(names, args.kwarg is not None)
        if isinstance(node, ast.ClassDef) and node.name == name:
            return Params(set(), True, known=False)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                if (alias.asname or alias.name) == name:
                    return _source_params(node.module, alias.name, depth + 1)
    return None


def cupy_params(path: str) -> Params | None:
    """The CuPy callable at ``path`` (``"cupy.sort"``, ``"cupyx.scipy.linalg.lu"``,
    ``"cupy.ndarray.sort"``), or None where the installed CuPy lacks it."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj: Any = importlib.import_module(module_name)
        except ModuleNotFoundError:
            continue
        except ImportError:  # a CUDA library missing here: read the source
            if cut != len(parts) - 1:
                return None
            return _source_params(module_name, parts[-1])
        for part in parts[cut:]:
            obj = getattr(obj, part, None)
            if obj is None:
                return None
        if isinstance(obj, cupy.ufunc):
            return Params({"out", "dtype", "casting"}, False)
        return _params_of(obj)
    return None


def _numpy_object(name: str) -> Any:
    obj: Any = numpy
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _keywords(func: Any) -> set[str]:
    params = _params_of(func)
    return params.names if params.known else set()


# ------------------------------------------------------------------ the table's own claims

def test_cupy_is_14_or_later() -> None:
    """The extras require CuPy 14 (sort kind=); the installed one must be it."""
    assert int(cupy.__version__.split(".")[0]) >= 14, cupy.__version__


@pytest.mark.parametrize("name", sorted(n for n, r in TABLE.items() if r.cupy is not None))
def test_table_names_exist_and_take_what_autodev_passes(name: str) -> None:
    row = TABLE[name]
    path = row.cupy
    if path == "cupy.ufunc" or path.startswith("cupy.ufunc."):
        method = path.removeprefix("cupy.ufunc").lstrip(".")
        assert method == "" or callable(getattr(cupy.add, method, None)), path
        return
    params = cupy_params(path)
    assert params is not None, f"the installed CuPy has no {path}"
    for keyword in row.passes:
        assert params.takes(keyword), f"{path} takes no {keyword}= (autodev passes it)"
    for keyword in row.numpy_only:
        assert not params.known or params.any_keyword or keyword not in params.names, \
            f"{path} takes {keyword}=: it need not send the call to the CPU"


@pytest.mark.parametrize("name", sorted(n for n, r in TABLE.items() if r.cupy is None))
def test_names_declared_missing_are_missing(name: str) -> None:
    assert cupy_params("cupy." + name) is None, f"CuPy has {name}: the row is out of date"


# ------------------------------------------------------------------ the function table

def _gpu_specs() -> list[str]:
    return sorted(n for n, spec in SPECS.items() if spec.where != "cpu"
                  and not isinstance(getattr(numpy, n, None), numpy.ufunc))


@pytest.mark.parametrize("name", _gpu_specs())
def test_dispatched_functions_exist_in_cupy(name: str) -> None:
    """Each dispatched name resolves in CuPy, or its row declares CuPy lacks it."""
    row = TABLE.get(name)
    if row is not None and row.cupy is None:
        return
    assert cupy_params("cupy." + SPECS[name].path) is not None, \
        f"cupy.{SPECS[name].path} is missing: declare it in autodev._capability.table.TABLE"


@pytest.mark.parametrize("name", _gpu_specs())
def test_dispatched_keywords_cupy_takes(name: str) -> None:
    """Keywords autodev passes through unchanged (NumPy's, minus the row's NumPy-only
    ones) are keywords the CuPy function takes; a corrected row lists its own."""
    row = TABLE.get(name)
    if row is not None and (row.cupy is None or row.correction is not None):
        return
    params = cupy_params("cupy." + SPECS[name].path)
    assert params is not None
    skipped = set(row.numpy_only) if row is not None else set()
    lacking = sorted(k for k in _keywords(_numpy_object(name)) - skipped
                     if not params.takes(k))
    assert lacking == [], f"cupy.{SPECS[name].path} takes no {lacking}: add them to the row"


@pytest.mark.parametrize("name", sorted(UFUNCS))
def test_ufuncs_exist_in_cupy(name: str) -> None:
    row = TABLE.get(name)
    found = getattr(cupy, name, None)
    if row is not None and row.cupy is None:
        assert not isinstance(found, cupy.ufunc), f"CuPy has {name}: the row is out of date"
        return
    assert found is not None and callable(found), f"cupy.{name} is missing: declare it"


@pytest.mark.parametrize("name", sorted(METHODS))
def test_array_methods_exist_in_cupy(name: str) -> None:
    if not hasattr(numpy.ndarray, name):
        return
    assert callable(getattr(cupy.ndarray, name, None)), f"cupy.ndarray.{name} is missing"


@pytest.mark.parametrize("name", ["astype", "copy", "view", "fill", "sort", "partition", "put",
                                  "flatten", "byteswap", "get", "__dlpack__", "reshape"])
def test_methods_autodev_calls_directly_exist(name: str) -> None:
    assert callable(getattr(cupy.ndarray, name, None)), name


# ------------------------------------------------------------------ autodev.scipy

class _Recorder:
    """A GPU backend that records the CuPy paths a GPU factory asks for."""

    is_gpu = True

    def __init__(self) -> None:
        self.paths: list[str] = []
        self.xp = _Path(self, "cupy")

    def resolve(self, path: str) -> Any:
        head, _, name = path.rpartition(".")
        full = f"cupyx.{path}" if path.startswith("scipy.") else f"cupy.{path}"
        self.paths.append(full)
        return _stub

    def scipy(self, name: str) -> Any:
        return _Path(self, f"cupyx.scipy.{name}")

    def is_native(self, obj: Any) -> bool:
        return False


def _stub(*args: Any, **kwargs: Any) -> None:
    """Stands for a CuPy function (its signature is checked, not the recorder's)."""


class _Path:
    def __init__(self, recorder: _Recorder, path: str) -> None:
        self._recorder, self._path = recorder, path

    def __getattr__(self, name: str) -> Any:
        path = f"{self._path}.{name}"
        if path.count(".") >= 2 and not path.endswith(".linalg"):
            self._recorder.paths.append(path)
        return _Path(self._recorder, path)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        return None


def _scipy_specs() -> list[Any]:
    from autodev.scipy import fft, linalg, signal
    from autodev.scipy.sparse import linalg as splinalg

    return [spec for module in (fft, linalg, signal, splinalg) for spec in module.SPECS.values()
            if spec.where == "dispatch"]


@pytest.mark.parametrize("spec", _scipy_specs(), ids=lambda spec: spec.name)
def test_scipy_gpu_functions_exist_in_cupyx(spec: Any) -> None:
    recorder = _Recorder()
    if spec.gpu_impl is not None:
        assert spec.gpu_impl(recorder) is not None
        paths = recorder.paths
    else:
        paths = [f"cupyx.{spec.path}"]
    assert paths, spec.name
    for path in paths:
        assert cupy_params(path) is not None, f"{spec.name}: the installed CuPy has no {path}"


@pytest.mark.parametrize("name", sorted(n for n in UFUNCS if getattr(cupy, n, None) is not None))
def test_cupy_ufunc_names_lead_back_to_numpy(name: str) -> None:
    """The ufunc correction finds NumPy's ufunc from CuPy's name (``cupy_add`` -> ``add``)."""
    found = getattr(numpy, getattr(cupy, name).__name__.removeprefix("cupy_"), None)
    assert isinstance(found, numpy.ufunc), name


def _creation_names() -> list[str]:
    from autodev._namespace import CREATION

    return sorted(CREATION)


@pytest.mark.parametrize("name", _creation_names())
def test_creation_keywords_cupy_takes(name: str) -> None:
    """Creation on the GPU passes NumPy's keywords but ``device=``/``like=`` (which autodev
    reads itself); where CuPy lacks the function, the host creates and moves the array."""
    params = cupy_params("cupy." + name)
    if params is None:
        return  # make_creation finds no GPU function: host creation, one transfer
    np_params = inspect.signature(getattr(numpy, name)).parameters.values()
    keywords = {p.name for p in np_params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    lacking = sorted(k for k in keywords - {"device", "like"} if not params.takes(k))
    assert lacking == [], f"cupy.{name} takes no {lacking}"


@pytest.mark.parametrize("spec", [s for s in _scipy_specs()
                                  if hasattr(s.gpu_impl, "passes_through")],
                         ids=lambda spec: spec.name)
def test_scipy_keywords_cupyx_takes(spec: Any) -> None:
    """A factory passing SciPy's keywords through (less the ones it drops or renames):
    each of them is one the cupyx function takes."""
    import importlib as _importlib

    path, dropped = spec.gpu_impl.passes_through
    params = cupy_params(f"cupyx.{path}")
    assert params is not None
    module, _, name = path.rpartition(".")
    scipy_func = getattr(_importlib.import_module(module), name)
    # the leading array operands are passed by position (cupyx names some differently)
    operands = list(inspect.signature(scipy_func).parameters)[:spec.arrays]
    lacking = sorted(k for k in _keywords(scipy_func) - set(dropped) - set(operands)
                     if not params.takes(k))
    assert lacking == [], f"cupyx.{path} takes no {lacking}: drop them (or rule them out)"
