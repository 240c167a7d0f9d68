"""Code a user writes with autodev, checked by mypy (tests/package/test_typing.py runs it).

Not a pytest module (no ``test_`` prefix): it is never executed, only type checked, so
that the operators and methods declared in ``autodev.ndarray``'s class body stay
visible to type checkers. ``autodev.ones`` comes through the module ``__getattr__``
(typed ``Any``); the annotation on ``x`` is what puts the array class under check.
"""

from __future__ import annotations

import autodev

x: autodev.ndarray = autodev.ones(3)
y = x + x
z = x @ x
w = -x
b = x < 2
s = x.sum()
r = 2 * x - x / 3 + x**2 // 1 % 5
m = abs(x) & 1 | 2 ^ 3
e = x == x
ne = x != 1
t = x.T
shape: tuple[int, ...] = x.shape
n: int = x.ndim
cpu: autodev.Device = autodev.CPU
moved: autodev.ndarray = x.to_device(cpu)
x += 1
x *= 2
