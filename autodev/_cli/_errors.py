"""The one error type of the ``autodev`` command."""

from __future__ import annotations


class CLIError(Exception):
    """An error the user can fix; printed as one line, exit code 1."""
