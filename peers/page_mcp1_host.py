"""Interop peer: an `mcp==1.30.0` host with no elicitation callback (it declares no elicitation), for tests only.

Usage: `python page_mcp1_host.py URL TOOL JSON_ARGUMENTS`. Calls TOOL once over Streamable HTTP and prints one
JSON line: `{"is_error", "text", "elicitation"}`, `elicitation` being whether the session declared it. Runs in
its own venv, never in Baton's.
"""

from __future__ import annotations

import json
import sys

import anyio
from mcp import ClientSession
from mcp.client.session import _default_elicitation_callback
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, tool: str, arguments: dict[str, object]) -> None:
    async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
        await session.initialize()
        result = await session.call_tool(tool, arguments)
        text = " ".join(getattr(c, "text", "") for c in result.content)
        elicitation = session._elicitation_callback is not _default_elicitation_callback  # what it declared
        print(json.dumps({"is_error": bool(result.isError), "text": text, "elicitation": elicitation}))


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], json.loads(sys.argv[3]))
