"""Import-time behaviour, in fresh interpreters: no CuPy at import, fast import,
a working NumPy-only autodev when CuPy is missing, and a reason when CUDA is."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy
import pytest

#: Makes CuPy look not installed (``find_spec`` gives None, ``import cupy`` fails).
HIDE_CUPY = textwrap.dedent("""
    import sys
    for _name in ("cupy", "cupyx", "cupy_backends"):
        sys.modules[_name] = None
""")

#: Makes CuPy look installed but broken: its import raises ImportError.
BREAK_CUPY = textwrap.dedent("""
    import importlib.abc, importlib.machinery, sys

    class _BrokenCupy(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in ("cupy", "cupyx", "cupy_backends"):
                return importlib.machinery.ModuleSpec(name, self)
            return None

        def create_module(self, spec):
            return None

        def exec_module(self, module):
            raise ImportError("libcudart.so.12: cannot open shared object file")

    sys.meta_path.insert(0, _BrokenCupy())
""")


def run_python(code: str, *, prelude: str = "", env: dict[str, str] | None = None) -> str:
    """Run ``code`` in a fresh interpreter; return its stdout (fail on a non-zero exit)."""
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    full_env.update(env or {})
    source = prelude + textwrap.dedent(code)
    proc = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          env=full_env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


#: What would make ``import autodev`` slow: GPU stacks, plotting, SciPy's heavy submodules
#: (each is imported on first use instead). Checked by name, not by a timer, so that a
#: busy machine cannot fail the test.
HEAVY = ("cupy", "cupyx", "matplotlib", "dask", "scipy.linalg", "scipy.sparse", "scipy.fft",
         "scipy.special", "scipy.signal", "platformdirs")


def test_import_does_not_import_cupy_and_is_fast():
    out = run_python("""
        import json, sys
        import numpy, scipy  # what any NumPy program already pays
        import autodev
        heavy = sorted(m for m in sys.modules if m in %r or m.split(".")[0] in ("cupy", "cupyx"))
        s = float((autodev.ones(3) + 1).sum())
        print(json.dumps({"heavy": heavy, "s": s}))
    """ % (HEAVY,))
    result = json.loads(out)
    assert result["heavy"] == []
    assert result["s"] == 6.0


def test_import_loads_no_numpy_submodule_that_numpy_does_not():
    out = run_python("""
        import json, sys
        import numpy
        before = set(sys.modules)
        import autodev
        print(json.dumps(sorted(m for m in set(sys.modules) - before
                                if m == "numpy" or m.startswith("numpy."))))
    """)
    assert json.loads(out) == []  # numpy.fft, for one, loads on first use


def test_import_loads_the_simulator_only_when_it_is_enabled():
    code = """
        import sys
        import autodev
        print("autodev._backends._sim" in sys.modules)
    """
    assert run_python(code).strip() == "False"
    assert run_python(code, env={"AUTODEV_SIMULATE_GPU": "1"}).strip() == "True"


def test_import_loads_none_of_the_simulator():
    """The capability table names the simulator's CuPy imitations without loading them
    (issue 20: ``import autodev`` loaded 500 lines of them through the table)."""
    code = """
        import json, sys
        import autodev
        print(json.dumps(sorted(m for m in sys.modules if m.startswith("autodev._backends._sim"))))
    """
    assert json.loads(run_python(code)) == []


def test_the_imitations_take_the_tables_rows_when_they_load():
    code = """
        import sys
        import autodev._backends._sim_cupy as S
        from autodev._capability.table import TABLE
        imitated = [n for n, row in TABLE.items() if row.imitation is not None]
        assert imitated and all(n in S.IMITATIONS for n in imitated)
        assert "take" in S.IMITATIONS  # a host-operand refusal (the function table's)
        assert {n for n, row in TABLE.items() if row.cupy is None} == S.CUPY_MISSING
        print("ok")
    """
    assert run_python(code).strip() == "ok"


def test_default_policy_import_alone_does_not_import_cupy():
    out = run_python("""
        import sys
        import autodev, autodev.linalg, autodev.fft, autodev.random, autodev.testing
        print(any(m.split(".")[0] in ("cupy", "cupyx") for m in sys.modules))
    """)
    assert out.strip() == "False"


def test_cpu_policy_never_probes_until_another_policy_is_set():
    out = run_python("""
        import sys
        import autodev as np
        def cupy_loaded():
            return any(m.split(".")[0] in ("cupy", "cupyx") for m in sys.modules)
        x = np.linalg.solve(np.eye(3), np.arange(3.0)) + np.sin(np.ones(3)).sum()
        print(cupy_loaded(), x.tolist(), np.stats()["calls"])
        with np.policy("auto"):
            np.ones(2) + 1
        print(cupy_loaded())
    """, env={"AUTODEV_DEVICE": "cpu"})
    first, second = out.strip().splitlines()
    assert first.startswith("False")
    expected = (numpy.linalg.solve(numpy.eye(3), numpy.arange(3.0))
                + numpy.sin(numpy.ones(3)).sum()).tolist()
    assert str(expected) in first
    assert second == "True"  # a context that may use a GPU looks for one


@pytest.mark.parametrize("prelude", [HIDE_CUPY, BREAK_CUPY], ids=["missing", "broken"])
def test_without_cupy_autodev_is_numpy(prelude):
    out = run_python("""
        import json, numpy
        import autodev as np
        cuda = [d for d in np.devices() if d["device"].kind == "cuda"][0]
        a = np.random.default_rng(0).standard_normal((50, 50))
        b = numpy.random.default_rng(0).standard_normal((50, 50))
        same = bool(numpy.array_equal(np.linalg.inv(a) @ a, numpy.linalg.inv(b) @ b))
        print(json.dumps({"usable": cuda["usable"], "reason": cuda["reason"],
                          "same": same, "device": str((a @ a).location)}))
    """, prelude=prelude)
    result = json.loads(out)
    assert result["usable"] is False
    expected = "CuPy is not installed" if prelude is HIDE_CUPY else "failed to import"
    assert expected in result["reason"]
    assert result["same"] is True and result["device"] == "cpu"


@pytest.mark.skipif(importlib.util.find_spec("cupy") is None, reason="CuPy is not installed")
def test_cupy_installed_without_usable_gpu_gives_a_reason():
    out = run_python("""
        import json
        import autodev as np
        cuda = [d for d in np.devices() if d["device"].kind == "cuda"][0]
        x = np.arange(4.0) * 2
        print(json.dumps({"usable": cuda["usable"], "reason": cuda["reason"],
                          "device": str(x.location), "sum": float(x.sum())}))
    """)
    result = json.loads(out)
    if result["usable"]:
        pytest.skip("a CUDA device is usable here")
    assert "CUDA" in result["reason"]
    assert result["device"] == "cpu" and result["sum"] == 12.0


def test_simulated_gpu_from_environment():
    out = run_python("""
        import autodev as np
        x = np.ones(4) * 3
        print(x.location, [str(d["device"]) for d in np.devices() if d["usable"]])
    """, env={"AUTODEV_SIMULATE_GPU": "1", "AUTODEV_DEVICE": "gpu"})
    assert out.strip() == "sim:0 ['auto', 'cpu', 'sim:0']"


def test_bad_policy_environment_is_a_clear_error():
    source = "import autodev"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTODEV_")}
    env["AUTODEV_DEVICE"] = "tpu"
    proc = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          env=env, timeout=120)
    assert proc.returncode != 0
    assert "AUTODEV_DEVICE must be one of" in proc.stderr


BAD_SETTINGS = {
    "AUTODEV_DEVICE": "gpus", "AUTODEV_FALLBACK": "sometimes",
    "AUTODEV_TRACE": "banana", "AUTODEV_SIMULATE_GPU": "please",
}


@pytest.mark.parametrize("name", sorted(BAD_SETTINGS))
def test_one_rule_for_bad_settings(name, monkeypatch):
    from autodev import _config

    for other in _config.ENV_VARS:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(name, BAD_SETTINGS[name])
    with pytest.raises(ValueError, match=f"{name} must be") as caught:
        _config._Env()
    assert repr(BAD_SETTINGS[name]) in str(caught.value)


@pytest.mark.parametrize("name", sorted(BAD_SETTINGS) + ["AUTODEV_CACHE_DIR", "AUTODEV_PROFILE"])
def test_an_empty_setting_is_the_default(name, monkeypatch):
    from autodev import _config

    for other in _config.ENV_VARS:
        monkeypatch.delenv(other, raising=False)
    default = {slot: getattr(_config._Env(), slot) for slot in _config._Env.__slots__}
    monkeypatch.setenv(name, "  ")
    assert {slot: getattr(_config._Env(), slot) for slot in _config._Env.__slots__} == default


def test_flag_settings_take_off_values(monkeypatch):
    from autodev import _config

    monkeypatch.setenv("AUTODEV_TRACE", "off")
    monkeypatch.setenv("AUTODEV_SIMULATE_GPU", "TRUE")
    env = _config._Env()
    assert env.trace is False and env.simulate_gpu is True
