"""The side-by-side report's noise marks (``autodev bench``), on synthetic timings.

No wall-clock time is asserted: every row here is made up, and the one run of
``run_case`` times a fake ``_measure``.
"""

from __future__ import annotations

import itertools
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

MS = 1e-3


@pytest.fixture(scope="module")
def report() -> ModuleType:
    from autodev._cli.bench import _report_module

    return _report_module()


def _row(**fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"family": "solve", "size": 500, "dtype": "float32", "numpy": None,
                           "autodev": None, "cpu": None, "gpu": None, "device": "cpu",
                           "calls": 1, "numpy_call": True, "rounds": {}}
    row.update(fields)
    known = [t for t in (row["cpu"], row["gpu"]) if t]
    row["ratio"] = row["autodev"] / min(known) if row["autodev"] and known else None
    return row


def _spread(center: float, rel: float) -> list[float]:
    return [center * (1 - rel), center, center * (1 + rel)]


def test_same_call_far_slower_than_the_best_device_is_busy(report: ModuleType) -> None:
    # one device (no GPU): autodev and the cpu column make the same NumPy call, so a
    # 6.73x gap is the machine's load, not a device difference
    row = _row(numpy=3 * MS, autodev=6.73 * 3 * MS, cpu=3 * MS,
               rounds={"numpy": _spread(3 * MS, .01), "autodev": _spread(20 * MS, .01),
                       "cpu": _spread(3 * MS, .01)})
    assert report.flags(row) == {"ad/min": report.BUSY, "ad/np": report.BUSY}


def test_same_call_faster_than_numpy_is_busy(report: ModuleType) -> None:
    row = _row(numpy=6 * MS, autodev=1 * MS, cpu=1 * MS)
    assert report.flags(row)["ad/np"] == report.BUSY
    assert report.flags(row)["ad/min"] == report.SAME_CALL


def test_slower_by_no_more_than_the_wrapper_is_not_busy(report: ModuleType) -> None:
    # a tiny call: 1.7x NumPy's time, but 2 µs more per call is what a wrapper costs
    row = _row(size=100, numpy=3e-6, autodev=5e-6, cpu=5e-6)
    assert report.flags(row)["ad/np"] == ""
    # the same gap over many dispatched calls of a chained workload is no more than that
    chain = _row(numpy=1 * MS, autodev=1.5 * MS, cpu=1.5 * MS, calls=100)
    assert report.flags(chain)["ad/np"] == ""
    assert report.flags(dict(chain, calls=10))["ad/np"] == report.BUSY


def test_a_difference_within_the_round_spread_is_marked(report: ModuleType) -> None:
    # two devices: autodev chose the CPU, the GPU measured 1.18x faster, but the rounds
    # overlap, so the run did not resolve a miss
    row = _row(autodev=10 * MS, cpu=10 * MS, gpu=8.5 * MS, numpy=10 * MS,
               rounds={"autodev": [9 * MS, 10 * MS, 11 * MS], "gpu": [8 * MS, 8.5 * MS, 9.5 * MS],
                       "cpu": [9 * MS, 10 * MS, 11 * MS], "numpy": [9 * MS, 10 * MS, 11 * MS]})
    assert report.flags(row)["ad/min"] == report.WITHIN_SPREAD
    # resolved: the GPU's rounds all lie below autodev's, a real miss, unmarked
    resolved = dict(row, gpu=6 * MS, rounds=dict(row["rounds"], gpu=[5 * MS, 6 * MS, 7 * MS]))
    resolved["ratio"] = 10 / 6
    assert report.flags(resolved)["ad/min"] == ""


def test_ratios_near_one_claim_nothing_and_stay_unmarked(report: ModuleType) -> None:
    row = _row(device="cuda:0", autodev=8.1 * MS, cpu=20 * MS, gpu=8 * MS, numpy=20 * MS,
               rounds={"autodev": _spread(8.1 * MS, .2), "gpu": _spread(8 * MS, .2),
                       "cpu": _spread(20 * MS, .01), "numpy": _spread(20 * MS, .01)})
    # same device chosen as the best column: the same calls, consistent times
    assert report.flags(row) == {"ad/min": report.SAME_CALL, "ad/np": ""}


def test_threaded_or_mixed_runs_are_not_numpy_s_call(report: ModuleType) -> None:
    # split over threads, autodev may beat NumPy: that is no sign of a busy machine
    row = _row(numpy=4 * MS, autodev=2 * MS, cpu=2 * MS, numpy_call=False)
    assert report.flags(row)["ad/np"] == ""
    mixed = _row(device="cpu×3+sim:0×2", numpy=4 * MS, autodev=1 * MS, cpu=4 * MS, gpu=1 * MS)
    assert not report.same_call(mixed, "gpu") and not report.same_call(mixed, "numpy")
    assert report.flags(mixed) == {"ad/min": "", "ad/np": ""}


def test_runs_numpy_call_reads_device_and_threads(report: ModuleType) -> None:
    rec = SimpleNamespace
    assert report.runs_numpy_call([rec(device="cpu", threads=1), rec(device="cpu")])
    assert not report.runs_numpy_call([rec(device="cpu", threads=2)])
    assert not report.runs_numpy_call([rec(device="cpu", threads=1), rec(device="sim:0")])


def test_the_table_and_notes_show_each_mark(report: ModuleType) -> None:
    busy = _row(numpy=3 * MS, autodev=20 * MS, cpu=3 * MS)
    spread = _row(family="fft2", size=512, device="cpu", autodev=10 * MS, cpu=10 * MS,
                  gpu=8.5 * MS, numpy=10 * MS,
                  rounds={"autodev": [9 * MS, 10 * MS, 11 * MS],
                          "gpu": [8 * MS, 8.5 * MS, 9.5 * MS]})
    quiet = _row(family="sum", size=1000, numpy=1 * MS, autodev=1.01 * MS, cpu=1 * MS)
    result = {"meta": {"date": "today", "machine": {"cpu": "x", "cores": 2}, "gpu": "none",
                       "dtype": "float32", "gpu_missing_reason": ""},
              "accuracy": {"judged": 0}, "rows": [busy, spread, quiet]}
    text = report.format_report(result)
    assert "6.67x!" in text and "1.18x~" in text and "1.01x=" in text
    notes = [line for line in text.splitlines() if line[:1] in "!~="]
    assert len(notes) == 3
    assert "solve n=500" in notes[0] and "fft2 n=512" not in notes[0]
    assert "fft2 n=512" in notes[1] and "sum n=1000" not in " ".join(notes[:2])


def test_run_case_interleaves_rounds_and_keeps_their_medians(
        report: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    from benchmarks.benchmarks.common import WORKLOADS

    counter = itertools.count(1)
    monkeypatch.setattr(report, "_measure",
                        lambda func, budget, clock=None: next(counter) * MS)
    row = report.run_case(WORKLOADS["tiny_add"], 10, "float64", 0.01, None)
    columns = [c for c in ("numpy", "autodev", "cpu", "gpu") if row[c] is not None]
    assert {"numpy", "autodev", "cpu"} <= set(columns)
    k = len(columns)
    for i, column in enumerate(columns):
        # round r of column i was the (r*k + i + 1)-th measurement: interleaved
        expected = [(r * k + i + 1) * MS for r in range(report.ROUNDS)]
        assert row["rounds"][column] == pytest.approx(expected)
        assert row[column] == pytest.approx(expected[report.ROUNDS // 2])
    assert row["calls"] >= 1 and row["flags"] == report.flags(row)


def test_accuracy_counts_the_fused_chains_apart(report: ModuleType) -> None:
    """The cases autodev ran as fused chains are counted on their own as well."""
    rows = [_row(device="cpu", correct=True, miss=0.5, fused=2),
            _row(device="sim:0", correct=False, miss=1.5, fused=1),
            _row(device="cpu", correct=True, miss=0.8, fused=0),
            _row(device="cpu", correct=None, miss=None, fused=3)]
    acc = report.accuracy(rows)
    assert (acc["judged"], acc["correct"]) == (3, 2)
    assert acc["fused"] == {"judged": 2, "correct": 1}
    result = {"meta": {"date": "today", "machine": {"cpu": "x", "cores": 2}, "gpu": "sim:0",
                       "dtype": "float32", "gpu_missing_reason": ""},
              "accuracy": acc, "rows": rows}
    assert "Of them, run as fused chains (each placed as one call): 1/2" in \
        report.format_report(result)
    none = dict(acc, fused={"judged": 0, "correct": 0})
    assert "No judged case ran as a fused chain" in \
        report.format_report(dict(result, accuracy=none))
