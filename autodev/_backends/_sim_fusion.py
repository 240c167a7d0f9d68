"""The simulated GPU's ``fuse``: an imitation of ``cupy.fuse`` (CuPy 14's ``fusion.pyx``).

``xp.fuse(func)`` returns a :class:`SimFusion`. Called with at least one device array, it
*traces* ``func`` once per kind of arguments (each array's dtype and rank, each scalar's
type), as CuPy does: ``func`` is given variables that stand for its arguments, and every
ufunc of the device's module called on them records an operation instead of running. The
recorded operations are then one kernel: each call of the fused function is one device
call (one launch: one tick of the clock, one place for an injected fault) that computes
every operation with NumPy in the dtypes CuPy's kernel would use.

What CuPy's fusion accepts, the imitation accepts, and nothing more:

- arguments: device arrays, NumPy scalars, ``int``, ``float``, ``complex``, ``bool`` and
  None (anything else: TypeError 'Invalid argument type'); a host array is refused as
  CuPy's kernel refuses it;
- inside ``func``: the device's ufuncs (positional operands, ``out=`` a traced array
  only; any other keyword: TypeError 'Wrong arguments'), the variables' operators and
  ``astype`` (no ``order``/``casting``/``subok``), scalars as operands; any other operand
  (a device array captured from outside, a list) is TypeError 'Unsupported type'; a
  variable refuses ``shape`` (NotImplementedError), conversion to a Python scalar and
  to NumPy (TypeError); a function of the module other than a ufunc cannot read one;
- each ufunc's loop is CuPy's choice (``_guess_routine_from_in_types``): the first loop
  of the ufunc's list whose inputs the operands reach by a safe cast, a scalar also where
  NumPy's ``result_type`` of the scalar's type and the loop's keeps the loop's type (CuPy's
  fusion treats every scalar so, NumPy's scalars included); no loop: TypeError 'Invalid
  type cast'. Operands are cast to the loop's types (``static_cast``) and the result has
  the loop's output type, as in CuPy's generated code;
- ``func`` returns a variable, a tuple of them, or None (anything else: TypeError).

A kernel reports no floating-point errors (CuPy's kernels never warn): it computes under
``np.errstate(all="ignore")``.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from ._sim_array import SimArray, _unwrap

#: The dtypes CuPy's kernels compute in (by character).
KINDS = frozenset("?bhilqBHILQefdFD")
_ACCEPTABLE = (SimArray, np.ndarray, np.generic, int, float, complex, bool, type(None))
_SCALAR_TYPES = (int, float, complex, bool, np.generic)

_LOCAL = threading.local()


def tracing() -> "_History | None":
    """The fused function being traced on this thread, or None."""
    return getattr(_LOCAL, "history", None)


_SMALL_INTS = frozenset("bBhHiI")
_COMPARISONS = frozenset({"equal", "not_equal", "less", "less_equal", "greater",
                          "greater_equal"})


def _cupy_lacks(name: str, ins: str) -> bool:
    """True for a loop of NumPy's that CuPy 14's ufunc ``name`` does not have (inputs
    ``ins``): comparisons and ``logical_and``/``logical_or`` of small integers (CuPy's
    first loop for them is the 64-bit one), ``isfinite``/``isinf``/``isnan`` of integers
    and booleans (CuPy's is a floating one) and logical operations on complex numbers."""
    if name in _COMPARISONS:
        return ins[0] in _SMALL_INTS
    if name in ("logical_and", "logical_or"):
        return ins[0] in _SMALL_INTS or ins[0] in "FD"
    if name in ("logical_not", "logical_xor"):
        return ins[0] in "FD"
    if name in ("isfinite", "isinf", "isnan"):
        return ins[0] not in "efdFD"
    return False


def loops(ufunc: np.ufunc) -> list[tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]]]:
    """A ufunc's loops as the simulated CuPy lists them (input types, output types):
    NumPy's, in NumPy's order, in the dtypes CuPy computes in, less those CuPy lacks
    (:func:`_cupy_lacks`; the loops CuPy has and NumPy lacks are for operands NumPy
    refuses, which no fused call of autodev's has)."""
    found = []
    for sig in ufunc.types:
        ins, outs = sig.split("->")
        if all(c in KINDS for c in ins + outs) and not _cupy_lacks(ufunc.__name__, ins):
            found.append((tuple(map(np.dtype, ins)), tuple(map(np.dtype, outs))))
    return found


def guess_loop(ufunc: np.ufunc, in_dtypes: tuple[np.dtype, ...], weaks: tuple[Any, ...]
               ) -> tuple[tuple[np.dtype, ...], tuple[np.dtype, ...]] | None:
    """CuPy's ``_guess_routine_from_in_types``: the first loop every operand reaches."""
    for ins, outs in loops(ufunc):
        for it, ot, weak in zip(in_dtypes, ins, weaks):
            if np.can_cast(it, ot):
                continue
            if not weak:
                break
            try:
                if np.result_type(weak(0), ot) != ot:
                    break
            except TypeError:
                break
        else:
            return ins, outs
    return None


class _Var:
    """One variable of a traced kernel: a parameter, a constant or an operation's result
    (rank -1: a scalar)."""

    def __init__(self, history: "_History", index: int, dtype: np.dtype, ndim: int,
                 weak: Any = False) -> None:
        self._history, self._index = history, index
        self.dtype, self.ndim, self._weak = dtype, ndim, weak

    # CuPy's variables: every operator is the module's ufunc
    def _ufunc(self, name: str, *args: Any) -> Any:
        return self._history.call(getattr(np, name), args, {})

    def __neg__(self) -> Any: return self._ufunc("negative", self)
    def __invert__(self) -> Any: return self._ufunc("invert", self)
    def __add__(self, o: Any) -> Any: return self._ufunc("add", self, o)
    def __radd__(self, o: Any) -> Any: return self._ufunc("add", o, self)
    def __sub__(self, o: Any) -> Any: return self._ufunc("subtract", self, o)
    def __rsub__(self, o: Any) -> Any: return self._ufunc("subtract", o, self)
    def __mul__(self, o: Any) -> Any: return self._ufunc("multiply", self, o)
    def __rmul__(self, o: Any) -> Any: return self._ufunc("multiply", o, self)
    def __truediv__(self, o: Any) -> Any: return self._ufunc("true_divide", self, o)
    def __rtruediv__(self, o: Any) -> Any: return self._ufunc("true_divide", o, self)
    def __floordiv__(self, o: Any) -> Any: return self._ufunc("floor_divide", self, o)
    def __rfloordiv__(self, o: Any) -> Any: return self._ufunc("floor_divide", o, self)
    def __mod__(self, o: Any) -> Any: return self._ufunc("remainder", self, o)
    def __rmod__(self, o: Any) -> Any: return self._ufunc("remainder", o, self)
    def __pow__(self, o: Any) -> Any: return self._ufunc("power", self, o)
    def __lt__(self, o: Any) -> Any: return self._ufunc("less", self, o)
    def __le__(self, o: Any) -> Any: return self._ufunc("less_equal", self, o)
    def __gt__(self, o: Any) -> Any: return self._ufunc("greater", self, o)
    def __ge__(self, o: Any) -> Any: return self._ufunc("greater_equal", self, o)
    def __eq__(self, o: Any) -> Any: return self._ufunc("equal", self, o)
    def __ne__(self, o: Any) -> Any: return self._ufunc("not_equal", self, o)
    def __and__(self, o: Any) -> Any: return self._ufunc("bitwise_and", self, o)
    def __or__(self, o: Any) -> Any: return self._ufunc("bitwise_or", self, o)
    def __xor__(self, o: Any) -> Any: return self._ufunc("bitwise_xor", self, o)

    __hash__ = None  # type: ignore[assignment]

    def astype(self, dtype: Any, order: Any = None, casting: Any = None, subok: Any = None,
               copy: bool = True) -> Any:
        dtype = np.dtype(dtype)
        if order is not None:
            raise TypeError("order is not supported yet")
        if casting is not None:
            raise TypeError("casting is not supported yet")
        if subok is not None:
            raise TypeError("subok is not supported yet")
        if dtype.char not in KINDS:
            raise KeyError(dtype)  # (CuPy's table of astype ufuncs has no entry for it)
        if not copy and self.dtype == dtype:
            return self
        return self._history.cast(self, dtype)

    @property
    def shape(self) -> Any:
        raise NotImplementedError("`shape` is not supported, currently.")

    def __bool__(self) -> bool:
        raise TypeError("Cannot convert to Python scalar in cupy.fuse")

    def __int__(self) -> int:
        raise TypeError("Cannot convert to Python scalar in cupy.fuse")

    def __float__(self) -> float:
        raise TypeError("Cannot convert to Python scalar in cupy.fuse")

    def __complex__(self) -> complex:
        raise TypeError("Cannot convert to Python scalar in cupy.fuse")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a variable of a fused kernel is not an array: only the device's "
                        "ufuncs and astype can read it")

    __array_ufunc__ = None

    def __repr__(self) -> str:
        return f"<fused kernel variable v{self._index} {self.dtype} ndim={self.ndim}>"


#: One operation of a traced kernel: the ufunc, its operand variables, the loop's input
#: types (each operand is cast to its one), the output type and the result variable.
_Op = tuple[np.ufunc, tuple[int, ...], tuple[np.dtype, ...], np.dtype, int]


class _History:
    """What tracing records: constants, operations, the variables' dtypes and ranks."""

    def __init__(self) -> None:
        self.dtypes: list[np.dtype] = []
        self.ndims: list[int] = []
        self.constants: dict[int, Any] = {}
        self.ops: list[_Op] = []

    def fresh(self, dtype: np.dtype, ndim: int, weak: Any = False) -> _Var:
        self.dtypes.append(dtype)
        self.ndims.append(ndim)
        return _Var(self, len(self.dtypes) - 1, dtype, ndim, weak)

    def var(self, arg: Any) -> _Var:
        if type(arg) is _Var and arg._history is self:
            return arg
        if isinstance(arg, _SCALAR_TYPES):
            dtype = np.dtype(type(arg))
            if dtype.char not in KINDS:
                raise TypeError(f"Unsupported type {type(arg)}")
            # (CuPy's fusion takes every scalar for a weak one, NumPy's scalars too)
            var = self.fresh(dtype, -1, type(arg))
            self.constants[var._index] = np.asarray(arg, dtype=dtype)
            return var
        raise TypeError(f"Unsupported type {type(arg)}")

    def call(self, ufunc: np.ufunc, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A ufunc called on traced variables (CuPy's ``_FusionHistory.call_ufunc``)."""
        kwargs = dict(kwargs)
        out = kwargs.pop("out", None)
        if kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        variables = [self.var(a) for a in args]
        ins, outs = variables[:ufunc.nin], variables[ufunc.nin:]
        if out is not None:
            if outs:
                raise ValueError("cannot specify 'out' as both a positional and keyword "
                                 "argument")
            if type(out) is not _Var or out.ndim < 0:
                raise ValueError("The 'out' tuple must have exactly one entry per ufunc "
                                 "output")
            outs.append(self.var(out))
        if len(ins) != ufunc.nin or len(outs) > ufunc.nout:
            raise ValueError("invalid number of arguments")
        if any(v.ndim < 0 for v in outs):
            raise TypeError("return arrays must be of ArrayType")
        if ufunc.nout != 1:
            raise NotImplementedError(f"{ufunc.__name__}: the simulated GPU fuses ufuncs "
                                      "of one output only")
        ndim = max(v.ndim for v in ins)
        if any(v.ndim < ndim for v in outs):
            raise ValueError("non-broadcastable output operand")
        loop = guess_loop(ufunc, tuple(v.dtype for v in ins), tuple(v._weak for v in ins))
        if loop is None:
            raise TypeError(f"Invalid type cast in '{ufunc.__name__}': "
                            f"{[v.dtype for v in ins]} -> {[v.dtype for v in outs]}")
        in_types, (out_type,) = loop
        if outs:
            result = outs[0]
            if not np.can_cast(out_type, result.dtype, "same_kind"):
                raise TypeError(f"Cannot cast ufunc '{ufunc.__name__}' output from "
                                f"{out_type} to {result.dtype} with casting rule 'same_kind'")
        else:
            result = self.fresh(out_type, ndim)
        self.ops.append((ufunc, tuple(v._index for v in ins), in_types, out_type,
                         result._index))
        return result

    def cast(self, var: _Var, dtype: np.dtype) -> _Var:
        """``var.astype(dtype)``: CuPy's astype ufunc, a ``static_cast``."""
        result = self.fresh(dtype, var.ndim)
        self.ops.append((_CAST, (var._index,), (var.dtype,), dtype, result._index))
        return result


_CAST: Any = None  # (the astype operation: no ufunc)


class _Kernel:
    """A traced function: its parameters, operations and outputs."""

    def __init__(self, history: _History, params: list[int | None], outputs: list[int],
                 as_tuple: bool) -> None:
        self.history, self.params, self.outputs, self.as_tuple = \
            history, params, outputs, as_tuple

    def run(self, args: tuple[Any, ...]) -> list[np.ndarray]:
        """The outputs' values for the call's arguments (NumPy data)."""
        history = self.history
        values: dict[int, Any] = dict(history.constants)
        shapes = []
        for index, arg in zip(self.params, args):
            if index is None:
                continue
            if type(arg) is SimArray:
                values[index] = _unwrap(arg)
                shapes.append(arg.shape)
            else:
                values[index] = np.asarray(arg, dtype=history.dtypes[index])
        shape = np.broadcast_shapes(*shapes)
        with np.errstate(all="ignore"):
            for ufunc, operands, in_types, out_type, result in history.ops:
                ins = [np.asarray(values[i]).astype(t, copy=False)
                       for i, t in zip(operands, in_types)]
                if ufunc is _CAST:
                    values[result] = ins[0].astype(out_type)
                else:
                    values[result] = ufunc(*ins, signature=(*in_types, out_type))
            return [np.array(np.broadcast_to(values[i], shape), order="C")
                    for i in self.outputs]


class SimFusion:
    """``cupy.fuse(func)`` on the simulated GPU (see the module's docstring)."""

    def __init__(self, func: Callable[..., Any], name: str, launch: Callable[..., None]
                 ) -> None:
        self.func, self.name, self._launch = func, name, launch
        self._memo: dict[tuple[Any, ...], _Kernel] = {}

    def __repr__(self) -> str:
        return f"<Fusion '{self.name}'>"

    def __call__(self, *args: Any) -> Any:
        if tracing() is not None or not any(type(a) is SimArray for a in args):
            return self.func(*args)  # (as CuPy: inside a fusion, or no device array)
        for arg in args:
            if not isinstance(arg, _ACCEPTABLE):
                kinds = ", ".join(repr(type(a)) for a in args)
                raise TypeError(f"Invalid argument type for '{self.name}': ({kinds})")
            if type(arg) is np.ndarray:
                raise TypeError(f"Unsupported type {type(arg)}")  # (the kernel's refusal)
        key = tuple((a.dtype.char, a.ndim) if type(a) is SimArray else
                    None if a is None else (np.dtype(type(a)).char, type(a)) for a in args)
        kernel = self._memo.get(key)
        if kernel is None:
            kernel = self._memo[key] = self._trace(args)
        arrays = [a for a in args if type(a) is SimArray]
        self._launch(self.name, arrays, len(kernel.history.ops))
        outs = [SimArray(v) for v in kernel.run(args)]
        if kernel.as_tuple:
            return tuple(outs)
        return outs[0] if outs else None

    def _trace(self, args: tuple[Any, ...]) -> _Kernel:
        history = _History()
        params: list[int | None] = []
        proxies: list[Any] = []
        for arg in args:
            if arg is None:
                params.append(None)
                proxies.append(None)
                continue
            if type(arg) is SimArray:
                var = history.fresh(arg.dtype, arg.ndim)
            else:
                var = history.fresh(np.dtype(type(arg)), -1, type(arg))
            params.append(var._index)
            proxies.append(var)
        _LOCAL.history = history
        try:
            returned = self.func(*proxies)
        finally:
            _LOCAL.history = None
        if isinstance(returned, tuple):
            found, as_tuple = [r for r in returned if r is not None], True
        elif type(returned) is _Var:
            found, as_tuple = [returned], False
        elif returned is None:
            found, as_tuple = [], False
        else:
            raise TypeError(f"Fusion function can't return {type(returned)}")
        outputs = [history.var(r)._index for r in found]
        return _Kernel(history, params, outputs, as_tuple)
