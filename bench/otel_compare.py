"""Server CPU per two-round MRTR flow with tracing on, against tracing off and against mcp 2.3.0 traced, from paired
short runs at c=1 and c=16 in one run, beside the OpenTelemetry SDK's own floor (issue 27, measurements.md P68).

The flow is bench/load.py's (what bench/compare drives): a ``tools/call`` of ``perform`` that asks one confirmation,
answered on the retry. Eight servers, each on loopback:

- ``floor``: bench/floor.py, the bare ASGI app (no OpenTelemetry); ``floor-sampled-out``: the same with
  ``--otel``, every request sampled out: what the SDK itself costs a request that is not recorded (one span
  started through it and made current, one histogram point), with none of Baton's code; ``floor-span-only``: the
  same with ``OTEL_METRICS_EXPORTER=none``, the span alone;
- ``baton``: ``baton serve examples/everything.py``, no OpenTelemetry variable (tracing off);
- ``baton-sampled-out``: the same with ``OTEL_TRACES_SAMPLER=parentbased_traceidratio``, ``..._ARG=0`` (every
  flow sampled out; metrics still exported);
- ``baton-10pct``: ratio 0.1; ``baton-100pct``: ``parentbased_always_on`` (every request sampled);
- ``mcp-otel``: peers/mcp_server.py (mcp 2.3.0, whose ``OpenTelemetryMiddleware`` spans every request) started by
  bench/otel_mcp_server.py, the SDK set up for traces as ``baton serve`` sets it up, ``parentbased_always_on``,
  in its own venv (bench/venvs.py ``mcp-otel``) with the SDK and OTLP/HTTP exporter pinned to the versions in
  Baton's venv, read at run time. mcp records no metrics; Baton's traced servers export theirs every 5 s.

Each traced server exports over OTLP/HTTP to a bench/otlp_sink.py process of its own; a traced sink that received no
span (sampled-out ones excepted) makes the run invalid. The runs are bench/pairs.py's, eight to a set in the order
``floor-span-only, floor-sampled-out, floor, sampled-out, baton, 10pct, 100pct, mcp-otel``, then reversed (each
floor beside the other, tracing off beside the sampled-out and 10% servers, Baton 100% beside mcp), ``--pairs`` sets
at each of c=1 and c=16, CPU pooled over the sets in which every server measured. Targets (issue 27), each a PASS or
FAIL line at c=1 and at c=16: sampled-out at most +20 µs per flow over off (+10 per round); 10% at most 1.25x off;
Baton 100% at most 1/4 of mcp 100%.

Then, as before: the SDK's floor on this machine (bench/otel_inproc.py floor, ``--floor-runs``, 0 skips it) and an
in-process A/B of the telemetry-off path (bench/otel_ab.py) on this tree and on ``--baseline`` (``--ab-n``, 0 skips
it).

Output: the Markdown report on stdout (and ``otel_compare.md`` under ``--out``); with ``--json`` and no PATH,
instead, exactly one JSON object on stdout, progress on stderr; ``--json PATH`` writes it to PATH beside the report.
JSON figures are server CPU µs per two-round flow unless a ratio; ``off_us``, ``sampled_out_us``,
``baton_traced_us`` (Baton 100%) and ``mcp_traced_us`` (mcp 100%) are at c=16, each also with ``_c1`` and ``_c16``;
``sampled_out_extra_us_c*`` is Baton's sampled-out flow over off, ``sdk_sampled_out_extra_us_c*`` the traced floor's
over the bare one (the SDK's own share), ``sdk_span_extra_us_c*`` the span-only floor's. Exit status: 0 every target
met, 1 one missed (or the run is invalid), 2 bad arguments or the servers could not start, 130 on Ctrl-C.

    bench/otel_compare.py --json --pairs 6 --pair-n 400
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pairs
from options import STDOUT, OneLineParser, setup_options
from processes import (
    ROOT,
    Server,
    Skip,
    git_tree,
    run_stoppable,
    say,
    start_sink,
    stop_sinks,
    stopping,
    traced_env,
    untraced_env,
)
from runs import drive, start_smoked
from venvs import OTEL_PACKAGES, ensure_venv, stack_versions

OFF, SAMPLED_OUT, PCT10, PCT100, MCP = "baton", "baton-sampled-out", "baton-10pct", "baton-100pct", "mcp-otel"
FLOOR, FLOOR_OUT, FLOOR_SPAN = "floor", "floor-sampled-out", "floor-span-only"
NAMES = (FLOOR_SPAN, FLOOR_OUT, FLOOR, SAMPLED_OUT, OFF, PCT10, PCT100, MCP)
"""Run in this order, then reversed: each comparison's two servers side by side, but 100% against off."""
SERVICES = {MCP: "mcp", FLOOR_OUT: "floor", FLOOR_SPAN: "floor"}
"""`service.name` of each traced server but Baton's (`baton-bench`), with `-bench` after it."""
SAMPLERS = {
    FLOOR_SPAN: ("parentbased_traceidratio", "0"),
    FLOOR_OUT: ("parentbased_traceidratio", "0"),
    SAMPLED_OUT: ("parentbased_traceidratio", "0"),
    PCT10: ("parentbased_traceidratio", "0.1"),
    PCT100: ("parentbased_always_on", ""),
    MCP: ("parentbased_always_on", ""),
}
LEVELS = (1, 16)
HEADLINE = 16
"""The level of the figures without a ``_c`` suffix."""
SAMPLED_OUT_EXTRA_US = 20.0  # per two-round flow: 10 µs per round
RATIO_10PCT = 1.25
BATON_OVER_MCP = 0.25
VERSION_PACKAGES = ("mcp-baton", "mcp", *OTEL_PACKAGES, "opentelemetry-api", "uvicorn")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = OneLineParser(
        prog="bench/otel_compare.py", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    setup_options(
        parser,
        "the Python whose baton serves (default .venv)",
        "peer venvs and logs (default .cache/bench)",
        "seconds for a server to listen",
        json_stdout=True,
    )
    parser.add_argument("--pairs", type=int, default=pairs.PAIRS, help=f"sets of runs per level ({pairs.PAIRS})")
    parser.add_argument("--pair-n", type=int, default=pairs.PAIR_N, help=f"flows per run ({pairs.PAIR_N})")
    parser.add_argument("--warmup", type=int, default=pairs.PAIR_WARMUP, help="unmeasured flows before each run")
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument("--ab-n", type=int, default=3000, help="flows per in-process A/B run (0: skip the A/B)")
    parser.add_argument("--ab-runs", type=int, default=5, help="A/B runs of each tree, alternating")
    parser.add_argument("--baseline", default="main", help="git ref of the A/B's baseline tree (default main)")
    parser.add_argument("--floor-n", type=int, default=20000, help="spans and records per SDK floor run (20000)")
    parser.add_argument("--floor-runs", type=int, default=3, help="SDK floor runs, the median kept (3; 0: skip)")
    parser.add_argument("--out", type=Path, help="write otel_compare.md in this directory")
    parser.add_argument(
        "--otel-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="another variable for every traced server, e.g. OTEL_BSP_SCHEDULE_DELAY=100 (repeatable)",
    )
    opts = parser.parse_args(argv)
    if opts.pairs < 1 or opts.pair_n < 1 or opts.warmup < 0 or min(opts.ab_n, opts.floor_runs, opts.floor_n) < 0:
        parser.error("--pairs and --pair-n must be >= 1; --warmup, --ab-n, --floor-n and --floor-runs >= 0")
    if any("=" not in item for item in opts.otel_env):
        parser.error("--otel-env takes NAME=VALUE")
    return opts


def servers(python: Path, mcp_python: Path, endpoints: dict[str, str], extra: list[str]) -> list[Server]:
    """The servers (`NAMES`): the floors, `baton serve` with tracing off or at a sampler, and mcp traced
    (otel_mcp_server.py)."""
    off = untraced_env()

    def on(name: str) -> list[str]:
        return [
            *off,
            *traced_env(endpoints[name], *SAMPLERS[name]),
            f"OTEL_SERVICE_NAME={SERVICES.get(name, 'baton')}-bench",
            *(["OTEL_METRICS_EXPORTER=none"] if name == FLOOR_SPAN else []),
            *extra,
        ]

    serve = [str(python.parent / "baton"), "serve", "examples/everything.py", "--http"]
    launcher = [str(mcp_python), "bench/otel_mcp_server.py", "--json"]  # JSON responses, as bench/compare asks

    def argv(name: str) -> Callable[[int], list[str]]:
        if name == FLOOR:
            return lambda port: [*off, str(python), "bench/floor.py", "--port", str(port)]
        if name in (FLOOR_OUT, FLOOR_SPAN):
            return lambda port: [*on(name), str(python), "bench/floor.py", "--otel", "--port", str(port)]
        if name == OFF:
            return lambda port: [*off, *serve, f"127.0.0.1:{port}"]
        if name == MCP:
            return lambda port: [*on(name), *launcher, "--port", str(port)]
        return lambda port: [*on(name), *serve, f"127.0.0.1:{port}"]

    return [Server(name, mcp_python if name == MCP else python, argv(name)) for name in NAMES]


def sdk_floor(python: Path, logs: Path, n: int, runs: int) -> dict[str, float]:
    """The SDK's own CPU on this machine now (bench/otel_inproc.py floor, the median of `runs`), in µs, exporting
    to a receiver of its own."""
    sink = {"floor": start_sink(python, logs, "floor")}
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env.update(PYTHONPATH=str(ROOT / "src"), OTEL_EXPORTER_OTLP_ENDPOINT=sink["floor"][1])
    env.update(OTEL_METRIC_EXPORT_INTERVAL="600000")
    figures: dict[str, list[float]] = {}
    try:
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
    finally:
        stop_sinks(sink)
    return {key: statistics.median(values) for key, values in figures.items()}


def ab(python: Path, baseline: str, n: int, runs: int) -> dict[str, Any]:
    """CPU per round trip through `server.runtime.handle` in-process, this tree against the baseline's, alternating."""
    with tempfile.TemporaryDirectory() as tmp:
        base = git_tree(baseline, Path(tmp), "src")
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


def whole_sets(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The runs of the sets in which every server measured two-round flows, none failing: all figures pool the same
    sets."""
    by_set: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for r in runs:
        by_set.setdefault((r["concurrency"], r["pair"]), []).append(r)

    def good(r: dict[str, Any]) -> bool:
        return "fatal" not in r and bool(r.get("requests")) and not r["flows_failed"] and r["rounds_per_flow"] == 2

    return [r for group in by_set.values() if len(group) == len(NAMES) and all(map(good, group)) for r in group]


def figures(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON figures: pooled server CPU µs per flow and the ratios, at each level and (unsuffixed) at HEADLINE."""
    used = whole_sets(runs)
    compared = [(name, OFF) for name in (SAMPLED_OUT, PCT10, PCT100)] + [
        (PCT100, MCP),
        (FLOOR_OUT, FLOOR),
        (FLOOR_SPAN, FLOOR),
    ]
    by_pair = {pair: pairs.summarize(used, pair) for pair in compared}  # each covers every level
    out: dict[str, Any] = {}
    for c in LEVELS:
        vs_off = {name: by_pair[name, OFF].get(c, {}) for name in (SAMPLED_OUT, PCT10, PCT100)}
        vs_mcp = by_pair[PCT100, MCP].get(c, {})
        vs_floor = by_pair[FLOOR_OUT, FLOOR].get(c, {})
        vs_span = by_pair[FLOOR_SPAN, FLOOR].get(c, {})

        def us(row: dict[str, Any], name: str) -> float | None:
            value = row.get(f"{name}_cpu_ms_per_flow")
            return round(value * 1000, 2) if value is not None else None

        def ratio(row: dict[str, Any]) -> float | None:
            return round(row["ratio"], 4) if "ratio" in row else None

        level = {
            "off_us": us(vs_off[SAMPLED_OUT], OFF),
            "sampled_out_us": us(vs_off[SAMPLED_OUT], SAMPLED_OUT),
            "baton_10pct_us": us(vs_off[PCT10], PCT10),
            "baton_traced_us": us(vs_mcp, PCT100),
            "mcp_traced_us": us(vs_mcp, MCP),
            "ratio_sampled_out": ratio(vs_off[SAMPLED_OUT]),
            "ratio_10pct": ratio(vs_off[PCT10]),
            "ratio_100pct": ratio(vs_off[PCT100]),
            "baton_over_mcp_traced": ratio(vs_mcp),
            "floor_us": us(vs_floor, FLOOR),
            "floor_sampled_out_us": us(vs_floor, FLOOR_OUT),
            "ratio_floor_sampled_out": ratio(vs_floor),
            "floor_span_only_us": us(vs_span, FLOOR_SPAN),
        }
        for extra, traced, untraced in (
            ("sampled_out_extra_us", "sampled_out_us", "off_us"),
            ("sdk_sampled_out_extra_us", "floor_sampled_out_us", "floor_us"),
            ("sdk_span_extra_us", "floor_span_only_us", "floor_us"),
        ):
            on_us, off_us = level[traced], level[untraced]
            level[extra] = round(on_us - off_us, 2) if on_us is not None and off_us is not None else None
        out.update({f"{key}_c{c}": value for key, value in level.items()})
        out[f"sets_used_c{c}"] = vs_mcp.get("pairs_used", 0)
        if c == HEADLINE:
            out.update({key: level[key] for key in ("off_us", "sampled_out_us", "baton_traced_us", "mcp_traced_us")})
    return out


def checks(found: dict[str, Any], spans: dict[str, int]) -> list[dict[str, Any]]:
    """The issue's targets at each level, and the run's validity (spans at every traced sink but sampled-out's)."""
    rows = []
    for c in LEVELS:
        for target, key, limit, unit in (
            (f"sampled-out: server CPU per flow over off <= +{SAMPLED_OUT_EXTRA_US:g} µs", "sampled_out_extra_us",
             SAMPLED_OUT_EXTRA_US, " µs"),
            (f"10% sampled: server CPU per flow <= {RATIO_10PCT}x off", "ratio_10pct", RATIO_10PCT, "x"),
            (f"Baton 100% <= {BATON_OVER_MCP}x mcp 2.3.0 100%", "baton_over_mcp_traced", BATON_OVER_MCP, "x"),
        ):  # fmt: skip
            value = found[f"{key}_c{c}"]
            status = "PASS" if value is not None and value <= limit else "FAIL"
            rows.append({"target": f"c={c}: {target}", "value": value, "unit": unit, "status": status})
    silent = [name for name in (PCT10, PCT100, MCP) if not spans.get(name)]
    rows.append(
        {
            "target": "spans reached every traced sink (sampled-out's may get none)",
            "value": ", ".join(f"{name} {spans.get(name, 0)}" for name in SAMPLERS),
            "unit": "",
            "status": "FAIL" if silent else "PASS",
        }
    )
    return rows


def floor_lines(floor: dict[str, float], off_us: float | None) -> list[str]:
    """The SDK's own floor per two-round flow, beside what the targets leave for it."""
    if not floor:
        return []
    span, unsampled, histogram = floor["bare_span_us"], floor["unsampled_span_us"], floor["histogram_us"]
    budget = f"{(RATIO_10PCT - 1) * off_us:.1f}" if off_us else "?"
    return [
        f"SDK floor, CPU µs (bench/otel_inproc.py floor, this run): bare span + exporter {span:.1f}, sampled-out "
        f"span {unsampled:.1f}, histogram record (2 attributes) {histogram:.1f}. Per two-round flow with no "
        f"attribute at all: sampled-out {2 * (unsampled + histogram):.1f} (budget +{SAMPLED_OUT_EXTRA_US:g}), 10% "
        f"{2 * (0.1 * span + 0.9 * unsampled + histogram):.1f} (budget {RATIO_10PCT - 1:.2f} x off = {budget}), "
        f"100% {2 * (span + histogram):.1f}.",
    ]


def fmt(value: float | None, spec: str) -> str:
    return "\u2013" if value is None else format(value, spec)


def report(doc: dict[str, Any], opts: argparse.Namespace) -> str:
    lines = ["## Tracing cost per two-round MRTR flow (bench/otel_compare.py)", ""]
    lines += [
        "| server | spans received | " + " | ".join(f"c={c} CPU µs/flow | c={c} / off" for c in LEVELS) + " |",
        "|---|---|" + "---|---|" * len(LEVELS),
    ]
    rows = {
        FLOOR: ("floor_us", None),
        FLOOR_OUT: ("floor_sampled_out_us", "ratio_floor_sampled_out"),
        FLOOR_SPAN: ("floor_span_only_us", None),
        OFF: ("off_us", None),
        SAMPLED_OUT: ("sampled_out_us", "ratio_sampled_out"),
        PCT10: ("baton_10pct_us", "ratio_10pct"),
        PCT100: ("baton_traced_us", "ratio_100pct"),
        MCP: ("mcp_traced_us", None),
    }
    for name, (us, ratio) in rows.items():
        cells = [
            f"{fmt(doc[f'{us}_c{c}'], '.1f')} | {fmt(doc[f'{ratio}_c{c}'], '.3f') if ratio else ''}" for c in LEVELS
        ]
        spans = "" if name in (OFF, FLOOR) else str(doc["spans"].get(name, 0))
        lines.append(f"| {name} | {spans} | " + " | ".join(cells) + " |")
    lines += ["", "### Targets (issue 27)", ""]
    for row in doc["checks"]:
        value = (
            row["value"] if isinstance(row["value"], str) else fmt(row["value"], ".3f" if row["unit"] == "x" else ".1f")
        )
        lines.append(f"- {row['target']}: **{row['status']}** ({value}{row['unit']})")
    sdk = ", ".join(
        f"c={c}: {fmt(doc[f'sdk_sampled_out_extra_us_c{c}'], '+.1f')} µs, the span alone "
        f"{fmt(doc[f'sdk_span_extra_us_c{c}'], '+.1f')} (Baton: {fmt(doc[f'sampled_out_extra_us_c{c}'], '+.1f')})"
        for c in LEVELS
    )
    lines += [
        "",
        "What the SDK itself adds to a sampled-out request, live: bench/floor.py --otel (one SDK span, current while "
        f"it answers, one histogram point through the SDK; the span alone with no meter provider) over bench/floor.py, "
        f"per two-round flow: {sdk}.",
    ]
    lines += ["", *floor_lines(doc["floor"], doc.get(f"off_us_c{HEADLINE}")), ""]
    sets = ", ".join(f"c={c}: {doc[f'sets_used_c{c}']} of {opts.pairs}" for c in LEVELS)
    lines += [
        f"Each set is one run of each server ({opts.pair_n} flows each, after {opts.warmup} unmeasured), back to "
        f"back; CPU pooled over the sets in which every server measured ({sets}). Baton's traced servers also "
        "export metrics (every 5 s); mcp records none. Machine load at the end (1, 5, 15 min): "
        f"{', '.join(f'{x:.2f}' for x in doc['load'])}. Versions: "
        + "; ".join(f"{name}: {' '.join(f'{k} {v}' for k, v in vs.items())}" for name, vs in doc["versions"].items())
        + f". The traced servers' own variables: {' '.join(opts.otel_env) or 'none'}.",
    ]
    if doc["ab"]:
        med = doc["ab"]["medians"]
        lines += [
            "",
            "In-process A/B of the telemetry-off path, `opentelemetry` unimportable (bench/otel_ab.py, median of "
            f"{len(next(iter(doc['ab']['runs'].values())))} runs each, alternating):",
            "",
            *(f"- {name}: {value:.2f} µs CPU per round trip" for name, value in med.items()),
            f"- ratio: **{doc['ab']['ratio']:.3f}**",
        ]
    return "\n".join(lines)


def run(opts: argparse.Namespace) -> int:
    python = opts.python.absolute()
    logs = opts.cache.absolute() / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    versions = {OFF: stack_versions(python, VERSION_PACKAGES)}
    if set(OTEL_PACKAGES) - set(versions[OFF]):
        say(f"{python} has no {' or '.join(OTEL_PACKAGES)}: install Baton with its otel extra (./dev setup)")
        return 2
    try:
        pins = {"sdk": versions[OFF][OTEL_PACKAGES[0]], "exporter": versions[OFF][OTEL_PACKAGES[1]]}
        mcp_python = ensure_venv(opts.cache.absolute(), MCP, **pins)
    except Skip as exc:
        say(f"{MCP}: {exc}")
        return 2
    versions[MCP] = stack_versions(mcp_python, VERSION_PACKAGES)
    sinks: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    runs: list[dict[str, Any]] = []
    try:
        with stopping(say) as up:
            for name in SAMPLERS:
                sinks[name] = start_sink(python, logs, name)
            planned = servers(python, mcp_python, {name: sink[1] for name, sink in sinks.items()}, opts.otel_env)
            skipped: dict[str, str] = {}
            active = start_smoked(
                planned, logs, opts.start_timeout, lambda s: drive(s, 3, 1, 0, 30), up.started, skipped, say
            )
            if len(active) != len(NAMES):
                say(f"could not start the servers: {skipped}")
                return 2
            by_name = {s.name: s for s in active}
            runs = pairs.measure(
                list(LEVELS),
                opts.pairs,
                opts.pair_n,
                lambda name, n, c, warmup: drive(by_name[name], n, c, warmup, opts.time_limit),
                say,
                NAMES,
                opts.warmup,
            )
            load = os.getloadavg()
    except Skip as exc:
        say(str(exc))
        return 2
    finally:
        spans = stop_sinks(sinks)  # the servers are stopped, their last spans exported
    if up.signum:
        say(f"stopped before the end: no figures (the receivers got {spans} spans)")
        return 128 + up.signum
    try:
        floor = sdk_floor(python, logs, opts.floor_n, opts.floor_runs) if opts.floor_runs else {}
        ab_figures = ab(python, opts.baseline, opts.ab_n, opts.ab_runs) if opts.ab_n else None
    except (Skip, subprocess.CalledProcessError) as exc:
        stderr = getattr(exc, "stderr", "") or ""
        say(f"{exc} {stderr.decode(errors='replace') if isinstance(stderr, bytes) else stderr}".strip()[-500:])
        return 1
    doc = {**figures(runs), "spans": spans, "load": [round(x, 2) for x in load], "versions": versions}
    doc.update(checks=checks(doc, spans), floor=floor, ab=ab_figures, pairs=opts.pairs, pair_n=opts.pair_n)
    doc.update(valid=doc["checks"][-1]["status"] == "PASS", at=time.time(), runs=runs)
    passed = all(row["status"] == "PASS" for row in doc["checks"])
    text = report(doc, opts)
    if opts.out:
        opts.out.mkdir(parents=True, exist_ok=True)
        (opts.out / "otel_compare.md").write_text(text + "\n")
    if opts.json == STDOUT:
        print(json.dumps(doc))
    else:
        print(text)
        if opts.json:
            opts.json.write_text(json.dumps(doc, indent=1))
    return 0 if passed else 1


def main(argv: list[str] | None = None) -> int:
    return run_stoppable(run, parse_args(argv), say)


if __name__ == "__main__":
    sys.exit(main())
