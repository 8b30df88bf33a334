"""The in-memory transport: a `baton.Client` bound to a `Server` in the same process, no sockets, both eras.

A 2026-07-28 request goes to `Runtime.handle` and a 2025-11-25 session to `Runtime.initialize` and
`Runtime.handle_handshake`, the entry points the stdio and HTTP transports call (protocol.md P71): the kit
adds no dispatch of its own. Every message crosses as JSON bytes, both ways, as on a wire: what a
handler returns must serialize, and neither side can keep a reference into the other's dicts. The
caller is a stdio caller (`RequestInfo("stdio")`: the principal hook, else the OS user), unless
`info` says otherwise. Making the transport runs the server's stdio start-up checks (`Server.check_startup`),
which also instrument it when OpenTelemetry is configured. What only HTTP does is not exercised: the Host
allowlist, the standard headers, the body limit, sealed session ids (protocol.md P71).

In a session the server's asks are JSON-RPC requests on the call's own stream; they are answered
through the client's `Inbound`, as stdio and HTTP answer them. The ask key a 2025-11-25 request
carries is not on the wire; the bridge keeps it beside the stream (`Stream.keys`), and the transport
tells a scripted user which key a server request id stands for (protocol.md P72), so one script
answers both eras. A scripted user's forged answer (`Invalid`) replaces the checked reply here, at
the last moment, because the client refuses to send a reply that does not fit (protocol.md P74).
"""

from __future__ import annotations

import asyncio
import itertools
import os
from typing import Any, Protocol
from urllib.parse import urlsplit

import orjson

from ..client import Client
from ..client.callbacks import Notify
from ..client.inbound import Inbound
from ..client.probe import MODERN, ProtocolChoice
from ..connect import ConnectKit
from ..connect.kit import ENV_PUBLIC_URL
from ..protocol.errors import INVALID_REQUEST, McpError
from ..protocol.messages import error_response, notification, parse
from ..server import Exchange, RequestInfo, Server, Unauthenticated
from ..server.outbound import Outbound, Stream
from ..server.sessions import ServerSession
from ..server.subscriptions import Subscription
from .user import ScriptedUser


class Wire(Protocol):
    """What a scripted user shares with the transport: ask keys by wire id, and forged answers by key."""

    aliases: dict[str, str]

    def forged(self, key: str) -> dict[str, Any] | None: ...

    def discard(self) -> None:
        """Forget the forged answers not sent: their call went on without them, or failed."""

    def failure(self) -> BaseException | None: ...


def _copy(message: dict[str, Any]) -> dict[str, Any]:
    """The message as the other side reads it off a wire."""
    copy: dict[str, Any] = orjson.loads(orjson.dumps(message))
    return copy


class MemoryTransport:
    """A `baton.client.Transport` to `server` in this process (pass it as `Client(MemoryTransport(server))`)."""

    def __init__(self, server: Server, *, info: RequestInfo | None = None, wire: Wire | None = None) -> None:
        self.server = server
        self.info = info or RequestInfo("stdio")
        self.wire = wire
        self._tokens = itertools.count(1)
        self._started = False  # entered the server's lifespan (at the first request; closing exits it)
        testing_kit(server)  # ctx.secret and ctx.connect, as every transport mounts a kit: here in memory
        # The start-up checks of a stdio server, as `serve_stdio` runs them (a `ConfigurationError` here is one
        # `baton serve --stdio` would refuse with); they also instrument the server when telemetry is on.
        server.check_startup("stdio")

    async def request(
        self, message: dict[str, Any], version: str, notify: Notify | None, param_headers: dict[str, str]
    ) -> dict[str, Any]:
        """One 2026-07-28 request through `Runtime.handle`; the JSON-RPC response."""
        if notify is not None:
            message["params"].setdefault("_meta", {})["progressToken"] = self.token()
        self._forge(message.get("params"))
        if self.wire is not None:
            self.wire.failure()  # in 2026 the user's complaint was raised in the client already
            # A round's answers travel together in the next request: a forged one left over belongs to a call
            # that failed before sending it, and must not replace a later call's answer.
            self.wire.discard()
        msg = parse(orjson.dumps(message))
        await self.start()

        async def emit(method: str, params: dict[str, Any]) -> None:
            if notify is not None:
                await notify(_copy(notification(method, params)))

        reply = await self.server.runtime.handle(msg, Exchange(self.info, emit))
        if isinstance(reply, Subscription):
            self.server.runtime.hub.close(reply)
            raise McpError(INVALID_REQUEST, "subscriptions/listen is not served by the in-memory transport")
        return _copy(reply.body)

    async def finish_connect(self, url: str, value: str | dict[str, Any]) -> None:
        """Do what the user does on the connect page at `url`: the ticket it carries is completed and `value`
        (a secret, or for an OAuth provider its token response) goes to the vault for the ticket's caller."""
        kit = testing_kit(self.server)
        ticket_id = urlsplit(url).path.rstrip("/").rpartition("/")[2]
        ticket = await kit.tickets.get(ticket_id)
        if ticket is None or ticket.done:
            raise AssertionError(f"{url} is not an open connect link of this server")
        kind, _, name = ticket.purpose.partition(":")
        await kit.tickets.complete(ticket.id, ticket.principal)
        stored = value if isinstance(value, str) else orjson.dumps(value).decode()
        await kit.vault.put(ticket.principal, name if kind == "secret" else f"oauth:{name}", stored)

    def token(self) -> str:
        """A fresh progress token, for a request whose caller wants its notifications."""
        return f"p{next(self._tokens)}"

    def _forge(self, params: Any) -> None:
        answers = params.get("inputResponses") if isinstance(params, dict) and self.wire is not None else None
        if isinstance(answers, dict):
            for key in answers:
                forged = self.wire.forged(key) if self.wire is not None else None
                if forged is not None:
                    answers[key] = forged

    def _raise_failure(self) -> None:
        """A scripted user's complaint (an unexpected question) fails the call: in a session the client's
        `Inbound` turned it into an error for the server, so it is raised again here (2026 raises it as is)."""
        failure = self.wire.failure() if self.wire is not None else None
        if failure is not None:
            raise failure

    def session(self, inbound: Inbound) -> MemorySession:
        """The transport of a 2025-11-25 session (`Client` calls it when it opens one)."""
        return MemorySession(self, inbound)

    async def start(self) -> None:
        """Enter the server's `Server(lifespan=...)` for this client, once (protocol.md P132)."""
        if not self._started:
            await self.server.runtime.start()
            self._started = True

    async def close(self) -> None:
        # The server belongs to the test: closing a client must not close it; it leaves the lifespan it entered.
        lifespan = self.server.runtime.lifespan
        if self._started and lifespan is not None:
            self._started = False
            await lifespan.exit()


class MemorySession:
    """One 2025-11-25 session over `MemoryTransport`: `initialize`, then `Runtime.handle_handshake` per request."""

    session_id: str | None = None

    def __init__(self, memory: MemoryTransport, inbound: Inbound) -> None:
        self.memory = memory
        self.inbound = inbound
        self.outbound = Outbound()
        self.handshake: ServerSession | None = None

    async def request(self, message: dict[str, Any], notify: Notify | None) -> dict[str, Any]:
        memory = self.memory
        if notify is not None:
            message.setdefault("params", {}).setdefault("_meta", {})["progressToken"] = memory.token()
        msg = parse(orjson.dumps(message))
        if msg.method == "initialize":
            await memory.start()
            return await self._initialize(msg)
        if self.handshake is None:
            return _copy(error_response(msg.id, McpError(INVALID_REQUEST, "Invalid request: initialize first")))
        asked: list[asyncio.Task[None]] = []

        async def write(out: dict[str, Any]) -> None:
            data = _copy(out)
            rid = data.get("id")
            if "method" not in data or rid is None:
                if not self.inbound.notice(data) and notify is not None:
                    await notify(data)  # progress and log messages of this call
                return
            key = stream.keys.get(rid)
            wire = memory.wire
            if key is not None and wire is not None:
                eid = (data.get("params") or {}).get("elicitationId")
                wire.aliases[str(eid if isinstance(eid, str) else rid)] = key
            task = self.inbound.take(data, lambda response: self._answer(response, key))
            if task is not None:
                asked.append(task)

        stream = Stream(write, self.outbound)
        try:
            reply = await memory.server.runtime.handle_handshake(
                msg, Exchange(memory.info, principal=self.handshake.principal), self.handshake, stream
            )
        finally:
            self.inbound.drop(asked)
            if memory.wire is not None:
                memory.wire.discard()  # the call is over: what it did not send, no later call may
        memory._raise_failure()
        return _copy(reply.body)

    async def _initialize(self, msg: Any) -> dict[str, Any]:
        memory = self.memory
        ex = Exchange(memory.info)
        try:
            ex.principal = await memory.server.runtime.principal_of(memory.info)
        except Unauthenticated as exc:
            return _copy(error_response(msg.id, McpError(INVALID_REQUEST, f"Unauthorized: {exc.message}")))
        reply, self.handshake = memory.server.runtime.initialize(msg, ex)
        return _copy(reply.body)

    async def _answer(self, response: dict[str, Any], key: str | None) -> None:
        """The client's answer to a server request, as the server reads it (a forged one instead, if scripted)."""
        wire = self.memory.wire
        forged = wire.forged(key) if wire is not None and key is not None else None
        if forged is not None and "result" in response:
            response = {**response, "result": forged}
        self.outbound.answer(_copy(response))

    async def send(self, message: dict[str, Any]) -> None:
        pass  # notifications/initialized, or a cancellation: the call it names is a task of this process

    async def listen(self) -> None:
        pass  # list changes are not delivered in memory

    def reset(self) -> None:
        pass

    async def end(self) -> None:
        self.outbound.fail_all("the client closed the session")
        self.handshake = None


def memory_client(
    server: Server,
    user: ScriptedUser | None = None,
    *,
    protocol: ProtocolChoice = MODERN,
    info: RequestInfo | None = None,
    **options: Any,
) -> Client:
    """A `baton.Client` bound to `server` in this process, answering through `user` (form and URL mode).

    `protocol` is the era, `"2026-07-28"` by default (`"2025-11-25"` opens a session, `"auto"` probes);
    other `options` go to `Client` (a URL asked again is not paced unless `url_backoff_s` says so).
    """
    transport = MemoryTransport(server, info=info, wire=user)
    if user is not None:
        user.bound = True
        user.connector = transport.finish_connect
        options.setdefault("on_form", user)
        options.setdefault("on_url", user)
    options.setdefault("url_backoff_s", (0.0, 0.0))
    return Client(transport, protocol=protocol, **options)


LOOPBACK_PUBLIC_URL = "http://127.0.0.1:8000"
"""The public URL the kit gives a server that has none: loopback http, so the connect kit is in development
mode (anonymous callers, the development login) and nothing is served (protocol.md P99)."""


def testing_kit(server: Server) -> ConnectKit:
    """The server's connect kit for tests: a `ConnectKit` with in-memory stores mounted unless the server has
    one, and a loopback public URL unless one is configured (protocol.md P99)."""
    if not server.runtime.has_connect_kit:
        server.runtime.mount_connect(ConnectKit(store="memory:"))
    if server.settings.public_url is None and not os.environ.get(ENV_PUBLIC_URL):
        server.settings.public_url = LOOPBACK_PUBLIC_URL
    kit = server.runtime.connect_kit
    if not isinstance(kit, ConnectKit):
        raise TypeError(f"the testing kit works with a baton.connect.ConnectKit, not {type(kit).__name__}")
    return kit


async def store_credential(
    server: Server, name: str, value: str | dict[str, Any], *, principal: str | None = None
) -> None:
    """Fill the server's vault before a test, as if the caller had connected already: `name` as `ctx.secret`
    names it (for `ctx.connect(provider)`, `"oauth:<provider>"` with the token response as a dict). The
    caller is the in-memory client's (`principal`, else the principal hook's for stdio, else the OS user)."""
    kit = testing_kit(server)
    who = principal or await server.runtime.principal_of(RequestInfo("stdio"))
    await kit.vault.put(who, name, value if isinstance(value, str) else orjson.dumps(value).decode())
