"""The function table: one immutable :class:`OpSpec` per dispatched name.

A spec says how one public function dispatches: its cost family, whether it runs where
its input lives, where each backend finds it and NumPy's scalar rule (its row in
:mod:`autodev._names`), and the GPU capability rule and correction that
:data:`autodev._capability.table.TABLE` declares for its name. ``SPECS`` (functions
and ufunc aliases), :func:`ufunc_specs` (NumPy's ufuncs and their methods) and
``METHOD_SPECS`` (array methods) are built here, once, at import; the dispatcher,
the array class, the function namespace, the tests and docs/coverage.md read them.
Names not in the table run on the CPU, their inputs moved to the host once.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any, Callable

import numpy as np

from .._backends import Backend
from .._cost.families import WORK, WorkFn, family_of_ufunc
from .._names import DISPATCHED, METHODS, SCALAR_METHODS
from .table import GPU_WRAPPERS, METHOD_GPU_WRAPPERS, TABLE, UFUNC_METHODS, gpu_rules, imitate_operands, ufunc_method_rule
from .corrections import device_operands
from .ufunc_corrections import ufunc_list_operands


class OpSpec:
    """How one public function dispatches.

    Parameters
    ----------
    name : str
        Public name, e.g. ``"sum"`` or ``"linalg.solve"`` (used in traces).
    path : str
        Where each backend finds it: ``"sum"``, ``"linalg.solve"``,
        ``"scipy.special.erf"``, or ``".sum"`` for a native array method.
    family : str
        Cost family (see ``autodev._cost.model.FAMILIES``).
    where : str
        ``"dispatch"`` (cost model decides), ``"primary"`` (runs where its first
        array lives: views and cheap metadata calls) or ``"cpu"`` (NumPy only).
    scalar : bool
        NumPy returns a scalar where the result is 0-d (ufuncs, reductions).
    cpu_impl : callable, optional
        The CPU implementation, when it is not the NumPy function at ``path``.
    gpu_ok : callable, optional
        Extra capability rule ``(arrays, kwargs) -> bool`` for the GPU.
    gpu_wrap : callable, optional
        ``(backend, func) -> func``: the correction around the GPU function (NumPy's
        checks and result types CuPy lacks; see :data:`autodev._capability.table.TABLE`).

    A spec is immutable once built: each attribute is set once, by the constructor
    (only its cache of resolved implementations fills in as backends are met).
    """

    __slots__ = ("name", "path", "family", "where", "scalar", "work", "cpu_impl",
                 "gpu_ok", "gpu_wrap", "_impls")

    name: str
    path: str
    family: str
    where: str
    scalar: bool
    work: WorkFn
    cpu_impl: Callable[..., Any] | None
    gpu_ok: Callable[..., bool] | None
    gpu_wrap: Callable[[Backend, Callable[..., Any]], Callable[..., Any]] | None
    _impls: dict[Backend, Callable[..., Any] | None]

    def __init__(self, name: str, path: str, family: str, where: str = "dispatch",
                 scalar: bool = False, work: WorkFn | None = None,
                 cpu_impl: Callable[..., Any] | None = None,
                 gpu_ok: Callable[..., bool] | None = None,
                 gpu_wrap: Callable[[Backend, Callable[..., Any]], Callable[..., Any]]
                 | None = None) -> None:
        # set past the guard below (which would probe each attribute first, an
        # AttributeError apiece: 7 ms of ``import autodev`` over the ~700 specs)
        _set = object.__setattr__
        _set(self, "name", name)
        _set(self, "path", path)
        _set(self, "family", family)
        _set(self, "where", where)
        _set(self, "scalar", scalar)
        _set(self, "work", work or WORK[family])
        _set(self, "cpu_impl", cpu_impl)
        _set(self, "gpu_ok", gpu_ok)
        _set(self, "gpu_wrap", gpu_wrap)
        _set(self, "_impls", {})

    def __setattr__(self, name: str, value: object) -> None:
        try:
            getattr(self, name)
        except AttributeError:  # not set yet: the constructor is setting it
            object.__setattr__(self, name, value)
            return
        raise AttributeError(f"{type(self).__name__} {self.name!r} is immutable once built; "
                             f"give {name}= to its constructor instead.")

    def impl(self, backend: Backend) -> Callable[..., Any] | None:
        """The callable running this op on ``backend``, or None if it has none."""
        try:
            return self._impls[backend]
        except KeyError:
            pass
        if self.cpu_impl is not None and not backend.is_gpu:
            found: Callable[..., Any] | None = self.cpu_impl
        elif self.path.startswith("."):
            found = _method_caller(self.path[1:])
        elif self.where == "cpu" and backend.is_gpu:
            found = None
        else:
            found = backend.resolve(self.path)
        if found is not None and backend.is_gpu and self.gpu_wrap is not None:
            found = self.gpu_wrap(backend, found)
        self._impls[backend] = found
        return found

    def __repr__(self) -> str:
        return f"OpSpec({self.name!r}, family={self.family!r}, where={self.where!r})"


def _method_caller(name: str) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, name)(*args, **kwargs)

    call.__name__ = name
    return call


#: Dispatched names -> their specs (functions of numpy, numpy.linalg, numpy.fft; ufunc
#: aliases).
SPECS: dict[str, OpSpec] = {}


#: Dispatched names -> their NumPy functions, whose array operands are converted for
#: CuPy (``autodev._capability.corrections.device_operands``) and refused by the sim.
OPERANDS: dict[str, Any] = {}


#: The capability rules by dispatched name (built once: each call of gpu_rules walks the table).
_GPU_RULES = gpu_rules()


class _LateFunction:
    """A function of a NumPy submodule that ``import numpy`` does not load (``numpy.fft``),
    read when first called or inspected (``inspect.signature`` follows ``__wrapped__``), so
    that ``import autodev`` loads no NumPy submodule NumPy itself does not."""

    __slots__ = ("_module", "_name")

    def __init__(self, module: str, name: str) -> None:
        self._module = module
        self._name = name

    @property
    def __wrapped__(self) -> Callable[..., Any]:
        return getattr(importlib.import_module(self._module), self._name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)


#: Where each prefix's NumPy functions are: the module, or the name of one to read only on
#: first use (every name must be there: NumPy >= 1.x has all of numpy.fft's).
_MODULES: dict[str, ModuleType | str] = {"": np, "linalg": np.linalg, "fft": "numpy.fft"}


def _build_specs() -> None:
    """The spec of each dispatched row of :mod:`autodev._names` that this NumPy has."""
    rules = _GPU_RULES
    for row in DISPATCHED:
        full = row.name
        prefix, _, name = full.rpartition(".")
        module = _MODULES[prefix]
        np_func = _LateFunction(module, name) if type(module) is str \
            else getattr(module, name, None)
        if np_func is None:
            continue  # not in this NumPy version
        path, cpu_impl = full, None
        if row.gpu_path is not None:  # the GPU has it elsewhere: the CPU runs NumPy's
            path, cpu_impl = row.gpu_path, np_func
        wrap = GPU_WRAPPERS.get(full)
        if not row.view:
            OPERANDS[full] = np_func
            wrap = device_operands(np_func, wrap)
        SPECS[full] = OpSpec(
            full, path, row.family or "copy", "primary" if row.view else "dispatch",
            scalar=row.scalar,
            cpu_impl=cpu_impl, gpu_ok=rules.get(full), gpu_wrap=wrap,
        )


# --------------------------------------------------------------------------- ufuncs

#: The capability rule of a NumPy ufunc's call on the GPU (its keywords CuPy takes).
_UFUNC_RULE = _GPU_RULES["ufunc"]


def _outer_work(arrays: list[Any]) -> float:
    size = 1
    for a in arrays[:2]:
        size *= a.size
    return size


def ufunc_specs(np_ufunc: np.ufunc, path: str, family: str, *, numpy: bool = True,
                where: str = "dispatch", gpu_ok: Callable[..., bool] | None = None
                ) -> tuple[OpSpec, dict[str, OpSpec]]:
    """The spec of a ufunc's call and those of its methods (``reduce``, ``outer``, ...).

    NumPy's ufuncs follow the capability table's ufunc rows; others (scipy.special's,
    frompyfunc's) give their own rule ``gpu_ok`` or run on the CPU (``where="cpu"``).
    """
    name = np_ufunc.__name__
    cpu = where == "cpu"
    spec = OpSpec(name, path, family, where, scalar=True,
                  cpu_impl=np_ufunc if cpu else None,
                  gpu_ok=_UFUNC_RULE if numpy else gpu_ok,
                  gpu_wrap=TABLE["ufunc"].correction if numpy else
                  None if cpu else ufunc_list_operands(np_ufunc.nin))
    methods = {
        method: OpSpec(f"{name}.{method}", f"{path}.{method}", "reduction", where,
                       scalar=method == "reduce",
                       cpu_impl=getattr(np_ufunc, method) if cpu else None,
                       gpu_ok=ufunc_method_rule(method, name) if numpy else gpu_ok)
        for method in UFUNC_METHODS
    }
    methods["outer"] = OpSpec(f"{name}.outer", f"{path}.outer", family, where,
                              work=_outer_work, cpu_impl=np_ufunc.outer if cpu else None,
                              gpu_ok=_UFUNC_RULE if numpy else gpu_ok)
    return spec, methods


#: NumPy's ufuncs by ``__name__``: their specs and their methods' (one of each, shared by
#: the ufunc objects of the namespace and the array's operators).
NUMPY_UFUNCS: dict[str, tuple[Any, OpSpec, dict[str, OpSpec]]] = {}


def _build_ufuncs() -> None:
    # NumPy's namespace as loaded (its ufuncs all are): ``getattr`` over ``dir(np)`` would
    # import every lazy submodule (f2py, testing, ma, polynomial, ...) at ``import autodev``
    names = {name: value for name, value in vars(np).items() if not name.startswith("_")}
    for value in names.values():
        if isinstance(value, np.ufunc) and value.__name__ not in NUMPY_UFUNCS:
            name = value.__name__
            NUMPY_UFUNCS[name] = (value, *ufunc_specs(value, name, family_of_ufunc(name)))
    for alias, value in names.items():
        if isinstance(value, np.ufunc):
            SPECS.setdefault(alias, NUMPY_UFUNCS[value.__name__][1])


def ufunc_spec(name: str) -> OpSpec:
    """The spec of the NumPy ufunc called ``name`` (used by the operators)."""
    return NUMPY_UFUNCS[name if name == "divmod" else getattr(np, name).__name__][1]


# --------------------------------------------------------------------------- methods

def _method_spec(name: str, family: str, where: str) -> OpSpec:
    rules = _GPU_RULES
    return OpSpec(name, "." + name, family, where, scalar=name in SCALAR_METHODS,
                  gpu_wrap=METHOD_GPU_WRAPPERS.get(name),
                  # ndarray.clip takes min/max on both
                  gpu_ok=None if name == "clip" else rules.get("ndarray." + name,
                                                               rules.get(name)))


#: The array methods' specs (those NumPy's ndarray has in this version).
METHOD_SPECS: dict[str, OpSpec] = {
    name: _method_spec(name, family, where) for name, (family, where) in METHODS.items()
    if hasattr(np.ndarray, name)
}


_build_specs()
imitate_operands(OPERANDS)  # the simulated GPU refuses host operands, as CuPy does
_build_ufuncs()
