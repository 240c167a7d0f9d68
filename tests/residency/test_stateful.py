"""A hypothesis state machine interleaving views, writes, moves and reads.

Every autodev array is paired with a plain NumPy model built by the same steps
(views of views share memory in both worlds). After every step each pair must
agree, both read back to the host and read on the simulated GPU (through any
mirror): never a stale read, never a lost write.
"""

from __future__ import annotations

from typing import Any

import numpy
import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import (
    Bundle, RuleBasedStateMachine, initialize, invariant, multiple, precondition, rule,
    run_state_machine_as_test,
)

import autodev
from autodev.testing import simulated_gpu, to_numpy

SIM = autodev.Device("sim", 0)
MAX_PAIRS = 10


class Pair:
    """An autodev array and its NumPy model."""

    def __init__(self, ad: Any, model: numpy.ndarray) -> None:
        self.ad = ad
        self.model = model


def _slices(n: int) -> st.SearchStrategy[slice]:
    return st.builds(slice, st.none() | st.integers(0, max(n - 1, 0)),
                     st.none() | st.integers(0, n), st.sampled_from([None, 1, 2, -1]))


class Residency(RuleBasedStateMachine):
    arrays = Bundle("arrays")

    def __init__(self) -> None:
        super().__init__()
        self.pairs: list[Pair] = []

    def _add(self, ad: Any, model: numpy.ndarray) -> Pair:
        pair = Pair(ad, model)
        self.pairs.append(pair)
        return pair

    @initialize(target=arrays, on_sim=st.booleans())
    def root(self, on_sim: bool) -> Pair:
        model = numpy.arange(48, dtype=numpy.float64).reshape(6, 8)
        ad = autodev.array(model, device=SIM if on_sim else "cpu")
        return self._add(ad, model)

    # ------------------------------------------------------------------ views
    @precondition(lambda self: len(self.pairs) < MAX_PAIRS)
    @rule(target=arrays, pair=arrays, data=st.data())
    def slice_view(self, pair: Pair, data: Any) -> Pair:
        if pair.model.ndim == 0:
            return self._add(pair.ad[...], pair.model[...])
        key = tuple(data.draw(_slices(n)) for n in pair.model.shape[:2])
        return self._add(pair.ad[key], pair.model[key])

    @precondition(lambda self: len(self.pairs) < MAX_PAIRS)
    @rule(target=arrays, pair=arrays)
    def transpose_view(self, pair: Pair) -> Pair:
        return self._add(pair.ad.T, pair.model.T)

    @precondition(lambda self: len(self.pairs) < MAX_PAIRS)
    @rule(target=arrays, pair=arrays)
    def flat_reshape(self, pair: Pair) -> Pair:
        return self._add(pair.ad.reshape(-1), pair.model.reshape(-1))

    # ------------------------------------------------------------------ writes
    @rule(pair=arrays, data=st.data(), value=st.integers(-50, 50))
    def slice_write(self, pair: Pair, data: Any, value: int) -> None:
        if pair.model.ndim == 0 or pair.model.size == 0:
            key: Any = ...
        else:
            key = data.draw(_slices(pair.model.shape[0]))
        pair.ad[key] = float(value)
        pair.model[key] = float(value)

    @rule(pair=arrays, data=st.data(), value=st.integers(-50, 50))
    def host_pointer_write(self, pair: Pair, data: Any, value: int) -> None:
        """NumPy writes through the host memory it is handed (a device array moves to the
        host for it, with every view sharing its memory)."""
        host = numpy.asarray(pair.ad)
        assert host.flags.writeable and pair.ad.location == "cpu"
        key = ... if pair.model.ndim == 0 or pair.model.size == 0 else \
            data.draw(_slices(pair.model.shape[0]))
        host[key] = float(value)
        pair.model[key] = float(value)

    @rule(pair=arrays, other=arrays)
    def array_write(self, pair: Pair, other: Pair) -> None:
        """Write another array (maybe on the other device, maybe overlapping) into one row."""
        if pair.model.ndim == 0 or pair.model.size == 0 or other.model.size == 0:
            return
        row_shape = pair.model[0].shape
        src = other.model.reshape(-1)
        if src.size < max(1, int(numpy.prod(row_shape))):
            return
        n = int(numpy.prod(row_shape))
        pair.ad[0] = other.ad.reshape(-1)[:n].reshape(row_shape)
        pair.model[0] = src[:n].reshape(row_shape)

    @rule(pair=arrays, op=st.sampled_from(["+=", "*=", "-="]), value=st.integers(-3, 3))
    def inplace(self, pair: Pair, op: str, value: int) -> None:
        for target in (pair.ad, pair.model):
            if op == "+=":
                target += value
            elif op == "*=":
                target *= value
            else:
                target -= value

    @rule(pair=arrays, threshold=st.integers(0, 48), value=st.integers(-9, 9))
    def masked_assign(self, pair: Pair, threshold: int, value: int) -> None:
        pair.ad[pair.ad > threshold] = float(value)
        pair.model[pair.model > threshold] = float(value)

    @rule(pair=arrays, gpu=st.booleans())
    def ufunc_out(self, pair: Pair, gpu: bool) -> None:
        with autodev.policy("gpu" if gpu else "auto"):
            autodev.add(pair.ad, 1.0, out=pair.ad)
        numpy.add(pair.model, 1.0, out=pair.model)

    # ------------------------------------------------------------------ moves
    @precondition(lambda self: len(self.pairs) < MAX_PAIRS)
    @rule(target=arrays, pair=arrays, where=st.sampled_from(["sim:0", "cpu", "auto"]))
    def move(self, pair: Pair, where: str) -> Pair:
        """Pin to a device (a copy when it lives elsewhere), or unpin (shares memory)."""
        moved = pair.ad.to_device(where)
        same = moved._native is pair.ad._native
        # a move keeps the memory layout (order "K"), as cupy.asarray does; the layout
        # decides whether a later reshape is a view, so the model must keep it too
        return self._add(moved, pair.model if same else pair.model.copy(order="K"))

    @rule(pair=arrays)
    def credit_move(self, pair: Pair) -> None:
        """What reuse credit does when it pays: mirror the array on the other device,
        shared through its storage with later views of the same geometry."""
        from autodev._residency import reuse as _reuse
        from autodev._backends import STATE

        target = autodev.Device("cpu") if pair.ad.location == SIM else SIM
        _reuse._mirror(pair.ad, target, STATE.sim, "stateful test", False)
        view = pair.ad.T  # a new wrapper of the same geometry reads the shared mirror
        with autodev.policy("gpu" if target == SIM else "cpu"):
            numpy.testing.assert_array_equal(to_numpy(view.T + 0.0), pair.model)

    @precondition(lambda self: len(self.pairs) < MAX_PAIRS)
    @rule(target=arrays, pair=arrays, other=arrays)
    def compute_on_gpu(self, pair: Pair, other: Pair) -> Pair:
        """A computation under policy gpu: mirrors host inputs on the device, unless
        they are pinned (then it runs where they are pinned; two pins raise)."""
        both = pair.model.shape == other.model.shape
        pins = {p for p in (pair.ad._pin, other.ad._pin if both else None) if p is not None}
        with autodev.policy("gpu"):
            if len(pins) == 2:
                with pytest.raises(ValueError, match="pinned to different devices"):
                    pair.ad * 2 + other.ad
                return multiple()
            if both:
                result = pair.ad * 2 + other.ad
                model = pair.model * 2 + other.model
            else:
                result = autodev.sqrt(abs(pair.ad))
                model = numpy.sqrt(abs(pair.model))
        pin = pins.pop() if pins else None
        assert result.location == (SIM if pin is None else pin)
        assert result.device == ("auto" if pin is None else pin)
        return self._add(result, model)

    # ------------------------------------------------------------------ reads
    @rule(pair=arrays)
    def read_scalar(self, pair: Pair) -> None:
        with autodev.policy("gpu"):
            total = pair.ad.sum()
        assert float(total) == float(pair.model.sum())

    @invariant()
    def every_pair_agrees(self) -> None:
        for pair in self.pairs:
            assert pair.ad.shape == pair.model.shape
            numpy.testing.assert_array_equal(to_numpy(pair.ad), pair.model)
            with autodev.policy("gpu"):
                on_gpu = pair.ad + 0.0  # reads through the mirror where there is one
            numpy.testing.assert_array_equal(to_numpy(on_gpu), pair.model)


def test_residency_state_machine():
    with simulated_gpu():
        run_state_machine_as_test(
            Residency,
            settings=settings(max_examples=40, stateful_step_count=30, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow]),
        )
