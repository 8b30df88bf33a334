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


def server_figures(good: list[dict[str, Any]]) -> dict[str, Any]:
    cpu = [r["server_cpu_ms_per_flow"] for r in good]
    return {
        "server_cpu_ms_per_flow": statistics.median(cpu),
        "server_cpu_min": min(cpu),
        "server_cpu_max": max(cpu),
        "driver_cpu_ms_per_flow": statistics.median(r["driver_cpu_ms_per_flow"] for r in good),
        "rss_mib_before": good[0]["server_rss_mib_before"],
        "rss_mib_after": good[-1]["server_rss_mib_after"],
        "hwm_mib": max(r["server_hwm_mib"] for r in good),
    }


def ratios(rows: list[dict[str, Any]]) -> None:
    """Add ``x_floor`` (server CPU / floor's) and ``div_mcp`` (mcp's / server CPU) at each concurrency."""
    by_key = {(r["server"], r["concurrency"]): r.get("server_cpu_ms_per_flow") for r in rows}
    for row in rows:
        cpu = row.get("server_cpu_ms_per_flow")
        floor = by_key.get(("floor", row["concurrency"]))
        mcp = by_key.get(("mcp", row["concurrency"]))
        row["x_floor"] = cpu / floor if cpu and floor else None
        row["div_mcp"] = mcp / cpu if cpu and mcp else None


def target_check(
    concurrency: int,
    target: str,
    baton: dict[str, Any],
    ref: str,
    other: dict[str, Any],
    metric: str,
    label: str,
    limit_of: Callable[[float], float],
    ratio: bool = False,
) -> dict[str, Any]:
    """Baton's ``metric`` against ``limit_of(ref's metric)``: PASS, FAIL (also on failed flows) or n/a."""
    mine, theirs = baton.get(metric), other.get(metric)
    check: dict[str, Any] = {"concurrency": concurrency, "target": target, "baton": mine, ref: theirs}
    if mine is None or theirs is None:
        check.update(status="n/a", detail=f"{'Baton' if mine is None else label} not measured")
        return check
    limit = limit_of(theirs)
    ok = mine <= limit and not baton.get("flows_failed")
    also = f"; ratio {mine / theirs:.2f}" if ratio else ""
    detail = f"{mine:.3f} vs limit {limit:.3f} ms/flow ({label} {theirs:.3f}{also})"
    if baton.get("flows_failed"):
        detail += f"; Baton had {baton['flows_failed']} failed flows"
    check.update(status="PASS" if ok else "FAIL", limit=limit, detail=detail)
    return check


def target_checks(rows: list[dict[str, Any]], levels: list[int]) -> list[dict[str, Any]]:
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    limits: tuple[tuple[str, Callable[[float], float], str], ...] = (
        ("floor", lambda theirs: theirs * MAX_FLOOR_RATIO, f"<= {MAX_FLOOR_RATIO:g}x floor"),
        ("mcp", lambda theirs: theirs * (1 / MIN_MCP_DIVISOR), f"<= 1/{MIN_MCP_DIVISOR:g} of mcp 2.3.0"),
    )
    return [
        target_check(
            c,
            f"server CPU {text}",
            by_key.get(("baton", c), {}),
            ref,
            by_key.get((ref, c), {}),
            "server_cpu_ms_per_flow",
            LABELS[ref],
            limit_of,
        )
        for c in levels
        for ref, limit_of, text in limits
    ]


def fmt(value: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return DASH if value is None else f"{value:{spec}}{suffix}"


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
    lines += ["", f"Medians of {up_to}{repeat} runs per row. {text}", "", *heading]
    lines += [f"- c={ch['concurrency']}: {ch['target']}: **{ch['status']}** ({ch['detail']})" for ch in checks]
    return "\n".join(lines)


def markdown(rows: list[dict[str, Any]], checks: list[dict[str, Any]], repeat: int) -> str:
    def cells(r: dict[str, Any]) -> list[str]:
        return [
            f"**{r['server_cpu_ms_per_flow']:.3f}** ({r['server_cpu_min']:.3f}{DASH}{r['server_cpu_max']:.3f})",
            fmt(r["x_floor"], ".2f", TIMES),
            fmt(r["div_mcp"], ".2f"),
            f"{r['rss_mib_before']:.1f} {ARROW} {r['rss_mib_after']:.1f} ({r['hwm_mib']:.1f})",
            f"{r['driver_cpu_ms_per_flow']:.3f}",
        ]

    head = [
        f"server CPU ms/flow (min{DASH}max)",
        f"{TIMES} floor",
        f"{DIVIDE} mcp",
        f"RSS MiB before{ARROW}after (peak)",
        "driver CPU ms/flow",
    ]
    text = (
        f"{TIMES} floor = server CPU / the floor's; "
        f"{DIVIDE} mcp = mcp 2.3.0's server CPU / this row's (4 means a quarter of mcp's)."
    )
    return report_markdown(
        rows,
        checks,
        repeat,
        "server",
        LABELS,
        "server_cpu_ms_per_flow",
        "driver",
        head,
        cells,
        text,
        ("Baton targets (server CPU per flow):",),
    )


# ---------------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------------


def int_list(text: str) -> list[int]:
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError("expected positive integers separated by commas")
    return values


def level_parser(
    prog: str, doc: str, order: tuple[str, ...], n_at_1: int, only: str, repeat: str, warmup: str, time_limit: str
) -> argparse.ArgumentParser:
    """A parser with ``--only`` (names from ``order``) up to ``--time-limit``, the arguments' help texts given."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.partition("\n\n")[0])
    parser.add_argument("--only", default=",".join(order), help=only)
    parser.add_argument("-c", "--concurrency", type=int_list, default=[1, 16], help="concurrency levels (default 1,16)")
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


def level_args(
    parser: argparse.ArgumentParser, argv: list[str] | None, order: tuple[str, ...], n_at_1: int
) -> argparse.Namespace:
    """Parse; ``names`` is ``--only`` in ``order``, ``n`` one value per concurrency level."""
    opts = parser.parse_args(argv)
    names = [name.strip() for name in opts.only.split(",") if name.strip()]
    if not names or set(names) - set(order):
        parser.error(f"--only takes names from {','.join(order)}; got {opts.only!r}")
    opts.names = [name for name in order if name in names]
    if opts.n is None:
        opts.n = [n_at_1 if c == 1 else 2 * n_at_1 for c in opts.concurrency]
    elif len(opts.n) == 1:
        opts.n = opts.n * len(opts.concurrency)
    elif len(opts.n) != len(opts.concurrency):
        parser.error("--n takes one value, or one per concurrency level")
    return opts


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = level_parser(
        "bench/compare",
        __doc__,
        SERVER_ORDER,
        2000,
        only="servers to run, comma-separated, from baton,floor,mcp,fastmcp (default all)",
        repeat="runs per server and level (default 3)",
        warmup="unmeasured flows per run (default 200)",
        time_limit="seconds after which a driver run starts no new flow (default 300)",
    )
    setup_options(
        parser,
        python="Python of Baton's venv, for Baton (its baton script) and the floor (default .venv/bin/python)",
        cache="where the peer venvs and server logs go (default .cache/bench)",
        start_timeout="seconds for a server to listen",
    )
    opts = level_args(parser, argv, SERVER_ORDER, 2000)
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


def heading(title: str, sharing: str, levels: list[tuple[int, int]], warmup: int, note: str = "") -> tuple[str, Any]:
    """Print the title and the machine line; the date and the machine."""
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    info = machine()
    print(f"## {title}, {when}\n")
    print(
        f"{info['cpus']} CPUs ({info['cpu_model']}), Python {info['python']}; {sharing} n per run: "
        + ", ".join(f"{n} at c={c}" for c, n in levels)
        + f"; warmup {warmup}.{note}\n"
    )
    return when, info


def print_versions(
    title: str, versions: dict[str, dict[str, str]], skipped: dict[str, str], labels: dict[str, str]
) -> None:
    print(f"\n{title}:")
    for name, found in versions.items():
        print(f"- {labels[name]}: " + ", ".join(f"{k} {v}" for k, v in found.items()))
    for name, reason in skipped.items():
        print(f"- {labels[name]}: skipped: {reason}")


def finish(opts: argparse.Namespace, document: dict[str, Any], failed: bool, say: Callable[[str], None]) -> int:
    """Write ``document`` to ``--json`` if given; the exit status: 128 + the signal that stopped the run, 1 when
    ``failed`` or a run failed, else 0."""
    if opts.json:
        opts.json.write_text(json.dumps(document, indent=1) + "\n")
        say(f"wrote {opts.json}")
    if document["stopped_by_signal"]:
        return 128 + int(document["stopped_by_signal"])
    return 1 if failed or any(r.get("flows_failed") or "fatal" in r for r in document["runs"]) else 0


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
    except KeyboardInterrupt as exc:
        stopped_by = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
        say(f"{signal.Signals(stopped_by).name}: stopping the servers and reporting what was measured")
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the clean-up short
            for server in started:
                stop(server)

    rows = summarize("server", [s.name for s in servers], levels, runs, server_figures)
    ratios(rows)
    checks = target_checks(rows, opts.concurrency) if "baton" in opts.names else []
    when, info = heading("MRTR comparison", "driver and servers share them.", levels, opts.warmup)
    print(markdown(rows, checks, opts.repeat))
    print_versions("Stacks", {s.name: s.versions for s in servers if s.versions}, skipped, LABELS)
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
    return finish(opts, document, any(c["status"] == "FAIL" for c in checks), say)


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
    sys.exit(main())
