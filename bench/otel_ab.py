"""In-process A/B of the telemetry-off path: CPU per MRTR round trip through `server.runtime.handle`, no transport.

Run with ``PYTHONPATH`` at one tree's ``src`` (bench/otel_compare runs it on this tree and on a baseline
tree, alternating). The `opentelemetry` packages are made unimportable, as if the `otel` extra were not
installed. Prints ``{"us_per_round_trip": ...}``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.abc
import json
import sys
import time
from typing import Any


class _NoOpenTelemetry(importlib.abc.MetaPathFinder):
    def find_spec(self, name: str, path: Any, target: Any = None) -> None:
        if name.split(".", maxsplit=1)[0] == "opentelemetry":
            raise ModuleNotFoundError(f"No module named {name!r} (bench/otel_ab.py: the extra is absent)")


sys.meta_path.insert(0, _NoOpenTelemetry())

from baton import Context, KeyRing, Server  # noqa: E402
from baton.protocol.messages import Message  # noqa: E402
from baton.server import Exchange, RequestInfo  # noqa: E402

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "ab", "version": "0"},
}
ANSWER = {"confirm": {"action": "accept", "content": {"confirm": True}}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=2000, help="flows (two round trips each)")
    n = parser.parse_args().n
    server = Server("ab", state_keys=KeyRing.ephemeral_key())

    @server.tool()
    async def book(ctx: Context, city: str) -> str:
        return "booked" if await ctx.confirm(f"Book {city}?", key="confirm") else "no"

    if hasattr(server, "check_startup"):  # older trees had no start-up checks
        server.check_startup("stdio")
    ex = Exchange(RequestInfo("stdio"))
    args = {"city": "Oslo"}
    # The A/B runs this script on older trees too, where the transports' entry point was `Server.handle`.
    handle = getattr(server, "runtime", server).handle

    async def flows(count: int) -> None:
        for i in range(count):
            first = await handle(Message("tools/call", {"name": "book", "arguments": args, "_meta": META}, i, True), ex)
            state = first.body["result"]["requestState"]  # type: ignore[union-attr]
            params = {"name": "book", "arguments": args, "_meta": META, "requestState": state, "inputResponses": ANSWER}
            await handle(Message("tools/call", params, i, True), ex)

    asyncio.run(flows(200))  # warm up
    start = time.process_time()
    asyncio.run(flows(n))
    spent = time.process_time() - start
    print(json.dumps({"us_per_round_trip": spent / (2 * n) * 1e6}))


if __name__ == "__main__":
    main()
