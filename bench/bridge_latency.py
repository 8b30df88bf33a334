"""What `baton bridge` adds: latency per two-round flow, and the bridge's memory at rest.

Usage: `.venv/bin/python bench/bridge_latency.py [--flows 200]`

Starts `baton serve examples/everything.py` on a free loopback port and times `--flows` two-round flows
(`test_input_required_result_multi_round`: two questions, two rounds) with Baton's client three ways:
direct over HTTP (2026-07-28); through `baton bridge URL` as a 2026-07-28 host over stdio (the rounds pass
through as `input_required`); through the bridge as a 2025-11-25 host (each round becomes the host's
`elicitation/create`). Each way warms up first; then the ways take turns flow by flow, and each one's
median is printed with what the bridge adds to the direct one.
Then it starts one bridge, initializes it, lets it sit, and prints its resident memory (VmRSS).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from processes import servers_environment

from baton.client import Accepted, Client, Question

ROOT = Path(__file__).resolve().parents[1]
BATON = str(Path(sys.executable).with_name("baton"))
TOOL = "test_input_required_result_multi_round"
WARM_UP = 10


async def answer(question: Question) -> Accepted[Any]:
    # By message: in a 2025-11-25 session a question's key is the server request's id
    return Accepted({"name": "Ada"} if question.message == "What is your name?" else {"color": "teal"})


async def one_flow(client: Client) -> float:
    started = time.perf_counter()
    result = await client.call_tool(TOOL)
    elapsed = time.perf_counter() - started
    assert result.text == "Ada likes teal", result.text
    return elapsed


async def measure(url: str, flows: int) -> dict[str, float]:
    """The median per way; the ways take turns flow by flow (the first way rotating), so that a machine
    busy with other work slows them alike."""
    ways: dict[str, Client] = {
        "direct (HTTP, 2026-07-28)": Client(url, on_form=answer),
        "bridge, 2026-07-28 host": Client([BATON, "bridge", url], on_form=answer),
        "bridge, 2025-11-25 host": Client([BATON, "bridge", url], on_form=answer, protocol="2025-11-25"),
    }
    return await take_turns(ways, flows)


async def take_turns(ways: dict[str, Client], flows: int) -> dict[str, float]:
    """Each way warmed up, then `flows` flows each, the ways taking turns (the first way rotating); the
    median per way, in ms."""
    names = list(ways)
    times: dict[str, list[float]] = {name: [] for name in names}
    async with contextlib.AsyncExitStack() as stack:
        for client in ways.values():
            await stack.enter_async_context(client)
            for _ in range(WARM_UP):
                await one_flow(client)
        for i in range(flows):
            k = i % len(names)
            for name in names[k:] + names[:k]:
                times[name].append(await one_flow(ways[name]))
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def rss_at_rest(url: str) -> int:
    """The VmRSS (KiB) of a bridge whose host opened its session (`initialize`, then `notifications/initialized`,
    which opens the bridge's listen stream to the server, as with any host) and then sat for a second."""
    bridge = subprocess.Popen([BATON, "bridge", url], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert bridge.stdin is not None and bridge.stdout is not None
    try:
        params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "1"}}
        bridge.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}).encode())
        bridge.stdin.write(b"\n")
        bridge.stdin.flush()
        bridge.stdout.readline()
        bridge.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode() + b"\n")
        bridge.stdin.flush()
        time.sleep(1.0)
        for line in Path(f"/proc/{bridge.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS line")
    finally:
        bridge.stdin.close()
        bridge.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, default=200)
    args = parser.parse_args()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/mcp"
    server = subprocess.Popen(
        [BATON, "serve", str(ROOT / "examples" / "everything.py"), "--http", f"127.0.0.1:{port}", "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start") from None
                time.sleep(0.1)
        medians = asyncio.run(measure(url, args.flows))
        direct = next(iter(medians.values()))
        print(f"median of {args.flows} two-round flows ({TOOL}):")
        for name, ms in medians.items():
            added = "" if ms == direct else f"  ({ms - direct:+.2f} ms, {(ms - direct) / 2:+.2f} ms per round)"
            print(f"  {name:28} {ms:7.2f} ms{added}")
        print(f"bridge at rest after initialize: {rss_at_rest(url) / 1024:.1f} MiB resident")
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    with servers_environment():  # its own data directory, not the home one
        main()
