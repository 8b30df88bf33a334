"""The ask ladder (protocol.md P138-P140): the declared rung of a question the client cannot show
(`when_unasked`: "error", the default, or the confirm-by-argument of a yes/no question) in both eras,
and the opt-in host quirks table keyed by clientInfo."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from support.inprocess import InProcessServer
from wire import call

from baton import Context, Server
from baton.protocol.errors import McpError
from baton.testing import Accepted, ScriptedUser, memory_client

SESSION = "2025-11-25"


def projects(**options: Any) -> tuple[Server, list[str]]:
    """A server whose `delete` asks a yes/no question (when_unasked from `options`, else the server's) and whose
    `rename` asks the argument-rung tool's other kind of question, a form."""
    deleted: list[str] = []
    server = Server("ladder", **options.pop("server", {}))

    @server.tool(**options)
    async def delete(ctx: Context, project: str) -> str:
        if not await ctx.confirm(f"Delete project {project}?"):
            return "Not deleted."
        deleted.append(project)
        return f"Deleted {project}."

    @server.tool(**options)
    async def rename(ctx: Context, project: str) -> str:
        answer = await ctx.elicit(str, f"New name for {project}?")
        return f"Renamed to {answer.data}." if isinstance(answer, Accepted) else "Kept."

    @server.tool(**options)
    def count() -> int:  # no Context, no question: no `confirm` argument either
        return len(deleted)

    return server, deleted


def result_of(resp: Any) -> dict[str, Any]:
    assert resp.status_code == 200, resp.text
    return dict(resp.json()["result"])


def test_argument_rung_over_2026_http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path))
    server, deleted = projects(when_unasked="argument")
    with InProcessServer(server, tmp_path / "server.log") as live:
        # The published schema carries the optional argument, with what it is for.
        schema = server.tools["delete"].input_schema
        assert schema["properties"]["confirm"]["type"] == "boolean"
        assert "confirm" not in schema.get("required", [])
        assert "confirm" not in server.tools["count"].input_schema["properties"]
        # No elicitation declared, no argument: a plain result (not isError) the model relays, nothing done.
        first = result_of(call(live.url, "delete", {"project": "apollo"}, caps={}))
        assert first["resultType"] == "complete"
        assert not first.get("isError")
        text = first["content"][0]["text"]
        assert "Delete project apollo?" in text
        assert "confirm=true" in text
        assert deleted == []
        # confirm=false is the user's no; confirm=true is the yes.
        no = result_of(call(live.url, "delete", {"project": "apollo", "confirm": False}, caps={}))
        assert no["content"][0]["text"] == "Not deleted."
        yes = result_of(call(live.url, "delete", {"project": "apollo", "confirm": True}, caps={}))
        assert yes["content"][0]["text"] == "Deleted apollo."
        assert deleted == ["apollo"]
        # A client that can show the question is asked natively, whatever the argument says.
        native = result_of(call(live.url, "delete", {"project": "gemini", "confirm": True}))
        assert native["resultType"] == "input_required"
        # Another kind of ask in such a tool falls back to the error rung (-32021 on 2026-07-28).
        other = call(live.url, "rename", {"project": "gemini"}, caps={})
        assert other.json()["error"]["code"] == -32021
        # The argument is a boolean or nothing.
        bad = result_of(call(live.url, "delete", {"project": "gemini", "confirm": "yes"}, caps={}))
        assert bad["isError"] is True
        assert "confirm must be true or false" in bad["content"][0]["text"]


def test_argument_rung_in_a_2025_session() -> None:
    server, deleted = projects(server={"when_unasked": "argument"})  # the server's default this time

    async def scenario() -> None:
        async with memory_client(server, protocol=SESSION) as client:  # no elicitation declared
            asked = await client.call_tool("delete", {"project": "apollo"})
            assert not asked.is_error
            assert "Delete project apollo?" in asked.text and "confirm=true" in asked.text
            done = await client.call_tool("delete", {"project": "apollo", "confirm": True})
            assert done.text == "Deleted apollo."
            other = await client.call_tool("rename", {"project": "apollo"})
            assert other.is_error and "cannot show one" in other.text

    asyncio.run(scenario())
    assert deleted == ["apollo"]


@pytest.mark.parametrize("declared", [{}, {"server": {"when_unasked": "argument"}, "when_unasked": "error"}])
def test_error_stays_the_default(declared: dict[str, Any]) -> None:
    """No declaration, or a tool's "error" over its server's "argument": today's -32021 / tool error."""
    server, deleted = projects(**declared)
    assert "confirm" not in server.tools["delete"].input_schema["properties"]

    async def scenario() -> None:
        async with memory_client(server) as client:
            with pytest.raises(McpError) as raised:
                await client.call_tool("delete", {"project": "apollo"})
            assert raised.value.code == -32021
            smuggled = await client.call_tool("delete", {"project": "apollo", "confirm": True})
            assert smuggled.is_error and "unexpected argument 'confirm'" in smuggled.text  # no yes by argument
        async with memory_client(server, protocol=SESSION) as client:
            result = await client.call_tool("delete", {"project": "apollo"})
            assert result.is_error and "cannot show one" in result.text

    asyncio.run(scenario())
    assert deleted == []


def test_bad_declarations_are_refused_where_written() -> None:
    with pytest.raises(ValueError, match="when_unasked is one of 'error', 'page', 'argument'"):
        Server("bad", when_unasked="form")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="when_unasked"):
        projects(when_unasked="ask")
    server = Server("clash")
    with pytest.raises(ValueError, match="already has one"):
        server.add_tool(lambda ctx, confirm: "", name="clash", when_unasked="argument")  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", ["2026-07-28", SESSION])
def test_host_quirks_are_opt_in(protocol: str) -> None:
    """claude-ai declares form elicitation here, and drops what it is sent (P140): with the table on, its
    question takes the declared rung; off (the default), it is sent; a server's own row overrides."""
    from baton import HOST_QUIRKS, HostQuirk

    async def outcome(server: Server, name: str, version: str = "1.0") -> str:
        user = ScriptedUser({"q1": Accepted({"confirm": True})})
        async with memory_client(server, user, protocol=protocol, name=name, version=version) as client:
            try:
                return (await client.call_tool("delete", {"project": "apollo"})).text
            except McpError as exc:
                return f"error {exc.code}"

    off, _ = projects(when_unasked="argument")
    on, _ = projects(when_unasked="argument", server={"host_quirks": True})
    mine = HostQuirk("claude-ai", ("form",), "our own tests")
    overridden, _ = projects(when_unasked="argument", server={"host_quirks": [mine, *HOST_QUIRKS]})

    async def scenario() -> None:
        assert await outcome(off, "claude-ai") == "Deleted apollo."
        assert "confirm=true" in await outcome(on, "claude-ai")
        assert "confirm=true" in await outcome(on, "Claude-Code", "2.1.40")  # forms only from 2.1.76
        assert await outcome(on, "claude-code", "2.1.76") == "Deleted apollo."
        assert await outcome(on, "other-host") == "Deleted apollo."
        assert await outcome(overridden, "claude-ai") == "Deleted apollo."

    asyncio.run(scenario())
