"""A server whose one tool waits, then asks a question that names its call, for the bridge's routing of a
2025-11-25 stdio server's questions among calls that overlap (protocol.md P200)."""

from __future__ import annotations

import asyncio

from baton import Accepted, Context, Server

server = Server("askers")


@server.tool()
async def ask(ctx: Context, who: str, wait_s: float = 0.0) -> str:
    """Waits `wait_s` seconds, then asks a name for `who`."""
    await asyncio.sleep(wait_s)
    answer = await ctx.elicit(str, f"A name for {who}?")
    return f"{who}: {answer.data if isinstance(answer, Accepted) else 'no answer'}"
