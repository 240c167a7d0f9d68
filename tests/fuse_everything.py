"""A pytest plugin: every elementwise call of two elements or more that autodev can defer
is deferred, and every chain runs in blocks of three elements over three threads.

``.ci/fuse-everything`` runs the differential, stateful and adversarial suites with it
(``-p fuse_everything``, with ``tests/`` on ``PYTHONPATH``), so that the deferral and the
blocked evaluation of :mod:`autodev._fusion` meet every case those suites hold, not only
the large arrays where they apply by default.
"""

from __future__ import annotations

from typing import Iterator

import pytest

from split_everything import split_small_calls


def fuse_small_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Defer every call of two elements or more, in blocks of three, until resumed. The
    differential helper's host inputs become fresh unpinned copies (an array pinned to
    the CPU, or wrapping the caller's NumPy array, is never a chain's input), so that its
    cases make chains."""
    import autodev
    import diffcheck
    from autodev import _blocked as B, _fusion as F

    put = diffcheck.put

    def put_unpinned(x: object, device: object) -> object:
        if str(device) == "cpu" and type(x).__module__ == "numpy" and hasattr(x, "shape"):
            return autodev.array(x)
        return put(x, device)

    monkeypatch.setattr(diffcheck, "put", put_unpinned)
    monkeypatch.setattr(B, "BLOCK", 3)
    monkeypatch.setattr(B, "THREADED_BLOCK", 3)
    F.set_floor(2)
    yield
    F.set_floor(None)
    monkeypatch.undo()


@pytest.fixture(autouse=True)
def _fuse_everything(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    split = split_small_calls(monkeypatch)
    next(split)
    yield from fuse_small_calls(monkeypatch)
    next(split, None)
