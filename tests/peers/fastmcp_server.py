"""Interop peer: an MCP 2026-07-28 server written with FastMCP (fastmcp==4.1.6), for tests only.

`perform(action)` asks one boolean confirmation through MRTR form elicitation with FastMCP's documented
guard pattern: the tool returns an `InputRequiredResult` until `ctx.input_responses` carries the answer,
and marks what it asked in `requestState` (which FastMCP seals). Stateless Streamable HTTP at `/mcp` on
127.0.0.1. Runs in its own venv (`.cache/interop/fastmcp`), never in Baton's.
"""

from __future__ import annotations

import argparse

from fastmcp import Context, FastMCP
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

KEY = "confirm"
FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Go ahead?"}},
    "required": ["confirm"],
}

server = FastMCP("interop-fastmcp")


@server.tool
async def perform(action: str, ctx: Context) -> str | InputRequiredResult:
    """Perform an action once the user has confirmed it."""
    answer = (ctx.input_responses or {}).get(KEY)
    # Trust an answer only when our own sealed state says this very action was asked.
    if not isinstance(answer, ElicitResult) or ctx.request_state != f"asked:{action}":
        question = ElicitRequestFormParams(message=f"Perform {action}?", requested_schema=FORM)
        return InputRequiredResult(
            input_requests={KEY: ElicitRequest(params=question)}, request_state=f"asked:{action}"
        )
    if answer.action == "accept" and (answer.content or {}).get("confirm") is True:
        return f"done: {action}"
    return f"not confirmed: {action}"


def main() -> None:
    parser = argparse.ArgumentParser(description="fastmcp 4.1.6 interop peer server (127.0.0.1, path /mcp)")
    parser.add_argument("--port", type=int, required=True)
    opts = parser.parse_args()
    server.run(
        transport="http", host="127.0.0.1", port=opts.port, stateless_http=True, show_banner=False, log_level="WARNING"
    )


if __name__ == "__main__":
    main()
