"""What NumPy's own test suite asks of a drop-in, beyond values: functions held by
classes, ``a.flat``, subclasses, the ``ndarray`` constructor, signatures and the
buffer protocol, each compared with NumPy on every device."""

from __future__ import annotations

import pickle

import numpy
import pytest

import autodev
from diffcheck import assert_same, differential, error_parity, put, sample


# ---------------------------------------------------------------------- functions on classes

@pytest.mark.parametrize("name", ["array", "asarray", "zeros", "empty", "arange", "add",
                                  "sum", "concatenate", "ones"])
def test_functions_held_by_a_class_bind_as_numpys(device, name):
    # class C: array = np.array -> self.array(x) is np.array(x); NumPy's builtins and
    # ufuncs never become methods, its Python-level functions do
    def holder(xp):
        return type("Holder", (), {"f": getattr(xp, name)})()

    binds = not callable(getattr(holder(numpy), "f")) or \
        getattr(holder(numpy), "f") is not getattr(numpy, name)
    got = getattr(holder(autodev), "f")
    assert (got is not getattr(autodev, name)) == binds
    if not binds:
        assert_same(got(3) if name not in ("add", "concatenate") else got(2, 3),
                    getattr(numpy, name)(3) if name != "add" else numpy.add(2, 3))


def test_builtin_functions_keep_name_pickle_and_signature():
    assert autodev.array.__name__ == "array"
    assert pickle.loads(pickle.dumps(autodev.zeros)) is autodev.zeros
    assert pickle.loads(pickle.dumps(autodev.array)) is autodev.array
    differential(lambda xp: type("C", (), {"array": xp.array})().array([1, 2], dtype=float),
                 device=autodev.Device("cpu"))
