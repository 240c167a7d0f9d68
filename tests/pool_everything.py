"""A pytest plugin: every host call autodev dispatches runs with its buffers from the host
pool, and every block of 16 bytes or more is pooled (autodev._host_buffers), whatever the
default threshold says.

``.ci/pool-everything`` runs the differential, stateful and adversarial suites with it
(``-p pool_everything``, with ``tests/`` on ``PYTHONPATH``), so that reused blocks meet
every case those suites hold, not only the large arrays where the pool applies by default.
"""

from __future__ import annotations

from typing import Iterator

import pytest


def pool_small_calls() -> Iterator[None]:
    """Pool every block of 16 bytes or more, until the generator is resumed (then the
    threshold in force before, and the pool emptied)."""
    from autodev import _host_buffers as H

    if H.POOL is None:
        pytest.skip(f"no host buffer pool here: {H.STATUS}")
    before = H.THRESHOLD
    H.configure(threshold=16)
    try:
        yield
    finally:
        H.configure(threshold=before)
        H.release()


@pytest.fixture(autouse=True)
def _pool_everything() -> Iterator[None]:
    yield from pool_small_calls()
