"""What a FastMCP or `mcp` user writes first: refused at registration with Baton's spelling where the source
shows it, at call time with Baton's argument order where it does not; FastMCP's log and progress names as
aliases; a question with one answer asked by its type or its choices; and `Server(lifespan=...)` on every
transport (protocol.md P129-P132; docs/coming-from-fastmcp.md)."""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import textwrap
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from support.serve import serve_once, start_server
from wire import meta

from baton import Accepted, Context, Server
from baton.server.lifespan import LifespanFailed
from baton.server.problems import HandlerProblems
from baton.testing import ScriptedUser, memory_client

ERAS = ["2026-07-28", "2025-11-25"]


@dataclass
class Booking:
    nights: int


FastContext = type("Context", (), {"__module__": "fastmcp.server.context"})  # what `from fastmcp import Context` is


def call(server: Server, tool: str, user: ScriptedUser | None = None, era: str = "2026-07-28", **args: Any) -> Any:
    async def main() -> Any:
        async with memory_client(server, user, protocol=era) as client:
            return await client.call_tool(tool, args)

    return asyncio.run(main())


# -- registration -------------------------------------------------------------------------------------------


def test_a_parameter_typed_with_fastmcps_context_is_refused_with_batons_spelling() -> None:
    server = Server("fast")

    async def book(ctx: FastContext, city: str) -> str:  # type: ignore[valid-type]
        return city

    with pytest.raises(HandlerProblems, match=r"parameter 'ctx': is typed with fastmcp.Context; .*ctx: baton.Context"):
        server.add_tool(book)


def test_elicit_in_fastmcps_order_is_refused_at_registration() -> None:
    server = Server("fast")

    async def book(ctx: Context, city: str) -> str:
        await ctx.elicit(f"How many nights in {city}?", Booking)  # type: ignore[arg-type]
        return city

    with pytest.raises(HandlerProblems, match=r"write ctx.elicit\(Booking, f'How many nights in \{city\}\?'\)"):
        server.add_tool(book)

    async def later(ctx: Context) -> str:
        await ctx.elicit(message="How many nights?", response_type=Booking)  # type: ignore[call-overload]
        return "x"

    with pytest.raises(HandlerProblems, match=r"write ctx.elicit\(Booking, 'How many nights\?'\)"):
        server.add_tool(later)

    async def sdk(ctx: Context) -> str:
        await ctx.elicit("How many nights?", schema=Booking)  # type: ignore[call-overload]  # `mcp`'s spelling
        return "x"

    with pytest.raises(HandlerProblems, match=r"write ctx.elicit\(Booking, 'How many nights\?'\)"):
        server.add_tool(sdk)


def test_fastmcps_tool_options_say_what_to_write_instead() -> None:
    server = Server("fast")
    with pytest.raises(TypeError, match=r"unknown option 'tags' \(FastMCP's\); Baton has no tags"):
        server.tool(tags={"a"})  # type: ignore[call-overload]


async def fastmcp_style(ctx: Context, message: str) -> Any:
    """A helper the handler passes its Context to: its calls are not read at registration."""
    return await ctx.elicit(message, response_type=Booking)  # type: ignore[call-overload]


def test_elicit_in_fastmcps_order_at_call_time_says_batons_order() -> None:
    server = Server("fast")

    @server.tool()
    async def book(ctx: Context) -> str:
        await fastmcp_style(ctx, "How many nights?")
        return "booked"

    @server.tool()
    async def swapped(ctx: Context) -> str:
        question = "How many nights?"
        await ctx.elicit(question, Booking)
        return "booked"

    expected = "ctx.elicit takes the form first, then the message: write ctx.elicit(Booking, 'How many nights?')"
    for tool in ("book", "swapped"):
        result = call(server, tool)
        assert result.is_error and expected in result.text, result.text


# -- aliases ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_fastmcps_log_and_progress_names_are_aliases(era: str, caplog: pytest.LogCaptureFixture) -> None:
    server = Server("fast")

    @server.tool()
    async def work(ctx: Context) -> str:
        await ctx.debug("d")
        await ctx.info("i")
        await ctx.warning("w")
        await ctx.error("e", logger="db")
        await ctx.report_progress(1, 2, "half")
        return "ok"

    notes: list[dict[str, Any]] = []

    async def note(message: dict[str, Any]) -> None:
        notes.append(message)

    async def main() -> str:
        async with memory_client(server, protocol=era) as client:
            return (await client.call_tool("work", progress=note)).text

    with caplog.at_level("DEBUG", logger="baton.handler"):
        assert asyncio.run(main()) == "ok"
    assert [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "baton.handler"] == [
        ("DEBUG", "d"), ("INFO", "i"), ("WARNING", "w"), ("ERROR", "e"),
    ]  # fmt: skip
    progress = [n["params"] for n in notes if n.get("method") == "notifications/progress"]
    assert [(p["progress"], p["total"], p["message"]) for p in progress] == [(1, 2, "half")]


# -- a question with one answer ---------------------------------------------------------------------------------


class Region(enum.Enum):
    EU = "eu"
    US = "us"


QUESTIONS: list[tuple[Any, Any, dict[str, Any], Any]] = [
    (str, "Ann", {"type": "string"}, "Ann"),
    (int, 3, {"type": "integer"}, 3),
    (bool, True, {"type": "boolean"}, True),
    (Literal["eu", "us"], "us", {"type": "string", "enum": ["eu", "us"]}, "us"),
    (Region, "eu", {"type": "string", "enum": ["eu", "us"]}, Region.EU),
    (["eu", "us"], "eu", {"type": "string", "enum": ["eu", "us"]}, "eu"),
]


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(("asked", "answer", "schema", "received"), QUESTIONS)
def test_a_question_with_one_answer(era: str, asked: Any, answer: Any, schema: dict[str, Any], received: Any) -> None:
    server = Server("fast")
    got: list[Any] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        reply = await ctx.elicit(asked, "Which one?", key="q")
        got.append(reply)
        return "answered" if isinstance(reply, Accepted) else "not answered"

    user = ScriptedUser({"q": Accepted({"value": answer})})
    assert call(server, "ask", user, era).text == "answered"
    assert got == [Accepted(received)]
    form = user.asked[0].form
    assert form is not None
    assert form.schema == {"type": "object", "properties": {"value": schema}, "required": ["value"]}


# -- lifespan -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_the_lifespan_runs_once_around_the_testing_kits_clients(era: str) -> None:
    events: list[str] = []

    @contextlib.asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:
        events.append(f"open {server.name}")
        yield {"db": "pool"}
        events.append("close")

    server = Server("life", lifespan=lifespan)

    @server.tool()
    async def which(ctx: Context) -> str:
        return str(ctx.lifespan["db"])

    async def main() -> list[str]:
        async with memory_client(server, protocol=era) as one, memory_client(server, protocol=era) as two:
            texts = [(await one.call_tool("which")).text, (await two.call_tool("which")).text]
            assert events == ["open life"]
        return texts

    assert asyncio.run(main()) == ["pool", "pool"]
    assert events == ["open life", "close"]


def test_a_lifespan_that_is_no_context_manager_says_how_to_write_one() -> None:
    async def lifespan(server: Server) -> AsyncIterator[dict[str, str]]:  # @contextlib.asynccontextmanager forgotten
        yield {}

    server = Server("gen", lifespan=lifespan)  # type: ignore[arg-type]

    @server.tool()
    async def which(ctx: Context) -> str:
        return str(ctx.lifespan)

    expected = "cannot start 'gen': its lifespan gave async_generator, not an async context manager; decorate it"
    with pytest.raises(LifespanFailed, match=expected):
        call(server, "which")


LIFESPAN_SERVER = """
import contextlib
import os
import sys

from baton import Context, Server


@contextlib.asynccontextmanager
async def lifespan():
    if os.environ.get("FAIL_LIFESPAN"):
        raise ConnectionRefusedError("no database at db:5432")
    print("pool opened", file=sys.stderr, flush=True)
    yield {"pool": "the pool"}
    print("pool closed", file=sys.stderr, flush=True)


server = Server("life", lifespan=lifespan)


@server.tool()
async def which(ctx: Context) -> str:
    return ctx.lifespan["pool"]
"""


def write_server(tmp_path: Path) -> Path:
    path = tmp_path / "life.py"
    path.write_text(textwrap.dedent(LIFESPAN_SERVER))
    return path


@pytest.mark.process
def test_the_lifespan_runs_around_a_stdio_server(tmp_path: Path) -> None:
    write_server(tmp_path)
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "which", "_meta": meta()}}
    done = serve_once(tmp_path, "life.py", "--stdio", messages=[request])
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["content"][0]["text"] == "the pool"
    lines = done.stderr.splitlines()
    assert lines.count("pool opened") == 1 and lines.count("pool closed") == 1
    assert lines.index("pool opened") < lines.index("pool closed")


@pytest.mark.process
def test_a_failing_lifespan_is_one_line_and_exit_2_on_stdio(tmp_path: Path) -> None:
    write_server(tmp_path)
    done = serve_once(tmp_path, "life.py", "--stdio", env={"FAIL_LIFESPAN": "1"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "baton serve: cannot start 'life': its lifespan raised ConnectionRefusedError: no database at db:5432"
    )
    assert "Traceback" not in done.stderr


@pytest.mark.process
def test_the_lifespan_runs_around_an_http_server(tmp_path: Path) -> None:
    path = write_server(tmp_path)
    with start_server(str(path), log=tmp_path / "serve.log") as running:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "which", "_meta": meta()}}
        headers = {"mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "which"}
        reply = httpx.post(running.url, json=body, headers=headers, timeout=30)
        assert reply.json()["result"]["content"][0]["text"] == "the pool", reply.text
    log = running.log.read_text()
    assert log.count("pool opened") == 1 and log.count("pool closed") == 1, log


@pytest.mark.process
def test_a_failing_lifespan_is_exit_2_over_http(tmp_path: Path) -> None:
    write_server(tmp_path)
    done = serve_once(tmp_path, "life.py", "--http", "127.0.0.1:0", env={"FAIL_LIFESPAN": "1"})
    assert done.returncode == 2, done.stderr
    assert "cannot start 'life': its lifespan raised ConnectionRefusedError: no database at db:5432" in done.stderr
    assert "Traceback" not in done.stderr and "Application startup failed" not in done.stderr
