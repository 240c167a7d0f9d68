"""Seeded random streams and the errors NumPy programs catch."""
import numpy as np

rng = np.random.default_rng(2024)
print(rng.standard_normal(4))
print(rng.integers(0, 100, size=6), rng.random(3, dtype=np.float32))
print(rng.choice(10, 3, replace=False), rng.permutation(5))
np.random.seed(0)
print(np.random.rand(2, 3))
print(np.random.randn(3), np.random.randint(5, size=4))
deck = np.arange(10)
np.random.shuffle(deck)
print(deck)

a = np.arange(12.0).reshape(3, 4)
cases = {
    "index": lambda: a[3, 0],
    "index array": lambda: a[np.array([0, 5])],
    "set index array": lambda: a.__setitem__(np.array([4]), 0.0),
    "broadcast": lambda: a + np.ones(3),
    "reshape": lambda: a.reshape(5, 2),
    "axis": lambda: a.sum(axis=3),
    "singular solve": lambda: np.linalg.solve(np.ones((3, 3)), np.ones(3)),
    "singular inv": lambda: np.linalg.inv(np.zeros((2, 2))),
    "cholesky": lambda: np.linalg.cholesky(-np.eye(2)),
    "matmul": lambda: a @ a,
    "cast": lambda: np.arange(3).__iadd__(0.5),
    "truth": lambda: bool(a),
}
for name, case in cases.items():
    try:
        case()
        print(name, "no error")
    except (IndexError, ValueError, TypeError, np.linalg.LinAlgError) as err:
        print(name, type(err).__name__, isinstance(err, ValueError))
print(a)  # nothing was lost
total = a.sum()
print(total, type(float(total)).__name__, f"{total:08.2f}", total / 4, [1, 2, 3][int(a[0, 1])])
