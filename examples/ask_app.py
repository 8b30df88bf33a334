"""Questions in hosts that render MCP Apps but show no questions (docs/asking-in-every-host.md).

`when_unasked="app"`: where the host shows forms, the questions are asked natively; where it shows no forms
but renders apps (claude.ai, Claude Desktop, ChatGPT), they appear in Baton's ask app under the call, and
sending the form completes the call; elsewhere they go to the server's own page (with a public URL).

    baton dev --elicitation none examples/ask_app.py
"""

from baton import Accepted, Context, Server

server = Server("rooms", when_unasked="app")


@server.tool(annotations={"destructiveHint": True})
async def repaint(ctx: Context, room: str) -> str:
    """Repaint a room in the colour the user chooses, once they confirm."""
    colour = await ctx.elicit(["white", "green", "blue"], f"Which colour for the {room}?")
    if not isinstance(colour, Accepted):
        return f"The {room} was not repainted."
    if not await ctx.confirm(f"Repaint the {room} {colour.data}? The old colour is lost."):
        return f"The {room} was not repainted."
    return f"The {room} is now {colour.data}."
