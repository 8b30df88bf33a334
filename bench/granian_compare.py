"""Baton and the floor on granian 2.x beside uvicorn + httptools + uvloop: server CPU per round trip from paired
short runs, at each level, in one run.

Six servers on 127.0.0.1, one worker each, serving the apps of bench/granian_apps.py, so that the two servers
of a pair differ only in the HTTP server underneath:

- ``floor-uvicorn`` and ``floor-granian``: bench/floor.py's bare ASGI app, driven by bench/load.py (2026-07-28);
- ``baton-uvicorn`` and ``baton-granian``: examples/everything.py's ``server.asgi()``, driven by bench/load.py;
- ``session-uvicorn`` and ``session-granian``: the same Baton app in a 2025-11-25 session, driven by
  bench/legacy_load.py (the tool asks on the call's stream and the driver answers by POST).

uvicorn runs with ``--http httptools --loop uvloop``; granian with ``--interface asgi --loop uvloop``. Each pair
is a run on uvicorn and a run on granian back to back, who goes first alternating; a server's figure is its CPU
pooled over the pairs (bench/pairs.py says why). Printed: one Markdown table, the figures and granian's
advantage (uvicorn's CPU per round trip over granian's; above 1 means granian is cheaper), or one JSON object
with ``--json``.

    .venv/bin/python bench/granian_compare.py --pairs 10 --pair-n 1000
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import pairs
from processes import ROOT, Server, Skip, say, start, stop
from runs import drive, smoked

BENCH = ROOT / "bench"
LOADS = {"baton": BENCH / "load.py", "floor": BENCH / "load.py", "session": BENCH / "legacy_load.py"}
APPS = {"baton": "granian_apps:baton", "floor": "granian_apps:floor_app", "session": "granian_apps:baton"}
HTTP_SERVERS = ("granian", "uvicorn")
GRANIAN_TUNING: list[str] = []  # --granian-tuning: extra granian options (its runtime's threads and mode)


def command(http_server: str, app: str) -> Any:
    venv = Path(sys.executable).parent
    if http_server == "granian":
        return lambda port: [
            str(venv / "granian"),
            *("--interface", "asgi", "--host", "127.0.0.1", "--port", str(port)),
            *("--loop", "uvloop", "--workers", "1", "--http", "1", *GRANIAN_TUNING),
            *("--working-dir", str(BENCH), "--log-level", "warning", app),
        ]
    return lambda port: [
        str(venv / "uvicorn"),
        *("--host", "127.0.0.1", "--port", str(port), "--http", "httptools", "--loop", "uvloop"),
        *("--app-dir", str(BENCH), "--log-level", "warning", app),
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,16", help="concurrency levels, comma-separated (default 1,16)")
    parser.add_argument("--pairs", type=int, default=10, help="pairs per system and level (default 10)")
    parser.add_argument("--pair-n", type=int, default=1000, help="measured flows per run (default 1000)")
    parser.add_argument("--systems", default="floor,baton,session", help="which of floor,baton,session (all)")
    parser.add_argument("--granian-tuning", default="", help='extra granian options, e.g. "--runtime-mode st"')
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    opts = parser.parse_args(argv)
    GRANIAN_TUNING[:] = opts.granian_tuning.split()
    opts.level_list = [int(x) for x in opts.levels.split(",") if x.strip()]
    opts.system_list = [x.strip() for x in opts.systems.split(",") if x.strip()]
    if not opts.level_list or min(opts.level_list) < 1 or opts.pairs < 1 or opts.pair_n < 1:
        parser.error("--levels, --pairs and --pair-n must be positive")
    if set(opts.system_list) - set(LOADS) or not opts.system_list:
        parser.error(f"--systems takes names from {','.join(LOADS)}")
    return opts


def measure_system(system: str, opts: argparse.Namespace, logs: Path) -> dict[int, dict[str, Any]]:
    """Both servers of one system started, smoke-tested, driven in pairs at each level, stopped."""
    servers = {
        name: Server(f"{system}-{name}", Path(sys.executable), command(name, APPS[system])) for name in HTTP_SERVERS
    }
    load = (sys.executable, str(LOADS[system]))
    try:
        for server in servers.values():
            start(server, logs, 30.0)
            smoked(drive(server, 20, 1, 5, 60.0, load=load, who=LOADS[system].name))

        def drive_one(name: str, n: int, concurrency: int, warmup: int) -> dict[str, Any]:
            return drive(servers[name], n, concurrency, warmup, 120.0, load=load, who=LOADS[system].name)

        runs = pairs.measure(opts.level_list, opts.pairs, opts.pair_n, drive_one, say, names=HTTP_SERVERS)
    finally:
        for server in servers.values():
            stop(server)
    return pairs.summarize(runs, names=HTTP_SERVERS)


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    report: dict[str, Any] = {"pairs": opts.pairs, "pair_n": opts.pair_n, "systems": {}}
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(tmp)
        os.environ.setdefault("BATON_DATA_DIR", tmp)  # Baton's key file, shared by its two servers
        for system in opts.system_list:
            try:
                summary = measure_system(system, opts, logs)
            except Skip as exc:
                print(f"granian_compare: {system}: {exc}", file=sys.stderr)
                return 1
            report["systems"][system] = {
                str(c): {
                    "uvicorn_us_per_rt": round(row["uvicorn_cpu_ms_per_rt"] * 1000, 1),
                    "granian_us_per_rt": round(row["granian_cpu_ms_per_rt"] * 1000, 1),
                    "granian_advantage": round(1 / row["ratio"], 3),
                    "pairs_used": row["pairs_used"],
                    "failed_flows": row["uvicorn_flows_failed"] + row["granian_flows_failed"],
                }
                for c, row in summary.items()
                if "ratio" in row
            }
    if opts.json:
        print(json.dumps(report))
        return 0
    print("| system | c | uvicorn µs/round trip | granian µs/round trip | uvicorn / granian | pairs | failed flows |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for system, levels in report["systems"].items():
        for c, row in levels.items():
            print(
                f"| {system} | {c} | {row['uvicorn_us_per_rt']} | {row['granian_us_per_rt']} | "
                f"**{row['granian_advantage']}** | {row['pairs_used']} | {row['failed_flows']} |"
            )
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
