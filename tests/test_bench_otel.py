"""Smoke test of bench/otel_compare: a tiny run of `baton` and `baton-otel` in pairs, with the OTLP receiver and
the in-process A/B, so the entry cannot rot. It checks the report's shape and that spans reached the receiver,
not the figures (a run this short cannot measure them)."""

from __future__ import annotations

import json
from pathlib import Path

from support.bench import FIGURES, RESULTS, bench


def test_otel_compare_writes_its_report(tmp_path: Path) -> None:
    args = ["-c", "2", "--pairs", "1", "--pair-n", "300", "--warmup", "5", "--time-limit", "60"]
    done = bench("otel_compare.py", tmp_path, *args, "--ab-n", "50", "--ab-runs", "1", "--baseline", "HEAD")
    assert done.returncode in (0, 1), done.stderr  # 1: the target missed, as a run this short may
    report = (tmp_path / RESULTS / "otel_compare.md").read_text()
    assert report.strip() == done.stdout.strip()
    for text in ("| 2 | 1 of 1 |", "server CPU per round trip with tracing on <= 1.15x tracing off: **", "ratio: **"):
        assert text in report, text
    spans = int(report.split("Spans the OTLP/HTTP receiver decoded from baton-otel: ")[1].split(".")[0])
    assert spans > 0, "tracing was not on in baton-otel"
    figures = json.loads((tmp_path / FIGURES).read_text())
    assert {r["server"] for r in figures["runs"]} == {"baton", "baton-otel"}
    assert not [r for r in figures["runs"] if r.get("flows_failed") or "fatal" in r], done.stderr
