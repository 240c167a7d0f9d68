"""The simulated GPU: a device for tests on machines without one.

Its arrays (:class:`SimArray`) are a distinct type that refuses implicit
conversion to NumPy, as CuPy's do, so any code path that forgets a transfer
fails loudly. Its module functions refuse NumPy arrays for the same reason.
Transfers are counted, faults (out-of-memory, device errors, NotImplementedError)
can be injected at chosen calls, and it is as strict as CuPy 14: every row of the
capability table (``autodev._gpu_checks.TABLE``) installs its imitation here
(``IMITATIONS``, ``CUPY_MISSING``): refused keywords, operands, ufunc methods and
dtypes with CuPy's exception types, CuPy's result types, wrapping integer-array
indices, and NaN for singular ``solve``/``inv``/``cholesky`` unless run inside
:meth:`SimBackend.linalg_errors`.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import operator
from types import ModuleType
from typing import Any, Callable, ContextManager, Iterator

import numpy as np

from .._device import Device
from ._base import Backend

_NO_IMPLICIT = (
    "Implicit conversion to a NumPy array is not allowed for simulated GPU arrays. "
    "Use autodev's transfers (x.to_device('cpu')) instead."
)


class SimOutOfMemoryError(MemoryError):
    """Raised by the simulated GPU when an out-of-memory fault is injected."""


class SimDeviceError(RuntimeError):
    """Raised by the simulated GPU when a device fault is injected."""


class SimArray:
    """An array on the simulated GPU: a NumPy array behind a wall."""

    __slots__ = ("_a", "__weakref__")
    __array_priority__ = 100.0

    def __init__(self, array: np.ndarray) -> None:
        self._a = array

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(_NO_IMPLICIT)

    __array_ufunc__ = None  # NumPy ufuncs must not see through the wall

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        raise TypeError(_NO_IMPLICIT)

    def get(self) -> np.ndarray:
        """Explicit copy to the host (like ``cupy.ndarray.get``)."""
        return self._a.copy()

    @property
    def base(self) -> Any:
        return self._a.base

    @property
    def shape(self) -> tuple[int, ...]:
        return self._a.shape

    @shape.setter
    def shape(self, value: Any) -> None:
        self._a.shape = value  # in place, without copying, as CuPy allows

    # plain attributes, as on cupy.ndarray (not through __getattr__: the cost
    # model reads them on every decision)
    dtype = property(lambda self: self._a.dtype)
    size = property(lambda self: self._a.size)
    ndim = property(lambda self: self._a.ndim)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    strides = property(lambda self: self._a.strides)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(self._a, name)
        if not callable(value):
            return _wrap(value)
        imitation = IMITATIONS.get("ndarray." + name)
        if imitation is not None:
            value = imitation(value)
        return _wrap_method(self, name, value)

    def __getitem__(self, key: Any) -> Any:
        return _wrap(self._a[_index(_unwrap(key), self._a.shape)])

    def __setitem__(self, key: Any, value: Any) -> None:
        self._a[_index(_unwrap(key), self._a.shape)] = _unwrap(value)

    def __len__(self) -> int:
        return len(self._a)

    def __iter__(self) -> Iterator[Any]:
        return (_wrap(row) for row in self._a)

    def __repr__(self) -> str:
        return f"SimArray({self._a!r})"

    def __bool__(self) -> bool:
        return bool(self._a)

    def __float__(self) -> float:
        return float(self._a)

    def __int__(self) -> int:
        return int(self._a)

    def __complex__(self) -> complex:
        return complex(self._a)

    def __index__(self) -> int:
        return operator.index(self._a)

    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> Any:
        # a CUDA device, as CuPy reports (kDLCUDA = 2): a consumer must not read it as host memory
        return (2, 0)


def _make_operator(name: str) -> Callable[..., Any]:
    def method(self: SimArray, *args: Any) -> Any:
        return _wrap(getattr(self._a, name)(*(_unwrap(a) for a in args)))

    method.__name__ = name
    return method


for _name in (
    "add radd sub rsub mul rmul truediv rtruediv floordiv rfloordiv mod rmod pow rpow "
    "matmul rmatmul and rand or ror xor rxor lshift rlshift rshift rrshift "
    "lt le gt ge eq ne neg pos abs invert iadd isub imul itruediv ifloordiv imod ipow "
    "iand ior ixor ilshift irshift imatmul"
).split():
    setattr(SimArray, f"__{_name}__", _make_operator(f"__{_name}__"))
SimArray.__hash__ = None  # type: ignore[assignment]


def _index(key: Any, shape: tuple[int, ...]) -> Any:
    """The index the sim applies: ``key`` as CuPy would read it (the table's
    ``ndarray.__getitem__`` row: out-of-bounds integer-array indices wrap)."""
    imitation = IMITATIONS.get("ndarray.__getitem__")
    return imitation(_same_key)(key, shape) if imitation is not None else key


def _same_key(key: Any, shape: tuple[int, ...]) -> Any:
    return key


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


def _is_int_array(k: Any) -> bool:
    return isinstance(k, np.ndarray) and k.dtype.kind in "iu" and k.size > 0


def _axes_consumed(k: Any) -> int:
    if k is None or k is Ellipsis:
        return 0
    if isinstance(k, np.ndarray) and k.dtype == np.bool_:
        return max(k.ndim, 1)
    return 1


def _unwrap(obj: Any) -> Any:
    if type(obj) is SimArray:
        return obj._a
    if type(obj) is np.ndarray:
        raise TypeError(
            "Unsupported type <class 'numpy.ndarray'>: the simulated GPU refuses host "
            "arrays, as CuPy does. Move the data first."
        )
    if type(obj) in (list, tuple):
        return type(obj)(_unwrap(o) for o in obj)
    if type(obj) is dict:
        return {k: _unwrap(v) for k, v in obj.items()}
    return obj


def _wrap(obj: Any) -> Any:
    if type(obj) is np.ndarray:
        return SimArray(obj)
    if isinstance(obj, np.generic):
        return SimArray(np.asarray(obj))  # CuPy returns 0-d arrays, not scalars
    if isinstance(obj, tuple):
        items = [_wrap(o) for o in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if type(obj) is list:
        return [_wrap(o) for o in obj]
    return obj


def _wrap_out(result: Any, kwargs: dict[str, Any]) -> Any:
    """Wrap ``result``, returning the caller's own ``out=`` array where it is one (as CuPy)."""
    out = kwargs.get("out")
    outs = out if type(out) is tuple else (out,)
    for o in outs:
        if type(o) is SimArray and result is o._a:
            return o
    if type(result) is tuple and out is not None:
        return tuple(_wrap_out(r, kwargs) for r in result)
    return _wrap(result)


def _wrap_callable(func: Callable[..., Any], backend: "SimBackend | None" = None,
                   name: str = "") -> Any:
    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        if backend is not None:
            backend._tick(name, args)
        return _wrap_out(func(*_unwrap(args), **_unwrap(kwargs)), kwargs)

    return call


#: The simulated GPU made last; array methods (``x.sum()``) run "on" it.
_LATEST: list["SimBackend"] = []


def _wrap_method(array: SimArray, name: str, method: Callable[..., Any]) -> Any:
    """A method of a device array: a device call, counted, timed and open to faults."""
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _LATEST:
            _LATEST[0]._tick(name, (array, *args))
        return _wrap_out(method(*_unwrap(args), **_unwrap(kwargs)), kwargs)

    return call


class _SimUfunc:
    """A NumPy ufunc seen through the wall, with its methods, as strict as CuPy's."""

    def __init__(self, ufunc: np.ufunc, backend: "SimBackend") -> None:
        self._u = ufunc
        self._backend = backend
        self.__name__ = ufunc.__name__
        imitation = IMITATIONS.get("ufunc")
        self._call = imitation(ufunc) if imitation is not None else ufunc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._backend._tick(self.__name__, args)
        return _wrap_out(self._call(*_unwrap(args), **_unwrap(kwargs)), kwargs)

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._u, name)
        if not callable(value):
            return value
        imitation = IMITATIONS.get("ufunc." + name)
        return _wrap_callable(imitation(value) if imitation is not None else value,
                              self._backend)


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
            try:
                return ufunc(*args, **kwargs)
            except TypeError as err:
                if type(err) is TypeError:
                    raise
                raise TypeError(str(err)) from None  # CuPy has no UFuncTypeError

        return call

    return quirk


def ufunc_method_imitation(method_name: str, supported: Any,
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

        def at(a: Any, indices: Any, b: Any = None) -> Any:
            allowed = dtypes.get(name)
            if allowed is None:
                raise NotImplementedError(f"`cupy_{name}.at` is not supported yet")
            if a.dtype.char not in allowed:
                raise TypeError(f"cupy.{name}.at does not support {a.dtype}")
            return method(a, indices, b) if b is not None else method(a, indices)

        return at

    return quirk


_FAMILIES: dict[str, str] = {}


def _family_of(name: str) -> str | None:
    """The cost family autodev's function table gives ``name`` ("sum", "linalg.solve")."""
    if not _FAMILIES:
        from .._namespace import SPECS, _family_of_ufunc

        _FAMILIES.update((n, spec.family) for n, spec in SPECS.items()
                         if spec.where == "dispatch")
        _FAMILIES.update((n, _family_of_ufunc(n)) for n, u in vars(np).items()
                         if isinstance(u, np.ufunc))
    return _FAMILIES.get(name)


#: True inside :meth:`SimBackend.linalg_errors` (the dynamic scope of a GPU linalg call).
_LINALG_RAISE = [False]


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


#: Calls returning a view of their first argument, for which CuPy allocates no device
#: memory (so they take no out-of-memory fault); ``reshape``/``ravel`` only when the
#: input is C-contiguous (otherwise they copy).
_VIEW_CALLS = frozenset(
    "transpose swapaxes squeeze diagonal view moveaxis rollaxis expand_dims broadcast_to "
    "broadcast_arrays atleast_1d atleast_2d atleast_3d split array_split hsplit vsplit "
    "dsplit permute_dims matrix_transpose real imag as_strided sliding_window_view".split()
)
_CONTIGUOUS_VIEWS = frozenset({"reshape", "ravel"})


def _makes_view(name: str, args: tuple[Any, ...]) -> bool:
    name = name.rpartition(".")[2]  # lib.stride_tricks.as_strided, linalg.diagonal, ...
    if name in _VIEW_CALLS:
        return True
    if name in _CONTIGUOUS_VIEWS and args and type(args[0]) is SimArray:
        return bool(args[0]._a.flags.c_contiguous)
    return False


def _wrapping_take(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``take`` wraps out-of-range indices instead of raising, and has no ``mode``."""

    @functools.wraps(func)
    def take(a: Any, indices: Any, axis: Any = None, out: Any = None) -> Any:
        return func(a, indices, axis=axis, out=out, mode="wrap")

    return take


def _wrapping_take_along_axis(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``take_along_axis`` wraps out-of-range indices instead of raising."""

    @functools.wraps(func)
    def take_along_axis(arr: Any, indices: Any, axis: Any = -1) -> Any:
        n = arr.size if axis is None else arr.shape[axis]
        return func(arr, np.asarray(indices) % n if n else indices, axis)

    return take_along_axis


def _lacking(*names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
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


def _result_type_quantile(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's percentile/quantile: computed in ``result_type(a, q)`` (integer input
    gives integers), and only five methods."""

    @functools.wraps(func)
    def quantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                 overwrite_input: bool = False, method: str = "linear",
                 keepdims: bool = False) -> Any:
        if method not in ("linear", "lower", "higher", "midpoint", "nearest"):
            raise ValueError(f"'{method}' method is not yet supported.")
        if isinstance(q, (list, tuple)):
            q = np.asarray(q)  # CuPy converts a sequence first
        result = func(a, q, axis=axis, overwrite_input=overwrite_input, method=method,
                      keepdims=keepdims)
        if method in ("linear", "midpoint"):
            result = np.asarray(result).astype(np.result_type(a, q))
        return result

    return quantile


def _complex_eig(values_only: bool) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """CuPy's eig/eigvals: always complex results for real input, as plain tuples, and
    eigenvalues in an order of cuSOLVER's, not LAPACK's (imitated as reversed: neither
    library promises an order, so nothing may rely on NumPy's)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def eig(a: Any) -> Any:
            result = func(a)
            ctype = np.result_type(a.dtype, np.complex64)
            if values_only:
                return result.astype(ctype)[..., ::-1]
            w, v = (r.astype(ctype) for r in result)
            return w[..., ::-1], v[..., ::-1]

        return eig

    return quirk


def _plain_tuple(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's linalg returns plain tuples where NumPy's are named."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = func(*args, **kwargs)
        return tuple(result) if isinstance(result, tuple) else result

    return call


def _array_predicate(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's allclose/array_equal: a 0-d device array, not a Python bool."""

    @functools.wraps(func)
    def call(*args: Any, **kwargs: Any) -> Any:
        return np.asarray(func(*args, **kwargs))

    return call


Quirk = Callable[[Callable[..., Any]], Callable[..., Any]]

#: CuPy 14's differences from NumPy that the sim imitates, by qualified name
#: (``"sum"``, ``"linalg.eig"``, ``"ndarray.sort"``, ``"ufunc.reduce"``). Filled from
#: the capability table (``autodev._gpu_checks.TABLE``): each row there holds both
#: autodev's correction and this imitation, so CPU-only tests exercise every correction.
IMITATIONS: dict[str, Quirk] = {}
#: Names CuPy does not have (also from the capability table).
CUPY_MISSING: set[str] = set()


def _astype_no_casting(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.astype`` raises TypeError for any ``casting``/``subok``."""

    def astype(dtype: Any, order: Any = "K", casting: Any = None, subok: Any = None,
               copy: bool = True) -> Any:
        if casting is not None:
            raise TypeError("casting is not supported yet")
        if subok is not None:
            raise TypeError("subok is not supported yet")
        return method(dtype, order=order, copy=copy)

    return astype


def _check_kind(kind: Any) -> None:
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


def _inplace_sort(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.sort``: C-contiguous arrays only, ``kind`` None or 'stable'."""
    array = method.__self__

    def sort(axis: int = -1, kind: Any = None) -> Any:
        _check_kind(kind)
        _check_contiguous(array)
        return method(axis=axis, kind="stable")

    return sort


def _inplace_partition(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.partition``: C-contiguous arrays, ``kth`` an int or ints, no ``kind``."""
    array = method.__self__

    def partition(kth: Any, axis: int = -1) -> Any:
        _check_contiguous(array)
        _check_kth(kth)
        return method(kth, axis=axis)

    return partition


def _argpartition_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.argpartition``: ``kth`` an int or ints, no ``kind``."""

    def argpartition(kth: Any, axis: Any = -1) -> Any:
        _check_kth(kth)
        return method(kth, axis=axis)

    return argpartition


def _argsort_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.argsort``: ``kind`` None or 'stable'."""

    def argsort(axis: Any = -1, kind: Any = None) -> Any:
        _check_kind(kind)
        return method(axis=axis, kind="stable")

    return argsort


def _dot_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.dot(b, out=None)`` takes a device array ``b`` only."""

    def dot(b: Any, out: Any = None) -> Any:
        if not isinstance(b, np.ndarray):
            raise TypeError(f"Argument 'b' has incorrect type (expected cupy.ndarray, "
                            f"got {type(b).__name__})")
        return method(b) if out is None else method(b, out)

    return dot


def _take_method(method: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``ndarray.take(indices, axis=None, out=None)``: no ``mode``; indices wrap."""
    array = method.__self__

    def take(indices: Any, axis: Any = None, out: Any = None) -> Any:
        n = array.size if axis is None else array.shape[axis]
        indices = np.asarray(indices) % n if n else indices
        return method(indices, axis=axis) if out is None else method(indices, axis=axis,
                                                                     out=out)

    return take


def _stable_only_sort(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's sort/argsort take ``kind=None`` or ``'stable'`` only (ValueError otherwise)."""

    @functools.wraps(func)
    def sort(a: Any, axis: Any = -1, kind: Any = None) -> Any:
        _check_kind(kind)
        return func(a, axis=axis, kind="stable")

    return sort


def _partition_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's partition/argpartition: ``kth`` an int or ints, no ``kind``/``order``."""

    @functools.wraps(func)
    def partition(a: Any, kth: Any, axis: Any = -1) -> Any:
        _check_kth(kth)
        return func(a, kth, axis=axis)

    return partition


def _operands(*positions: int, error: type[Exception] = AttributeError,
              scalars: tuple[type, ...] = ()) -> Quirk:
    """A CuPy function reading array attributes of the operands at ``positions``:
    a list, tuple or scalar there raises ``error`` (``scalars`` are accepted)."""
    def quirk(func: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            for i in positions:
                if i < len(args) and not isinstance(args[i], np.ndarray) \
                        and type(args[i]) not in scalars:
                    if error is AttributeError:
                        raise AttributeError(f"'{type(args[i]).__name__}' object has no "
                                             "attribute 'ndim'")
                    raise error(f"Only python scalars or ndarrays are supported "
                                f"(got {type(args[i]).__name__})")
            return func(*args, **kwargs)

        return call

    return quirk


def _zero_d_count(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``count_nonzero``: a 0-d device array where NumPy returns a Python int."""

    @functools.wraps(func)
    def count_nonzero(a: Any, axis: Any = None) -> Any:
        return np.asarray(func(a, axis=axis))

    return count_nonzero


def _pinv_rcond(func: Callable[..., Any]) -> Callable[..., Any]:
    """CuPy's ``linalg.pinv(a, rcond=1e-15)``: ``rcond=None`` fails in arithmetic."""

    @functools.wraps(func)
    def pinv(a: Any, rcond: Any = 1e-15) -> Any:
        if rcond is None:
            raise TypeError("unsupported operand type(s) for *: 'NoneType' and 'float'")
        return func(a, rcond=rcond)

    return pinv


def _wrap_quantile_q(func: Callable[..., Any]) -> Callable[..., Any]:
    """A list ``q`` reaches the computation as a NumPy array (as CuPy converts it)."""

    @functools.wraps(func)
    def quantile(a: Any, q: Any, *args: Any, **kwargs: Any) -> Any:
        return func(a, np.asarray(q) if isinstance(q, (list, tuple)) else q, *args, **kwargs)

    return quantile


def _runtime_warning(func: Callable[..., Any]) -> Callable[..., Any]:
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
    return _lacking(*names)


class _SimModule:
    """A NumPy-like module whose functions take and return SimArrays."""

    def __init__(self, module: ModuleType, backend: "SimBackend") -> None:
        self._module = module
        self._backend = backend
        self._cache: dict[str, Any] = {}
        # qualified names as autodev's function table spells them: "linalg.solve"
        head = module.__name__
        self._prefix = "" if head == "numpy" else head.removeprefix("numpy.") + "."

    def __getattr__(self, name: str) -> Any:
        cache = self._cache
        if name in cache:
            return cache[name]
        if name == "ndarray":
            return SimArray
        qualified = self._prefix + name
        if qualified in CUPY_MISSING and self._module.__name__.startswith("numpy"):
            raise AttributeError(name)
        value = getattr(self._module, name)
        if isinstance(value, np.ufunc):
            value = _SimUfunc(value, self._backend)
        elif isinstance(value, ModuleType):
            value = _SimModule(value, self._backend)
        elif isinstance(value, type):
            pass  # dtypes, exceptions and classes are shared as they are
        elif callable(value):
            if qualified in IMITATIONS:
                value = IMITATIONS[qualified](value)
            value = _wrap_callable(value, self._backend, self._prefix + name)
        cache[name] = value
        return value


class SimBackend(Backend):
    """The simulated GPU ``sim:0``.

    Attributes
    ----------
    calls : int
        Module-function calls made on the device so far.
    h2d, d2h : int
        Transfers made so far (the dispatcher keeps the byte counts).
    costs : dict or None
        Cost curves this device reports to the cost model (profile ``devices``
        entry); None means the embedded default GPU curves.
    elapsed : float
        Virtual seconds of device time: every module-function call and transfer
        adds its true cost from ``costs`` (times a log-normal factor of spread
        ``noise``), so that timing the sim with :meth:`clock` measures exactly
        the curves calibration is expected to recover.
    """

    is_gpu = True
    oom_errors = (SimOutOfMemoryError,)

    def __init__(self, costs: dict[str, Any] | None = None) -> None:
        _LATEST[:] = [self]
        self.device = Device("sim", 0)
        self.costs = costs
        self.calls = 0
        self.h2d = 0
        self.d2h = 0
        self.freed = 0
        self.elapsed = 0.0
        self.noise = 0.0
        self._rng = np.random.default_rng(0)
        self._truth: tuple[int, Any] | None = None
        self._faults: dict[int, str] = {}
        self._persistent: tuple[int, str] | None = None  # (first call, kind)
        self._raise_linalg = False
        self._xp = _SimModule(np, self)
        self._scipy: dict[str, Any] = {}
        #: Bytes of device memory it reports (tests shrink it to exercise budgets).
        self.memory = 80 << 30

    @property
    def xp(self) -> Any:
        return self._xp

    def scipy(self, name: str) -> Any | None:
        if name not in self._scipy:
            module = importlib.import_module(f"scipy.{name}")
            if name.startswith("sparse"):  # sparse matrices need their own wall
                from ._sim_sparse import SimSparseModule

                self._scipy[name] = SimSparseModule(module, self)
            else:
                self._scipy[name] = _SimModule(module, self)
        return self._scipy[name]

    def inject_fault(self, kind: str = "oom", at_call: int = 1, count: int | None = 1) -> None:
        """Make the ``at_call``-th next device call (1 = the next) and ``count - 1``
        following ones fail with an out-of-memory (``"oom"``), device (``"error"``) or
        not-implemented (``"unimplemented"``: a case CuPy lacks) fault; ``count=None``
        makes every call from then on fail, until :meth:`clear_faults`.

        A call that makes only a view (CuPy allocates nothing for one) does not take an
        out-of-memory fault: it passes to the next call.
        """
        if kind not in ("oom", "error", "unimplemented"):
            raise ValueError(f"kind must be 'oom', 'error' or 'unimplemented'. "
                             f"Got {kind!r} instead.")
        if count is None:
            self._persistent = (self.calls + at_call, kind)
            return
        for k in range(count):
            self._faults[self.calls + at_call + k] = kind

    def clear_faults(self) -> None:
        """Forget every fault not yet triggered (persistent ones too)."""
        self._faults.clear()
        self._persistent = None

    def clock(self) -> float:
        """The virtual clock: seconds of simulated device time so far."""
        return self.elapsed

    def true_model(self) -> Any:
        """The :class:`~autodev._cost.CostModel` of this device's true curves (``gpu`` class)."""
        from .._cost import CostModel

        costs = self.costs
        if self._truth is None or self._truth[0] != id(costs):
            if costs is None:
                from .._profile import embedded_default

                costs = embedded_default()["devices"]["gpu"]
            self._truth = (id(self.costs), CostModel({"cpu": {}, "gpu": costs}))
        return self._truth[1]

    def _charge(self, seconds: float) -> None:
        if self.noise and seconds:
            seconds *= float(np.exp(self.noise * self._rng.standard_normal()))
        if seconds < float("inf"):
            self.elapsed += seconds

    def _charge_call(self, name: str, args: tuple[Any, ...]) -> None:
        family = _family_of(name)
        arrays = [a._a for a in args if type(a) is SimArray]
        if family is None or not arrays:
            return
        from .._cost import dtype_class
        from .._dispatch import WORK

        work = WORK[family](arrays)
        dclass = dtype_class(max(arrays, key=lambda a: a.dtype.itemsize).dtype)
        self._charge(self.true_model().compute("gpu", family, dclass, work))

    def _tick(self, name: str = "", args: tuple[Any, ...] = ()) -> None:
        if name:
            self._charge_call(name, args)
        self.calls += 1
        fault = self._faults.pop(self.calls, None)
        scheduled = fault is not None
        persistent = self._persistent
        if fault is None and persistent is not None and self.calls >= persistent[0]:
            fault = persistent[1]
        if fault == "oom" and _makes_view(name, args):
            if scheduled:  # it passes to the next call that has none scheduled
                later = self.calls + 1
                while later in self._faults:
                    later += 1
                self._faults[later] = fault
            return
        if fault == "oom":
            raise SimOutOfMemoryError(
                f"Out of memory on the simulated GPU (fault injected at call {self.calls})"
            )
        if fault == "unimplemented":
            raise NotImplementedError(f"`{name or 'call'}` is not supported yet "
                                      f"(fault injected at call {self.calls})")
        if fault == "error":
            raise SimDeviceError(
                f"simulated device error (fault injected at call {self.calls})"
            )

    def from_host(self, array: np.ndarray) -> SimArray:
        self._tick()
        self.h2d += 1
        self._charge(self.true_model().h2d(array.nbytes))
        return SimArray(np.array(array, copy=True, order="K"))

    def to_host(self, native: Any) -> np.ndarray:
        self.d2h += 1
        self._charge(self.true_model().d2h(native._a.nbytes))
        return native._a.copy(order="K")

    def write_host(self, native: Any, host: np.ndarray) -> None:
        # into existing memory: not an allocation, so no fault is injected here
        self.h2d += 1
        self._charge(self.true_model().h2d(host.nbytes))
        native._a[...] = host

    def is_native(self, obj: object) -> bool:
        return type(obj) is SimArray

    def address(self, native: Any) -> int:
        return int(native._a.__array_interface__["data"][0])

    def owner(self, native: Any) -> Any:
        base = native._a.base
        return native._a if base is None else base

    def free_memory(self) -> None:
        self.freed += 1

    def memory_info(self) -> tuple[int, int] | None:
        return self.memory, self.memory

    def linalg_errors(self) -> ContextManager[None]:
        return self._linalg_raise()

    @contextlib.contextmanager
    def _linalg_raise(self) -> Iterator[None]:
        previous, self._raise_linalg = self._raise_linalg, True
        outer, _LINALG_RAISE[0] = _LINALG_RAISE[0], True
        try:
            yield
        finally:
            self._raise_linalg = previous
            _LINALG_RAISE[0] = outer
