"""Registrations with the simulated GPU's imitations of CuPy, applied when they load.

What the simulated GPU imitates is declared above the backends: the capability table
knows each name's difference from NumPy. The rooms that know it register here
(:func:`on_sim_load`), and the imitations (:mod:`autodev._backends._sim_cupy`) apply every
registration as they finish loading, so that importing autodev loads none of the
simulator.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import Callable

#: A registration: called with the loaded module of imitations.
Registrar = Callable[[ModuleType], None]

_REGISTRARS: list[Registrar] = []
_SIM = __name__.rpartition(".")[0] + "._sim_cupy"


def on_sim_load(registrar: Registrar) -> None:
    """Call ``registrar(imitations)`` once the simulator's imitations have loaded (at once
    if they have), in the order of registration."""
    _REGISTRARS.append(registrar)
    sim = sys.modules.get(_SIM)
    if sim is not None and getattr(sim, "LOADED", False):
        registrar(sim)


def sim_loaded(sim: ModuleType) -> None:
    """Apply every registration to ``sim`` (its last act of loading)."""
    for registrar in _REGISTRARS:
        registrar(sim)
