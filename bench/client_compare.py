"""Compare the CPU per MRTR flow of Baton's client with the mcp 2.3.0 client, in one run, against one server.

Starts one server on a free 127.0.0.1 port (Baton's ``examples/everything.py`` by default: the mcp
client needs ``server/discover`` or ``initialize`` and ``tools/list``, which the floor does not answer),
smoke-tests each client, then runs bench/client_load.py for Baton (in ``.venv``) and for mcp 2.3.0 (in
``.cache/bench/mcp``, created on first use like bench/compare does), interleaved, ``--repeat`` times at
every concurrency level. It prints a Markdown table of medians and the target check: Baton's client CPU
per round trip at most 1/3 of mcp 2.3.0's, at each concurrency. The server is stopped at the end, also on
Ctrl-C or an error. Client CPU per round trip is the CPU per flow divided by the requests per flow (two:
one question, one answer). bench/compare runs the same measurement through ``measure_clients``.

Run it through ``bench/client_compare``, which uses the project's ``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from options import level_args, level_parser, setup_options
from processes import (
    ROOT,
    Server,
    Skip,
    Stopped,
    baton_command,
    run_stoppable,
    script_command,
    signals_ignored,
    start,
    stop,
    tail,
)
from report import DASH, DIVIDE, finish, fmt, git_state, heading, report_markdown, versions_text
from runs import drive, measure, smoked
from stats import per_round_trip, quotient, summarize
from targets import target_check
from venvs import ensure_venv

CLIENT_LOAD = ROOT / "bench" / "client_load.py"
CLIENT_ORDER = ("baton", "mcp")
LABELS = {"baton": "Baton", "mcp": "mcp 2.3.0"}
SERVER_LABELS = {"baton": "Baton examples/everything.py", "floor": "bench/floor.py"}
TARGET_DIVISOR = 3.0  # Baton's client CPU per flow must be at most 1/this of mcp 2.3.0's


def say(text: str) -> None:
    print(f"client_compare: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Client runs
# ---------------------------------------------------------------------------------------------------


def drive_client(
    client: str, python: Path, server: Server, n: int, concurrency: int, warmup: int, time_limit: float
) -> dict[str, Any]:
    """One bench/client_load.py run; a report dict (with ``fatal`` set when the run could not be measured)."""
    load = (str(python), str(CLIENT_LOAD), "--client", client)
    return drive(server, n, concurrency, warmup, time_limit, load, "client_load", server_figures=False)


def smoke(client: str, python: Path, server: Server) -> None:
    """Three flows first, so that a client that cannot run the workload against this server is skipped."""
    report = smoked(drive_client(client, python, server, 3, 1, 0, 60))
    if report["elicitations"] != 3:
        raise Skip(f"the elicitation handler ran {report['elicitations']} times for 3 flows, not 3")


# ---------------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------------


def client_figures(good: list[dict[str, Any]]) -> dict[str, Any]:
    cpu = [r["client_cpu_ms_per_flow"] for r in good]
    server = [r["server_cpu_ms_per_flow"] for r in good if r.get("server_cpu_ms_per_flow") is not None]
    rt = per_round_trip(good, "client_cpu_ms_per_flow")
    return {
        "client_cpu_ms_per_flow": statistics.median(cpu),
        "client_cpu_min": min(cpu),
        "client_cpu_max": max(cpu),
        "rounds_per_flow": rt["rounds_per_flow"],
        "client_cpu_ms_per_rt": rt["per_rt"],
        "client_cpu_rt_min": rt["per_rt_min"],
        "client_cpu_rt_max": rt["per_rt_max"],
        "client_user_ms_per_flow": statistics.median(r["client_user_ms_per_flow"] for r in good),
        "client_sys_ms_per_flow": statistics.median(r["client_sys_ms_per_flow"] for r in good),
        "server_cpu_ms_per_flow": statistics.median(server) if server else None,
        "client_hwm_mib": max(r["client_hwm_mib"] for r in good),
        "versions": good[0]["versions"],
    }


def ratios(rows: list[dict[str, Any]]) -> None:
    """Add ``vs_mcp``: this row's client CPU per round trip divided by mcp 2.3.0's, at the same concurrency."""
    mcp = {r["concurrency"]: r.get("client_cpu_ms_per_rt") for r in rows if r["client"] == "mcp"}
    for row in rows:
        row["vs_mcp"] = quotient(row.get("client_cpu_ms_per_rt"), mcp.get(row["concurrency"]))


def target_checks(rows: list[dict[str, Any]], levels: list[int]) -> list[dict[str, Any]]:
    by_key = {(r["client"], r["concurrency"]): r for r in rows}
    return [
        target_check(
            c,
            f"Baton client CPU per round trip <= 1/{TARGET_DIVISOR:g} of mcp 2.3.0",
            by_key.get(("baton", c), {}),
            "mcp",
            by_key.get(("mcp", c), {}),
            "client_cpu_ms_per_rt",
            LABELS["mcp"],
            lambda theirs: theirs / TARGET_DIVISOR,
            ratio=True,
            unit="ms/round trip",
        )
        for c in levels
    ]


def markdown(rows: list[dict[str, Any]], checks: list[dict[str, Any]], repeat: int) -> str:
    def cells(r: dict[str, Any]) -> list[str]:
        return [
            f"{r['client_cpu_ms_per_flow']:.3f} ({r['client_cpu_min']:.3f}{DASH}{r['client_cpu_max']:.3f})",
            f"**{fmt(r['client_cpu_ms_per_rt'])}**",
            DASH if r["vs_mcp"] is None or r["client"] == "mcp" else f"**{r['vs_mcp']:.2f}**",
            f"{r['client_user_ms_per_flow']:.3f} / {r['client_sys_ms_per_flow']:.3f}",
            fmt(r["server_cpu_ms_per_flow"]),
            f"{r['client_hwm_mib']:.1f}",
        ]

    head = [
        f"client CPU ms/flow (min{DASH}max)",
        "client CPU ms/round trip",
        f"Baton {DIVIDE} mcp",
        "user / sys ms",
        "server CPU ms/flow",
        "client peak RSS MiB",
    ]
    text = (
        "Client CPU = the client process's user + system time over the measured phase, per flow attempted; "
        "per round trip = per flow / requests per flow (1 + elicitations answered per flow), run by run. "
        f"Baton {DIVIDE} mcp = Baton's client CPU per round trip / mcp 2.3.0's (the target is at most "
        f"{1 / TARGET_DIVISOR:.2f})."
    )
    return report_markdown(
        rows, checks, repeat, "client", LABELS, "client_cpu_ms_per_flow", "client_load", head, cells, text
    )


# ---------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = level_parser(
        "bench/client_compare",
        __doc__,
        CLIENT_ORDER,
        1000,
        only="clients to run, comma-separated, from baton,mcp (default both)",
        repeat="runs per client and level (default 3)",
        warmup="unmeasured flows per run, after connecting (200)",
        time_limit="seconds after which a run starts no new flow (default 300)",
    )
    parser.add_argument(
        "--server",
        choices=sorted(SERVER_LABELS),
        default="baton",
        help="the server both clients call: baton (default) or floor (Baton's client only: the mcp client fails)",
    )
    setup_options(
        parser,
        python="Python of Baton's venv, for Baton's client and the server (default .venv/bin/python)",
        cache="where the mcp venv and logs go (.cache/bench)",
        start_timeout="seconds for the server to listen",
    )
    opts = level_args(parser, argv, CLIENT_ORDER, 1000)
    if opts.repeat < 1 or opts.warmup < 0 or opts.time_limit <= 0:
        parser.error("--repeat must be >= 1, --warmup >= 0 and --time-limit > 0")
    return opts


def plan_clients(opts: argparse.Namespace, say: Callable[[str], None]) -> tuple[dict[str, Path], dict[str, str]]:
    """The Python to run each client with, and the reasons for those that cannot run."""
    pythons: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    for name in opts.names:
        try:
            pythons[name] = opts.python.absolute() if name == "baton" else ensure_venv(opts.cache, "mcp")
        except Skip as exc:
            skipped[name] = str(exc)
            say(f"{name}: skipped: {exc}")
    return pythons, skipped


def make_server(opts: argparse.Namespace) -> Server:
    python = opts.python.absolute()
    if not python.exists():
        raise Skip(f"{python} does not exist (run ./dev setup first)")
    if opts.server == "floor":
        return Server("client-bench-floor", python, script_command(python, "bench/floor.py"))
    baton = python.parent / "baton"
    if not baton.exists():
        raise Skip(f"{baton} does not exist (run ./dev setup first)")
    return Server("client-bench-baton", python, baton_command(baton))


def measure_clients(opts: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    """Start the server, smoke-test the clients ``opts.names``, measure them, stop the server; the results.

    ``opts`` holds what parse_args gives: names, concurrency, n, repeat, warmup, time_limit, python, cache,
    start_timeout and server. The result has ``status`` 2 and an ``error`` when the server or every client
    could not run, else 0; ``stopped_by`` the signal that stopped the measuring (0 if none); and ``levels``,
    ``pythons``, ``skipped``, ``server`` (its name and command), ``runs``, ``rows``, ``checks``, ``versions``.
    """
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pythons, skipped = plan_clients(opts, say)
    levels = list(zip(opts.concurrency, opts.n, strict=True))
    runs: list[dict[str, Any]] = []
    result: dict[str, Any] = {
        "status": 0,
        "stopped_by": 0,
        "levels": levels,
        "repeat": opts.repeat,
        "warmup": opts.warmup,
        "pythons": pythons,
        "skipped": skipped,
        "server": {"name": opts.server},
        "runs": runs,
        "rows": [],
        "checks": [],
        "versions": {},
    }
    try:
        server = make_server(opts)
    except Skip as exc:
        return {**result, "status": 2, "error": f"no server: {exc}"}
    try:
        try:
            start(server, logs, opts.start_timeout)
        except Skip as exc:
            return {**result, "status": 2, "error": f"the server did not start: {exc}"}
        result["server"]["command"] = server.argv(server.port)
        say(f"server {SERVER_LABELS[opts.server]}: pid {server.proc.pid if server.proc else '?'} on {server.url}")
        for name in list(pythons):
            try:
                smoke(name, pythons[name], server)
            except Skip as exc:
                skipped[name] = str(exc)
                del pythons[name]
                say(f"{name}: skipped: {exc}")
        if not pythons:
            return {**result, "status": 2, "error": "no client could run: " + "; ".join(skipped.values())}
        measure(
            opts,
            levels,
            [name for name in opts.names if name in pythons],
            lambda name, n, c: drive_client(name, pythons[name], server, n, c, opts.warmup, opts.time_limit),
            runs,
            "client",
            "failed",
            "client",
            say,
            alternate=True,
        )
    except KeyboardInterrupt as exc:
        result["stopped_by"] = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
        say(f"{signal.Signals(result['stopped_by']).name}: stopping the server and reporting what was measured")
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the clean-up short
            stop(server)
    if server.proc is not None and server.proc.returncode not in (0, -signal.SIGTERM, None):
        say(f"server exit status {server.proc.returncode}: {tail(server.log)}")

    rows = summarize("client", opts.names, levels, runs, client_figures)
    ratios(rows)
    first = [r for r in rows if r.get("versions") and r["concurrency"] == opts.concurrency[0]]
    result.update(
        rows=rows,
        checks=target_checks(rows, opts.concurrency) if {"baton", "mcp"} <= set(opts.names) else [],
        versions={r["client"]: r["versions"] for r in first},
    )
    return result


def client_markdown(result: dict[str, Any], checks: bool = False) -> str:
    """The server line, the table, the clients' versions (and the checks, if ``checks``) of ``measure_clients``."""
    levels = ", ".join(f"{n} at c={c}" for c, n in result["levels"])
    return "\n".join(
        [
            f"Server: {SERVER_LABELS[result['server']['name']]}, one process for every client run. "
            f"n per run: {levels}; warmup {result['warmup']}.",
            "",
            markdown(result["rows"], result["checks"] if checks else [], result["repeat"]),
            "",
            versions_text("Clients", result["versions"], result["skipped"], LABELS),
        ]
    )


def client_document(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON-ready part of ``measure_clients``'s result."""
    return {
        "server": result["server"],
        "levels": [{"concurrency": c, "n": n} for c, n in result["levels"]],
        "repeat": result["repeat"],
        "warmup": result["warmup"],
        "pythons": {name: str(path) for name, path in result["pythons"].items()},
        "skipped": result["skipped"],
        "summary": result["rows"],
        "checks": result["checks"],
        "runs": result["runs"],
        **({"error": result["error"]} if "error" in result else {}),
    }


def run(opts: argparse.Namespace) -> int:
    result = measure_clients(opts, say)
    if result["status"]:
        say(result["error"])
        return 2
    baton_at = git_state()
    when, info, text = heading(
        "MRTR client comparison", "the clients and the server share them.", [], opts.warmup, f" Baton at {baton_at}."
    )
    print(text)
    print(client_markdown(result, checks=True))
    document = {
        "date": when,
        "machine": info,
        "baton_commit": baton_at,
        **client_document(result),
        "stopped_by_signal": result["stopped_by"] or None,
    }
    failed = any(c["status"] != "PASS" for c in result["checks"]) or bool(result["skipped"])
    return finish(opts, document, failed, say)


def main(argv: list[str] | None = None) -> int:
    return run_stoppable(run, parse_args(argv), say)


if __name__ == "__main__":
    sys.exit(main())
