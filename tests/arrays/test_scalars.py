"""Scalar results are NumPy scalars on every device: immutable, ``float``-like, JSON-able.

NumPy returns ``numpy.float64`` (a ``float`` subclass) from ``a.sum()``; a 0-d device
array in its place would alias under ``s += 1`` and fail ``isinstance(s, float)``.
"""

from __future__ import annotations

import json

import numpy
import pytest

import autodev
from diffcheck import put, sample

SCALAR_CALLS = {
    "sum": lambda xp, a: a.sum(),
    "mean": lambda xp, a: xp.mean(a),
    "norm": lambda xp, a: xp.linalg.norm(a),
    "dot": lambda xp, a: xp.dot(a[0], a[1]),
    "element": lambda xp, a: a[1, 2],
    "ufunc.reduce": lambda xp, a: xp.add.reduce(a, axis=None),
    "max": lambda xp, a: a.max(),
    "argmax": lambda xp, a: xp.argmax(a),
}


@pytest.mark.parametrize("name", sorted(SCALAR_CALLS))
def test_scalar_results_are_numpy_scalars(device, name):
    a = sample((3, 4))
    expected = SCALAR_CALLS[name](numpy, a)
    got = SCALAR_CALLS[name](autodev, put(a, device))
    assert type(got) is type(expected)
    assert got == expected
    assert isinstance(got, (float, int, numpy.integer)) == isinstance(
        expected, (float, int, numpy.integer))
    assert json.dumps(float(got)) == json.dumps(float(expected))


def test_in_place_operators_on_scalars_do_not_alias(device):
    a = put(sample((3, 4)), device)
    s = a.sum()
    t = s
    s += 1
    assert t == s - 1
    history = []
    loss = (a * a).mean()
    history.append(loss)
    loss *= 10
    assert history[0] * 10 == loss
    assert isinstance(history[0], float)
    assert json.dumps({"loss": history[0]})  # float64 is a float: json takes it


def test_linspace_step_is_a_scalar(device):
    _, step = autodev.linspace(0, 1, 5, retstep=True)
    assert type(step) is float or type(step) is numpy.float64
    assert step == 0.25
