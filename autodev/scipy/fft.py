"""``autodev.scipy.fft``: every ``scipy.fft`` name; the transforms dispatched.

SciPy's dtype rules hold on every device: single precision stays single
(``float32`` in, ``complex64`` out), unlike ``numpy.fft``. ``workers=`` is a CPU
thread count, ignored on the GPU. Declared CPU-only: DCT/DST types 1 and 4 and
``orthogonalize=`` (cupyx implements types 2 and 3 only), float16 and integer input
(cupyx promotes them differently), ``fht``/``ifht`` and the plan/worker helpers.
"""

from __future__ import annotations

from typing import Any, Callable

import scipy.fft as _sfft

from ._spec import (FLOATING, all_of, build_specs, dropping, dtypes_in, kwarg_in,
                    module_getattr, public_names)

#: Dispatched ``scipy.fft`` functions, by cost family.
FAMILIES: dict[str, str] = {
    "fft": (
        "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn "
        "hfft ihfft hfft2 ihfft2 hfftn ihfftn "
        "dct idct dst idst dctn idctn dstn idstn"
    ),
    "primary": "fftshift ifftshift",
}

_GPU_DTYPES = dtypes_in(FLOATING)
_RULES: dict[str, dict[str, Any]] = {}
for _family, _names in FAMILIES.items():
    for _name in _names.split():
        if _family == "fft":
            _RULES[_name] = {"gpu_impl": dropping("workers")("scipy.fft." + _name),
                             "gpu_ok": _GPU_DTYPES}
for _name in "dct idct dst idst dctn idctn dstn idstn".split():
    # cupyx has no orthogonalize=: the rule keeps it None, the factory drops it
    _RULES[_name] = {"gpu_impl": dropping("workers", "orthogonalize")("scipy.fft." + _name),
                     "gpu_ok": all_of(_GPU_DTYPES, kwarg_in("type", (2, 3)),
                                      kwarg_in("orthogonalize", (None,)))}

SPECS = build_specs("scipy.fft.", FAMILIES, _RULES)

__all__ = public_names(_sfft)
__getattr__ = module_getattr(_sfft, "autodev.scipy.fft", SPECS, globals())

# -- the scipy.fft backend protocol (uarray): ``scipy.fft.set_backend(autodev.scipy.fft)``,
# ``set_global_backend`` and ``register_backend`` (cupyx.scipy.fft's idioms)
#: The uarray domain of ``scipy.fft``'s multimethods (as ``cupyx.scipy.fft`` declares).
__ua_domain__ = "numpy.scipy.fft"


def __ua_function__(method: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Run ``scipy.fft``'s multimethod ``method`` as autodev's dispatched function.

    A name autodev does not have declines with ``NotImplemented``, so that uarray
    tries the next backend (SciPy's own). While it runs, ``scipy.fft`` calls go to
    SciPy's own backend only: autodev's host path calls ``scipy.fft`` itself, and
    after ``set_global_backend(autodev.scipy.fft)`` SciPy's backend is no longer
    the global one that uarray would fall back to.
    """
    try:
        function = __getattr__(method.__name__)
    except AttributeError:
        return NotImplemented
    with _sfft.set_backend("scipy", only=True):
        return function(*args, **kwargs)


def __dir__() -> list[str]:
    return __all__
