"""Baton's server CPU per MRTR round trip with tracing on over tracing off, from paired short runs.

Two ``baton serve examples/everything.py`` processes: ``baton`` (no OpenTelemetry variable: telemetry off)
and ``baton-otel`` (``OTEL_EXPORTER_OTLP_ENDPOINT`` at a real OTLP/HTTP receiver, bench/otlp_sink.py, in a
process of its own: the SDK's ``BatchSpanProcessor`` and OTLP/HTTP exporters for traces and metrics). The
pairs are bench/pairs.py's (who goes first alternates; CPU pooled over all pairs), at ``-c`` (16); the target
is a ratio of at most 1.15. Then an in-process A/B of the telemetry-off path (bench/otel_ab.py) on this tree
and on ``--baseline`` (a git ref, default ``main``), with OpenTelemetry unimportable. Writes
``otel_compare.md`` under ``--out``; exit status 1 when the target is missed.

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

NAMES = ("baton-otel", "baton")
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
    parser.add_argument("--out", type=Path, help="write otel_compare.md in this directory")
    parser.add_argument(
        "--otel-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another variable for baton-otel, e.g. OTEL_TRACES_SAMPLER=parentbased_traceidratio (repeatable)",
    )
    return parser.parse_args(argv)


def servers(python: Path, endpoint: str, extra: list[str]) -> list[Server]:
    baton = str(python.parent / "baton")
    plain = [k for k in os.environ if k.startswith("OTEL_")]
    off = ["env", *(f"-u{k}" for k in plain)]
    on = [
        *off,
        f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}",
        "OTEL_SERVICE_NAME=baton-bench",
        "OTEL_METRIC_EXPORT_INTERVAL=5000",
        *extra,
    ]
    serve = [baton, "serve", "examples/everything.py", "--http"]
    return [
        Server("baton-otel", python, lambda port: [*on, *serve, f"127.0.0.1:{port}"]),
        Server("baton", python, lambda port: [*off, *serve, f"127.0.0.1:{port}"]),
    ]


def ab(python: Path, baseline: str, n: int, runs: int) -> dict[str, Any]:
    """CPU per round trip through `Server.handle` in-process, this tree against the baseline's, alternating."""
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


def sink_process(python: Path, logs: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    proc = subprocess.Popen(
        [str(python), str(ROOT / "bench/otlp_sink.py"), str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=(logs / "otlp_sink.log").open("wb"),
        start_new_session=True,
    )
    assert proc.stdout is not None
    endpoint = proc.stdout.readline().decode().strip()
    if not endpoint:
        raise SystemExit("bench/otel_compare: the OTLP receiver did not start")
    return proc, endpoint


def report(
    summary: dict[int, dict[str, Any]],
    opts: argparse.Namespace,
    load: str,
    ab_figures: dict[str, Any] | None,
    spans: int,
) -> tuple[str, bool]:
    row = summary.get(opts.concurrency, {})
    lines = ["## Tracing on over tracing off (bench/otel_compare.py)", ""]
    if "ratio" not in row:
        lines += [f"No whole pair at c={opts.concurrency}: no ratio. **FAIL**"]
        return "\n".join(lines), False
    q1, q2, q3 = row["pair_ratio_quartiles"]
    passed = row["ratio"] <= TARGET and spans > 0  # no span received: tracing was not on, nothing was measured
    failed = row["baton-otel_flows_failed"] + row["baton_flows_failed"]
    lines += [
        "| c | pairs used | baton-otel CPU ms/round trip | baton CPU ms/round trip | ratio | pairs' own ratios: min, "
        "quartiles, max | failed flows |",
        "|---|---|---|---|---|---|---|",
        f"| {opts.concurrency} | {row['pairs_used']} of {row['pairs']} | {row['baton-otel_cpu_ms_per_rt']:.4f} | "
        f"{row['baton_cpu_ms_per_rt']:.4f} | **{row['ratio']:.3f}** | {row['pair_ratio_min']:.2f}, {q1:.2f} / "
        f"{q2:.2f} / {q3:.2f}, {row['pair_ratio_max']:.2f} | {failed} |",
        "",
        f"c={opts.concurrency}: server CPU per round trip with tracing on <= {TARGET}x tracing off: "
        f"**{'PASS' if passed else 'FAIL'}** ({row['ratio']:.3f}x, {row['pairs_used']} pairs of {opts.pair_n} flows)",
        "",
        f"Spans the OTLP/HTTP receiver decoded from baton-otel: {spans}. Machine load at the end of the pairs "
        f"(1, 5, 15 min): {load}. baton-otel's own variables: {' '.join(opts.otel_env) or 'none'}.",
    ]
    if ab_figures:
        med = ab_figures["medians"]
        lines += [
            "",
            "In-process A/B of the telemetry-off path, `opentelemetry` unimportable (bench/otel_ab.py, median of "
            f"{len(next(iter(ab_figures['runs'].values())))} runs each, alternating):",
            "",
            *(f"- {name}: {value:.2f} \u00b5s CPU per round trip" for name, value in med.items()),
            f"- ratio: **{ab_figures['ratio']:.3f}**",
        ]
    return "\n".join(lines), passed


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    python = opts.python.absolute()
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    sink, endpoint = sink_process(python, logs)
    try:
        with stopping(say) as up:
            planned = servers(python, endpoint, opts.otel_env)
            skipped: dict[str, str] = {}
            active = start_smoked(
                planned, logs, opts.start_timeout, lambda s: drive(s, 3, 1, 0, 30), up.started, skipped, say
            )
            if len(active) != 2:
                say(f"could not start both servers: {skipped}")
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
    finally:
        sink.terminate()
        out, _ = sink.communicate(timeout=10)
    spans = int(out.decode().strip() or 0)
    summary = pairs.summarize(runs, NAMES)
    ab_figures = ab(python, opts.baseline, opts.ab_n, opts.ab_runs) if opts.ab_n else None
    text, passed = report(summary, opts, load, ab_figures, spans)
    print(text)
    if opts.out:
        opts.out.mkdir(parents=True, exist_ok=True)
        (opts.out / "otel_compare.md").write_text(text + "\n")
    if opts.json:
        opts.json.write_text(
            json.dumps({"summary": list(summary.values()), "runs": runs, "ab": ab_figures, "at": time.time()}, indent=1)
        )
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
