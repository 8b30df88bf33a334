"""Compare Baton's MRTR server cost with the floor, mcp 2.3.0 and FastMCP 4.1.6, in one run.

Starts each server on a free 127.0.0.1 port, runs bench/load.py against each one in turn (runs
interleaved across servers, ``--repeat`` times for every concurrency level), and prints a Markdown
table of medians plus Baton's target checks: server CPU per flow at most 2.5x the floor's and at most
1/4 of mcp 2.3.0's, at each concurrency. The peer venvs are created under ``.cache/bench/`` on first
use. Every server is stopped at the end, also on Ctrl-C or an error.

Run it through ``bench/compare``, which uses the project's ``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LOAD = ROOT / "bench" / "load.py"
SERVER_ORDER = ("baton", "floor", "mcp", "fastmcp")
PEER_REQUIREMENTS = {"mcp": "mcp==2.3.0", "fastmcp": "fastmcp==4.1.6"}
PEER_SCRIPTS = {"mcp": "bench/peers/mcp_server.py", "fastmcp": "bench/peers/fastmcp_server.py"}
LABELS = {"baton": "Baton", "floor": "floor", "mcp": "mcp 2.3.0", "fastmcp": "FastMCP 4.1.6"}
STACK_PACKAGES = (
    "mcp-baton",
    "mcp",
    "fastmcp",
    "uvicorn",
    "httptools",
    "uvloop",
    "h11",
    "starlette",
    "pydantic",
    "orjson",
)
TIMES, DIVIDE, DASH, ARROW = "\u00d7", "\u00f7", "\u2013", "\u2192"  # Markdown output
MAX_FLOOR_RATIO = 2.5  # Baton's server CPU per flow must be at most this many times the floor's
MIN_MCP_DIVISOR = 4.0  # ... and at most 1/this of mcp 2.3.0's


class Skip(Exception):
    """A server that cannot take part in this run; the message says why."""


def say(text: str) -> None:
    print(f"compare: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------------


@dataclass
class Server:
    """One server under test: how to start it, and the process once started."""

    name: str
    python: Path
    argv: Callable[[int], list[str]]
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def ensure_venv(cache: Path, name: str) -> Path:
    """The Python of the peer's venv under ``cache``, created with its pinned requirement on first use."""
    requirement = PEER_REQUIREMENTS[name]
    venv = cache / name
    python = venv / "bin" / "python"
    stamp = venv / ".bench-requirement"
    if python.exists() and stamp.exists() and stamp.read_text().strip() == requirement:
        return python
    log = cache / "logs" / f"venv-{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    say(f"{name}: creating {venv} with {requirement} (first use, about a minute); log {log}")
    if venv.exists():
        shutil.rmtree(venv)
    with log.open("wb") as out:
        steps = [
            [sys.executable, "-m", "venv", str(venv)],
            [str(python), "-m", "pip", "install", "--quiet", requirement],
        ]
        for step in steps:
            if subprocess.run(step, stdout=out, stderr=subprocess.STDOUT, check=False).returncode != 0:
                shutil.rmtree(venv, ignore_errors=True)
                raise Skip(f"could not install {requirement}: see {log}")
    stamp.write_text(requirement + "\n")
    return python


def baton_command(baton: Path) -> Callable[[int], list[str]]:
    return lambda port: [str(baton), "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"]


def script_command(python: Path, script: str) -> Callable[[int], list[str]]:
    return lambda port: [str(python), script, "--port", str(port)]


def plan_servers(names: list[str], baton_python: Path, cache: Path) -> tuple[list[Server], dict[str, str]]:
    """The servers to start, and the reasons for those that cannot be."""
    servers: list[Server] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            if name in ("baton", "floor"):
                if not baton_python.exists():
                    raise Skip(f"{baton_python} does not exist (run ./dev setup first)")
                if name == "baton":
                    baton = baton_python.parent / "baton"
                    if not baton.exists():
                        raise Skip(f"{baton} does not exist (run ./dev setup first)")
                    servers.append(Server(name, baton_python, baton_command(baton)))
                else:
                    servers.append(Server(name, baton_python, script_command(baton_python, "bench/floor.py")))
            else:
                python = ensure_venv(cache, name)
                servers.append(Server(name, python, script_command(python, PEER_SCRIPTS[name])))
        except Skip as exc:
            skipped[name] = str(exc)
            say(f"{name}: skipped: {exc}")
    return servers, skipped


def stack_versions(python: Path) -> dict[str, str]:
    code = (
        "import importlib.metadata as m, json, sys\n"
        "out = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n        out[name] = m.version(name)\n"
        "    except m.PackageNotFoundError:\n        pass\n"
        "print(json.dumps(out))"
    )
    try:
        done = subprocess.run([str(python), "-c", code, *STACK_PACKAGES], capture_output=True, timeout=60, check=True)
        versions: dict[str, str] = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.SubprocessError):
        return {}
    return versions


def start(server: Server, logs: Path, wait: float) -> None:
    """Start the server and wait until its port accepts connections; raise Skip if it does not."""
    server.port = free_port()
    server.log = logs / f"{server.name}.log"
    argv = server.argv(server.port)
    with server.log.open("wb") as out:
        server.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise Skip(f"exited with status {server.proc.returncode} at start: {tail(server.log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1):
            return
        time.sleep(0.2)
    raise Skip(f"did not listen on port {server.port} within {wait:g} s: {tail(server.log)}")


def stop(server: Server) -> None:
    """Stop the server's whole process group (its session was started for it), politely first."""
    proc = server.proc
    if proc is None or proc.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # workers left behind by a master that exited


def tail(path: Path | None, lines: int = 6) -> str:
    if path is None or not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").strip().splitlines()[-lines:]
    return " | ".join(text) if text else f"(empty log {path})"


# ---------------------------------------------------------------------------------------------------
# Driver runs
# ---------------------------------------------------------------------------------------------------


def drive(server: Server, n: int, concurrency: int, warmup: int, time_limit: float) -> dict[str, Any]:
    """One bench/load.py run; a report dict (with ``fatal`` set when the driver could not run)."""
    assert server.proc is not None
    argv = [
        sys.executable,
        str(LOAD),
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
        done = subprocess.run(argv, capture_output=True, timeout=time_limit + 120, check=False)
    except subprocess.TimeoutExpired:
        return {"fatal": f"the driver ran past {time_limit + 120:g} s and was stopped"}
    if done.returncode == 2 or not done.stdout.strip():
        return {"fatal": done.stderr.decode(errors="replace").strip()[-500:] or f"exit {done.returncode}"}
    report: dict[str, Any] = json.loads(done.stdout)
    if report.get("server_cpu_ms_per_flow") is None:
        report["fatal"] = "the server exited during the run: " + done.stderr.decode(errors="replace")[-300:]
    return report


def smoke(server: Server) -> None:
    """A few flows first, so that a server that starts but cannot serve the workload is skipped."""
    report = drive(server, 3, 1, 0, 30)
    if "fatal" in report:
        raise Skip(f"smoke test failed: {report['fatal']}")
    if report["flows_failed"]:
        raise Skip(f"smoke test flows failed: {report['errors']} {report['error_samples'][:1]}")


# ---------------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------------


def summarize(server: str, concurrency: int, runs: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in runs if "fatal" not in r]
    row: dict[str, Any] = {
        "server": server,
        "concurrency": concurrency,
        "runs": len(runs),
        "fatal_runs": len(runs) - len(good),
    }
    if not good:
        return row
    cpu = [r["server_cpu_ms_per_flow"] for r in good]
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
            "server_cpu_ms_per_flow": statistics.median(cpu),
            "server_cpu_min": min(cpu),
            "server_cpu_max": max(cpu),
            "driver_cpu_ms_per_flow": statistics.median(r["driver_cpu_ms_per_flow"] for r in good),
            "rss_mib_before": good[0]["server_rss_mib_before"],
            "rss_mib_after": good[-1]["server_rss_mib_after"],
            "hwm_mib": max(r["server_hwm_mib"] for r in good),
        }
    )
    return row


def ratios(rows: list[dict[str, Any]]) -> None:
    """Add ``x_floor`` (server CPU / floor's) and ``div_mcp`` (mcp's / server CPU) at each concurrency."""
    by_key = {(r["server"], r["concurrency"]): r.get("server_cpu_ms_per_flow") for r in rows}
    for row in rows:
        cpu = row.get("server_cpu_ms_per_flow")
        floor = by_key.get(("floor", row["concurrency"]))
        mcp = by_key.get(("mcp", row["concurrency"]))
        row["x_floor"] = cpu / floor if cpu and floor else None
        row["div_mcp"] = mcp / cpu if cpu and mcp else None


def target_checks(rows: list[dict[str, Any]], levels: list[int]) -> list[dict[str, Any]]:
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    checks = []
    for c in levels:
        baton = by_key.get(("baton", c), {})
        for ref, factor, text in (
            ("floor", MAX_FLOOR_RATIO, f"<= {MAX_FLOOR_RATIO:g}x floor"),
            ("mcp", 1 / MIN_MCP_DIVISOR, f"<= 1/{MIN_MCP_DIVISOR:g} of mcp 2.3.0"),
        ):
            other = by_key.get((ref, c), {})
            mine, theirs = baton.get("server_cpu_ms_per_flow"), other.get("server_cpu_ms_per_flow")
            check: dict[str, Any] = {
                "concurrency": c,
                "target": f"server CPU {text}",
                "baton": mine,
                ref: theirs,
            }
            if mine is None or theirs is None:
                missing = "Baton" if mine is None else LABELS[ref]
                check.update(status="n/a", detail=f"{missing} not measured")
            else:
                limit = theirs * factor
                ok = mine <= limit and not baton.get("flows_failed")
                detail = f"{mine:.3f} vs limit {limit:.3f} ms/flow ({LABELS[ref]} {theirs:.3f})"
                if baton.get("flows_failed"):
                    detail += f"; Baton had {baton['flows_failed']} failed flows"
                check.update(status="PASS" if ok else "FAIL", limit=limit, detail=detail)
            checks.append(check)
    return checks


def fmt(value: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return DASH if value is None else f"{value:{spec}}{suffix}"


def markdown(rows: list[dict[str, Any]], checks: list[dict[str, Any]], repeat: int) -> str:
    head = [
        "server",
        "c",
        "flows/s",
        "p50 / p99 ms",
        f"server CPU ms/flow (min{DASH}max)",
        f"{TIMES} floor",
        f"{DIVIDE} mcp",
        f"RSS MiB before{ARROW}after (peak)",
        "driver CPU ms/flow",
        "errors",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        label = LABELS[r["server"]]
        if "server_cpu_ms_per_flow" not in r:
            lines.append(
                f"| {label} | {r['concurrency']} | "
                + " | ".join([DASH] * 7)
                + f" | driver failed in {r['fatal_runs']}/{r['runs']} runs |"
            )
            continue
        errors = str(r["flows_failed"])
        if r["errors"]:
            errors += " (" + ", ".join(f"{k} {v}" for k, v in r["errors"].items()) + ")"
        if r["fatal_runs"]:
            errors += f"; driver failed in {r['fatal_runs']}/{r['runs']} runs"
        cells = [
            label,
            str(r["concurrency"]),
            f"{r['flows_per_s']:.0f}",
            f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f}",
            f"**{r['server_cpu_ms_per_flow']:.3f}** ({r['server_cpu_min']:.3f}{DASH}{r['server_cpu_max']:.3f})",
            fmt(r["x_floor"], ".2f", TIMES),
            fmt(r["div_mcp"], ".2f"),
            f"{r['rss_mib_before']:.1f} {ARROW} {r['rss_mib_after']:.1f} ({r['hwm_mib']:.1f})",
            f"{r['driver_cpu_ms_per_flow']:.3f}",
            errors,
        ]
        lines.append("| " + " | ".join(cells) + " |")
    up_to = "" if all(r["runs"] == repeat for r in rows) else "up to "
    lines += [
        "",
        f"Medians of {up_to}{repeat} runs per row. {TIMES} floor = server CPU / the floor's; "
        f"{DIVIDE} mcp = mcp 2.3.0's server CPU / this row's (4 means a quarter of mcp's).",
        "",
        "Baton targets (server CPU per flow):",
    ]
    lines += [f"- c={ch['concurrency']}: {ch['target']}: **{ch['status']}** ({ch['detail']})" for ch in checks]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------


def int_list(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas")
    return values


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/compare", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--only",
        default=",".join(SERVER_ORDER),
        help="servers to run, comma-separated, from baton,floor,mcp,fastmcp (default all)",
    )
    parser.add_argument("-c", "--concurrency", type=int_list, default=[1, 16], help="concurrency levels (default 1,16)")
    parser.add_argument(
        "-n",
        "--n",
        type=int_list,
        default=None,
        help="measured flows per run, one value for all levels or one per level (default 2000 at c=1, 4000 otherwise)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per server and level (default 3)")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured flows per run (default 200)")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=300.0,
        help="seconds after which a driver run starts no new flow (default 300)",
    )
    parser.add_argument(
        "--python",
        type=Path,
        default=ROOT / ".venv" / "bin" / "python",
        help="Python of Baton's venv, for Baton (its baton script) and the floor (default .venv/bin/python)",
    )
    parser.add_argument(
        "--cache",
        type=Path,
        default=ROOT / ".cache" / "bench",
        help="where the peer venvs and server logs go (default .cache/bench)",
    )
    parser.add_argument("--start-timeout", type=float, default=60.0, help="seconds for a server to listen")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure to this JSON file")
    opts = parser.parse_args(argv)
    names = [name.strip() for name in opts.only.split(",") if name.strip()]
    unknown = sorted(set(names) - set(SERVER_ORDER))
    if unknown or not names:
        parser.error(f"--only takes names from {','.join(SERVER_ORDER)}; got {opts.only!r}")
    opts.names = [name for name in SERVER_ORDER if name in names]
    if opts.n is None:
        opts.n = [2000 if c == 1 else 4000 for c in opts.concurrency]
    elif len(opts.n) == 1:
        opts.n = opts.n * len(opts.concurrency)
    elif len(opts.n) != len(opts.concurrency):
        parser.error("--n takes one value, or one per concurrency level")
    if opts.repeat < 1 or opts.warmup < 0:
        parser.error("--repeat must be >= 1 and --warmup >= 0")
    return opts


def machine() -> dict[str, Any]:
    model = ""
    with contextlib.suppress(OSError), open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
        model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), "")
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "kernel": platform.release(),
    }


class Stopped(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived: stop the servers, report what was measured, exit 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Raise Stopped on SIGINT, SIGTERM or SIGHUP (also when the shell started us with SIGINT ignored)."""

    def leave(signum: int, _frame: Any) -> None:
        raise Stopped(signum)

    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, leave) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run(opts: argparse.Namespace) -> int:
    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    servers, skipped = plan_servers(opts.names, opts.python.absolute(), opts.cache)
    runs: list[dict[str, Any]] = []
    started: list[Server] = []
    levels = list(zip(opts.concurrency, opts.n, strict=True))
    stopped_by = 0
    try:
        for server in servers:
            try:
                start(server, logs, opts.start_timeout)
                started.append(server)
                smoke(server)
                server.versions = stack_versions(server.python)
                say(f"{server.name}: pid {server.proc.pid if server.proc else '?'} on {server.url}")
            except Skip as exc:
                skipped[server.name] = str(exc)
                say(f"{server.name}: skipped: {exc}")
                stop(server)
        active = [s for s in started if s.name not in skipped]
        if not active:
            say("no server could be started")
            return 2
        total = opts.repeat * len(levels) * len(active)
        count = 0
        for rep in range(1, opts.repeat + 1):
            for concurrency, n in levels:
                for server in active:
                    count += 1
                    report = drive(server, n, concurrency, opts.warmup, opts.time_limit)
                    report.update(server=server.name, repeat=rep, concurrency=concurrency)
                    runs.append(report)
                    if "fatal" in report:
                        say(f"[{count}/{total}] {server.name} c={concurrency}: driver failed: {report['fatal']}")
                    else:
                        say(
                            f"[{count}/{total}] {server.name} c={concurrency}: {report['flows_ok']} ok, "
                            f"{report['flows_failed']} failed, {report['flows_per_s']:.0f} flows/s, "
                            f"server {report['server_cpu_ms_per_flow']:.3f} ms/flow"
                        )
    except KeyboardInterrupt as exc:
        stopped_by = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
        say(f"{signal.Signals(stopped_by).name}: stopping the servers and reporting what was measured")
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the clean-up short
            for server in started:
                stop(server)

    rows = []
    for concurrency, _ in levels:
        for server in servers:
            mine = [r for r in runs if r["server"] == server.name and r["concurrency"] == concurrency]
            if mine:
                rows.append(summarize(server.name, concurrency, mine))
    ratios(rows)
    checks = target_checks(rows, opts.concurrency) if "baton" in opts.names else []
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info = machine()
    print(f"## MRTR comparison, {when}\n")
    print(
        f"{info['cpus']} CPUs ({info['cpu_model']}), Python {info['python']}; driver and servers share them. "
        f"n per run: " + ", ".join(f"{n} at c={c}" for c, n in levels) + f"; warmup {opts.warmup}.\n"
    )
    print(markdown(rows, checks, opts.repeat))
    print("\nStacks:")
    for server in servers:
        if server.versions:
            print(f"- {LABELS[server.name]}: " + ", ".join(f"{k} {v}" for k, v in server.versions.items()))
    for name, reason in skipped.items():
        print(f"- {LABELS[name]}: skipped: {reason}")
    if opts.json:
        document = {
            "date": when,
            "machine": info,
            "levels": [{"concurrency": c, "n": n} for c, n in levels],
            "repeat": opts.repeat,
            "warmup": opts.warmup,
            "stopped_by_signal": stopped_by or None,
            "servers": {
                s.name: {"command": s.argv(s.port), "versions": s.versions} for s in servers if s.name not in skipped
            },
            "skipped": skipped,
            "summary": rows,
            "checks": checks,
            "runs": runs,
        }
        opts.json.write_text(json.dumps(document, indent=1) + "\n")
        say(f"wrote {opts.json}")
    if stopped_by:
        return 128 + stopped_by
    failed = any(c["status"] == "FAIL" for c in checks) or any(r.get("flows_failed") or "fatal" in r for r in runs)
    return 1 if failed else 0


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
