"""Smoke test of bench/otel_compare: a small run end to end of the eight servers (the bare floor untraced, with the
SDK's sampled-out span and histogram point, and with the span alone, Baton off, sampled-out, 10% and 100%, and mcp
2.3.0 traced through bench/otel_mcp_server.py) with their OTLP receivers, the SDK floor and the in-process A/B, so
the entry cannot rot. It checks that ``--json`` prints exactly one JSON object with the issue's keys (positive
figures), that spans reached the traced receivers (mcp's too), and the Markdown report's target lines; not what the
figures are (a run this short cannot measure them). The mcp-otel venv is made under ``.cache/bench`` on first use
(about a minute), as bench/compare's peer venvs are."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support import processes
from support.paths import ROOT

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

SCRIPT = str(ROOT / "bench" / "otel_compare.py")
FIGURES = [
    f"{name}{level}"
    for name in ("off_us", "sampled_out_us", "baton_traced_us", "mcp_traced_us")
    for level in ("", "_c1", "_c16")
] + [f"{name}_c{c}" for name in ("floor_us", "floor_sampled_out_us", "floor_span_only_us") for c in (1, 16)]
EXTRAS = [
    f"{name}_c{c}"
    for name in ("sampled_out_extra_us", "sdk_sampled_out_extra_us", "sdk_span_extra_us")
    for c in (1, 16)
]
"""Differences of two figures: a run this short may find either side the larger."""
RATIOS = [f"{name}_c{c}" for name in ("ratio_10pct", "ratio_100pct", "baton_over_mcp_traced") for c in (1, 16)]


def test_otel_compare_prints_one_json_object(tmp_path: Path) -> None:
    small = ["--pairs", "2", "--pair-n", "200", "--warmup", "10", "--time-limit", "60"]
    extras = ["--floor-n", "2000", "--floor-runs", "1", "--ab-n", "50", "--ab-runs", "1", "--baseline", "HEAD"]
    argv = [sys.executable, SCRIPT, "--python", sys.executable, "--json", *small, *extras, "--out", str(tmp_path)]
    done = processes.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode in (0, 1), done.stderr  # 1: a target missed, as a run this short may
    figures = json.loads(done.stdout)  # one object and nothing else on stdout
    for key in [*FIGURES, *RATIOS]:
        value = figures[key]
        assert isinstance(value, float) and value > 0, (key, value)
    for key in EXTRAS:
        assert isinstance(figures[key], float), (key, figures[key])
    assert figures["spans"]["mcp-otel"] > 0, figures["spans"]
    assert figures["spans"]["baton-100pct"] > 0 and figures["spans"]["baton-10pct"] > 0, figures["spans"]
    assert figures["valid"] is True
    assert {r["server"] for r in figures["runs"]} == {"floor", "floor-sampled-out", "floor-span-only", "baton",
                                                        "baton-sampled-out", "baton-10pct", "baton-100pct",
                                                        "mcp-otel"}  # fmt: skip
    assert not [r for r in figures["runs"] if r.get("flows_failed") or "fatal" in r], done.stderr
    assert {r["rounds_per_flow"] for r in figures["runs"]} == {2.0}
    assert figures["sets_used_c1"] == figures["sets_used_c16"] == 2
    assert figures["versions"]["mcp-otel"]["opentelemetry-sdk"] == figures["versions"]["baton"]["opentelemetry-sdk"]
    assert set(figures["floor"]) == {"bare_span_us", "unsampled_span_us", "histogram_us"}
    assert figures["ab"]["ratio"] > 0

    report = (tmp_path / "otel_compare.md").read_text()
    for text in (
        "| mcp-otel | ",
        "- c=1: sampled-out: server CPU per flow over off <= +20 µs: **",
        "- c=16: 10% sampled: server CPU per flow <= 1.25x off: **",
        "- c=16: Baton 100% <= 0.25x mcp 2.3.0 100%: **",
        "- spans reached every traced sink (sampled-out's may get none): **PASS**",
        "SDK floor, CPU µs (bench/otel_inproc.py floor, this run): ",
        "| floor-sampled-out | 0 | ",
        "| floor-span-only | 0 | ",
        "What the SDK itself adds to a sampled-out request, live: bench/floor.py --otel ",
        "ratio: **",
    ):
        assert text in report, text
    assert ("**FAIL**" in report) == (done.returncode == 1)


def test_otel_compare_refuses_bad_arguments_in_one_line() -> None:
    done = processes.run(
        [sys.executable, SCRIPT, "--pairs", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr == (
        "bench/otel_compare.py: --pairs and --pair-n must be >= 1; --warmup, --ab-n, --floor-n and --floor-runs >= 0 "
        "(--help lists the options)\n"
    )
