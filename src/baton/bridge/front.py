"""The HTTP side of `baton bridge --serve-http`: Baton's own server side, its methods forwarded (protocol.md P155).

A `Server` whose runtime answers every method by forwarding it to the stdio child as one 2026-07-28 leg
(`Child.leg`), so Baton's transport does the rest as for any Baton server: a 2026-07-28 client gets the
legs and their `input_required` rounds as they are; a 2025-11-25 client (`initialize`, `Mcp-Session-Id`)
gets the session's own methods answered here (ping, `logging/setLevel`), and each round's questions as
`elicitation/create` on its request's SSE stream, the answers sent back in the next leg (the
handshake era of `baton.server.handshake`, unchanged). What the child offers is what the bridge offers;
its list changes reach `subscriptions/listen` streams and the sessions' GET streams.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import ADVERTISED_VERSIONS, META_SERVER_INFO
from ..protocol.errors import invalid_params
from ..protocol.messages import Message
from ..server.core import Server
from ..server.exchange import Exchange
from ..server.handshake import HandshakeEra
from ..server.outbound import Stream
from ..server.runtime import Runtime
from ..server.sessions import ServerSession
from ..server.subscriptions import ListenHub, Subscription, admit_subscription
from ..state.keys import KeyRing
from .child import Child
from .host import describe

log = logging.getLogger("baton.bridge")

FORWARDED = (
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    # The skills extension's, which a child that declares it answers (and one that does not refuses itself).
    "skills/list",
    "skills/get",
    "resources/directory/read",
)
"""The methods passed to the child; `server/discover` is answered from what the child said at its start."""


class FrontRuntime(Runtime):
    """The runtime of the bridge's `Server`: the child's capabilities, every method forwarded to it."""

    def __init__(self, server: Server, child: Child) -> None:
        # A key of this process only: a 2025-11-25 session id outlives neither the bridge nor its child.
        super().__init__(server, state_keys=KeyRing.ephemeral_key(), principal=None, ledger="memory:", connect=None)
        self.child = child
        self.hub = FrontHub(child)
        self.methods.clear()  # the table the handshake era reads too
        self.methods.update(dict.fromkeys(FORWARDED, self._forward))
        self.methods["server/discover"] = self._discover
        self.handshake = FrontHandshake(server, self.methods)

    def capabilities(self) -> dict[str, Any]:
        return self.child.capabilities

    async def _forward(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        return await self.child.leg(msg.method, msg.params, caps, ex.emit, ex.log_level)

    async def _discover(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(ADVERTISED_VERSIONS),  # both: sessions are served too
            "capabilities": self.child.capabilities,
            "_meta": {META_SERVER_INFO: self.child.server_info},
        }
        if self.child.instructions is not None:
            result["instructions"] = self.child.instructions
        return result


class FrontHub(ListenHub):
    """The listen streams of HTTP clients: the resources one names are subscribed to at the child (P199)."""

    def __init__(self, child: Child) -> None:
        super().__init__()
        self.child = child
        self._watching: set[asyncio.Task[None]] = set()

    def open(self, listen_id: Any, params: dict[str, Any], offered: frozenset[str]) -> Subscription:
        sub = super().open(listen_id, params, offered)
        if sub.uris - self.child.watched:
            task = asyncio.ensure_future(self._watch(sorted(sub.uris)))
            self._watching.add(task)
            task.add_done_callback(self._watching.discard)
        return sub

    async def _watch(self, uris: list[str]) -> None:
        for uri in uris:
            try:
                await self.child.watch(uri)
            except Exception as exc:  # the stream stays open; it hears nothing of this resource
                log.warning("could not subscribe to %s at the stdio server: %s", uri, describe(exc))


class FrontHandshake(HandshakeEra):
    """The 2025-11-25 side: the child's capabilities and logging; a session's resource subscriptions are made at
    the child and kept in the session, whose GET stream hears the updates (P199)."""

    def capabilities(self) -> dict[str, Any]:
        return {**self.server.runtime.capabilities(), "logging": {}}

    async def handle(self, msg: Message, ex: Exchange, session: ServerSession, stream: Stream) -> dict[str, Any]:
        if msg.method not in ("resources/subscribe", "resources/unsubscribe"):
            return await super().handle(msg, ex, session, stream)
        uri = msg.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params(f'Invalid params: {msg.method} needs "uri" (a string)')
        if msg.method == "resources/unsubscribe":
            session.subscriptions.discard(uri)
            return {}
        admit_subscription(session.subscriptions, uri)
        runtime = self.server.runtime
        assert isinstance(runtime, FrontRuntime)
        await runtime.child.watch(uri)
        session.subscriptions.add(uri)
        return {}


def front_server(child: Child) -> Server:
    """The `Server` that answers HTTP clients for the started `child`, under the child's name."""
    info = child.server_info
    version = info.get("version")
    server = Server(
        str(info["name"]),
        version if isinstance(version, str) else "unknown",
        title=info.get("title") if isinstance(info.get("title"), str) else None,
        instructions=child.instructions,
    )
    server.runtime = FrontRuntime(server, child)
    child.on_changed = server.runtime.hub.publish
    child.on_updated = server.runtime.hub.updated
    return server
