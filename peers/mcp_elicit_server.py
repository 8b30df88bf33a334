"""Peer server written with the official ``mcp`` SDK (mcp==2.3.0) whose tool asks with ``ctx.elicit``.

The SDK offers 2026-07-28 (it answers ``server/discover``), yet ``ctx.elicit`` sends an
``elicitation/create`` request to the client while the call waits: that needs a back channel, which only
a 2025-11-25 session has. In a 2026-07-28 request the SDK raises ``NoBackChannelError`` and the call fails.
So a client reaches this tool only by pinning 2025-11-25 (``baton call --protocol 2025-11-25``).

``book(city)`` asks one form (``nights``, a whole number, and ``confirm``, a boolean) and says
``booked: <city> for <n> nights``, ``not confirmed: <city>``, ``declined: <city>`` or ``cancelled: <city>``.

    python mcp_elicit_server.py --stdio       # stdio
    python mcp_elicit_server.py --port PORT   # stateful Streamable HTTP (sessions) at 127.0.0.1:PORT/mcp

Runs in its own venv (``.cache/interop/mcp``), never in Baton's.
"""

# No `from __future__ import annotations`: the SDK reads the tool's annotations (Context) at registration.
import argparse

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel, Field


class Booking(BaseModel):
    """The form shown to the user."""

    nights: int = Field(description="How many nights?")
    confirm: bool = Field(description="Book it?")


mcp = MCPServer("mcp2-elicit-peer", log_level="WARNING")


@mcp.tool()
async def book(city: str, ctx: Context) -> str:
    """Book a stay in a city once the user says how many nights and confirms."""
    answer = await ctx.elicit(f"Book a stay in {city}?", Booking)
    if answer.action == "accept":
        if not answer.data.confirm:
            return f"not confirmed: {city}"
        return f"booked: {city} for {answer.data.nights} nights"
    if answer.action == "decline":
        return f"declined: {city}"
    return f"cancelled: {city}"


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp 2.3.0 peer server whose tool asks with ctx.elicit.")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int, help="serve stateful Streamable HTTP at 127.0.0.1:PORT/mcp")
    where.add_argument("--stdio", action="store_true", help="serve stdio")
    opts = parser.parse_args()
    if opts.stdio:
        mcp.run("stdio")
    else:
        mcp.run("streamable-http", host="127.0.0.1", port=opts.port)


if __name__ == "__main__":
    main()
