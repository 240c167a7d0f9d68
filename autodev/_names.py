"""One row per NumPy name: every fact autodev holds about how it runs that name.

A :class:`Name` row says, for one name of NumPy (``"sum"``, ``"linalg.solve"``,
``"fft.fft"``, ``"zeros"``): its cost family and NumPy's scalar rule (the function
table's spec, :mod:`autodev._capability.specs`), whether it runs where its input lives,
the array method that dispatches like it, whether it writes into its argument, the ufunc
it reduces as, its creation signature, whether it takes ``device=`` or runs NumPy's own
code. The tables the package reads about NumPy's functions are derived from ``ROWS``
below, once, at import (so the hot paths read plain dicts and sets); ``tests/package/test_names.py`` checks each against
the rows, and docs/coverage.md is rendered from them (``autodev coverage``).

What CuPy does differently for a name (keywords it lacks, the correction autodev wraps
around it, the simulated GPU's imitation) is the capability table's
(:mod:`autodev._capability.table`), keyed by the same names. A name with no row runs on
the CPU, its inputs moved to the host once. How to add a function: docs/dispatch.md.

This module imports nothing of autodev (it sits at the foundation: every room reads it).
Its annotations are evaluated (no ``from __future__ import annotations``): the rows are
named tuples, which would otherwise compile each annotation's string at import.
"""

from types import MappingProxyType
from typing import Any, Callable, Literal, Mapping, NamedTuple

#: A rule over a call's ``(args, kwargs)``.
CallRule = Callable[[tuple[Any, ...], dict[str, Any]], bool]


class Method(NamedTuple):
    """The array method of the same name, dispatched like the function.

    ``family`` and ``scalar`` default to the function's; ``reduces`` is the NumPy ufunc
    whose ``reduce`` NumPy's own method runs (``ndarray.sum``: ``add``) with the names of
    the method's positional arguments after the array (an override is handed them so).
    """

    family: str | None = None
    scalar: bool | None = None
    reduces: tuple[str, str] | None = None


class Reduce(NamedTuple):
    """A reduction NumPy itself runs as ``ufunc.reduce(a, axis=None, ...)`` for an array:
    the function calls it directly when given ``a`` with only the ``keys`` keywords;
    ``method`` is the array method it hands a subclass to, where not its own name."""

    ufunc: str
    keys: str
    method: str | None = None


class Writes(NamedTuple):
    """A function writing into its first argument (the parameter ``param``), except for
    the calls ``unless`` says write nothing."""

    param: str
    unless: CallRule | None = None


class Creation(NamedTuple):
    """A creation function: where it takes ``dtype`` by position (None: autodev's own
    conversion, ``array``, ``asarray``, ...), whether it takes NumPy's ``(shape, dtype,
    order)`` (``shaped``) and whether its arguments may be arrays (``linspace(a, b)``)."""

    dtype_at: int | None = None
    shaped: bool = False
    arrays: bool = False


class Name(NamedTuple):
    """Every fact autodev holds about one NumPy name.

    Attributes
    ----------
    name : str
        The name, ``linalg.``/``fft.`` prefixed for those modules.
    family : str, optional
        The cost family its spec is priced by (``autodev._cost.families.WORK``); a name
        with a family is *dispatched*: the cost model picks its device.
    view : bool
        It runs where its first array lives, unpriced (views, ``*_like``, cheap calls).
    scalar : bool
        NumPy returns a 0-d result as a scalar.
    ufunc : str, optional
        The cost family of the NumPy ufunc of this ``__name__``, where not elementwise.
    method : Method, optional
        The array method of this name dispatches like the function.
    gpu_path : str, optional
        Where the GPU backend has it, where not at ``name`` (CuPy has no ``linalg.diagonal``).
    writes : Writes, optional
        It writes into its first argument (``put``, ``place``, ...).
    reduce_as : Reduce, optional
        NumPy runs it as a ufunc's ``reduce``; so does autodev's fast path.
    creation : Creation, optional
        A creation function (placed by ``device=`` or the policy).
    direct : bool
        autodev's own implementation (``autodev._namespace``), not a spec's dispatch.
    placed : bool
        It takes ``device=`` as an autodev device (NumPy: ``"cpu"`` only).
    numpy_code : {"always", "subclasses"}, optional
        NumPy's own Python code runs on autodev arrays: always, or for a subclass array
        (it calls the subclass's methods).
    read_only : bool
        On the GPU its result is a copy CuPy makes where NumPy gives a read-only view:
        autodev marks it read-only.
    """

    name: str
    family: str | None = None
    view: bool = False
    scalar: bool = False
    ufunc: str | None = None
    method: Method | None = None
    gpu_path: str | None = None
    writes: Writes | None = None
    reduce_as: Reduce | None = None
    creation: Creation | None = None
    direct: bool = False
    placed: bool = False
    numpy_code: Literal["always", "subclasses"] | None = None
    read_only: bool = False


def copies(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``nan_to_num``'s ``copy`` argument (False: it writes into ``x``)."""
    return bool(kwargs.get("copy", args[1] if len(args) > 1 else True))


#: ``ndarray.sum``'s positional arguments after the array (``ufunc.reduce``'s).
_FULL_REDUCE = "axis dtype out keepdims initial where"
_NO_DTYPE = "axis out keepdims initial where"  # ndarray.max, ndarray.min
_LOGICAL = "axis out keepdims where"  # ndarray.any, ndarray.all

ROWS: tuple[Name, ...] = (
    # --- reductions (NumPy returns a 0-d result as a scalar)
    Name("sum", "reduction", scalar=True, method=Method(reduces=("add", _FULL_REDUCE)),
         reduce_as=Reduce("add", "axis dtype keepdims")),
    Name("prod", "reduction", scalar=True, method=Method(reduces=("multiply", _FULL_REDUCE)),
         reduce_as=Reduce("multiply", "axis dtype keepdims")),
    Name("mean", "reduction", scalar=True, method=Method(), numpy_code="subclasses"),
    Name("std", "reduction", scalar=True, method=Method(), numpy_code="subclasses"),
    Name("var", "reduction", scalar=True, method=Method(), numpy_code="subclasses"),
    Name("min", "reduction", scalar=True, method=Method(reduces=("minimum", _NO_DTYPE)),
         reduce_as=Reduce("minimum", "axis keepdims")),
    Name("max", "reduction", scalar=True, method=Method(reduces=("maximum", _NO_DTYPE)),
         reduce_as=Reduce("maximum", "axis keepdims")),
    Name("amin", "reduction", scalar=True,
         reduce_as=Reduce("minimum", "axis keepdims", method="min")),
    Name("amax", "reduction", scalar=True,
         reduce_as=Reduce("maximum", "axis keepdims", method="max")),
    Name("argmin", "reduction", scalar=True, method=Method()),
    Name("argmax", "reduction", scalar=True, method=Method()),
    Name("any", "reduction", scalar=True, method=Method(reduces=("logical_or", _LOGICAL))),
    Name("all", "reduction", scalar=True, method=Method(reduces=("logical_and", _LOGICAL))),
    Name("cumsum", "reduction", scalar=True, method=Method(scalar=False)),
    Name("cumprod", "reduction", scalar=True, method=Method(scalar=False)),
    Name("nansum", "reduction", scalar=True),
    Name("nanprod", "reduction", scalar=True),
    Name("nanmean", "reduction", scalar=True),
    Name("nanstd", "reduction", scalar=True),
    Name("nanvar", "reduction", scalar=True),
    Name("nanmin", "reduction", scalar=True),
    Name("nanmax", "reduction", scalar=True),
    Name("nanargmin", "reduction", scalar=True),
    Name("nanargmax", "reduction", scalar=True),
    Name("nancumsum", "reduction", scalar=True),
    Name("nancumprod", "reduction", scalar=True),
    Name("median", "reduction", scalar=True, numpy_code="subclasses"),
    Name("nanmedian", "reduction", scalar=True),
    Name("percentile", "reduction", scalar=True),
    Name("nanpercentile", "reduction", scalar=True),
    Name("quantile", "reduction", scalar=True),
    Name("nanquantile", "reduction", scalar=True),
    Name("average", "reduction", scalar=True),
    Name("ptp", "reduction", scalar=True),
    Name("count_nonzero", "reduction", scalar=True),
    Name("trace", "reduction", scalar=True, method=Method()),
    Name("allclose", "reduction", scalar=True),
    Name("array_equal", "reduction", scalar=True),
    Name("array_equiv", "reduction", scalar=True),
    Name("cumulative_sum", "reduction", scalar=True),
    Name("cumulative_prod", "reduction", scalar=True),

    # --- products
    Name("dot", "matmul", scalar=True, method=Method()),
    Name("vdot", "matmul", scalar=True),
    Name("inner", "matmul", scalar=True),
    Name("outer", "matmul", scalar=True),
    Name("tensordot", "matmul"),
    Name("einsum", "matmul", scalar=True),
    Name("kron", "matmul", scalar=True),
    Name("vecdot", "matmul", scalar=True),
    Name("matvec", "matmul", scalar=True),
    Name("vecmat", "matmul", scalar=True),

    # --- sorting and searching
    Name("sort", "sort"),
    Name("argsort", "sort", method=Method()),
    Name("lexsort", "sort"),
    Name("partition", "sort"),
    Name("argpartition", "sort", method=Method()),
    Name("unique", "sort"),
    Name("searchsorted", "sort", scalar=True, method=Method()),

    # --- copies, selections, joins
    Name("where", "copy"),
    Name("concatenate", "copy"),
    Name("concat", "copy"),
    Name("stack", "copy"),
    Name("vstack", "copy"),
    Name("hstack", "copy"),
    Name("dstack", "copy"),
    Name("column_stack", "copy"),
    Name("take", "copy", scalar=True, method=Method()),
    Name("take_along_axis", "copy"),
    Name("repeat", "copy", method=Method()),
    Name("tile", "copy"),
    Name("flip", "copy", scalar=True),
    Name("fliplr", "copy"),
    Name("flipud", "copy"),
    Name("roll", "copy"),
    Name("rot90", "copy"),
    Name("diff", "copy"),
    Name("ediff1d", "copy"),
    Name("gradient", "copy"),
    Name("diag", "copy", read_only=True),
    Name("diagflat", "copy"),
    Name("tril", "copy"),
    Name("triu", "copy"),
    Name("pad", "copy"),
    Name("nonzero", "copy", method=Method()),
    Name("argwhere", "copy"),
    Name("flatnonzero", "copy"),
    Name("isclose", "copy", scalar=True),
    Name("clip", "copy", scalar=True, method=Method("elementwise")),
    Name("around", "copy", scalar=True),
    Name("round", "copy", scalar=True, method=Method("elementwise")),
    Name("copy", "copy"),
    Name("extract", "copy"),
    Name("select", "copy"),
    Name("choose", "copy", scalar=True, method=Method()),
    Name("compress", "copy", method=Method()),
    Name("interp", "copy", scalar=True),
    Name("convolve", "copy"),
    Name("correlate", "copy"),
    Name("bincount", "copy"),
    Name("digitize", "copy"),
    Name("append", "copy"),
    Name("insert", "copy"),
    Name("delete", "copy"),
    Name("resize", "copy"),
    Name("trim_zeros", "copy"),
    Name("isin", "copy"),
    Name("cross", "copy"),
    Name("nan_to_num", "copy", scalar=True, writes=Writes("x", unless=copies)),
    Name("real_if_close", "copy"),
    Name("unwrap", "copy"),
    Name("sinc", "copy", scalar=True),
    Name("i0", "copy"),
    Name("angle", "copy", scalar=True),
    Name("real", "copy"),
    Name("imag", "copy"),
    Name("conj", "copy", method=Method("elementwise")),
    Name("conjugate", "copy", method=Method("elementwise")),

    # --- views and cheap metadata calls: run where the first array lives
    Name("reshape", "copy", view=True, method=Method()),
    Name("ravel", "copy", view=True, method=Method()),
    Name("transpose", "copy", view=True, method=Method()),
    Name("swapaxes", "copy", view=True, method=Method()),
    Name("moveaxis", "copy", view=True),
    Name("rollaxis", "copy", view=True),
    Name("squeeze", "copy", view=True, method=Method()),
    Name("expand_dims", "copy", view=True),
    Name("broadcast_to", "copy", view=True, read_only=True),
    Name("broadcast_arrays", "copy", view=True),
    Name("atleast_1d", "copy", view=True),
    Name("atleast_2d", "copy", view=True),
    Name("atleast_3d", "copy", view=True),
    Name("diagonal", "copy", view=True, method=Method(), read_only=True),
    Name("permute_dims", "copy", view=True),
    Name("matrix_transpose", "copy", view=True),
    Name("split", "copy", view=True),
    Name("array_split", "copy", view=True),
    Name("hsplit", "copy", view=True),
    Name("vsplit", "copy", view=True),
    Name("dsplit", "copy", view=True),
    Name("zeros_like", "copy", view=True, placed=True),
    Name("ones_like", "copy", view=True, placed=True),
    Name("empty_like", "copy", view=True, placed=True),
    Name("full_like", "copy", view=True, placed=True),
    Name("meshgrid", "copy", view=True),
    Name("ascontiguousarray", "copy", view=True),
    Name("asfortranarray", "copy", view=True),

    # --- numpy.linalg
    Name("linalg.solve", "solve"),
    Name("linalg.inv", "solve"),
    Name("linalg.det", "solve", scalar=True),
    Name("linalg.slogdet", "solve", scalar=True),
    Name("linalg.lstsq", "solve"),
    Name("linalg.tensorsolve", "solve"),
    Name("linalg.tensorinv", "solve"),
    Name("linalg.matrix_power", "solve"),
    Name("linalg.cholesky", "cholesky"),
    Name("linalg.qr", "cholesky"),
    Name("linalg.svd", "svd"),
    Name("linalg.svdvals", "svd"),
    Name("linalg.pinv", "svd"),
    Name("linalg.matrix_rank", "svd", scalar=True),
    Name("linalg.cond", "svd", scalar=True),
    Name("linalg.eigh", "eigh"),
    Name("linalg.eigvalsh", "eigh"),
    Name("linalg.eig", "eigh"),
    Name("linalg.eigvals", "eigh"),
    Name("linalg.norm", "reduction", scalar=True),
    Name("linalg.vector_norm", "reduction", scalar=True),
    Name("linalg.matrix_norm", "reduction", scalar=True),
    Name("linalg.trace", "reduction", scalar=True),
    Name("linalg.multi_dot", "matmul", scalar=True),
    Name("linalg.matmul", "matmul", scalar=True),
    Name("linalg.tensordot", "matmul"),
    Name("linalg.vecdot", "matmul", scalar=True),
    Name("linalg.outer", "matmul", scalar=True),
    Name("linalg.cross", "matmul", scalar=True),
    Name("linalg.diagonal", "copy", view=True, gpu_path="diagonal", read_only=True),
    Name("linalg.matrix_transpose", "copy", view=True),

    # --- numpy.fft
    Name("fft.fft", "fft"),
    Name("fft.ifft", "fft"),
    Name("fft.fft2", "fft"),
    Name("fft.ifft2", "fft"),
    Name("fft.fftn", "fft"),
    Name("fft.ifftn", "fft"),
    Name("fft.rfft", "fft"),
    Name("fft.irfft", "fft"),
    Name("fft.rfft2", "fft"),
    Name("fft.irfft2", "fft"),
    Name("fft.rfftn", "fft"),
    Name("fft.irfftn", "fft"),
    Name("fft.hfft", "fft"),
    Name("fft.ihfft", "fft"),
    Name("fft.fftshift", "copy", view=True),
    Name("fft.ifftshift", "copy", view=True),

    # --- ufuncs priced by another curve than elementwise (all others are)
    Name("arccos", ufunc="transcendental"),
    Name("arccosh", ufunc="transcendental"),
    Name("arcsin", ufunc="transcendental"),
    Name("arcsinh", ufunc="transcendental"),
    Name("arctan", ufunc="transcendental"),
    Name("arctan2", ufunc="transcendental"),
    Name("arctanh", ufunc="transcendental"),
    Name("cbrt", ufunc="transcendental"),
    Name("cos", ufunc="transcendental"),
    Name("cosh", ufunc="transcendental"),
    Name("deg2rad", ufunc="transcendental"),
    Name("degrees", ufunc="transcendental"),
    Name("exp", ufunc="transcendental"),
    Name("exp2", ufunc="transcendental"),
    Name("expm1", ufunc="transcendental"),
    Name("float_power", ufunc="transcendental"),
    Name("hypot", ufunc="transcendental"),
    Name("log", ufunc="transcendental"),
    Name("log10", ufunc="transcendental"),
    Name("log1p", ufunc="transcendental"),
    Name("log2", ufunc="transcendental"),
    Name("logaddexp", ufunc="transcendental"),
    Name("logaddexp2", ufunc="transcendental"),
    Name("power", ufunc="transcendental"),
    Name("rad2deg", ufunc="transcendental"),
    Name("radians", ufunc="transcendental"),
    Name("sin", ufunc="transcendental"),
    Name("sinh", ufunc="transcendental"),
    Name("sqrt", ufunc="transcendental"),
    Name("tan", ufunc="transcendental"),
    Name("tanh", ufunc="transcendental"),
    Name("matmul", ufunc="matmul"),

    # --- functions writing into their first argument
    Name("put", writes=Writes("a")),
    Name("place", writes=Writes("arr")),
    Name("putmask", writes=Writes("a")),
    Name("fill_diagonal", writes=Writes("a")),
    Name("put_along_axis", writes=Writes("arr")),

    # --- creation functions (host by default; device= or policy('gpu') for the GPU)
    Name("zeros", creation=Creation(1, shaped=True)),
    Name("ones", creation=Creation(1, shaped=True)),
    Name("empty", creation=Creation(1, shaped=True)),
    Name("identity", creation=Creation(1)),
    Name("full", creation=Creation(2, arrays=True)),
    Name("arange", creation=Creation(3)),
    Name("eye", creation=Creation(3)),
    Name("tri", creation=Creation(3)),
    Name("linspace", creation=Creation(5, arrays=True)),
    Name("logspace", creation=Creation(5, arrays=True)),
    Name("geomspace", creation=Creation(4, arrays=True)),

    # --- autodev's own implementations: conversions and metadata (never move data)
    Name("array", creation=Creation(), direct=True),
    Name("asarray", creation=Creation(), direct=True),
    Name("asanyarray", creation=Creation(), direct=True),
    Name("shape", direct=True),
    Name("ndim", direct=True),
    Name("size", direct=True),
    Name("result_type", direct=True),
    Name("iscomplexobj", direct=True),
    Name("isrealobj", direct=True),
    Name("isscalar", direct=True),
    Name("may_share_memory", direct=True),
    Name("shares_memory", direct=True),
    Name("copyto", direct=True),
    Name("from_dlpack", creation=Creation(), direct=True),
    Name("require", direct=True),

    # --- taking device= as an autodev device
    Name("fft.fftfreq", placed=True),
    Name("fft.rfftfreq", placed=True),

    # --- NumPy's own Python code, run on autodev arrays
    Name("apply_along_axis", numpy_code="always"),
    Name("vectorize", numpy_code="always"),
)

#: The rows by name (read-only).
NAMES: Mapping[str, Name] = MappingProxyType({row.name: row for row in ROWS})


# --------------------------------------------------------------------------- derived tables

#: Dispatched names (a spec each), in the rows' order.
DISPATCHED: tuple[Name, ...] = tuple(row for row in ROWS if row.family is not None)
#: NumPy ufuncs by ``__name__`` -> their cost family, where not elementwise.
UFUNC_FAMILIES: Mapping[str, str] = MappingProxyType(
    {row.name: row.ufunc for row in ROWS if row.ufunc is not None})
#: Array methods dispatched like their function -> (cost family, "dispatch" or "primary").
METHODS: Mapping[str, tuple[str, str]] = MappingProxyType({
    row.name: (row.method.family or row.family, "primary" if row.view else "dispatch")
    for row in ROWS if row.method is not None and row.family is not None})
#: Those of the methods for which NumPy returns a 0-d result as a scalar.
SCALAR_METHODS = frozenset(
    row.name for row in ROWS if row.method is not None
    and (row.scalar if row.method.scalar is None else row.method.scalar))
#: Array methods NumPy runs as a ufunc's ``reduce``: method -> (ufunc, its arguments).
REDUCING_METHODS: Mapping[str, tuple[str, tuple[str, ...]]] = MappingProxyType({
    row.name: (row.method.reduces[0], tuple(row.method.reduces[1].split()))
    for row in ROWS if row.method is not None and row.method.reduces is not None})
#: Functions writing into their first argument -> (its parameter, the rule of no write).
WRITES_INTO: Mapping[str, tuple[str, CallRule | None]] = MappingProxyType({
    row.name: (row.writes.param, row.writes.unless) for row in ROWS if row.writes is not None})
#: Reductions run as ``ufunc.reduce`` -> (the ufunc's name, the fast path's keywords).
REDUCE_AS: Mapping[str, tuple[str, frozenset[str]]] = MappingProxyType({
    row.name: (row.reduce_as.ufunc, frozenset(row.reduce_as.keys.split()))
    for row in ROWS if row.reduce_as is not None})
#: The array method a reduction function hands a subclass to, where not its own name.
METHOD_OF: Mapping[str, str] = MappingProxyType({
    row.name: row.reduce_as.method for row in ROWS
    if row.reduce_as is not None and row.reduce_as.method is not None})
#: Creation functions made by ``autodev._creation.make_creation`` -> where they take dtype.
DTYPE_AT: Mapping[str, int] = MappingProxyType({
    row.name: row.creation.dtype_at for row in ROWS
    if row.creation is not None and row.creation.dtype_at is not None})
CREATION = frozenset(DTYPE_AT)
#: Creation functions taking NumPy's ``(shape, dtype=None, order="C", *, device, like)``.
SHAPED = frozenset(row.name for row in ROWS if row.creation is not None and row.creation.shaped)
#: Creation functions whose arguments may be arrays (``linspace(start, stop)``).
ARRAY_ARGUMENTS = frozenset(
    row.name for row in ROWS if row.creation is not None and row.creation.arrays)
#: autodev's own implementations (``autodev._namespace.DIRECT``).
DIRECT: tuple[str, ...] = tuple(row.name for row in ROWS if row.direct)
#: Functions taking ``device=`` as an autodev device.
PLACED = frozenset(row.name for row in ROWS if row.placed)
#: The ufuncs of the transcendental family (exp, sin, ...): their share of a fused chain's
#: work is priced as theirs when its pass decides its threads (autodev._blocked).
TRANSCENDENTAL = frozenset(row.name for row in ROWS if row.ufunc == "transcendental")
#: Functions and classes whose own NumPy code runs on autodev arrays.
NUMPY_CODE = frozenset(row.name for row in ROWS if row.numpy_code == "always")
#: Functions whose own NumPy code runs for a subclass array.
NUMPY_CODE_FOR_SUBCLASSES = frozenset(
    row.name for row in ROWS if row.numpy_code == "subclasses")
#: Functions whose GPU result autodev marks read-only, as NumPy's view is.
READ_ONLY_RESULTS = frozenset(row.name for row in ROWS if row.read_only)
