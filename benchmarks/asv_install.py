"""Install one built autodev wheel into an asv environment (asv.conf.json's install_command).

``python asv_install.py WHEEL`` installs the wheel with its dependencies and no extra: a
machine without a GPU gets NumPy and SciPy only, not the CUDA wheels. On a machine with an
NVIDIA GPU, name the extra that brings CuPy in the environment of the ``asv run``::

    AUTODEV_ASV_EXTRA=cuda12 asv run ...        # or cuda12-ctk, cuda13, cuda13-ctk

(asv environments are kept between runs: an environment that once received CuPy keeps it;
``asv run`` on the same machine with ``--python=same`` uses the interpreter as it is.)
"""

from __future__ import annotations

import os
import subprocess
import sys

EXTRAS = ("cuda12", "cuda13", "cuda12-ctk", "cuda13-ctk")


def requirement(wheel: str, extra: str) -> str:
    """``wheel`` or ``wheel[extra]``; an unknown extra raises ValueError naming the choices."""
    extra = extra.strip()
    if not extra:
        return wheel
    if extra not in EXTRAS:
        raise ValueError(f"AUTODEV_ASV_EXTRA must be one of {', '.join(EXTRAS)} or empty. "
                         f"Got {extra!r} instead.")
    return f"{wheel}[{extra}]"


def main(argv: list[str]) -> int:
    """Run pip for the wheel in ``argv[0]``; return pip's exit status."""
    if len(argv) != 1:
        print("usage: python asv_install.py WHEEL", file=sys.stderr)
        return 2
    target = requirement(argv[0], os.environ.get("AUTODEV_ASV_EXTRA", ""))
    return subprocess.call([sys.executable, "-m", "pip", "install", target])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
