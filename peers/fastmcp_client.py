"""Interop peer: an MCP client written with FastMCP (fastmcp==4.1.6), for tests only.

Usage: `python fastmcp_client.py URL`. Calls `perform` with `{"action": "interop"}`; FastMCP's client
drives the multi round-trip loop and hands the server's form question to `on_elicit`, which accepts
with `{"confirm": true}`. Prints the final text; exits 0 only on `done: interop` after exactly one
question. Runs in its own venv (`.cache/interop/fastmcp`), never in Baton's.
"""

from __future__ import annotations

import sys
from typing import Any

from fastmcp import Client
from fastmcp.client.elicitation import ElicitRequestParams, ElicitResult
from interop_verdict import verdict
from mcp.types import TextContent

asked: list[ElicitRequestParams] = []


async def on_elicit(
    message: str, response_type: type[Any] | None, params: ElicitRequestParams, context: Any
) -> ElicitResult[dict[str, Any]]:
    """Accept the confirmation form with an explicit action."""
    asked.append(params)
    print(f"question: {params.model_dump(by_alias=True, exclude_none=True)}", file=sys.stderr)
    return ElicitResult(action="accept", content={"confirm": True})


async def run(url: str) -> str:
    async with Client(url, elicitation_handler=on_elicit) as client:
        result = await client.call_tool("perform", {"action": "interop"}, raise_on_error=False)
    if result.is_error:
        print(f"tool error: {result}", file=sys.stderr)
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


if __name__ == "__main__":
    sys.exit(verdict("fastmcp_client.py", run, asked))
