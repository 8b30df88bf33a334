"""The mcp 1.30.0 peer of bench/legacy_compare: ``perform`` written with that SDK's FastMCP, with sessions.

``perform(action)`` asks one boolean confirmation with ``ctx.elicit`` while the call waits, the way the last
1.x SDK documents it, and returns ``done: <action>`` (``not confirmed: <action>`` otherwise): the same tool
as Baton's ``examples/everything.py`` and ``peers/mcp_server.py``. Served with
``mcp.run("streamable-http")`` in its default stateful mode (sessions, SSE responses) at ``/mcp`` on
127.0.0.1 only: a 2025-11-25 server, which is all this SDK speaks.

Run it in its own venv, never in Baton's (bench/legacy_compare uses ``.cache/bench/mcp1``, made with
``mcp==1.30.0``).
"""

# No `from __future__ import annotations`: FastMCP reads the tool's annotations (Context) at registration.
import argparse

from mcp.server.fastmcp import Context, FastMCP
from pydantic import BaseModel, Field


class Confirmation(BaseModel):
    """The form shown to the user."""

    confirm: bool = Field(description="Go ahead with the action?")


mcp = FastMCP("baton-peers-mcp1", log_level="WARNING")


@mcp.tool()
async def perform(action: str, ctx: Context) -> str:
    """Perform an action once the user has confirmed it."""
    answer = await ctx.elicit(f"Go ahead with {action}?", Confirmation)
    if answer.action == "accept" and answer.data.confirm:
        return f"done: {action}"
    return f"not confirmed: {action}"


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp 1.30.0 FastMCP peer, 2025-11-25 sessions (127.0.0.1, /mcp).")
    parser.add_argument("--port", type=int, default=8767, help="TCP port on 127.0.0.1 (default 8767)")
    opts = parser.parse_args()
    mcp.settings.host, mcp.settings.port = "127.0.0.1", opts.port
    mcp.run("streamable-http")


if __name__ == "__main__":
    main()
