"""Servers for the client subcommands' tests (tests/cli/test_cli_commands.py), public API only.

- `asking`: no tools at all; a resource and a prompt that ask before they answer, so `baton read` and
  `baton prompt` must answer an MRTR round at the terminal. `diary://today` asks `Open today's page?`
  and gives `Dear diary: it rained.` or `The diary stays shut.`; `diary://{day}` (a template) gives
  `Nothing written on <day>.`. The prompt `letter(to)` asks `Sign the letter?` and gives one user
  message, `Dear <to>, ... Signed.` or `... Unsigned.`, and one assistant message.
- `empty`: nothing at all, so every list is -32601.
- `shapes`, for the typed results (tests/client/test_client_results.py): `square(side)`, read-only, titled, with
  an output schema, answers two text blocks, a resource link and `structuredContent` {area, perimeter};
  `flip(side)` asks `Flip it?` first and fails as a tool error (`isError`) when told no.

    baton serve tests/servers/first_hour.py:asking --http 127.0.0.1:PORT
"""

from __future__ import annotations

from dataclasses import dataclass

from baton import Context, Server, ToolError, content

asking = Server("first-hour")
empty = Server("empty")
shapes = Server("shapes")


@asking.resource("diary://today", name="today", mime_type="text/plain", description="Today's page.")
async def today(ctx: Context) -> str:
    if not await ctx.confirm("Open today's page?"):
        return "The diary stays shut."
    return "Dear diary: it rained."


@asking.resource("diary://{day}", name="day", mime_type="text/plain")
def day(day: str) -> str:
    """Any day's page."""
    return f"Nothing written on {day}."


@asking.prompt()
async def letter(ctx: Context, to: str) -> list[dict[str, object]]:
    """A letter, signed if you say so."""
    signed = await ctx.confirm("Sign the letter?")
    return [
        content.user(f"Dear {to}, the weather is fine. {'Signed.' if signed else 'Unsigned.'}"),
        content.assistant("Sent."),
    ]


@dataclass
class Square:
    area: float
    perimeter: float


@shapes.tool(title="Measure a square", annotations={"readOnlyHint": True})
def square(side: float) -> Square:
    """Area and perimeter of a square."""
    return Square(side * side, 4 * side)


@shapes.tool()
async def flip(ctx: Context, side: float) -> list[dict[str, object]]:
    """Flips a square, if you say so."""
    if not await ctx.confirm("Flip it?"):
        raise ToolError("not flipped")
    return [
        content.text(f"flipped a square of side {side:g}"),
        content.text("it looks the same"),
        content.resource_link("shape://square", "square", mimeType="application/json", title="The square"),
    ]
