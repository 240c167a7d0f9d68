"""Dask: autodev arrays as Dask chunks.

``register`` (Dask's lookups for autodev arrays, installed once ``dask.array`` is
imported) and ``backend`` (the ``dask.array.backends`` entry point: ``da.ones`` and
the like making autodev chunks).
"""
