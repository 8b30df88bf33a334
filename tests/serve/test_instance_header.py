"""The `baton-instance` response header (protocol.md P229): sent only for a named instance, and what names a process.

In process, through httpx's ASGI transport: no socket, no subprocess. `tests/state/test_key_rotation.py` and
`tests/cli/test_cli.py` check the same on a real `baton serve` and its `--workers`.
"""

from __future__ import annotations

import asyncio
import os
import socket

import httpx
import pytest
from wire import headers_for, request

from baton import KeyRing, Server
from baton.serve.http import instance_header_value, instance_name


def headers_of(app: object) -> list[httpx.Headers]:
    """The headers of a 200 (`server/discover`), a 405 (GET), a 404 (another path) and a connect page from `app`:
    each way out of the transport (the connect kit's pages are answered by the kit, through the transport)."""

    async def go() -> list[httpx.Headers]:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:  # type: ignore[arg-type]
            message = request("server/discover")
            responses = [
                await client.post("/mcp", json=message, headers=headers_for(message)),
                await client.get("/mcp"),
                await client.get("/elsewhere"),
                await client.get("/connect/login"),
            ]
        assert [r.status_code for r in responses[:3]] == [200, 405, 404]
        assert "the MCP endpoint is" not in responses[3].text, responses[3].text  # the kit answered, not the transport
        return [r.headers for r in responses]

    return asyncio.run(go())


def a_server() -> Server:
    server = Server("instances", state_keys=KeyRing.ephemeral_key())
    server.tool(name="ok")(lambda: "ok")
    return server


def test_an_unnamed_instance_sends_no_header(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATON_INSTANCE", raising=False)
    assert all("baton-instance" not in h for h in headers_of(a_server().asgi()))


def test_a_named_instance_names_itself_in_every_response(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_INSTANCE", "eu-1")
    assert [h["baton-instance"] for h in headers_of(a_server().asgi())] == ["eu-1"] * 4
    monkeypatch.delenv("BATON_INSTANCE")
    assert [h["baton-instance"] for h in headers_of(a_server().asgi(instance="given"))] == ["given"] * 4


def test_what_names_a_process(monkeypatch: pytest.MonkeyPatch) -> None:
    here = f"{socket.gethostname()}:{os.getpid()}"
    monkeypatch.delenv("BATON_INSTANCE", raising=False)
    assert (instance_name(), instance_name(worker=True)) == (here, here)
    assert instance_header_value() is None and instance_header_value(worker=True) is None
    monkeypatch.setenv("BATON_INSTANCE", "eu-1")
    assert (instance_name(), instance_name(worker=True)) == ("eu-1", f"eu-1:{os.getpid()}")
    assert (instance_header_value(), instance_header_value(worker=True)) == ("eu-1", f"eu-1:{os.getpid()}")
    monkeypatch.setenv("BATON_INSTANCE", "")  # set but empty: unnamed
    assert instance_header_value() is None and instance_name() == here
