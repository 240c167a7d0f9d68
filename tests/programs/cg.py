"""Conjugate gradients on a symmetric positive definite system, updating in place."""
import numpy as np

rng = np.random.default_rng(11)
n = 32
M = rng.standard_normal((n, n))
A = M @ M.T + n * np.eye(n)
b = rng.standard_normal(n)
x = np.zeros(n)
r = b - A @ x
p = r.copy()
rs = r @ r
for it in range(12):
    Ap = A @ p
    alpha = rs / (p @ Ap)
    x += alpha * p
    r -= alpha * Ap
    rs_new = r @ r
    p = r + (rs_new / rs) * p
    rs = rs_new
print(np.round(x[:4], 8), np.linalg.norm(A @ x - b) < 1e-4)
