"""Convolution by FFT: a signal and an image smoothed by a kernel, checked directly."""
import numpy as np

rng = np.random.default_rng(3)
signal = rng.standard_normal(100)
kernel = np.exp(-np.linspace(-2.0, 2.0, 9) ** 2)
kernel /= kernel.sum()
n = signal.size + kernel.size - 1
spectrum = np.fft.rfft(signal, 128) * np.fft.rfft(kernel, 128)
smooth = np.fft.irfft(spectrum, 128)[:n]
print(smooth.shape, np.round(smooth[:4], 8))
print("matches direct convolution", np.allclose(smooth, np.convolve(signal, kernel)))
image = rng.standard_normal((16, 16))
box = np.zeros((16, 16))
box[:3, :3] = 1.0 / 9.0
blurred = np.fft.irfft2(np.fft.rfft2(image) * np.fft.rfft2(box), s=image.shape)
print(np.round(blurred[0, :4], 8), round(float(blurred.sum()), 8))
