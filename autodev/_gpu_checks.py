"""The capability table of CuPy 14's differences from NumPy, one row per name.

Each :class:`Row` says, for one dispatched name (``"sum"``, ``"linalg.eig"``,
``"ndarray.sort"``, ``"ufunc.reduce"``): where CuPy has it, which keywords
autodev passes to it, which NumPy keywords CuPy lacks (a call passing one runs
on the CPU), any further capability rule, the *correction* autodev wraps around
the GPU function, and the simulated GPU's *imitation* of CuPy's behaviour, so
that CPU-only tests exercise every correction. ``TABLE`` is read by the function
table (``autodev._namespace``), the simulator, the tests (each imitation is shown
to fire; each name and keyword is checked against the installed CuPy) and
docs/coverage.md. Read from the CuPy 14.2 sources.

The corrections here check what CuPy does not (index bounds: one device
reduction, which synchronises) and bring results to NumPy's types.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Callable, Mapping

import numpy as np

from ._backends import Backend
from ._backends import _sim as S

Func = Callable[..., Any]


def _out_of_range(xp: Any, indices: Any, n: int) -> bool:
    idx = indices if hasattr(indices, "dtype") else xp.asarray(indices)
    if idx.size == 0 or idx.dtype.kind not in "iu":
        return False
    return bool(xp.any((idx < -n) | (idx >= n)))


def checked_take(backend: Backend, func: Func) -> Func:
    """``take`` that raises IndexError for out-of-range indices under ``mode='raise'``,
    and applies ``mode='wrap'``/``'clip'`` itself (CuPy's ``take`` takes no ``mode``)."""
    xp = backend.xp

    def take(a: Any, indices: Any, axis: int | None = None, out: Any = None,
             mode: str = "raise") -> Any:
        n = a.size if axis is None else a.shape[axis]
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

    def take_along_axis(arr: Any, indices: Any, axis: int | None = -1) -> Any:
        n = arr.size if axis is None else arr.shape[axis]
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




# --------------------------------------------------------------------------- corrections

Rule = Callable[[list[Any], dict[str, Any]], bool]
Factory = Callable[[Backend, Func], Func]

#: ``method=`` values CuPy's percentile/quantile implement (others raise ValueError).
_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def without_kwargs(names: tuple[str, ...]) -> Rule:
    """Capability rule: none of the keywords ``names`` is passed."""
    return lambda arrays, kwargs: not kwargs or not any(n in kwargs for n in names)


def _quantile_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return (kwargs.get("method", "linear") in _QUANTILE_METHODS
            and kwargs.get("interpolation") is None
            and bool(arrays) and arrays[0].dtype.kind in "iuf")


def _lstsq_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    # CuPy replaces rcond <= 0 or >= 1 by eps; NumPy passes it on to LAPACK.
    rcond = kwargs.get("rcond") if kwargs else None
    return rcond is None or (isinstance(rcond, (int, float)) and 0 < rcond < 1)


def check_sort_kind(kind: Any) -> None:
    """Raise NumPy's ValueError for a ``kind`` NumPy does not know (it reads the first letter)."""
    if kind is not None and not (isinstance(kind, str) and kind[:1].lower() in ("q", "h", "m",
                                                                                 "s")):
        raise ValueError(f"sort kind must be one of 'quick', 'heap', or 'stable' (got {kind!r})")


def any_kind_sort(backend: Backend, func: Func) -> Func:
    """``sort``/``argsort``: CuPy takes only ``kind=None``/``'stable'`` (its sort is
    always stable, a valid result for every NumPy kind) and no ``stable=``."""

    def sort(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, *,
             stable: Any = None) -> Any:
        check_sort_kind(kind)
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

    def partition(a: Any, kth: Any, axis: Any = -1, kind: Any = "introselect",
                  order: Any = None) -> Any:
        return func(a, plain_kth(kth), axis=axis)

    return partition


def any_kind_argpartition_method(backend: Backend, func: Func) -> Func:
    """``ndarray.argpartition``: as :func:`any_kind_partition` for the method."""

    def argpartition(a: Any, kth: Any, axis: Any = -1, kind: Any = "introselect",
                     order: Any = None) -> Any:
        return func(a, plain_kth(kth), axis)

    return argpartition


def float_quantile(backend: Backend, func: Func) -> Func:
    """``percentile``/``quantile``: CuPy computes in ``result_type(a, q)``, so integer
    input interpolates in integers (``percentile(int_array, 50)`` truncated); NumPy
    interpolates integer input in float64."""
    xp = backend.xp

    def quantile(a: Any, q: Any, axis: Any = None, out: Any = None,
                 overwrite_input: bool = False, method: str = "linear",
                 keepdims: bool = False) -> Any:
        if a.dtype.kind in "iu" and method in ("linear", "midpoint"):
            a = a.astype(xp.float64)
            if hasattr(q, "dtype"):
                q = q.astype(xp.float64)
        return func(a, q, axis=axis, out=out, overwrite_input=overwrite_input,
                    method=method, keepdims=keepdims)

    return quantile


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


def real_eig(values_only: bool) -> Callable[[Backend, Func], Func]:
    """``linalg.eig``/``eigvals``: CuPy's results are complex for real input always; NumPy
    returns them real when every eigenvalue is real (one device reduction, synchronising)."""

    def factory(backend: Backend, func: Func) -> Func:
        xp = backend.xp

        def eig(a: Any) -> Any:
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


def as_device_arrays(*positions: int) -> Factory:
    """Operands at ``positions`` (lists, tuples, Python or NumPy scalars) become device
    arrays first: CuPy reads array attributes of them (``outer``, ``interp``)."""
    def factory(backend: Backend, func: Func) -> Func:
        xp, native = backend.xp, backend.is_native

        def call(*args: Any, **kwargs: Any) -> Any:
            args = tuple(xp.asarray(a) if i in positions and not native(a) else a
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


def searchsorted_values(backend: Backend, func: Func) -> Func:
    """``searchsorted``: CuPy takes ``v`` as a device array or a Python scalar only
    (NotImplementedError for a NumPy scalar or a list)."""
    xp, native = backend.xp, backend.is_native

    def searchsorted(a: Any, v: Any, side: str = "left", sorter: Any = None) -> Any:
        if not native(v) and type(v) not in (int, float, complex):
            v = xp.asarray(v)
        return func(a, v, side=side, sorter=sorter)

    return searchsorted


def stacked_choices(backend: Backend, func: Func) -> Func:
    """``choose``: CuPy reads ``choices.shape``, so a sequence of choices is broadcast
    and stacked into one device array first (as NumPy does implicitly)."""
    xp, native = backend.xp, backend.is_native

    def choose(a: Any, choices: Any, out: Any = None, mode: str = "raise") -> Any:
        if not native(choices):
            items = [c if native(c) else xp.asarray(c) for c in choices]
            choices = xp.stack(xp.broadcast_arrays(*items))
        return func(a, choices, out=out, mode=mode)

    return choose


def _choose(backend: Backend, func: Func) -> Func:
    return stacked_choices(backend, checked_choose(backend, func))


#: NumPy before 2.3 counts into a Python int, later ones into a NumPy integer.
_COUNT_IS_INT = type(np.count_nonzero(np.zeros(1))) is int


def python_int_count(backend: Backend, func: Func) -> Func:
    """``count_nonzero``: without ``axis`` NumPy < 2.3 returns a Python ``int`` (later
    NumPy an integer scalar); CuPy always a 0-d array."""

    def count_nonzero(a: Any, axis: Any = None) -> Any:
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
    """``ndarray.dot``: NumPy takes a scalar (a product); CuPy's method a device array only."""
    xp, native = backend.xp, backend.is_native

    def dot(a: Any, b: Any, out: Any = None) -> Any:
        if not native(b):
            b = xp.asarray(b)
        return func(a, b) if out is None else func(a, b, out)

    return dot


def ufunc_operands(backend: Backend, func: Func) -> Func:
    """A NumPy ufunc on the GPU: list or tuple operands become device arrays (CuPy raises
    'Unsupported type'), and with ``out=`` the casts are first checked on empty host
    arrays, so a refused cast raises NumPy's ``UFuncTypeError`` (CuPy: a plain TypeError)."""
    xp = backend.xp
    np_ufunc = getattr(np, func.__name__.removeprefix("cupy_"))  # CuPy's are "cupy_add"
    nin = np_ufunc.nin

    def call(*args: Any, **kwargs: Any) -> Any:
        if any(type(a) is list or type(a) is tuple for a in args[:nin]):
            args = tuple(xp.asarray(a) if i < nin and type(a) in (list, tuple) else a
                         for i, a in enumerate(args))
        if len(args) > nin or kwargs.get("out") is not None:
            _rehearse(np_ufunc, args, kwargs)
        return func(*args, **kwargs)

    return call


def _rehearse(np_ufunc: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Run ``np_ufunc`` on one-element host arrays of the call's dtypes and ranks (core
    dimensions of 1 agree for gufuncs such as ``matmul``): NumPy's dtype errors, no data."""
    def probe(a: Any) -> Any:
        dtype = getattr(a, "dtype", None)
        return a if dtype is None else np.empty((1,) * a.ndim, dtype)

    out = kwargs.get("out")
    outs = out if type(out) is tuple else (out,) if out is not None else ()
    inputs = [probe(a) for a in args[:np_ufunc.nin]]
    outputs = tuple(None if o is None else probe(o) for o in (*args[np_ufunc.nin:], *outs))
    options = {k: v for k, v in kwargs.items() if k in ("dtype", "casting")}
    np_ufunc(*inputs, out=outputs if len(outputs) > 1 else outputs[0], **options)


def _eig(backend: Backend, func: Func) -> Func:
    return named_result("linalg.eig")(backend, real_eig(False)(backend, func))


# --------------------------------------------------------------------------- the table

@dataclass(frozen=True)
class Row:
    """One name's CuPy difference: capability, correction and the sim's imitation.

    Attributes
    ----------
    name : str
        The dispatched name (``"sum"``, ``"linalg.eig"``, ``"ndarray.sort"``, ``"ufunc"``).
    cupy : str or None
        Where CuPy has it (``"cupy.sort"``, ``"cupy.ndarray.sort"``); None: CuPy lacks it.
    passes : tuple of str
        The keywords autodev's correction passes to the CuPy function (checked against
        the installed CuPy); empty where autodev passes the caller's own.
    numpy_only : tuple of str
        NumPy keywords CuPy lacks (a TypeError there): a call passing one runs on the CPU.
    rule : callable, optional
        A further capability rule ``(arrays, kwargs) -> bool``; False runs it on the CPU.
    correction : callable, optional
        ``(backend, gpu_function) -> function`` giving NumPy's behaviour on the GPU.
    imitation : callable, optional
        ``function -> function``: the simulated GPU's imitation of CuPy's behaviour.
    why : str
        The difference, in one line (docs/coverage.md).
    """

    name: str
    cupy: str | None
    why: str
    passes: tuple[str, ...] = ()
    numpy_only: tuple[str, ...] = ()
    rule: Rule | None = None
    correction: Factory | None = None
    imitation: S.Quirk | None = None

    def gpu_rule(self) -> Rule | None:
        """The capability rule for the GPU: no NumPy-only keyword, and ``rule``."""
        plain = without_kwargs(self.numpy_only) if self.numpy_only else None
        rule = self.rule
        if plain is None or rule is None:
            return plain or rule
        return lambda arrays, kwargs: plain(arrays, kwargs) and rule(arrays, kwargs)

    def sim_quirk(self) -> S.Quirk | None:
        """The sim's imitation: ``imitation`` plus a TypeError for each NumPy-only keyword."""
        imitation, numpy_only = self.imitation, self.numpy_only
        if not numpy_only:
            return imitation
        lacking = S.imitate_missing_keywords(*numpy_only)
        if imitation is None:
            return lacking
        return lambda func: lacking(imitation(func))


#: Keywords CuPy's ``ufunc.__call__`` takes (it raises 'Wrong arguments' for others).
UFUNC_KEYWORDS = frozenset({"out", "dtype", "casting"})
#: Ufuncs whose ``reduce``/``accumulate``/``reduceat`` CuPy implements, and the keywords.
UFUNC_METHODS: Mapping[str, tuple[frozenset[str], frozenset[str]]] = MappingProxyType({
    "reduce": (frozenset({"add", "multiply"}),
               frozenset({"axis", "dtype", "out", "keepdims"})),
    "accumulate": (frozenset({"add", "multiply"}), frozenset({"axis", "dtype", "out"})),
    "reduceat": (frozenset({"add"}), frozenset({"axis", "dtype", "out"})),
})
_AT_INTS = frozenset("ilqILQ")
#: ``ufunc.at`` in CuPy: the ufuncs with a scatter kernel, by dtype character of ``a``.
UFUNC_AT: Mapping[str, frozenset[str]] = MappingProxyType({
    "add": _AT_INTS | frozenset("efd"),
    "subtract": frozenset("iI"),
    "bitwise_and": _AT_INTS, "bitwise_or": _AT_INTS, "bitwise_xor": _AT_INTS,
})


def ufunc_method_rule(method: str, name: str) -> Rule:
    """Capability rule for ``<name>.<method>`` (``add.reduce``): CuPy implements it."""
    ufuncs, keywords = UFUNC_METHODS[method]
    if name not in ufuncs:
        return lambda arrays, kwargs: False
    return lambda arrays, kwargs: not kwargs or keywords.issuperset(kwargs)


def ufunc_at_ok(name: str, dtype: np.dtype) -> bool:
    """True if CuPy's ``<name>.at`` runs on arrays of ``dtype``."""
    return dtype.char in UFUNC_AT.get(name, ())


def _ufunc_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return not kwargs or UFUNC_KEYWORDS.issuperset(kwargs)


_FFT = "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft".split()
_Q = ("percentile", "quantile")


def _rows() -> list[Row]:
    rows = [
        # --- keywords CuPy lacks: the call runs on the CPU
        *(Row(n, f"cupy.{n}", "no initial=/where=", numpy_only=("initial", "where"))
          for n in ("sum", "prod", "nansum", "nanprod", "max", "min", "amax", "amin",
                    "nanmax", "nanmin")),
        *(Row(n, f"cupy.{n}", "no where=", numpy_only=("where",))
          for n in ("mean", "nanmean", "all", "any")),
        *(Row(n, f"cupy.{n}", "no where=/mean=/correction=",
              numpy_only=("where", "mean", "correction"))
          for n in ("std", "var", "nanstd", "nanvar")),
        Row("isin", "cupy.isin", "no kind=", numpy_only=("kind",)),
        Row("lexsort", "cupy.lexsort", "no axis=", numpy_only=("axis",)),
        Row("unique", "cupy.unique", "no sorted=", numpy_only=("sorted",)),
        Row("trim_zeros", "cupy.trim_zeros", "no axis=", numpy_only=("axis",)),
        Row("einsum", "cupy.einsum", "no out=/casting=/order=",
            numpy_only=("out", "casting", "order")),
        Row("delete", "cupy.delete", "no obj= by name", numpy_only=("obj",)),
        Row("linalg.cholesky", "cupy.linalg.cholesky", "no upper=; a matrix that is not "
            "positive definite gives NaN unless under cupyx.errstate(linalg='raise') (autodev "
            "runs GPU linear algebra so)", numpy_only=("upper",),
            imitation=S.quiet_singular()),
        *(Row(f"linalg.{n}", f"cupy.linalg.{n}", "singular input gives inf/NaN unless under "
              "cupyx.errstate(linalg='raise') (autodev runs GPU linear algebra so)",
              imitation=S.quiet_singular()) for n in ("solve", "inv")),
        Row("scipy.linalg.solve_triangular", "cupyx.scipy.linalg.solve_triangular",
            "never checks singularity, even under errstate (autodev.scipy.linalg checks the "
            "diagonal)", imitation=S.quiet_singular(always=True)),
        Row("ndarray.__getitem__", "cupy.ndarray.__getitem__", "out-of-bounds integer-array "
            "indices wrap, no IndexError (autodev checks bounds first)",
            imitation=S.wrapping_indices),
        Row("linalg.matrix_rank", "cupy.linalg.matrix_rank", "no hermitian=/rtol=; no A=",
            numpy_only=("hermitian", "rtol", "A")),
        Row("linalg.svd", "cupy.linalg.svd", "no hermitian=; a plain tuple, not SVDResult",
            numpy_only=("hermitian",), correction=named_result("linalg.svd"),
            imitation=S._plain_tuple),
        *(Row(f"fft.{n}", f"cupy.fft.{n}", "no out=", numpy_only=("out",)) for n in _FFT),
        # --- corrected around the GPU call
        Row("count_nonzero", "cupy.count_nonzero", "no keepdims=; a 0-d array, not an int",
            passes=("axis",), numpy_only=("keepdims",), correction=python_int_count,
            imitation=S._zero_d_count),
        Row("clip", "cupy.clip", "no min=/max= (NumPy 2's names) nor ufunc keywords",
            numpy_only=("min", "max", "dtype", "casting", "where", "order", "subok",
                        "signature")),
        *(Row(n, f"cupy.{n}", "kind only None/'stable' (ValueError); no order=",
              passes=("axis", "kind"), numpy_only=("order",), correction=any_kind_sort,
              imitation=S._stable_only_sort) for n in ("sort", "argsort")),
        *(Row(n, f"cupy.{n}", "no kind=/order=; kth Python ints only",
              passes=("axis",), numpy_only=("order",), correction=any_kind_partition,
              imitation=S._partition_function) for n in ("partition", "argpartition")),
        *(Row(n, f"cupy.{n}", "computes in result_type(a, q); five methods; no weights=",
              passes=("axis", "out", "overwrite_input", "method", "keepdims"),
              numpy_only=("weights",), rule=_quantile_rule, correction=float_quantile,
              imitation=S._result_type_quantile) for n in _Q),
        *(Row(n, f"cupy.{n}", "a 0-d array, not a Python bool", correction=python_bool,
              imitation=S._array_predicate) for n in ("allclose", "array_equal",
                                                       "array_equiv")),
        Row("reshape", "cupy.reshape", "no shape= (newshape only)", correction=shape_keyword,
            imitation=S._lacking("shape")),
        Row("take", "cupy.take", "wraps out-of-range indices; no mode=",
            passes=("axis", "out"), correction=checked_take, imitation=S._wrapping_take),
        Row("take_along_axis", "cupy.take_along_axis", "wraps out-of-range indices",
            correction=checked_take_along_axis, imitation=S._wrapping_take_along_axis),
        Row("choose", "cupy.choose", "reads choices.shape (no list of choices)",
            passes=("out", "mode"), correction=_choose,
            imitation=S._operands(1)),
        Row("outer", "cupy.outer", "reads a.ravel() (no lists or scalars)",
            correction=as_device_arrays(0, 1), imitation=S._operands(0, 1)),
        Row("interp", "cupy.interp", "reads x.flags (no lists or scalars)",
            correction=as_device_arrays(0, 1, 2), imitation=S._operands(0, 1, 2)),
        Row("searchsorted", "cupy.searchsorted",
            "v a device array or Python scalar (NotImplementedError)",
            passes=("side", "sorter"), correction=searchsorted_values,
            imitation=S._operands(1, error=NotImplementedError, scalars=(int, float, complex))),
        Row("linalg.pinv", "cupy.linalg.pinv", "rcond=None fails; no hermitian=/rtol=",
            passes=("rcond",), numpy_only=("hermitian", "rtol"), correction=pinv_rcond,
            imitation=S._pinv_rcond),
        *(Row(f"linalg.{n}", f"cupy.linalg.{n}", "a plain tuple, not a named one",
              correction=named_result(f"linalg.{n}"), imitation=S._plain_tuple)
          for n in ("eigh", "slogdet", "qr")),
        Row("linalg.eig", "cupy.linalg.eig", "complex results for real input; plain tuple; "
            "eigenvalue order cuSOLVER's (unspecified, as NumPy's: not corrected)",
            correction=_eig, imitation=S._complex_eig(False)),
        Row("linalg.eigvals", "cupy.linalg.eigvals", "complex results for real input; "
            "order unspecified",
            correction=real_eig(True), imitation=S._complex_eig(True)),
        Row("linalg.lstsq", "cupy.linalg.lstsq", "rank a 0-d array; rcond outside (0, 1) "
            "replaced", rule=_lstsq_rule, correction=lstsq_host_rank),
        Row("linalg.diagonal", None, "absent: the main diagonal over the last two axes",
            correction=linalg_diagonal),
        # --- names CuPy 14 lacks: the call runs on the CPU (resolution finds nothing)
        *(Row(n, None, "absent from CuPy 14") for n in (
            "insert", "nanpercentile", "nanquantile", "linalg.matrix_norm",
            "linalg.vector_norm", "linalg.multi_dot", "linalg.outer", "linalg.svdvals",
            "linalg.tensordot", "linalg.trace", "linalg.vecdot")),
        *(Row(n, None, "no such CuPy ufunc") for n in ("isnat", "matvec", "vecmat", "spacing",
                                                         "vecdot")),
        # --- operands NumPy names and CuPy does not (passed by keyword: the CPU runs it)
        *(Row(n, f"cupy.{n}", f"the operand is not called {k}= in CuPy", numpy_only=(k,))
          for n, k in (("flip", "m"), ("fliplr", "m"), ("flipud", "m"), ("rot90", "m"),
                       ("ediff1d", "ary"), ("extract", "arr"), ("i0", "x"), ("sinc", "x"),
                       ("stack", "arrays"), ("linalg.matrix_power", "a"))),
        Row("copy", "cupy.copy", "no subok=", numpy_only=("subok",)),
        # --- runs where its input lives, so corrected rather than sent to the CPU
        *(Row(n, f"cupy.{n}", "no subok= (autodev has no subclasses: dropped)",
              numpy_only=("subok",), correction=dropping_keywords("subok"))
          for n in ("broadcast_to", "broadcast_arrays")),
        *(Row(n, f"cupy.{n}", "no like= (only NumPy's dispatch hook: dropped)",
              numpy_only=("like",), correction=dropping_keywords("like"))
          for n in ("ascontiguousarray", "asfortranarray")),
        *(Row(n, f"cupy.{n}", "no device= (device=None dropped; another device is "
              "placement's to handle, issue 9)", correction=dropping_keywords("device"),
              numpy_only=("device",)) for n in ("empty_like", "zeros_like", "ones_like",
                                                "full_like")),
        Row("scipy.linalg.lu_factor", "cupyx.scipy.linalg.lu_factor", "warns RuntimeWarning "
            "for a singular matrix, not SciPy's LinAlgWarning (autodev.scipy.linalg re-issues "
            "it as LinAlgWarning)", imitation=S._runtime_warning),
        # --- array methods
        Row("ndarray.astype", "cupy.ndarray.astype", "TypeError for any casting=/subok= "
            "(autodev checks casting with numpy.can_cast and passes neither)",
            passes=("order", "copy"), imitation=S._astype_no_casting),
        Row("ndarray.sort", "cupy.ndarray.sort", "in place: C-contiguous only "
            "(NotImplementedError); kind None/'stable' (autodev sorts a copy and writes it "
            "back)", passes=("axis", "kind"), imitation=S._inplace_sort),
        Row("ndarray.partition", "cupy.ndarray.partition", "in place: C-contiguous only; "
            "kth Python ints", passes=("axis",), imitation=S._inplace_partition),
        Row("ndarray.argsort", "cupy.ndarray.argsort", "kind None/'stable' (ValueError)",
            passes=("axis", "kind"), numpy_only=("order",), correction=any_kind_sort,
            imitation=S._argsort_method),
        Row("ndarray.argpartition", "cupy.ndarray.argpartition", "no kind=; kth Python ints",
            numpy_only=("order",), correction=any_kind_argpartition_method,
            imitation=S._argpartition_method),
        Row("ndarray.dot", "cupy.ndarray.dot", "b a device array only (no scalar)",
            correction=scalar_dot, imitation=S._dot_method),
        Row("ndarray.take", "cupy.ndarray.take", "wraps out-of-range indices; no mode=",
            correction=checked_take, imitation=S._take_method),
        Row("ndarray.choose", "cupy.ndarray.choose", "reads choices.shape",
            correction=_choose, imitation=S._operands(0)),
        Row("ndarray.searchsorted", "cupy.ndarray.searchsorted",
            "v a device array or Python scalar (NotImplementedError)",
            correction=searchsorted_values,
            imitation=S._operands(0, error=NotImplementedError, scalars=(int, float, complex))),
        # --- ufuncs
        Row("ufunc", "cupy.ufunc", "keywords out/dtype/casting only: where=/order=/subok=/"
            "signature= raise 'Wrong arguments'; no list operands; plain TypeError for a "
            "refused cast", rule=_ufunc_rule, correction=ufunc_operands, imitation=S.ufunc_call_imitation(UFUNC_KEYWORDS)),
        *(Row(f"ufunc.{m}", f"cupy.ufunc.{m}",
              f"only for {', '.join(sorted(UFUNC_METHODS[m][0]))} (NotImplementedError)",
              imitation=S.ufunc_method_imitation(m, *UFUNC_METHODS[m]))
          for m in UFUNC_METHODS),
        Row("ufunc.at", "cupy.ufunc.at", "only add/subtract/bitwise_and/or/xor, for some "
            "dtypes (NotImplementedError/TypeError): others run on the host copy",
            imitation=S.ufunc_at_imitation(dict(UFUNC_AT))),
    ]
    return rows


#: The capability table: name -> row (read-only).
TABLE: Mapping[str, Row] = MappingProxyType({row.name: row for row in _rows()})


def gpu_rules() -> dict[str, Rule]:
    """Capability rules by dispatched name (``linalg.``/``fft.``/``ndarray.`` prefixed)."""
    return {name: rule for name, row in TABLE.items()
            if (rule := row.gpu_rule()) is not None}


#: Corrections of dispatched functions (``ndarray.`` methods: METHOD_GPU_WRAPPERS).
GPU_WRAPPERS: Mapping[str, Factory] = MappingProxyType({
    name: row.correction for name, row in TABLE.items()
    if row.correction is not None and not name.startswith(("ndarray.", "ufunc"))})
#: Array methods whose CuPy method has a difference.
METHOD_GPU_WRAPPERS: Mapping[str, Factory] = MappingProxyType({
    name.removeprefix("ndarray."): row.correction for name, row in TABLE.items()
    if row.correction is not None and name.startswith("ndarray.")})


def _install_imitations() -> None:
    """Give the simulated GPU every row's imitation (it reads ``_sim.IMITATIONS``)."""
    for name, row in TABLE.items():
        quirk = row.sim_quirk()
        if quirk is not None:
            S.IMITATIONS[name] = quirk
        if row.cupy is None:
            S.CUPY_MISSING.add(name)


_install_imitations()
