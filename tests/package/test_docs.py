"""The docs that are generated from code are current, and the README's commands exist."""

from pathlib import Path

from autodev._cli.coverage import render

ROOT = Path(__file__).resolve().parents[2]


def test_coverage_page_matches_capability_table() -> None:
    page = (ROOT / "docs" / "coverage.md").read_text()
    assert page == render(), "run: autodev coverage > docs/coverage.md"


def test_readme_starts_with_the_two_setup_commands() -> None:
    text = (ROOT / "README.md").read_text()
    block = text.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line and not line.startswith("#")]
    assert len(commands) == 2
    assert commands[0].endswith("autodev demo")
    assert "pytest" in commands[1]
    ci = (ROOT / ".ci" / "run").read_text()
    assert "pytest" in ci and "cuda12" in ci
