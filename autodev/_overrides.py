"""NumPy's ufunc override protocol (NEP 13) for autodev's ufuncs and operators.

An operand whose class defines its own ``__array_ufunc__`` (a subclass of
``autodev.ndarray`` that converts its inputs and calls ``super().__array_ufunc__``, a
duck array) gets autodev's ufunc calls as it gets NumPy's: NumPy's order (subclasses
before their bases, otherwise left to right), ``out=`` passed as a tuple, ``TypeError``
when every override returns ``NotImplemented`` or one sets ``__array_ufunc__ = None``.
The default implementations, autodev's array's and NumPy's, run the ufunc themselves and
are no overrides. The operators of a subclass with its own ``__array_ufunc__`` call the
ufunc, as NumPy's operators do, so the override sees them too.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from . import _dispatch as D
from ._names import REDUCING_METHODS  # numpy/_core/_methods.py's, by their rows

_ABSENT = object()
#: autodev's ufunc standing for a NumPy one (``autodev._namespace.ufunc_for``, which sits
#: above this module), given by :func:`install`.
_UFUNC_FOR: list[Callable[[Any], Any]] = [lambda np_ufunc: np_ufunc]
#: Operand types that never override (checked first: they are nearly every operand).
_PLAIN = frozenset({int, float, complex, bool, type(None), str, np.ndarray, np.float64,
                    np.float32, np.int64, np.int32, np.complex128, np.bool_, tuple, list})


def _is_default(method: Any) -> bool:
    """True for the ``__array_ufunc__`` of autodev's array or NumPy's (or a wrapper of one,
    as autodev's subclasses inherit it)."""
    default = (D.ndarray.__array_ufunc__, np.ndarray.__array_ufunc__)
    return method in default or getattr(method, "__wrapped__", None) in default


def overriding(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    """The operands (inputs, then ``out=``'s arrays, then ``where=``) whose class overrides
    ``__array_ufunc__``, one per class, subclasses before their bases (NumPy's order)."""
    out = kwargs.get("out") if kwargs else None
    outs = out if type(out) is tuple else () if out is None else (out,)
    if kwargs and "where" in kwargs:
        outs = (*outs, kwargs["where"])
    found: list[Any] = []
    for obj in (*args, *outs):
        t = type(obj)
        if t in _PLAIN or t is D.ndarray or t in D.DEFER_TO:
            continue
        method = getattr(t, "__array_ufunc__", _ABSENT)
        if D.WRAPPER_FINDERS and method is not _ABSENT and D.found_wrapper(t):
            continue  # a wrapper met for the first time, now a DEFER_TO type: see call()
        if method is _ABSENT or (method is not None and _is_default(method)) \
                or any(type(f) is t for f in found):
            continue
        place = next((i for i, f in enumerate(found) if issubclass(t, type(f))), len(found))
        found.insert(place, obj)
    return found


def run(ufunc: Any, method: str, args: tuple[Any, ...], kwargs: dict[str, Any],
        found: list[Any]) -> Any:
    """Hand ``ufunc``'s ``method`` call to the overrides ``found`` (see :func:`overriding`),
    as NumPy does: the first result that is not ``NotImplemented``."""
    for obj in found:
        if type(obj).__array_ufunc__ is None:
            raise TypeError(f"operand '{type(obj).__name__}' does not support ufuncs "
                            "(__array_ufunc__=None)")
    out = kwargs.get("out", _ABSENT)
    if out is not _ABSENT:  # a tuple; no out= at all where every output is None, or for ...
        outs = out if type(out) is tuple else (out,)
        kwargs = {k: v for k, v in kwargs.items() if k != "out"} \
            if out is Ellipsis or all(o is None for o in outs) else {**kwargs, "out": outs}
    for obj in found:
        result = type(obj).__array_ufunc__(obj, ufunc, method, *args, **kwargs)
        if result is not NotImplemented:
            return result
    names = ", ".join(repr(type(a).__name__) for a in (*args, *kwargs.get("out", ()))
                      if a is not None)
    called = ", ".join([repr(getattr(ufunc, "_np", ufunc)), repr(method),
                        *map(repr, args), *(f"{k}={v!r}" for k, v in kwargs.items())])
    raise TypeError(f"operand type(s) all returned NotImplemented from "
                    f"__array_ufunc__({called}): {names}")  # NumPy's words


#: Per ufunc method: how many leading positional arguments are inputs, and the names of
#: the positional arguments after them (NumPy hands an override keywords for those).
_METHOD_ARGUMENTS = {
    "reduce": (1, ("axis", "dtype", "out", "keepdims", "initial", "where")),
    "accumulate": (1, ("axis", "dtype", "out")),
    "reduceat": (2, ("axis", "dtype", "out")),
    "outer": (2, ()),
    "at": (3, ()),
}


def normalized(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """A ufunc method's inputs and keywords as NumPy gives them to an override: the
    positional arguments after the inputs become keywords, and ``out=None`` is left out."""
    nin, names = _METHOD_ARGUMENTS[method]
    if len(args) > nin:
        positional = dict(zip(names, args[nin:]))
        twice = next((i for i, k in enumerate(positional) if k in kwargs), None)
        if twice is not None:  # NumPy's words
            raise TypeError(f"argument for {method}() given by name ('{names[twice]}') and "
                            f"position (position {nin + twice})")
        if positional.get("out") is Ellipsis:
            raise TypeError("out=... is only allowed as a keyword argument.")  # NumPy's words
        kwargs = {**positional, **kwargs}
        args = args[:nin]
    out = kwargs.get("out")
    check_out_tuple(out)
    if type(out) is tuple and len(out) != 1:
        raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
    if "out" in kwargs and kwargs["out"] is None:
        kwargs = {k: v for k, v in kwargs.items() if k != "out"}
    if kwargs.get("initial", None) is np._NoValue:  # NumPy's "not given"
        kwargs = {k: v for k, v in kwargs.items() if k != "initial"}
    return args, kwargs


def check_out_tuple(out: Any) -> None:
    """Refuse ``...`` among the outputs of an ``out=`` tuple, as NumPy does."""
    if type(out) is tuple and any(o is Ellipsis for o in out):
        raise TypeError("must use `...` as `out=...` and not per-operand/in a tuple")


#: Operators and the NumPy ufunc each calls (``__iadd__``: ``add`` with ``out=self``).
_OPERATORS = {
    "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
    "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "matmul": "matmul",
    "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
    "rshift": "right_shift", "divmod": "divmod",
}

#: NumPy's ``a ** e`` runs another ufunc than ``power`` for an exponent that is exactly
#: a Python int 2 or -1 or float 0.5 (numpy/_core/src/multiarray/number.c,
#: ``fast_scalar_power``): its results, errors and overrides are that ufunc's (``bool ** 2``
#: is int8). Exponent -> (ufunc, dtype kinds it is used for).
_SCALAR_POWERS = {(int, 2): ("square", "biufcmMUSV"), (int, -1): ("reciprocal", "fc"),
                  (float, 0.5): ("sqrt", "fc")}


def scalar_power(array: Any, exponent: Any) -> str | None:
    """The name of the ufunc NumPy's ``array ** exponent`` runs in place of ``power``
    (:data:`_SCALAR_POWERS`: ``square`` for every dtype but object, even one ``square``
    refuses), or None."""
    t = type(exponent)
    if t is int or t is float:
        found = _SCALAR_POWERS.get((t, exponent))
        if found is not None and array.dtype.kind in found[1]:
            return found[0]
    return None

_COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                "eq": "equal", "ne": "not_equal"}
_UNARY = {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}


def install(cls: type, ufunc_for: Callable[[Any], Any]) -> None:
    """Give ``cls`` (a subclass of ``autodev.ndarray``) operators that call autodev's ufuncs,
    if it overrides ``__array_ufunc__``, so its override sees them as NumPy's would
    (``ufunc_for``: autodev's ufunc standing for a NumPy one)."""
    if _is_default(getattr(cls, "__array_ufunc__", None)):
        return
    _UFUNC_FOR[0] = ufunc_for

    def binary(ufunc_name: str, reflected: bool) -> Callable[[Any, Any], Any]:
        def op(self: Any, other: Any) -> Any:
            if getattr(type(other), "__array_ufunc__", _ABSENT) is None:
                return NotImplemented  # NumPy's operators leave the call to such an operand
            ufunc = ufunc_for(getattr(np, ufunc_name))
            return ufunc(other, self) if reflected else ufunc(self, other)
        return op

    def in_place(ufunc_name: str) -> Callable[[Any, Any], Any]:
        def op(self: Any, other: Any) -> Any:
            return ufunc_for(getattr(np, ufunc_name))(self, other, out=(self,))
        return op

    def unary(ufunc_name: str) -> Callable[[Any], Any]:
        return lambda self: ufunc_for(getattr(np, ufunc_name))(self)

    def power(general: Callable[[Any, Any], Any], is_in_place: bool
              ) -> Callable[[Any, Any], Any]:
        def op(self: Any, other: Any) -> Any:  # x ** 2 runs square, as NumPy's operator
            name = scalar_power(self, other)
            if name is None:
                return general(self, other)
            ufunc = ufunc_for(getattr(np, name))
            return ufunc(self, out=(self,)) if is_in_place else ufunc(self)
        return op

    for op, name in _OPERATORS.items():
        forward, inplace = binary(name, False), in_place(name)
        if op == "pow":
            forward, inplace = power(forward, False), power(inplace, True)
        _set(cls, f"__{op}__", forward)
        _set(cls, f"__r{op}__", binary(name, True))
        if op != "divmod":
            _set(cls, f"__i{op}__", inplace)
    for op, name in _COMPARISONS.items():
        compare = binary(name, False)
        _set(cls, f"__{op}__", structured(op, compare) if op in ("eq", "ne") else compare)
    for op, name in _UNARY.items():
        _set(cls, f"__{op}__", unary(name))
    for method, (name, names) in REDUCING_METHODS.items():
        _set(cls, method, reducing(name, names))


def structured(op: str, compare: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """``==``/``!=`` of a structured array as NumPy's operator (``_void_compare``): no
    ufunc compares structured dtypes, so the fields are compared one by one, each through
    its own operator (and so the override), and joined with ``logical_and`` (``==``) or
    ``logical_or`` (``!=``); a field's subarray axes are reduced the same way."""
    join = "logical_and" if op == "eq" else "logical_or"

    def op_(self: Any, other: Any) -> Any:
        names = self.dtype.names
        other_dtype = getattr(other, "dtype", None)
        if names is None or other_dtype is None or other_dtype.names != names \
                or getattr(type(other), "__array_ufunc__", _ABSENT) is None:
            return compare(self, other)
        if not isinstance(other, D.ndarray):  # a NumPy void or array: an array, as NumPy's
            other = D.new(np.array(other), D.CPU)
        ufunc = _UFUNC_FOR[0](getattr(np, join))
        ndim = max(self.ndim, np.ndim(other))
        result = None
        for name in names:
            field = self[name] == other[name] if op == "eq" else self[name] != other[name]
            if np.ndim(field) > ndim:
                field = ufunc.reduce(field, axis=tuple(range(ndim, np.ndim(field))))
            result = field if result is None else ufunc(result, field)
        return result
    return op_


def reducing(ufunc_name: str, names: tuple[str, ...]) -> Callable[..., Any]:
    """An array method NumPy runs as ``ufunc.reduce`` (``a.max()``: ``maximum.reduce``)."""
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        given = {"axis": None, **dict(zip(names, args)), **kwargs}
        if given.get("out", _ABSENT) is None:
            del given["out"]
        return _UFUNC_FOR[0](getattr(np, ufunc_name)).reduce(self, **given)

    return method


def _set(cls: type, name: str, method: Callable[..., Any]) -> None:
    """Set ``method`` on ``cls`` unless the class itself defines ``name``."""
    if name not in cls.__dict__:
        method.__name__ = name
        method.__qualname__ = f"{cls.__qualname__}.{name}"
        setattr(cls, name, method)
