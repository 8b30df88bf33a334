"""Interop peer: a FastMCP 4.x server (fastmcp==4.1.6) whose tool asks with the imperative `ctx.elicit`.

`reserve(restaurant)` asks one form while the call waits (`guests`, a whole number) and says
`<restaurant> for <n>`, `declined: <restaurant>` or `cancelled: <restaurant>`. `ctx.elicit` asks during the
call, which only a 2025-11-25 session allows, so the server is stateful Streamable HTTP (sessions) at
127.0.0.1:PORT/mcp, and clients reach it on 2025-11-25 (`baton bridge --protocol 2025-11-25`).

    python fastmcp_elicit_server.py --port PORT

Runs in its own venv (`.cache/interop/fastmcp`), never in Baton's.
"""

# No `from __future__ import annotations`: FastMCP reads the tool's annotations (Context) at registration.
import argparse
from dataclasses import dataclass

from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp-elicit-peer")


@dataclass
class Party:
    guests: int


@mcp.tool()
async def reserve(restaurant: str, ctx: Context) -> str:
    """Reserve a table once the user says for how many guests."""
    answer = await ctx.elicit(f"How many guests at {restaurant}?", Party)
    if answer.action == "accept":
        return f"{restaurant} for {answer.data.guests}"
    return f"declined: {restaurant}" if answer.action == "decline" else f"cancelled: {restaurant}"


def main() -> None:
    parser = argparse.ArgumentParser(description="fastmcp 4.1.6 peer server asking with ctx.elicit (127.0.0.1).")
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    opts = parser.parse_args()
    mcp.run(
        transport="http", host="127.0.0.1", port=opts.port, stateless_http=False, show_banner=False, log_level="WARNING"
    )


if __name__ == "__main__":
    main()
