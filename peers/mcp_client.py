"""Interop peer: an MCP client written with the official `mcp` SDK (mcp==2.3.0), for tests only.

Usage: `python mcp_client.py URL`. Calls `perform` with `{"action": "interop"}`; the SDK's own
multi round-trip loop hands the server's form question to `on_elicit`, which accepts with
`{"confirm": true}`. Prints the final text; exits 0 only on `done: interop` after exactly one question.
Runs in its own venv (`.cache/interop/mcp`), never in Baton's.
"""

from __future__ import annotations

import sys

from interop_verdict import verdict
from mcp import Client
from mcp.client import ClientRequestContext
from mcp.types import ElicitRequestFormParams, ElicitRequestParams, ElicitResult, ErrorData, TextContent

asked: list[ElicitRequestParams] = []


async def on_elicit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
    """Accept the confirmation form; refuse anything else."""
    asked.append(params)
    print(f"question: {params.model_dump(by_alias=True, exclude_none=True)}", file=sys.stderr)
    if not isinstance(params, ElicitRequestFormParams):
        return ErrorData(code=-32602, message="this client answers form questions only")
    return ElicitResult(action="accept", content={"confirm": True})


async def run(url: str) -> str:
    async with Client(url, elicitation_callback=on_elicit) as client:
        print(f"protocol: {client.protocol_version}", file=sys.stderr)
        result = await client.call_tool("perform", {"action": "interop"})
    if result.is_error:
        print(f"tool error: {result.model_dump(by_alias=True, exclude_none=True)}", file=sys.stderr)
    return "".join(block.text for block in result.content if isinstance(block, TextContent))


if __name__ == "__main__":
    sys.exit(verdict("mcp_client.py", run, asked))
