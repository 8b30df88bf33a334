"""A server for the 2025-11-25 HTTP session tests (tests/test_http_legacy.py), public API only.

`book(city)` asks one form; `wait_for(name)` logs, then waits until the file `name` appears in
`$BATON_TEST_DIR` and records `start:<name>` / `end:<name>` in `$BATON_TEST_DIR/runs.log`, so a test
controls when it answers and sees whether it ran to the end; `change_tools()` changes the tool list;
`touch(uri)` reports a resource updated. The bearer token names the caller.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from baton import Accepted, Context, Declined, RequestInfo, Server, form

DIR = Path(os.environ.get("BATON_TEST_DIR", "."))


def principal(info: RequestInfo) -> str | None:
    auth = (info.headers or {}).get("authorization", "")
    return auth.removeprefix("Bearer ").strip() or None


server = Server("http-legacy", "1.0.0", principal=principal)


def ran(what: str) -> None:
    with open(DIR / "runs.log", "a") as fh:
        fh.write(what + "\n")


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
        return f"booked: {city} for {answer.data.nights} nights" if answer.data.confirm else f"not confirmed: {city}"
    if isinstance(answer, Declined):
        return f"declined: {city}"
    return f"cancelled: {city}"


@server.tool()
async def wait_for(ctx: Context, name: str) -> str:
    """Log, then wait for the file `name` to appear."""
    ran(f"start:{name}")
    await ctx.log("info", f"waiting for {name}")
    for _ in range(1500):
        if (DIR / name).exists():
            break
        await asyncio.sleep(0.02)
    ran(f"end:{name}")
    return f"released: {name}"


@server.tool()
def change_tools() -> str:
    """Add a tool and take it away again: the tool list changed."""

    def temporary() -> str:
        return "temporary"

    server.add_tool(temporary)
    server.remove_tool("temporary")
    return "changed"


@server.tool()
def touch(uri: str) -> str:
    """Report the resource at `uri` updated."""
    server.resource_updated(uri)
    return f"touched: {uri}"


@server.resource("test://a", name="a", mime_type="text/plain")
def resource_a() -> str:
    return "A"


@server.resource("test://b", name="b", mime_type="text/plain")
def resource_b() -> str:
    return "B"
