"""The compiled parts: the hot path (autodev/_speedups.c) and the host buffer pool
(autodev/_hostpool.c, a NumPy data-memory handler built against NumPy's headers).
Everything else is in pyproject.toml.

Both extensions are optional: where they cannot be built (no C compiler, no Python or
NumPy headers) the install goes on without them and autodev runs its pure-Python paths,
which give the same results, without the pool (set AUTODEV_PURE_PYTHON=1 to use them
where they are built).
"""

from setuptools import Extension, setup


def _numpy_include() -> list[str]:
    """NumPy's C headers (a build requirement; none where NumPy cannot be imported)."""
    try:
        import numpy
    except ImportError:
        return []
    return [numpy.get_include()]


setup(ext_modules=[
    Extension("autodev._speedups", ["autodev/_speedups.c"], optional=True),
    Extension("autodev._hostpool", ["autodev/_hostpool.c"], include_dirs=_numpy_include(),
              optional=True),
])
