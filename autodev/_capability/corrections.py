"""Corrections: NumPy's behaviour around CuPy's functions, written once over a backend.

Each factory takes a GPU backend and the GPU function and returns a function with
NumPy's signature and NumPy's behaviour: the checks CuPy skips (index bounds, one
synchronising device reduction), the keywords it lacks, the operands it cannot read
(lists, NumPy scalars), the result types it differs in. The capability table
(``autodev._capability.table.TABLE``) says which correction each name gets.
"""

from __future__ import annotations

import inspect
import operator
from typing import Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index  # AxisError, as NumPy's

from .._backends import Backend
from .._typing import Axes, Axis, FieldOrder, NativeArray

Func = Callable[..., Any]


Factory = Callable[[Backend, Func], Func]


def _out_of_range(xp: Any, indices: Any, n: int) -> bool:
    idx = indices if hasattr(indices, "dtype") else xp.asarray(indices)
    if idx.size == 0 or idx.dtype.kind not in "iu":
        return False
    return bool(xp.any((idx < -n) | (idx >= n)))


def checked_take(backend: Backend, func: Func) -> Func:
    """``take`` that raises IndexError for out-of-range indices under ``mode='raise'``,
    and applies ``mode='wrap'``/``'clip'`` itself (CuPy's ``take`` takes no ``mode``)."""
    xp = backend.xp

    def take(a: NativeArray, indices: Any, axis: int | None = None, out: Any = None,
             mode: str = "raise") -> Any:
        n = a.size if axis is None else a.shape[normalize_axis_index(axis, a.ndim)]
        if mode == "raise":
            if _out_of_range(xp, indices, n):
                raise IndexError(f"index out of range for axis {axis} with size {n}")
        elif n:  # CuPy's take has no ``mode=`` (it always wraps): apply NumPy's here
            idx = indices if hasattr(indices, "dtype") else xp.asarray(indices)
            indices = idx % n if mode == "wrap" else xp.clip(idx, 0, n - 1)
        return func(a, indices, axis=axis, out=out)

    return take


def checked_take_along_axis(backend: Backend, func: Func) -> Func:
    """``take_along_axis`` that raises IndexError for out-of-range indices."""
    xp = backend.xp

    def take_along_axis(arr: NativeArray, indices: Any, axis: int | None = -1) -> Any:
        n = arr.size if axis is None else arr.shape[normalize_axis_index(axis, arr.ndim)]
        if _out_of_range(xp, indices, n):
            raise IndexError(f"index out of range for axis {axis} with size {n}")
        return func(arr, indices, axis)

    return take_along_axis


def checked_choose(backend: Backend, func: Func) -> Func:
    """``choose`` that raises ValueError for entries outside the choices under ``mode='raise'``."""
    xp = backend.xp

    def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        if mode == "raise":
            idx = a if hasattr(a, "dtype") else xp.asarray(a)
            if idx.size and bool(xp.any((idx < 0) | (idx >= len(choices)))):
                raise ValueError("invalid entry in choice array")
        return func(a, choices, out=out, mode=mode)

    return choose


#: ``method=`` values CuPy 14.2's percentile/quantile implement: others raise ValueError
#: ("'hazen' method is not yet supported"), as a run on an H100 showed for inverted_cdf,
#: hazen, weibull, median_unbiased and normal_unbiased, which CuPy's later sources have.
QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


#: Those that interpolate (the others pick elements, in the input's dtype, as NumPy).
INTERPOLATING = frozenset({"linear", "midpoint", "hazen", "weibull", "median_unbiased",
                           "normal_unbiased"})


def check_sort_kind(kind: object) -> None:
    """Raise NumPy's ValueError for a ``kind`` NumPy does not know (it reads the first letter)."""
    if kind is not None and not (isinstance(kind, str) and kind[:1].lower() in ("q", "h", "m",
                                                                                 "s")):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def check_select_kind(kind: object) -> None:
    """Raise NumPy's error for a partition ``kind`` other than 'introselect' (TypeError
    for one that is not a string, ValueError for another string)."""
    if kind != "introselect":
        np.zeros(1).partition(0, kind=kind)  # type: ignore[arg-type]  # NumPy's own error


def any_kind_sort(backend: Backend, func: Func) -> Func:
    """``sort``/``argsort``: CuPy takes only ``kind=None``/``'stable'`` (its sort is
    always stable, a valid result for every NumPy kind) and no ``stable=``."""

    def sort(a: Any, axis: Axis = -1, kind: str | None = None, order: FieldOrder = None, *,
             stable: bool | None = None) -> Any:
        check_sort_kind(kind)
        if kind is not None and stable is not None:
            raise ValueError("`kind` and keyword parameters can't be provided at the same "
                             "time. Use only one of them.")
        return func(a, axis=axis, kind="stable")

    return sort


def plain_kth(kth: Any) -> Any:
    """``kth`` as CuPy reads it: a Python int, or a tuple of them (CuPy iterates any
    other value, so a NumPy integer or a 0-d array raises TypeError there)."""
    if hasattr(kth, "ndim") and kth.ndim == 0 or isinstance(kth, (int, np.integer)):
        return operator.index(kth)
    return tuple(operator.index(k) for k in kth)


def any_kind_partition(backend: Backend, func: Func) -> Func:
    """``partition``/``argpartition``: CuPy takes no ``kind=`` (NumPy's only is
    'introselect') and ``kth`` only as Python ints."""

    def partition(a: Any, kth: Any, axis: Axis = -1, kind: str = "introselect",
                  order: FieldOrder = None) -> Any:
        check_select_kind(kind)
        return func(a, plain_kth(kth), axis=axis)

    return partition


def any_kind_argpartition_method(backend: Backend, func: Func) -> Func:
    """``ndarray.argpartition``: as :func:`any_kind_partition` for the method."""

    def argpartition(a: Any, kth: Any, axis: Axis = -1, kind: str = "introselect",
                     order: FieldOrder = None) -> Any:
        check_select_kind(kind)
        return func(a, plain_kth(kth), axis)

    return argpartition


def float_quantile(percent: bool) -> Factory:
    """``percentile``/``quantile``: CuPy computes in ``result_type(a, q)`` (``q / 100`` for
    percentile), so integer input with an integer ``q`` interpolates in integers. NumPy
    interpolates integer input in float64, and returns a dtype of its own making (int64
    for ``quantile(ints, 1)``, float64 for ``quantile(ints, 1, method='hazen')``): the
    GPU computes in float64 and casts to the dtype NumPy gives on a two-element rehearsal.
    With ``out=``, CuPy returns a view of it: ``out`` itself is returned, as NumPy does."""
    numpy_func: Callable[..., Any] = np.percentile if percent else np.quantile

    def factory(backend: Backend, func: Func) -> Func:
        xp = backend.xp

        def quantile(a: Any, q: Any, axis: Axes = None, out: Any = None,
                     overwrite_input: bool = False, method: str = "linear",
                     keepdims: bool = False) -> Any:
            if a.dtype.kind not in "iu" or method not in INTERPOLATING:
                result = func(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                              method=method, keepdims=keepdims)
                return result if out is None else out  # CuPy's is a view of out=
            dtype = numpy_func(np.zeros(2, a.dtype), _probe_q(q), method=method).dtype
            result = func(a.astype(xp.float64), q.astype(xp.float64) if hasattr(q, "dtype")
                          else q, axis=axis, overwrite_input=overwrite_input, method=method,
                          keepdims=keepdims)
            result = result.astype(dtype, copy=False)
            if out is not None:
                out[...] = result
                return out
            return result

        return quantile

    return factory


def _probe_q(q: Any) -> Any:
    """A ``q`` of the same type, dtype and shape as ``q``, with valid values (zeros)."""
    if hasattr(q, "dtype"):
        return np.zeros(q.shape, q.dtype)
    if isinstance(q, (list, tuple)):
        host = np.asarray(q)
        return np.zeros(host.shape, host.dtype)
    return type(q)(0)


def _result_types() -> dict[str, Any]:
    import numpy.linalg as la

    mod = getattr(la, "_linalg", la)
    return {name: getattr(mod, cls) for name, cls in (
        ("linalg.eigh", "EighResult"), ("linalg.eig", "EigResult"),
        ("linalg.svd", "SVDResult"), ("linalg.slogdet", "SlogdetResult"),
        ("linalg.qr", "QRResult")) if hasattr(mod, cls)}


def named_result(name: str) -> Callable[[Backend, Func], Func]:
    """``linalg.eigh``/``svd``/``slogdet``/``qr``/``eig``: CuPy returns a plain tuple where
    NumPy returns a named tuple (``EighResult(eigenvalues, eigenvectors)``, ...)."""

    def factory(backend: Backend, func: Func) -> Func:
        result_type = _result_types().get(name)

        def named(*args: Any, **kwargs: Any) -> Any:
            result = func(*args, **kwargs)
            if (result_type is not None and type(result) is tuple
                    and len(result) == len(result_type._fields)
                    and not (name == "linalg.qr" and kwargs.get("mode", args[1] if len(args) > 1
                                                                else "reduced") == "raw")):
                return result_type(*result)
            return result

        return named

    return factory


def _eig_always_complex() -> bool:
    """Whether this NumPy's ``eig``/``eigvals`` give complex results for real input even
    when every eigenvalue is real (NumPy 2.5 on; before it they come back real)."""
    return np.linalg.eigvals(np.eye(1)).dtype.kind == "c"


def real_eig(values_only: bool) -> Callable[[Backend, Func], Func]:
    """``linalg.eig``/``eigvals``: CuPy's results are complex for real input always. NumPy
    before 2.5 returns them real when every eigenvalue is real (one device reduction,
    synchronising); from 2.5 on it is complex too, and CuPy's result stands."""

    def factory(backend: Backend, func: Func) -> Func:
        xp = backend.xp
        if _eig_always_complex():
            return func

        def eig(a: NativeArray) -> Any:
            result = func(a)
            w = result if values_only else result[0]
            if a.dtype.kind != "c" and w.dtype.kind == "c" and not bool(xp.any(w.imag != 0)):
                if values_only:
                    return w.real.copy()
                return type(result)(*(r.real.copy() for r in result)) \
                    if hasattr(result, "_fields") else tuple(r.real.copy() for r in result)
            return result

        return eig

    return factory


def lstsq_host_rank(backend: Backend, func: Func) -> Func:
    """``linalg.lstsq``: CuPy's ``rank`` is a 0-d device array; NumPy's a ``numpy.int32``."""
    import numpy as np

    def lstsq(a: Any, b: Any, rcond: Any = None) -> Any:
        x, residuals, rank, s = func(a, b, rcond)
        return x, residuals, np.int32(int(rank)), s

    return lstsq


def python_bool(backend: Backend, func: Func) -> Func:
    """``allclose``/``array_equal``/``array_equiv``: NumPy returns a Python ``bool``,
    CuPy a 0-d device array."""

    def predicate(*args: Any, **kwargs: Any) -> bool:
        return bool(func(*args, **kwargs))

    return predicate


def where_operands(backend: Backend, func: Func) -> Func:
    """``where(condition, x, y)`` with ``x`` or ``y`` None: NumPy makes an object array,
    which no device holds, so the call is declined (NotImplementedError: the dispatcher
    runs it on the CPU, counted as a fallback)."""

    def where(condition: Any, *xy: Any) -> Any:
        if any(v is None for v in xy):
            raise NotImplementedError("where: a None operand makes an object array, which "
                                      "no GPU holds")
        return func(condition, *xy)

    return where


def shape_keyword(backend: Backend, func: Func) -> Func:
    """``reshape``: NumPy 2.1+ takes ``shape=`` (``newshape=`` deprecated); CuPy only
    ``newshape``. ``reshape`` runs where its input lives, so it is renamed, not moved."""

    def reshape(a: Any, *args: Any, **kwargs: Any) -> Any:
        if "shape" in kwargs:
            return func(a, kwargs.pop("shape"), *args, **kwargs)
        return func(a, *args, **kwargs)

    return reshape


def linalg_diagonal(backend: Backend, func: Func) -> Func:
    """``linalg.diagonal``: absent from ``cupy.linalg``; the main ``diagonal`` over the
    last two axes (the spec's GPU path is ``diagonal``)."""

    def diagonal(x: Any, /, *, offset: int = 0) -> Any:
        return func(x, offset, -2, -1)

    return diagonal


def upload(backend: Backend, value: Any, empty: Any = None) -> Any:
    """``value`` (a list, tuple or scalar NumPy would convert) as an array of ``backend``'s
    device, moved as a counted transfer (``autodev.stats()``); ``empty``: the dtype NumPy
    gives an empty one, where not float64."""
    from .._device import CPU
    from .._residency.storage import transfer

    host = np.asarray(value)
    if empty is not None and host.size == 0:
        host = host.astype(empty)
    return transfer(host, CPU, backend.device)


#: Functions that read an empty list operand as another dtype than float64: NumPy's
#: ``bincount([])`` counts nothing, where an empty float array is a TypeError.
EMPTY_OPERAND_DTYPES: dict[str, Any] = {"bincount": np.intp}


def as_device_arrays(*positions: int) -> Factory:
    """Operands at ``positions`` (lists, tuples, Python or NumPy scalars) become device
    arrays first: CuPy reads array attributes of them (``outer``, ``interp``)."""
    def factory(backend: Backend, func: Func) -> Func:
        native = backend.is_native

        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(upload(backend, a) if i in positions and not native(a) else a
                         for i, a in enumerate(args))
            return func(*args, **kwargs)

        return call

    return factory


def dropping_keywords(*names: str) -> Factory:
    """Keywords ``names`` CuPy lacks and that mean nothing on the device are dropped when
    None or, for ``subok``/``like``, whatever they are (autodev has no subclasses)."""
    def factory(backend: Backend, func: Func) -> Func:
        def call(*args: Any, **kwargs: Any) -> Any:
            for name in names:
                if name in kwargs and (name != "device" or kwargs[name] is None):
                    del kwargs[name]
            return func(*args, **kwargs)

        return call

    return factory


#: NumPy parameter names of array operands. CuPy's functions read array attributes of
#: them, so a list, a tuple or a NumPy scalar there (which NumPy converts) fails.
ARRAY_OPERANDS = frozenset("""
    a b x x1 x2 y v a1 a2 ar1 ar2 ary arr m element test_elements condition xp fp weights
    values indices bins a_min a_max
""".split())


OperandParams = tuple[tuple[int, str], ...]


def operand_params(np_func: Func) -> OperandParams:
    """The (position, name) of ``np_func``'s array-operand parameters."""
    try:
        params = list(inspect.signature(np_func).parameters.values())
    except (TypeError, ValueError):
        return ()
    return tuple((i, p.name) for i, p in enumerate(params)
                 if p.name in ARRAY_OPERANDS and p.kind is not p.VAR_POSITIONAL)


def device_operands(np_func: Func, inner: Factory | None) -> Factory:
    """Correction: ``np_func``'s array operands that are lists, tuples (holding no device
    array) or NumPy scalars become device arrays (as NumPy converts them), then
    ``inner``'s correction, if any, runs. Python scalars pass: CuPy takes them where NumPy
    does. The operands are read from the signature when the GPU first needs them (not at
    import: ``import autodev`` stays fast)."""
    def factory(backend: Backend, func: Func) -> Func:
        native = backend.is_native
        target = inner(backend, func) if inner is not None else func
        params = operand_params(np_func)
        if not params:
            return target
        empty = EMPTY_OPERAND_DTYPES.get(getattr(np_func, "__name__", ""))

        def host(value: Any) -> bool:
            if isinstance(value, np.generic):
                return True
            return type(value) in (list, tuple) and not _holds(native, value)

        def call(*args: Any, **kwargs: Any) -> Any:
            for i, name in params:
                if i < len(args):
                    if host(args[i]):
                        args = (*args[:i], upload(backend, args[i], empty), *args[i + 1:])
                elif name in kwargs and host(kwargs[name]):
                    kwargs[name] = upload(backend, kwargs[name], empty)
            return target(*args, **kwargs)

        return call

    return factory


def _holds(native: Callable[[Any], bool], items: Any) -> bool:
    return any(native(v) or (type(v) in (list, tuple) and _holds(native, v)) for v in items)


def searchsorted_values(backend: Backend, func: Func) -> Func:
    """``searchsorted``: CuPy takes ``v`` as a device array or a Python scalar only
    (NotImplementedError for a NumPy scalar or a list)."""
    native = backend.is_native

    def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
        if not native(v) and type(v) not in (int, float, complex):
            v = upload(backend, v)
        return func(a, v, side=side, sorter=sorter)

    return searchsorted


def stacked_choices(backend: Backend, func: Func) -> Func:
    """``choose``: CuPy reads ``choices.shape``, so a sequence of choices is broadcast
    and stacked into one device array first (as NumPy does implicitly)."""
    xp, native = backend.xp, backend.is_native

    def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        if not native(choices):
            # NumPy's common dtype of the choices (a Python scalar is weak, NEP 50)
            dtype = np.result_type(*[_dtype_or_scalar(c) for c in choices])
            items = [(c if native(c) else upload(backend, c)).astype(dtype, copy=False)
                     for c in choices]
            choices = xp.stack(xp.broadcast_arrays(*items))
        return func(a, choices, out=out, mode=mode)

    return choose


def _dtype_or_scalar(value: Any) -> Any:
    """What ``numpy.result_type`` reads of one choice: its dtype, or a Python scalar."""
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, (list, tuple)) and value:  # (it may hold device arrays)
        return np.result_type(*[_dtype_or_scalar(v) for v in value])
    dtype = getattr(value, "dtype", None)
    return dtype if isinstance(dtype, np.dtype) else np.asarray(value).dtype


def checked_choices(backend: Backend, func: Func) -> Func:
    return stacked_choices(backend, checked_choose(backend, func))


def method_choices(backend: Backend, func: Func) -> Func:
    """``a.choose(...)``: NumPy's method takes the choices as one sequence or as several
    positional arguments (``a.choose(c0, c1, c2)``), with ``out`` and ``mode`` by keyword."""
    choose = checked_choices(backend, func)

    def method(a: Any, *choices: Any, out: Any = None, mode: str = "raise") -> Any:
        if not choices:
            raise TypeError("choose() missing required argument 'choices' (pos 1)")
        return choose(a, choices if len(choices) > 1 else choices[0], out=out, mode=mode)

    return method


#: NumPy before 2.3 counts into a Python int, later ones into a NumPy integer.
_COUNT_IS_INT = type(np.count_nonzero(np.zeros(1))) is int


def python_int_count(backend: Backend, func: Func) -> Func:
    """``count_nonzero``: without ``axis`` NumPy < 2.3 returns a Python ``int`` (later
    NumPy an integer scalar); CuPy always a 0-d array."""

    def count_nonzero(a: Any, axis: Axes = None) -> Any:
        result = func(a, axis=axis)
        return int(result) if axis is None and _COUNT_IS_INT else result

    return count_nonzero


def pinv_rcond(backend: Backend, func: Func) -> Func:
    """``linalg.pinv``: NumPy's ``rcond=None`` means 1e-15 (without ``rtol``); CuPy
    computes with ``rcond`` and fails on None."""

    def pinv(a: Any, rcond: Any = None) -> Any:
        return func(a, rcond=1e-15 if rcond is None else rcond)

    return pinv


def scalar_dot(backend: Backend, func: Func) -> Func:
    """``dot``/``ndarray.dot``: NumPy takes scalars and lists, converted to arrays (so a
    Python float is float64 there, not a weak scalar); CuPy's ``dot`` is ``a.dot(b)``,
    which takes device arrays only: the operands are made device arrays first (CuPy
    multiplies by a 0-d one, as NumPy does)."""
    native = backend.is_native

    def dot(a: Any, b: Any, out: Any = None) -> Any:
        a = a if native(a) else upload(backend, a)
        b = b if native(b) else upload(backend, b)
        # out= by keyword: the simulated GPU returns the caller's out only when named so
        return func(a, b) if out is None else func(a, b, out=out)

    return dot


def diagonal_view(backend: Backend, func: Func) -> Func:
    """``diag`` of a matrix: NumPy's is a (read-only) view of its diagonal, CuPy's a copy;
    the view is taken with ``diagonal``, so that writes to the matrix show through it."""
    diagonal = backend.xp.diagonal

    def diag(v: Any, k: int = 0) -> Any:
        return diagonal(v, k) if getattr(v, "ndim", None) == 2 else func(v, k)

    return diag


def conjugate_out(backend: Backend, func: Func) -> Func:
    """``ndarray.conjugate(out)``: CuPy's method takes no argument; its ufunc takes ``out``."""
    conjugate = backend.xp.conjugate

    def method(a: NativeArray, out: Any = None) -> Any:
        return func(a) if out is None else conjugate(a, out=out)

    return method


def named_real_eig(backend: Backend, func: Func) -> Func:
    return named_result("linalg.eig")(backend, real_eig(False)(backend, func))
