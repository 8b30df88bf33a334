"""stdlib ``json`` against ``orjson`` on the bodies of one real MRTR flow, for bench/README.md's dependency table.

Starts Baton's ``examples/everything.py`` on a free loopback port, runs one flow of ``perform`` by hand
(the request, the ``input_required`` response with its question and ``requestState``, the retry with the
answer, the final result) and stops the server. Then it times decoding and encoding each of the four
bodies with both libraries (``timeit``, the best of ``--repeat`` runs of ``--number`` calls each). The
stdlib encoder is the compact one (``separators=(",", ":")``), as in bench/floor.py. Run it with Baton's
venv: ``.venv/bin/python bench/json_codecs.py``.
"""

from __future__ import annotations

import argparse
import json
import platform
import timeit
import urllib.request
from collections.abc import Callable
from pathlib import Path

import orjson
from processes import Server, baton_command, start, stop

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "perform",
}
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "baton-bench-load", "version": "1.0"},
}
compact = json.JSONEncoder(separators=(",", ":")).encode


def one_flow(url: str) -> dict[str, bytes]:
    """The four bodies of one flow of ``perform``, in order."""

    def post(body: bytes) -> bytes:
        request = urllib.request.Request(url, data=body, headers=HEADERS, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            data: bytes = response.read()
        return data

    params = {"name": "perform", "arguments": {"action": "deploy-1234"}, "_meta": META}
    request1 = compact({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).encode()
    response1 = post(request1)
    asked = json.loads(response1)["result"]
    answers = {key: {"action": "accept", "content": {"confirm": True}} for key in asked["inputRequests"]}
    params = {**params, "inputResponses": answers, "requestState": asked["requestState"]}
    request2 = compact({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}).encode()
    response2 = post(request2)
    if json.loads(response2)["result"].get("resultType") != "complete":
        raise SystemExit(f"json_codecs: the flow did not complete: {response2[:200]!r}")
    return {"request 1": request1, "response 1": response1, "request 2": request2, "response 2": response2}


def best_us(call: Callable[[], object], number: int, repeat: int) -> float:
    return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0])
    parser.add_argument(
        "--python", type=Path, default=Path(__file__).resolve().parent.parent / ".venv" / "bin" / "python"
    )
    parser.add_argument("--number", type=int, default=20000, help="calls per timing (default 20000)")
    parser.add_argument("--repeat", type=int, default=7, help="timings, the best is kept (default 7)")
    opts = parser.parse_args()
    server = Server("json-codecs-baton", opts.python, baton_command(opts.python.parent / "baton"))
    log_dir = Path(__file__).resolve().parent.parent / ".cache" / "bench" / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        start(server, log_dir, 60)
        bodies = one_flow(server.url)
    finally:
        stop(server)
    print(
        f"Python {platform.python_version()}, orjson {orjson.__version__}; best of {opts.repeat} x {opts.number} calls"
    )
    print("| body | bytes | decode: json / orjson µs | encode: json / orjson µs |")
    print("|---|---|---|---|")
    server_side = {"json": 0.0, "orjson": 0.0}
    for name, raw in bodies.items():
        value = json.loads(raw)
        cells = []
        for what, stdlib, fast in (
            ("decode", lambda raw=raw: json.loads(raw), lambda raw=raw: orjson.loads(raw)),
            ("encode", lambda value=value: compact(value).encode(), lambda value=value: orjson.dumps(value)),
        ):
            slow_us, fast_us = best_us(stdlib, opts.number, opts.repeat), best_us(fast, opts.number, opts.repeat)
            cells.append(f"{slow_us:.2f} / {fast_us:.2f} ({slow_us / fast_us:.1f}x)")
            if (what == "decode") == name.startswith("request"):  # what a server does with this body
                server_side["json"] += slow_us
                server_side["orjson"] += fast_us
        print(f"| {name} | {len(raw)} | {cells[0]} | {cells[1]} |")
    print(
        f"\nA server's share of one flow (decode both requests, encode both responses): "
        f"json {server_side['json']:.1f} µs, orjson {server_side['orjson']:.1f} µs."
    )


if __name__ == "__main__":
    main()
