"""bench/kit_compare.py: its pooling and target on made-up runs, and a tiny run of both sides, so it cannot rot.

The tiny run uses the mcp 2.3.0 venv the interop tests use (`.cache/interop/mcp`, made on first use).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from support.bench import FIGURES, bench
from support.paths import ROOT
from support.peer_venvs import ensure_venv

sys.path.insert(0, str(ROOT / "bench"))
import kit_compare
import pytest


def run(name: str, pair: int, cpu_ms: float, flows: int = 100, **extra: Any) -> dict[str, Any]:
    return {"name": name, "pair": pair, "flows": flows, "cpu_ms": cpu_ms, "elicitations": flows, **extra}


def test_pooled_over_whole_pairs() -> None:
    runs = [
        run("baton", 1, 10.0),
        run("mcp", 1, 200.0),
        run("mcp", 2, 400.0, flows=200),
        run("baton", 2, 30.0, flows=200),
        run("baton", 3, 99.0),  # pair 3 has no usable mcp run: left out whole
        run("mcp", 3, 1.0, fatal="boom"),
    ]
    summary = kit_compare.summarize(runs)
    assert (summary["pairs"], summary["pairs_used"], summary["failed_runs"]) == (3, 2, 1)
    assert summary["baton_cpu_ms_per_flow"] == 40.0 / 300  # pooled, not a mean of runs
    assert summary["mcp_cpu_ms_per_flow"] == 2.0
    assert summary["ratio"] == (40.0 / 300) / 2.0
    assert summary["pair_ratios"]["min"] == 0.05 and summary["pair_ratios"]["max"] == 0.075
    assert kit_compare.check(summary)["status"] == "FAIL"  # a run failed
    del runs[-2:]
    assert kit_compare.check(kit_compare.summarize(runs))["status"] == "PASS"
    slow = kit_compare.summarize([run("baton", 1, 60.0), run("mcp", 1, 200.0)])
    assert kit_compare.check(slow)["status"] == "FAIL"
    assert kit_compare.check(kit_compare.summarize([run("baton", 1, 1.0)]))["status"] == "n/a"


@pytest.mark.process
def test_kit_compare_runs_both_sides_end_to_end(tmp_path: Path) -> None:
    mcp = ensure_venv("mcp")
    done = bench(
        "kit_compare.py",
        tmp_path,
        "--mcp-python",
        str(mcp),
        "--pairs",
        "2",
        "-n",
        "30",
        "--warmup",
        "3",
        out=False,
        timeout=240,
    )
    assert done.returncode in (0, 1), done.stderr  # 1 only if the tiny run missed the target
    assert "| Baton in-memory client |" in done.stdout and "| mcp 2.3.0 in-memory Client |" in done.stdout
    figures = json.loads((tmp_path / FIGURES).read_text())
    assert [(r["name"], r["pair"]) for r in figures["runs"]] == [("baton", 1), ("mcp", 1), ("mcp", 2), ("baton", 2)]
    assert all(r["elicitations"] == 30 and "fatal" not in r for r in figures["runs"])
    assert figures["summary"]["pairs_used"] == 2 and figures["check"]["status"] in ("PASS", "FAIL")
    assert f"**{figures['check']['status']}**" in done.stdout
