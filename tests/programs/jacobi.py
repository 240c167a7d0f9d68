"""Jacobi iteration for Laplace's equation on a square, updating slices in place."""
import numpy as np

n = 48
u = np.zeros((n, n))
u[0, :] = 1.0                      # hot top edge
u[:, 0] = np.linspace(1.0, 0.0, n)  # a ramp on the left
for it in range(200):
    old = u.copy()
    u[1:-1, 1:-1] = 0.25 * (old[:-2, 1:-1] + old[2:, 1:-1] + old[1:-1, :-2] + old[1:-1, 2:])
    if it % 50 == 0:
        change = np.abs(u - old).max()
        print(f"iteration {it}: max change {change:.6e}")
interior = u[1:-1, 1:-1]
interior *= 1.0                    # in-place through a view
print("centre", u[n // 2, n // 2])
print("mean", u.mean(), "std", round(float(u.std()), 10))
print(u[::12, ::12])
print(np.round(u[1:4, 1:4], 5).tolist())
row = u[5]
row[10:20] = -1.0                  # writes through a row view
print(u[5, 8:22])
print(int(np.argmax(u[10])), np.count_nonzero(u < 0))

# a tridiagonal solve by Jacobi on a 1-D problem, vectorised
m = 64
d = np.full(m, 4.0)
b = np.arange(m, dtype=np.float64) / m
x = np.zeros(m)
for _ in range(60):
    xn = b.copy()
    xn[1:] += x[:-1]
    xn[:-1] += x[1:]
    x = xn / d
print("x[:5]", x[:5])
print("residual", np.linalg.norm(4 * x - np.r_[0, x[:-1]] - np.r_[x[1:], 0] - b))
