"""Extensions (SEP-2133, protocol.md P141): identifiers and settings, the server's declaration in both eras,
`ctx.extension` telling a handler whether the client declared one too, and the client's side."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton import Context, KeyRing, Server
from baton.client import Client
from baton.server import ConfigurationError
from baton.testing import memory_client

UI = "io.modelcontextprotocol/ui"
AUDIT = "com.example/audit"
ERAS = ["2026-07-28", "2025-11-25"]


def test_identifiers_follow_the_meta_key_grammar_with_a_prefix() -> None:
    from baton.protocol.extensions import is_identifier

    for good in (UI, "io.modelcontextprotocol/tasks", "com.example-co.x1/a.b_c-d", "a/b"):
        assert is_identifier(good), good
    for bad in ("tasks", "/tasks", "io.modelcontextprotocol/", "1io.x/y", "io-.x/y", "io.x/-y", "io.x/y_", 7, None):
        assert not is_identifier(bad), bad


def test_a_peers_malformed_or_unknown_extensions_are_ignored_and_one_side_is_not_enough() -> None:
    from baton.protocol.extensions import negotiated, peer_extensions

    declared = peer_extensions(
        {"extensions": {UI: {"mimeTypes": ["text/html"]}, "bad key": {}, AUDIT: "not an object", "x.y/z": {}}}
    )
    assert dict(declared) == {UI: {"mimeTypes": ["text/html"]}, "x.y/z": {}}
    assert dict(peer_extensions({"extensions": ["not", "a", "map"]})) == {}
    assert dict(peer_extensions({})) == {}
    assert negotiated({UI: {}}, declared, UI) == {"mimeTypes": ["text/html"]}
    assert negotiated({}, declared, UI) is None  # only the peer declared it
    assert negotiated({AUDIT: {}}, declared, AUDIT) is None  # only this side declared it


def make_server(**options: Any) -> Server:
    server = Server("ext", state_keys=KeyRing.ephemeral_key(), **options)

    @server.tool
    async def which(ctx: Context) -> str:
        """What the handler sees of each extension."""
        return repr({name: ctx.extension(name) for name in (UI, AUDIT, "org.other/thing")})

    return server


def test_a_server_refuses_a_malformed_declaration_where_it_is_written() -> None:
    with pytest.raises(ConfigurationError, match=r"reverse\.dns/name"):
        make_server(extensions={"tasks": {}})
    server = make_server()
    with pytest.raises(ConfigurationError, match="must be a JSON object"):
        server.add_extension(AUDIT, ["level"])  # type: ignore[arg-type]


@pytest.mark.parametrize("era", ERAS)
def test_the_server_declares_its_extensions_in_discover_and_initialize(era: str) -> None:
    async def main() -> None:
        server = make_server(extensions={UI: {"mimeTypes": ["text/html;profile=mcp-app"]}})
        server.add_extension(AUDIT)
        async with memory_client(server, protocol=era) as client:  # type: ignore[arg-type]
            await client.settle_era()
            if era == "2026-07-28":
                caps = (await client.discover())["capabilities"]
            else:
                caps = (client.initialize_result or {})["capabilities"]
            assert caps["extensions"] == {UI: {"mimeTypes": ["text/html;profile=mcp-app"]}, AUDIT: {}}
            assert dict(await client.server_extensions()) == caps["extensions"]

    asyncio.run(main())


@pytest.mark.parametrize("era", ERAS)
def test_a_handler_sees_an_extension_only_when_both_sides_declared_it(era: str) -> None:
    async def main() -> None:
        server = make_server(extensions={UI: {}, AUDIT: {"level": 2}})
        client_side = {
            UI: {"mimeTypes": ["text/html"]},
            "org.other/thing": {},
        }  # AUDIT: server only; other: client only
        async with memory_client(server, protocol=era, extensions=client_side) as client:  # type: ignore[arg-type]
            text = (await client.call_tool("which", {})).text
        assert text == repr({UI: {"mimeTypes": ["text/html"]}, AUDIT: None, "org.other/thing": None})
        async with memory_client(server, protocol=era) as client:  # type: ignore[arg-type]
            assert (await client.call_tool("which", {})).text == repr({UI: None, AUDIT: None, "org.other/thing": None})

    asyncio.run(main())


def test_a_session_id_carries_the_negotiated_extensions_to_another_instance() -> None:
    async def main() -> None:
        from baton.protocol.messages import Message
        from baton.server import Exchange, RequestInfo
        from baton.server.sessions import SessionSeal

        server = make_server(extensions={UI: {}})
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"extensions": {UI: {"v": 1}, "org.other/thing": {"big": "x" * 1000}}},
            "clientInfo": {"name": "t", "version": "1"},
        }
        reply, session = server.runtime.initialize(
            Message("initialize", params, 0, True), Exchange(RequestInfo("http"))
        )  # type: ignore[arg-type]
        assert session is not None, reply.body
        assert reply.body["result"]["capabilities"]["extensions"] == {UI: {}}
        seal = SessionSeal(server.runtime.key_ring, "ext")
        opened = seal.open(seal.mint(session), session.principal)
        assert opened is not None
        assert dict(opened.capabilities.extensions) == {UI: {"v": 1}}  # the server's offer bounds what is sealed

    asyncio.run(main())


@pytest.mark.parametrize("era", ERAS)
def test_the_client_declares_its_extensions_and_reads_the_servers(era: str) -> None:
    async def main() -> None:
        seen: list[dict[str, Any]] = []

        def tap(direction: str, message: dict[str, Any]) -> None:
            if direction == "sent" and message.get("method") in ("initialize", "tools/call"):
                seen.append(message["params"])

        server = make_server(extensions={UI: {"mimeTypes": ["text/html"]}})
        with pytest.raises(ValueError, match=r"reverse\.dns/name"):
            Client("http://127.0.0.1:1/mcp", extensions={"ui": {}})
        async with memory_client(server, protocol=era, extensions={UI: None, AUDIT: {}}, on_message=tap) as client:  # type: ignore[arg-type]
            await client.call_tool("which", {})
            assert await client.extension(UI) == {"mimeTypes": ["text/html"]}
            assert await client.extension(AUDIT) is None  # the server did not declare it
        declared = {UI: {}, AUDIT: {}}
        if era == "2026-07-28":
            assert seen[-1]["_meta"]["io.modelcontextprotocol/clientCapabilities"]["extensions"] == declared
        else:
            assert seen[0]["capabilities"]["extensions"] == declared

    asyncio.run(main())
