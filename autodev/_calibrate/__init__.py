"""Calibration: measuring this machine's crossovers (``autodev calibrate``).

``calibrate`` (the measurement loop and its budgets), ``curves`` (fitting a curve, the
crossovers curves imply), ``timing`` (how one call is timed), ``workloads`` (what is
measured for each family). It uses the backends and the cost model, and resets nothing
itself: writing a profile is what the dispatcher hears about.
"""
