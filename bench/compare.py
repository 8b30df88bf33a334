"""Compare Baton with the floor, mcp 2.3.0 and FastMCP 4.1.6 on the MRTR flow, in one run: servers, imports, clients.

In one command, on this machine:

1. Import time of each library, in its server's own venv: a fresh ``python -c "<the server module's imports>"``
   minus a fresh ``python -c pass``, the median of ``--import-runs`` (7), taken before any server starts.
2. The servers: each on a free 127.0.0.1 port, driven by bench/load.py in turn (runs interleaved across
   servers, ``--repeat`` times at every concurrency level: 1, 16 and 64 by default). Flows/s, p50/p99, server
   CPU per flow and per round trip (a flow is two ``tools/call`` round trips), RSS before and after, and the
   size of the ``requestState`` each server returns. Then, at c=1 and c=16, ``--pairs`` (30) short runs of Baton
   and of the floor back to back, whose pooled CPU gives the ratio the floor checks use (see bench/pairs.py).
3. The clients: bench/client_compare's measurement (its functions, not a copy), Baton's client beside the
   mcp 2.3.0 client against Baton's server, client CPU per flow and per round trip.

It prints a Markdown report and writes it to ``--out``/compare.md (bench/results/ by default), with a PNG chart
of the ratios (matplotlib) beside it, and checks Baton's targets, each a PASS or FAIL line: at c=1 and c=16,
server CPU per round trip at most 1.6x the floor's and at most 1/8 of mcp 2.3.0's; flows/s at c=16 at least
10x mcp 2.3.0's; import time at most 1/4 of mcp 2.3.0's; the one-question flow's ``requestState`` under 120
bytes; and client_compare's client target. c=64 is reported, not checked. The peer venvs are created under
``.cache/bench/`` on first use. Every server is stopped at the end, also on Ctrl-C or an error.

Run it through ``bench/compare``, which uses the project's ``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import chart
import client_compare
import guard
import pairs
from import_time import import_times
from lineup import IMPORTS, LABELS, SERVER_ORDER, plan_servers
from options import int_list, level_args, level_parser, per_level, setup_options
from processes import ROOT, run_stoppable, say, stopping
from report import check_line, finish, git_state, heading, informational, markdown, per_server_markdown, versions_text
from runs import drive, measure, start_smoked
from stats import ratios, server_figures, summarize
from targets import CPU_CHECK_LEVELS, target_checks


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = level_parser(
        "bench/compare",
        __doc__,
        SERVER_ORDER,
        2000,
        only="servers to run, comma-separated, from baton,floor,mcp,fastmcp (default all); the client comparison "
        "runs the clients of those among baton and mcp, and import times are taken for baton, mcp and fastmcp",
        repeat="runs per server (and client) and level (default 3)",
        warmup="unmeasured flows per run (default 200)",
        time_limit="seconds after which a driver run starts no new flow (default 300)",
        concurrency=(1, 16, 64),
    )
    setup_options(
        parser,
        python="Python of Baton's venv: Baton's server (its baton script), the floor, Baton's client and its import "
        "(default .venv/bin/python)",
        cache="where the peer venvs and server logs go (default .cache/bench)",
        start_timeout="seconds for a server to listen",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "bench" / "results",
        metavar="DIR",
        help="where compare.md and compare.png go (default bench/results)",
    )
    parser.add_argument(
        "--client-concurrency",
        type=int_list,
        default=[1, 16],
        help="concurrency levels of the client comparison (default 1,16)",
    )
    parser.add_argument(
        "--client-n",
        type=int_list,
        default=None,
        help="measured flows per client run, one value or one per client level (default 1000 at c=1, 2000 otherwise)",
    )
    parser.add_argument("--no-client", action="store_true", help="skip the client comparison")
    parser.add_argument(
        "--import-runs", type=int, default=7, help="runs per library for the import time (default 7; 0 skips it)"
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=pairs.PAIRS,
        help=f"paired short runs of Baton and the floor at c=1 and c=16, for the floor checks (default {pairs.PAIRS}; "
        "0 checks the medians of the runs above instead)",
    )
    parser.add_argument(
        "--pair-n", type=int, default=pairs.PAIR_N, help=f"measured flows per paired run (default {pairs.PAIR_N})"
    )
    opts = level_args(parser, argv, SERVER_ORDER, 2000)
    if opts.repeat < 1 or opts.warmup < 0 or opts.import_runs < 0 or opts.pairs < 0 or opts.pair_n < 1:
        parser.error("--repeat and --pair-n must be >= 1, --warmup, --import-runs and --pairs >= 0")
    opts.client_n = per_level(opts.client_n, opts.client_concurrency, 1000)
    if opts.client_n is None:
        parser.error("--client-n takes one value, or one per client concurrency level")
    return opts


def client_options(opts: argparse.Namespace) -> argparse.Namespace | None:
    """The options of bench/client_compare for the clients among ``--only``; None when there is none to run."""
    names = [name for name in ("baton", "mcp") if name in opts.names]
    if opts.no_client or not names:
        return None
    return argparse.Namespace(
        names=names,
        concurrency=opts.client_concurrency,
        n=opts.client_n,
        repeat=opts.repeat,
        warmup=opts.warmup,
        time_limit=opts.time_limit,
        python=opts.python,
        cache=opts.cache,
        start_timeout=opts.start_timeout,
        server="baton",
    )


def run(opts: argparse.Namespace) -> int:
    """Measure the servers, then the clients; print and write the report and the chart; the exit status."""
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    servers, skipped = plan_servers(opts.names, opts.python.absolute(), opts.cache)
    runs: list[dict[str, Any]] = []
    pair_runs: list[dict[str, Any]] = []
    levels = list(zip(opts.concurrency, opts.n, strict=True))
    imports: dict[str, dict[str, Any]] = {}
    with stopping(say) as servers_up:
        if opts.import_runs:  # first, while no server is running beside it
            pythons = {s.name: s.python for s in servers if s.name in IMPORTS}
            say(f"import time of {', '.join(pythons)}: {opts.import_runs} runs each")
            imports = import_times(pythons, opts.import_runs)
        active = start_smoked(
            servers, logs, opts.start_timeout, lambda s: drive(s, 3, 1, 0, 30), servers_up.started, skipped, say
        )
        if not active:
            say("no server could be started")
            return 2
        by_name = {s.name: s for s in active}
        measure(
            opts,
            levels,
            list(by_name),
            lambda name, n, c: drive(by_name[name], n, c, opts.warmup, opts.time_limit),
            runs,
            "server",
            "driver failed",
            "server",
            say,
        )
        checked = [c for c in opts.concurrency if c in CPU_CHECK_LEVELS]
        if opts.pairs and checked and {"baton", "floor"} <= set(by_name):
            pair_runs = pairs.measure(
                checked,
                opts.pairs,
                opts.pair_n,
                lambda name, n, c, warmup: drive(by_name[name], n, c, warmup, opts.time_limit),
                say,
            )
    stopped_by = servers_up.signum

    client: dict[str, Any] | None = None
    copts = client_options(opts)
    if copts is not None and not stopped_by:  # after the servers: one server at a time on the machine
        client = client_compare.measure_clients(copts, client_compare.say)
        stopped_by = client["stopped_by"]
        if client["status"]:
            say(f"client comparison: {client['error']}")

    rows = summarize("server", [s.name for s in servers], levels, runs, server_figures)
    paired = pairs.summarize(pair_runs)
    ratios(rows, paired)
    checks = target_checks(rows, opts.concurrency, imports, paired) if "baton" in opts.names else []
    client_checks = client["checks"] if client else []
    baton_at = git_state()
    when, info, text = heading(
        "MRTR comparison",
        "the driver, the clients and the servers share them. Servers:",
        levels,
        opts.warmup,
        f" {opts.repeat} runs per server and level, interleaved. Baton at {baton_at}.",
    )
    parts = [
        text,
        versions_text("Stacks", {s.name: s.versions for s in servers if s.versions}, skipped, LABELS),
        "",
        "### Servers: MRTR flows from bench/load.py",
        "",
        markdown(rows, [], opts.repeat, tuple(c for c, pair in paired.items() if "ratio" in pair)),
        "",
    ]
    if paired:
        parts += ["### Baton over the floor: short runs in pairs", "", pairs.markdown(paired, opts.pair_n), ""]
    parts += [
        "### requestState and import time",
        "",
        per_server_markdown(rows, [s.name for s in servers], imports),
    ]
    if client is not None and not client["status"]:
        parts += [
            "",
            "### Clients: bench/client_load.py against Baton's server",
            "",
            client_compare.client_markdown(client),
        ]
    elif client is not None:
        parts += ["", "### Clients", "", f"Not measured: {client['error']}"]
    parts += ["", "### Targets", "", *(check_line(ch) for ch in [*checks, *client_checks])]
    parts += informational(rows, opts.concurrency)
    png = opts.out / "compare.png"
    opts.out.mkdir(parents=True, exist_ok=True)
    no_chart = chart.draw(
        png, f"Baton MRTR ratios, {when}, Baton at {baton_at}", rows, opts.concurrency, imports, client
    )
    parts += ["", f"No chart: {no_chart}" if no_chart else f"Chart of the ratios: `{png.name}` beside this file."]
    report = "\n".join(parts) + "\n"
    print(report, end="", flush=True)
    md = opts.out / "compare.md"
    md.write_text(report)
    say(f"wrote {md}" + ("" if no_chart else f" and {png}"))
    document = {
        "date": when,
        "machine": info,
        "baton_commit": baton_at,
        "levels": [{"concurrency": c, "n": n} for c, n in levels],
        "repeat": opts.repeat,
        "warmup": opts.warmup,
        "stopped_by_signal": stopped_by or None,
        "servers": {
            s.name: {"command": s.argv(s.port), "versions": s.versions} for s in servers if s.name not in skipped
        },
        "skipped": skipped,
        "imports": imports,
        "summary": rows,
        "pairs": {"n": opts.pair_n, "summary": list(paired.values()), "runs": pair_runs},
        "checks": checks,
        "runs": runs,
        "client": client_compare.client_document(client) if client else None,
    }
    document["guard"] = guard.keys(document)  # what tests/bench/test_bench_guard.py holds against bench/baseline.json
    client_runs = client["runs"] if client else []
    failed = any(c["status"] == "FAIL" for c in [*checks, *client_checks]) or any(
        r.get("flows_failed") or "fatal" in r for r in [*client_runs, *pair_runs]
    )
    return finish(opts, document, failed, say)


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run, stopping cleanly on a signal."""
    return run_stoppable(run, parse_args(argv), say)


if __name__ == "__main__":
    sys.exit(main())
