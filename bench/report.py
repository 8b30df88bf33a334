"""The Markdown report and the JSON document of a comparison: heading, tables, target lines, and the exit status.

The tables of the servers (and, through ``report_markdown``, of bench/client_compare's clients), of each
server's ``requestState`` and import time, the check lines, and the heading with the machine and the commit
Baton was measured at. ``finish`` writes the JSON document and gives the exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import platform
import statistics
import subprocess
from collections.abc import Callable
from typing import Any

from lineup import IMPORTS, LABELS
from processes import ROOT
from stats import quotient
from targets import CPU_CHECK_LEVELS

TIMES, DIVIDE, DASH, ARROW = "\u00d7", "\u00f7", "\u2013", "\u2192"  # Markdown output


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


def fmt(value: float | None, spec: str = ".3f", suffix: str = "") -> str:
    return DASH if value is None else f"{value:{spec}}{suffix}"


def check_line(check: dict[str, Any]) -> str:
    where = "" if check.get("concurrency") is None else f"c={check['concurrency']}: "
    return f"- {where}{check['target']}: **{check['status']}** ({check['detail']})"


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
        "Baton, the third-party imports at the top of `peers/*.py` for the peers. Serving HTTP imports "
        "more later (uvicorn and the ASGI stack), for every server.",
    ]
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
