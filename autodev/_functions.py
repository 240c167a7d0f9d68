"""NumPy's functions as autodev runs them: dispatched over their specs in the function
table (:mod:`autodev._capability.specs`), run by NumPy alone on the host, or writing into
their first argument (``put``, ``place``, ...).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable


from ._residency import storage as R
from ._array import ndarray
from ._device import CPU
from ._decide import alone_on_host
from ._dispatch import call, cpu_arg, cpu_result, host_impl
from ._compiled import ANY_NUMBER, compiled
from ._threaded import SPLIT_FUNCTIONS, ThreadedMean, ThreadedWhere
from ._fused_sum import fused_sum
from ._fusion import _ACTIVE as PENDING_CHAIN, DECLINED, before_write
from ._capability.specs import OpSpec
from ._residency.memory import write_back
from ._subclass import SUBCLASSES, of_inputs
from ._trace import tick

def _named(function: Callable[..., Any], np_func: Any, name: str) -> Callable[..., Any]:
    """Give a public wrapper NumPy's name and docstring, in module ``autodev``."""
    function.__name__ = getattr(np_func, "__name__", name)
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(np_func, "__doc__", None)
    function.__module__ = "autodev"
    function.__wrapped__ = np_func  # type: ignore[attr-defined]  # inspect.signature, help()
    return function


#: For each NumPy function, the position of ``out`` and the names of its parameters from
#: ``out`` on, where ``out`` can be given by position (``np.outer(a, b, o)``,
#: ``np.sum(a, 0, None, o)``), else None; read from its signature on first use.
_OUT_ON: dict[Any, tuple[int, tuple[str, ...]] | None] = {}


def _out_by_keyword(np_func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
                    ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """``args``/``kwargs`` with an ``out=`` given by position (and the arguments after it)
    passed by keyword, as the dispatcher reads ``out=`` (the output it writes and returns,
    on whichever device runs the call)."""
    found = _out_on(np_func)
    if found is None or len(args) <= found[0]:
        return args, kwargs
    at, names = found
    if any(n in kwargs for n in names[:len(args) - at]):
        return args, kwargs  # given twice: NumPy's own TypeError
    return args[:at], {**kwargs, **dict(zip(names, args[at:]))}


def _out_on(np_func: Any) -> tuple[int, tuple[str, ...]] | None:
    """:func:`_out_onwards` of ``np_func``, read from its signature once."""
    try:
        return _OUT_ON[np_func]
    except KeyError:
        found = _OUT_ON[np_func] = _out_onwards(np_func)
        return found


def _out_onwards(np_func: Any) -> tuple[int, tuple[str, ...]] | None:
    """Where ``np_func`` takes ``out`` by position, and its parameters from there on."""
    try:
        params = list(inspect.signature(np_func).parameters.values())
    except (TypeError, ValueError):
        return None
    names = [p.name for p in params]
    if "out" not in names:
        return None
    at = names.index("out")
    rest = []
    for p in params[at:]:
        if p.kind is not p.POSITIONAL_OR_KEYWORD:
            break  # keyword-only from here (clip's min=, max=, **kwargs)
        rest.append(p.name)
    return (at, tuple(rest)) if rest else None


def make_function(spec: OpSpec, np_func: Any,
                  checked: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None
                  ) -> Callable[..., Any]:
    """A public function that dispatches ``spec`` (with ``np_func``'s name and doc);
    ``checked``: what the Python path is wrapped in (a check NumPy makes first, on calls
    the compiled path leaves to it)."""

    name = spec.name
    mean = name == "mean"
    # a reduction of one array (np.count_nonzero(a), np.mean(a)) on the host: NumPy's call
    # at once, as the general path would make it (behind its compiled twin, "unary")
    impl = host_impl(spec) if spec.family == "reduction" else None
    if isinstance(impl, ThreadedMean):  # (below every floor: NumPy's own, without a check)
        impl = impl.function

    def function(*args: Any, **kwargs: Any) -> Any:
        if mean and PENDING_CHAIN[0] and len(args) == 1 and not kwargs \
                and type(args[0]) is ndarray:
            found = fused_sum(args[0], mean=True)  # (made as its pending chain runs)
            if found is not DECLINED:
                return found
        if impl is not None and len(args) == 1 and not kwargs and alone_on_host(spec, args[0]):
            data = args[0]._native
            tick()
            return cpu_result(impl(data), args, (data,))
        if len(args) > 2:  # (out= is never among the first two)
            args, kwargs = _out_by_keyword(np_func, args, kwargs)
        result = call(spec, args, kwargs)
        return of_inputs(args, result, kwargs, name) if SUBCLASSES else result

    named = _named(function, np_func, spec.name)
    if checked is not None:
        named = checked(named)
    # (no out=; no GPU usable, or host data below the bound: compiled; a reduction's one
    # array alone by the "unary" kind, which is the "function" kind for more arguments)
    found = _out_on(np_func)
    positional = ANY_NUMBER if found is None else found[0]
    if impl is not None:
        return compiled("unary", impl, named, other=cpu_result, family=spec.family,
                        positional=positional)
    func = host_impl(spec)
    if isinstance(func, ThreadedWhere):  # (NumPy's own: the compiled path sends a call
        func = func.function  # from the floor of SPLIT_FUNCTIONS on, to the split)
    return compiled("function", func, named, other=cpu_result, family=spec.family,
                    positional=positional, threads=SPLIT_FUNCTIONS.get(name))


def cpu_function(np_func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A public function NumPy alone runs: inputs move to the host, results are wrapped."""
    spec = OpSpec(name, name, "copy", where="cpu", cpu_impl=np_func)
    return make_function(spec, np_func)


def writing_function(np_func: Callable[..., Any], param: str,
                     skip: Callable[..., bool] | None,
                     other: Callable[..., Any] | None) -> Callable[..., Any]:
    """``put``, ``place``, ...: NumPy writes into the host data of the target, wherever it
    lives (a device array through a host copy, copied back), and the write is recorded.
    ``other`` runs the calls that ``skip`` says write nothing."""

    def function(*args: Any, **kwargs: Any) -> Any:
        if skip is not None and skip(args, kwargs):
            return other(*args, **kwargs)  # type: ignore[misc]
        target = args[0] if args else kwargs.get(param)
        if type(target) is not ndarray:
            return np_func(*cpu_arg(args), **{k: cpu_arg(v) for k, v in kwargs.items()})
        device = target._device
        before_write()
        host = R.host_to_write(target)  # read-only as target is: NumPy refuses the write
        if args:
            args = (host, *cpu_arg(args[1:]))
        kwargs = {k: host if k == param else cpu_arg(v) for k, v in kwargs.items()}
        tick()
        result = np_func(*args, **kwargs)
        if device is not CPU:
            write_back(target._native, device, host)
        R.mark_written(target)
        return target if result is host else result

    function.__name__ = getattr(np_func, "__name__", param)
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(np_func, "__doc__", None)
    function.__module__ = "autodev"
    function.__wrapped__ = np_func  # type: ignore[attr-defined]  # NumPy's signature
    return function
