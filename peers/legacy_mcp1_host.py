"""Interop peer: a host's start of a stdio server, with the official `mcp` SDK's last 1.x (mcp==1.30.0).

Usage: `python legacy_mcp1_host.py ENTRY_JSON`, where ENTRY_JSON is one server entry as a host's config file
holds it (`{"command", "args", "env"}`). The server is started exactly as a host starts it: that command,
those arguments, only those variables over a minimal environment, from the working directory `/`. One
`initialize` (2025-11-25), then `tools/list`; prints the tool names as a JSON list. Runs in its own venv
(`.cache/interop/mcp1`), never in Baton's.
"""

from __future__ import annotations

import asyncio
import json
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(entry: dict[str, object]) -> None:
    params = StdioServerParameters(
        command=str(entry["command"]),
        args=[str(a) for a in entry.get("args", [])],  # type: ignore[attr-defined]
        env={str(k): str(v) for k, v in dict(entry.get("env") or {}).items()},  # type: ignore[call-overload]
        cwd="/",
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
    print(json.dumps(sorted(tool.name for tool in tools.tools)))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
