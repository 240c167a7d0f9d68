"""The package's layers: imports go down only, and no module takes part in an import cycle.

Every ``import`` of an autodev module counts, inside functions too. ``LAYERS`` is the
map docs/dispatch.md draws ("The layers"); a new module must be placed in it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "autodev"

#: Rooms from the ground up: a module may import modules of its own room or of a room
#: below it. A name is a module (``_dispatch``, ``_backends._sim``) or a folder (``_cost/``).
LAYERS: list[tuple[str, ...]] = [
    ("_config", "_device", "_typing", "_speedups", "_hostpool", "_names",
     "_refcounts", "_pairwise"),                              # foundation
    ("_host_buffers",),                                       # the host buffer pool's scope
    ("_trace",),                                              # visibility: stats, records
    ("_cost/", "_parallel", "_threads", "_blocked", "_chain_inputs", "_fusion",
     "_threaded", "_fused_sum"),                              # cost; threads, fusion
    ("_backends/",),                                          # numpy, cupy, sim, the registry
    ("_residency/",),                                         # storage, reuse, memory, buffers
    ("_capability/",),                                        # the capability table, specs
    ("_dispatch", "_decide", "_chains", "_chain_kernels"),    # decide, run, wrap; chains' place
    ("_compiled", "_subclass", "_overrides", "_deferral", "_results", "_operators", "_methods",
     "_indexing", "_array"),                                  # the array class
    ("_namespace", "_creation", "_ufuncs", "_functions", "_broadcast", "_numpy_code",
     "fft", "linalg", "random"),                              # NumPy's namespace
    ("_inspection", "_calibrate/", "_dask/", "testing", "_info", "_doctor"),  # services
    ("__init__",),                                            # the package: the public API
    ("scipy/", "array_api/", "lib/"),                          # faces over the package
    ("_cli/", "__main__"),                                    # the command line
]

#: Imports allowed to run up a room, each with its reason (issue 8: at most three).
UPWARD: dict[tuple[str, str], str] = {}


def _modules() -> dict[str, Path]:
    """Every module by name: its source, or for a compiled one its stub (``.pyi``)."""
    found = {}
    for path in [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.pyi")]:
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(("autodev", *parts))
        found[name.removesuffix(".__init__")] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The autodev modules ``name`` imports, anywhere in its code."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = [f"{target}.{a.name}" for a in node.names]
            targets = [n if n in modules else target for n in names]
        elif isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:
                t = t.rpartition(".")[0]
            if t and t != name:
                found.add(t)
    return found


def _room(name: str) -> int:
    rest = name.removeprefix("autodev").lstrip(".") or "__init__"
    for level, rooms in enumerate(LAYERS):
        for room in rooms:
            if rest == room or (room.endswith("/") and rest.startswith(room[:-1].replace("/", "."))
                                and rest[len(room) - 1:len(room)] in ("", ".")):
                return level
    raise AssertionError(f"{name} is in no room of LAYERS: place it (and in docs/dispatch.md)")


MODULES = _modules()
GRAPH = {name: _imports(name, path, MODULES) for name, path in MODULES.items()}


def test_every_module_has_a_room() -> None:
    for name in MODULES:
        _room(name)


def test_imports_go_down_only() -> None:
    upward = sorted((a, b) for a, targets in GRAPH.items() for b in targets
                    if _room(b) > _room(a) and (a, b) not in UPWARD)
    assert not upward, "imports running up a room: " + ", ".join(f"{a} -> {b}" for a, b in upward)
    assert len(UPWARD) <= 3


def test_no_import_cycle() -> None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(GRAPH[node]):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        path.pop()
        state[node] = 2

    for name in sorted(GRAPH):
        if name not in state:
            visit(name)


def test_the_check_sees_imports_inside_functions(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from ._dispatch import call\n    from . import _trace\n")
    assert _imports("autodev.m", source, MODULES) == {"autodev._dispatch", "autodev._trace"}


def test_no_module_exceeds_600_lines() -> None:
    """Every module of the package is cut along its seams (issue 20): none is longer than
    600 lines."""
    long = {str(path.relative_to(PACKAGE)): n for path in PACKAGE.rglob("*.py")
            if (n := len(path.read_text(encoding="utf-8").splitlines())) > 600}
    assert long == {}
