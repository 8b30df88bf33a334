"""Baton's server CPU per 2025-11-25 elicitation round trip, beside mcp 2.3.0 (stateful) and mcp 1.30.0 FastMCP.

The workload is the handshake era's way to ask: in one session (``initialize`` once, not measured), repeated
``tools/call perform`` whose server sends one ``elicitation/create`` on the call's SSE stream; the driver
(bench/legacy_load.py) answers it with a POSTed JSON-RPC response carrying the session id, and the result
follows on the stream. One flow = one elicitation round trip = two HTTP requests (the call, the answer).

The three servers run the same tool: Baton serves ``examples/everything.py`` (the handler written once for
2026-07-28, asked through the bridge of protocol.md P29); mcp 2.3.0 serves ``peers/mcp_server.py``'s tool in
its stateful mode (bench/legacy_mcp_server.py); mcp 1.30.0 serves it written with its FastMCP and
``ctx.elicit`` (bench/legacy_fastmcp1_server.py). Each peer runs in its own venv under ``.cache/bench/``, made on
first use.

Against noise the servers are measured in rounds of short runs, as bench/pairs.py does for the floor: each
round runs every server once (``--n`` flows after ``--warmup`` flows, a new session per run), back to back, who
goes first rotating. A server's figure is its server CPU summed over all its runs of the rounds in which every
server measured, over the flows summed likewise. The target: Baton's pooled CPU per round trip at most 1/4 of
the better peer's. It prints a Markdown report and writes it to ``--out``/legacy_compare.md; every server is
stopped at the end, also on Ctrl-C or an error. Run it through ``bench/legacy_compare``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from lineup import plan_servers
from processes import ROOT, Server, run_stoppable, stopping
from report import DASH, DIVIDE, TIMES, git_state, heading, versions_text
from runs import drive, start_smoked

ORDER = ("baton", "mcp", "mcp1")
LABELS = {"baton": "Baton", "mcp": "mcp 2.3.0 (stateful)", "mcp1": "mcp 1.30.0 FastMCP"}
SCRIPTS = {"mcp": "bench/legacy_mcp_server.py", "mcp1": "bench/legacy_fastmcp1_server.py"}
LOAD = ROOT / "bench" / "legacy_load.py"
TARGET = 0.25
"""Baton's pooled server CPU per round trip over the better peer's, at most."""
ROUNDS, N, WARMUP = 12, 500, 50


def say(text: str) -> None:
    print(f"legacy_compare: {text}", file=sys.stderr, flush=True)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/legacy_compare", description=__doc__.partition("\n\n")[0])
    parser.add_argument("--only", default=",".join(ORDER), help="servers, comma-separated, from baton,mcp,mcp1")
    parser.add_argument("--rounds", type=int, default=ROUNDS, help=f"rounds of one run per server (default {ROUNDS})")
    parser.add_argument("-n", "--n", type=int, default=N, help=f"measured flows per run (default {N})")
    parser.add_argument(
        "--warmup", type=int, default=WARMUP, help=f"unmeasured flows before each run (default {WARMUP})"
    )
    parser.add_argument(
        "-c", "--concurrency", type=int, default=1, help="sessions per run, each running flows back to back (default 1)"
    )
    parser.add_argument(
        "--time-limit", type=float, default=120.0, help="seconds after which a run starts no new flow (default 120)"
    )
    parser.add_argument(
        "--python", type=Path, default=ROOT / ".venv" / "bin" / "python", help="Baton's venv: its server and the driver"
    )
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench", help="peer venvs and server logs")
    parser.add_argument("--start-timeout", type=float, default=60.0, help="seconds for a server to listen")
    parser.add_argument(
        "--out", type=Path, default=ROOT / "bench" / "results", metavar="DIR", help="where legacy_compare.md goes"
    )
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure and run to this file")
    opts = parser.parse_args(argv)
    names = {name.strip() for name in opts.only.split(",") if name.strip()}
    if not names or names - set(ORDER):
        parser.error(f"--only takes names from {','.join(ORDER)}; got {opts.only!r}")
    opts.names = [name for name in ORDER if name in names]
    if opts.rounds < 1 or opts.n < 1 or opts.warmup < 0 or opts.concurrency < 1:
        parser.error("--rounds, --n and --concurrency must be >= 1, --warmup >= 0")
    return opts


def run_once(opts: argparse.Namespace, server: Server, n: int, warmup: int) -> dict[str, Any]:
    load = (str(opts.python.absolute()), str(LOAD))
    return drive(server, n, opts.concurrency, warmup, opts.time_limit, load=load, who="legacy_load.py")


def measure(opts: argparse.Namespace, active: list[Server], runs: list[dict[str, Any]]) -> None:
    """``opts.rounds`` rounds, each one run per server back to back, who goes first rotating; into ``runs``."""
    total = opts.rounds * len(active)
    for r in range(opts.rounds):
        order = active[r % len(active) :] + active[: r % len(active)]
        for server in order:
            report = run_once(opts, server, opts.n, opts.warmup)
            report.update({"server": server.name, "round": r + 1})
            runs.append(report)
            if "fatal" in report:
                figures = f"driver failed: {report['fatal']}"
            else:
                figures = (
                    f"{report['flows_ok']} ok, {report['flows_failed']} failed, {report['flows_per_s']:.0f} flows/s, "
                    f"server {report['server_cpu_ms_per_flow']:.3f} ms/flow"
                )
            say(f"[{len(runs)}/{total}] round {r + 1} {server.name}: {figures}")


# -- figures --------------------------------------------------------------------------------------------


def _attempted(run: dict[str, Any]) -> int:
    return int(run["flows_ok"]) + int(run["flows_failed"])


def _cpu_ms(run: dict[str, Any]) -> float:
    return float(run["server_cpu_ms_per_flow"]) * _attempted(run)


def _usable(run: dict[str, Any] | None) -> bool:
    return (
        run is not None and "fatal" not in run and run.get("server_cpu_ms_per_flow") is not None and _attempted(run) > 0
    )


def summarize(names: list[str], runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per server: pooled CPU per round trip over the whole rounds, the runs' spread; Baton over the better peer."""
    by_round: dict[int, dict[str, dict[str, Any]]] = {}
    for run in runs:
        by_round.setdefault(run["round"], {})[run["server"]] = run
    whole = [rnd for rnd in by_round.values() if all(_usable(rnd.get(name)) for name in names)]
    rows: dict[str, dict[str, Any]] = {}
    for name in names:
        mine = [rnd[name] for rnd in whole]
        every = [r for r in runs if r["server"] == name and _usable(r)]
        row: dict[str, Any] = {"server": name, "rounds_used": len(whole), "rounds": len(by_round)}
        rows[name] = row
        if not mine:
            continue
        flows = sum(map(_attempted, mine))
        cpu = sum(map(_cpu_ms, mine))
        per_run = sorted(float(r["server_cpu_ms_per_flow"]) for r in mine)
        row |= {
            "flows": flows,
            "cpu_ms_per_round_trip": cpu / flows if cpu else None,
            "cpu_ms_per_request": cpu / sum(int(r["requests"]) for r in mine) if cpu else None,
            "run_cpu_ms_median": statistics.median(per_run),
            "run_cpu_ms_min": per_run[0],
            "run_cpu_ms_max": per_run[-1],
            "flows_per_s": statistics.median(float(r["flows_per_s"]) for r in mine),
            "p50_ms": statistics.median(float(r["latency_ms"]["p50"]) for r in mine),
            "p99_ms": statistics.median(float(r["latency_ms"]["p99"]) for r in mine),
            "driver_cpu_ms": statistics.median(float(r["driver_cpu_ms_per_flow"]) for r in mine),
            "requests_per_flow": statistics.median(float(r["rounds_per_flow"]) for r in mine),
            "rss_mib": (
                every[0]["server_rss_mib_before"],
                every[-1]["server_rss_mib_after"],
                every[-1]["server_hwm_mib"],
            ),
            "flows_failed": sum(int(r["flows_failed"]) for r in runs if r["server"] == name and "fatal" not in r),
            "errors": _errors([r for r in runs if r["server"] == name]),
        }
    summary: dict[str, Any] = {"rows": rows}
    peers = [n for n in names if n != "baton" and rows[n].get("cpu_ms_per_round_trip")]
    baton = rows.get("baton", {}).get("cpu_ms_per_round_trip")
    if baton and peers:
        better = min(peers, key=lambda n: rows[n]["cpu_ms_per_round_trip"])
        summary |= {"better_peer": better, "ratio": baton / rows[better]["cpu_ms_per_round_trip"]}
        own = sorted(
            rnd["baton"]["server_cpu_ms_per_flow"] / min(rnd[p]["server_cpu_ms_per_flow"] for p in peers)
            for rnd in whole
            if all(rnd[p]["server_cpu_ms_per_flow"] for p in peers)
        )
        if own:
            summary["round_ratios"] = {
                "min": own[0],
                "quartiles": statistics.quantiles(own, n=4, method="inclusive") if len(own) > 1 else own * 3,
                "max": own[-1],
            }
    return summary


def _errors(runs: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for run in runs:
        if "fatal" in run:
            out["driver-failed"] = out.get("driver-failed", 0) + 1
        for kind, count in run.get("errors", {}).items():
            out[kind] = out.get(kind, 0) + count
    return out


def check(summary: dict[str, Any]) -> dict[str, Any]:
    """The target line: PASS, FAIL (also when Baton had failed flows), or n/a when not measured."""
    name = f"Baton's server CPU per 2025-11-25 elicitation round trip <= 1/{round(1 / TARGET)} of the better peer's"
    ratio = summary.get("ratio")
    if ratio is None:
        return {"name": name, "status": "n/a", "detail": "Baton or every peer not measured"}
    failed = summary["rows"]["baton"].get("flows_failed", 0)
    status = "PASS" if ratio <= TARGET and not failed else "FAIL"
    detail = f"{ratio:.3f} of {LABELS[summary['better_peer']]}'s" + (f"; {failed} Baton flows failed" if failed else "")
    return {"name": name, "status": status, "ratio": ratio, "detail": detail}


def markdown(names: list[str], summary: dict[str, Any], opts: argparse.Namespace) -> str:
    rows = summary["rows"]
    baton = rows.get("baton", {}).get("cpu_ms_per_round_trip")
    lines = [
        f"| server | rounds used | server CPU ms/round trip (pooled) | per HTTP request | runs' CPU ms/flow: median "
        f"({DASH} range) | {DIVIDE} Baton | flows/s | p50 / p99 ms | driver CPU ms/flow | RSS MiB | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in names:
        row = rows[name]
        if not row.get("cpu_ms_per_round_trip"):
            lines.append(f"| {LABELS[name]} | {row['rounds_used']} of {row['rounds']} |" + f" {DASH} |" * 9)
            continue
        mine = row["cpu_ms_per_round_trip"]
        times = f"{mine / baton:.1f}{TIMES}" if baton else DASH
        before, after, peak = row["rss_mib"]
        errors = ", ".join(f"{k} {v}" for k, v in row["errors"].items()) or "0"
        spread = f"{row['run_cpu_ms_median']:.3f} ({row['run_cpu_ms_min']:.3f}{DASH}{row['run_cpu_ms_max']:.3f})"
        lines.append(
            f"| {LABELS[name]} | {row['rounds_used']} of {row['rounds']} | **{mine:.3f}** "
            f"| {row['cpu_ms_per_request']:.3f} | {spread} | {times} "
            f"| {row['flows_per_s']:.0f} | {row['p50_ms']:.2f} / {row['p99_ms']:.2f} | {row['driver_cpu_ms']:.3f} "
            f"| {before} \u2192 {after} ({peak}) | {errors} |"
        )
    lines.append("")
    if "ratio" in summary:
        text = (
            f"**Baton / the better peer ({LABELS[summary['better_peer']]}): {summary['ratio']:.3f}** "
            f"(pooled over {rows['baton']['rounds_used']} rounds)."
        )
        spread = summary.get("round_ratios")
        if spread:
            q1, q2, q3 = spread["quartiles"]
            text += (
                f" Each round's own ratio (Baton over the better peer of that round): {spread['min']:.3f}, "
                f"quartiles {q1:.3f} / {q2:.3f} / {q3:.3f}, {spread['max']:.3f}."
            )
        lines.append(text)
        lines.append("")
    lines.append(
        f"A round runs every server once, back to back, who goes first rotating: {opts.n} measured flows after "
        f"{opts.warmup} warmup flows, {opts.concurrency} session(s), one new session per run. One flow is one "
        "elicitation round trip: `tools/call` answered with SSE, `elicitation/create` on that stream, the answer "
        "POSTed (two HTTP requests). Server CPU is utime + stime of the server process and its descendants over "
        "the measured flows; pooled = summed over the runs of the rounds in which every server measured, over the "
        "flows summed likewise."
    )
    return "\n".join(lines)


def run(opts: argparse.Namespace) -> int:
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    servers, skipped = plan_servers(opts.names, opts.python.absolute(), opts.cache, SCRIPTS, (), say)
    runs: list[dict[str, Any]] = []
    with stopping(say) as servers_up:
        active = start_smoked(
            servers, logs, opts.start_timeout, lambda s: run_once(opts, s, 3, 0), servers_up.started, skipped, say
        )
        if not active:
            say("no server could be started")
            return 2
        measure(opts, active, runs)
    stopped_by = servers_up.signum

    names = [s.name for s in servers if s.name not in skipped]
    summary = summarize(names, runs)
    target = check(summary) if "baton" in opts.names else None
    baton_at = git_state()
    when, info, text = heading(
        "2025-11-25 elicitation round trips in one session",
        "the driver and the servers share them.",
        [],
        opts.warmup,
        f" {opts.rounds} rounds of {opts.n} flows per server. Baton at {baton_at}.",
    )
    parts = [
        text,
        versions_text("Stacks", {s.name: s.versions for s in servers if s.versions}, skipped, LABELS),
        "",
        "### Servers: bench/legacy_load.py, one session per run",
        "",
        markdown(names, summary, opts),
        "",
        "### Target",
        "",
    ]
    if target is not None:
        parts.append(f"- {target['name']}: **{target['status']}** ({target['detail']})")
    else:
        parts.append("- not checked: Baton was not in --only")
    report = "\n".join(parts) + "\n"
    print(report, end="", flush=True)
    opts.out.mkdir(parents=True, exist_ok=True)
    md = opts.out / "legacy_compare.md"
    md.write_text(report)
    say(f"wrote {md}")
    if opts.json:
        document = {
            "date": when,
            "machine": info,
            "baton_commit": baton_at,
            "rounds": opts.rounds,
            "n": opts.n,
            "warmup": opts.warmup,
            "concurrency": opts.concurrency,
            "stopped_by_signal": stopped_by or None,
            "servers": {
                s.name: {"command": s.argv(s.port), "versions": s.versions} for s in servers if s.name in names
            },
            "skipped": skipped,
            "summary": summary,
            "check": target,
            "runs": runs,
        }
        opts.json.write_text(json.dumps(document, indent=2) + "\n")
        say(f"wrote {opts.json}")
    if stopped_by:
        return 128 + stopped_by
    failed = (target is not None and target["status"] == "FAIL") or any(
        r.get("flows_failed") or "fatal" in r for r in runs
    )
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    """Parse the options and run, stopping cleanly on a signal."""
    return run_stoppable(run, parse_args(argv), say)


if __name__ == "__main__":
    sys.exit(main())
