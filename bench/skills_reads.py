"""Skills reads per second (SEP-2640): `skills/list` and `skills/get` over HTTP, Baton beside FastMCP 4.1.6.

Both serve the same folder, `examples/skills`: Baton as `baton serve examples/everything.py --http` (which adds
it with `server.add_skills`), FastMCP as `bench/fastmcp_skills_server.py` (its `SkillsDirectoryProvider` and
`SkillsExtension`, stateless, JSON responses) from its own venv (`--fastmcp-python`, default the interop venv
under `.cache/interop/fastmcp`; left out when missing). One keep-alive connection per server sends `-n`
requests in turn, `skills/list` then `skills/get` of the skill it listed, after `--warmup` of them; the servers
take turns, `--rounds` times. Per server: requests per second, and its CPU per request (`/proc`, the process
and its children). Sequential, so requests per second is latency bound: compare the CPU per request.

    .venv/bin/python bench/skills_reads.py -n 2000 --rounds 3
    .venv/bin/python bench/skills_reads.py --json

`--json` prints one object: per server `reads_per_s` and `cpu_us_per_read` (the median of the rounds, with
every round's), and the load average when it ran.
"""

from __future__ import annotations

import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from load import cpu_seconds, process_tree
from options import OneLineParser
from processes import ROOT, Server, Skip, baton_command, script_command, start, stop

EXTENSION = "io.modelcontextprotocol/skills"
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "skills_reads.py", "version": "1"},
}


def reads(port: int, n: int) -> float:
    """`n` reads (list, get, list, get, ...) on one connection; the seconds they took. Fails on an error."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    uri = None
    started = time.perf_counter()
    for i in range(n):
        method = "skills/list" if i % 2 == 0 or uri is None else "skills/get"
        params: dict[str, Any] = {"_meta": META} if method == "skills/list" else {"uri": uri, "_meta": META}
        body = json.dumps({"jsonrpc": "2.0", "id": i + 1, "method": method, "params": params})
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": method,
        }
        conn.request("POST", "/mcp", body, headers)
        resp = conn.getresponse()
        answer = json.loads(resp.read())
        if resp.status != 200 or "result" not in answer:
            raise RuntimeError(f"{method} answered {resp.status}: {str(answer)[:300]}")
        if method == "skills/list":
            uri = answer["result"]["skills"][0]["uri"]
    seconds = time.perf_counter() - started
    conn.close()
    return seconds


def main() -> int:
    parser = OneLineParser(description="skills/list and skills/get per second, Baton beside FastMCP.")
    parser.add_argument("-n", type=int, default=2000, help="reads per round and server (default 2000)")
    parser.add_argument("--warmup", type=int, default=200, help="unmeasured reads first (default 200)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds, the servers taking turns (default 3)")
    parser.add_argument("--fastmcp-python", type=Path, default=ROOT / ".cache/interop/fastmcp/bin/python")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    opts = parser.parse_args()
    servers = [Server("baton", ROOT / ".venv/bin/python", baton_command(ROOT / ".venv/bin/baton"))]
    peer = opts.fastmcp_python
    if peer.exists():
        servers.append(Server("fastmcp", peer, script_command(peer, "bench/fastmcp_skills_server.py")))
    figures: dict[str, dict[str, list[float]]] = {s.name: {"reads_per_s": [], "cpu_us_per_read": []} for s in servers}
    with tempfile.TemporaryDirectory(prefix="skills-reads-") as scratch:
        os.environ["BATON_DATA_DIR"] = scratch
        up: list[Server] = []
        try:
            for server in servers:
                try:
                    start(server, Path(scratch), 60)
                except Skip as exc:
                    print(f"skills_reads.py: {server.name} left out: {exc}", file=sys.stderr)
                    continue
                reads(server.port, opts.warmup)
                up.append(server)
            for _ in range(opts.rounds):
                for server in up:
                    assert server.proc is not None
                    pids = process_tree([server.proc.pid])
                    cpu = cpu_seconds(pids)
                    seconds = reads(server.port, opts.n)
                    cpu = cpu_seconds(pids) - cpu
                    figures[server.name]["reads_per_s"].append(round(opts.n / seconds, 1))
                    figures[server.name]["cpu_us_per_read"].append(round(cpu / opts.n * 1e6, 1))
        finally:
            for server in up:
                stop(server)
    result: dict[str, Any] = {"n": opts.n, "rounds": opts.rounds, "load_average": os.getloadavg()}
    for name, runs in figures.items():
        if runs["reads_per_s"]:
            result[name] = {key: statistics.median(values) for key, values in runs.items()} | {"runs": runs}
    if opts.json:
        print(json.dumps(result))
        return 0
    print(f"skills reads (list, get alternating), {opts.n} per round, load average {result['load_average'][0]:.1f}")
    for name in figures:
        if name in result:
            row = result[name]
            print(f"{name:8} {row['reads_per_s']:8.0f} reads/s  {row['cpu_us_per_read']:7.0f} µs server CPU per read")
    return 0


if __name__ == "__main__":
    sys.exit(main())
