"""The small server the server-side targets drive: tools that take typed arguments, one that asks, a resource,
a prompt. Keys are fixed and the ask timeout tiny, so a run is reproducible and never waits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from baton import Context, Server, form
from baton.state.keys import Key, KeyRing

RING = KeyRing([Key("fuzz", bytes(range(32)))])


@form
@dataclass
class Booking:
    day: str
    seats: int = 1
    confirm: bool = False
    meal: Literal["veg", "fish"] = "veg"


def make_server() -> Server:
    server = Server("fuzz", "0.1.0", state_keys=RING, audience="http://127.0.0.1/mcp", ask_timeout_s=0.01)

    @server.tool()
    def echo(text: str, times: int = 1, tags: list[str] | None = None) -> str:
        return text * max(0, min(times, 3)) + ",".join(tags or [])

    @server.tool()
    async def book(ctx: Context, city: str) -> str:
        answer = await ctx.elicit(Booking, f"Book in {city}?")
        return f"booked: {answer}"

    @server.resource("fuzz://note")
    def note() -> str:
        return "a note"

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    return server


SERVER = make_server()
