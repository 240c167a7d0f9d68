"""Testing helpers: the simulated GPU, and ``numpy.testing``'s names reading autodev arrays."""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any, Iterator


from . import _dispatch
from ._backends import enable_sim, sim_backend, use_sim

if TYPE_CHECKING:  # loaded on first use: ``import autodev`` does not load the simulator
    from ._backends._sim import SimBackend

#: The simulator's names this module hands out (from autodev._backends._sim, on first use).
_SIM_NAMES = frozenset({"SimArray", "SimBackend", "SimDeviceError", "SimOutOfMemoryError"})

__all__ = [
    "SimArray", "SimBackend", "SimDeviceError", "SimOutOfMemoryError", "gpu_costs",
    "simulated_gpu", "to_numpy",
]


@contextlib.contextmanager
def simulated_gpu(costs: dict[str, Any] | None = None) -> Iterator[SimBackend]:
    """Enable the simulated GPU ``sim:0`` for the block and yield its backend.

    Parameters
    ----------
    costs : dict, optional
        The device's cost curves, in the profile's ``devices.gpu`` form
        (``{"compute": {...}, "transfer": {...}}``); default: the embedded GPU curves.

    Examples
    --------
    >>> import autodev as np
    >>> from autodev.testing import simulated_gpu
    >>> with simulated_gpu() as sim, np.policy("gpu"):
    ...     x = np.ones(3) * 2
    >>> str(x.location)
    'sim:0'
    """
    previous = sim_backend()
    backend = enable_sim(costs)
    _dispatch.reset_cost_model()
    try:
        yield backend
    finally:
        use_sim(previous)
        _dispatch.reset_cost_model()


def gpu_costs(latency: float | None = None,
              transfer: tuple[float, float] | None = None) -> dict[str, Any]:
    """A copy of the embedded GPU curves, :func:`simulated_gpu`'s default, in the
    profile's ``devices.gpu`` form.

    Parameters
    ----------
    latency : float, optional
        Seconds to set as every compute and transfer curve's latency (its fixed cost per
        call); ``simulated_gpu(gpu_costs(latency=1e-9))`` is a GPU that wins every call.
    transfer : (float, float), optional
        ``(latency, bandwidth)``, in seconds and bytes per second, of both transfer
        directions (set after ``latency``). ``gpu_costs(1e-9, transfer=(1e-6, 1e9))``
        is a GPU where small arrays that calls keep reusing pay for their move (reuse
        credit moves them), while a single use stays on the host.

    Examples
    --------
    >>> import autodev as np
    >>> from autodev.testing import gpu_costs, simulated_gpu
    >>> with simulated_gpu(gpu_costs(latency=1e-9)):
    ...     x = np.ones(3) * 2
    >>> str(x.location)
    'sim:0'
    """
    import copy

    from ._cost.profile import embedded_default  # (loaded on first use: import time)

    costs: dict[str, Any] = copy.deepcopy(embedded_default()["devices"]["gpu"])
    if latency is not None:
        for family in costs["compute"].values():
            for curve in family.values():
                curve["latency"] = float(latency)
        for curve in costs["transfer"].values():
            curve["latency"] = float(latency)
    if transfer is not None:
        for curve in costs["transfer"].values():
            curve["latency"], curve["bandwidth"] = float(transfer[0]), float(transfer[1])
    return costs


def to_numpy(x: Any) -> Any:
    """A NumPy copy of an autodev array (other values pass through)."""
    from ._array import ndarray

    if type(x) is ndarray:
        return x.get() if not x._scalar else x.get()[()]
    if isinstance(x, (tuple, list)):
        return type(x)(to_numpy(v) for v in x)
    return x


#: ``numpy.testing``'s comparisons: they branch on ``isinstance(x, numpy.ndarray)``, so
#: they are handed NumPy copies of autodev arrays (others, such as ``assert_raises``, take
#: the caller's arguments for the code under test, and get them untouched).
_COMPARISONS = frozenset({
    "assert_allclose", "assert_almost_equal", "assert_approx_equal", "assert_array_almost_equal",
    "assert_array_almost_equal_nulp", "assert_array_compare", "assert_array_equal",
    "assert_array_less", "assert_array_max_ulp", "assert_equal", "assert_string_equal",
    "print_assert_equal",
})


def _host_values(value: Any) -> Any:
    """``value`` with autodev arrays (in lists, tuples and dicts too) replaced by NumPy
    copies, and autodev's scalars by NumPy scalars."""
    from ._array import ndarray
    from ._dispatch import is_plain_array_like

    if isinstance(value, ndarray):
        host = value.get()
        return host[()] if value._scalar else host
    t = type(value)
    if t is list or t is tuple:
        return t(_host_values(v) for v in value)
    if t is dict:
        return {k: _host_values(v) for k, v in value.items()}
    if is_plain_array_like(t):  # an array-like whose __array__ gives an autodev array,
        array = value.__array__()  # which NumPy's comparisons would refuse
        if isinstance(array, ndarray):
            return _host_values(array)
    return value


def _comparing(name: str, check: Any) -> Any:
    """``numpy.testing.<name>`` reading autodev arrays as NumPy arrays, wherever they live."""
    @functools.wraps(check)
    def compare(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # pytest shows the caller's line, as for NumPy's own
        return check(*_host_values(args), **_host_values(kwargs))

    compare.__module__ = __name__
    return compare


def __getattr__(name: str) -> Any:
    """NumPy's ``numpy.testing`` names (``assert_equal``, ``assert_allclose``, ...), so that
    ``np.testing.assert_equal(...)`` works under ``import autodev as np``: the comparisons
    read autodev arrays on any device as NumPy arrays (a host copy), the rest are NumPy's
    own; and the simulator's classes, loaded on first use. Each is resolved once."""
    if name in _SIM_NAMES:
        from ._backends import _sim

        return getattr(_sim, name)
    import numpy.testing

    if name.startswith("_") or not hasattr(numpy.testing, name):
        raise AttributeError(f"module 'autodev.testing' has no attribute {name!r}")
    value = getattr(numpy.testing, name)
    if name in _COMPARISONS:
        value = _comparing(name, value)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    import numpy.testing

    return sorted({*globals(), *__all__, *numpy.testing.__all__})
