"""``python -m autodev``: the same as the ``autodev`` command."""

import sys

from ._cli import main

sys.exit(main())
