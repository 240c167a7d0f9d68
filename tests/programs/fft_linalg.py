"""FFT peak finding and dense linear algebra."""
import numpy as np

t = np.arange(1024) / 1024.0
signal = np.sin(2 * np.pi * 50 * t) + 0.5 * np.sin(2 * np.pi * 120 * t)
spectrum = np.fft.rfft(signal)
power = np.abs(spectrum) ** 2
peaks = np.argsort(power)[-2:]
print("peaks", np.sort(peaks), spectrum.dtype)
f32 = signal.astype(np.float32)
spec32 = np.fft.fft(f32)
print(spec32.dtype, np.round(np.abs(spec32[48:52]), 2))
img = np.outer(np.hanning(64), np.hanning(64))
F = np.fft.fft2(img)
back = np.fft.ifft2(F).real
print("fft2 roundtrip", np.allclose(back, img), np.round(np.abs(F[0, :3]), 4))
print(np.fft.fftshift(np.fft.fftfreq(8, d=0.5)))

rng = np.random.default_rng(7)
A = rng.standard_normal((120, 120)) + 120 * np.eye(120)
b = rng.standard_normal(120)
x = np.linalg.solve(A, b)
print("solve residual small:", np.linalg.norm(A @ x - b) < 1e-10)
print("det sign", np.sign(np.linalg.det(A[:5, :5])), np.linalg.slogdet(A)[0])
S = A @ A.T
w, V = np.linalg.eigh(S)
print("eig min/max", round(float(w[0]), 6), round(float(w[-1]), 6))
L = np.linalg.cholesky(S)
print("cholesky ok", np.allclose(L @ L.T, S))
sv = np.linalg.svd(rng.standard_normal((30, 8)), compute_uv=False)
print("singular values", np.round(sv, 8))
coef, res, rank, sing = np.linalg.lstsq(rng.standard_normal((50, 3)), np.ones(50), rcond=None)
print("lstsq rank", rank, np.round(coef, 8))
Ainv = np.linalg.inv(A[:4, :4])
print(np.round(Ainv @ A[:4, :4], 8))
print("norms", round(float(np.linalg.norm(A)), 6), round(float(np.linalg.norm(b, 1)), 6))
q, r = np.linalg.qr(rng.standard_normal((6, 4)))
print("qr", q.shape, r.shape, np.allclose(np.triu(r), r))
