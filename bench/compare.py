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
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pairs

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
CPU_CHECK_LEVELS = (1, 16)  # the concurrency levels at which the two server CPU targets are checked
MAX_FLOOR_RATIO = 1.6  # Baton's server CPU per round trip must be at most this many times the floor's
MIN_MCP_DIVISOR = 8.0  # ... and at most 1/this of mcp 2.3.0's
FLOWS_CHECK_LEVEL = 16  # the concurrency at which ...
MIN_MCP_FLOWS_RATIO = 10.0  # ... Baton's flows/s must be at least this many times mcp 2.3.0's
MIN_IMPORT_DIVISOR = 4.0  # Baton's import time must be at most 1/this of mcp 2.3.0's
MAX_STATE_BYTES = 120  # the requestState of a one-question flow must be shorter than this
# What each server's module imports from its library, as its author writes it: the README's example for Baton,
# the third-party imports at the top of bench/peers/mcp_server.py and bench/peers/fastmcp_server.py for the peers.
IMPORTS = {
    "baton": "from baton import Context, Server",
    "mcp": "from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve; "
    "from pydantic import BaseModel, Field",
    "fastmcp": "from fastmcp import Context, FastMCP; "
    "from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult",
}


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


def drive(
    server: Server,
    n: int,
    concurrency: int,
    warmup: int,
    time_limit: float,
    load: tuple[str, ...] = (sys.executable, str(LOAD)),
    who: str = "the driver",
    server_figures: bool = True,
) -> dict[str, Any]:
    """One run of the ``load`` command (bench/load.py by default) against the server; a report dict, with
    ``fatal`` set when ``who`` could not run (or the server had no figures, when ``server_figures``)."""
    assert server.proc is not None
    argv = [
        *load,
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
        return {"fatal": f"{who} ran past {time_limit + 120:g} s and was stopped"}
    if done.returncode == 2 or not done.stdout.strip():
        return {"fatal": done.stderr.decode(errors="replace").strip()[-500:] or f"exit {done.returncode}"}
    report: dict[str, Any] = json.loads(done.stdout)
    if server_figures and report.get("server_cpu_ms_per_flow") is None:
        report["fatal"] = "the server exited during the run: " + done.stderr.decode(errors="replace")[-300:]
    return report


def smoked(report: dict[str, Any]) -> dict[str, Any]:
    """The report of a smoke run of a few flows; raise Skip if the run or any flow failed."""
    if "fatal" in report:
        raise Skip(f"smoke test failed: {report['fatal']}")
    if report["flows_failed"]:
        raise Skip(f"smoke test flows failed: {report['errors']} {report['error_samples'][:1]}")
    return report


# ---------------------------------------------------------------------------------------------------
# Import time
# ---------------------------------------------------------------------------------------------------


def wall_ms(argv: list[str], cwd: str) -> float:
    """The wall time of one run of ``argv``, in ms; raise Skip if it fails."""
    t0 = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    took = (time.perf_counter() - t0) * 1000
    if done.returncode != 0:
        last = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise Skip(f"exit {done.returncode}: {' '.join(last)}")
    return took


def import_times(pythons: dict[str, Path], runs: int) -> dict[str, dict[str, Any]]:
    """Each library's import time, in its own server's venv (``pythons``): the median over ``runs`` of the wall
    time of a fresh ``python -E -c IMPORTS[name]`` minus that of a fresh ``python -E -c pass`` run beside it.

    One unmeasured run of each comes first, so that bytecode caches are warm. The libraries take turns, and
    the order within each pair alternates, against drift. The current directory is an empty temporary one.
    """
    results: dict[str, dict[str, Any]] = {}
    diffs: dict[str, list[float]] = {name: [] for name in pythons}
    bases: dict[str, list[float]] = {name: [] for name in pythons}
    with tempfile.TemporaryDirectory(prefix="baton-bench-import-") as cwd:
        for rep in range(runs + 1):
            for name, python in pythons.items():
                if "error" in results.get(name, {}):
                    continue
                pair = [[str(python), "-E", "-c", "pass"], [str(python), "-E", "-c", IMPORTS[name]]]
                try:
                    took = [wall_ms(argv, cwd) for argv in (pair if rep % 2 else pair[::-1])]
                except (Skip, OSError, subprocess.SubprocessError) as exc:
                    results[name] = {"statement": IMPORTS[name], "error": str(exc)}
                    say(f"{name}: import time not measured: {exc}")
                    continue
                base, loaded = (took[0], took[1]) if rep % 2 else (took[1], took[0])
                if rep:  # the first pair only warms the caches
                    bases[name].append(base)
                    diffs[name].append(loaded - base)
    for name, python in pythons.items():
        if name in results:
            continue
        results[name] = {
            "statement": IMPORTS[name],
            "python": str(python),
            "runs": runs,
            "import_ms": round(statistics.median(diffs[name]), 2),
            "import_ms_min": round(min(diffs[name]), 2),
            "import_ms_max": round(max(diffs[name]), 2),
            "bare_python_ms": round(statistics.median(bases[name]), 2),
        }
        say(
            f"{name}: import {results[name]['import_ms']:.1f} ms (a bare python: {results[name]['bare_python_ms']:.1f})"
        )
    return results


# ---------------------------------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------------------------------


def summarize(
    key: str,
    names: list[str],
    levels: list[tuple[int, int]],
    runs: list[dict[str, Any]],
    figures: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """A row per level and ``key`` name that has runs: counts and medians, then ``figures(good runs)``."""
    rows = []
    for concurrency, _ in levels:
        for name in names:
            mine = [r for r in runs if r[key] == name and r["concurrency"] == concurrency]
            if not mine:
                continue
            good = [r for r in mine if "fatal" not in r]
            row: dict[str, Any] = {
                key: name,
                "concurrency": concurrency,
                "runs": len(mine),
                "fatal_runs": len(mine) - len(good),
            }
            if good:
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
                        **figures(good),
                    }
                )
            rows.append(row)
    return rows


def per_round_trip(good: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """``metric`` (a CPU per flow) divided by each run's requests per flow: the median, lowest and highest."""
    values = [r[metric] / r["rounds_per_flow"] for r in good if r.get(metric) is not None and r.get("rounds_per_flow")]
    if not values:
        return {"rounds_per_flow": None, "per_rt": None, "per_rt_min": None, "per_rt_max": None}
    return {
        "rounds_per_flow": statistics.median(r["rounds_per_flow"] for r in good if r.get("rounds_per_flow")),
        "per_rt": statistics.median(values),
        "per_rt_min": min(values),
        "per_rt_max": max(values),
    }


def server_figures(good: list[dict[str, Any]]) -> dict[str, Any]:
    cpu = [r["server_cpu_ms_per_flow"] for r in good]
    rt = per_round_trip(good, "server_cpu_ms_per_flow")
    states = [r["request_state_bytes"] for r in good if r.get("request_state_bytes")]
    return {
        "server_cpu_ms_per_flow": statistics.median(cpu),
        "server_cpu_min": min(cpu),
        "server_cpu_max": max(cpu),
        "rounds_per_flow": rt["rounds_per_flow"],
        "server_cpu_ms_per_rt": rt["per_rt"],
        "server_cpu_rt_min": rt["per_rt_min"],
        "server_cpu_rt_max": rt["per_rt_max"],
        "request_state_bytes": statistics.median(s["median"] for s in states) if states else None,
        "request_state_min": min(s["min"] for s in states) if states else None,
        "request_state_max": max(s["max"] for s in states) if states else None,
        "driver_cpu_ms_per_flow": statistics.median(r["driver_cpu_ms_per_flow"] for r in good),
        "rss_mib_before": good[0]["server_rss_mib_before"],
        "rss_mib_after": good[-1]["server_rss_mib_after"],
        "hwm_mib": max(r["server_hwm_mib"] for r in good),
    }


def quotient(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top and bottom else None


def ratios(rows: list[dict[str, Any]], paired: dict[int, dict[str, Any]] | None = None) -> None:
    """Add, at each concurrency: ``x_floor`` (server CPU per round trip / the floor's; Baton's from ``paired``
    where it has a ratio), ``div_mcp`` (mcp 2.3.0's server CPU per round trip / this row's) and ``flows_x_mcp``
    (flows/s / mcp 2.3.0's)."""
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    for row in rows:
        floor = by_key.get(("floor", row["concurrency"]), {})
        mcp = by_key.get(("mcp", row["concurrency"]), {})
        row["x_floor"] = quotient(row.get("server_cpu_ms_per_rt"), floor.get("server_cpu_ms_per_rt"))
        pair = (paired or {}).get(row["concurrency"], {})
        if row["server"] == "baton" and "ratio" in pair:
            row["x_floor"] = pair["ratio"]
        row["div_mcp"] = quotient(mcp.get("server_cpu_ms_per_rt"), row.get("server_cpu_ms_per_rt"))
        row["flows_x_mcp"] = quotient(row.get("flows_per_s"), mcp.get("flows_per_s"))


def target_check(
    concurrency: int | None,
    target: str,
    baton: dict[str, Any],
    ref: str,
    other: dict[str, Any],
    metric: str,
    label: str,
    limit_of: Callable[[float], float],
    ratio: bool = False,
    *,
    at_least: bool = False,
    unit: str = "ms/flow",
    spec: str = ".3f",
) -> dict[str, Any]:
    """Baton's ``metric`` against ``limit_of(ref's metric)``: at most (``at_least``: at least) that limit for a
    PASS; FAIL otherwise or when Baton had failed flows; n/a when either was not measured."""
    mine, theirs = baton.get(metric), other.get(metric)
    check: dict[str, Any] = {"concurrency": concurrency, "target": target, "baton": mine, ref: theirs}
    if mine is None or theirs is None:
        check.update(status="n/a", detail=f"{'Baton' if mine is None else label} not measured")
        return check
    limit = limit_of(theirs)
    slack = abs(limit) * 1e-9  # a figure exactly at the limit passes, whatever the float rounding
    ok = (mine >= limit - slack if at_least else mine <= limit + slack) and not baton.get("flows_failed")
    also = f"; ratio {mine / theirs:.2f}" if ratio and theirs else ""
    detail = f"{mine:{spec}} vs limit {limit:{spec}} {unit} ({label} {theirs:{spec}}{also})"
    if baton.get("flows_failed"):
        detail += f"; Baton had {baton['flows_failed']} failed flows"
    check.update(status="PASS" if ok else "FAIL", limit=limit, detail=detail)
    return check


def state_check(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Baton's requestState for the one-question flow: every one seen under MAX_STATE_BYTES."""
    sizes = [r for r in rows if r["server"] == "baton" and r.get("request_state_max") is not None]
    check: dict[str, Any] = {
        "concurrency": None,
        "target": f"requestState of the one-question flow < {MAX_STATE_BYTES} bytes",
    }
    if not sizes:
        return {**check, "status": "n/a", "detail": "Baton not measured"}
    largest = max(r["request_state_max"] for r in sizes)
    median = statistics.median(r["request_state_bytes"] for r in sizes)
    status = "PASS" if largest < MAX_STATE_BYTES else "FAIL"
    detail = f"largest seen {largest} bytes, median {median:g}"
    return {**check, "status": status, "baton": largest, "limit": MAX_STATE_BYTES, "detail": detail}


def target_checks(
    rows: list[dict[str, Any]],
    levels: list[int],
    imports: dict[str, dict[str, Any]],
    paired: dict[int, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Baton's server targets: CPU per round trip at each of CPU_CHECK_LEVELS, flows/s at FLOWS_CHECK_LEVEL,
    the import time and the requestState size (checks of what was not measured are n/a). The floor checks use
    the pooled figures of ``paired`` at the levels where it has them."""
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    limits: tuple[tuple[str, Callable[[float], float], str], ...] = (
        ("floor", lambda theirs: theirs * MAX_FLOOR_RATIO, f"<= {MAX_FLOOR_RATIO:g}x floor"),
        ("mcp", lambda theirs: theirs * (1 / MIN_MCP_DIVISOR), f"<= 1/{MIN_MCP_DIVISOR:g} of mcp 2.3.0"),
    )
    checks = []
    for c in levels:
        if c not in CPU_CHECK_LEVELS:
            continue
        for ref, limit_of, text in limits:
            baton, other = by_key.get(("baton", c), {}), by_key.get((ref, c), {})
            label, spec = LABELS[ref], ".3f"
            pair = (paired or {}).get(c, {})
            if ref == "floor" and "ratio" in pair:
                failed = baton.get("flows_failed", 0) + pair["baton_flows_failed"]
                baton = {"server_cpu_ms_per_rt": pair["baton_cpu_ms_per_rt"], "flows_failed": failed}
                other = {"server_cpu_ms_per_rt": pair["floor_cpu_ms_per_rt"]}
                label, spec = f"floor, pooled over {pair['pairs_used']} pairs", ".4f"
            checks.append(
                target_check(
                    c,
                    f"server CPU per round trip {text}",
                    baton,
                    ref,
                    other,
                    "server_cpu_ms_per_rt",
                    label,
                    limit_of,
                    ratio=True,
                    unit="ms/round trip",
                    spec=spec,
                )
            )
    if FLOWS_CHECK_LEVEL in levels:
        checks.append(
            target_check(
                FLOWS_CHECK_LEVEL,
                f"flows/s >= {MIN_MCP_FLOWS_RATIO:g}x mcp 2.3.0",
                by_key.get(("baton", FLOWS_CHECK_LEVEL), {}),
                "mcp",
                by_key.get(("mcp", FLOWS_CHECK_LEVEL), {}),
                "flows_per_s",
                LABELS["mcp"],
                lambda theirs: theirs * MIN_MCP_FLOWS_RATIO,
                ratio=True,
                at_least=True,
                unit="flows/s",
                spec=".0f",
            )
        )
    if imports:
        checks.append(
            target_check(
                None,
                f"import time <= 1/{MIN_IMPORT_DIVISOR:g} of mcp 2.3.0's",
                imports.get("baton", {}),
                "mcp",
                imports.get("mcp", {}),
                "import_ms",
                LABELS["mcp"],
                lambda theirs: theirs / MIN_IMPORT_DIVISOR,
                ratio=True,
                unit="ms",
                spec=".1f",
            )
        )
    checks.append(state_check(rows))
    return checks


def informational(rows: list[dict[str, Any]], levels: list[int]) -> list[str]:
    """A line of Baton's ratios at each measured level that no target covers (c=64 by default)."""
    lines = []
    for c in levels:
        if c in CPU_CHECK_LEVELS:
            continue
        row = next((r for r in rows if r["server"] == "baton" and r["concurrency"] == c), None)
        if row is None or row.get("server_cpu_ms_per_rt") is None:
            continue
        lines.append(
            f"- c={c} (informational, no target): server CPU per round trip {row['server_cpu_ms_per_rt']:.3f} ms, "
            f"{fmt(row['x_floor'], '.2f', 'x')} floor, 1/{fmt(row['div_mcp'], '.2f')} of mcp 2.3.0; "
            f"flows/s {fmt(row['flows_x_mcp'], '.2f', 'x')} mcp 2.3.0's"
        )
    return lines


def fmt(value: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return DASH if value is None else f"{value:{spec}}{suffix}"


def check_line(check: dict[str, Any]) -> str:
    where = "" if check.get("concurrency") is None else f"c={check['concurrency']}: "
    return f"- {where}{check['target']}: **{check['status']}** ({check['detail']})"


def report_markdown(
    rows: list[dict[str, Any]],
    checks: list[dict[str, Any]],
    repeat: int,
    key: str,
    labels: dict[str, str],
    metric: str,
    who: str,
    head: list[str],
    cells: Callable[[dict[str, Any]], list[str]],
    text: str,
    heading: tuple[str, ...] = (),
) -> str:
    """The Markdown table (``key``, c, flows/s, p50 / p99, the ``head`` columns of ``cells(row)``, errors; dashes
    where no run gave ``metric``, as ``who`` failed), then ``text`` on the figures, ``heading`` and the checks."""
    head = [key, "c", "flows/s", "p50 / p99 ms", *head, "errors"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        label = labels[r[key]]
        failed = f"{who} failed in {r['fatal_runs']}/{r['runs']} runs"
        if metric not in r:
            lines.append(f"| {label} | {r['concurrency']} | " + " | ".join([DASH] * (len(head) - 3)) + f" | {failed} |")
            continue
        errors = str(r["flows_failed"])
        if r["errors"]:
            errors += " (" + ", ".join(f"{k} {v}" for k, v in r["errors"].items()) + ")"
        if r["fatal_runs"]:
            errors += f"; {failed}"
        first = [label, str(r["concurrency"]), f"{r['flows_per_s']:.0f}", f"{r['p50_ms']:.2f} / {r['p99_ms']:.2f}"]
        lines.append("| " + " | ".join([*first, *cells(r), errors]) + " |")
    up_to = "" if all(r["runs"] == repeat for r in rows) else "up to "
    lines += ["", f"Medians of {up_to}{repeat} runs per row. {text}"]
    if heading or checks:
        lines += ["", *heading, *(check_line(ch) for ch in checks)]
    return "\n".join(lines)


def markdown(
    rows: list[dict[str, Any]], checks: list[dict[str, Any]], repeat: int, paired_levels: tuple[int, ...] = ()
) -> str:
    def cells(r: dict[str, Any]) -> list[str]:
        return [
            f"{r['server_cpu_ms_per_flow']:.3f} ({r['server_cpu_min']:.3f}{DASH}{r['server_cpu_max']:.3f})",
            f"**{fmt(r['server_cpu_ms_per_rt'])}**",
            fmt(r["x_floor"], ".2f", TIMES),
            fmt(r["div_mcp"], ".2f"),
            fmt(r["flows_x_mcp"], ".2f", TIMES),
            f"{r['rss_mib_before']:.1f} {ARROW} {r['rss_mib_after']:.1f} ({r['hwm_mib']:.1f})",
            f"{r['driver_cpu_ms_per_flow']:.3f}",
        ]

    head = [
        f"server CPU ms/flow (min{DASH}max)",
        "server CPU ms/round trip",
        f"{TIMES} floor",
        f"{DIVIDE} mcp",
        f"flows/s {TIMES} mcp",
        f"RSS MiB before{ARROW}after (peak)",
        "driver CPU ms/flow",
    ]
    text = (
        "A flow is two round trips (two `tools/call` requests); server CPU per round trip = server CPU per flow "
        f"/ requests per flow, run by run. {TIMES} floor = server CPU per round trip / the floor's; "
        f"{DIVIDE} mcp = mcp 2.3.0's server CPU per round trip / this row's (8 means an eighth of mcp's); "
        f"flows/s {TIMES} mcp = flows/s / mcp 2.3.0's, at the same concurrency."
    )
    if paired_levels:
        where = " and ".join(f"c={c}" for c in paired_levels)
        text += f" Baton's {TIMES} floor at {where} is from the short runs in pairs (next table), not these medians."
    return report_markdown(
        rows, checks, repeat, "server", LABELS, "server_cpu_ms_per_flow", "driver", head, cells, text
    )


def per_server_markdown(rows: list[dict[str, Any]], names: list[str], imports: dict[str, dict[str, Any]]) -> str:
    """The requestState size and the import time of each server, with what each import statement was."""
    lines = [
        f"| server | requestState bytes: median (min{DASH}max) | import time ms: median (min{DASH}max) "
        f"| {TIMES} Baton's | bare `python` ms | what is imported |",
        "|---|---|---|---|---|---|",
    ]
    baton_ms = imports.get("baton", {}).get("import_ms")
    for name in names:
        mine = [r for r in rows if r["server"] == name and r.get("request_state_bytes") is not None]
        state = DASH
        if mine:
            median = statistics.median(r["request_state_bytes"] for r in mine)
            low, high = min(r["request_state_min"] for r in mine), max(r["request_state_max"] for r in mine)
            state = f"**{median:g}** ({low}{DASH}{high})"
        found = imports.get(name, {})
        if "import_ms" in found:
            took = f"**{found['import_ms']:.1f}** ({found['import_ms_min']:.1f}{DASH}{found['import_ms_max']:.1f})"
            cells = [took, fmt(quotient(found["import_ms"], baton_ms), ".2f", TIMES), f"{found['bare_python_ms']:.1f}"]
        else:
            cells = [f"not measured: {found['error']}" if "error" in found else DASH, DASH, DASH]
        what = f"`{IMPORTS[name]}`" if name in IMPORTS else "(a bench script: stdlib `json` and uvicorn)"
        lines.append(f"| {LABELS[name]} | {state} | " + " | ".join(cells) + f" | {what} |")
    runs = next((found["runs"] for found in imports.values() if "runs" in found), 0)
    lines += [
        "",
        "requestState bytes: the length (UTF-8, before JSON escaping) of the `requestState` string the server "
        "returns with its one question, as the driver saw it in every measured flow; the median over the runs of "
        "each run's median, with the smallest and largest seen. "
        f"Import time: in the server's own venv, the median over {runs} runs of the wall time of a fresh "
        "`python -E -c '<what is imported>'` minus that of a fresh `python -E -c pass` run beside it "
        "(interpreter start-up and the venv's `.pth` files cancel out), after one unmeasured run of each. "
        "What is imported is what each server's module imports from its library: the README's example for "
        "Baton, the third-party imports at the top of `bench/peers/*.py` for the peers. Serving HTTP imports "
        "more later (uvicorn and the ASGI stack), for every server.",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------


def int_list(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas")
    return values


def level_parser(
    prog: str,
    doc: str,
    order: tuple[str, ...],
    n_at_1: int,
    only: str,
    repeat: str,
    warmup: str,
    time_limit: str,
    concurrency: tuple[int, ...] = (1, 16),
) -> argparse.ArgumentParser:
    """A parser with ``--only`` (names from ``order``) up to ``--time-limit``, the arguments' help texts given."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.partition("\n\n")[0])
    parser.add_argument("--only", default=",".join(order), help=only)
    levels = ",".join(map(str, concurrency))
    parser.add_argument(
        "-c", "--concurrency", type=int_list, default=list(concurrency), help=f"concurrency levels (default {levels})"
    )
    parser.add_argument(
        "-n",
        "--n",
        type=int_list,
        default=None,
        help="measured flows per run, one value for all levels or one per level "
        f"(default {n_at_1} at c=1, {2 * n_at_1} otherwise)",
    )
    parser.add_argument("--repeat", type=int, default=3, help=repeat)
    parser.add_argument("--warmup", type=int, default=200, help=warmup)
    parser.add_argument("--time-limit", type=float, default=300.0, help=time_limit)
    return parser


def setup_options(parser: argparse.ArgumentParser, python: str, cache: str, start_timeout: str) -> None:
    """Add ``--python``, ``--cache``, ``--start-timeout`` (with these help texts) and ``--json``."""
    parser.add_argument("--python", type=Path, default=ROOT / ".venv" / "bin" / "python", help=python)
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench", help=cache)
    parser.add_argument("--start-timeout", type=float, default=60.0, help=start_timeout)
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every figure to this JSON file")


def per_level(values: list[int] | None, levels: list[int], n_at_1: int) -> list[int] | None:
    """One n per level: ``values`` spread (one value for all), the default when None; None when they do not fit."""
    if values is None:
        return [n_at_1 if c == 1 else 2 * n_at_1 for c in levels]
    if len(values) == 1:
        return values * len(levels)
    return values if len(values) == len(levels) else None


def level_args(
    parser: argparse.ArgumentParser, argv: list[str] | None, order: tuple[str, ...], n_at_1: int
) -> argparse.Namespace:
    """Parse; ``names`` is ``--only`` in ``order``, ``n`` one value per concurrency level."""
    opts = parser.parse_args(argv)
    names = [name.strip() for name in opts.only.split(",") if name.strip()]
    if not names or set(names) - set(order):
        parser.error(f"--only takes names from {','.join(order)}; got {opts.only!r}")
    opts.names = [name for name in order if name in names]
    opts.n = per_level(opts.n, opts.concurrency, n_at_1)
    if opts.n is None:
        parser.error("--n takes one value, or one per concurrency level")
    return opts


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


def measure(
    opts: argparse.Namespace,
    levels: list[tuple[int, int]],
    names: list[str],
    drive_one: Callable[[str, int, int], dict[str, Any]],
    runs: list[dict[str, Any]],
    key: str,
    failed: str,
    who: str,
    say: Callable[[str], None],
    alternate: bool = False,
) -> None:
    """``opts.repeat`` rounds of ``drive_one(name, n, concurrency)`` for each level and name, into ``runs``, with a
    progress line each (``failed`` for a run that could not measure, ``who``'s CPU per flow otherwise)."""
    total = opts.repeat * len(levels) * len(names)
    count = 0
    for rep in range(1, opts.repeat + 1):
        order = names if rep % 2 or not alternate else names[::-1]  # alternate who goes first, against drift
        for concurrency, n in levels:
            for name in order:
                count += 1
                report = drive_one(name, n, concurrency)
                report.update({key: name, "repeat": rep, "concurrency": concurrency})
                runs.append(report)
                if "fatal" in report:
                    figures = f"{failed}: {report['fatal']}"
                else:
                    figures = (
                        f"{report['flows_ok']} ok, {report['flows_failed']} failed, "
                        f"{report['flows_per_s']:.0f} flows/s, {who} {report[f'{who}_cpu_ms_per_flow']:.3f} ms/flow"
                    )
                say(f"[{count}/{total}] {name} c={concurrency}: {figures}")


def heading(
    title: str, sharing: str, levels: list[tuple[int, int]], warmup: int, note: str = ""
) -> tuple[str, dict[str, Any], str]:
    """The date, the machine, and the Markdown title and machine line (with n per run and the warmup, if
    ``levels`` are given)."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info = machine()
    runs = " n per run: " + ", ".join(f"{n} at c={c}" for c, n in levels) + f"; warmup {warmup}." if levels else ""
    text = (
        f"## {title}, {when}\n\n"
        f"{info['cpus']} CPUs ({info['cpu_model']}), Python {info['python']}, Linux {info['kernel']}; "
        f"{sharing}{runs}{note}\n"
    )
    return when, info, text


def versions_text(
    title: str, versions: dict[str, dict[str, str]], skipped: dict[str, str], labels: dict[str, str]
) -> str:
    lines = [f"{title}:"]
    lines += [
        f"- {labels[name]}: " + ", ".join(f"{k} {v}" for k, v in found.items()) for name, found in versions.items()
    ]
    lines += [f"- {labels[name]}: skipped: {reason}" for name, reason in skipped.items()]
    return "\n".join(lines)


def finish(opts: argparse.Namespace, document: dict[str, Any], failed: bool, say: Callable[[str], None]) -> int:
    """Write ``document`` to ``--json`` if given; the exit status: 128 + the signal that stopped the run, 1 when
    ``failed`` or a run failed, else 0."""
    if opts.json:
        opts.json.write_text(json.dumps(document, indent=1) + "\n")
        say(f"wrote {opts.json}")
    if document["stopped_by_signal"]:
        return 128 + int(document["stopped_by_signal"])
    return 1 if failed or any(r.get("flows_failed") or "fatal" in r for r in document["runs"]) else 0


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
    import chart
    import client_compare  # here: it imports this module (see the end of this file)

    logs = opts.cache / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    servers, skipped = plan_servers(opts.names, opts.python.absolute(), opts.cache)
    runs: list[dict[str, Any]] = []
    pair_runs: list[dict[str, Any]] = []
    started: list[Server] = []
    levels = list(zip(opts.concurrency, opts.n, strict=True))
    imports: dict[str, dict[str, Any]] = {}
    stopped_by = 0
    try:
        if opts.import_runs:  # first, while no server is running beside it
            pythons = {s.name: s.python for s in servers if s.name in IMPORTS}
            say(f"import time of {', '.join(pythons)}: {opts.import_runs} runs each")
            imports = import_times(pythons, opts.import_runs)
        for server in servers:
            try:
                start(server, logs, opts.start_timeout)
                started.append(server)
                smoked(drive(server, 3, 1, 0, 30))  # so that a server that cannot serve the workload is skipped
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
    except KeyboardInterrupt as exc:
        stopped_by = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
        say(f"{signal.Signals(stopped_by).name}: stopping the servers and reporting what was measured")
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the clean-up short
            for server in started:
                stop(server)

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
    client_runs = client["runs"] if client else []
    failed = any(c["status"] == "FAIL" for c in [*checks, *client_checks]) or any(
        r.get("flows_failed") or "fatal" in r for r in [*client_runs, *pair_runs]
    )
    return finish(opts, document, failed, say)


def run_stoppable(
    run: Callable[[argparse.Namespace], int], opts: argparse.Namespace, say: Callable[[str], None]
) -> int:
    """``run(opts)``, or 128 + the signal number when a signal stops it."""
    with stop_on_signals():
        try:
            return run(opts)
        except Stopped as exc:  # during the venv set-up or the report; the measuring part handles its own
            say(f"{signal.Signals(exc.signum).name}: stopped")
            return 128 + exc.signum


def main(argv: list[str] | None = None) -> int:
    return run_stoppable(run, parse_args(argv), say)


if __name__ == "__main__":
    # bench/client_compare.py does ``from compare import ...``: let it find this very module, not a second copy
    # (whose Stopped would be another class than the one this module raises).
    sys.modules.setdefault("compare", sys.modules[__name__])
    sys.exit(main())
