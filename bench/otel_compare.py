"""Baton's server CPU per MRTR round trip with tracing on over tracing off, from paired short runs, beside the
OpenTelemetry SDK's own floor measured in the same run (protocol.md P68).

Three ``baton serve examples/everything.py`` processes: ``baton`` (no OpenTelemetry variable: telemetry off),
``baton-otel`` (``OTEL_EXPORTER_OTLP_ENDPOINT`` at a real OTLP/HTTP receiver, bench/otlp_sink.py, in a process of
its own: the SDK's ``BatchSpanProcessor`` and OTLP/HTTP exporters for traces and metrics; every request sampled)
and ``baton-otel-sampled`` (the same with ``OTEL_TRACES_SAMPLER=parentbased_traceidratio`` at ``--ratio``, 0.1).
The runs are bench/pairs.py's, three to a set (who goes first alternates, ``baton`` always in the middle; CPU
pooled over all sets) at ``-c`` (16). Printed: (a) the ratio at 100% sampling, (b) the ratio with head
sampling, each against the target (at most 1.15), and (c) the SDK's floor on this machine in this run
(bench/otel_inproc.py floor: a bare span through the batch processor and the OTLP exporter, a sampled-out
span, one histogram record; CPU µs each) beside the budget the target leaves (0.15 x tracing off). The
verdict is (b): (a) is reported, and (c) says why it cannot pass where it cannot. Then an in-process A/B of
the telemetry-off path (bench/otel_ab.py) on this tree and on ``--baseline`` (a git ref, default ``main``),
with OpenTelemetry unimportable. Writes ``otel_compare.md`` under ``--out``; exit status 1 when (b) misses.

    bench/otel_compare.py --python .venv/bin/python --pairs 30 --pair-n 1000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pairs
from options import setup_options
from processes import ROOT, Server, free_port, say, stopping
from runs import drive, start_smoked

FULL, OFF, SAMPLED = "baton-otel", "baton", "baton-otel-sampled"
NAMES = (FULL, OFF, SAMPLED)
"""Run in this order, then reversed: `baton` is always beside each traced server."""
TARGET = 1.15


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_options(parser, "the Python whose baton serves (default .venv)", "logs (default .cache/bench)", "seconds")
    parser.add_argument("-c", "--concurrency", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=pairs.PAIRS)
    parser.add_argument("--pair-n", type=int, default=pairs.PAIR_N)
    parser.add_argument("--warmup", type=int, default=pairs.PAIR_WARMUP)
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--ab-n", type=int, default=3000, help="flows per in-process A/B run (0: skip the A/B)")
    parser.add_argument("--ab-runs", type=int, default=5, help="A/B runs of each tree, alternating")
    parser.add_argument("--baseline", default="main", help="git ref of the A/B's baseline tree (default main)")
    parser.add_argument("--ratio", type=float, default=0.1, help="baton-otel-sampled's OTEL_TRACES_SAMPLER_ARG (0.1)")
    parser.add_argument("--floor-n", type=int, default=20000, help="spans and records per SDK floor run (20000)")
    parser.add_argument("--floor-runs", type=int, default=3, help="SDK floor runs, the median kept (3)")
    parser.add_argument("--out", type=Path, help="write otel_compare.md in this directory")
    parser.add_argument(
        "--otel-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another variable for baton-otel, e.g. OTEL_TRACES_SAMPLER=parentbased_traceidratio (repeatable)",
    )
    return parser.parse_args(argv)


def servers(python: Path, endpoints: dict[str, str], extra: list[str], ratio: float) -> list[Server]:
    baton = str(python.parent / "baton")
    plain = [k for k in os.environ if k.startswith("OTEL_")]
    off = ["env", *(f"-u{k}" for k in plain)]

    def on(name: str) -> list[str]:
        return [
            *off,
            f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoints[name]}",
            "OTEL_SERVICE_NAME=baton-bench",
            "OTEL_METRIC_EXPORT_INTERVAL=5000",
            *(["OTEL_TRACES_SAMPLER=parentbased_traceidratio", f"OTEL_TRACES_SAMPLER_ARG={ratio}"] * (name == SAMPLED)),
            *extra,
        ]

    serve = [baton, "serve", "examples/everything.py", "--http"]
    return [
        Server(FULL, python, lambda port: [*on(FULL), *serve, f"127.0.0.1:{port}"]),
        Server(OFF, python, lambda port: [*off, *serve, f"127.0.0.1:{port}"]),
        Server(SAMPLED, python, lambda port: [*on(SAMPLED), *serve, f"127.0.0.1:{port}"]),
    ]


def sdk_floor(python: Path, endpoint: str, n: int, runs: int) -> dict[str, float]:
    """The SDK's own CPU on this machine now (bench/otel_inproc.py floor, the median of `runs`), in µs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(PYTHONPATH=str(ROOT / "src"), OTEL_EXPORTER_OTLP_ENDPOINT=endpoint, OTEL_METRIC_EXPORT_INTERVAL="600000")
    figures: dict[str, list[float]] = {}
    for _ in range(runs):
        done = subprocess.run(
            [str(python), str(ROOT / "bench/otel_inproc.py"), "floor", "--n", str(n)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        for key, value in json.loads(done.stdout).items():
            figures.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in figures.items()}


def ab(python: Path, baseline: str, n: int, runs: int) -> dict[str, Any]:
    """CPU per round trip through `server.runtime.handle` in-process, this tree against the baseline's, alternating."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        archive = subprocess.run(["git", "archive", baseline, "src"], cwd=ROOT, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive.stdout, check=True)
        trees = {"this tree": ROOT / "src", f"baseline ({baseline})": base / "src"}
        figures: dict[str, list[float]] = {name: [] for name in trees}
        for i in range(runs):
            for name in list(trees) if i % 2 == 0 else list(trees)[::-1]:
                env = {**os.environ, "PYTHONPATH": str(trees[name])}
                env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
                done = subprocess.run(
                    [str(python), str(ROOT / "bench/otel_ab.py"), "--n", str(n)],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                figures[name].append(json.loads(done.stdout)["us_per_round_trip"])
    medians = {name: statistics.median(values) for name, values in figures.items()}
    this, base_name = list(trees)
    return {"runs": figures, "medians": medians, "ratio": medians[this] / medians[base_name], "baseline": baseline}


def sink_process(python: Path, logs: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(python), str(ROOT / "bench/otlp_sink.py"), str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=(logs / f"otlp_sink-{name}.log").open("wb"),
        start_new_session=True,
    )
    assert proc.stdout is not None
    endpoint = proc.stdout.readline().decode().strip()
    if not endpoint:
        raise SystemExit("bench/otel_compare: the OTLP receiver did not start")
    return proc, endpoint


def ratio_line(label: str, row: dict[str, Any], name: str, c: int, spans: int) -> tuple[list[str], bool]:
    """A table row of one traced server against `baton`, and its PASS or FAIL line."""
    if "ratio" not in row:
        return [f"{label}: no whole set at c={c}: no ratio. **FAIL**"], False
    q1, q2, q3 = row["pair_ratio_quartiles"]
    passed = row["ratio"] <= TARGET and spans > 0  # no span received: tracing was not on, nothing was measured
    failed = row[f"{name}_flows_failed"] + row[f"{OFF}_flows_failed"]
    return [
        f"{label}: c={c}: server CPU per round trip with tracing on <= {TARGET}x tracing off: "
        f"**{'PASS' if passed else 'FAIL'}** ({row['ratio']:.3f}x, {row['pairs_used']} pairs)",
        "",
        f"| c | pairs used | {name} CPU ms/round trip | baton CPU ms/round trip | ratio | pairs' own ratios: min, "
        "quartiles, max | failed flows | spans received |",
        "|---|---|---|---|---|---|---|---|",
        f"| {c} | {row['pairs_used']} of {row['pairs']} | {row[f'{name}_cpu_ms_per_rt']:.4f} | "
        f"{row[f'{OFF}_cpu_ms_per_rt']:.4f} | **{row['ratio']:.3f}** | {row['pair_ratio_min']:.2f}, {q1:.2f} / "
        f"{q2:.2f} / {q3:.2f}, {row['pair_ratio_max']:.2f} | {failed} | {spans} |",
        "",
    ], passed


def floor_lines(floor: dict[str, float], off_ms: float | None, ratio: float) -> list[str]:
    """(c): the SDK's floor per round trip at 100% and at `ratio` sampling, against the budget the target leaves."""
    span, unsampled, histogram = floor["bare_span_us"], floor["unsampled_span_us"], floor["histogram_us"]
    full = span + histogram
    sampled = ratio * span + (1 - ratio) * unsampled + histogram
    if off_ms is None:
        return [f"(c) SDK floor: bare span {span:.1f} µs, histogram record {histogram:.1f} µs; no budget."]
    budget = (TARGET - 1) * off_ms * 1000
    return [
        f"(c) SDK floor, CPU µs (bench/otel_inproc.py floor, this run): bare span + exporter {span:.1f}, "
        f"sampled-out span {unsampled:.1f}, histogram record (2 attributes) {histogram:.1f}. Budget the target "
        f"leaves: {TARGET - 1:.2f} x {off_ms * 1000:.1f} = **{budget:.1f} µs** per round trip. Floor per round "
        f"trip with no attribute at all: (a) {full:.1f} µs = {full / budget:.1f}x the budget, (b) "
        f"{sampled:.1f} µs = {sampled / budget:.1f}x the budget.",
    ]


def report(
    summaries: dict[str, dict[int, dict[str, Any]]],
    opts: argparse.Namespace,
    load: str,
    ab_figures: dict[str, Any] | None,
    spans: dict[str, int],
    floor: dict[str, float],
) -> tuple[str, bool]:
    c = opts.concurrency
    lines = ["## Tracing on over tracing off (bench/otel_compare.py)", ""]
    full_row, sampled_row = summaries[FULL].get(c, {}), summaries[SAMPLED].get(c, {})
    full, _ = ratio_line("(a) 100% sampled", full_row, FULL, c, spans[FULL])
    sampled, passed = ratio_line(f"(b) parentbased_traceidratio {opts.ratio}", sampled_row, SAMPLED, c, spans[SAMPLED])
    off_ms = full_row.get(f"{OFF}_cpu_ms_per_rt") or sampled_row.get(f"{OFF}_cpu_ms_per_rt")
    lines += [*full, *sampled, *floor_lines(floor, off_ms, opts.ratio), ""]
    lines += [
        f"Verdict (protocol.md P68): line (b), **{'PASS' if passed else 'FAIL'}**. Each set is a run of each server "
        f"({opts.pair_n} flows each), back to back; CPU pooled over the sets. Machine load at the end "
        f"(1, 5, 15 min): {load}. The traced servers' own variables: {' '.join(opts.otel_env) or 'none'}.",
    ]
    if ab_figures:
        med = ab_figures["medians"]
        lines += [
            "",
            "In-process A/B of the telemetry-off path, `opentelemetry` unimportable (bench/otel_ab.py, median of "
            f"{len(next(iter(ab_figures['runs'].values())))} runs each, alternating):",
            "",
            *(f"- {name}: {value:.2f} µs CPU per round trip" for name, value in med.items()),
            f"- ratio: **{ab_figures['ratio']:.3f}**",
        ]
    return "\n".join(lines), passed


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    python = opts.python.absolute()
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    sinks = {name: sink_process(python, logs, name) for name in (FULL, SAMPLED)}
    try:
        with stopping(say) as up:
            planned = servers(
                python, {name: endpoint for name, (_, endpoint) in sinks.items()}, opts.otel_env, opts.ratio
            )
            skipped: dict[str, str] = {}
            active = start_smoked(
                planned, logs, opts.start_timeout, lambda s: drive(s, 3, 1, 0, 30), up.started, skipped, say
            )
            if len(active) != len(NAMES):
                say(f"could not start the servers: {skipped}")
                return 2
            by_name = {s.name: s for s in active}
            runs = pairs.measure(
                [opts.concurrency],
                opts.pairs,
                opts.pair_n,
                lambda name, n, c, warmup: drive(by_name[name], n, c, min(warmup, opts.warmup), opts.time_limit),
                say,
                NAMES,
            )
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
        floor = sdk_floor(python, sinks[FULL][1], opts.floor_n, opts.floor_runs)
    finally:
        spans = {}
        for name, (sink, _) in sinks.items():
            sink.terminate()
            out, _ = sink.communicate(timeout=30)
            spans[name] = int(out.decode().split()[-1] or 0) if out.strip() else 0
    summaries = {name: pairs.summarize(runs, (name, OFF)) for name in (FULL, SAMPLED)}
    ab_figures = ab(python, opts.baseline, opts.ab_n, opts.ab_runs) if opts.ab_n else None
    text, passed = report(summaries, opts, load, ab_figures, spans, floor)
    print(text)
    if opts.out:
        opts.out.mkdir(parents=True, exist_ok=True)
        (opts.out / "otel_compare.md").write_text(text + "\n")
    if opts.json:
        summary = {name: list(rows.values()) for name, rows in summaries.items()}
        opts.json.write_text(
            json.dumps(
                {"summary": summary, "runs": runs, "floor": floor, "spans": spans, "ab": ab_figures, "at": time.time()},
                indent=1,
            )
        )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
