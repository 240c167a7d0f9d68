"""A NumPy subclass: view casting, __array_finalize__, an overridden __setitem__."""
import numpy as np

class Tracked(np.ndarray):
    def __array_finalize__(self, obj):
        self.writes = getattr(obj, "writes", 0)

    def __setitem__(self, key, value):
        self.writes += 1
        super().__setitem__(key, value)

a = np.zeros(5).view(Tracked)
a[1] = 3
print(type(a).__name__, a.writes, repr(a))
b = a[1:]
b[0] = 7
print(type(b).__name__, b.writes, a.writes, a)
c = a + 1
print(type(c).__name__, repr(c), type(np.sin(a)).__name__, type(a.reshape(5, 1)).__name__)
print(type(a.copy()).__name__, type(a.astype(int)).__name__, float(a.sum()), np.sum(a))
print(isinstance(a, np.ndarray), a.view(np.ndarray).__class__.__name__, np.concatenate([a, a]).shape)
a *= 2
print(type(a).__name__, a, a.writes)

class Unit(np.ndarray):
    def __array_finalize__(self, obj):
        self.unit = getattr(obj, "unit", "m")

d = (np.arange(6.0).reshape(2, 3) * 1.5).view(Unit)
d.unit = "km"
row = d[1]
print(type(row).__name__, row.unit, repr(row), (d.T @ d).unit, (d * 2).sum(axis=0).unit)
