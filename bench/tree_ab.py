"""Baton against an older Baton over HTTP: the same `baton serve examples/everything.py` from this tree and from a
git ref's tree, each in a process of its own on uvicorn, driven by bench/load.py in pairs (bench/pairs.py: short
runs side by side, who goes first alternating, server CPU pooled over all of them), at each concurrency level.

The ref's `src` and `examples` come from `git archive`; its server runs on this venv's packages with its own
`src` first on ``PYTHONPATH``. This is the HTTP counterpart of bench/otel_ab.py (in-process, no transport):
between the two, a change in cost is placed in the transport or in the dispatch.

    bench/tree_ab.py --ref 1a79968 -c 1,16 --pairs 20 --pair-n 600

Prints, per level, each tree's pooled server CPU per round trip and their ratio (this tree over the ref);
``--json PATH`` also writes them to a file.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pairs
from options import OneLineParser, int_list, setup_options
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

THIS, REF = "this tree", "ref"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    setup_options(parser, "the Python whose baton serves (default .venv)", "logs (default .cache/bench)", "seconds")
    parser.add_argument("--ref", required=True, help="the git ref to compare this tree with, e.g. 1a79968")
    parser.add_argument("-c", "--concurrency", type=int_list, default=[1, 16], help="levels (default 1,16)")
    parser.add_argument("--pairs", type=int, default=20, help="pairs per level (default 20)")
    parser.add_argument("--pair-n", type=int, default=600, help="measured flows per paired run (default 600)")
    parser.add_argument("--time-limit", type=float, default=120)
    parser.add_argument(
        "--trace-ratio",
        type=float,
        metavar="R",
        help="trace both servers, head sampling at R (parentbased_traceidratio; 0: every flow sampled out), each "
        "exporting to an OTLP receiver of its own (default: tracing off in both)",
    )
    opts = parser.parse_args(argv)
    if opts.pairs < 1 or opts.pair_n < 1:
        parser.error("--pairs and --pair-n must be at least 1")
    if opts.trace_ratio is not None and not 0 <= opts.trace_ratio <= 1:
        parser.error("--trace-ratio must be between 0 and 1")
    return opts


def servers(python: Path, ref_tree: Path, endpoints: dict[str, str], ratio: float | None) -> list[Server]:
    """Each tree's `baton serve`, tracing off, or traced at `ratio` into its own receiver (`endpoints`)."""
    baton = str(python.parent / "baton")
    plain = untraced_env()

    def traced(name: str) -> list[str]:
        return [] if ratio is None else traced_env(endpoints[name], "parentbased_traceidratio", str(ratio))

    def serve(name: str, tree: Path) -> Any:
        path = ["PYTHONPATH=" + str(tree / "src")]
        return lambda port: [
            *plain,
            *traced(name),
            *path,
            baton,
            "serve",
            str(tree / "examples/everything.py"),
            "--http",
            f"127.0.0.1:{port}",
        ]

    return [Server(THIS, python, serve(THIS, ROOT)), Server(REF, python, serve(REF, ref_tree))]


def main(argv: list[str] | None = None) -> int:
    return run_stoppable(run, parse_args(argv), say)


def run(opts: argparse.Namespace) -> int:
    python = opts.python.absolute()
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    runs: list[dict[str, Any]] = []
    sinks: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp, stopping(say) as up:
            try:
                ref_tree = git_tree(opts.ref, Path(tmp), "src", "examples")
                if opts.trace_ratio is not None:
                    for name in (THIS, REF):
                        sinks[name] = start_sink(python, logs, name.replace(" ", "-"))
            except Skip as exc:
                say(f"tree_ab: {exc}")
                return 2
            skipped: dict[str, str] = {}
            active = start_smoked(
                servers(python, ref_tree, {n: sink[1] for n, sink in sinks.items()}, opts.trace_ratio),
                logs,
                opts.start_timeout,
                lambda s: drive(s, 3, 1, 0, 30),
                up.started,
                skipped,
                say,
            )
            if len(active) != 2:
                say(f"tree_ab: could not start both servers: {skipped}")
                return 2
            by_name = {s.name: s for s in active}
            runs += pairs.measure(
                opts.concurrency,
                opts.pairs,
                opts.pair_n,
                lambda name, n, c, warmup: drive(by_name[name], n, c, warmup, opts.time_limit),
                say,
                (THIS, REF),
            )
    finally:
        spans = stop_sinks(sinks)  # the servers are stopped: their last export is in
    if up.signum:  # stopped: pairs.measure keeps its runs to itself until it returns
        return 128 + up.signum
    summary = pairs.summarize(runs, (THIS, REF))
    figures: dict[str, Any] = {"ref": opts.ref, "trace_ratio": opts.trace_ratio, "spans": spans, "levels": {}}
    for level, row in summary.items():
        if "ratio" not in row:
            continue
        figures["levels"][str(level)] = {
            "this_us_per_round_trip": row[f"{THIS}_cpu_ms_per_rt"] * 1000,
            "ref_us_per_round_trip": row[f"{REF}_cpu_ms_per_rt"] * 1000,
            "ratio": row["ratio"],
            "pairs_used": row["pairs_used"],
            "pair_ratio_quartiles": row["pair_ratio_quartiles"],
        }
    if opts.json is not None:
        opts.json.write_text(json.dumps(figures, indent=1))
    traced = "tracing off" if opts.trace_ratio is None else f"traced, head sampling at {opts.trace_ratio:g}"
    print(f"Baton server CPU per round trip, this tree against {opts.ref}, {traced} (pooled pairs, bench/tree_ab.py):")
    for level, row in figures["levels"].items():
        q1, q2, q3 = row["pair_ratio_quartiles"]
        print(
            f"  c={level}: {row['this_us_per_round_trip']:.1f} µs against {row['ref_us_per_round_trip']:.1f} µs, "
            f"ratio {row['ratio']:.3f} (pairs' quartiles {q1:.2f} / {q2:.2f} / {q3:.2f}, {row['pairs_used']} pairs)"
        )
    if sinks:
        print("  spans received: " + ", ".join(f"{name} {count}" for name, count in spans.items()))
        if opts.trace_ratio and not all(spans.values()):
            say("tree_ab: a traced server exported no span: its figures are not those of a traced server")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
