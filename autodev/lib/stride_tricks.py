"""``autodev.lib.stride_tricks``: NumPy's strided views, made where the array lives.

``as_strided`` and ``sliding_window_view`` return autodev arrays viewing the
input's own memory, on its device (CuPy has both functions), tied to its storage:
a write through the view is a write to the input (its mirrors are dropped), as in
NumPy. ``broadcast_to``/``broadcast_arrays``/``broadcast_shapes`` are autodev's.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .._residency import storage as R
from .._array import ndarray
from .._backends import backend_for
from .._dispatch import new
from .._residency.memory import refuse_view, retrying

__all__ = ["as_strided", "broadcast_arrays", "broadcast_shapes", "broadcast_to",
           "sliding_window_view"]


def as_strided(x: Any, shape: Sequence[int] | None = None, strides: Sequence[int] | None = None,
               subok: bool = False, writeable: bool = True) -> Any:
    """A view of ``x`` with the given ``shape`` and ``strides`` (bytes), where ``x`` lives.

    As NumPy's, it does no bounds checking: strides reaching outside ``x``'s memory
    read or write memory that is not ``x``'s.
    """
    return _view_of(x, "as_strided", shape=shape, strides=strides, writeable=writeable)


def sliding_window_view(x: Any, window_shape: int | Sequence[int],
                        axis: int | Sequence[int] | None = None, *, subok: bool = False,
                        writeable: bool = False) -> Any:
    """Sliding windows of ``window_shape`` over ``x`` (a read-only view unless asked)."""
    return _view_of(x, "sliding_window_view", window_shape, axis=axis, writeable=writeable)


def _view_of(x: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    """Run ``lib.stride_tricks.<name>`` on ``x``'s data, on its device; tie the view to it."""
    if not isinstance(x, ndarray):
        return getattr(np.lib.stride_tricks, name)(x, *args, **kwargs)
    device = x._device
    backend = backend_for(device)
    func = backend.resolve(f"lib.stride_tricks.{name}")
    if func is None:
        raise NotImplementedError(
            f"lib.stride_tricks.{name} is not available on {device}. "
            f"Move the array first: x.to_device('cpu')."
        )
    writeable = kwargs.get("writeable", name == "as_strided")
    if backend.is_gpu:
        kwargs.pop("writeable", None)  # not a CuPy keyword: its views are always writeable
    # a view allocates nothing on a device; should the device still run out of memory,
    # a view of a host copy would lose writes, so it is refused (autodev._residency.memory)
    view = retrying(name, device, lambda: new(func(x._native, *args, **kwargs), device,
                                              R.storage_of(x), False, x._pin),
                    lambda: refuse_view(name, device))
    if writeable:
        R.inherit(view, x)
    else:
        R.make_read_only(view)  # NumPy's writeable=False, kept on the device too
    return view


def __getattr__(name: str) -> Any:
    if name in ("broadcast_arrays", "broadcast_shapes", "broadcast_to"):
        import autodev

        return getattr(autodev, name)
    raise AttributeError(f"module 'autodev.lib.stride_tricks' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
