"""In-place updates through views, fancy indices, masks and ufunc.at."""
import numpy as np

a = np.arange(60, dtype=np.float64).reshape(6, 10)
a[:, ::2] *= -1.0
a[a < -40] = 0.0
a[[0, 5], [1, 2]] += 100.0
np.add.at(a, (np.array([1, 1, 2]), np.array([3, 3, 4])), 1.5)
col = a[:, 4]
col -= 2.0
a.T[0] = 7.0
flat = a.ravel()
flat[-3:] = 3.0
a.sort(axis=1)
b = a.astype(np.float32)
b.fill(0.5) if b.sum() < 0 else None
c = a.copy()
c[1:3, 1:3] = c[2:4, 2:4] * 2
np.copyto(c[0], 1.0)
w = c.flatten()
w.put([0, 1], [9.0, 8.0])
print(a)
print(b.dtype, b[2])
print(c.sum(), w[:4])
