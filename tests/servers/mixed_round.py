"""A server whose one tool asks a form and a URL question in the same round (`ctx.gather`), for the bridge's
split of a round between a host that shows forms only and the bridge's page (protocol.md P201)."""

from __future__ import annotations

from baton import Accepted, Context, Server

server = Server("mixed-round")


@server.tool()
async def both(ctx: Context) -> str:
    """Asks a name (a form) and to open a page (a URL), in one round."""
    name, opened = await ctx.gather(
        ctx.elicit(str, "What is your name?"),
        ctx.elicit_url("Open the billing page", "https://billing.example.com/setup"),
    )
    who = name.data if isinstance(name, Accepted) else "nobody"
    return f"{who}; billing {'opened' if isinstance(opened, Accepted) else 'not opened'}"
