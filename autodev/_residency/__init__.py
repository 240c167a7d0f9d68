"""Residency: where an array's data lives, and moving it.

``storage`` (the storage views share, mirrors, transfers, marking writes),
``reuse`` (reuse credit: mirroring data a loop keeps using), ``memory`` (the one
out-of-memory mechanism: free, retry, fall back) and ``buffers`` (host memory
handed to NumPy and the buffer protocols).
"""
