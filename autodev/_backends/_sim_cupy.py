"""The simulated GPU's imitations of CuPy 14: what CuPy refuses, and how it differs.

Each function here turns a NumPy function (or bound method) into one that behaves as
CuPy's does for the same call: it refuses the keyword, operand, ufunc method or dtype
CuPy refuses, with CuPy's exception type, or returns CuPy's result type. The capability
table (``autodev._capability.table.TABLE``) gives each row's imitation to the simulator, by
qualified name, in ``IMITATIONS``; the rows' names CuPy lacks go to ``CUPY_MISSING``.
They work on NumPy data: :mod:`autodev._backends._sim` applies them behind its wall.
Read from the CuPy 14.2 sources.
"""

from __future__ import annotations

import functools
import operator
import sys
from typing import TYPE_CHECKING, Any, Callable

import numpy as np
from numpy.lib.array_utils import normalize_axis_index  # AxisError, as NumPy's

from .._typing import Axes, Axis, Casting, NativeArray, Order
from ._imitating import sim_loaded

if TYPE_CHECKING:  # numpy.typing is not loaded at run time (``import autodev`` stays lean)
    from numpy.typing import DTypeLike


Quirk = Callable[[Callable[..., Any]], Callable[..., Any]]


#: CuPy 14's differences from NumPy that the sim imitates, by qualified name
#: (``"sum"``, ``"linalg.eig"``, ``"ndarray.sort"``, ``"ufunc.reduce"``). Filled from
#: the capability table (``autodev._capability.table.TABLE``): each row there holds both
#: autodev's correction and this imitation, so CPU-only tests exercise every correction.
IMITATIONS: dict[str, Quirk] = {}


#: Names CuPy does not have (also from the capability table).
CUPY_MISSING: set[str] = set()


#: True inside :meth:`SimBackend.linalg_errors` (the dynamic scope of a GPU linalg call).
_LINALG_RAISE = [False]


def wrapping_indices(read: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's indexing: out-of-bounds integer-array indices wrap, with no IndexError."""

    def index(key: Any, shape: tuple[int, ...]) -> Any:
        return _cupy_like_index(read(key, shape), shape)

    return index


def _cupy_like_index(key: Any, shape: tuple[int, ...]) -> Any:
    """Wrap out-of-bounds integer-array indices the way CuPy does (no error), each on
    the axis it indexes (after an Ellipsis, ``None`` and boolean masks are counted)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(_is_int_array(k) for k in parts):
        return key
    consumed = [_axes_consumed(k) for k in parts]
    rest = len(shape) - sum(consumed)
    out, dim = [], 0
    for k, n in zip(parts, consumed):
        if k is Ellipsis:
            dim += rest
        elif _is_int_array(k) and dim < len(shape) and shape[dim]:
            k = k % shape[dim]
        out.append(k)
        dim += n
    return tuple(out) if isinstance(key, tuple) else out[0]


def _is_int_array(k: object) -> bool:
    return isinstance(k, np.ndarray) and k.dtype.kind in "iu" and k.size > 0


def _axes_consumed(k: object) -> int:
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, np.ndarray) and k.dtype == np.bool_:
        return max(k.ndim, 1)
    return 1


_SCALARS = (np.ndarray, np.generic, bool, int, float, complex)


def ufunc_call_imitation(keywords: frozenset[str]) -> Quirk:
    """CuPy's ``ufunc.__call__``: only the keywords ``keywords`` (others: TypeError
    'Wrong arguments'), no list or tuple operands ('Unsupported type'), and a plain
    TypeError where NumPy raises its ``UFuncTypeError`` for a cast it refuses."""
    def quirk(ufunc: Callable[..., Any]) -> Callable[..., Any]:
        nin = ufunc.nin  # type: ignore[attr-defined]

        def call(*args: Any, **kwargs: Any) -> Any:
            wrong = {k: v for k, v in kwargs.items() if k not in keywords}
            if wrong:
                raise TypeError(f"Wrong arguments {wrong}")
            for a in args[:nin]:
                if not isinstance(a, _SCALARS):
                    raise TypeError(f"Unsupported type {type(a)}")
            if kwargs.get("out") is ...:  # (CuPy reads out= as an operand)
                raise TypeError(f"Unsupported type {type(...)}")
            try:
                if ufunc is np.power:
                    return _cupy_power(*args, **kwargs)
                return ufunc(*args, **kwargs)
            except TypeError as err:
                if type(err) is TypeError:
                    raise
                raise TypeError(str(err)) from None  # CuPy has no UFuncTypeError

        return call

    return quirk


def _cupy_power(base: Any, exponent: Any, *out: Any, **kwargs: Any) -> Any:
    """CuPy's ``power``: its integer loop computes a negative exponent (1 for a base of 1,
    -1 or 1 for -1 by the exponent's parity, 0 otherwise) where NumPy raises ValueError."""
    try:
        return np.power(base, exponent, *out, **kwargs)
    except ValueError:  # (NumPy's integer loop refused a negative exponent)
        pass
    e = np.asarray(exponent)
    negative = e < 0
    # the same call with those exponents 0 (a Python int stays one: the same loop)
    zeroed = 0 if type(exponent) is int else np.where(negative, 0, e).astype(e.dtype)
    found = np.power(base, zeroed, *out, **kwargs)
    result = np.asarray(found)  # (a NumPy scalar becomes an array to write into)
    b = np.asarray(base)
    cupys = np.where(b == -1, np.where(e % 2 == 1, -1, 1), np.where(b == 1, 1, 0))
    np.copyto(result, cupys, casting="unsafe", where=negative)
    return result if result is found else result[()]


def ufunc_method_imitation(method_name: str, supported: frozenset[str],
                           keywords: frozenset[str]) -> Quirk:
    """CuPy's ``ufunc.reduce``/``accumulate``/``reduceat``: ``supported`` ufuncs only
    (NotImplementedError otherwise), with the keywords ``keywords`` only."""
    def quirk(method: Callable[..., Any]) -> Callable[..., Any]:
        name = method.__self__.__name__  # type: ignore[attr-defined]

        def call(*args: Any, **kwargs: Any) -> Any:
            if name not in supported:
                raise NotImplementedError(f"`cupy_{name}.{method_name}` is not supported yet")
            for key in kwargs:
                if key not in keywords:
                    raise TypeError(f"{method_name}() got an unexpected keyword argument "
                                    f"'{key}'")
            return method(*args, **kwargs)

        return call

    return quirk


def ufunc_at_imitation(dtypes: dict[str, frozenset[str]]) -> Quirk:
    """CuPy's ``ufunc.at``: the ufuncs in ``dtypes`` only (NotImplementedError), each
    for the listed dtype characters of ``a`` (TypeError)."""
    def quirk(method: Callable[..., Any]) -> Callable[..., Any]:
        name = method.__self__.__name__  # type: ignore[attr-defined]

        def at(a: NativeArray, indices: Any, b: Any = None) -> Any:
            allowed = dtypes.get(name)
            if allowed is None:
                raise NotImplementedError(f"`cupy_{name}.at` is not supported yet")
            if a.dtype.char not in allowed:
                raise TypeError(f"cupy.{name}.at does not support {a.dtype}")
            return method(a, indices, b) if b is not None else method(a, indices)

        return at

    return quirk


def quiet_singular(always: bool = False) -> Quirk:
    """CuPy's default (``linalg='ignore'``): a singular or not positive-definite matrix
    gives NaN, not LinAlgError, unless run inside :meth:`SimBackend.linalg_errors`
    (``always``: not even there, as cupyx's ``solve_triangular``)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(a: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return func(a, *args, **kwargs)
            except np.linalg.LinAlgError:
                if not always and _LINALG_RAISE[0]:
                    raise
                shape = np.shape(args[0]) if args else np.shape(a)
                return np.full(shape, np.nan, dtype=np.result_type(a, np.float32))

        return call

    return quirk


def wrapping_take(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``take`` wraps out-of-range indices instead of raising, and has no ``mode``."""

    @functools.wraps(func)
    def take(a: Any, indices: Any, axis: Axis = None, out: Any = None) -> Any:
        return func(a, indices, axis=axis, out=out, mode="wrap")

    return take


def wrapping_take_along_axis(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``take_along_axis`` wraps out-of-range indices instead of raising."""

    @functools.wraps(func)
    def take_along_axis(arr: NativeArray, indices: Any, axis: Axis = -1) -> Any:
        n = arr.size if axis is None \
            else arr.shape[normalize_axis_index(operator.index(axis), arr.ndim)]
        if n and np.asarray(indices).dtype.kind in "iu":  # others: CuPy's IndexError
            # (an array stays one: a 0-d index reaches CuPy's own dimension check)
            indices = np.remainder(indices, n, out=np.empty_like(indices))
        return func(arr, indices, axis)

    return take_along_axis


def lacking(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A CuPy function without NumPy's keywords ``names`` (passing one is a TypeError)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            for name in names:
                if name in kwargs:
                    raise TypeError(f"{func.__name__}() got an unexpected keyword "
                                    f"argument '{name}'")
            return func(*args, **kwargs)

        return call

    return quirk


def result_type_quantile(percent: bool, methods: tuple[str, ...]) -> Quirk:
    """CuPy's percentile/quantile: computed in ``result_type(a, q)``, with ``q / 100`` for
    percentile (integer input and an integer quantile give integers), and only the
    ``methods`` CuPy implements (ValueError for the others)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def quantile(a: Any, q: Any, axis: Axes = None, out: Any = None,
                     overwrite_input: bool = False, method: str = "linear",
                     keepdims: bool = False) -> Any:
            if method not in methods:
                raise ValueError(f"'{method}' method is not yet supported. "
                                 "Please use any other method.")
            if isinstance(q, (list, tuple)):
                q = np.asarray(q)  # CuPy converts a sequence first
            result = func(a, q, axis=axis, overwrite_input=overwrite_input, method=method,
                          keepdims=keepdims)
            if method in ("linear", "midpoint", "hazen", "weibull", "median_unbiased",
                          "normal_unbiased"):
                result = np.asarray(result).astype(np.result_type(a, q / 100 if percent else q))
            if out is not None:  # CuPy writes into out= and returns a view of it, not it
                out[...] = result
                return out.view()
            return result

        return quantile

    return quirk


def complex_eig(values_only: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """CuPy's eig/eigvals: always complex results for real input, as plain tuples, and
    eigenvalues in an order of cuSOLVER's, not LAPACK's (imitated as reversed: neither
    library promises an order, so nothing may rely on NumPy's)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def eig(a: NativeArray) -> Any:
            result = func(a)
            ctype = np.result_type(a.dtype, np.complex64)
            if values_only:
                return result.astype(ctype)[..., ::-1]
            w, v = (r.astype(ctype) for r in result)
            return w[..., ::-1], v[..., ::-1]

        return eig

    return quirk


def plain_tuple(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's linalg returns plain tuples where NumPy's are named."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        return tuple(result) if isinstance(result, tuple) else result

    return call


def array_predicate(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's allclose/array_equal: a 0-d device array, not a Python bool."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        return np.asarray(func(*args, **kwargs))

    return call


def astype_no_casting(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.astype`` raises TypeError for any ``casting``/``subok``."""

    def astype(dtype: DTypeLike, order: Order = "K", casting: Casting | None = None,
               subok: bool | None = None,
               copy: bool = True) -> Any:
        if casting is not None:
            raise TypeError("casting is not supported yet")
        if subok is not None:
            raise TypeError("subok is not supported yet")
        return method(dtype, order=order, copy=copy)

    return astype


def _check_kind(kind: object) -> None:
    if kind is not None and kind != "stable":
        raise ValueError("kind can only be None or 'stable'")


def _check_contiguous(array: np.ndarray) -> None:
    if not array.flags.c_contiguous:
        raise NotImplementedError("Sorting non-contiguous array is not supported.")


def _check_kth(kth: Any) -> None:
    """CuPy iterates any ``kth`` that is not a Python int (a NumPy int is not iterable)."""
    if not isinstance(kth, int):
        for k in kth:  # TypeError for NumPy scalars and 0-d arrays, as in CuPy
            operator.index(k)


def inplace_sort(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.sort``: C-contiguous arrays only, ``kind`` None or 'stable'."""
    array: np.ndarray = method.__self__  # type: ignore[attr-defined]  # a bound ndarray method

    def sort(axis: int = -1, kind: str | None = None) -> Any:
        _check_kind(kind)
        _check_contiguous(array)
        return method(axis=axis, kind="stable")

    return sort


def inplace_partition(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.partition``: C-contiguous arrays, ``kth`` an int or ints, no ``kind``."""
    array: np.ndarray = method.__self__  # type: ignore[attr-defined]  # a bound ndarray method

    def partition(kth: Any, axis: int = -1) -> Any:
        _check_contiguous(array)
        _check_kth(kth)
        return method(kth, axis=axis)

    return partition


def argpartition_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.argpartition``: ``kth`` an int or ints, no ``kind``."""

    def argpartition(kth: Any, axis: Axis = -1) -> Any:
        _check_kth(kth)
        return method(kth, axis=axis)

    return argpartition


def argsort_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.argsort``: ``kind`` None or 'stable'."""

    def argsort(axis: Axis = -1, kind: str | None = None) -> Any:
        _check_kind(kind)
        return method(axis=axis, kind="stable")

    return argsort


def python_step(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``linspace(..., retstep=True)``: the step is a Python number."""

    @functools.wraps(func)
    def linspace(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        return (result[0], result[1].item()) if type(result) is tuple else result

    return linspace


def copying_diag(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``diag`` of a matrix: a copy of its diagonal (NumPy's is a view)."""

    @functools.wraps(func)
    def diag(v: Any, k: int = 0) -> Any:
        result = func(v, k)
        return result.copy() if np.ndim(v) == 2 else result

    return diag


def argumentless(method: Callable[..., Any]) -> Callable[..., Any]:
    """A CuPy method that takes no argument (``ndarray.conjugate``: no ``out``)."""

    def call(*args: Any, **kwargs: Any) -> Any:
        if args or kwargs:
            raise TypeError(f"{method.__name__}() takes exactly 0 positional arguments "
                            f"({len(args) + len(kwargs)} given)")
        return method()

    return call


def dot_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.dot(b, out=None)`` takes a device array ``b`` only."""

    def dot(b: Any, out: Any = None) -> Any:
        if not isinstance(b, np.ndarray):
            raise TypeError(f"Argument 'b' has incorrect type (expected cupy.ndarray, "
                            f"got {type(b).__name__})")
        return method(b) if out is None else method(b, out)

    return dot


def dot_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``dot(a, b, out=None)`` is ``a.dot(b, out)``: ``a`` must be a device array
    (AttributeError) and so must ``b`` (TypeError)."""

    @functools.wraps(func)
    def dot(a: Any, b: Any, out: Any = None) -> Any:
        if not isinstance(a, np.ndarray):
            raise AttributeError(f"'{type(a).__name__}' object has no attribute 'dot'")
        if not isinstance(b, np.ndarray):
            raise TypeError(f"Argument 'b' has incorrect type (expected cupy.ndarray, "
                            f"got {type(b).__name__})")
        return func(a, b) if out is None else func(a, b, out=out)

    return dot


def take_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.take(indices, axis=None, out=None)``: no ``mode``; indices wrap."""
    array: np.ndarray = method.__self__  # type: ignore[attr-defined]  # a bound ndarray method

    def take(indices: Any, axis: Axis = None, out: Any = None) -> Any:
        n = array.size if axis is None else array.shape[axis]
        indices = np.asarray(indices) % n if n else indices
        return method(indices, axis=axis) if out is None else method(indices, axis=axis,
                                                                     out=out)

    return take


def stable_only_sort(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's sort/argsort take ``kind=None`` or ``'stable'`` only (ValueError otherwise)."""

    @functools.wraps(func)
    def sort(a: Any, axis: Axis = -1, kind: str | None = None) -> Any:
        _check_kind(kind)
        return func(a, axis=axis, kind="stable")

    return sort


def partition_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's partition/argpartition: ``kth`` an int or ints, no ``kind``/``order``."""

    @functools.wraps(func)
    def partition(a: Any, kth: Any, axis: Axis = -1) -> Any:
        _check_kth(kth)
        return func(a, kth, axis=axis)

    return partition


def operands(*positions: int, error: type[Exception] = AttributeError,
              scalars: tuple[type, ...] = ()) -> Quirk:
    """A CuPy function reading array attributes of the operands at ``positions``:
    a list, tuple or scalar there raises ``error`` (instances of ``scalars`` are accepted,
    as CuPy's ``isinstance`` checks do: ``numpy.float64`` is a Python float)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            for i in positions:
                if i < len(args) and not isinstance(args[i], (np.ndarray, *scalars)):
                    if error is AttributeError:
                        raise AttributeError(f"'{type(args[i]).__name__}' object has no "
                                             "attribute 'ndim'")
                    raise error(f"Only python scalars or ndarrays are supported "
                                f"(got {type(args[i]).__name__})")
            return func(*args, **kwargs)

        return call

    return quirk


def _is_host_operand(value: Any) -> bool:
    """A NumPy scalar, or a list/tuple holding no device array: what CuPy cannot read as
    an array operand (it reads ``.ndim``, ``.ravel()``, ... of it)."""
    if isinstance(value, np.generic):
        return True
    return type(value) in (list, tuple) and not _holds_arrays(value)


def _holds_arrays(items: Any) -> bool:
    return any(isinstance(v, np.ndarray) or (type(v) in (list, tuple) and _holds_arrays(v))
               for v in items)


def host_operands(params: tuple[tuple[int, str], ...]) -> Quirk:
    """CuPy functions read array attributes of their array operands (``params``: position
    and name): a list, tuple or NumPy scalar there raises AttributeError."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            for i, name in params:
                value = args[i] if i < len(args) else kwargs.get(name)
                if _is_host_operand(value):
                    raise AttributeError(f"'{type(value).__name__}' object has no attribute "
                                         f"'ndim' (argument {name!r})")
            return func(*args, **kwargs)

        return call

    return quirk


def zero_d_count(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``count_nonzero``: a 0-d device array where NumPy returns a Python int."""

    @functools.wraps(func)
    def count_nonzero(a: Any, axis: Axes = None) -> Any:
        return np.asarray(func(a, axis=axis))

    return count_nonzero


def pinv_rcond(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``linalg.pinv(a, rcond=1e-15)``: ``rcond=None`` fails in arithmetic."""

    @functools.wraps(func)
    def pinv(a: Any, rcond: Any = 1e-15) -> Any:
        if rcond is None:
            raise TypeError("unsupported operand type(s) for *: 'NoneType' and 'float'")
        return func(a, rcond=rcond)

    return pinv


def runtime_warning(func: Callable[..., Any]) -> Callable[..., Any]:
    """cupyx's ``lu_factor``: a plain RuntimeWarning for a singular matrix, where SciPy
    warns its LinAlgWarning."""
    import warnings

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = func(*args, **kwargs)
        for w in caught:
            warnings.warn(str(w.message), RuntimeWarning if issubclass(
                w.category, RuntimeWarning) else w.category, stacklevel=2)
        return result

    return call


def imitate_missing_keywords(*names: str) -> Quirk:
    """The imitation of a CuPy function lacking NumPy's keywords ``names``."""
    return lacking(*names)


LOADED = True  # every imitation above is defined: registrations may apply them
sim_loaded(sys.modules[__name__])  # the capability table's rows (autodev._backends._imitating)
