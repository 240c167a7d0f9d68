"""The simulated GPU: a device for tests on machines without one.

Its arrays (:class:`SimArray`) are a distinct type that refuses implicit
conversion to NumPy, as CuPy's do, so any code path that forgets a transfer
fails loudly. Its module functions refuse NumPy arrays for the same reason.
Transfers are counted, faults (out-of-memory, device errors, NotImplementedError)
can be injected at chosen calls, and it is as strict as CuPy 14: every row of the
capability table (``autodev._capability.table.TABLE``) installs its imitation here
(``IMITATIONS``, ``CUPY_MISSING``): refused keywords, operands, ufunc methods and
dtypes with CuPy's exception types, CuPy's result types, wrapping integer-array
indices, and NaN for singular ``solve``/``inv``/``cholesky`` unless run inside
:meth:`SimBackend.linalg_errors`.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
from types import ModuleType
from typing import Any, ContextManager, Iterator

import numpy as np

from .._cost.model import CostModel, dtype_class
from .._device import Device
from .._cost.families import WORK, dispatched_families
from ._base import Backend, byte_span
from ._sim_array import (_LATEST, DEVICE_DTYPES, SimArray, SimDeviceError,
                         SimOutOfMemoryError, _unwrap, _wrap_callable, _wrap_out)
from ._sim_cupy import _LINALG_RAISE, CUPY_MISSING, IMITATIONS
from ._sim_fusion import SimFusion, loops, tracing

class _SimUfunc:
    """A NumPy ufunc seen through the wall, with its methods, as strict as CuPy's."""

    def __init__(self, ufunc: np.ufunc, backend: "SimBackend") -> None:
        self._u = ufunc
        self._backend = backend
        self.__name__ = ufunc.__name__
        imitation = IMITATIONS.get("ufunc")
        self._call = imitation(ufunc) if imitation is not None else ufunc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        history = tracing()
        if history is not None:  # inside a fused function: an operation of its kernel
            return history.call(self._u, args, kwargs)
        self._backend._tick(self.__name__, args)
        return _wrap_out(self._call(*_unwrap(args), **_unwrap(kwargs)), kwargs)

    @property
    def types(self) -> list[str]:
        """The loops, as CuPy lists them: those of dtypes CuPy computes in, each half
        precision one followed by its bfloat16 twin, which CuPy lists (as 'E', ml_dtypes'
        character, unknown to NumPy) where ml_dtypes is installed."""
        found = []
        for ins, outs in loops(self._u):
            sig = f"{''.join(t.char for t in ins)}->{''.join(t.char for t in outs)}"
            found.append(sig)
            if "e" in sig and set(sig) <= set("e?->"):
                found.append(sig.replace("e", "E"))
        return found

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._u, name)
        if not callable(value):
            return value
        imitation = IMITATIONS.get("ufunc." + name)
        return _wrap_callable(imitation(value) if imitation is not None else value,
                              self._backend)


_FAMILIES: dict[str, str] = {}


def _family_of(name: str) -> str | None:
    """The cost family of the dispatched name ``name`` ("sum", "linalg.solve", "add")."""
    if not _FAMILIES:
        _FAMILIES.update(dispatched_families(
            n for n, u in vars(np).items() if isinstance(u, np.ufunc)))
    return _FAMILIES.get(name)


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
        if name == "ufunc":
            return _SimUfunc
        if name == "fuse" and self._module is np:
            return self._backend.fuse
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
        Module-function calls made on the device so far (a fused kernel is one call).
    kernels : int
        Fused kernels launched so far (:meth:`fuse`, CuPy's ``cupy.fuse``).
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
    fusion_errors = (TypeError, NotImplementedError)  # (cupy.fuse's, when it traces)

    def __init__(self, costs: dict[str, Any] | None = None) -> None:
        _LATEST[:] = [self]
        self.device = Device("sim", 0)
        self.costs = costs
        self.calls = 0
        self.h2d = 0
        self.d2h = 0
        self.freed = 0
        #: Fused kernels launched (:meth:`fuse`), and the last one's name.
        self.kernels = 0
        self.last_kernel = ""
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

        A call that makes only a view takes neither an out-of-memory nor a
        not-implemented fault (CuPy allocates nothing for one, and implements every view
        it makes): it passes to the next call.
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

    def fuse(self, *args: Any, **kwargs: Any) -> Any:
        """``cupy.fuse``: ``fuse(func)`` is ``func`` fused into one kernel
        (:mod:`._sim_fusion`); any other call (``fuse(kernel_name=...)``) is a decorator,
        as CuPy's is."""
        def wrapper(func: Any, kernel_name: str | None = None) -> SimFusion:
            return SimFusion(func, kernel_name or func.__name__, self._launch)

        if len(args) == 1 and not kwargs and callable(args[0]):
            return wrapper(args[0])
        return lambda func: wrapper(func, *args, **kwargs)

    def _launch(self, name: str, arrays: list[SimArray], ops: int) -> None:
        """One fused kernel launched: one device call (its fault, if one is injected) and
        its time, one launch doing the elementwise work of its ``ops`` operations."""
        if arrays:
            size = max(a._a.size for a in arrays)
            dclass = dtype_class(max(arrays, key=lambda a: a.dtype.itemsize).dtype)
            self._charge(self.true_model().compute("gpu", "elementwise", dclass,
                                                   size * max(ops, 1)))
        self._tick()
        self.kernels += 1
        self.last_kernel = name

    def clock(self) -> float:
        """The virtual clock: seconds of simulated device time so far."""
        return self.elapsed

    def true_model(self) -> CostModel:
        """The :class:`~autodev._cost.model.CostModel` of this device's true curves (``gpu`` class)."""
        costs = self.costs
        if self._truth is None or self._truth[0] != id(costs):
            if costs is None:
                from .._cost.profile import embedded_default  # (loaded on first use: import time)

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
        work = WORK[family](arrays)
        dclass = dtype_class(max(arrays, key=lambda a: a.dtype.itemsize).dtype)
        self._charge(self.true_model().compute("gpu", family, dclass, work))

    def _tick(self, name: str = "", args: tuple[Any, ...] = ()) -> None:
        if name:
            if tracing() is not None:  # (a ufunc there is an operation: it ticks not)
                raise NotImplementedError(f"`{name}` in a fused function: the simulated "
                                          "GPU fuses its ufuncs and astype only")
            self._charge_call(name, args)
        self.calls += 1
        fault = self._faults.pop(self.calls, None)
        scheduled = fault is not None
        persistent = self._persistent
        if fault is None and persistent is not None and self.calls >= persistent[0]:
            fault = persistent[1]
        if fault in ("oom", "unimplemented") and _makes_view(name, args):
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
        if array.dtype.char not in DEVICE_DTYPES:  # cupy.asarray's own check
            raise ValueError(f"Unsupported dtype {array.dtype}")
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

    def owner_to_host(self, native: Any) -> tuple[np.ndarray, int] | None:
        owner = self.owner(native)  # the NumPy array behind the wall
        if type(owner) is not np.ndarray or not (owner.flags.c_contiguous
                                                  or owner.flags.f_contiguous):
            return None
        return self.to_host(SimArray(owner)), int(owner.__array_interface__["data"][0])

    def span_to_host(self, natives: list[Any]) -> tuple[np.ndarray, int] | None:
        span = byte_span(natives, [self.address(native) for native in natives])
        if span is None:
            return None
        low, high = span  # bytes the arrays read, all of them live memory
        raw = (ctypes.c_char * (high - low)).from_address(low)
        host = np.frombuffer(memoryview(raw), np.uint8).copy()
        self.d2h += 1
        self._charge(self.true_model().d2h(host.nbytes))
        return host, low

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
