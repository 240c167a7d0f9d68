"""The compiled hot path (autodev/_speedups.c). Everything else is in pyproject.toml.

The extension is optional: where it cannot be built (no C compiler, no Python headers)
the install goes on without it and autodev runs its pure-Python paths, which give the
same results (set AUTODEV_PURE_PYTHON=1 to use them where it is built).
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("autodev._speedups", ["autodev/_speedups.c"], optional=True)])
