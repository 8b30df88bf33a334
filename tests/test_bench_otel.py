"""Smoke test of bench/otel_compare: a tiny run of `baton`, `baton-otel` and `baton-otel-sampled` in sets, with the
OTLP receivers, the SDK floor and the in-process A/B, so the entry cannot rot. It checks the report's shape (the
three lines: 100% sampled, head-sampled, SDK floor and budget) and that spans reached the receivers, not the
figures (a run this short cannot measure them)."""

from __future__ import annotations

import json
from pathlib import Path

from support.bench import FIGURES, RESULTS, bench


def test_otel_compare_writes_its_report(tmp_path: Path) -> None:
    args = ["-c", "2", "--pairs", "1", "--pair-n", "300", "--warmup", "5", "--time-limit", "60", "--ratio", "0.5"]
    # `baton serve` does not flush its span queue on SIGTERM: a run this short must export on a short schedule.
    args += ["--otel-env", "OTEL_BSP_SCHEDULE_DELAY=100"]
    done = bench(
        "otel_compare.py",
        tmp_path,
        *args,
        "--floor-n",
        "2000",
        "--floor-runs",
        "1",
        "--ab-n",
        "50",
        "--ab-runs",
        "1",
        "--baseline",
        "HEAD",
        timeout=180,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: the target missed, as a run this short may
    report = (tmp_path / RESULTS / "otel_compare.md").read_text()
    assert report.strip() == done.stdout.strip()
    for text in (
        "(a) 100% sampled: c=2: server CPU per round trip with tracing on <= 1.15x tracing off: **",
        "(b) parentbased_traceidratio 0.5: c=2: server CPU per round trip with tracing on <= 1.15x tracing off: **",
        "(c) SDK floor, CPU \u00b5s (bench/otel_inproc.py floor, this run): bare span + exporter ",
        "Budget the target leaves: 0.15 x ",
        "Verdict (protocol.md P68): line (b), **",
        "| 2 | 1 of 1 |",
        "ratio: **",
    ):
        assert text in report, text
    received = [int(row.rsplit("|", 2)[1]) for row in report.splitlines() if row.startswith("| 2 | 1 of 1 |")]
    assert len(received) == 2 and all(received), f"tracing was not on in both traced servers: {received}"
    figures = json.loads((tmp_path / FIGURES).read_text())
    assert {r["server"] for r in figures["runs"]} == {"baton", "baton-otel", "baton-otel-sampled"}
    assert not [r for r in figures["runs"] if r.get("flows_failed") or "fatal" in r], done.stderr
    assert set(figures["floor"]) == {"bare_span_us", "unsampled_span_us", "histogram_us"}
