"""Compare the CPU per MRTR flow of Baton's client with the mcp 2.3.0 client, in one run, against one server.

Starts one server on a free 127.0.0.1 port (Baton's ``examples/everything.py`` by default: the mcp
client needs ``server/discover`` or ``initialize`` and ``tools/list``, which the floor does not answer),
smoke-tests each client, then runs bench/client_load.py for Baton (in ``.venv``) and for mcp 2.3.0 (in
``.cache/bench/mcp``, created on first use like bench/compare does), interleaved, ``--repeat`` times at
every concurrency level. It prints a Markdown table of medians and the target check: Baton's client CPU
per flow at most 1/3 of mcp 2.3.0's, at each concurrency. The server is stopped at the end, also on
Ctrl-C or an error.

Run it through ``bench/client_compare``, which uses the project's ``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from compare import (
    ROOT,
    Server,
    Skip,
    Stopped,
    baton_command,
    ensure_venv,
    int_list,
    machine,
    script_command,
    signals_ignored,
    start,
    stop,
    stop_on_signals,
    tail,
)

CLIENT_LOAD = ROOT / "bench" / "client_load.py"
CLIENT_ORDER = ("baton", "mcp")
LABELS = {"baton": "Baton", "mcp": "mcp 2.3.0"}
SERVER_LABELS = {"baton": "Baton examples/everything.py", "floor": "bench/floor.py"}
TARGET_DIVISOR = 3.0  # Baton's client CPU per flow must be at most 1/this of mcp 2.3.0's
DIVIDE, DASH, LE = "\u00f7", "\u2013", "\u2264"


def say(text: str) -> None:
    print(f"client_compare: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Client runs
# ---------------------------------------------------------------------------------------------------


def drive(
    client: str, python: Path, server: Server, n: int, concurrency: int, warmup: int, time_limit: float
) -> dict[str, Any]:
    """One bench/client_load.py run; a report dict (with ``fatal`` set when the run could not be measured)."""
    assert server.proc is not None
    argv = [
        str(python),
        str(CLIENT_LOAD),
        "--client",
        client,
        "--url",
        server.url,
        "--n",
        str(n),
        "--concurrency",
        str(concurrency),
        "--warmup",
        str(warmup),
        "--server-pid",
        str(server.proc.pid),
        "--time-limit",
        str(time_limit),
        "--timeout",
        "30",
        "--json",
    ]
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, timeout=time_limit + 120, check=False)
    except subprocess.TimeoutExpired:
        return {"fatal": f"client_load ran past {time_limit + 120:g} s and was stopped"}
    if done.returncode == 2 or not done.stdout.strip():
        return {"fatal": done.stderr.decode(errors="replace").strip()[-500:] or f"exit {done.returncode}"}
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def smoke(client: str, python: Path, server: Server) -> None:
    """Three flows first, so that a client that cannot run the workload against this server is skipped."""
    report = drive(client, python, server, 3, 1, 0, 60)
    if "fatal" in report:
        raise Skip(f"smoke test failed: {report['fatal']}")
    if report["flows_failed"]:
        raise Skip(f"smoke test flows failed: {report['errors']} {report['error_samples'][:1]}")
    if report["elicitations"] != 3:
        raise Skip(f"the elicitation handler ran {report['elicitations']} times for 3 flows, not 3")


# ---------------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------------


def summarize(client: str, concurrency: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in runs if "fatal" not in r]
    row: dict[str, Any] = {
        "client": client,
        "concurrency": concurrency,
        "runs": len(runs),
        "fatal_runs": len(runs) - len(good),
    }
    if not good:
        return row
    cpu = [r["client_cpu_ms_per_flow"] for r in good]
    server = [r["server_cpu_ms_per_flow"] for r in good if r.get("server_cpu_ms_per_flow") is not None]
    errors: dict[str, int] = {}
    for r in good:
        for kind, count in r["errors"].items():
            errors[kind] = errors.get(kind, 0) + count
    row.update(
        {
            "n": good[0]["n"],
            "flows_ok": sum(r["flows_ok"] for r in good),
            "flows_failed": sum(r["flows_failed"] for r in good),
            "errors": errors,
            "flows_per_s": statistics.median(r["flows_per_s"] for r in good),
            "p50_ms": statistics.median(r["latency_ms"]["p50"] for r in good),
            "p99_ms": statistics.median(r["latency_ms"]["p99"] for r in good),
            "client_cpu_ms_per_flow": statistics.median(cpu),
            "client_cpu_min": min(cpu),
            "client_cpu_max": max(cpu),
            "client_user_ms_per_flow": statistics.median(r["client_user_ms_per_flow"] for r in good),
            "client_sys_ms_per_flow": statistics.median(r["client_sys_ms_per_flow"] for r in good),
            "server_cpu_ms_per_flow": statistics.median(server) if server else None,
            "client_hwm_mib": max(r["client_hwm_mib"] for r in good),
            "versions": good[0]["versions"],
        }
    )
    return row


def ratios(rows: list[dict[str, Any]]) -> None:
    """Add ``vs_mcp``: this row's client CPU per flow divided by mcp 2.3.0's, at the same concurrency."""
    mcp = {r["concurrency"]: r.get("client_cpu_ms_per_flow") for r in rows if r["client"] == "mcp"}
    for row in rows:
        mine, theirs = row.get("client_cpu_ms_per_flow"), mcp.get(row["concurrency"])
        row["vs_mcp"] = mine / theirs if mine and theirs else None


def target_checks(rows: list[dict[str, Any]], levels: list[int]) -> list[dict[str, Any]]:
    by_key = {(r["client"], r["concurrency"]): r for r in rows}
    checks = []
    for c in levels:
        baton, mcp = by_key.get(("baton", c), {}), by_key.get(("mcp", c), {})
        mine, theirs = baton.get("client_cpu_ms_per_flow"), mcp.get("client_cpu_ms_per_flow")
        check: dict[str, Any] = {
            "concurrency": c,
            "target": f"Baton client CPU <= 1/{TARGET_DIVISOR:g} of mcp 2.3.0",
            "baton": mine,
            "mcp": theirs,
        }
        if mine is None or theirs is None:
            check.update(status="n/a", detail=f"{'Baton' if mine is None else 'mcp 2.3.0'} not measured")
        else:
            limit = theirs / TARGET_DIVISOR
            ok = mine <= limit and not baton.get("flows_failed")
            detail = f"{mine:.3f} vs limit {limit:.3f} ms/flow (mcp 2.3.0 {theirs:.3f}; ratio {mine / theirs:.2f})"
            if baton.get("flows_failed"):
                detail += f"; Baton had {baton['flows_failed']} failed flows"
            check.update(status="PASS" if ok else "FAIL", limit=limit, detail=detail)
        checks.append(check)
    return checks


def markdown(rows: list[dict[str, Any]], checks: list[dict[str, Any]], repeat: int) -> str:
    head = [
        "client",
        "c",
        "flows/s",
        "p50 / p99 ms",
        f"client CPU ms/flow (min{DASH}max)",
        f"Baton {DIVIDE} mcp",
        "user / sys ms",
        "server CPU ms/flow",
        "client peak RSS MiB",
        "errors",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        label = LABELS[r["client"]]
        if "client_cpu_ms_per_flow" not in r:
            lines.append(
                f"| {label} | {r['concurrency']} | "
                + " | ".join([DASH] * 7)
                + f" | client_load failed in {r['fatal_runs']}/{r['runs']} runs |"
            )
            continue
        errors = str(r["flows_failed"])
        if r["errors"]:
            errors += " (" + ", ".join(f"{k} {v}" for k, v in r["errors"].items()) + ")"
        if r["fatal_runs"]:
            errors += f"; client_load failed in {r['fatal_runs']}/{r['runs']} runs"
        ratio = DASH if r["vs_mcp"] is None or r["client"] == "mcp" else f"**{r['vs_mcp']:.2f}**"
        server = DASH if r["server_cpu_ms_per_flow"] is None else f"{r['server_cpu_ms_per_flow']:.3f}"
        cells = [
            label,
            str(r["concurrency"]),
            f"{r['flows_per_s']:.0f}",
            f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f}",
            f"**{r['client_cpu_ms_per_flow']:.3f}** ({r['client_cpu_min']:.3f}{DASH}{r['client_cpu_max']:.3f})",
            ratio,
            f"{r['client_user_ms_per_flow']:.3f} / {r['client_sys_ms_per_flow']:.3f}",
            server,
            f"{r['client_hwm_mib']:.1f}",
            errors,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    up_to = "" if all(r["runs"] == repeat for r in rows) else "up to "
    lines += [
        "",
        f"Medians of {up_to}{repeat} runs per row. Client CPU = the client process's user + system time over "
        f"the measured phase, per flow attempted. Baton {DIVIDE} mcp = Baton's client CPU / mcp 2.3.0's "
        "(the target is at most 0.33).",
        "",
    ]
    lines += [f"- c={ch['concurrency']}: {ch['target']}: **{ch['status']}** ({ch['detail']})" for ch in checks]
    return "\n".join(lines)


def git_state() -> str:
    """The commit Baton was measured at, and whether src/ had uncommitted changes (others may edit it)."""
    try:
        head, dirty = (
            subprocess.run(["git", *args], cwd=ROOT, capture_output=True, timeout=10, check=False).stdout
            for args in (["rev-parse", "--short", "HEAD"], ["status", "--porcelain", "src"])
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    state = head.decode().strip() or "unknown"
    return state + (" with uncommitted changes in src/" if dirty.strip() else "")


# ---------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/client_compare", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only", default=",".join(CLIENT_ORDER), help="clients to run, comma-separated, from baton,mcp (default both)"
    )
    parser.add_argument("-c", "--concurrency", type=int_list, default=[1, 16], help="concurrency levels (default 1,16)")
    parser.add_argument(
        "-n",
        "--n",
        type=int_list,
        default=None,
        help="measured flows per run, one value for all levels or one per level (default 1000 at c=1, 2000 otherwise)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per client and level (default 3)")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured flows per run, after connecting (200)")
    parser.add_argument(
        "--time-limit", type=float, default=300.0, help="seconds after which a run starts no new flow (default 300)"
    )
    parser.add_argument(
        "--server",
        choices=sorted(SERVER_LABELS),
        default="baton",
        help="the server both clients call: baton (default) or floor (Baton's client only: the mcp client fails)",
    )
    parser.add_argument(
        "--python",
        type=Path,
        default=ROOT / ".venv" / "bin" / "python",
        help="Python of Baton's venv, for Baton's client and the server (default .venv/bin/python)",
    )
    parser.add_argument(
        "--cache", type=Path, default=ROOT / ".cache" / "bench", help="where the mcp venv and logs go (.cache/bench)"
    )
    parser.add_argument("--start-timeout", type=float, default=60.0, help="seconds for the server to listen")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure to this JSON file")
    opts = parser.parse_args(argv)
    names = [name.strip() for name in opts.only.split(",") if name.strip()]
    if not names or set(names) - set(CLIENT_ORDER):
        parser.error(f"--only takes names from {','.join(CLIENT_ORDER)}; got {opts.only!r}")
    opts.names = [name for name in CLIENT_ORDER if name in names]
    if opts.n is None:
        opts.n = [1000 if c == 1 else 2000 for c in opts.concurrency]
    elif len(opts.n) == 1:
        opts.n = opts.n * len(opts.concurrency)
    elif len(opts.n) != len(opts.concurrency):
        parser.error("--n takes one value, or one per concurrency level")
    if opts.repeat < 1 or opts.warmup < 0 or opts.time_limit <= 0:
        parser.error("--repeat must be >= 1, --warmup >= 0 and --time-limit > 0")
    return opts


def plan_clients(opts: argparse.Namespace) -> tuple[dict[str, Path], dict[str, str]]:
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


def run(opts: argparse.Namespace) -> int:
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    pythons, skipped = plan_clients(opts)
    levels = list(zip(opts.concurrency, opts.n, strict=True))
    runs: list[dict[str, Any]] = []
    stopped_by = 0
    try:
        server = make_server(opts)
    except Skip as exc:
        say(f"no server: {exc}")
        return 2
    try:
        try:
            start(server, logs, opts.start_timeout)
        except Skip as exc:
            say(f"the server did not start: {exc}")
            return 2
        say(f"server {SERVER_LABELS[opts.server]}: pid {server.proc.pid if server.proc else '?'} on {server.url}")
        for name in list(pythons):
            try:
                smoke(name, pythons[name], server)
            except Skip as exc:
                skipped[name] = str(exc)
                del pythons[name]
                say(f"{name}: skipped: {exc}")
        if not pythons:
            say("no client could run")
            return 2
        active = [name for name in opts.names if name in pythons]
        total = opts.repeat * len(levels) * len(active)
        count = 0
        for rep in range(1, opts.repeat + 1):
            order = active if rep % 2 else active[::-1]  # alternate who goes first, against drift
            for concurrency, n in levels:
                for name in order:
                    count += 1
                    report = drive(name, pythons[name], server, n, concurrency, opts.warmup, opts.time_limit)
                    report.update(client=name, repeat=rep, concurrency=concurrency)
                    runs.append(report)
                    if "fatal" in report:
                        say(f"[{count}/{total}] {name} c={concurrency}: failed: {report['fatal']}")
                    else:
                        say(
                            f"[{count}/{total}] {name} c={concurrency}: {report['flows_ok']} ok, "
                            f"{report['flows_failed']} failed, {report['flows_per_s']:.0f} flows/s, "
                            f"client {report['client_cpu_ms_per_flow']:.3f} ms/flow"
                        )
    except KeyboardInterrupt as exc:
        stopped_by = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
        say(f"{signal.Signals(stopped_by).name}: stopping the server and reporting what was measured")
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the clean-up short
            stop(server)
    if server.proc is not None and server.proc.returncode not in (0, -signal.SIGTERM, None):
        say(f"server exit status {server.proc.returncode}: {tail(server.log)}")

    rows = []
    for concurrency, _ in levels:
        for name in opts.names:
            mine = [r for r in runs if r["client"] == name and r["concurrency"] == concurrency]
            if mine:
                rows.append(summarize(name, concurrency, mine))
    ratios(rows)
    checks = target_checks(rows, opts.concurrency) if {"baton", "mcp"} <= set(opts.names) else []
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info = machine()
    baton_at = git_state()
    print(f"## MRTR client comparison, {when}\n")
    print(
        f"{info['cpus']} CPUs ({info['cpu_model']}), Python {info['python']}; the clients and the server share them. "
        f"Server: {SERVER_LABELS[opts.server]} (one process for every run). n per run: "
        + ", ".join(f"{n} at c={c}" for c, n in levels)
        + f"; warmup {opts.warmup}. Baton at {baton_at}.\n"
    )
    print(markdown(rows, checks, opts.repeat))
    print("\nClients:")
    for row in rows:
        if row.get("versions") and row["concurrency"] == opts.concurrency[0]:
            versions = ", ".join(f"{k} {v}" for k, v in row["versions"].items())
            print(f"- {LABELS[row['client']]}: {versions}")
    for name, reason in skipped.items():
        print(f"- {LABELS[name]}: skipped: {reason}")
    if opts.json:
        document = {
            "date": when,
            "machine": info,
            "baton_commit": baton_at,
            "server": {"name": opts.server, "command": server.argv(server.port)},
            "levels": [{"concurrency": c, "n": n} for c, n in levels],
            "repeat": opts.repeat,
            "warmup": opts.warmup,
            "stopped_by_signal": stopped_by or None,
            "pythons": {name: str(path) for name, path in pythons.items()},
            "skipped": skipped,
            "summary": rows,
            "checks": checks,
            "runs": runs,
        }
        opts.json.write_text(json.dumps(document, indent=1) + "\n")
        say(f"wrote {opts.json}")
    if stopped_by:
        return 128 + stopped_by
    failed = any(c["status"] != "PASS" for c in checks) or any(r.get("flows_failed") or "fatal" in r for r in runs)
    return 1 if failed or skipped else 0


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    with stop_on_signals():
        try:
            return run(opts)
        except Stopped as exc:  # during the venv set-up or the report; the measuring part handles its own
            say(f"{signal.Signals(exc.signum).name}: stopped")
            return 128 + exc.signum


if __name__ == "__main__":
    sys.exit(main())
