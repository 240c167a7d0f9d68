"""Shared machinery of ``autodev.scipy``: specs, public functions, module resolution.

Each public module (``fft``, ``linalg``, ...) declares a table ``{family: names}`` of
the SciPy functions it dispatches, plus per-name rules (a GPU implementation built
from the backend, a capability rule ``gpu_ok``). Names outside the table run on the
CPU with SciPy itself. Tests and docs read the same tables.
"""

from __future__ import annotations

import inspect
from types import ModuleType
from typing import Any, Callable

import numpy as np

from .._backends import Backend
from .._dispatch import call
from .._functions import cpu_function
from .._ufuncs import ufunc_for
from .._capability.specs import OpSpec

#: ``backend -> function``, or None where the backend lacks what it needs (an older
#: CuPy, a cupyx module that does not import): the call then runs on the CPU.
GpuFactory = Callable[[Backend], "Callable[..., Any] | None"]
GpuRule = Callable[[list[Any], dict[str, Any]], bool]

#: Dtypes every GPU backend computes on with SciPy's result dtypes.
FLOATING = frozenset(np.dtype(t) for t in ("f4", "f8", "c8", "c16"))
REAL_FLOATING = frozenset(np.dtype(t) for t in ("f4", "f8"))


class ScipySpec(OpSpec):
    """An :class:`~autodev._capability.specs.OpSpec` for a SciPy function.

    Parameters
    ----------
    gpu_impl : callable, optional
        ``backend -> callable``: the GPU implementation, written once over the
        backend's modules, where the GPU module's function differs from SciPy's
        (missing, other signature, other result dtype, silent errors).
    arrays : int
        How many leading positional parameters are array operands; further
        positional arguments are passed by name, so ``gpu_ok`` rules see them.
    """

    __slots__ = ("gpu_impl", "arrays")

    def __init__(self, name: str, path: str, family: str, *, gpu_impl: GpuFactory | None = None,
                 arrays: int = 1, **options: Any) -> None:
        super().__init__(name, path, family, **options)
        self.gpu_impl = gpu_impl
        self.arrays = arrays

    def impl(self, backend: Backend) -> Callable[..., Any] | None:
        """The callable running this op on ``backend``, or None if it has none."""
        if backend.is_gpu and self.gpu_impl is not None and self.where != "cpu":
            if backend not in self._impls:  # None (the backend lacks it) is cached too
                self._impls[backend] = self.gpu_impl(backend)
            return self._impls[backend]
        return super().impl(backend)


def all_of(*rules: GpuRule) -> GpuRule:
    """A capability rule true when every one of ``rules`` is."""
    return lambda arrays, kwargs: all(rule(arrays, kwargs) for rule in rules)


def dtypes_in(allowed: frozenset[np.dtype]) -> GpuRule:
    """Capability rule: every array operand has one of the ``allowed`` dtypes."""
    return lambda arrays, kwargs: all(a.dtype in allowed for a in arrays)


def kwarg_in(name: str, allowed: tuple[Any, ...]) -> GpuRule:
    """Capability rule: keyword ``name`` is absent or one of ``allowed``."""
    return lambda arrays, kwargs: kwargs.get(name, allowed[0]) in allowed


def dropping(*names: str) -> Callable[[str], GpuFactory]:
    """GPU factory for ``path`` calling the GPU function without keywords ``names``
    (CPU-only knobs such as ``workers=``); None where the backend lacks ``path``."""
    def factory_for(path: str) -> GpuFactory:
        def factory(backend: Backend) -> Callable[..., Any] | None:
            func = backend.resolve(path)
            if func is None:
                return None

            def run(*args: Any, **kwargs: Any) -> Any:
                for name in names:
                    kwargs.pop(name, None)
                return func(*args, **kwargs)

            return run

        # the GPU function and the keywords it is spared (tests check the rest against it)
        factory.passes_through = (path, names)  # type: ignore[attr-defined]
        return factory
    return factory_for


def public_function(spec: ScipySpec, scipy_func: Callable[..., Any], module: str) -> Callable[..., Any]:
    """A public function that dispatches ``spec`` with ``scipy_func``'s name, doc and
    positional parameters (the ones after the array operands are passed by name)."""
    names = _parameter_names(scipy_func)
    leading = spec.arrays

    def function(*args: Any, **kwargs: Any) -> Any:
        if len(args) > leading and names:
            extra = dict(zip(names[leading:], args[leading:]))
            if len(extra) < len(args) - leading:
                raise TypeError(f"{spec.name}() takes at most {len(names)} positional "
                                f"arguments. Got {len(args)} instead.")
            args = args[:leading]
            kwargs = {**extra, **kwargs}
        return call(spec, args, kwargs)

    function.__name__ = getattr(scipy_func, "__name__", spec.name.rpartition(".")[2])
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(scipy_func, "__doc__", None)
    function.__module__ = module
    function.__wrapped__ = scipy_func  # type: ignore[attr-defined]  # SciPy's signature
    return function


def _parameter_names(func: Callable[..., Any]) -> list[str]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


def build_specs(prefix: str, table: dict[str, str], rules: dict[str, dict[str, Any]] | None = None,
                arrays: dict[str, int] | None = None) -> dict[str, ScipySpec]:
    """Specs for ``table`` (``{family: "name name ..."}``), with per-name ``rules``
    (ScipySpec keywords) and array-operand counts."""
    rules = rules or {}
    arrays = arrays or {}
    specs: dict[str, ScipySpec] = {}
    for family, names in table.items():
        for name in names.split():
            options = dict(rules.get(name, {}))
            where = "primary" if family == "primary" else options.pop("where", "dispatch")
            specs[name] = ScipySpec(
                prefix + name, options.pop("path", prefix + name),
                "copy" if family == "primary" else family, where=where,
                arrays=arrays.get(name, 1), **options,
            )
    return specs


def resolve(scipy_module: ModuleType, public: str, specs: dict[str, ScipySpec],
            name: str) -> Any:
    """What ``<public>.<name>`` is: dispatched function, ufunc, CPU function or SciPy object."""
    value = getattr(scipy_module, name)  # AttributeError propagates: not a SciPy name
    if isinstance(getattr(value, "__wrapped__", None), np.ufunc):
        value = value.__wrapped__  # SCIPY_ARRAY_API=1 wraps SciPy's ufuncs in functions
    spec = specs.get(name)
    if spec is not None:
        return public_function(spec, value, public)
    if isinstance(value, np.ufunc):
        return ufunc_for(value)
    if callable(value) and not isinstance(value, (type, ModuleType)):
        function = cpu_function(value, f"{scipy_module.__name__}.{name}")
        function.__module__ = public
        return function
    return value  # classes, exceptions, constants, submodules


def module_getattr(scipy_module: ModuleType, public: str, specs: dict[str, ScipySpec],
                   namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A PEP 562 ``__getattr__`` resolving SciPy names once and caching them."""
    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {public!r} has no attribute {name!r}")
        try:
            value = resolve(scipy_module, public, specs, name)
        except AttributeError:
            raise AttributeError(f"module {public!r} has no attribute {name!r}") from None
        namespace[name] = value
        return value

    return __getattr__


def public_names(scipy_module: ModuleType) -> list[str]:
    """SciPy's public names of ``scipy_module`` (its ``__all__`` where it has one)."""
    names = getattr(scipy_module, "__all__", None) or dir(scipy_module)
    return sorted(n for n in names if not n.startswith("_"))
