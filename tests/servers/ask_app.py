"""A server whose tools take the app rung (protocol.md P213), for tests: served over HTTP with
`$BATON_PUBLIC_URL` on loopback (development: every caller is `anonymous`), the stores and ledger in memory.

`paint` asks two form questions (a colour, then litres); `choose` one; `key`, only with a public URL (without
one the server would refuse to start), a secret (URL mode, which never goes into the app: the page, P214).
Without `$BATON_PUBLIC_URL` (on stdio under `baton dev`) only the ask app serves (P216).
"""

from __future__ import annotations

import os

from baton import Accepted, Context, Server

server = Server("ask-app", when_unasked="app")


@server.tool()
async def paint(ctx: Context, room: str) -> str:
    """Paints a room in the colour the user chooses."""
    colour = await ctx.elicit(["red", "green"], f"Which colour for the {room}?")
    if not isinstance(colour, Accepted):
        return f"{type(colour).__name__}: the {room} stays as it is."
    litres = await ctx.elicit(int, "How many litres?")
    amount = litres.data if isinstance(litres, Accepted) else 0
    return f"Painted the {room} {colour.data} with {amount} l, for {ctx.principal}."


@server.tool()
async def choose(ctx: Context, topic: str = "the porch") -> str:
    """Asks for a colour and says what came back."""
    answer = await ctx.elicit(["red", "green"], f"Which colour for {topic}?")
    said = f" {answer.data}" if isinstance(answer, Accepted) else ""
    return f"{type(answer).__name__}{said} for {topic}"


async def key(ctx: Context) -> str:
    """Asks for an API key (URL mode)."""
    handle = await ctx.secret("api_key", "Your API key")
    return f"Key {handle.name} is kept."


if os.environ.get("BATON_PUBLIC_URL"):
    server.add_tool(key)
