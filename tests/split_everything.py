"""A pytest plugin: every host call of 16 elements or more that autodev can split is split
over three threads, whatever this machine's cores and profile say.

``.ci/split-everything`` runs the differential, stateful and adversarial suites with it
(``-p split_everything``, with ``tests/`` on ``PYTHONPATH``), so that the block splitting of
:mod:`autodev._parallel` meets every case those suites hold, not only the large arrays
where it applies by default.
"""

from __future__ import annotations

from typing import Iterator

import pytest


def split_small_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Split every call of 16 elements or more over 3 threads (whatever this machine's
    cores and profile say), until the generator is resumed."""
    from autodev import _parallel, _threads as P

    monkeypatch.setattr(P, "MIN_BLOCK", 4)
    monkeypatch.setattr(_parallel, "_INNER_RUN_BYTES", 0)  # (short runs split too)
    monkeypatch.setattr(P.POOL, "default", 3)
    monkeypatch.setattr(P.POOL, "limit", None)
    monkeypatch.setattr(P, "_CROSSOVER", [{f: 16.0 for f in P.FAMILIES}])
    P._changed()
    yield
    monkeypatch.undo()
    P._changed()


@pytest.fixture(autouse=True)
def _split_everything(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    yield from split_small_calls(monkeypatch)
