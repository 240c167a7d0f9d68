"""Strided views by path: sliding windows, as_strided writes, numpy.lib and numpy.testing."""
import numpy as np

as_strided = np.lib.stride_tricks.as_strided
sliding_window_view = np.lib.stride_tricks.sliding_window_view

x = np.arange(12.0)
windows = sliding_window_view(x, 4)
print(type(windows).__name__, windows.shape, windows.flags.writeable)
print("moving mean", windows.mean(axis=-1))
image = np.arange(36.0).reshape(6, 6)
patches = sliding_window_view(image, (3, 3))[::3, ::3]
print("patch sums", patches.sum(axis=(-2, -1)))

y = np.zeros(10)
every_other = as_strided(y, shape=(5,), strides=(2 * y.itemsize,))
every_other[:] = np.arange(1.0, 6.0)
print("written through", y)
y2 = y * 2  # a later read sees the write
print("and read back", y2.sum(), y.max())
row = as_strided(image, shape=(3, 6), strides=(2 * image.strides[0], image.strides[1]))
print(row[:, :2])

print(np.lib.mixins.NDArrayOperatorsMixin.__name__, np.lib.NumpyVersion("2.1.0") > "2.0.0")
np.testing.assert_allclose(windows[0], [0.0, 1.0, 2.0, 3.0])
np.testing.assert_array_equal(y[::2], np.arange(1.0, 6.0))
print("numpy.testing ok")
