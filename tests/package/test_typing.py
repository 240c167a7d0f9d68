"""Type checkers read autodev's array class: mypy passes ``typing_check.py`` (a user's
arithmetic, comparisons and methods on ``autodev.ndarray``) and flags a method the class
does not have, so the operators declared in the class body stay visible and checked."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e '.[test]' brings it)")
def test_mypy_reads_the_array_class(tmp_path: pathlib.Path) -> None:
    wrong = tmp_path / "wrong.py"
    wrong.write_text("import autodev\n"
                     "x: autodev.ndarray = autodev.ones(3)\n"
                     "x.no_such_method()\n")
    found = subprocess.run(
        # the project's .mypy_cache, which the type check in .ci/run then reuses
        [sys.executable, "-m", "mypy", "--no-error-summary", str(ROOT / "tests" / "typing_check.py"), str(wrong)],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    errors = [line for line in found.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "wrong.py:3:" in errors[0], found.stdout + found.stderr
    assert '"ndarray" has no attribute "no_such_method"' in errors[0]
