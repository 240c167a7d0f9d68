"""autodev's sparse matrices and arrays: SciPy's formats, resident on a device.

A sparse object holds one *primary* native matrix (``scipy.sparse`` on the CPU,
``cupyx.scipy.sparse`` on a CUDA GPU, :class:`~autodev._backends._sim_sparse.SimSparse`
on the simulated one) and may hold a read-only *mirror* on the other device,
valid while the write version of its storage is unchanged, exactly as a dense
``autodev.ndarray``: a loop such as PageRank moves the matrix once. Writes
(``A[i, j] = v``, ``A.data[...] = v``, in-place methods) bump the version.

Operations come from three tables: ``@`` (and ``*`` between matrices of the
``spmatrix`` kind) dispatches by the ``sparse_matmul`` cost family; ``GPU_METHODS``
run where the primary lives; every other method runs on the CPU with SciPy.
Constructors copy their input (as ``autodev.array`` does), so nothing outside
autodev can write the matrix behind the version's back.
"""

from __future__ import annotations

from typing import Any, Callable, ClassVar

import numpy as np
import scipy.sparse as _sp

from ... import _dispatch as D
from ..._residency import storage as R
from ..._residency import reuse as _reuse
from ..._array import ndarray
from ..._backends import backend_for, resolve_device
from ..._backends._sim_sparse import SimSparse, SimSparseModule
from ..._device import AUTO, CPU, Device
from ..._fusion import before_write
from ..._residency.memory import retrying
from .._spec import FLOATING, ScipySpec

FORMATS = ("csr", "csc", "coo", "dia", "bsr", "lil", "dok")
#: Formats a GPU holds (cupyx.scipy.sparse); the others stay on the CPU.
GPU_FORMATS = frozenset({"csr", "csc", "coo", "dia"})
#: Dtypes cupyx.scipy.sparse computes on (it rejects integers and bool).
GPU_DTYPES = FLOATING

#: Methods run where the primary lives (cupyx has them for the GPU formats, but see
#: ``GPU_METHODS_MISSING``).
GPU_METHODS = frozenset("""
    tocsr tocsc tocoo toarray todense transpose conj conjugate copy astype sum mean
    diagonal trace multiply maximum minimum count_nonzero max min
    __neg__ __abs__ __add__ __radd__ __sub__ __rsub__ __truediv__ __mul__ __rmul__
""".split())
#: GPU methods a cupyx format lacks (CuPy 14: ``max``/``min``/``argmax``/``argmin``
#: exist for CSR and CSC only): on such a matrix they run on the CPU.
GPU_METHODS_MISSING: dict[str, frozenset[str]] = {
    "coo": frozenset({"max", "min", "argmax", "argmin"}),
    "dia": frozenset({"max", "min", "argmax", "argmin"}),
}
#: Methods that write the matrix (run on the host primary, then bump the version).
WRITE_METHODS = frozenset("""
    __setitem__ setdiag sum_duplicates sort_indices eliminate_zeros prune resize
""".split())
_ARRAY_ATTRIBUTES = ("data", "indices", "indptr", "row", "col", "offsets")


class _spbase:
    """A sparse matrix or array whose data lives on the CPU or a GPU.

    It behaves like the SciPy class of the same name (same constructor, attributes,
    operators and methods, same results); see ``autodev.scipy.sparse``.
    """

    __slots__ = ("_native", "_device", "_storage", "_mirror", "__weakref__")
    __array_priority__ = 101.0
    __array_ufunc__ = None  # NumPy and autodev arrays leave operators to us

    format: ClassVar[str] = ""
    _is_array: ClassVar[bool] = False
    _scipy_class: ClassVar[type] = _sp.csr_matrix

    _native: Any
    _device: Device
    _storage: R.Storage | None
    _mirror: tuple[Device, int, Any] | None

    def __init__(self, arg1: Any, shape: Any = None, dtype: Any = None, copy: bool = False,
                 **kwargs: Any) -> None:
        cls = type(self)
        if isinstance(arg1, _spbase) and arg1._device is not CPU and cls.format in GPU_FORMATS:
            native = arg1._native.asformat(cls.format)
            native = native.astype(dtype) if dtype is not None else native.copy()
            self._native, self._device = native, arg1._device
        else:
            host = cls._scipy_class(D.cpu_arg(arg1), shape=shape, dtype=dtype, copy=True,
                                    **kwargs)
            self._native, self._device = host, CPU
        self._storage = None
        self._mirror = None

    # ------------------------------------------------------------------ attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._native.shape)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._native.dtype)

    @property
    def nnz(self) -> int:
        return int(self._native.nnz)

    @property
    def size(self) -> int:
        """Stored values (SciPy's ``size``: ``nnz``)."""
        return self.nnz

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays a transfer moves."""
        return native_nbytes(self._native)

    @property
    def device(self) -> Device:
        """The placement: always ``auto`` (sparse matrices are not pinned; ``to_device``
        moves the data and autodev keeps placing the calls)."""
        return AUTO

    @property
    def location(self) -> Device:
        """The device holding the primary copy now (read-only)."""
        return self._device

    @property
    def T(self) -> "_spbase":
        return self.transpose()

    @property
    def mT(self) -> "_spbase":
        return self.transpose()

    @property
    def H(self) -> "_spbase":
        return self.conj().transpose()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in _spbase.__slots__:
            raise AttributeError(name)
        if name in _ARRAY_ATTRIBUTES:
            native = getattr(self._native, name)
            # a view sharing the matrix's storage: writes through it bump the version
            return D.new(native, self._device, R.storage_of(self))
        if callable(getattr(self._scipy_class, name, None)):
            return _bound(self, name)
        value = getattr(self._native, name)  # AttributeError propagates
        return D.wrap(value, self._device, (), {}, None, False)

    # ------------------------------------------------------------------ devices
    def to_device(self, device: Device | str) -> "_spbase":
        """A copy of this matrix on ``device`` (``"cpu"``, ``"gpu"``, ``"cuda:0"``)."""
        target = resolve_device(device)
        if target is self._device or target is AUTO:
            return self
        if target is not CPU and self.format not in GPU_FORMATS:
            raise ValueError(f"A GPU holds the formats {sorted(GPU_FORMATS)}. Got a "
                             f"{self.format!r} matrix; convert it first (A.tocsr()).")

        def move() -> "_spbase":
            native = native_on(self, target)
            if R.is_mirror(self, target, native):
                native = native.copy()  # the result owns its data
            return _new(type(self), native, target)

        # out of memory on the target: the copy stays on the host (counted, warned)
        return retrying("to_device", target, move,
                        lambda: _new(type(self), native_on(self, CPU).copy(), CPU))

    def get(self) -> Any:
        """A SciPy copy of the matrix on the host (as ``cupyx``'s ``get``)."""
        return native_on(self, CPU).copy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        """The dense host array, so that NumPy and SciPy functions given this matrix work."""
        return np.asarray(native_on(self, CPU).toarray(), dtype=dtype)

    # LinearOperator protocol: scipy.sparse.linalg's solvers accept this matrix
    def matvec(self, x: Any) -> Any:
        return self @ x

    def matmat(self, x: Any) -> Any:
        return self @ x

    def rmatvec(self, x: Any) -> Any:
        return self.conj().transpose() @ x

    def rmatmat(self, x: Any) -> Any:
        return self.conj().transpose() @ x

    def __repr__(self) -> str:
        where = "" if self._device is CPU else f" on {self._device}"
        return f"<autodev {repr(native_on(self, CPU))[1:-1]}{where}>"

    def __str__(self) -> str:
        return str(native_on(self, CPU))

    def __len__(self) -> int:
        raise TypeError("sparse array length is ambiguous; use getnnz() or shape[0]")

    def __bool__(self) -> bool:
        return bool(native_on(self, CPU))

    def __iter__(self) -> Any:
        return iter(D.wrap(list(native_on(self, CPU)), CPU, (self,), {}, None, False))

    def __hash__(self) -> int:
        return id(self)

    # ------------------------------------------------------------------ products
    def __matmul__(self, other: Any) -> Any:
        return D.call(MATMUL, (self, other), {})

    def __rmatmul__(self, other: Any) -> Any:
        return D.call(RMATMUL, (self, other), {})

    def dot(self, other: Any) -> Any:
        """Matrix product (``A @ other``; a scalar scales)."""
        return self * other if _is_scalar(other) else self @ other

    def __mul__(self, other: Any) -> Any:
        if _is_scalar(other):
            return _run_method(self, "__mul__", (other,), {})
        if self._is_array:
            return _run_method(self, "multiply", (other,), {})
        return self @ other

    def __rmul__(self, other: Any) -> Any:
        if _is_scalar(other):
            return _run_method(self, "__rmul__", (other,), {})
        if self._is_array:
            return _run_method(self, "multiply", (other,), {})
        return other @ self if isinstance(other, _spbase) else self.__rmatmul__(other)

    def __setitem__(self, key: Any, value: Any) -> None:
        _run_method(self, "__setitem__", (key, value), {})


def _is_scalar(obj: Any) -> bool:
    if type(obj) is ndarray:
        return obj.ndim == 0
    return np.isscalar(obj) or (isinstance(obj, np.ndarray) and obj.ndim == 0)


class spmatrix(_spbase):
    """Base of autodev's sparse *matrix* classes (``*`` is the matrix product)."""

    __slots__ = ()


class sparray(_spbase):
    """Base of autodev's sparse *array* classes (``*`` is elementwise)."""

    __slots__ = ()

    _is_array = True


#: (format, is_array) -> the autodev class.
CLASSES: dict[tuple[str, bool], type[_spbase]] = {}


def _make_classes() -> None:
    for fmt in FORMATS:
        for is_array, base in ((False, spmatrix), (True, sparray)):
            scipy_class = getattr(_sp, f"{fmt}_{'array' if is_array else 'matrix'}")
            cls = type(scipy_class.__name__, (base,), {
                "__slots__": (), "format": fmt, "_is_array": is_array,
                "_scipy_class": scipy_class, "__module__": "autodev.scipy.sparse",
                "__doc__": scipy_class.__doc__,
            })
            CLASSES[(fmt, is_array)] = cls


def _new(cls: type[_spbase], native: Any, device: Device,
         storage: R.Storage | None = None) -> _spbase:
    obj = object.__new__(cls)
    obj._native = native
    obj._device = device
    obj._storage = storage
    obj._mirror = None
    return obj


# ---------------------------------------------------------------------- residency

def native_nbytes(native: Any) -> int:
    """Bytes of a native sparse matrix's arrays (what a transfer moves)."""
    total = 0
    for name in _ARRAY_ATTRIBUTES:
        array = getattr(native, name, None)
        if array is not None and not callable(array) and hasattr(array, "nbytes"):
            total += int(array.nbytes)
    return total


def native_on(sp: _spbase, device: Device, moves: list[tuple[str, int]] | None = None) -> Any:
    """The matrix as a native of ``device``, transferring (and mirroring) if needed:
    the residency module's rules, with a sparse matrix's own copy."""
    return R.native_via(sp, device, _transfer, moves)


def _transfer(sp: _spbase, target: Device, moves: list[tuple[str, int]] | None) -> Any:
    """Copy the matrix's arrays to ``target`` through the host, counting the bytes."""
    native, nbytes = sp._native, native_nbytes(sp._native)
    if sp._device is not CPU:
        native = native.get()
        if sp._is_array and not isinstance(native, _sp.sparray):
            native = CLASSES[(native.format, True)]._scipy_class(native)
        R.count_transfer("d2h", nbytes, moves)
    if target is CPU:
        return native
    module = backend_for(target).scipy("sparse")
    register_native_types(module)
    # a sparse *array* stays one (cupyx 14 has csr_array, ...): its sum(axis=0) is 1-D
    kind = "array" if sp._is_array else "matrix"
    uploaded = getattr(module, f"{native.format}_{kind}")(native)
    R.count_transfer("h2d", nbytes, moves)
    return uploaded


def wrap_native(native: Any, device: Device, args: tuple[Any, ...] = ()) -> _spbase:
    """The autodev object for a native sparse result computed on ``device`` from ``args``."""
    inputs = [a for a in _flatten(args) if isinstance(a, _spbase)]
    if device is CPU:
        is_array = isinstance(native, _sp.sparray)
    else:
        is_array = any(a._is_array for a in inputs)
    storage = None
    for a in inputs:
        if a._device is device:
            storage = R.storage_of(a)  # it may share arrays with its input (A.T, tocsr)
            break
        if R.is_mirror(a, device, native) or (device is CPU and _shares(native, a, device)):
            native = native.copy()  # never hand out a mirror
            break
    return _new(CLASSES[(native.format, is_array)], native, device, storage)


def _shares(native: Any, sp: _spbase, device: Device) -> bool:
    mirror = R.mirror_on(sp, device)
    if mirror is None:
        return False
    theirs = [getattr(mirror, n) for n in _ARRAY_ATTRIBUTES if hasattr(mirror, n)]
    return any(isinstance(x, np.ndarray) and isinstance(y, np.ndarray)
               and np.may_share_memory(x, y)
               for x in (getattr(native, n, None) for n in _ARRAY_ATTRIBUTES) for y in theirs)


def _flatten(items: Any) -> list[Any]:
    out: list[Any] = []
    for obj in items:
        if type(obj) in (tuple, list):
            out.extend(_flatten(obj))
        else:
            out.append(obj)
    return out


_REGISTERED: set[int] = set()


def register_native_types(module: Any) -> None:
    """Teach the dispatcher to wrap the sparse types of a backend's sparse module."""
    if id(module) in _REGISTERED or isinstance(module, SimSparseModule):
        return  # SimSparse is registered once, below
    _REGISTERED.add(id(module))
    for fmt in GPU_FORMATS:
        for kind in ("matrix", "array"):
            cls = getattr(module, f"{fmt}_{kind}", None)
            if isinstance(cls, type):
                D.FOREIGN_RESULTS[cls] = wrap_native


# ---------------------------------------------------------------------- operations

def _gpu_sparse_ok(arrays: list[Any], kwargs: dict[str, Any]) -> bool:
    for a in arrays:
        if isinstance(a, _spbase):
            if a.format not in GPU_FORMATS or a.dtype not in GPU_DTYPES:
                return False
        elif a.ndim > 2 or a.dtype.kind not in "biufc":
            return False
    return True


def _work_matmul(arrays: list[Any]) -> float:
    """nnz(A) times the columns of a dense B, or nnz(B)/rows(B) for a sparse one."""
    a = arrays[0]
    if len(arrays) < 2:
        return float(a.size)
    b = arrays[1]
    if isinstance(b, _spbase):
        return a.nnz * max(b.nnz / max(b.shape[0], 1), 1.0)
    return a.nnz * (b.shape[-1] if b.ndim == 2 else 1)


def _work_rmatmul(arrays: list[Any]) -> float:
    a = arrays[0]
    if len(arrays) < 2:
        return float(a.size)
    b = arrays[1]
    return a.nnz * (b.shape[0] if b.ndim == 2 else 1)


def _promoting(name: str) -> Callable[[Any], Callable[..., Any]]:
    """GPU factory: the product with both operands cast to the result dtype first
    (cupyx casts the vector to the matrix's dtype; SciPy promotes)."""
    def factory(backend: Any) -> Callable[..., Any]:
        def run(a: Any, b: Any) -> Any:
            dtype = np.result_type(a.dtype, b.dtype)
            if a.dtype != dtype:
                a = a.astype(dtype)
            if b.dtype != dtype:
                b = b.astype(dtype)
            return getattr(a, name)(b)

        return run
    return factory


MATMUL = ScipySpec("scipy.sparse.matmul", ".__matmul__", "sparse_matmul", work=_work_matmul,
                   gpu_ok=_gpu_sparse_ok, gpu_impl=_promoting("__matmul__"), arrays=2)
RMATMUL = ScipySpec("scipy.sparse.rmatmul", ".__rmatmul__", "sparse_matmul",
                    work=_work_rmatmul, gpu_ok=_gpu_sparse_ok,
                    gpu_impl=_promoting("__rmatmul__"), arrays=2)

_METHOD_SPECS: dict[str, ScipySpec] = {}


def _method_spec(name: str, on_gpu: bool = True) -> ScipySpec:
    key = name if on_gpu else f"{name} (host)"
    spec = _METHOD_SPECS.get(key)
    if spec is None:
        where = "primary" if name in GPU_METHODS and on_gpu else "cpu"
        spec = _METHOD_SPECS[key] = ScipySpec(f"scipy.sparse.{name}", "." + name, "copy",
                                              where=where)
    return spec


def _run_method(sp: _spbase, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if name in WRITE_METHODS:
        return _write(sp, name, args, kwargs)
    # GPU_METHODS run where the primary lives (unless its GPU format lacks them);
    # others on the host copy, with SciPy
    on_gpu = name not in GPU_METHODS_MISSING.get(sp.format, ())
    if name == "astype" and sp._device is not CPU and "casting" in kwargs:
        kwargs = _checked_casting(sp, args, kwargs)
    return D.call(_method_spec(name, on_gpu), (sp, *args), kwargs)


def _checked_casting(sp: _spbase, args: tuple[Any, ...], kwargs: dict[str, Any]
                     ) -> dict[str, Any]:
    """cupyx's ``astype`` takes no ``casting=`` (TypeError): it is checked here, as
    SciPy's would (NumPy's can_cast), and not passed on."""
    kwargs = dict(kwargs)
    casting = kwargs.pop("casting")
    dtype: Any = args[0] if args else kwargs.get("dtype")
    if not np.can_cast(sp.dtype, dtype, casting):
        raise TypeError(f"Cannot cast array data from {sp.dtype!r} to {np.dtype(dtype)!r} "
                        f"according to the rule {casting!r}")
    return kwargs


def _write(sp: _spbase, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run a writing method on the host primary, then bump the version."""
    before_write()
    if sp._device is not CPU:
        R.promote(sp, CPU, native_on(sp, CPU))
    result = getattr(sp._native, name)(*D.cpu_arg(args), **{k: D.cpu_arg(v)
                                                           for k, v in kwargs.items()})
    R.mark_written(sp)
    return result


def _bound(sp: _spbase, name: str) -> Callable[..., Any]:
    def method(*args: Any, **kwargs: Any) -> Any:
        return _run_method(sp, name, args, kwargs)

    method.__name__ = name
    return method


def _install_methods() -> None:
    for name in sorted(GPU_METHODS | WRITE_METHODS):
        if name in _spbase.__dict__:
            continue
        setattr(_spbase, name, _method(name))
    for name in ("eq", "ne", "lt", "le", "gt", "ge", "pow", "rtruediv"):
        setattr(_spbase, f"__{name}__", _method(f"__{name}__"))


def _method(name: str) -> Callable[..., Any]:
    def method(self: _spbase, *args: Any, **kwargs: Any) -> Any:
        return _run_method(self, name, args, kwargs)

    method.__name__ = name
    method.__qualname__ = f"_spbase.{name}"
    original = getattr(_sp.csr_matrix, name, None)
    method.__doc__ = getattr(original, "__doc__", None)
    if original is not None:
        method.__wrapped__ = original  # type: ignore[attr-defined]  # SciPy's signature
    return method


def _native_on_hook(obj: Any, device: Device, moves: Any) -> Any:
    return native_on(obj, device, moves)


def _register() -> None:
    from ..._backends import _sim_sparse

    _sim_sparse.MISSING_METHODS.update(GPU_METHODS_MISSING)  # the sim lacks them too
    _sim_sparse.MISSING_KEYWORDS.update({"astype": ("casting",)})  # cupyx's astype(t)
    _make_classes()
    _install_methods()
    for cls in CLASSES.values():
        D.FOREIGN_ARRAYS[cls] = _native_on_hook
        _reuse._NATIVE_ON[cls] = _native_on_hook  # reuse credit may mirror it
        D.FOREIGN_RESULTS[cls._scipy_class] = wrap_native
    D.FOREIGN_RESULTS[SimSparse] = wrap_native


_register()
