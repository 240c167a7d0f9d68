"""A sparse matrix-vector product in COO form: gather, then scatter-add (ufunc.at, bincount)."""
import numpy as np

rng = np.random.default_rng(4)
n, nnz = 40, 200
rows = rng.integers(0, n, nnz)
cols = rng.integers(0, n, nnz)
vals = rng.standard_normal(nnz)
x = np.ones(n)
for _ in range(4):
    y = np.zeros(n)
    np.add.at(y, rows, vals * x[cols])
    x = y / np.linalg.norm(y)
z = np.bincount(rows, weights=vals * x[cols], minlength=n)
print(np.round(x[:4], 8), np.round(z[:4], 8))
