"""Masked assignment, broadcasting, reductions, sorting and printing."""
import numpy as np

rng = np.random.default_rng(1234)
data = rng.normal(10.0, 3.0, size=(300, 40))
col_mean = data.mean(axis=0)
col_std = data.std(axis=0)
z = (data - col_mean) / col_std          # broadcasting
print(z.shape, z.dtype, round(float(z.mean()), 12))
outliers = np.abs(z) > 2.5
print("outliers", outliers.sum(), outliers.any(axis=1).sum())
clean = data.copy()
clean[outliers] = np.nan
print("nanmean", np.nanmean(clean[:, :4], axis=0))
clean[np.isnan(clean)] = 0.0
print(clean[:2, :5])
counts = np.bincount((data[:, 0] // 3).astype(np.int64).clip(0, 10))
print(counts)
order = np.argsort(data[:, 1], kind="stable")[:5]
print(order, np.sort(data[:, 1])[-3:])
vals, inv = np.unique(np.round(data[:20, 2]).astype(int), return_inverse=True)
print(vals, inv)
grid = np.arange(12).reshape(3, 4)
grid[grid % 2 == 0] *= -1
grid[:, 1] = grid[:, 2] + 100
print(grid)
print(np.where(grid > 0, grid, 0).sum(axis=1))
outer = np.arange(1, 5)[:, None] * np.arange(1, 4)[None, :]
print(outer, outer.T @ outer)
w = np.linspace(0, 1, 7, dtype=np.float32)
print(w, w.dtype, (w * 2).dtype, (w + 1.5).sum())
print(float(data.max()), int(data.argmin()), data.min(axis=0)[:3])
cum = np.cumsum(np.ones((3, 3), dtype=np.int32), axis=1)
print(cum, cum.dtype, cum.prod())
big = rng.standard_normal((400, 400)).astype(np.float32)
s = np.sin(big) ** 2 + np.cos(big) ** 2
print(np.allclose(s, 1.0, atol=1e-6), s.dtype, s.shape)
print(f"{big.sum():.4f} {big.max():.6f} {(big @ big.T).trace():.3f}")
