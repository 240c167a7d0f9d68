"""A deferred chain as one fused kernel on a GPU: the plan of the kernel, and its cache.

:mod:`autodev._chains` runs a chain that crossed to a GPU. For each group of its calls
with one result shape (the calls that read each other's results have one shape) it asks
:func:`plan` for a :class:`Program` and runs it with the device module's ``fuse``
(``cupy.fuse``; the simulated GPU imitates it, :mod:`autodev._backends._sim_fusion`): one
kernel launch, and one pass through device memory, for the whole group.

**Dtypes exact.** Every call was resolved when it was recorded; ``ufunc.resolve_dtypes``
gives the dtypes of its loop again (NEP 50's weak Python scalars included), and the
kernel computes each call in exactly those:

- an array operand (an input, or an earlier call's result) whose dtype is not the
  loop's is cast to it inside the kernel (``astype``: a ``static_cast``, the conversion
  CuPy's own unfused call applies to it);
- a scalar is converted on the host to the loop's dtype (NumPy's conversion of a weak
  scalar) and passed as an argument of the kernel, so that a loop whose scalars change
  (``x += dt * v`` with a new ``dt``) reuses one kernel;
- the loop CuPy's fusion chooses for those operands (the first of the device ufunc's
  ``types`` that every operand reaches: ``_guess_routine_from_in_types``, which takes
  each scalar for a weak one) must be that same loop, or one of the same output dtype
  whose input types NumPy's reach by a safe cast (CuPy compares small integers as 64-bit
  ones: the same values, and what its unfused call does).

So each value is what CuPy's unfused call computes, in the dtype NumPy gives (to within
the last bit or so on a real GPU, whose compiler may contract a multiply and an add of
one kernel into one fused multiply-add).

**Refusals.** A group runs as the device's calls in the program's order instead, for a
reason that :func:`plan` names (the trace record of the chain and
``autodev.stats()["unfused"]`` show it): the device's module has no ``fuse``; a call's
function there is not one of its ufuncs (CuPy's fusion traces ufuncs only); CuPy would
choose another loop than NumPy's, or has none for it; a Python integer lies outside its
integer loop's range (NumPy compares such a one exactly: no conversion can stand for it);
or the device's fusion refused the chain when it was traced or compiled (the exceptions
its backend names in ``fusion_errors``; the refusal is kept, and the chain's structure
runs unfused from then on).

**Cache.** A kernel is kept by the group's structure (each call's ufunc, which operand
it reads, the casts), the dtypes and ranks of its inputs and which results it returns:
a loop that builds the same chain each round reuses one kernel (and CuPy compiles it
once per dtypes). At most :data:`KEEP` kernels are kept per process.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ._fusion import Node

#: The dtypes CuPy's kernels compute in (by character).
KINDS = frozenset("?bhilqBHILQefdFD")
#: Kernels (and refusals) kept at most.
KEEP = 256

#: (device, structure) -> the fused function, or the reason it was refused.
_KERNELS: dict[tuple[Any, ...], Any] = {}


@dataclass(frozen=True)
class Program:
    """One group of a chain as a kernel: its structure and the arguments of one run.

    ``steps`` are ``(ufunc name, operand indices, casts)``: an operand index counts the
    kernel's arguments (``leaves`` then ``scalars``) and then the steps' results; a cast
    is the dtype the operand is cast to first, or None. ``outputs`` are the steps whose
    results the kernel returns, and ``returned`` the nodes they stand for.
    """

    key: tuple[Any, ...]
    leaves: tuple[np.ndarray, ...]
    scalars: tuple[Any, ...]
    steps: tuple[tuple[str, tuple[int, ...], tuple[np.dtype | None, ...]], ...]
    outputs: tuple[int, ...]
    returned: tuple[Node, ...]


def plan(xp: Any, device: str, group: list[Node], wanted: Any) -> Program | str:
    """The kernel of ``group`` (calls of one result shape, in the program's order) on the
    device of array module ``xp`` returning the nodes in ``wanted`` (ids), or the reason
    it cannot be one (see the module's docstring)."""
    if not callable(getattr(xp, "fuse", None)) or not isinstance(getattr(xp, "ufunc", None),
                                                                  type):
        return f"{device}'s array module has no fuse"
    leaves: dict[int, int] = {}
    leaf_arrays: list[np.ndarray] = []
    scalars: list[Any] = []
    positions = {id(node): i for i, node in enumerate(group)}
    refs: list[tuple[str, list[tuple[str, int]], list[np.dtype | None]]] = []
    for node in group:
        name = node.ufunc.__name__
        func = getattr(xp, name, None)
        if not isinstance(func, xp.ufunc):
            return f"`{name}` is not a ufunc on {device} (its fusion traces ufuncs only)"
        loop = _numpy_loop(node)
        if loop[-1] != node.dtype or any(t.char not in KINDS for t in loop):
            return f"`{name}` computes in {_sig(loop)}, which {device}'s kernels lack"
        operands: list[tuple[str, int]] = []
        casts: list[np.dtype | None] = []
        weaks: list[Any] = []
        for a, want in zip(node.args, loop):
            if type(a) is Node:
                operands.append(("node", positions[id(a)]))
            elif type(a) is np.ndarray:
                if id(a) not in leaves:
                    leaves[id(a)] = len(leaf_arrays)
                    leaf_arrays.append(a)
                operands.append(("leaf", leaves[id(a)]))
            else:
                value = _converted(a, want)
                if value is None:
                    return (f"`{name}` compares with the Python integer {a}, outside "
                            f"{want}'s range")
                operands.append(("scalar", len(scalars)))
                scalars.append(value)
                weaks.append(type(value))
                casts.append(None)
                continue
            weaks.append(False)
            casts.append(None if a.dtype == want else want)
        refusal = _loop_refusal(_device_loop(func.types, loop[:node.ufunc.nin], weaks), loop)
        if refusal:
            return f"`{name}`: {refusal}"
        refs.append((name, operands, casts))
    base = {"leaf": 0, "scalar": len(leaf_arrays), "node": len(leaf_arrays) + len(scalars)}
    steps = tuple((name, tuple(base[kind] + i for kind, i in operands), tuple(casts))
                  for name, operands, casts in refs)
    returned = tuple(node for node in group if id(node) in wanted)
    outputs = tuple(base["node"] + positions[id(node)] for node in returned)
    key = (tuple((n, o, tuple(c.char if c is not None else "" for c in cs))
                 for n, o, cs in steps),
           tuple((a.dtype.char, a.ndim) for a in leaf_arrays),
           tuple(s.dtype.char for s in scalars), outputs)
    return Program(key, tuple(leaf_arrays), tuple(scalars), steps, outputs, returned)


def _numpy_loop(node: Node) -> tuple[np.dtype, ...]:
    """The dtypes of the loop NumPy ran ``node`` with (inputs, then the output)."""
    described = tuple(a.dtype if type(a) is Node or isinstance(a, (np.ndarray, np.generic))
                      else type(a) for a in node.args)
    return tuple(node.ufunc.resolve_dtypes((*described, None)))


def _converted(value: Any, dtype: np.dtype) -> np.generic | None:
    """The scalar ``value`` in the loop's ``dtype`` as NumPy converts it; None for a
    Python integer outside an integer dtype's range."""
    try:
        with np.errstate(all="ignore"):  # (a float16 overflowing to inf, as NumPy's loop)
            converted = np.array(value, dtype=dtype)
    except OverflowError:
        return None
    return converted[()]  # type: ignore[return-value]


def _device_loop(types: list[str], ins: tuple[np.dtype, ...], weaks: list[Any]
                 ) -> tuple[np.dtype, ...] | None:
    """The loop CuPy's fusion chooses for operands of dtypes ``ins`` (``weaks``: each
    scalar's type, False for an array): the first of ``types`` every operand reaches by a
    safe cast, or, a scalar, where NumPy's result type of it and the loop's is the loop's."""
    for sig in types:
        head, _, tail = sig.partition("->")
        if len(head) != len(ins) or len(tail) != 1:
            continue
        try:
            loop = tuple(np.dtype(c) for c in head + tail)
        except TypeError:  # a type NumPy has no character for: CuPy's bfloat16 ('E'),
            continue  # listed after the float16 loop every operand reaching it reaches
        for dtype, wanted, weak in zip(ins, loop, weaks):
            if np.can_cast(dtype, wanted):
                continue
            if not weak or np.result_type(weak(0), wanted) != wanted:
                break
        else:
            return loop
    return None


def _loop_refusal(chosen: tuple[np.dtype, ...] | None, loop: tuple[np.dtype, ...]) -> str:
    """Why the device's loop ``chosen`` cannot stand for NumPy's ``loop`` (empty: it can).

    It can where it is the same loop, or where it computes in wider input types that
    every one of NumPy's reaches by a safe cast and gives the same output type: CuPy has
    no comparison loops for small integers, and compares them as 64-bit ones (the same
    values), as its unfused call does too."""
    if chosen is None:
        return f"CuPy's fusion has no loop for {_sig(loop)}"
    if chosen == loop:
        return ""
    if chosen[-1] == loop[-1] and all(np.can_cast(t, c) for t, c in zip(loop, chosen)):
        return ""
    return f"CuPy's fusion computes in {_sig(chosen)}, NumPy in {_sig(loop)}"


def _sig(loop: tuple[np.dtype, ...]) -> str:
    return f"({', '.join(map(str, loop[:-1]))}) -> {loop[-1]}"


def kernel(xp: Any, device: str, program: Program) -> Callable[..., Any] | str:
    """The fused function of ``program`` on the device of ``xp`` (made once per
    structure), or the reason the device refused it before."""
    key = (device, program.key)
    found = _KERNELS.get(key)
    if found is None:
        if len(_KERNELS) >= KEEP:
            del _KERNELS[next(iter(_KERNELS))]
        body = _body([getattr(xp, name) for name, _, _ in program.steps], program)
        found = _KERNELS[key] = xp.fuse(kernel_name="autodev_chain")(body)
    return found


def refused(device: str, program: Program, reason: str) -> None:
    """Keep the device's refusal of ``program``'s structure (it runs unfused from now)."""
    _KERNELS[(device, program.key)] = reason


def forget() -> None:
    """Drop every kernel kept (the usable GPU changed)."""
    _KERNELS.clear()


def _body(funcs: list[Any], program: Program) -> Callable[..., Any]:
    """The function the device fuses: every step on the kernel's variables, in order."""
    steps = [(func, operands, casts)
             for func, (_, operands, casts) in zip(funcs, program.steps)]
    outputs = program.outputs

    def chain(*params: Any) -> Any:
        values = list(params)
        for func, operands, casts in steps:
            values.append(func(*(values[i] if cast is None else values[i].astype(cast)
                                 for i, cast in zip(operands, casts))))
        return tuple(values[i] for i in outputs)

    return chain
