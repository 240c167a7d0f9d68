"""Helpers of the fusion tests (tests/dispatch/test_fusion*.py, tests/arrays/test_small_ops.py):
small calls deferred, a pending array told apart, results compared bit for bit."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest

import autodev
from autodev import _blocked as B, _fusion as F


def defer_small_host_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Defer every elementwise call of 8 elements or more, in blocks of 5 elements, with
    no GPU usable (skip otherwise: these tests hold the host's chains), until resumed."""
    from autodev._backends import STATE

    autodev.ones(1) + 1  # (settles whether a GPU is usable)
    if STATE.gpu is not None:
        pytest.skip("these chains are the host's: no GPU usable")
    monkeypatch.setattr(B, "BLOCK", 5)
    monkeypatch.setattr(B, "THREADED_BLOCK", 5)
    F.set_floor(8)
    yield
    F.set_floor(None)


def pending(x: Any) -> bool:
    """Whether ``x`` is a pending (deferred, not yet evaluated) array."""
    return id(x) in F.PENDING


def same_bits(got: Any, want: np.ndarray, strides: bool = True) -> None:
    """``got`` is ``want`` bit for bit: dtype, shape, bytes and (``strides``) memory order."""
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()
    if strides:
        assert got.strides == want.strides or got.size <= 1
