"""Smoke tests of the benchmarks: bench/compare writes its Markdown report and PNG chart, client_compare still runs.

Tiny runs of Baton and the floor only (the peers' venvs are not needed), at c=1: they check that the
one-command comparison runs end to end and writes what it promises, not what the figures are.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.bench import FIGURES, RESULTS, bench

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

SMALL = ["-c", "1", "-n", "60", "--repeat", "1", "--warmup", "10", "--time-limit", "60"]


def test_compare_writes_the_report_and_the_chart(tmp_path: Path) -> None:
    out = tmp_path / RESULTS
    document = tmp_path / FIGURES
    done = bench(
        "compare.py",
        tmp_path,
        "--only",
        "baton,floor",
        *SMALL,
        "--client-concurrency",
        "1",
        "--client-n",
        "30",
        "--import-runs",
        "1",
        "--pairs",
        "2",
        "--pair-n",
        "30",
    )
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed on this noisy machine, still a full report
    report = (out / "compare.md").read_text()
    assert report == done.stdout
    for text in (
        "### Servers",
        "| Baton | 1 |",
        "| floor | 1 |",
        "server CPU ms/round trip",
        "### requestState and import time",
        "`from baton import Context, Server`",
        "### Clients",
        "client CPU ms/round trip",
        "### Baton over the floor: short runs in pairs",
        "| 1 | 2 of 2 |",
        "### Targets",
        "c=1: server CPU per round trip <= 1.6x floor: **",
        "requestState of the one-question flow < 120 bytes: **",
        "`compare.png`",
    ):
        assert text in report, text
    assert (out / "compare.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    figures = json.loads(document.read_text())
    assert not [r for r in figures["runs"] if r.get("flows_failed") or "fatal" in r], done.stderr
    rows = {(r["server"], r["concurrency"]): r for r in figures["summary"]}
    assert rows[("floor", 1)]["request_state_bytes"] == len("floor-v1")
    assert rows[("baton", 1)]["rounds_per_flow"] == 2
    assert rows[("baton", 1)]["server_cpu_ms_per_rt"] > 0
    assert figures["imports"]["baton"]["import_ms"] > 0
    assert [r["client"] for r in figures["client"]["summary"]] == ["baton"]
    pair_runs = figures["pairs"]["runs"]
    assert [(r["server"], r["pair"]) for r in pair_runs] == [("baton", 1), ("floor", 1), ("floor", 2), ("baton", 2)]
    assert not [r for r in pair_runs if r.get("flows_failed") or "fatal" in r], done.stderr
    statuses = {c["target"]: c["status"] for c in figures["checks"]}
    assert statuses["import time <= 1/4 of mcp 2.3.0's"] == "n/a"  # mcp was not run


def test_client_compare_still_runs_alone(tmp_path: Path) -> None:
    document = tmp_path / FIGURES
    done = bench("client_compare.py", tmp_path, "--only", "baton", *SMALL, out=False)
    assert done.returncode == 0, done.stderr
    assert "| Baton | 1 |" in done.stdout
    assert "client CPU ms/round trip" in done.stdout
    assert json.loads(document.read_text())["summary"][0]["client_cpu_ms_per_rt"] > 0
