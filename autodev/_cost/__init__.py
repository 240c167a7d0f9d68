"""The cost model: what a call costs on each device, and where the figures come from.

``model`` (curves, transfers, the floor under which the CPU always wins),
``families`` (which curve prices each function, and a call's work), ``profile``
(reading and writing calibration profiles) and ``fingerprint`` (which machine a
profile belongs to). Imports nothing of autodev but its configuration and trace.
"""
