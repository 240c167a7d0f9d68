"""The function table: every public NumPy name, and how autodev runs it.

``SPECS`` is the capability table the dispatcher, the tests and the docs read:
one :class:`~autodev._dispatch.OpSpec` per dispatched name (its family, whether
it runs where its input lives, and where each backend finds it). Names not in
the table run on the CPU, their inputs moved to the host once.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from . import _residency as R
from ._array import PLAIN_SCALARS as _PLAIN, _DECIDE, _in_place, _index_native, ndarray
from ._backends import STATE, active_gpu, backend_for, note_pinned, resolve_device
from ._config import get_policy
from ._device import AUTO, CPU, Device
from ._gpu_checks import GPU_WRAPPERS, TABLE, UFUNC_METHODS, gpu_rules, imitate_operands, \
    ufunc_at_ok, ufunc_method_rule
from ._gpu_corrections import device_operands, ufunc_list_operands
from ._dispatch import OpSpec, call, cpu_arg, new, placed, tiny_on_host
from ._dlpack import from_dlpack
from ._memory import in_place_on_host, retrying, write_back
from ._subclass import SUBCLASSES, of_inputs
from ._trace import tick

TRANSCENDENTAL = frozenset(
    "sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh "
    "exp exp2 expm1 log log2 log10 log1p logaddexp logaddexp2 power float_power sqrt cbrt "
    "hypot deg2rad rad2deg degrees radians".split()
)

#: Dispatched functions of the main namespace, by cost family.
FAMILY_FUNCTIONS: dict[str, str] = {
    "reduction": (
        "sum prod mean std var min max amin amax argmin argmax any all cumsum cumprod "
        "nansum nanprod nanmean nanstd nanvar nanmin nanmax nanargmin nanargmax nancumsum "
        "nancumprod median nanmedian percentile nanpercentile quantile nanquantile average "
        "ptp count_nonzero trace allclose array_equal array_equiv cumulative_sum "
        "cumulative_prod"
    ),
    "matmul": "dot vdot inner outer tensordot einsum kron vecdot matvec vecmat",
    "sort": "sort argsort lexsort partition argpartition unique searchsorted",
    "copy": (
        "where concatenate concat stack vstack hstack dstack column_stack take "
        "take_along_axis repeat tile flip fliplr flipud roll rot90 diff ediff1d gradient "
        "diag diagflat tril triu pad nonzero argwhere flatnonzero isclose clip around "
        "round copy extract select choose compress interp convolve correlate bincount "
        "digitize append insert delete resize trim_zeros isin cross nan_to_num "
        "real_if_close unwrap sinc i0 angle real imag conj conjugate"
    ),
    "primary": (
        "reshape ravel transpose swapaxes moveaxis rollaxis squeeze expand_dims "
        "broadcast_to broadcast_arrays atleast_1d atleast_2d atleast_3d diagonal "
        "permute_dims matrix_transpose split array_split hsplit vsplit dsplit "
        "zeros_like ones_like empty_like full_like meshgrid ascontiguousarray "
        "asfortranarray"
    ),
}
_SCALAR_FAMILIES = frozenset({"reduction", "matmul"})

LINALG_FUNCTIONS: dict[str, str] = {
    "solve": "solve inv det slogdet lstsq tensorsolve tensorinv matrix_power",
    "cholesky": "cholesky qr",
    "svd": "svd svdvals pinv matrix_rank cond",
    "eigh": "eigh eigvalsh eig eigvals",
    "reduction": "norm vector_norm matrix_norm trace",
    "matmul": "multi_dot matmul tensordot vecdot outer cross",
    "primary": "diagonal matrix_transpose",
}
FFT_FUNCTIONS: dict[str, str] = {
    "fft": "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft",
    "primary": "fftshift ifftshift",
}
CREATION = frozenset(
    "zeros ones empty full arange linspace logspace geomspace eye identity tri".split()
)

SPECS: dict[str, OpSpec] = {}

_np_ndarray = np.ndarray
_onew = object.__new__
_FAST = False  # mirrors STATE.fast (see autodev._array._FAST)
_HOST_FAST = False  # mirrors STATE.host_fast (see autodev._array._HOST_FAST)


def _sync_fast() -> None:
    global _FAST, _HOST_FAST
    _FAST = STATE.fast
    _HOST_FAST = STATE.host_fast


STATE.listeners.append(_sync_fast)


#: Specs whose GPU function lives elsewhere: name -> (GPU path, CPU implementation).
_ELSEWHERE: dict[str, tuple[str, Any]] = {
    # cupy.linalg has no diagonal: the GPU runs the main one (its row's correction)
    "linalg.diagonal": ("diagonal", getattr(np.linalg, "diagonal", None)),
}


#: Dispatched names -> their NumPy functions, whose array operands are converted for
#: CuPy (``autodev._gpu_corrections.device_operands``) and refused by the sim.
OPERANDS: dict[str, Any] = {}


def _build_specs(prefix: str, module: Any, table: dict[str, str]) -> None:
    rules = gpu_rules()
    for family, names in table.items():
        for name in names.split():
            np_func = getattr(module, name, None)
            if np_func is None:
                continue  # not in this NumPy version
            where = "primary" if family == "primary" else "dispatch"
            full = prefix + name
            path, cpu_impl = _ELSEWHERE.get(full, (full, None))
            wrap = GPU_WRAPPERS.get(full)
            if where == "dispatch":
                OPERANDS[full] = np_func
                wrap = device_operands(np_func, wrap)
            SPECS[full] = OpSpec(
                full, path, "copy" if where == "primary" else family,
                where, scalar=(family in _SCALAR_FAMILIES or name in _SCALAR_LINALG
                               or name in _SCALAR_OTHERS) and name not in _ARRAY_ALWAYS,
                cpu_impl=cpu_impl, gpu_ok=rules.get(full), gpu_wrap=wrap,
            )


_SCALAR_LINALG = frozenset({"det", "slogdet", "norm", "cond", "matrix_rank", "vector_norm",
                            "matrix_norm", "trace"})
#: Functions outside those families for which NumPy turns a 0-d result into a scalar.
_SCALAR_OTHERS = frozenset({"round", "around", "clip", "interp", "angle", "nan_to_num", "take",
                            "isclose", "sinc", "searchsorted", "choose"})
#: Functions in those families for which NumPy returns a 0-d result as an array.
_ARRAY_ALWAYS = frozenset({"tensordot"})


# ---------------------------------------------------------------------- ufuncs

class ufunc:
    """A NumPy ufunc that dispatches: ``__call__``, ``reduce``, ``accumulate``,
    ``reduceat``, ``outer`` and ``at``, with NumPy's attributes (``nin``, ``nout``,
    ``identity``, ``types``, ...)."""

    def __init__(self, np_ufunc: Any, path: str, family: str, *, numpy: bool = True,
                 where: str = "dispatch", gpu_ok: Any = None) -> None:
        self._np = np_ufunc
        self.__name__ = np_ufunc.__name__
        self.__doc__ = np_ufunc.__doc__
        name = np_ufunc.__name__
        # NumPy's ufuncs follow the capability table's ufunc rows; others (scipy.special's,
        # frompyfunc's) give their own rule or run on the CPU
        cpu = where == "cpu"
        self._spec = OpSpec(name, path, family, where, scalar=True,
                            cpu_impl=np_ufunc if cpu else None,
                            gpu_ok=_UFUNC_RULE if numpy else gpu_ok,
                            gpu_wrap=TABLE["ufunc"].correction if numpy else
                            None if cpu else ufunc_list_operands(np_ufunc.nin))
        self._methods = {
            method: OpSpec(f"{name}.{method}", f"{path}.{method}", "reduction", where,
                           scalar=method == "reduce",
                           cpu_impl=getattr(np_ufunc, method) if cpu else None,
                           gpu_ok=ufunc_method_rule(method, name) if numpy else gpu_ok)
            for method in UFUNC_METHODS
        }
        self._methods["outer"] = OpSpec(f"{name}.outer", f"{path}.outer", family, where,
                                        work=_outer_work,
                                        cpu_impl=np_ufunc.outer if cpu else None,
                                        gpu_ok=_UFUNC_RULE if numpy else gpu_ok)
        #: the family whose floor lets a tiny call on host data skip the decision (None: never)
        self._tiny = family if where == "dispatch" and family in (
            "elementwise", "transcendental") else None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if _FAST and not kwargs:
            n = len(args)
            if n == 1:
                x = args[0]
                if type(x) is ndarray:
                    tick()
                    result = self._np(x._data)
                    if type(result) is not _np_ndarray:
                        return _fast_other(result)
                    a = _onew(ndarray)  # inlined new(): this is the hottest path there is
                    a._data, a._device, a._storage, a._mirror, a._scalar, a._pin = \
                        result, CPU, None, None, False, None
                    return a
            elif n == 2:
                x, y = args
                if type(x) is ndarray and (type(y) is ndarray or type(y) in _PLAIN):
                    tick()
                    result = self._np(x._data, y._data if type(y) is ndarray else y)
                    if type(result) is not _np_ndarray:
                        return _fast_other(result)
                    a = _onew(ndarray)
                    a._data, a._device, a._storage, a._mirror, a._scalar, a._pin = \
                        result, CPU, None, None, False, None
                    return a
        elif _HOST_FAST and not kwargs and self._tiny is not None:
            result = self._tiny_on_host(args)
            if result is not _DECIDE:
                return result
        result = call(self._spec, args, kwargs)
        return of_inputs(args, result) if SUBCLASSES else result

    def _tiny_on_host(self, args: tuple[Any, ...]) -> Any:
        """NumPy's ufunc on host operands below the model's floor under ``auto`` (the
        decision the full prediction would make), else :data:`_DECIDE`."""
        x = args[0] if args else None
        if type(x) is not ndarray or x._device is not CPU:
            return _DECIDE
        if len(args) == 1:
            operands, size = (x._data,), x._data.size
        elif len(args) == 2:
            y = args[1]
            if type(y) is ndarray and y._device is CPU:
                operands, size = (x._data, y._data), max(x._data.size, y._data.size)
            elif type(y) in _PLAIN:
                operands, size = (x._data, y), x._data.size
            else:
                return _DECIDE
        else:
            return _DECIDE
        if not tiny_on_host(self._tiny, size):
            return _DECIDE
        tick()
        result = self._np(*operands)
        return _fast_other(result) if type(result) is not _np_ndarray else new(result, CPU)

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._methods["reduce"], args, kwargs)

    def accumulate(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._methods["accumulate"], args, kwargs)

    def reduceat(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._methods["reduceat"], args, kwargs)

    def outer(self, *args: Any, **kwargs: Any) -> Any:
        return call(self._methods["outer"], args, kwargs)

    def at(self, a: ndarray, indices: Any, b: Any = None) -> None:
        """Unbuffered in-place operation on ``a`` at ``indices`` (runs where ``a`` lives)."""
        device = a._device
        func = None if device is CPU or not ufunc_at_ok(self.__name__, a.dtype) \
            else backend_for(device).resolve(self._spec.path + ".at")
        on_host = (lambda host: self._np.at(host, cpu_arg(indices),
                                            *(cpu_arg(b),) if b is not None else ()))
        if device is CPU:
            on_host(a._data)
        elif func is None:  # declared: this ufunc has no device ``at``; apply it on the host
            in_place_on_host(self.__name__ + ".at", a, on_host)
        else:
            def on_device() -> None:
                key = _index_native(indices, device, a.shape)  # bounds checked as NumPy does
                func(a._data, key, *(() if b is None else (_native(b, device),)))

            retrying(self.__name__ + ".at", device, on_device,
                     lambda: in_place_on_host(self.__name__ + ".at", a, on_host))
        R.mark_written(a)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._np, name)

    def __repr__(self) -> str:
        return f"<autodev ufunc '{self.__name__}'>"


#: The capability rule of a NumPy ufunc's call on the GPU (its keywords CuPy takes).
_UFUNC_RULE = gpu_rules()["ufunc"]


def _fast_other(result: Any) -> Any:
    """A fast-path result that is not an array: a scalar, or a tuple (``frexp``, ``divmod``)."""
    if type(result) is tuple:
        return tuple(new(r, CPU) if type(r) is _np_ndarray else r for r in result)
    return result


def _native(obj: Any, device: Device) -> Any:
    from ._dispatch import native_arg

    return native_arg(obj, device, None)


def _outer_work(arrays: list[Any]) -> float:
    size = 1
    for a in arrays[:2]:
        size *= a.size
    return size


UFUNCS: dict[str, ufunc] = {}


def _family_of_ufunc(name: str) -> str:
    if name == "matmul":
        return "matmul"
    return "transcendental" if name in TRANSCENDENTAL else "elementwise"


def _build_ufuncs() -> None:
    # NumPy's namespace as loaded (its ufuncs all are): ``getattr`` over ``dir(np)`` would
    # import every lazy submodule (f2py, testing, ma, polynomial, ...) at ``import autodev``
    names = {name: value for name, value in vars(np).items() if not name.startswith("_")}
    for name, value in names.items():
        if isinstance(value, np.ufunc) and value.__name__ not in UFUNCS:
            UFUNCS[value.__name__] = ufunc(value, value.__name__, _family_of_ufunc(value.__name__))
    for alias, value in names.items():
        if isinstance(value, np.ufunc):
            SPECS.setdefault(alias, UFUNCS[value.__name__]._spec)


def ufunc_spec(name: str) -> OpSpec:
    """The spec of the NumPy ufunc called ``name`` (used by the operators)."""
    if name == "divmod":
        return UFUNCS["divmod"]._spec
    return UFUNCS[getattr(np, name).__name__]._spec


_FOREIGN_UFUNCS: dict[Any, ufunc] = {}


def ufunc_for(np_ufunc: Any) -> ufunc | None:
    """The autodev ufunc standing for ``np_ufunc`` (NumPy's or ``scipy.special``'s)."""
    found = UFUNCS.get(np_ufunc.__name__)
    if found is not None and found._np is np_ufunc:
        return found
    found = _FOREIGN_UFUNCS.get(np_ufunc)
    if found is None:
        import scipy.special

        name = np_ufunc.__name__
        public = getattr(scipy.special, name, None)
        # SCIPY_ARRAY_API=1 wraps each scipy.special ufunc in a function (__wrapped__)
        if public is np_ufunc or getattr(public, "__wrapped__", None) is np_ufunc:
            from .scipy.special import ufunc_options  # its GPU capability table

            found = ufunc(np_ufunc, f"scipy.special.{name}", "transcendental", numpy=False,
                          **ufunc_options(name))
        else:  # a ufunc only NumPy can run (e.g. numpy.frompyfunc)
            found = ufunc(np_ufunc, name, "elementwise", numpy=False, where="cpu")
        _FOREIGN_UFUNCS[np_ufunc] = found
    return found


# ---------------------------------------------------------------------- functions

def _named(function: Callable[..., Any], np_func: Any, name: str) -> Callable[..., Any]:
    """Give a public wrapper NumPy's name and docstring, in module ``autodev``."""
    function.__name__ = getattr(np_func, "__name__", name)
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(np_func, "__doc__", None)
    function.__module__ = "autodev"
    function.__wrapped__ = np_func  # type: ignore[attr-defined]  # inspect.signature, help()
    return function


def make_function(spec: OpSpec, np_func: Any) -> Callable[..., Any]:
    """A public function that dispatches ``spec`` (with ``np_func``'s name and doc)."""

    def function(*args: Any, **kwargs: Any) -> Any:
        return call(spec, args, kwargs)

    return _named(function, np_func, spec.name)


#: Reductions that NumPy itself implements as ``ufunc.reduce(a, axis=None, ...)`` for
#: ndarray input; called so directly, they skip ``numpy.sum``'s Python-level wrapper.
_REDUCE_AS: dict[str, tuple[Any, frozenset[str]]] = {
    "sum": (np.add, frozenset({"axis", "dtype", "keepdims"})),
    "prod": (np.multiply, frozenset({"axis", "dtype", "keepdims"})),
    "max": (np.maximum, frozenset({"axis", "keepdims"})),
    "amax": (np.maximum, frozenset({"axis", "keepdims"})),
    "min": (np.minimum, frozenset({"axis", "keepdims"})),
    "amin": (np.minimum, frozenset({"axis", "keepdims"})),
}


def make_reduction(spec: OpSpec, np_func: Any, reducer: Any,
                   fast_keys: frozenset[str]) -> Callable[..., Any]:
    """``sum``, ``max``, ...: on the fast path ``a`` alone (or with ``axis``, ``dtype``,
    ``keepdims``) goes straight to ``ufunc.reduce``, as ``numpy.sum`` itself ends up doing."""
    reduce = reducer.reduce

    def function(*args: Any, **kwargs: Any) -> Any:
        if (_FAST or _HOST_FAST) and len(args) == 1 and type(args[0]) is ndarray \
                and fast_keys.issuperset(kwargs) and (_FAST or _tiny_host(args[0], spec)):
            tick()
            result = reduce(args[0]._data, **({"axis": None} | kwargs))
            if type(result) is not _np_ndarray:
                return result
            return new(result, CPU)
        return call(spec, args, kwargs)

    return _named(function, np_func, spec.name)


def _tiny_host(a: ndarray, spec: OpSpec) -> bool:
    """True if ``a`` is on the host and a call of ``spec`` on it is below the model's floor
    under ``auto``: the CPU runs it whatever else holds (a GPU usable, nothing watched)."""
    return a._device is CPU and tiny_on_host(spec.family, a._data.size)


def cpu_function(np_func: Callable[..., Any], name: str) -> Callable[..., Any]:
    """A public function NumPy alone runs: inputs move to the host, results are wrapped."""
    spec = OpSpec(name, name, "copy", where="cpu", cpu_impl=np_func)
    return make_function(spec, np_func)


def _copies(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``nan_to_num``'s ``copy`` argument (False: it writes into ``x``)."""
    return bool(kwargs.get("copy", args[1] if len(args) > 1 else True))


#: NumPy functions that write into their first argument (its name), and for those that
#: do so only sometimes, the rule saying when they do not.
WRITES_INTO: dict[str, tuple[str, Callable[..., bool] | None]] = {
    "put": ("a", None), "place": ("arr", None), "putmask": ("a", None),
    "fill_diagonal": ("a", None), "put_along_axis": ("arr", None),
    "nan_to_num": ("x", _copies),
}


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
        host = target._data if device is CPU else R.transfer(target._data, device, CPU)
        if args:
            args = (host, *cpu_arg(args[1:]))
        kwargs = {k: host if k == param else cpu_arg(v) for k, v in kwargs.items()}
        tick()
        result = np_func(*args, **kwargs)
        if device is not CPU:
            write_back(target._data, device, host)
        R.mark_written(target)
        return target if result is host else result

    function.__name__ = getattr(np_func, "__name__", param)
    function.__qualname__ = function.__name__
    function.__doc__ = getattr(np_func, "__doc__", None)
    function.__module__ = "autodev"
    function.__wrapped__ = np_func  # type: ignore[attr-defined]  # NumPy's signature
    return function


def creation_device(device: Any) -> Device:
    """Where a creation call puts its array: ``device=``, else the policy's choice."""
    if device is not None:
        target = resolve_device(device)
        if target is not AUTO:
            return target
    if get_policy() == "gpu":
        gpu = active_gpu()
        if gpu is not None:
            return gpu.device
    return CPU


def make_creation(name: str) -> Callable[..., Any]:
    """``zeros``, ``arange``, ...: made on the host, or on ``device=`` / the GPU policy's device."""
    np_func = getattr(np, name)
    takes_arrays = name in _ARRAY_ARGUMENTS

    if not takes_arrays:
        def plain(*args: Any, **kwargs: Any) -> Any:
            # with a GPU usable, only the GPU policy (or device=) makes arrays elsewhere
            if (_FAST or (_HOST_FAST and get_policy() != "gpu")) and "device" not in kwargs \
                    and "like" not in kwargs:
                result = np_func(*args, **kwargs)
                if type(result) is _np_ndarray:
                    a = _onew(ndarray)
                    a._data, a._device, a._storage, a._mirror, a._scalar, a._pin = \
                        result, CPU, None, None, False, None
                    return a
                return _created(result, CPU)
            return function(*args, **kwargs)

        public = plain
    else:
        public = None

    def function(*args: Any, **kwargs: Any) -> Any:
        if takes_arrays:
            args = tuple(_creation_arg(a) for a in args)
            kwargs = {k: _creation_arg(v) for k, v in kwargs.items()}
        if _FAST and "device" not in kwargs and "like" not in kwargs:
            return _created(np_func(*args, **kwargs), CPU)
        device = kwargs.pop("device", None)
        kwargs.pop("like", None)
        target = creation_device(device)
        if target is CPU:
            return _pinned(_created(np_func(*args, **kwargs), CPU), device)
        func = backend_for(target).resolve(name)
        if func is None or (takes_arrays and any(
                type(a) is np.ndarray for a in (*args, *kwargs.values()))):
            return _pinned(place(name, np_func(*args, **kwargs), target), device)
        return _pinned(retrying(name, target, lambda: _created(func(*args, **kwargs), target),
                                lambda: _created(np_func(*args, **kwargs), CPU)), device)

    result = public or function
    result.__name__ = name
    result.__qualname__ = name
    result.__doc__ = np_func.__doc__
    result.__module__ = "autodev"
    result.__wrapped__ = np_func  # type: ignore[attr-defined]  # NumPy's signature
    return result


#: Creation functions whose arguments may be arrays (``linspace(start, stop)``).
_ARRAY_ARGUMENTS = frozenset({"linspace", "logspace", "geomspace", "full"})


def _creation_arg(value: Any) -> Any:
    """An autodev array argument as host data (a NumPy scalar when 0-d)."""
    if type(value) is not ndarray:
        return value
    host = cpu_arg(value)
    return host[()] if host.ndim == 0 else host


def _pinned(result: Any, device: Any) -> Any:
    """A created array pinned where ``device=`` asked (None or ``"auto"``: not pinned)."""
    if device is None:
        return result
    target = resolve_device(device)
    if target is AUTO:
        return result
    note_pinned()
    for a in result if type(result) is tuple else (result,):
        if type(a) is ndarray:
            a._pin = target
    return result


def place(op: str, host: Any, target: Device, storage: R.Storage | None = None) -> ndarray:
    """A new array with the data of NumPy ``host`` on ``target``; out of memory there,
    it stays on the host (counted, warned: :func:`autodev._memory.retrying`)."""
    if target is CPU:
        return new(host, CPU, storage)
    if type(host) is tuple:  # linspace(retstep=True)
        array, step = host
        return place(op, array, target), step
    return retrying(op, target, lambda: new(R.transfer(host, CPU, target), target),
                    lambda: new(host, CPU, storage))


def _created(result: Any, device: Device) -> Any:
    """Wrap a creation result; ``linspace(..., retstep=True)`` gives ``(array, step)``."""
    if type(result) is tuple:
        array, step = result
        if backend_for(device).is_native(step):  # a step is a NumPy scalar, as NumPy gives
            step = R.transfer(step, device, CPU)[()]
        return new(array, device), step
    return new(result, device)


def array(obj: Any, dtype: Any = None, *, copy: bool | None = True, order: str = "K",
          subok: bool = False, ndmin: int = 0, like: Any = None, device: Any = None) -> ndarray:
    """Create an array (NumPy's ``array``), on ``device=`` or where ``obj`` lives."""
    if type(obj) is ndarray and device is None:
        data = obj._data
        if copy is False:
            result = data.astype(dtype, copy=False) if dtype is not None else data
            if result is not data:
                raise ValueError("Unable to avoid copy while creating an array as requested.")
            return obj if ndmin <= obj.ndim else new(_ndmin(data, ndmin), obj._device,
                                                     R.storage_of(obj), False, obj._pin)
        xp = backend_for(obj._device).xp
        return retrying("array", obj._device, lambda: new(xp.array(
            data, dtype=dtype, copy=True, order=order, ndmin=ndmin), obj._device, None, False,
            obj._pin), lambda: new(np.array(obj._host(), dtype=dtype, copy=True, order=order,
                                            ndmin=ndmin), CPU, None, False, obj._pin))
    if type(obj) is ndarray:  # to another device, or placed as ``device=`` says
        return placed(array(obj, dtype, copy=copy, order=order, ndmin=ndmin), device)
    host = np.array(cpu_arg(obj), dtype=dtype, copy=copy, order=order, ndmin=ndmin)
    target = creation_device(device)
    escaped = copy is False or (copy is None and type(obj) is np.ndarray and host is obj)
    return _pinned(place("array", host, target, R.Storage(escaped=True) if escaped else None),
                   device)


def _ndmin(data: Any, ndmin: int) -> Any:
    return data.reshape((1,) * (ndmin - data.ndim) + data.shape)


def asarray(obj: Any, dtype: Any = None, order: str | None = None, *, device: Any = None,
            copy: bool | None = None, like: Any = None) -> ndarray:
    """Convert to an autodev array without copying where possible (NumPy's ``asarray``)."""
    if type(obj) is ndarray:
        moved = obj if device is None else obj.to_device(device)
        if dtype is None or np.dtype(dtype) == obj.dtype:
            if not copy:
                return moved
        return array(moved, dtype=dtype, copy=False if copy is False else bool(copy) or None)
    gpu = STATE.gpu
    if gpu is not None and gpu.is_native(obj):
        return new(obj, gpu.device, R.Storage(escaped=True))
    host = np.asarray(obj, dtype=dtype, order=order, copy=copy)
    shared = host is obj or host.base is not None
    storage = R.Storage(escaped=True) if shared else None
    target = creation_device(device) if device is not None else CPU
    return _pinned(place("asarray", host, target, storage), device)


def asanyarray(obj: Any, dtype: Any = None, order: str | None = None, **kwargs: Any) -> ndarray:
    """Same as :func:`asarray` (autodev has no ndarray subclasses)."""
    return asarray(obj, dtype=dtype, order=order, **kwargs)


# ---------------------------------------------------------------------- metadata

def shape(a: Any) -> tuple[int, ...]:
    """Shape of ``a`` (no transfer)."""
    return a.shape if type(a) is ndarray else np.shape(a)


def ndim(a: Any) -> int:
    """Number of dimensions of ``a`` (no transfer)."""
    return a.ndim if type(a) is ndarray else np.ndim(a)


def size(a: Any, axis: int | None = None) -> int:
    """Number of elements of ``a`` (no transfer)."""
    if type(a) is ndarray:
        return a.size if axis is None else a.shape[axis]
    return np.size(a, axis)


def _meta(x: Any) -> Any:
    return x.dtype if type(x) is ndarray and not x._scalar else (
        np.empty((), x.dtype) if type(x) is ndarray else x)


def result_type(*arrays_and_dtypes: Any) -> np.dtype:
    """NumPy's ``result_type`` (reads dtypes only)."""
    return np.result_type(*(_meta(x) for x in arrays_and_dtypes))


def iscomplexobj(x: Any) -> bool:
    """True if ``x`` has a complex dtype (no transfer)."""
    return x.dtype.kind == "c" if type(x) is ndarray else np.iscomplexobj(x)


def isrealobj(x: Any) -> bool:
    """True if ``x`` does not have a complex dtype (no transfer)."""
    return not iscomplexobj(x)


def isscalar(element: Any) -> bool:
    """True for scalars, including autodev's device-resident scalar results."""
    return element._scalar if type(element) is ndarray else np.isscalar(element)


def may_share_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """NumPy's ``may_share_memory`` on the data where it lives."""
    if type(a) is ndarray and type(b) is ndarray:
        if a._device is not b._device:
            return False
        if a._device is not CPU:
            return a._storage is not None and a._storage is b._storage
    return bool(np.may_share_memory(cpu_arg(a), cpu_arg(b)))


def shares_memory(a: Any, b: Any, max_work: Any = None) -> bool:
    """NumPy's ``shares_memory`` on the data where it lives."""
    if type(a) is ndarray and type(b) is ndarray and a._device is not CPU:
        return may_share_memory(a, b)
    return bool(np.shares_memory(cpu_arg(a), cpu_arg(b)))


def copyto(dst: ndarray, src: Any, casting: str = "same_kind", where: Any = True) -> None:
    """Copy ``src`` into ``dst`` where ``dst`` lives (NumPy's ``copyto``)."""
    from ._dispatch import native_arg

    if type(dst) is not ndarray:  # a NumPy destination
        np.copyto(dst, cpu_arg(src), casting=casting, where=cpu_arg(where))
        return
    def copy(data: Any, device: Device) -> None:
        xp = backend_for(device).xp
        xp.copyto(data, native_arg(src, device, None), casting=casting,
                  where=native_arg(where, device, None))

    _in_place(dst, "copyto", copy)


DIRECT: dict[str, Callable[..., Any]] = {
    "array": array, "asarray": asarray, "asanyarray": asanyarray, "shape": shape,
    "ndim": ndim, "size": size, "result_type": result_type, "iscomplexobj": iscomplexobj,
    "isrealobj": isrealobj, "isscalar": isscalar, "may_share_memory": may_share_memory,
    "shares_memory": shares_memory, "copyto": copyto, "from_dlpack": from_dlpack,
}


# ---------------------------------------------------------------------- resolution

def resolve_name(module: Any, prefix: str, name: str) -> Any:
    """What ``autodev<prefix>.name`` is: dispatched function, CPU function or NumPy object."""
    if prefix == "" and name in DIRECT:
        return DIRECT[name]
    if prefix == "" and name in CREATION:
        return make_creation(name)
    if prefix == "" and name == "ndarray":
        return ndarray
    value = getattr(module, name)  # AttributeError propagates: not a NumPy name
    if prefix == "" and isinstance(value, np.ufunc):
        return UFUNCS[value.__name__]
    spec = SPECS.get(prefix + name)
    if prefix == "" and name in WRITES_INTO:
        return writing_function(value, *WRITES_INTO[name],
                                make_function(spec, value) if spec is not None else None)
    if spec is not None:
        if prefix == "" and name in _REDUCE_AS:
            return make_reduction(spec, value, *_REDUCE_AS[name])
        function = make_function(spec, value)
    elif _is_plain_function(value):
        function = cpu_function(value, prefix + name)
    else:
        return value  # dtypes, constants, classes (errstate, finfo, ...), submodules
    return placing(function) if prefix + name in PLACED else function


#: Functions whose ``device=`` NumPy accepts as "cpu" only: autodev takes any device
#: (``device=x.device``), runs the call where it would run anyway and puts the result there.
PLACED = frozenset({"zeros_like", "ones_like", "empty_like", "full_like", "fft.fftfreq",
                    "fft.rfftfreq"})


def placing(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` taking ``device=`` as an autodev device (or a string naming one)."""

    def placed(*args: Any, device: Any = None, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        return result if device is None else result.to_device(device)

    return functools.update_wrapper(placed, function)


def _is_plain_function(value: Any) -> bool:
    return callable(value) and not isinstance(value, type) and (
        type(value).__name__ in ("function", "builtin_function_or_method",
                                 "_ArrayFunctionDispatcher", "cython_function_or_method")
    )


@functools.lru_cache(maxsize=None)
def _numpy_index() -> dict[int, tuple[str, str]]:
    """id(numpy function) -> (prefix, name) for numpy, numpy.linalg, numpy.fft."""
    index: dict[int, tuple[str, str]] = {}
    for prefix, module in (("fft.", np.fft), ("linalg.", np.linalg), ("", np)):
        for name in dir(module):
            if not name.startswith("_"):
                index[id(getattr(module, name))] = (prefix, name)
    return index


_FOREIGN_FUNCTIONS: dict[Any, Callable[..., Any]] = {}


def function_for(func: Callable[..., Any]) -> Callable[..., Any] | None:
    """The autodev function standing for the NumPy function ``func``."""
    found = _numpy_index().get(id(func))
    if found is not None:
        import autodev

        prefix, name = found
        module = {"": autodev, "linalg.": autodev.linalg, "fft.": autodev.fft}[prefix]
        return getattr(module, name)
    wrapper = _FOREIGN_FUNCTIONS.get(func)
    if wrapper is None:
        wrapper = _FOREIGN_FUNCTIONS[func] = cpu_function(func, getattr(func, "__name__", "?"))
    return wrapper


_build_specs("", np, FAMILY_FUNCTIONS)
_build_specs("linalg.", np.linalg, LINALG_FUNCTIONS)
_build_specs("fft.", np.fft, FFT_FUNCTIONS)
imitate_operands(OPERANDS)  # the simulated GPU refuses host operands, as CuPy does
_build_ufuncs()
