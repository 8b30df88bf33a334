"""A server whose tools ask, for the tests of hosts that drop or cannot show questions (tests/interop/).

- `book(city)` asks one form and falls back when the question goes unanswered (`Cancelled`): the pattern
  docs/server.md shows; with no form capability at all it lets Baton answer the tool error.
- `quick(city)` asks the same form with its own wait, `timeout_s=1`.
- `polite(city)` checks `ctx.can_ask("form")` first and answers a default without asking.

    baton serve tests/servers/unanswered.py --stdio [--ask-timeout SECONDS]
"""

from __future__ import annotations

from dataclasses import dataclass

from baton import Accepted, Cancelled, Context, Server, form

server = Server("unanswered", "1.0.0")


@form
@dataclass
class Booking:
    nights: int


@server.tool()
async def book(ctx: Context, city: str) -> str:
    """Book a stay in a city; asks how many nights."""
    answer = await ctx.elicit(Booking, f"How many nights in {city}?")
    if isinstance(answer, Accepted):
        return f"booked: {city} for {answer.data.nights} nights"
    if isinstance(answer, Cancelled):
        return f"not booked: nobody answered the question about {city}; ask the user and call again"
    return f"declined: {city}"


@server.tool()
async def quick(ctx: Context, city: str) -> str:
    """As book, but the question waits one second at most."""
    answer = await ctx.elicit(Booking, f"How many nights in {city}?", timeout_s=1)
    return f"booked: {city}" if isinstance(answer, Accepted) else f"{type(answer).__name__.lower()}: {city}"


@server.tool()
async def polite(ctx: Context, city: str) -> str:
    """Books one night without asking when the client cannot show a form."""
    if not ctx.can_ask("form"):
        return f"booked: {city} for 1 night (the default; this client cannot show a form)"
    answer = await ctx.elicit(Booking, f"How many nights in {city}?")
    return f"booked: {city} for {answer.data.nights} nights" if isinstance(answer, Accepted) else "not booked"
