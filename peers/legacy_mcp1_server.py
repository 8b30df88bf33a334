"""Interop peer: a 2025-11-25 server written with FastMCP from the official `mcp` SDK's last 1.x (mcp==1.30.0).

The same two tools as Baton's tests/servers/legacy.py:interop, written the way that SDK documents it:
`book(city)` asks one form with `ctx.elicit` (`nights`, a whole number, and `confirm`, a boolean) while
the tool call waits, and says `booked: <city> for <n> nights`, `not confirmed: <city>`,
`declined: <city>` or `cancelled: <city>`; `echo(text)` says `echo: <text>`. One more tool, which Baton's
server has no need of: `session()` says `session <n>`, the sessions numbered in the order this process
first saw them, so a test can tell whether a client kept to one session.

    python legacy_mcp1_server.py --port PORT   # stateful Streamable HTTP (sessions) at 127.0.0.1:PORT/mcp
    python legacy_mcp1_server.py --stdio       # stdio

Runs in its own venv (`.cache/interop/mcp1`), never in Baton's.
"""

# No `from __future__ import annotations`: FastMCP reads the tool's annotations (Context) at registration.
import argparse
import itertools
import weakref

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field


class Booking(BaseModel):
    """The form shown to the user."""

    nights: int = Field(description="How many nights?")
    confirm: bool = Field(description="Book it?")


mcp = FastMCP("legacy-mcp1-peer", log_level="WARNING")


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


@mcp.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


_numbers = itertools.count(1)
_sessions: weakref.WeakKeyDictionary[object, int] = weakref.WeakKeyDictionary()


@mcp.tool()
def session(ctx: Context) -> str:
    """Which session this call came in on."""
    if ctx.session not in _sessions:
        _sessions[ctx.session] = next(_numbers)
    return f"session {_sessions[ctx.session]}"


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp 1.30.0 FastMCP peer server (2025-11-25).")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--port", type=int, help="serve stateful Streamable HTTP at 127.0.0.1:PORT/mcp")
    where.add_argument("--stdio", action="store_true", help="serve stdio")
    opts = parser.parse_args()
    if opts.stdio:
        mcp.run("stdio")
    else:
        mcp.settings.host, mcp.settings.port = "127.0.0.1", opts.port
        mcp.run("streamable-http")


if __name__ == "__main__":
    main()
