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

The corrections live in :mod:`autodev._capability.corrections`, the imitations in
:mod:`autodev._backends._sim_cupy`; this module says which name gets which (naming the
imitations, :mod:`autodev._capability.imitations`, so that the simulator loads only when
it is used).
"""

from __future__ import annotations

from types import MappingProxyType, ModuleType
from typing import Any, Callable, Mapping, NamedTuple

import numpy as np

from .corrections import Factory, Func, QUANTILE_METHODS, any_kind_argpartition_method, any_kind_partition, any_kind_sort, as_device_arrays, checked_choices, method_choices, checked_take, checked_take_along_axis, conjugate_out, diagonal_view, dropping_keywords, float_quantile, linalg_diagonal, lstsq_host_rank, named_real_eig, named_result, pinv_rcond, python_bool, python_int_count, real_eig, scalar_dot, operand_params, searchsorted_values, shape_keyword, where_operands
from .ufunc_corrections import ufunc_operands
from .._backends._imitating import on_sim_load
from .imitations import Imitation, Quirk, S


# --------------------------------------------------------------------------- rules

Rule = Callable[[list[Any], dict[str, Any]], bool]


def without_kwargs(names: tuple[str, ...]) -> Rule:
    """Capability rule: none of the keywords ``names`` is passed."""
    return lambda arrays, kwargs: not kwargs or not any(n in kwargs for n in names)


def _quantile_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return (kwargs.get("method", "linear") in QUANTILE_METHODS
            and kwargs.get("interpolation") is None
            and bool(arrays) and arrays[0].dtype.kind in "iuf")


def _lstsq_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    # CuPy replaces rcond <= 0 or >= 1 by eps; NumPy passes it on to LAPACK.
    rcond = kwargs.get("rcond") if kwargs else None
    return rcond is None or (isinstance(rcond, (int, float)) and 0 < rcond < 1)


def imitate_operands(functions: Mapping[str, Any]) -> None:
    """Give the sim CuPy's refusal of host operands for each dispatched name (its NumPy
    function in ``functions``), inside the name's own imitation, if its row has one, which
    speaks first; done when the simulator loads (after the rows' own imitations)."""
    on_sim_load(lambda sim: _imitate_operands(sim, functions))


def _imitate_operands(sim: ModuleType, functions: Mapping[str, Any]) -> None:
    """:func:`imitate_operands` on the loaded imitations ``sim``. The operands are read
    when the sim first resolves the name."""
    for name, np_func in functions.items():
        own = sim.IMITATIONS.get(name)

        def quirk(func: Func, own: Quirk | None = own, np_func: Func = np_func) -> Func:
            params = operand_params(np_func)
            refusing = sim.host_operands(params)(func) if params else func
            return own(refusing) if own is not None else refusing

        sim.IMITATIONS[name] = quirk


# --------------------------------------------------------------------------- the table

class Row(NamedTuple):
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
    imitation : Imitation, optional
        The simulated GPU's imitation of CuPy's behaviour (``function -> function``), by
        name in :mod:`autodev._backends._sim_cupy` (:mod:`autodev._capability.imitations`).
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
    imitation: Imitation | None = None

    def gpu_rule(self) -> Rule | None:
        """The capability rule for the GPU: no NumPy-only keyword, and ``rule``."""
        plain = without_kwargs(self.numpy_only) if self.numpy_only else None
        rule = self.rule
        if plain is None or rule is None:
            return plain or rule
        return lambda arrays, kwargs: plain(arrays, kwargs) and rule(arrays, kwargs)

    def sim_quirk(self, sim: ModuleType) -> Quirk | None:
        """The sim's imitation: ``imitation`` (resolved in the loaded imitations ``sim``)
        plus a TypeError for each NumPy-only keyword."""
        imitation = None if self.imitation is None else self.imitation.resolve(sim)
        numpy_only = self.numpy_only
        if not numpy_only:
            return imitation
        lacking = sim.imitate_missing_keywords(*numpy_only)
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
    "maximum": _AT_INTS | frozenset("fd"), "minimum": _AT_INTS | frozenset("fd"),
})
#: ``ufunc.at`` CuPy has but autodev runs on the host copy: NumPy's maximum/minimum
#: propagate NaN, and nothing checks that CuPy's atomic scatter kernels do.
UFUNC_AT_HOST = frozenset({"maximum", "minimum"})


def ufunc_method_rule(method: str, name: str) -> Rule:
    """Capability rule for ``<name>.<method>`` (``add.reduce``): CuPy implements it."""
    ufuncs, keywords = UFUNC_METHODS[method]
    if name not in ufuncs:
        return lambda arrays, kwargs: False
    return lambda arrays, kwargs: not kwargs or keywords.issuperset(kwargs)


def ufunc_at_ok(name: str, dtype: np.dtype) -> bool:
    """True if CuPy's ``<name>.at`` runs on arrays of ``dtype``."""
    return name not in UFUNC_AT_HOST and dtype.char in UFUNC_AT.get(name, ())


def _ufunc_rule(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    return not kwargs or (UFUNC_KEYWORDS.issuperset(kwargs)
                          and kwargs.get("out") is not Ellipsis)


_FFT = "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft".split()
_Q = ("percentile", "quantile")
_SCIPY_FFT = (_FFT + "hfft2 ihfft2 hfftn ihfftn".split())


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
            imitation=S.plain_tuple),
        *(Row(f"fft.{n}", f"cupy.fft.{n}", "no out=", numpy_only=("out",)) for n in _FFT),
        # --- corrected around the GPU call
        Row("count_nonzero", "cupy.count_nonzero", "no keepdims=; a 0-d array, not an int",
            passes=("axis",), numpy_only=("keepdims",), correction=python_int_count,
            imitation=S.zero_d_count),
        Row("where", "cupy.where", "no object operands: NumPy's where(c, None, None) is an "
            "object array (autodev runs it on the CPU)", correction=where_operands),
        Row("clip", "cupy.clip", "no min=/max= (NumPy 2's names) nor ufunc keywords",
            numpy_only=("min", "max", "dtype", "casting", "where", "order", "subok",
                        "signature")),
        *(Row(n, f"cupy.{n}", "kind only None/'stable' (ValueError); no order=",
              passes=("axis", "kind"), numpy_only=("order",), correction=any_kind_sort,
              imitation=S.stable_only_sort) for n in ("sort", "argsort")),
        *(Row(n, f"cupy.{n}", "no kind=/order=; kth Python ints only",
              passes=("axis",), numpy_only=("order",), correction=any_kind_partition,
              imitation=S.partition_function) for n in ("partition", "argpartition")),
        *(Row(n, f"cupy.{n}", "computes in result_type(a, q) (q / 100 for percentile); five "
              "of NumPy's 13 methods; no weights=",
              passes=("axis", "out", "overwrite_input", "method", "keepdims"),
              numpy_only=("weights",), rule=_quantile_rule,
              correction=float_quantile(n == "percentile"),
              imitation=S.result_type_quantile(n == "percentile", QUANTILE_METHODS))
          for n in _Q),
        *(Row(n, f"cupy.{n}", "a 0-d array, not a Python bool", correction=python_bool,
              imitation=S.array_predicate) for n in ("allclose", "array_equal",
                                                       "array_equiv")),
        Row("linspace", "cupy.linspace", "retstep=True gives the step as a Python float, "
            "not a NumPy scalar (autodev's creation makes it NumPy's)",
            imitation=S.python_step),
        Row("diag", "cupy.diag", "a matrix's diagonal copied, not viewed (autodev takes "
            "diagonal, a view, which it marks read-only as NumPy's)",
            correction=diagonal_view, imitation=S.copying_diag),
        Row("reshape", "cupy.reshape", "no shape= (newshape only)", correction=shape_keyword,
            imitation=S.lacking("shape")),
        Row("take", "cupy.take", "wraps out-of-range indices; no mode=",
            passes=("axis", "out"), correction=checked_take, imitation=S.wrapping_take),
        Row("take_along_axis", "cupy.take_along_axis", "wraps out-of-range indices",
            correction=checked_take_along_axis, imitation=S.wrapping_take_along_axis),
        Row("choose", "cupy.choose", "reads choices.shape (no list of choices)",
            passes=("out", "mode"), correction=checked_choices,
            imitation=S.operands(1)),
        Row("outer", "cupy.outer", "reads a.ravel() (no lists or scalars)",
            correction=as_device_arrays(0, 1), imitation=S.operands(0, 1)),
        Row("interp", "cupy.interp", "reads x.flags (no lists or scalars)",
            correction=as_device_arrays(0, 1, 2), imitation=S.operands(0, 1, 2)),
        Row("searchsorted", "cupy.searchsorted",
            "v a device array or Python scalar (NotImplementedError)",
            passes=("side", "sorter"), correction=searchsorted_values,
            imitation=S.operands(1, error=NotImplementedError, scalars=(int, float, complex))),
        Row("linalg.pinv", "cupy.linalg.pinv", "rcond=None fails; no hermitian=/rtol=",
            passes=("rcond",), numpy_only=("hermitian", "rtol"), correction=pinv_rcond,
            imitation=S.pinv_rcond),
        *(Row(f"linalg.{n}", f"cupy.linalg.{n}", "a plain tuple, not a named one",
              correction=named_result(f"linalg.{n}"), imitation=S.plain_tuple)
          for n in ("eigh", "slogdet", "qr")),
        Row("linalg.eig", "cupy.linalg.eig", "complex results for real input; plain tuple; "
            "eigenvalue order cuSOLVER's (unspecified, as NumPy's: not corrected)",
            correction=named_real_eig, imitation=S.complex_eig(False)),
        Row("linalg.eigvals", "cupy.linalg.eigvals", "complex results for real input; "
            "order unspecified",
            correction=real_eig(True), imitation=S.complex_eig(True)),
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
              "placement's to handle, issue 9); subok= of any value a TypeError (dropped: "
              "autodev keeps or drops the subclass itself)",
              correction=dropping_keywords("device", "subok"), numpy_only=("device",),
              imitation=S.lacking("subok")) for n in ("empty_like", "zeros_like",
                                                      "ones_like", "full_like")),
        # --- cupyx.scipy (autodev.scipy's factories drop these; the rules keep them default)
        Row("scipy.linalg.lu", "cupyx.scipy.linalg.lu", "no p_indices=",
            numpy_only=("p_indices",)),
        *(Row(f"scipy.fft.{n}", f"cupyx.scipy.fft.{n}", "no workers=", numpy_only=("workers",))
          for n in _SCIPY_FFT),
        *(Row(f"scipy.fft.{n}", f"cupyx.scipy.fft.{n}", "no workers=, orthogonalize=; types "
              "2 and 3 only", numpy_only=("workers", "orthogonalize"))
          for n in "dct idct dst idst dctn idctn dstn idstn".split()),
        Row("scipy.linalg.lu_factor", "cupyx.scipy.linalg.lu_factor", "warns RuntimeWarning "
            "for a singular matrix, not SciPy's LinAlgWarning (autodev.scipy.linalg re-issues "
            "it as LinAlgWarning)", imitation=S.runtime_warning),
        # --- array methods
        Row("ndarray.astype", "cupy.ndarray.astype", "TypeError for any casting=/subok= "
            "(autodev checks casting with numpy.can_cast and passes neither)",
            passes=("order", "copy"), imitation=S.astype_no_casting),
        Row("ndarray.sort", "cupy.ndarray.sort", "in place: C-contiguous only "
            "(NotImplementedError); kind None/'stable' (autodev sorts a copy and writes it "
            "back)", passes=("axis", "kind"), imitation=S.inplace_sort),
        Row("ndarray.partition", "cupy.ndarray.partition", "in place: C-contiguous only; "
            "kth Python ints", passes=("axis",), imitation=S.inplace_partition),
        Row("ndarray.argsort", "cupy.ndarray.argsort", "kind None/'stable' (ValueError)",
            passes=("axis", "kind"), numpy_only=("order",), correction=any_kind_sort,
            imitation=S.argsort_method),
        Row("ndarray.argpartition", "cupy.ndarray.argpartition", "no kind=; kth Python ints",
            numpy_only=("order",), correction=any_kind_argpartition_method,
            imitation=S.argpartition_method),
        Row("ndarray.conjugate", "cupy.ndarray.conjugate", "takes no out= (autodev passes "
            "it to cupy.conjugate)", correction=conjugate_out, imitation=S.argumentless),
        Row("ndarray.dot", "cupy.ndarray.dot", "b a device array only (no scalar)",
            correction=scalar_dot, imitation=S.dot_method),
        Row("dot", "cupy.dot", "a.dot(b): both device arrays (no scalar)",
            correction=scalar_dot, imitation=S.dot_function),
        Row("ndarray.take", "cupy.ndarray.take", "wraps out-of-range indices; no mode=",
            correction=checked_take, imitation=S.take_method),
        Row("ndarray.choose", "cupy.ndarray.choose", "reads choices.shape",
            correction=method_choices, imitation=S.operands(0)),
        Row("ndarray.searchsorted", "cupy.ndarray.searchsorted",
            "v a device array or Python scalar (NotImplementedError)",
            correction=searchsorted_values,
            imitation=S.operands(0, error=NotImplementedError, scalars=(int, float, complex))),
        # --- ufuncs
        Row("ufunc", "cupy.ufunc", "keywords out/dtype/casting only: where=/order=/subok=/"
            "signature= raise 'Wrong arguments', out=... 'Unsupported type'; no list operands; "
            "integer power computes negative exponents (as 0, 1 or -1) where NumPy raises "
            "ValueError (autodev checks them first); plain TypeError for a "
            "refused cast or a missing loop; no operand of a dtype it lacks (object: None, a "
            "Fraction, any Python object; strings; datetimes): such calls run on the CPU",
            rule=_ufunc_rule, correction=ufunc_operands, imitation=S.ufunc_call_imitation(UFUNC_KEYWORDS)),
        *(Row(f"ufunc.{m}", f"cupy.ufunc.{m}",
              f"only for {', '.join(sorted(UFUNC_METHODS[m][0]))} (NotImplementedError)",
              imitation=S.ufunc_method_imitation(m, *UFUNC_METHODS[m]))
          for m in UFUNC_METHODS),
        Row("ufunc.at", "cupy.ufunc.at", "only add/subtract/maximum/minimum/bitwise_and/or/"
            "xor, for some dtypes (NotImplementedError/TypeError): others run on the host "
            "copy, and so do maximum/minimum (NumPy's NaN rule is not checked there)",
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


def _install_imitations(sim: ModuleType) -> None:
    """Give the simulated GPU every row's imitation (it reads ``_sim.IMITATIONS``)."""
    for name, row in TABLE.items():
        quirk = row.sim_quirk(sim)
        if quirk is not None:
            sim.IMITATIONS[name] = quirk
        if row.cupy is None:
            sim.CUPY_MISSING.add(name)


on_sim_load(_install_imitations)  # when the simulator loads: importing autodev loads none of it


# --------------------------------------------------------------------------- scipy.special

#: ``scipy.special`` ufuncs cupyx.scipy.special implements.
SCIPY_SPECIAL_GPU_UFUNCS = frozenset("""
    i0 i0e i1 i1e j0 j1 k0 k0e k1 k1e y0 y1 yn spherical_yn wright_bessel
    bdtr bdtrc bdtri btdtr btdtri fdtr fdtrc fdtri gdtr gdtrc nbdtr nbdtrc nbdtri
    pdtr pdtrc pdtri chdtr chdtrc chdtri ndtr log_ndtr ndtri logit expit log_expit
    boxcox boxcox1p inv_boxcox inv_boxcox1p entr huber kl_div pseudo_huber rel_entr
    gamma gammaln loggamma gammasgn gammainc gammaincinv gammaincc gammainccinv beta
    betaln betainc betaincinv psi rgamma poch erf erfc erfcx erfinv erfcinv binom exp1
    expi expn zeta zetac cbrt exp10 exp2 radian cosdg sindg tandg cotdg log1p expm1
    exprel cosm1 round xlogy xlog1py ellipk ellipkm1 ellipj ellipkinc ellipeinc
""".split())
_REAL_FLOATING = frozenset(np.dtype(t) for t in ("f4", "f8"))


def _real_floating(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    # cupyx's loops skip complex for most functions and resolve float16 and small
    # integers to other result dtypes than SciPy
    return all(a.dtype in _REAL_FLOATING for a in arrays)


def scipy_special_ufunc(name: str) -> dict[str, Any]:
    """The capability of the SciPy ufunc ``name`` (``scipy.special.erf``'s ``"erf"``):
    its GPU rule (float32/float64 operands), or CPU only if cupyx lacks it."""
    return {"gpu_ok": _real_floating} if name in SCIPY_SPECIAL_GPU_UFUNCS else {"where": "cpu"}
