"""Profiles are safe input: validation, migration, fingerprints, atomic writes."""

from __future__ import annotations

import copy
import json
import os
import stat
import warnings
from pathlib import Path
from typing import Any

import pytest

from autodev._cost import fingerprint as _fingerprint, profile as _profile
from autodev.testing import SimBackend



def _calibrated(**changes: Any) -> dict[str, Any]:
    """The embedded default dressed as a profile calibrated on this machine."""
    profile = copy.deepcopy(_profile.embedded_default())
    profile["source"] = "calibrated"
    profile["fingerprint"] = _fingerprint.machine()
    profile.update(changes)
    return profile


def test_embedded_default_is_current_and_valid() -> None:
    default = _profile.embedded_default()
    assert default["version"] == _profile.VERSION == 2
    assert {"cpu", "gpu"} <= set(default["devices"])


def test_write_read_round_trip(_cache: Path) -> None:
    path = _profile.write(_calibrated())
    assert path == _cache / "profile.json"
    assert _profile.read(path) == json.loads(json.dumps(_calibrated()))
    found = _profile.resolve()
    assert (found.source, found.used, found.fingerprint) == ("calibrated", path, "match")


def test_version_1_migrates(_cache: Path) -> None:
    old = _calibrated(version=1, fingerprint={"host": "whatever v1 wrote"})
    _cache.mkdir(parents=True)
    (_cache / "profile.json").write_text(json.dumps(old))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        profile, source = _profile.load()
    assert profile["version"] == 2 and profile["fingerprint"] == {}
    assert source == str(_cache / "profile.json")
    assert _profile.resolve().fingerprint.startswith("unkeyed")


def _hostile() -> dict[str, Any]:
    good = _calibrated()

    def with_curve(**curve: Any) -> str:
        bad = copy.deepcopy(good)
        bad["devices"]["cpu"]["compute"]["matmul"]["f64"].update(curve)
        return json.dumps(bad, allow_nan=True)

    def edited(func: Any) -> str:
        bad = copy.deepcopy(good)
        func(bad)
        return json.dumps(bad)

    text = json.dumps(good)
    return {
        "truncated": text[: len(text) // 2],
        "empty": "",
        "binary": "\x00\x01\x02garbage",
        "pickle-like": "cos\nsystem\n(S'echo pwned'\ntR.",
        "python-expression": "__import__('os').system('echo pwned')",
        "a list": "[1, 2, 3]",
        "wrong format": edited(lambda p: p.update(format="something-else")),
        "wrong version": edited(lambda p: p.update(version=99)),
        "boolean version": edited(lambda p: p.update(version=True)),
        "NaN latency": with_curve(latency=float("nan")),
        "infinite throughput": with_curve(throughput=float("inf")),
        "negative latency": with_curve(latency=-1e-6),
        "zero throughput": with_curve(throughput=0),
        "absurd throughput": with_curve(throughput=1e30),
        "absurd latency": with_curve(latency=1e6),
        "string number": with_curve(latency="1e-6"),
        "unknown family": edited(lambda p: p["devices"]["cpu"]["compute"].update(teleport={})),
        "unknown dtype": edited(lambda p: p["devices"]["cpu"]["compute"]["sort"].update(
            f16={"latency": 1e-6, "throughput": 1e9})),
        "unknown device": edited(lambda p: p["devices"].update(tpu={"compute": {}})),
        "no cpu": edited(lambda p: p["devices"].pop("cpu")),
        "unknown link": edited(lambda p: p["devices"]["gpu"]["transfer"].update(
            carrier_pigeon={"latency": 1.0, "bandwidth": 1.0})),
        "fingerprint not an object": edited(lambda p: p.update(fingerprint="me")),
        "ragged measurements": edited(lambda p: p.update(measurements={"cpu": {"sort": {"f64": {
            "n": [1, 2], "work": [1.0], "seconds": [1e-6, 2e-6]}}}})),
        "negative measurement": edited(lambda p: p.update(measurements={"transfer": {"h2d": {
            "bytes": [1024.0], "seconds": [-1.0]}}})),
        "deeply nested": "[" * 100_000 + "]" * 100_000,
        "deeply nested object": '{"format": ' * 50_000 + "1" + "}" * 50_000,
        "missing cpu families": edited(lambda p: [p["devices"]["cpu"]["compute"].pop(f)
                                                  for f in ("elementwise", "copy", "creation",
                                                            "transcendental")]),
        "missing gpu family": edited(lambda p: p["devices"]["gpu"]["compute"].pop("matmul")),
        # JSON integers have no size limit; Python reads at most 4300 digits, and converts
        # to a float only below 1.8e308
        "integer past Python's digit limit": text.replace('"version": 2',
                                                          '"version": 2' + "0" * 5000),
        "integer too large for a float": with_curve(latency=10 ** 400),
        "measurement too large for a float": edited(lambda p: p.update(measurements={
            "transfer": {"h2d": {"bytes": [10 ** 400], "seconds": [1e-6]}}})),
    }


@pytest.mark.parametrize("case", sorted(_hostile()))
def test_hostile_profiles_give_one_warning_and_the_default(case: str, _cache: Path) -> None:
    _cache.mkdir(parents=True)
    path = _cache / "profile.json"
    path.write_text(_hostile()[case], encoding="utf-8", errors="surrogateescape")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profile, source = _profile.load()
    assert source == "embedded default"
    assert profile == _profile.embedded_default()
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert str(path) in message and "autodev calibrate" in message
    assert "\n" not in message and len(message) < 1000


def test_profile_of_another_machine_is_not_used(_cache: Path) -> None:
    other = _calibrated()
    other["fingerprint"]["cpu"]["model"] = "Some Other CPU 9000"
    _profile.write(other)
    with pytest.warns(RuntimeWarning, match="another machine.*Some Other CPU 9000"):
        _, source = _profile.load()
    assert source == "embedded default"
    # BLAS threads vary with the environment: recorded, not compared
    drifted = _calibrated()
    drifted["fingerprint"]["cpu"]["blas_threads"] = 999
    _profile.write(drifted)
    assert _profile.resolve().fingerprint == "match"


def test_explicit_profile_is_used_without_the_fingerprint_check(tmp_path: Path) -> None:
    other = _calibrated()
    other["fingerprint"]["libraries"]["numpy"] = "0.0.1"
    path = _profile.write(other, tmp_path / "chosen.json")
    found = _profile.resolve(path)
    assert found.used == path and found.problem == ""
    assert found.fingerprint.startswith("not checked")


def test_cpu_only_profile_gets_default_gpu_curves_once_a_gpu_is_probed() -> None:
    cpu_only = _calibrated()
    cpu_only["devices"] = {"cpu": cpu_only["devices"]["cpu"]}
    _profile.write(cpu_only)
    found = _profile.resolve(gpu=SimBackend())
    assert found.problem == ""
    assert found.source == "calibrated CPU + embedded default GPU"
    assert found.profile["devices"]["gpu"] == _profile.embedded_default()["devices"]["gpu"]


def test_profile_of_another_gpu_keeps_its_cpu_curves_only() -> None:
    profile = _calibrated()
    profile["fingerprint"]["gpu"] = {"name": "NVIDIA H100 80GB HBM3", "driver": 12040}
    profile["devices"]["cpu"]["compute"]["matmul"]["f64"]["throughput"] = 1.234e10
    profile["devices"]["gpu"]["compute"]["matmul"]["f64"]["throughput"] = 4.321e13
    _profile.write(profile)
    found = _profile.resolve(gpu=SimBackend())
    assert "another GPU" in found.problem and found.gpu_fingerprint.startswith("mismatch")
    devices = found.profile["devices"]
    assert devices["cpu"]["compute"]["matmul"]["f64"]["throughput"] == 1.234e10
    assert devices["gpu"] == _profile.embedded_default()["devices"]["gpu"]
    # with the GPU not probed, nothing about it is checked
    assert _profile.resolve().problem == ""


def test_atomic_write_survives_an_interruption(_cache: Path, monkeypatch: pytest.MonkeyPatch
                                               ) -> None:
    path = _profile.write(_calibrated())
    before = path.read_bytes()

    def half_then_interrupt(obj: Any, handle: Any, **kwargs: Any) -> None:
        handle.write(json.dumps(obj)[:100])
        raise KeyboardInterrupt

    monkeypatch.setattr(_profile.json, "dump", half_then_interrupt)
    with pytest.raises(KeyboardInterrupt):
        _profile.write(_calibrated(note="new"))
    assert path.read_bytes() == before
    assert [p.name for p in _cache.iterdir()] == ["profile.json"]


def test_write_refuses_an_invalid_profile(_cache: Path) -> None:
    bad = _calibrated()
    bad["devices"]["cpu"]["compute"]["sort"]["f64"]["latency"] = -1.0
    with pytest.raises(_profile.ProfileError, match="latency must be"):
        _profile.write(bad)
    assert not (_cache / "profile.json").exists()


def test_dispatcher_uses_the_matching_cached_profile() -> None:
    from autodev._cost.cache import cost_model
    from autodev.testing import simulated_gpu

    profile = _calibrated()
    profile["devices"]["cpu"]["compute"]["sort"]["f64"] = {"latency": 1e-3, "throughput": 1e3}
    _profile.write(profile)
    with simulated_gpu():
        model = cost_model()
        assert model.compute("cpu", "sort", "f64", 1e3) == pytest.approx(1e-3 + 1.0)


# ---------------------------------------------------------------------- hostile files

def _warned_default(path: Path, **kwargs: Any) -> str:
    """Load ``path``; check it gave one warning and the default; return the warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profile, source = _profile.load(path, **kwargs)
    assert source == "embedded default"
    assert profile == _profile.embedded_default()
    assert len(caught) == 1, [str(w.message) for w in caught]
    message = str(caught[0].message)
    assert str(path) in message and "autodev calibrate" in message
    return message


@pytest.fixture
def never_opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Fail the test if the loader opens anything: it must refuse by its kind first."""
    opened: list[str] = []
    real_open = os.open

    def refuse(path: Any, *args: Any, **kwargs: Any) -> int:
        if str(path) == os.devnull or not os.path.exists(path) or \
                stat.S_ISREG(os.stat(path).st_mode):
            return real_open(path, *args, **kwargs)  # not a hostile file (plumbing, temp)
        opened.append(str(path))
        raise AssertionError(f"the profile loader opened {path}")

    def guarded(real: Any) -> Any:
        def call(path: Any, *args: Any, **kwargs: Any) -> Any:
            if os.path.exists(path) and not stat.S_ISREG(os.stat(path).st_mode) \
                    and str(path) != os.devnull:
                opened.append(str(path))
                raise AssertionError(f"the profile loader opened {path}")
            return real(path, *args, **kwargs)

        return call

    monkeypatch.setattr(_profile.os, "open", refuse)
    # every other way to open a file, so that a loader which forgot the check fails here
    # instead of blocking on a FIFO forever
    monkeypatch.setattr("builtins.open", guarded(open))
    for name in ("open", "read_text", "read_bytes"):
        monkeypatch.setattr(Path, name, guarded(getattr(Path, name)))
    return opened


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_a_fifo_profile_is_refused_unopened(tmp_path: Path, never_opened: list[str]) -> None:
    fifo = tmp_path / "profile.json"
    os.mkfifo(fifo)  # opening it for reading would block until a writer came
    assert "named pipe" in _warned_default(fifo)
    assert never_opened == []


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")
def test_a_link_to_dev_zero_is_refused_unopened(tmp_path: Path, never_opened: list[str]) -> None:
    link = tmp_path / "profile.json"
    link.symlink_to("/dev/zero")
    assert "character device" in _warned_default(link)


def test_a_directory_is_refused(tmp_path: Path, never_opened: list[str]) -> None:
    assert "directory" in _warned_default(tmp_path)


def test_an_oversized_file_is_refused_unread(tmp_path: Path, never_opened: list[str]) -> None:
    big = tmp_path / "profile.json"
    with big.open("wb") as handle:
        handle.truncate(_profile.MAX_BYTES + 1)  # sparse: no disk used
    assert "bytes" in _warned_default(big)


def test_hostile_cache_profile_in_info_and_doctor_without_a_gpu(
        _cache: Path, never_opened: list[str]) -> None:
    from autodev._doctor import doctor
    from autodev._info import info

    _cache.mkdir(parents=True)
    (_cache / "profile.json").symlink_to("/dev/zero")
    report = info()
    assert "not a regular file" in json.dumps(report, default=str)
    assert any("not a regular file" in json.dumps(row) for row in doctor())


def test_a_mistyped_profile_path_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._config import ENV

    missing = tmp_path / "profle.json"
    monkeypatch.setattr(ENV, "profile", str(missing))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, source = _profile.load()
    assert source == "embedded default"
    assert len(caught) == 1 and "no such file" in str(caught[0].message)
    assert str(missing) in str(caught[0].message)


def test_a_profile_missing_cpu_families_does_not_send_tiny_calls_to_the_gpu(
        _cache: Path) -> None:
    import autodev
    from autodev.testing import simulated_gpu

    _cache.mkdir(parents=True)
    path = _cache / "profile.json"
    path.write_text(_hostile()["missing cpu families"])
    with simulated_gpu() as sim, pytest.warns(RuntimeWarning, match="no curve"):
        x = autodev.asarray([1.0, 2.0, 3.0])
        with autodev.trace() as records:
            y = x + x
    assert y.location == "cpu" and records[-1].device == "cpu"
    assert sim.h2d == 0


LONG_PROFILE = _hostile()["integer past Python's digit limit"]


def test_a_profile_past_pythons_int_limit_warns_in_every_entry_point(_cache: Path) -> None:
    """The first call with a GPU usable, ``autodev info`` and ``autodev doctor``."""
    import autodev
    from autodev._doctor import doctor
    from autodev._info import info
    from autodev.testing import simulated_gpu

    _cache.mkdir(parents=True)
    (_cache / "profile.json").write_text(LONG_PROFILE)
    with simulated_gpu(), pytest.warns(RuntimeWarning, match="more digits") as caught:
        y = autodev.ones(3) + 1
    assert len(caught) == 1
    assert y.tolist() == [2.0, 2.0, 2.0]
    report = info()
    assert report["profile"]["source"] == "embedded default"
    assert "more digits" in report["profile"]["problem"]
    assert any("more digits" in row["detail"] for row in doctor())


def test_an_unusable_cache_directory_warns_once_and_uses_the_default(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import autodev
    from autodev._config import ENV
    from autodev._doctor import doctor
    from autodev._info import info
    from autodev.testing import simulated_gpu

    too_long = tmp_path / ("x" * 300)  # longer than a file name may be (255 bytes on most)
    monkeypatch.setattr(ENV, "cache_dir", str(too_long))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        profile, source = _profile.load()
    assert source == "embedded default" and profile == _profile.embedded_default()
    assert len(caught) == 1
    message = str(caught[0].message)
    assert "cannot use the cache directory" in message and "AUTODEV_CACHE_DIR" in message
    with simulated_gpu(), pytest.warns(RuntimeWarning, match="cache directory"):
        assert (autodev.ones(3) + 1).tolist() == [2.0, 2.0, 2.0]
    report = info()
    assert report["profile"]["exists"] is False
    assert "cache directory" in report["profile"]["problem"]
    rows = {row["check"]: row for row in doctor()}
    assert rows["profile directory"]["status"] == "fail"
    assert "AUTODEV_CACHE_DIR" in rows["profile"]["fix"]


def test_an_unreadable_profile_path_warns_once(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from autodev._config import ENV

    monkeypatch.setattr(ENV, "profile", str(tmp_path / ("x" * 300) / "profile.json"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _, source = _profile.load()
    assert source == "embedded default"
    assert len(caught) == 1 and "AUTODEV_PROFILE" in str(caught[0].message)
