"""What the installed CuPy accepts and refuses, case by case, written as JSON.

The simulated GPU must refuse what CuPy refuses (same exception type); this script is the
ground truth it is checked against. Run it on a machine with a GPU::

    python benchmarks/cupy_probe.py --json cupy-facts.json

Each case is one expression evaluated with ``cp`` (cupy), ``cpx`` (cupyx), ``np`` (numpy)
and a few arrays in scope; the record is the result's type (and dtype/shape for arrays) or
the exception's type and message. It also times the attribute reads autodev's hot path
makes on a CuPy array (medians of 2000 reads).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from typing import Any

CASES = [
    # astype and keywords
    "x.astype(cp.float32, casting='unsafe')",
    "x.astype(cp.float32, copy=False)",
    "x.astype(cp.float32, order='K')",
    # ufunc methods by ufunc
    "cp.add.reduce(x)", "cp.multiply.reduce(x)", "cp.maximum.reduce(x)",
    "cp.minimum.reduce(x)", "cp.logical_and.reduce(b)", "cp.subtract.reduce(x)",
    "cp.add.accumulate(x)", "cp.multiply.accumulate(x)", "cp.maximum.accumulate(x)",
    "cp.add.reduceat(x, cp.array([0, 2]))", "cp.multiply.reduceat(x, cp.array([0, 2]))",
    "cp.add.at(x.copy(), cp.array([0, 1]), 1.0)", "cp.subtract.at(x.copy(), cp.array([0]), 1.0)",
    "cp.maximum.at(x.copy(), cp.array([0]), 1.0)", "cp.minimum.at(x.copy(), cp.array([0]), 1.0)",
    "cp.multiply.at(x.copy(), cp.array([0]), 2.0)", "cp.add.at(i.copy(), cp.array([0]), 1)",
    "cp.maximum.at(i.copy(), cp.array([0]), 1)", "cp.bitwise_or.at(i.copy(), cp.array([0]), 1)",
    "cp.add.outer(x, x)", "cp.maximum.outer(x, x)",
    "cp.add.reduce(x, axis=None, keepdims=True)", "cp.add.reduce(x, initial=1.0)",
    "cp.add.reduce(x, where=b)",
    # ufunc keywords
    "cp.add(x, x, where=b)", "cp.add(x, x, order='C')", "cp.add(x, x, subok=True)",
    "cp.add(x, x, signature=('d', 'd', 'd'))", "cp.add(x, x, casting='same_kind')",
    "cp.add(x, x, dtype=cp.float32)", "cp.add(x, x, out=(cp.empty(4),))",
    "cp.add(i, 1.5, out=i.copy())", "cp.add(i, 1.5, out=i.copy(), casting='unsafe')",
    "cp.sin(x, out=cp.empty(4, dtype=cp.float32))",
    # operands that are not CuPy arrays
    "cp.add([1, 2], [3, 4])", "cp.add(x, np.float64(1.0))", "cp.add(x, np.ones(4))",
    "cp.add(x, 1.0)", "cp.sin([0.0, 1.0])", "cp.outer([1, 2], [3, 4])", "cp.outer(x, x)",
    "cp.interp(0.5, x, x)", "cp.interp(cp.array(0.5), x, x)",
    "cp.searchsorted(x, np.float64(0.5))", "cp.searchsorted(x, 0.5)",
    "cp.searchsorted(x, cp.array(0.5))", "cp.choose(cp.array([0, 1, 0, 1]), [x, x + 1])",
    "cp.concatenate([x, np.ones(2)])", "cp.where(b, x, 0.0)", "cp.clip(x, None, 1.0)",
    "cp.clip(x, a_max=1.0)", "cp.clip(x, max=1.0)", "x.clip(max=1.0)",
    "x.dot(2.0)", "x.dot(cp.array(2.0))",
    # sort, partition
    "m[:, ::2].sort()", "m.sort(kind='stable')", "cp.sort(x, kind='stable')",
    "cp.argsort(x, kind='stable')", "m[:, ::2].partition(1)", "m.copy().partition(np.int64(1))",
    "cp.partition(x, np.int64(1))", "cp.sort(x, stable=True)",
    # reductions and their keywords
    "cp.count_nonzero(x)", "cp.count_nonzero(m, axis=0)", "x.sum(where=b)",
    "x.max(initial=0.0)", "cp.mean(x, where=b)", "cp.sum(x, dtype=cp.float32)",
    "cp.percentile(x, [2.5, 97.5])", "cp.percentile(i, 50)", "cp.quantile(x, 0.5, method='linear')",
    "cp.median(x)", "cp.nanmedian(x)", "cp.std(x, correction=1)", "cp.std(x, ddof=1)",
    "cp.unique(cp.array([3, 1, 2, 1]))", "cp.unique_values(cp.array([3, 1, 2, 1]))",
    "cp.unique(x, equal_nan=False)", "cp.unique(x, sorted=True)",
    # indexing
    "m[[]]", "m[..., [0, -1]]", "m[None, [-1]]", "m[cp.array([], dtype=cp.intp)]",
    "x[np.array([0, 1])]", "x[[True, False, True, False]]", "m[1:, [0, 2]]",
    # conversion and interop
    "cp.asnumpy(cp.asfortranarray(m)).flags['F_CONTIGUOUS']", "x.get(order='A')",
    "x.__dlpack_device__()", "np.asarray(x)", "float(x[0])", "int(i[0])",
    "x.__array_namespace__()", "x.device", "x.to_device('cpu')",
    # linalg
    "cp.linalg.pinv(m2, rcond=None)", "cp.linalg.pinv(m2)", "cp.linalg.pinv(m2, rtol=1e-5)",
    "cp.linalg.solve(m2, cp.ones(3))", "cp.linalg.solve(m2, cp.ones((3, 2)))",
    "cp.linalg.solve(cp.zeros((3, 3)), cp.ones(3))", "cp.linalg.cholesky(-cp.eye(3))",
    "cp.linalg.inv(cp.zeros((3, 3)))", "cp.linalg.eigh(m2 + m2.T)", "cp.linalg.eig(m2)",
    "cp.linalg.eigvals(m2)", "cp.linalg.lstsq(m2, cp.ones(3))", "cp.linalg.lstsq(m2, cp.ones(3), rcond=None)",
    "cp.linalg.matrix_rank(m2, tol=None)", "cp.linalg.norm(m2, ord='nuc')",
    "cp.linalg.diagonal(m2)", "cp.linalg.svd(m2, full_matrices=False)", "cp.linalg.svdvals(m2)",
    "cpx.scipy.linalg.lu_factor(cp.zeros((3, 3)))", "cpx.scipy.linalg.solve",
    "cpx.scipy.linalg.svd", "cpx.scipy.linalg.cho_solve", "cpx.scipy.linalg.cho_factor",
    "cpx.scipy.linalg.solve_triangular(cp.eye(3), cp.ones(3), check_finite=True)",
    # sparse
    "cpx.scipy.sparse.coo_matrix(cp.eye(3)).max()", "cpx.scipy.sparse.dia_matrix(cp.eye(3)).max()",
    "cpx.scipy.sparse.csr_matrix(cp.eye(3)).max()", "cpx.scipy.sparse.csr_matrix(cp.eye(3)).sum(axis=0)",
    "cpx.scipy.sparse.csr_array", "cpx.scipy.sparse.coo_array",
    "cpx.scipy.sparse.csr_matrix(cp.eye(3, dtype=cp.int64))",
    "cpx.scipy.sparse.csr_matrix(cp.eye(3, dtype=cp.float16))",
    # fft
    "cpx.scipy.fft.dct(x, type=1)", "cpx.scipy.fft.dct(x, type=4)", "cp.fft.fft(x, norm='forward')",
    "cpx.scipy.fft.fft(x, workers=2)", "cpx.scipy.fft.fft(x, overwrite_x=True)",
    "cp.fft.fftfreq(4, d=0.5)", "cp.fft.fftfreq(4, device=None)",
    # creation and misc
    "cp.zeros(3, like=x)", "cp.empty(3, order='K')", "cp.arange(3, like=None)",
    "cp.array([1, 2], ndmin=2)", "cp.asarray(x, copy=False)", "cp.asarray([1, 2], copy=True)",
    "cp.full(3, np.float64(1.5))", "cp.linspace(0, 1, 5, device=None)",
    "cp.random.default_rng(0).standard_normal(3, dtype=cp.float32)",
    "cp.random.default_rng(0).integers(0, 5, 3)", "cp.random.default_rng(0).choice(5, 3)",
    "cp.float128", "cp.longdouble", "cp.ones(2, dtype=cp.complex64) > 0",
    "cp.einsum('ij,jk->ik', m2, m2, optimize=True)", "cp.tensordot(m2, m2, axes=1)",
    "cp.matmul(m2, m2, axes=[(-2, -1), (-2, -1), (-2, -1)])", "cp.cumsum(x, dtype=cp.float32)",
    "cp.round(x, 1)", "cp.around(x, decimals=1)", "cp.histogram(x, bins=3)",
    "cp.histogram(x, bins='auto')", "cp.bincount(i)", "cp.diff(x, prepend=0.0)",
    "cp.nonzero(x)", "cp.argwhere(x)", "cp.take(x, cp.array([5]), mode='raise')",
    "cp.take(x, cp.array([5]), mode='wrap')", "cp.put(x.copy(), cp.array([0]), 1.0, mode='raise')",
    "cp.isin(x, x, kind='table')", "cp.array_equal(x, x, equal_nan=True)", "cp.isclose(x, x)",
    "cp.cov(m2, dtype=cp.float32)", "cp.corrcoef(m2)", "cp.polyfit(x, x, 1)",
    "x.tobytes()", "bytes(x)", "x.tolist()", "cp.shares_memory(x, x)", "cp.may_share_memory(x, x)",
]


def _describe(value: Any) -> str:
    kind = type(value).__module__ + "." + type(value).__qualname__
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"{kind} dtype={value.dtype} shape={tuple(value.shape)}"
    if isinstance(value, (tuple, list)):
        return f"{kind}[{', '.join(_describe(v) for v in value[:4])}]"
    return f"{kind} {str(value)[:60]}"


def probe() -> dict[str, Any]:
    import cupy as cp
    import cupyx as cpx
    import cupyx.scipy.fft  # noqa: F401
    import cupyx.scipy.linalg  # noqa: F401
    import cupyx.scipy.sparse  # noqa: F401
    import numpy as np

    base = {"cp": cp, "cpx": cpx, "np": np}
    out: dict[str, Any] = {"cupy": cp.__version__, "numpy": np.__version__, "cases": {}}
    for case in CASES:
        scope = dict(base, x=cp.array([0.5, 1.5, -2.0, 3.0]), i=cp.array([1, 2, 3, 4]),
                     b=cp.array([True, False, True, False]),
                     m=cp.arange(12.0).reshape(3, 4)[::-1].copy(),
                     m2=cp.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]))
        try:
            value = eval(case, scope)  # noqa: S307  (a fixed list of expressions above)
            cp.cuda.get_current_stream().synchronize()
            out["cases"][case] = {"ok": _describe(value)}
        except BaseException as err:  # noqa: BLE001  (recording what CuPy raises is the point)
            out["cases"][case] = {"raises": type(err).__module__ + "." + type(err).__qualname__,
                                  "message": str(err)[:200]}
    out["attribute_ns"] = _attribute_costs(cp)
    return out


def _attribute_costs(cp: Any) -> dict[str, float]:
    x = cp.ones(10)
    reads = {
        "x.shape": lambda: x.shape, "x.dtype": lambda: x.dtype, "x.size": lambda: x.size,
        "x.ndim": lambda: x.ndim, "x.nbytes": lambda: x.nbytes, "x.flags.c_contiguous":
        lambda: x.flags.c_contiguous, "x.strides": lambda: x.strides,
        "isinstance(x, cp.ndarray)": lambda: isinstance(x, cp.ndarray),
        "type(x) is cp.ndarray": lambda: type(x) is cp.ndarray,
        "x.data.ptr": lambda: x.data.ptr, "x.device": lambda: x.device,
        "cp.asarray(x)": lambda: cp.asarray(x), "x + x (launch)": lambda: x + x,
        "cp.cuda.Device().id": lambda: cp.cuda.Device().id,
        "get_current_stream()": lambda: cp.cuda.get_current_stream(),
    }
    result = {}
    for name, read in reads.items():
        times = []
        for _ in range(2000):
            t0 = time.perf_counter_ns()
            read()
            times.append(time.perf_counter_ns() - t0)
        result[name] = statistics.median(times)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", default="cupy-facts.json", metavar="PATH")
    args = parser.parse_args(argv)
    facts = probe()
    with open(args.json, "w") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
    refused = sum("raises" in c for c in facts["cases"].values())
    print(f"cupy {facts['cupy']}: {len(facts['cases'])} cases, {refused} refused; wrote {args.json}")
    for name, ns in facts["attribute_ns"].items():
        print(f"  {name:<28} {ns:8.0f} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
