"""bench/pairs.py's arithmetic: pooled CPU per round trip, whole pairs only, and no ratio without floor CPU."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import pairs


def run(server: str, pair: int, cpu_ms_per_flow: float, flows: int = 100, **extra: Any) -> dict[str, Any]:
    return {
        "server": server,
        "pair": pair,
        "concurrency": 16,
        "server_cpu_ms_per_flow": cpu_ms_per_flow,
        "flows_ok": flows,
        "flows_failed": 0,
        "requests": 2 * flows,
        **extra,
    }


def test_the_ratio_is_of_cpu_pooled_over_the_pairs_not_a_mean_of_ratios() -> None:
    runs = [
        run("baton", 1, 0.4),
        run("floor", 1, 0.2),
        run("floor", 2, 0.4, flows=300),
        run("baton", 2, 0.6, flows=300),
    ]
    row = pairs.summarize(runs)[16]
    assert row["baton_cpu_ms_per_rt"] == pytest.approx((40 + 180) / 800)
    assert row["floor_cpu_ms_per_rt"] == pytest.approx((20 + 120) / 800)
    assert row["ratio"] == pytest.approx(220 / 140)  # the mean of the pairs' own ratios would be 1.75
    assert (row["pair_ratio_min"], row["pair_ratio_max"]) == (pytest.approx(1.5), pytest.approx(2.0))
    assert row["pairs_used"] == 2


def test_a_pair_with_a_failed_run_is_left_out_whole() -> None:
    runs = [run("baton", 1, 0.4), run("floor", 1, 0.2), run("baton", 2, 9.0), {**run("floor", 2, 0.1), "fatal": "x"}]
    row = pairs.summarize(runs)[16]
    assert (row["pairs"], row["pairs_used"]) == (2, 1)
    assert row["ratio"] == pytest.approx(2.0)


def test_no_ratio_when_the_floor_ran_too_short_to_read_its_cpu() -> None:
    row = pairs.summarize([run("baton", 1, 0.01), run("floor", 1, 0.0)])[16]
    assert "ratio" not in row
    assert "| 16 | 1 of 1 | \u2013 |" in pairs.markdown({16: row}, 100)
