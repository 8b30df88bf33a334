"""The Baton servers of the 2025-11-25 tests, public API only: three servers in one module, one `book`.

`book(city)`, which all three serve, asks one form (`nights`, a whole number, and `confirm`, a boolean) and
says what came of it: `booked: <city> for <n> nights`, `not confirmed: <city>`, `declined: <city>` or
`cancelled: <city>`. It is written once for MRTR: in a 2025-11-25 session the same handler's question
reaches the client as an `elicitation/create` server request, and 2026-07-28 requests are served alike.

- `interop`, for the interop tests (tests/interop/test_interop_handshake.py): `book` and `echo(text)`, which asks
  nothing and returns `echo: <text>`.
- `stdio`, for the stdio tests (tests/serve/test_stdio_handshake.py): `book` (`late_book` after a pause);
  `ask_model(question)` samples the client's model; `show_roots()` asks the client's roots;
  `add_greeter(name)` registers a tool (tools/list_changed); `touch(uri)` marks a resource updated;
  `chatty()` logs at three levels. BATON_TEST_PRINCIPAL=refuse|broken makes the principal hook refuse or
  fail.
- `http`, for the HTTP session tests (tests/serve/test_http_handshake.py): `book`; `wait_for(name)` logs, then
  waits until the file `name` appears in `$BATON_TEST_DIR` and records `start:<name>` / `end:<name>` in
  `$BATON_TEST_DIR/runs.log`, so a test controls when it answers and sees whether it ran to the end;
  `change_tools()` changes the tool list; `touch(uri)` reports a resource updated. The bearer token names
  the caller.

    baton serve tests/servers/handshake.py:interop --http 127.0.0.1:PORT
    baton serve tests/servers/handshake.py:stdio --stdio
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from baton import Accepted, Context, Declined, RequestInfo, Server, form
from baton.server import Unauthenticated

DIR = Path(os.environ.get("BATON_TEST_DIR", "."))


def stdio_principal(info: RequestInfo) -> str:
    # BATON_TEST_PRINCIPAL=refuse or =broken makes the hook refuse, or fail, every caller.
    mode = os.environ.get("BATON_TEST_PRINCIPAL", "")
    if mode == "refuse":
        raise Unauthenticated("no credentials on this pipe")
    if mode == "broken":
        raise RuntimeError("the hook is broken")
    return "tester"


def bearer_principal(info: RequestInfo) -> str | None:
    auth = (info.headers or {}).get("authorization", "")
    return auth.removeprefix("Bearer ").strip() or None


interop = Server("legacy-elicit", "1.0.0", instructions="Interop fixture: book(city) asks one form; echo(text).")
stdio = Server("legacy-stdio", "1.0.0", instructions="stdio fixture for both eras.", principal=stdio_principal)
http = Server("http-legacy", "1.0.0", principal=bearer_principal)


@form
@dataclass
class Booking:
    nights: int
    confirm: bool


@interop.tool()
@stdio.tool()
@http.tool()
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


def add_touch(server: Server) -> None:
    """Give `server` the tool `touch(uri)`, which reports the resource at `uri` updated."""

    def touch(uri: str) -> str:
        """Report the resource at `uri` updated."""
        server.resource_updated(uri)
        return f"touched: {uri}"

    server.add_tool(touch)


add_touch(stdio)
add_touch(http)


# -- interop ---------------------------------------------------------------------------------------------


@interop.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return f"echo: {text}"


# -- stdio -----------------------------------------------------------------------------------------------


@stdio.tool()
async def late_book(ctx: Context, city: str, seconds: float) -> str:
    """Wait, then ask as `book` does (so that the ask can come after the client has gone)."""
    await ctx.once("nap", lambda: asyncio.sleep(seconds))
    return await book(ctx, city)


@stdio.tool()
async def ask_model(ctx: Context, question: str) -> str:
    """Ask the client's model (deprecated sampling)."""
    answer = await ctx.sample(question, max_tokens=20, key="model")
    return f"model said: {answer['content']['text']}"


@stdio.tool()
async def show_roots(ctx: Context) -> str:
    """Ask the client for its roots (deprecated roots)."""
    roots = await ctx.list_roots(key="roots")
    return "roots: " + ", ".join(r["uri"] for r in roots)


@stdio.tool()
def add_greeter(name: str) -> str:
    """Register a tool called `name`, so sessions hear tools/list_changed."""

    def greet(who: str) -> str:
        return f"hello {who}"

    stdio.add_tool(greet, name=name)
    return f"added {name}"


@stdio.tool()
async def chatty(ctx: Context) -> str:
    """Log at three levels."""
    for level in ("debug", "info", "error"):
        await ctx.log(level, f"a {level} message")
    return "logged"


@stdio.resource("test://watched", name="watched", mime_type="text/plain")
def watched() -> str:
    """A resource sessions may subscribe to."""
    return "watched"


@stdio.resource("test://other", name="other", mime_type="text/plain")
def other() -> str:
    """A resource nobody subscribes to in the tests."""
    return "other"


# -- http ------------------------------------------------------------------------------------------------


def ran(what: str) -> None:
    with open(DIR / "runs.log", "a") as fh:
        fh.write(what + "\n")


@http.tool()
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


@http.tool()
def change_tools() -> str:
    """Add a tool and take it away again: the tool list changed."""

    def temporary() -> str:
        return "temporary"

    http.add_tool(temporary)
    http.remove_tool("temporary")
    return "changed"


@http.resource("test://a", name="a", mime_type="text/plain")
def resource_a() -> str:
    return "A"


@http.resource("test://b", name="b", mime_type="text/plain")
def resource_b() -> str:
    return "B"
