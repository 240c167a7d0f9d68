"""``from_dlpack`` for both faces: any DLPack producer in, an autodev array out.

NumPy's own rejects autodev's devices (``device=x.device``) and cannot take a
CUDA producer; this one takes autodev's arrays as they are, host producers
through NumPy, CUDA producers through the CUDA backend when one is usable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._array import ndarray

_DLPACK_CPU = 1  # DLDeviceType.kDLCPU


def from_dlpack(x: Any, /, *, device: Any = None, copy: bool | None = None) -> ndarray:
    """An autodev array sharing (or, if it must or ``copy=True``, copying) ``x``'s data.

    Parameters
    ----------
    x : object
        Anything with ``__dlpack__`` and ``__dlpack_device__``.
    device : Device or str, optional
        Where the result must live; default: where the producer's data is.
    copy : bool, optional
        True: always copy. False: never (ValueError if it would have to).
        None: copy only if needed.
    """
    from . import asarray
    from ._backends import STATE, active_gpu

    if isinstance(x, ndarray):
        return asarray(x, device=device, copy=copy)
    kind = x.__dlpack_device__()[0]
    gpu = active_gpu() if kind != _DLPACK_CPU else None
    if gpu is not None and gpu is not STATE.sim:  # a CUDA producer, CUDA usable here
        array = asarray(gpu.xp.from_dlpack(x, copy=copy))
    elif kind == _DLPACK_CPU:
        array = asarray(np.from_dlpack(x, copy=copy))
    else:  # device data and no usable device here: the producer copies it out
        array = asarray(np.from_dlpack(x, device="cpu", copy=copy))
    if device is None:
        return array
    if copy is False and device != "auto" and array.location != device:
        raise ValueError(f"from_dlpack(copy=False) cannot move data from {array.location} to "
                         f"{device}. Use copy=None to allow the copy.")
    return array.to_device(device)
