"""The array-API face's ``fft`` extension, bound to autodev.

array-api-compat's generic ``common._fft`` bound to ``autodev`` (single precision
stays single, as the standard requires and ``numpy.fft`` does not); the frequency
helpers take autodev's devices.
"""

from __future__ import annotations

from array_api_compat.common import _fft
from numpy.typing import DTypeLike

import autodev as _ad

from .._array import ndarray
from .._typing import DeviceLike
from ._aliases import _generic
from ._wrap import face_functions

fft = _generic(_fft.fft)
ifft = _generic(_fft.ifft)
fftn = _generic(_fft.fftn)
ifftn = _generic(_fft.ifftn)
rfft = _generic(_fft.rfft)
irfft = _generic(_fft.irfft)
rfftn = _generic(_fft.rfftn)
irfftn = _generic(_fft.irfftn)
hfft = _generic(_fft.hfft)
ihfft = _generic(_fft.ihfft)
fftshift = _generic(_fft.fftshift)
ifftshift = _generic(_fft.ifftshift)


def fftfreq(n: int, /, *, d: float = 1.0,
            dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
    """Sample frequencies of a length-``n`` DFT, on ``device`` (the host by default)."""
    return _placed(_ad.fft.fftfreq(n, d=d), dtype, device)


def rfftfreq(n: int, /, *, d: float = 1.0,
             dtype: DTypeLike | None = None, device: DeviceLike | None = None) -> ndarray:
    """Sample frequencies of a length-``n`` real DFT, on ``device`` (the host by default)."""
    return _placed(_ad.fft.rfftfreq(n, d=d), dtype, device)


def _placed(result: ndarray, dtype: DTypeLike | None, device: DeviceLike | None) -> ndarray:
    if dtype is not None:
        result = result.astype(dtype, copy=False)
    return result if device is None else result.to_device(device)


__all__ = sorted("""fft ifft fftn ifftn rfft irfft rfftn irfftn hfft ihfft fftfreq rfftfreq
    fftshift ifftshift""".split())

face_functions(globals(), __all__)  # every function returns the face's arrays


def __dir__() -> list[str]:
    return __all__

