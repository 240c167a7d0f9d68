"""The capability table: what each backend can run, and how each name dispatches.

``table`` (CuPy 14's differences from NumPy, one row per name: refused keywords,
rules, the correction autodev wraps around the GPU function and the simulator's
imitation), ``corrections`` (those corrections), ``specs`` (one immutable
``OpSpec`` per dispatched name, built from the rows of :mod:`autodev._names` and the
table).
"""
