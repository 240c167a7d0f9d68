"""Operators against NumPy's, in every mode: no GPU (the compiled hot path, or pure Python
under AUTODEV_PURE_PYTHON=1, which a test here also runs), and the simulated GPU under
policies ``auto`` and ``gpu``. Each case compares what NumPy and autodev give: the value,
its type (a NumPy scalar is not a 0-d array), dtype and shape, or the exception's type.
The cases are the differences an adversarial differential campaign found (issue 23), and
a hypothesis search over array kinds x operand kinds x operators.
"""

from __future__ import annotations

import contextlib
import decimal
import fractions
import json
import operator
import os
import subprocess
import sys
from typing import Any, Callable, Iterator

import numpy
import pytest
from hypothesis import given, settings, strategies as st

import autodev
from autodev._config import SPEEDUPS
from autodev.testing import simulated_gpu
from diffcheck import differential, error_parity, put

MODES = ("no-gpu", "sim-auto", "sim-gpu")


@contextlib.contextmanager
def in_mode(mode: str) -> Iterator[None]:
    """Calls in ``mode``: no GPU, or the simulated GPU under policy auto or gpu."""
    if mode == "no-gpu":
        yield
        return
    with simulated_gpu(), autodev.policy(mode.removeprefix("sim-")):
        yield


@pytest.fixture(params=MODES)
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    with in_mode(request.param):
        yield request.param


def describe(value: Any) -> Any:
    """What a result is, as comparable between NumPy and autodev: an autodev array reads
    as a NumPy array of the same type name, dtype, shape and values."""
    if isinstance(value, autodev.ndarray):
        value = value.get()
    if type(value) is numpy.ndarray:  # (an object array's bytes are its pointers, and a
        # long double's bytes hold padding)
        exact = value.dtype.kind == "O" or (value.dtype.kind in "fc" and value.itemsize > 8
                                            and value.dtype != numpy.complex128)
        return ("ndarray", value.dtype.str, value.shape,
                repr(value.tolist()) if exact else value.tobytes())
    if type(value) is tuple:
        return tuple(describe(v) for v in value)
    if isinstance(value, numpy.generic):
        return (type(value).__name__, value.dtype.str, repr(value))
    return (type(value).__name__, repr(value))


def outcome(case: Callable[[Any], Any], xp: Any) -> Any:
    try:
        with numpy.errstate(all="ignore"):
            return ("ok", describe(case(xp)))
    except Exception as error:  # noqa: BLE001 - the error's type is what is compared
        return ("raised", type(error))


def same_as_numpy(case: Callable[[Any], Any]) -> None:
    expected, got = outcome(case, numpy), outcome(case, autodev)
    assert got == expected


class Priority:
    """An operand asking for the call by ``__array_priority__`` (no ``__array_ufunc__``)."""

    __array_priority__ = 50.0

    def __radd__(self, other: Any) -> str:
        return "Priority.__radd__"

    def __rmatmul__(self, other: Any) -> str:
        return "Priority.__rmatmul__"

    def __rmul__(self, other: Any) -> str:
        return "Priority.__rmul__"


class LowPriority(Priority):
    __array_priority__ = -1.0


class Refusing:
    """An operand that takes every binary operator itself (``__array_ufunc__ = None``)."""

    __array_ufunc__ = None

    def __radd__(self, other: Any) -> str:
        return "Refusing.__radd__"

    def __rsub__(self, other: Any) -> str:
        return "Refusing.__rsub__"


class FailingPriority:
    """Its ``__array_priority__`` raises: NumPy reads that as a scalar's priority."""

    @property
    def __array_priority__(self) -> float:
        raise RuntimeError("RuntimeError in __array_priority__!")

    def __radd__(self, other: Any) -> str:
        return "FailingPriority.__radd__"


class Declining(numpy.ndarray):
    """A subclass of NumPy's array whose operators decline: NumPy's operator computes."""

    def __sub__(self, other: Any) -> Any:
        return NotImplemented

    def __rsub__(self, other: Any) -> Any:
        return NotImplemented


def in_place(op: Callable[[Any, Any], Any], left: Callable[[Any], Any],
             right: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A case: ``x = left(xp); x op= right(xp)``; the result, then ``x`` itself."""
    def case(xp: Any) -> Any:
        x = left(xp)
        result = op(x, right(xp))
        return result, x

    return case


CASES: dict[str, Callable[[Any], Any]] = {
    # 0-d operands: NumPy scalars, as np.dot and sum give
    "0-d * 2": lambda xp: xp.array(2.5) * 2,
    "2 * 0-d": lambda xp: 2 * xp.array(2.5),
    "0-d int / 0-d": lambda xp: xp.array(3) / xp.array(2),
    "-0-d": lambda xp: -xp.array(2.5),
    "abs(0-d)": lambda xp: abs(xp.array(-2)),
    "0-d > 1": lambda xp: xp.array(2.5) > 1,
    "divmod 0-d": lambda xp: divmod(xp.array(7), 2),
    "vector @ vector": lambda xp: xp.arange(3.0) @ xp.arange(3.0),
    "vector @ vector, int": lambda xp: xp.arange(3) @ xp.arange(3),
    "float32 0-d + python float": lambda xp: xp.array(1.5, xp.float32) + 2.0,
    # in-place matmul
    "vector @= vector": in_place(operator.imatmul, lambda xp: xp.arange(3.0),
                                 lambda xp: xp.arange(3.0)),
    "vector @= matrix": in_place(operator.imatmul, lambda xp: xp.arange(3.0),
                                 lambda xp: xp.ones((3, 3))),
    "matrix @= vector": in_place(operator.imatmul, lambda xp: xp.ones((3, 3)),
                                 lambda xp: xp.arange(3.0)),
    "matrix @= matrix": in_place(operator.imatmul, lambda xp: xp.ones((2, 2)),
                                 lambda xp: xp.full((2, 2), 2.0)),
    "0-d @= matrix": in_place(operator.imatmul, lambda xp: xp.array(1.0),
                              lambda xp: xp.ones((2, 2))),
    "matrix @= nested list": in_place(operator.imatmul, lambda xp: xp.ones((2, 2)),
                                      lambda xp: [[1.0, 2.0], [3.0, 4.0]]),
    "matrix @= numpy.matrix": in_place(operator.imatmul, lambda xp: xp.ones((2, 2)),
                                       lambda xp: numpy.matrix([[1.0, 2.0], [3.0, 4.0]])),
    "0-d @= 2**70": in_place(operator.imatmul, lambda xp: xp.array(1.5), lambda xp: 2**70),
    "object matrix @= nested list": in_place(operator.imatmul, lambda xp: xp.ones((2, 2), object),
                                             lambda xp: [[1, 2], [3, 4]]),
    # deferral (NEP 13, binop_should_defer)
    "array * numpy.matrix": lambda xp: xp.ones((2, 2)) * numpy.matrix([[1, 2], [3, 4]]),
    # a subclass of NumPy's array gets Python's first turn, given a NumPy array, even where
    # Python asked it first (matrix.__mul__ declines what is not a NumPy array) or it
    # declines (matrix.__rpow__: NumPy's operator then computes)
    "numpy.matrix * array": lambda xp: numpy.matrix([[1, 2], [3, 4]]) * xp.ones((2, 2)),
    "array ** numpy.matrix": lambda xp: xp.ones((2, 2)) ** numpy.matrix([[1, 2], [3, 4]]),
    "array - declining subclass": lambda xp: xp.arange(3) - numpy.arange(3).view(Declining),
    "array + masked array": lambda xp: xp.arange(3) + numpy.ma.masked_array([1, 2, 3], [0, 1, 0]),
    "0-d < masked array": lambda xp: xp.array(2) < numpy.ma.masked_array([1, 2, 3], [0, 1, 0]),
    "divmod(array, masked array)": lambda xp: divmod(xp.arange(1, 4),
                                                     numpy.ma.masked_array([1, 2, 3], [0, 1, 0])),
    "array + priority": lambda xp: xp.arange(3) + Priority(),
    "array @ priority": lambda xp: xp.arange(3) @ Priority(),
    "array * low priority": lambda xp: xp.arange(3) * LowPriority(),
    "array + failing priority": lambda xp: xp.arange(3) + FailingPriority(),
    "array += priority": in_place(operator.iadd, lambda xp: xp.arange(3), lambda xp: Priority()),
    "array + refusing": lambda xp: xp.arange(3) + Refusing(),
    "array - refusing": lambda xp: xp.arange(3) - Refusing(),
    "array * refusing": lambda xp: xp.arange(3) * Refusing(),
    "array += refusing": in_place(operator.iadd, lambda xp: xp.arange(3), lambda xp: Refusing()),
    "array -= refusing": in_place(operator.isub, lambda xp: xp.arange(3.0),
                                  lambda xp: Refusing()),
    # comparisons with NumPy's string and datetime scalars
    "array == numpy.str_": lambda xp: xp.arange(3) == numpy.str_("a"),
    "array != numpy.str_": lambda xp: xp.arange(3) != numpy.str_("a"),
    "array == numpy.bytes_": lambda xp: xp.arange(3) == numpy.bytes_(b"a"),
    "array == datetime64": lambda xp: xp.arange(3) == numpy.datetime64("2020-01-01"),
    "array < numpy.str_": lambda xp: xp.arange(3) < numpy.str_("a"),
    "array + numpy.str_": lambda xp: xp.arange(3) + numpy.str_("a"),
    "array == str": lambda xp: xp.arange(3) == "a",
    # comparisons of two arrays whose dtypes no ufunc loop compares: all False / all True
    "datetime array == float array": lambda xp: (
        xp.arange(4).astype("M8[ns]") == xp.arange(3.0)[:, None]),
    "timedelta array != int array": lambda xp: (
        xp.arange(4).astype("m8[s]") != xp.arange(3)[:, None]),
    "bytes array == str array": lambda xp: xp.arange(4).astype("S5") == xp.arange(4).astype("U5"),
    "datetime array == timedelta array": lambda xp: (
        xp.arange(4).astype("M8[s]") == xp.arange(4).astype("m8[s]")),
    "datetime array == float array, shapes differ": lambda xp: (
        xp.arange(4).astype("M8[ns]") == xp.arange(3.0)),
    "float array != str array": lambda xp: xp.arange(3.0) != xp.asarray(["a", "b", "c"]),
    # object operands: NumPy's object arrays, computed on the host
    "array + Fraction": lambda xp: xp.arange(3) + fractions.Fraction(1, 3),
    "Fraction * array": lambda xp: fractions.Fraction(1, 3) * xp.arange(3),
    "array + None": lambda xp: xp.arange(3) + None,
    "array == None": lambda xp: xp.arange(3) == None,  # noqa: E711 - the operator is tested
    "array + object array": lambda xp: xp.arange(2) + numpy.array([fractions.Fraction(1, 2)] * 2),
    "ufunc(array, Fraction)": lambda xp: xp.add(xp.arange(3), fractions.Fraction(1, 3)),
    # lists that make arrays no GPU holds (long double, str): computed on the host
    "ufunc(list of long doubles)": lambda xp: xp.maximum([numpy.longdouble(1.5)],
                                                         [numpy.longdouble(2.5)]),
    "ufunc(nested list with a str)": lambda xp: xp.equal(xp.arange(2), [[1, "a"]]),
    "masked array + array": lambda xp: numpy.ma.masked_array([1, 2, 3], [0, 1, 0]) + xp.arange(3),
    # in-place integer power (the GPU correction's cast rehearsal)
    "int **= int": in_place(operator.ipow, lambda xp: xp.arange(5), lambda xp: xp.arange(5)),
    "int **= 2": in_place(operator.ipow, lambda xp: xp.arange(5), lambda xp: 2),
    "int **= -1": in_place(operator.ipow, lambda xp: xp.arange(1, 5), lambda xp: -1),
    "int8 += int64 (refused cast)": in_place(operator.iadd, lambda xp: xp.arange(3, dtype="i1"),
                                             lambda xp: xp.arange(3.0)),
    # NumPy's ``**`` runs square, reciprocal or sqrt for the exponents 2, -1 and 0.5
    "bool ** 2": lambda xp: (xp.arange(4) > 1) ** 2,
    "complex ** 2": lambda xp: (xp.linspace(0.1, 3.0, 50) * (1 + 0.7j)) ** 2,
    "complex ** -1": lambda xp: (xp.linspace(0.1, 3.0, 50) * (1 + 0.7j)) ** -1,
    "complex ** 0.5": lambda xp: (xp.linspace(0.1, 3.0, 50) * (1 + 0.7j)) ** 0.5,
    "long double ** 0.5": lambda xp: xp.linspace(0.1, 3.0, 50, dtype=numpy.longdouble) ** 0.5,
    "0-d complex ** 2": lambda xp: xp.array(0.3 + 0.7j) ** 2,
    "int ** -1": lambda xp: xp.arange(1, 4) ** -1,
    "complex **= 2": in_place(operator.ipow, lambda xp: xp.linspace(0.1, 3.0, 50) * (1 + 0.7j),
                              lambda xp: 2),
    "bool **= 2": in_place(operator.ipow, lambda xp: xp.arange(4) > 1, lambda xp: 2),
    "complex ** 2.0": lambda xp: (xp.linspace(0.1, 3.0, 50) * (1 + 0.7j)) ** 2.0,
    # error types: NumPy's UFuncTypeError, not a plain TypeError
    "float & float": lambda xp: xp.arange(3.0) & xp.arange(3.0),
    "float << 1": lambda xp: xp.arange(3.0) << 1,
    "~float": lambda xp: ~xp.arange(3.0),
    "complex < complex": lambda xp: xp.ones(2, complex) < xp.ones(2, complex),
    # out=... asks for an array, 0-d ones included
    "ufunc(scalars, out=...)": lambda xp: xp.add(1, 2, out=...),
    "ufunc(0-d, out=...)": lambda xp: xp.add(xp.array(1), 2, out=...),
    "reduce(0-d, out=...)": lambda xp: xp.add.reduce(xp.arange(3.0), out=...),
    # functions that return scalars for 0-d input
    "flip(0-d)": lambda xp: xp.flip(xp.array(3)),
    "flip(vector)": lambda xp: xp.flip(xp.arange(3)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_operators_match_numpy(name: str, mode: str) -> None:
    same_as_numpy(CASES[name])


def test_a_0d_result_is_an_immutable_json_able_scalar(mode: str) -> None:
    for xp in (numpy, autodev):
        s = xp.array(2.5) * 2
        t = s
        s += 1
        assert (float(t), float(s), json.dumps(s)) == (5.0, 6.0, "6.0")
        assert isinstance(xp.arange(3.0) @ xp.arange(3.0), float)


def test_in_place_refusal_leaves_the_name_bound_to_the_array(mode: str) -> None:
    a = autodev.arange(3)
    with pytest.raises(TypeError, match="does not support ufuncs"):
        a += Refusing()
    assert type(a) is autodev.ndarray and a.tolist() == [0, 1, 2]


def test_a_views_base_is_the_memory_it_views(mode: str) -> None:
    for xp in (numpy, autodev):
        a = xp.arange(6.0)
        assert a.base is None
        b = a[1:]
        assert type(b.base) is type(a) and b.base.tolist() == a.tolist()
        b.base[0] = 7.0  # a write through the base is a write to the array it views
        assert a[0] == 7.0 and b[0] == 1.0
        c = a.reshape(2, 3)[:, 1]  # NumPy's base is the owner, not the intermediate view
        assert c.base.shape == (6,)


# ---------------------------------------------------------------------- a random search

ARRAYS: dict[str, Callable[[Any], Any]] = {
    "float 1-d": lambda xp: xp.linspace(-2.0, 2.0, 5),
    "int 1-d": lambda xp: xp.arange(-2, 3),
    "bool 1-d": lambda xp: xp.arange(5) % 2 == 0,
    "0-d float": lambda xp: xp.array(1.5),
    "0-d int": lambda xp: xp.array(3),
    "float32 2-d": lambda xp: xp.ones((2, 5), xp.float32),
    "complex 1-d": lambda xp: xp.linspace(0.1, 3.0, 5) * (1 + 0.7j),
}
OPERANDS: dict[str, Callable[[Any], Any]] = {
    "int": lambda xp: 2, "float": lambda xp: -1.5, "-1": lambda xp: -1, "0.5": lambda xp: 0.5, "complex": lambda xp: 1j, "bool": lambda xp: True,
    "numpy.float32": lambda xp: numpy.float32(2.0), "numpy.int8": lambda xp: numpy.int8(-3),
    "0-d array": lambda xp: xp.array(2), "1-d array": lambda xp: xp.arange(1, 6),
    "numpy array": lambda xp: numpy.arange(1.0, 6.0), "list": lambda xp: [1, 2, 3, 4, 5],
    "None": lambda xp: None, "str": lambda xp: "x", "numpy.str_": lambda xp: numpy.str_("x"),
    "Fraction": lambda xp: fractions.Fraction(1, 2),
    "datetime64": lambda xp: numpy.datetime64("2001-01-01"),
    "priority": lambda xp: Priority(), "refusing": lambda xp: Refusing(),
    "2**70": lambda xp: 2**70, "longdouble": lambda xp: numpy.longdouble(1.5),
    "Decimal": lambda xp: decimal.Decimal("1.5"), "timedelta64": lambda xp: numpy.timedelta64(1),
    "bytes": lambda xp: b"x", "numpy.uint64": lambda xp: numpy.uint64(3),
    "numpy.float16": lambda xp: numpy.float16(1), "object()": lambda xp: object(),
    "object array": lambda xp: numpy.array([1, None, 2, 3, 4], object),
    "str array": lambda xp: numpy.array(list("abcde")), "tuple": lambda xp: (1, 2, 3, 4, 5),
    "nested list": lambda xp: [[1, 2, 3, 4, 5]],
    "numpy.matrix": lambda xp: numpy.matrix([[1, 2, 3, 4, 5]]),
}
OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or",
             "xor", "lshift", "rshift", "lt", "le", "gt", "ge", "eq", "ne")


@settings(max_examples=400, deadline=None)
@given(array=st.sampled_from(sorted(ARRAYS)), operand=st.sampled_from(sorted(OPERANDS)),
       op=st.sampled_from(OPERATORS), how=st.sampled_from(("forward", "reflected", "in-place")),
       mode=st.sampled_from(MODES))
def test_search_operators_against_numpy(array: str, operand: str, op: str, how: str,
                                        mode: str) -> None:
    if how == "in-place" and op in ("lt", "le", "gt", "ge", "eq", "ne"):
        how = "forward"
    name = f"i{op}" if how == "in-place" else op
    func = getattr(operator, name + "_" if name in ("and", "or") else name)

    def case(xp: Any) -> Any:
        x, y = ARRAYS[array](xp), OPERANDS[operand](xp)
        result = func(y, x) if how == "reflected" else func(x, y)
        return (result, x) if how == "in-place" else result

    with in_mode(mode):
        same_as_numpy(case)


# ---------------------------------------------------------------------- pure Python

@pytest.mark.skipif(SPEEDUPS is None, reason="this run is the pure-Python one already")
def test_the_pure_python_operators_give_the_same() -> None:
    """The cases above under AUTODEV_PURE_PYTHON=1 (the compiled hot path's fallbacks)."""
    env = {**os.environ, "AUTODEV_PURE_PYTHON": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", __file__,
         "-k", "not pure_python and not search"],
        env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:]


# ---------------------------------------------------------------------- NEP 13 overrides

def info_subclass(xp: Any) -> type:
    """NumPy's own example (test_umath's test_ufunc_override_with_super): a subclass whose
    ``__array_ufunc__`` unwraps its instances, calls ``super()`` and notes which operands
    were its own."""
    class Info(xp.ndarray):  # type: ignore[name-defined, misc]
        def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, out: Any = None,
                            **kwargs: Any) -> Any:
            args = [i.view(xp.ndarray) if isinstance(i, Info) else i for i in inputs]
            info = {"inputs": [n for n, i in enumerate(inputs) if isinstance(i, Info)]}
            outputs = out
            if out:
                info["outputs"] = [n for n, o in enumerate(out) if isinstance(o, Info)]
                kwargs["out"] = tuple(o.view(xp.ndarray) if isinstance(o, Info) else o
                                      for o in out)
            else:
                outputs = (None,) * ufunc.nout
            results = super().__array_ufunc__(ufunc, method, *args, **kwargs)
            if results is NotImplemented:
                return NotImplemented
            if method == "at":
                if isinstance(inputs[0], Info):
                    inputs[0].info = info
                return None
            if ufunc.nout == 1:
                results = (results,)
            results = tuple(xp.asarray(r).view(Info) if o is None else o
                            for r, o in zip(results, outputs))
            if isinstance(results[0], Info):
                results[0].info = info
            return results[0] if len(results) == 1 else results

    return Info


class Duck:
    """Not an array: takes a ufunc only when an ``Info`` array is among the operands."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if any(type(i).__name__ == "Info" for i in inputs):
            return "Duck"
        return NotImplemented


def override_story(xp: Any) -> list[Any]:
    """What the override sees and returns over NumPy's calls and operators."""
    Info = info_subclass(xp)
    seen: list[Any] = []

    def note(result: Any) -> None:
        seen.append((type(result).__name__, numpy.asarray(result.tolist()).tolist(),
                     getattr(result, "info", None)))

    d = xp.arange(5.0)
    a = xp.arange(5.0).view(Info)
    note(xp.sin(a))
    b = xp.sin(d, out=(a,))
    note(b)
    seen.append(b is a)
    a = xp.arange(5.0).view(Info)
    note(xp.sin(a, out=a))
    b1, b2 = xp.modf(d, out=(None, a))
    note(b1)
    seen.append(b2 is a)
    a, b = xp.arange(5.0).view(Info), xp.arange(5.0).view(Info)
    c = xp.add(a, b, out=a)
    note(c)
    seen.append(c is a)
    note(a + 1)  # operators of such a subclass are its ufuncs
    note(2 * a)
    note(-a)
    note(a < 2)
    a += 1
    note(a)
    seen.append(xp.add(a, Duck()))
    plain = xp.arange(3.0)
    seen.append(plain.__array_ufunc__(xp.add, "__call__", plain, Duck()) is NotImplemented)
    with pytest.raises(TypeError):
        xp.add(plain, Duck())
    m = xp.array([[1, 2, 3], [1, 2, 3]]).view(Info)
    note(m.max())
    note(m.any())
    out = xp.zeros(3, int).view(Info)
    c = m.max(axis=0, out=out)
    note(c)
    seen.append(c is out)
    note(xp.add.reduce(m, axis=1))
    out = xp.zeros(2, int).view(Info)
    c = xp.add.reduce(m, 1, None, out)
    note(c)
    seen.append(c is out)
    note(xp.add.accumulate(m, axis=0))
    note(xp.add.reduceat(m, [0, 2, 1], axis=1))
    note(xp.multiply.outer(xp.arange(2).view(Info), xp.arange(3)))
    m = xp.array([[1, 2, 3], [1, 2, 3]]).view(Info)
    xp.add.at(m, ([0, 1], [0, 2]), 1)
    note(m)
    return seen


def test_the_ufunc_override_protocol(mode: str) -> None:
    assert override_story(autodev) == override_story(numpy)


def test_the_cast_rehearsal_reads_no_uninitialised_memory(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    """``a **= b`` of integers on the GPU: the correction's rehearsal of NumPy's casts runs
    on probes whose values must not matter (uninitialised memory holding a negative
    integer made ``power`` raise "Integers to negative integer powers")."""
    def negative(shape: Any, dtype: Any = float, *args: Any, **kwargs: Any) -> Any:
        return numpy.full(shape, -1, dtype)

    with in_mode("sim-gpu"):
        a, b = autodev.arange(5), autodev.arange(5)
        monkeypatch.setattr(numpy, "empty", negative)
        a **= b
        monkeypatch.undo()
        assert a.tolist() == [1, 1, 4, 27, 256]


@pytest.mark.parametrize("op", [operator.add, operator.pow, operator.mod, operator.lt,
                                operator.eq, operator.ne, operator.and_])
def test_operators_of_subclasses_wrap_by_priority_as_numpys(device, op):
    # an operator runs NumPy's ufunc, whose result the operand of highest
    # __array_priority__ wraps (its __array_wrap__ asked with the ufunc's context), whichever
    # side it is on
    def run(xp: Any, a: Any) -> Any:
        calls: list[Any] = []

        class Low(xp.ndarray):
            __array_priority__ = 100.0

            def __array_wrap__(self, obj: Any, context: Any = None,
                               return_scalar: bool = False) -> Any:
                calls.append((type(self).__name__, context[0].__name__, len(context[1])))
                return super().__array_wrap__(obj, context, return_scalar)

        class High(Low):
            __array_priority__ = 101.0

        class Other(xp.ndarray):
            __array_priority__ = 101.0

        low, high, other = a.view(Low), a.view(High), a.view(Other)
        return [type(r).__name__ for r in (op(low, other), op(other, low), op(low, high),
                                           op(high, low), op(low, a), op(a, low))], calls

    a = numpy.arange(1, 4)
    assert run(autodev, put(a, device)) == run(numpy, a)


@pytest.mark.parametrize("dtype", ["f8", "c16", "i8", "?", "m8[s]", "U2", "O",
                                   [("a", "i4"), ("b", "i4")]])
@pytest.mark.parametrize("exponent", [2, -1, 0.5, 2.0, 3, True])
def test_power_by_a_python_scalar_runs_numpys_ufunc(device, dtype, exponent):
    # NumPy's a ** e runs square for an int 2 (every dtype but object, even one square
    # refuses), reciprocal for an int -1 and sqrt for a float 0.5 (float and complex): an
    # override sees that ufunc, for a ** e and a **= e alike
    def run(xp: Any, a: Any) -> Any:
        class Seen(xp.ndarray):
            def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any,
                                **kwargs: Any) -> Any:
                return ufunc.__name__, len(inputs), sorted(kwargs)

        def outcome(f: Callable[[], Any]) -> Any:
            try:
                result = f()
            except (TypeError, ValueError) as e:
                return type(e).__name__, str(e)
            return str(result.dtype), result.tolist()

        seen = a.view(Seen)
        plain = a.copy()
        return seen ** exponent, seen.__ipow__(exponent), outcome(lambda: plain ** exponent)

    a = numpy.ones(3, dtype=dtype)
    # (a device holds numbers only: the other dtypes' arrays are the host's)
    given = put(a, device) if a.dtype.kind in "biufc" else autodev.asarray(a)
    assert run(autodev, given) == run(numpy, a)


class _Answers:
    """An override answering with the ufunc, its inputs' count and keywords."""

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return ufunc.__name__, len(inputs), {k: v if k == "axes" else len(v)
                                             for k, v in kwargs.items()}


@pytest.mark.parametrize("op", [operator.iadd, operator.ipow, operator.imatmul])
@pytest.mark.parametrize("shape", [(2, 2), (2,)])
def test_in_place_operator_returns_the_overrides_answer(device, op, shape):
    # NumPy's a += other is the ufunc with out=(a,) (a @= other: with the axes that keep
    # a's shape): an override's answer is the operator's
    def run(xp: Any, a: Any) -> Any:
        return op(a, _Answers())

    a = numpy.ones(shape)
    assert run(autodev, put(a, device)) == run(numpy, a)


@pytest.mark.parametrize("method", ["__add__", "__radd__", "__pow__", "__rpow__",
                                    "__divmod__", "__matmul__", "__lt__"])
def test_base_operator_given_a_subclass_wraps_as_numpys(device, method):
    # a.__add__(sub), where sub's own operators are not asked: NumPy's operator runs the
    # ufunc, whose result sub's __array_wrap__ wraps (its __array_priority__ the highest)
    def run(xp: Any, a: Any) -> Any:
        class Sub(xp.ndarray):
            __array_priority__ = 1

        result = getattr(a, method)(a.view(Sub))
        return [type(r).__name__ for r in (result if type(result) is tuple else (result,))]

    a = numpy.arange(1.0, 5.0).reshape(2, 2)
    assert run(autodev, put(a, device)) == run(numpy, a)


@pytest.mark.parametrize("op", [operator.eq, operator.ne])
@pytest.mark.parametrize("dtype", ["f8,f8,f8", [("a", "f8"), ("b", "f8", (2,))]])
@pytest.mark.parametrize("row", [True, False])
def test_structured_comparison_of_a_subclass_compares_fields_as_numpys(device, op, dtype,
                                                                       row):
    # no ufunc compares structured dtypes: NumPy's == and != compare field by field,
    # each through the override (which sees arrays, even for a void scalar operand), and
    # join the fields with logical_and / logical_or (numpy's test_structured_equal)
    def run(xp: Any, s: Any) -> Any:
        seen = []

        class Sub(xp.ndarray):
            def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any,
                                **kwargs: Any) -> Any:
                seen.append((ufunc.__name__, [type(i).__name__ for i in inputs]))
                return getattr(ufunc, method)(*(i.view(xp.ndarray) for i in inputs),
                                              **kwargs)

        result = op(s.view(Sub), s[0] if row else s[::-1].copy())
        return seen, type(result).__name__, result.tolist()

    a = numpy.arange(12.0).reshape(4, 3)
    a[3, 1:] = a[0, 1:]
    s = a.view(dtype).squeeze()
    # (on the host: a device array has no field views, s['a'], the suite's open entry)
    assert run(autodev, autodev.asarray(s)) == run(numpy, s)


@pytest.mark.parametrize("call", [
    lambda xp, a, e: xp.power(a, e),
    lambda xp, a, e: a ** e,
    lambda xp, a, e: xp.power(a, e, out=xp.zeros_like(a)),
    lambda xp, a, e: xp.power(a, int(e[1])),  # a Python int
    lambda xp, a, e: a ** numpy.int8(int(e[1])),  # a NumPy integer
    lambda xp, a, e: True ** e,  # a Python bool base
    lambda xp, a, e: xp.power(a.astype(bool), e),
])
def test_integer_power_with_a_negative_exponent_raises_as_numpys(device, call):
    # NumPy's integer loop raises ValueError; CuPy's computes 0, 1 or -1 (autodev checks
    # the exponents first, a device reduction where they are a device array)
    a, e = numpy.array([-1, 1, 2, 3]), numpy.array([3, -1, 0, 2])
    assert "negative integer powers" in str(error_parity(call, a, e, device=device))
    differential(call, a, numpy.abs(e), device=device)


def test_a_python_integer_power_out_of_range_raises_numpys_overflow_first(device):
    # NumPy refuses the Python integer before it looks at the exponents
    e = numpy.array([3, -1, 0, 2])
    assert type(error_parity(lambda xp, e: (2 ** 70) ** e, e, device=device)) is OverflowError


def test_an_in_place_power_into_bool_raises_numpys_casting_error_first(device):
    def power_in_place(xp, a):
        a **= -1
        return a

    got = error_parity(power_in_place, numpy.array([True, False]), device=device)
    assert "Cannot cast ufunc 'power' output" in str(got)
