"""The 2025-11-25 benchmark: bench/legacy_compare.py's pooling and target, and a tiny run of it against Baton.

The arithmetic is checked on made-up runs (pooled CPU, whole rounds only, the better peer, FAIL on failed
flows). The smoke run is Baton alone (the peers' venvs are not needed): one session per run, every flow one
elicitation/create answered by POST, and the report written where it says.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support.bench import FIGURES, RESULTS, bench
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import legacy_compare
import pytest


def run(server: str, rnd: int, cpu_ms_per_flow: float, flows: int = 100, **extra: Any) -> dict[str, Any]:
    return {
        "server": server,
        "round": rnd,
        "server_cpu_ms_per_flow": cpu_ms_per_flow,
        "flows_ok": flows,
        "flows_failed": 0,
        "requests": 2 * flows,
        "flows_per_s": 100.0,
        "latency_ms": {"p50": 1.0, "p99": 2.0},
        "driver_cpu_ms_per_flow": 0.3,
        "rounds_per_flow": 2.0,
        "server_rss_mib_before": 40.0,
        "server_rss_mib_after": 41.0,
        "server_hwm_mib": 41.0,
        "errors": {},
        **extra,
    }


NAMES = ["baton", "mcp", "mcp1"]


def test_pooled_over_whole_rounds_against_the_better_peer() -> None:
    runs = [
        run("baton", 1, 0.5, flows=100),
        run("mcp", 1, 3.0),
        run("mcp1", 1, 4.0),
        run("baton", 2, 1.0, flows=300),
        run("mcp", 2, 5.0),
        run("mcp1", 2, 4.0),
        run("baton", 3, 9.0),  # round 3 has no usable mcp run: left out whole
        run("mcp", 3, 1.0, fatal="driver failed"),
        run("mcp1", 3, 1.0),
    ]
    summary = legacy_compare.summarize(NAMES, runs)
    rows = summary["rows"]
    assert rows["baton"]["rounds_used"] == 2
    assert rows["baton"]["cpu_ms_per_round_trip"] == (0.5 * 100 + 1.0 * 300) / 400  # pooled, not a mean of runs
    assert rows["mcp"]["cpu_ms_per_round_trip"] == 4.0
    assert rows["mcp1"]["cpu_ms_per_round_trip"] == 4.0
    assert rows["baton"]["cpu_ms_per_request"] == rows["baton"]["cpu_ms_per_round_trip"] / 2
    assert summary["better_peer"] in ("mcp", "mcp1")
    assert summary["ratio"] == 0.875 / 4.0
    assert summary["round_ratios"]["min"] == 0.5 / 3.0 and summary["round_ratios"]["max"] == 1.0 / 4.0
    assert rows["mcp"]["errors"] == {"driver-failed": 1}
    verdict = legacy_compare.check(summary)
    assert verdict["status"] == "PASS", verdict


def test_the_target_fails_above_a_quarter_or_with_failed_flows_and_is_na_without_a_peer() -> None:
    over = legacy_compare.summarize(NAMES, [run("baton", 1, 1.1), run("mcp", 1, 4.0), run("mcp1", 1, 6.0)])
    assert over["better_peer"] == "mcp"
    assert legacy_compare.check(over)["status"] == "FAIL"
    failing = [run("baton", 1, 0.5, flows_failed=1, errors={"timeout": 1}), run("mcp", 1, 4.0), run("mcp1", 1, 6.0)]
    verdict = legacy_compare.check(legacy_compare.summarize(NAMES, failing))
    assert verdict["status"] == "FAIL" and "1 Baton flows failed" in verdict["detail"]
    alone = legacy_compare.summarize(["baton"], [run("baton", 1, 0.5)])
    assert "ratio" not in alone and legacy_compare.check(alone)["status"] == "n/a"


@pytest.mark.process
def test_legacy_compare_runs_baton_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / RESULTS
    document = tmp_path / FIGURES
    done = bench(
        "legacy_compare.py",
        tmp_path,
        "--only",
        "baton",
        "--rounds",
        "2",
        "--n",
        "60",
        "--warmup",
        "5",
        "--time-limit",
        "60",
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    report = (out / "legacy_compare.md").read_text()
    assert report == done.stdout
    for text in ("### Servers: bench/legacy_load.py", "| Baton | 2 of 2 | **", "### Target", "**n/a**"):
        assert text in report, text
    figures = json.loads(document.read_text())
    runs = figures["runs"]
    assert [(r["server"], r["round"]) for r in runs] == [("baton", 1), ("baton", 2)]
    for r in runs:
        assert r["flows_ok"] == 60 and r["flows_failed"] == 0, r
        assert r["rounds_per_flow"] == 2  # the call, then the POSTed answer to its one elicitation/create
        assert r["requests"] == 120
        assert r["input_requests_answered"] == {"form-accepted": 60}
        assert r["sessions"] == 1 and r["connections"] == 2  # one session, its two connections kept alive
        assert r["server_cpu_ms_per_flow"] > 0
