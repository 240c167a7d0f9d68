"""The ``AUTODEV_*`` environment is read as docs/configuration.md says, and only there."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from autodev import _config

DOC = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()


def _env(monkeypatch: pytest.MonkeyPatch, **values: str) -> Any:
    """The environment as autodev reads it at import, with only ``values`` set."""
    for name in _config.ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return _config._Env()


def _documented_rows() -> dict[str, str]:
    """Variable -> its "values" cell, from the table of docs/configuration.md."""
    return {m.group(1): m.group(2) for m in
            re.finditer(r"^\| `(AUTODEV_\w+)` \| ([^|]*) \|", DOC, flags=re.MULTILINE)}


def test_every_variable_is_documented_with_the_values_it_takes() -> None:
    rows = _documented_rows()
    assert set(rows) == set(_config.ENV_VARS)
    assert re.findall(r"`(\w+)`", rows["AUTODEV_DEVICE"]) == list(_config.POLICIES)
    assert re.findall(r"`(\w+)`", rows["AUTODEV_FALLBACK"]) == list(_config.FALLBACK_MODES)


def test_the_documented_example_of_the_rule_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    found = re.search(r'`(AUTODEV_\w+)="([^"]*)"` is\s+`\1=(\w+)`', DOC)
    assert found, "docs/configuration.md states how values are read, with an example"
    name, written, meant = found.groups()
    slot = name.removeprefix("AUTODEV_").lower()
    assert written != meant
    assert getattr(_env(monkeypatch, **{name: written}), slot) == meant


@pytest.mark.parametrize(("name", "written", "slot", "meant"), [
    ("AUTODEV_DEVICE", " GPU ", "device", "gpu"),
    ("AUTODEV_FALLBACK", "Raise", "fallback", "raise"),
    ("AUTODEV_TRACE", " On", "trace", True),
    ("AUTODEV_SIMULATE_GPU", "YES\t", "simulate_gpu", True),
    ("AUTODEV_PURE_PYTHON", "False ", "pure_python", False),
    ("AUTODEV_FUSE", " off", "fuse", False),
    ("AUTODEV_FUSE", "", "fuse", True),
    ("AUTODEV_MIRROR_BUDGET", " 0.25 ", "mirror_budget", 0.25),
    ("AUTODEV_CACHE_DIR", " Cache/Of Autodev ", "cache_dir", "Cache/Of Autodev"),
    ("AUTODEV_PROFILE", "My Profile.json ", "profile", "My Profile.json"),
])
def test_case_and_surrounding_spaces_are_read_as_documented(
        name: str, written: str, slot: str, meant: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    assert getattr(_env(monkeypatch, **{name: written}), slot) == meant


@pytest.mark.parametrize(("name", "written"), [
    ("AUTODEV_DEVICE", " GPUS "), ("AUTODEV_FALLBACK", "Once please"),
    ("AUTODEV_TRACE", "O N"), ("AUTODEV_MIRROR_BUDGET", " 1.5 "),
])
def test_a_bad_value_is_shown_as_written(name: str, written: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match=f"{name} must be") as caught:
        _env(monkeypatch, **{name: written})
    assert f"Got {written!r} instead" in str(caught.value)


def test_the_policy_in_code_follows_the_same_rule() -> None:
    import autodev

    with autodev.policy(" CPU "):
        assert autodev.get_policy() == "cpu"
    with pytest.raises(ValueError, match="Got 'tpu' instead"):
        autodev.set_policy("tpu")


def test_doctor_reads_the_simulated_gpu_setting_as_autodev_does(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._doctor import doctor

    monkeypatch.setenv("AUTODEV_SIMULATE_GPU", "0")  # set, and off
    monkeypatch.setattr(_config.ENV, "simulate_gpu", False)
    assert "simulated GPU" not in {row["check"] for row in doctor()}
    monkeypatch.setattr(_config.ENV, "simulate_gpu", True)
    assert "simulated GPU" in {row["check"] for row in doctor()}
