"""A stdio server slower to answer `server/discover` than the client's probe waits (protocol.md P144).

The server takes the probe late, serves 2026-07-28 on that connection from then on, and so refuses the
`initialize` the client sent after giving up on the probe. The client reads that refusal for what it is and
goes on in 2026-07-28, rather than saying the server speaks neither version.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from baton.client import Client

LATE_SERVER = r"""
import json, sys, time

def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()

discovered = False
for line in sys.stdin:
    msg = json.loads(line)
    method, rid = msg.get("method"), msg.get("id")
    if rid is None:
        continue
    if method == "server/discover":
        if not discovered:
            time.sleep(1.5)  # slow to start: past the client's probe
            discovered = True
        send({"jsonrpc": "2.0", "id": rid, "result": {
            "resultType": "complete", "supportedVersions": ["2026-07-28"], "capabilities": {"tools": {}},
            "serverInfo": {"name": "late", "version": "1"}}})
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32022,
              "message": "this connection serves 2026-07-28; initialize is not accepted",
              "data": {"supported": ["2026-07-28"], "requested": "2025-11-25"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": rid, "result": {"resultType": "complete", "tools": [
            {"name": "ping", "inputSchema": {"type": "object"}}]}})
    else:
        send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}})
"""


@pytest.mark.process
def test_a_probe_answered_late_leads_to_2026_not_to_a_refused_handshake(tmp_path: Path) -> None:
    script = tmp_path / "late.py"
    script.write_text(LATE_SERVER)

    async def listed() -> tuple[list[str], str | None]:
        async with Client([sys.executable, str(script)], stdio_probe_s=0.5) as client:
            tools = await client.list_tools()
            return [tool.name for tool in tools], client.era

    names, era = asyncio.run(asyncio.wait_for(listed(), 30))
    assert names == ["ping"]
    assert era == "2026-07-28"
