"""What `baton.serve.lambda_handler` costs per event, in this process: the cold start and warm invocations.

Usage: `.venv/bin/python bench/lambda_events.py [--events 2000] [--colds 20]`

Cold: a fresh `Server` with two tools, `lambda_handler(server)` built, and its first event (`tools/list`),
timed together, `--colds` times (in one process, so imports are already paid: what a Lambda cold start adds
on top of importing the function's module). Warm: `--events` invocations of one handler, alternating a
`tools/call` and both legs of a two-round flow (the asking call, then its retry with the answer). Each
event is an API Gateway HTTP API (v2) event, as Lambda would hand it over. Prints medians and p90s in ms.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import time
from typing import Any

from baton import Context, Server
from baton.serve import lambda_handler

os.environ.setdefault("BATON_STATE_KEYS", "k1:" + base64.b64encode(os.urandom(32)).decode())

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"},
}


def server() -> Server:
    made = Server("bench", ledger="memory:")

    @made.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @made.tool()
    async def forget(ctx: Context, note: str) -> str:
        return f"forgot {note}" if await ctx.confirm(f"Forget {note}?") else "kept"

    return made


def event(method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": {**params, "_meta": META}})
    return {
        "version": "2.0",
        "routeKey": "POST /mcp",
        "rawPath": "/mcp",
        "rawQueryString": "",
        "headers": {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "host": "a1b2c3d4e5.execute-api.eu-west-1.amazonaws.com",
            "mcp-protocol-version": "2026-07-28",
            "mcp-method": method,
            **({"mcp-name": params["name"]} if "name" in params else {}),
        },
        "requestContext": {
            "http": {"method": "POST", "path": "/mcp", "protocol": "HTTP/1.1", "sourceIp": "198.51.100.23"},
            "requestId": "bench",
            "stage": "$default",
        },
        "body": body,
        "isBase64Encoded": False,
    }


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"median {statistics.median(ordered) * 1e3:.3f} ms, p90 {ordered[int(len(ordered) * 0.9)] * 1e3:.3f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--colds", type=int, default=20)
    args = parser.parse_args()
    colds = []
    for _ in range(args.colds):
        started = time.perf_counter()
        handler = lambda_handler(server())
        answer = handler(event("tools/list", {}), None)
        colds.append(time.perf_counter() - started)
        assert answer["statusCode"] == 200, answer
    handler = lambda_handler(server())
    call = event("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    ask = event("tools/call", {"name": "forget", "arguments": {"note": "n"}})
    warm: list[float] = []
    rounds: list[float] = []
    for _ in range(args.events // 2):
        started = time.perf_counter()
        handler(call, None)
        warm.append(time.perf_counter() - started)
        started = time.perf_counter()
        first = json.loads(handler(ask, None)["body"])["result"]
        (key,) = first["inputRequests"]
        retry = {
            "name": "forget",
            "arguments": {"note": "n"},
            "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
            "requestState": first["requestState"],
        }
        done = json.loads(handler(event("tools/call", retry), None)["body"])["result"]
        rounds.append(time.perf_counter() - started)
        assert done["content"][0]["text"] == "forgot n", done
    print(f"cold start + first event ({args.colds}): {ms(colds)}")
    print(f"warm tools/call ({len(warm)}): {ms(warm)}")
    print(f"warm two-round flow, both events ({len(rounds)}): {ms(rounds)}")


if __name__ == "__main__":
    main()
