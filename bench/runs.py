"""Runs of a load driver against a started server: one run, the smoke run, and the rounds of repeated runs;
and starting the servers, each smoke-tested (``start_smoked``).

The driver is bench/load.py for the servers and bench/client_load.py for the clients; each prints a JSON
report, which comes back as a dict (with ``fatal`` set when the run could not measure). ``measure`` takes the
runs of every name at every level ``--repeat`` times, interleaved, with a progress line after each.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from processes import ROOT, Server, Skip, start, stop
from venvs import stack_versions

LOAD = ROOT / "bench" / "load.py"


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


def start_smoked(
    servers: list[Server],
    logs: Path,
    wait: float,
    smoke: Callable[[Server], dict[str, Any]],
    started: list[Server],
    skipped: dict[str, str],
    say: Callable[[str], None],
) -> list[Server]:
    """Start each server (into ``started``), smoke-test it with ``smoke`` and read its stack's versions; one that
    fails to start or to serve the workload is stopped and skipped (its reason into ``skipped``). The others."""
    for server in servers:
        started.append(server)  # before it starts: a signal during the start-up wait stops it too
        try:
            start(server, logs, wait)
            smoked(smoke(server))
            server.versions = stack_versions(server.python)
            say(f"{server.name}: pid {server.proc.pid if server.proc else '?'} on {server.url}")
        except Skip as exc:
            skipped[server.name] = str(exc)
            say(f"{server.name}: skipped: {exc}")
            stop(server)
    return [s for s in started if s.name not in skipped]


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
