"""One row per NumPy name (``autodev._names``): each name is declared once, every table
the package reads about names is what the rows say, and the array class declares exactly
the dispatched methods the rows name."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import numpy as np

import autodev
from autodev import _creation, _dispatch, _namespace, _overrides, _subclass, _ufuncs
from autodev._capability import specs
from autodev._capability.table import TABLE
from autodev._cost import families
from autodev._names import NAMES, ROWS, Name

PACKAGE = Path(autodev.__file__).parent
_MODULES = {"": np, "linalg": np.linalg, "fft": np.fft}


def _rows(**facts: object) -> set[str]:
    """The names of the rows where each fact is truthy (``view=True``) or equal."""
    return {row.name for row in ROWS
            if all(getattr(row, k) == v if not isinstance(v, bool) else
                   bool(getattr(row, k)) is v for k, v in facts.items())}


def test_each_name_is_declared_once() -> None:
    twice = [name for name, n in Counter(row.name for row in ROWS).items() if n > 1]
    assert twice == []
    assert len(NAMES) == len(ROWS)


def test_each_row_names_a_numpy_name() -> None:
    newest = np.lib.NumpyVersion(np.__version__) >= "2.2.0"  # (matvec: 2.2)
    for row in ROWS:
        prefix, _, name = row.name.rpartition(".")
        assert hasattr(_MODULES[prefix], name) or not newest, row.name
        if row.method is not None:
            assert hasattr(np.ndarray, row.name), f"ndarray has no {row.name}"


def test_every_name_autodev_treats_specially_has_a_row() -> None:
    functions = {name for name in specs.SPECS
                 if not isinstance(np.__dict__.get(name), np.ufunc) or name in NAMES}
    special = (functions | set(specs.METHOD_SPECS) | set(_namespace.DIRECT)
               | _namespace.CREATION | _namespace.PLACED | _namespace.NUMPY_CODE
               | _namespace.NUMPY_CODE_FOR_SUBCLASSES | set(_ufuncs._REDUCE_AS)
               | _dispatch.READ_ONLY_RESULTS | set(_overrides.REDUCING_METHODS))
    assert special - set(NAMES) == set()


def test_the_capability_table_keys_declared_names() -> None:
    # CuPy's differences are keyed by name too: a NumPy function's row, a NumPy ufunc, an
    # array method, a ufunc method or a name of autodev.scipy
    for name in TABLE:
        assert (name in NAMES or isinstance(np.__dict__.get(name), np.ufunc)
                or name.startswith(("ndarray.", "ufunc", "scipy."))), name


def test_specs_are_what_the_rows_say() -> None:
    for row in ROWS:
        spec = specs.SPECS.get(row.name)
        if row.family is None:
            assert spec is None or isinstance(np.__dict__.get(row.name), np.ufunc), row.name
            continue
        assert spec is not None, row.name
        assert (spec.where, spec.family) == (
            ("primary", "copy") if row.view else ("dispatch", row.family)), row.name
        assert spec.scalar is row.scalar, row.name
        assert spec.path == (row.gpu_path or row.name), row.name
        assert (spec.cpu_impl is not None) is (row.gpu_path is not None), row.name
    assert set(specs.OPERANDS) == {row.name for row in ROWS
                                   if row.family is not None and not row.view}


def test_methods_are_what_the_rows_say() -> None:
    for row in ROWS:
        spec = specs.METHOD_SPECS.get(row.name)
        if row.method is None:
            assert spec is None, row.name
            continue
        assert spec is not None, row.name
        assert spec.family == (row.method.family or row.family), row.name
        assert spec.where == ("primary" if row.view else "dispatch"), row.name
        scalar = row.scalar if row.method.scalar is None else row.method.scalar
        assert spec.scalar is scalar, row.name
        reduces = _overrides.REDUCING_METHODS.get(row.name)
        assert reduces == (None if row.method.reduces is None else (
            row.method.reduces[0], tuple(row.method.reduces[1].split()))), row.name
    assert set(_subclass._RESULT_METHODS) >= set(specs.METHOD_SPECS)


def test_the_class_declares_the_rows_methods() -> None:
    # the class body names each dispatched method (so type checkers see it); each line
    # reads its row's spec, and every row with a method has its line
    source = (PACKAGE / "_array.py").read_text()
    declared = dict(re.findall(r"^    (\w+) = _dispatched\(\"(\w+)\"\)", source, re.M))
    assert all(attribute == name for attribute, name in declared.items())
    assert set(declared) == _rows(method=True)


def test_namespace_tables_are_what_the_rows_say() -> None:
    assert set(_namespace.DIRECT) == _rows(direct=True)
    assert all(_namespace.DIRECT[name].__name__ == name for name in _namespace.DIRECT)
    assert _namespace.PLACED == _rows(placed=True)
    assert _namespace.NUMPY_CODE == _rows(numpy_code="always")
    assert _namespace.NUMPY_CODE_FOR_SUBCLASSES == _rows(numpy_code="subclasses")
    assert _dispatch.READ_ONLY_RESULTS == _rows(read_only=True)
    writes = {row.name: (row.writes.param, row.writes.unless) for row in ROWS
              if row.writes is not None}
    assert dict(_namespace.WRITES_INTO) == writes


def test_creation_tables_are_what_the_rows_say() -> None:
    made = {row.name: row.creation for row in ROWS
            if row.creation is not None and not row.direct}
    assert _namespace.CREATION == set(made)
    assert dict(_creation._DTYPE_AT) == {n: c.dtype_at for n, c in made.items()}
    assert _creation._SHAPED == {n for n, c in made.items() if c.shaped}
    assert _creation._ARRAY_ARGUMENTS == {n for n, c in made.items() if c.arrays}
    # autodev's own conversions are creation functions of the docs, made in _namespace
    assert all(row.creation.dtype_at is None for row in ROWS
               if row.creation is not None and row.direct)


def test_reductions_are_what_the_rows_say() -> None:
    reduce_as = {row.name: (getattr(np, row.reduce_as.ufunc),
                            frozenset(row.reduce_as.keys.split()))
                 for row in ROWS if row.reduce_as is not None}
    assert _ufuncs._REDUCE_AS == reduce_as
    assert dict(_ufuncs._METHOD_OF) == {
        row.name: row.reduce_as.method for row in ROWS
        if row.reduce_as is not None and row.reduce_as.method is not None}


def test_cost_families_are_what_the_rows_say() -> None:
    ufuncs = [name for name, u in vars(np).items() if isinstance(u, np.ufunc)]
    found = families.dispatched_families(ufuncs)
    for row in ROWS:
        if row.family is not None and not row.view and row.name not in ufuncs:
            assert found[row.name] == row.family, row.name
        if row.view:
            assert row.name not in found, row.name
    for name in ufuncs:
        own = NAMES.get(np.__dict__[name].__name__, Name("?")).ufunc
        assert families.family_of_ufunc(np.__dict__[name].__name__) == (own or "elementwise")
