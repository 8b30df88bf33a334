"""A Baton server for the 2025-11-25 interop tests (tests/test_interop_legacy.py), public API only.

`book(city)` asks one form (`nights`, a whole number, and `confirm`, a boolean) and says what came of
it: `booked: <city> for <n> nights`, `not confirmed: <city>`, `declined: <city>` or `cancelled: <city>`.
`echo(text)` asks nothing and returns `echo: <text>`. Written once for MRTR: in a 2025-11-25 session
the same handler's question reaches the client as an `elicitation/create` server request.

    baton serve tests/servers/legacy_elicit.py --http 127.0.0.1:PORT
    baton serve tests/servers/legacy_elicit.py --stdio
"""

from __future__ import annotations

from dataclasses import dataclass

from baton import Accepted, Context, Declined, Server, form

server = Server("legacy-elicit", "1.0.0", instructions="Interop fixture: book(city) asks one form; echo(text).")


@form
@dataclass
class Booking:
    nights: int
    confirm: bool


@server.tool()
async def book(ctx: Context, city: str) -> str:
    """Book a stay in a city once the user says how many nights and confirms."""
    answer = await ctx.elicit(Booking, f"Book a stay in {city}?", key="booking")
    if isinstance(answer, Accepted):
        if not answer.data.confirm:
            return f"not confirmed: {city}"
        return f"booked: {city} for {answer.data.nights} nights"
    if isinstance(answer, Declined):
        return f"declined: {city}"
    return f"cancelled: {city}"


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"
