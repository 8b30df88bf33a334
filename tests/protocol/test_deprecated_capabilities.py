"""The server's warning about a client's deprecated capabilities (`roots`, `sampling`): one line per client
name and version per process (protocol.md P124), across requests and `Server` objects, with a bounded memory
of the clients seen. Driven in process through `server.runtime.handle`."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from wire import meta

from baton import KeyRing, Server
from baton.protocol.constants import META_CLIENT_INFO
from baton.protocol.messages import Message
from baton.server import Exchange, RequestInfo
from baton.server.deprecations import SEEN_MAX, warn_deprecated


def discover(server: Server, caps: dict[str, Any], client: dict[str, Any] | None) -> None:
    body = {"_meta": {**meta(caps), META_CLIENT_INFO: client}}
    if client is None:
        del body["_meta"][META_CLIENT_INFO]
    message = Message("server/discover", body, 1, True)
    reply = asyncio.run(server.runtime.handle(message, Exchange(RequestInfo("stdio"))))
    assert "result" in reply.body  # type: ignore[union-attr]


def warnings_in(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "deprecated" in r.getMessage()]


def test_one_line_per_client_name_and_version_per_process(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "baton.server")
    inspector = {"name": "inspector-p124", "version": "0.17.2"}
    for _ in range(3):  # a new Server per connection, as a host's reload would make: still one line
        server = Server("deprecations", state_keys=KeyRing.ephemeral_key())
        discover(server, {"roots": {}}, inspector)
        discover(server, {"roots": {}}, inspector)
    assert warnings_in(caplog) == [
        "client 'inspector-p124' '0.17.2' declared the 'roots' capability, deprecated in MCP 2026-07-28 (SEP-2577);"
        " it still works, but plan to move off it (logged once per client name and version)"
    ]
    caplog.clear()
    discover(server, {"roots": {}, "sampling": {}}, inspector)  # only what is new for this client
    discover(server, {"roots": {}}, {"name": "inspector-p124", "version": "0.18.0"})  # another version
    discover(server, {"roots": {}}, {"name": "other-p124", "version": "0.17.2"})  # another client
    lines = warnings_in(caplog)
    assert len(lines) == 3, lines
    assert "'inspector-p124' '0.17.2' declared the 'sampling' capability," in lines[0]
    assert "'inspector-p124' '0.18.0' declared the 'roots' capability," in lines[1]
    assert "'other-p124' '0.17.2' declared the 'roots' capability," in lines[2]


def test_the_clients_remembered_are_bounded(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, "baton.server")
    first = {"name": "first-p124", "version": "1"}
    warn_deprecated(first, ("roots",))
    for n in range(SEEN_MAX):  # made-up names, as many as are remembered: the oldest is forgotten
        warn_deprecated({"name": f"made-up-{n}", "version": "x" * 10_000}, ("roots",))
    assert all(len(line) < 400 for line in warnings_in(caplog))  # each name and version is cut
    caplog.clear()
    warn_deprecated(first, ("roots",))
    assert len(warnings_in(caplog)) == 1
