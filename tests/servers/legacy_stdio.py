"""A Baton server for the 2025-11-25 stdio tests (tests/test_stdio_legacy.py), public API only.

`book(city)` asks one form (`late_book` after a pause); `ask_model(question)` samples the client's
model; `show_roots()` asks the client's roots; `add_greeter(name)` registers a tool
(tools/list_changed); `touch(uri)` marks a resource updated; `chatty()` logs at three levels. The same
handlers serve 2026-07-28 requests in the same process. BATON_TEST_PRINCIPAL=refuse|broken makes
the principal hook refuse or fail.

    baton serve tests/servers/legacy_stdio.py --stdio
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass

from baton import Accepted, Context, Declined, RequestInfo, Server, form
from baton.server import Unauthenticated


def principal(info: RequestInfo) -> str:
    # BATON_TEST_PRINCIPAL=refuse or =broken makes the hook refuse, or fail, every caller.
    mode = os.environ.get("BATON_TEST_PRINCIPAL", "")
    if mode == "refuse":
        raise Unauthenticated("no credentials on this pipe")
    if mode == "broken":
        raise RuntimeError("the hook is broken")
    return "tester"


server = Server("legacy-stdio", "1.0.0", instructions="stdio fixture for both eras.", principal=principal)


@form
@dataclass
class Booking:
    nights: int
    confirm: bool


@server.tool()
async def book(ctx: Context, city: str) -> str:
    """Book a stay once the user says how many nights and confirms."""
    answer = await ctx.elicit(Booking, f"Book a stay in {city}?", key="booking")
    if isinstance(answer, Accepted):
        if not answer.data.confirm:
            return f"not confirmed: {city}"
        return f"booked: {city} for {answer.data.nights} nights"
    if isinstance(answer, Declined):
        return f"declined: {city}"
    return f"cancelled: {city}"


@server.tool()
async def late_book(ctx: Context, city: str, seconds: float) -> str:
    """Wait, then ask as `book` does (so that the ask can come after the client has gone)."""
    await ctx.once("nap", lambda: asyncio.sleep(seconds))
    return await book(ctx, city)


@server.tool()
async def ask_model(ctx: Context, question: str) -> str:
    """Ask the client's model (deprecated sampling)."""
    answer = await ctx.sample(question, max_tokens=20, key="model")
    return f"model said: {answer['content']['text']}"


@server.tool()
async def show_roots(ctx: Context) -> str:
    """Ask the client for its roots (deprecated roots)."""
    roots = await ctx.list_roots(key="roots")
    return "roots: " + ", ".join(r["uri"] for r in roots)


@server.tool()
def add_greeter(name: str) -> str:
    """Register a tool called `name`, so sessions hear tools/list_changed."""

    def greet(who: str) -> str:
        return f"hello {who}"

    server.add_tool(greet, name=name)
    return f"added {name}"


@server.tool()
def touch(uri: str) -> str:
    """Mark a resource as changed."""
    server.resource_updated(uri)
    return f"touched {uri}"


@server.tool()
async def chatty(ctx: Context) -> str:
    """Log at three levels."""
    for level in ("debug", "info", "error"):
        await ctx.log(level, f"a {level} message")
    return "logged"


@server.resource("test://watched", name="watched", mime_type="text/plain")
def watched() -> str:
    """A resource sessions may subscribe to."""
    return "watched"


@server.resource("test://other", name="other", mime_type="text/plain")
def other() -> str:
    """A resource nobody subscribes to in the tests."""
    return "other"
