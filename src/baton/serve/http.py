"""The Streamable HTTP transport as a pure ASGI app, for both eras of MCP (protocol.md P28).

MCP 2026-07-28, per request: POST only (405 otherwise), Host and Origin checks against DNS rebinding
(403: loopback hosts, as `baton.protocol.hosts.is_loopback` defines them, are always admitted, others
only when configured), a body size limit (413), notifications answered 202, JSON responses, and an
SSE response only when the request asked for notifications (a `progressToken` or the deprecated
`logLevel`) or opened `subscriptions/listen`. A client that closes an SSE stream cancels the request.

MCP 2025-11-25: every request that `baton.protocol.era.is_modern` does not claim, and whatever carries
`Mcp-Session-Id` (answers to server requests, notifications, GET, DELETE), goes to
`baton.serve.http_sessions`; a 2026 request with its envelope pays one dict lookup for that.

With `Server(auth=...)` it also answers GET (and the CORS preflight) at the OAuth Protected Resource
Metadata path (RFC 9728, protocol.md P45); 401 and 403 replies carry the guard's `WWW-Authenticate`.

Every JSON-RPC envelope is built by `baton.protocol.messages`. Where the operator named the instance
(`$BATON_INSTANCE`, or `instance=`), every response names it in a `baton-instance` header, for deployments of
many; an unnamed instance sends none, since its default name, host:pid, is nobody's business (protocol.md P229).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Iterable, MutableMapping
from typing import TYPE_CHECKING, Any

import orjson

from ..connect import mount_default_kit
from ..protocol.asgi import Receive, Scope, Send
from ..protocol.constants import ADVERTISED_VERSIONS, HANDSHAKE_VERSIONS, META_PROTOCOL_VERSION, SUPPORTED_VERSIONS
from ..protocol.era import is_modern
from ..protocol.errors import HEADER_MISMATCH, INVALID_REQUEST, McpError, http_status
from ..protocol.headers import Headers
from ..protocol.hosts import host_without_port, is_loopback, origin_host
from ..protocol.messages import Message, RequestId, error_response, notification, parse, request_id_of, result_response
from ..server.exchange import Exchange, Reply, RequestInfo
from ..server.lifespan import LifespanFailed
from ..server.scopes import declared_scopes
from ..server.subscriptions import Subscription
from ..web import BodyTooLarge, ClientGone, read_body
from .asgi import disconnected, send_empty, send_json, send_reply
from .forwarded import FORWARDED_FOR, Proxies
from .http_sessions import SESSION_HEADER, SessionEndpoints, response_object
from .server_card import answer_card, is_card_path

if TYPE_CHECKING:
    from ..server.core import Server

log = logging.getLogger("baton.http")

DEFAULT_MAX_BODY = 4 * 1024 * 1024
ENV_INSTANCE = "BATON_INSTANCE"
INSTANCE_HEADER = b"baton-instance"
CONNECT_PREFIX = "/connect/"  # the connect kit's browser pages (baton.connect), beside the MCP endpoint
_JSON = (b"content-type", b"application/json")
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


def _startup_failed_line(record: logging.LogRecord) -> bool:
    return record.getMessage() != "Application startup failed. Exiting."


def instance_name(*, worker: bool = False) -> str:
    """What names this process (its start-up lines, its `service.instance.id`, its `baton-instance` header when
    named): `$BATON_INSTANCE`, else host:pid; in a `--workers` process `$BATON_INSTANCE:pid`, so that no two
    processes share a name."""
    named = os.environ.get(ENV_INSTANCE)
    return named if named and not worker else f"{named or socket.gethostname()}:{os.getpid()}"


def instance_header_value(*, worker: bool = False) -> str | None:
    """The `baton-instance` header: this process's name when `$BATON_INSTANCE` names the instance, else none
    (protocol.md P229)."""
    return instance_name(worker=worker) if os.environ.get(ENV_INSTANCE) else None


class HttpApp:
    """The ASGI app that serves one `Server` at one path (default `/mcp`)."""

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        allowed_hosts: Iterable[str] | None = None,
        allowed_origins: Iterable[str] | None = None,
        max_body_bytes: int = DEFAULT_MAX_BODY,
        instance: str | None = None,
    ) -> None:
        self.server = server
        mount_default_kit(server)  # the /connect/ pages below, and ctx.secret
        self.instance = instance or instance_header_value()
        self._tag = [(INSTANCE_HEADER, self.instance.encode("latin-1", "replace"))] if self.instance else []
        self._json_head = [_JSON, *self._tag]
        self._sse_head = [*_SSE_HEADERS, *self._tag]
        self.path = path
        # Loopback hosts (`is_loopback`) are always admitted; others only when configured ("*" admits any Host).
        hosts = tuple(allowed_hosts or ())
        self.allowed_hosts = None if "*" in hosts else frozenset(h.lower() for h in hosts)
        self.allowed_origins = (
            None if allowed_origins is None else frozenset(o.lower().rstrip("/") for o in allowed_origins)
        )
        self.max_body_bytes = max_body_bytes
        self._proxies = Proxies.from_environment()  # whose X-Forwarded-For names the client (protocol.md P228)
        self._hosts_seen: set[bytes] = set()
        # The 2025-11-25 era: initialize, and whatever carries Mcp-Session-Id (protocol.md P28, P30-P32).
        self.sessions = SessionEndpoints(server, json_head=self._json_head, sse_head=self._sse_head, tag=self._tag)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self._lifespan(receive, send)
            return
        # The hot path (one POST, one JSON reply) is written out here: each call saved is CPU per round trip.
        path = scope["path"]
        if path != self.path:
            if path.startswith(CONNECT_PREFIX):
                await self._connect(scope, receive, send)
            elif self.server.settings.auth is not None and path == self.server.settings.auth.metadata_path:
                await self._resource_metadata(scope, send)
            elif is_card_path(self.server, self.path, path):
                refusal = self._refuse_host(Headers(dict(scope["headers"])))
                if refusal:
                    await _plain(send, 403, refusal.encode(), self._tag)
                else:
                    await answer_card(self.server, self.path, scope, send, self._tag)
            else:
                await _plain(send, 404, b"Not found: the MCP endpoint is " + self.path.encode(), self._tag)
            return
        raw = dict(scope["headers"])
        headers = Headers(raw)
        if raw.get(b"host", b"") not in self._hosts_seen or b"origin" in raw:
            refusal = self._refuse_origin(headers)
            if refusal:
                await self._error(send, 403, None, McpError(INVALID_REQUEST, refusal))
                return
        if scope["method"] != "POST":
            if SESSION_HEADER in raw and scope["method"] in ("GET", "DELETE"):
                await self._session_verb(scope, headers, receive, send)
                return
            # Without a session GET and DELETE are a 2026 client's mistake or an old transport's probe: 405.
            await send(
                {
                    "type": "http.response.start",
                    "status": 405,
                    "headers": [(b"allow", b"POST"), (b"content-length", b"0"), *self._tag],
                }
            )
            await send({"type": "http.response.body", "body": b""})
            return
        if raw.get(b"content-type", b"")[:16].lower() != b"application/json":
            await self._error(send, 415, None, McpError(INVALID_REQUEST, "Content-Type must be application/json"))
            return
        declared = raw.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(send, self.max_body_bytes)
            return
        message = await receive()
        body: bytes = message.get("body", b"")
        if message.get("more_body") or message["type"] != "http.request" or len(body) > self.max_body_bytes:
            rest = await self._rest_of_body(message, receive, send)
            if rest is None:
                return
            body = rest
        try:
            msg = parse(body)
        except McpError as exc:
            answer = response_object(body) if SESSION_HEADER in raw else None
            if answer is not None:  # a client's answer to a server request of its session (protocol.md P32)
                if not await self._refuse_version(raw, send):
                    await self.sessions.response(answer, self._info(scope, headers), raw, send)
                return
            await self._error(send, http_status(exc.code), request_id_of(body), exc)
            return
        if not msg.is_request:
            if await self._refuse_version(raw, send):
                return
            if SESSION_HEADER in raw and _handshake_header(raw):
                await self.sessions.notification(msg, self._info(scope, headers), raw, send)
            else:
                await self._notification(msg, scope, headers, send)
            return
        info = self._info(scope, headers)
        meta = msg.params.get("_meta")
        # The one check a 2026 request pays for the other era: its envelope (protocol.md P28).
        if (type(meta) is not dict or META_PROTOCOL_VERSION not in meta) and not is_modern(
            msg.method, msg.params, headers.get("mcp-protocol-version")
        ):
            await self.sessions.request(msg, info, raw, receive, send)
            return
        if (
            isinstance(meta, dict)
            and ("progressToken" in meta or "io.modelcontextprotocol/logLevel" in meta)
            and b"text/event-stream" in raw.get(b"accept", b"")
        ):
            await self._streamed(msg, info, receive, send)
            return
        reply = await self.server.runtime.handle(msg, Exchange(info))
        if isinstance(reply, Subscription):
            await self._listen(reply, receive, send)
            return
        await send_reply(send, self._json_head, reply)

    def _info(self, scope: Scope, headers: Headers) -> RequestInfo:
        """Who sent the request: its peer, or the client a trusted proxy names (protocol.md P228)."""
        client = scope.get("client")
        if FORWARDED_FOR in headers.raw:
            client = self._proxies.client(client, _forwarded(scope))
        return RequestInfo("http", headers, (client[0], client[1]) if client else None, scope["method"])

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                _ = self.server.runtime.sealer  # load (or create) the key ring now, not on the first request
                try:
                    await self.server.runtime.start()  # Server(lifespan=...) (protocol.md P132)
                except LifespanFailed as exc:
                    # The server logs the message (uvicorn: one ERROR line); its own "Application startup failed"
                    # after it says nothing more.
                    logging.getLogger("uvicorn.error").addFilter(_startup_failed_line)
                    await send({"type": "lifespan.startup.failed", "message": str(exc)})
                    return
                await self.sessions.start()  # the answer bus between instances, if they share Redis (P113)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                self.sessions.close()
                await self.sessions.stop()
                await self.server.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _session_verb(self, scope: Scope, headers: Headers, receive: Receive, send: Send) -> None:
        """GET (resume a stream, or the standalone stream) or DELETE of a 2025-11-25 session (protocol.md P32)."""
        info = self._info(scope, headers)
        if scope["method"] == "GET":
            await self.sessions.get(info, headers.raw, receive, send)
        else:
            await self.sessions.delete(info, headers.raw, send)

    async def _connect(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The connect kit's browser pages: the Host check here, the rest (origin, session) in the kit."""
        refusal = self._refuse_host(Headers(dict(scope["headers"])))
        if refusal:
            await _plain(send, 403, refusal.encode(), self._tag)
            return
        tags = self._tag

        async def tagged(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message["headers"], *tags]
            await send(message)

        await self.server.runtime.connect_kit.app(scope, receive, tagged)

    async def _resource_metadata(self, scope: Scope, send: Send) -> None:
        """The OAuth Protected Resource Metadata (RFC 9728): public, so any origin may read it (CORS)."""
        refusal = self._refuse_host(Headers(dict(scope["headers"])))
        if refusal:
            await _plain(send, 403, refusal.encode(), self._tag)
            return
        cors = [(b"access-control-allow-origin", b"*"), *self._tag]
        if scope["method"] == "OPTIONS":
            head = [*cors, (b"access-control-allow-methods", b"GET, OPTIONS"), (b"access-control-max-age", b"86400")]
            await send_empty(send, 204, head)
            return
        if scope["method"] != "GET":
            await send_empty(send, 405, [(b"allow", b"GET, OPTIONS"), *cors])
            return
        assert self.server.settings.auth is not None
        document = self.server.settings.auth.metadata(declared_scopes(self.server))
        await send_json(send, 200, [_JSON, (b"cache-control", b"public, max-age=300"), *cors], document)

    def _refuse_origin(self, headers: Headers) -> str | None:
        refusal = self._refuse_host(headers)
        if refusal:
            return refusal
        origin = headers.get("origin")
        if origin is None:
            return None
        host = origin_host(origin)
        if host is None:  # userinfo, a path, anything but scheme://host[:port] (protocol.md P101)
            return f"Origin {origin[:200]!r} is not scheme://host[:port]"
        origin = origin.strip().lower().rstrip("/")
        ok = origin in self.allowed_origins if self.allowed_origins is not None else is_loopback(host)
        return None if ok else f"Origin {origin[:200]!r} is not allowed; configure allowed_origins"

    def _refuse_host(self, headers: Headers) -> str | None:
        if self.allowed_hosts is not None:
            raw_host = headers.raw.get(b"host", b"")
            if raw_host not in self._hosts_seen:
                host = host_without_port(raw_host.decode("latin-1").strip().lower())
                if host not in self.allowed_hosts and not is_loopback(host):
                    return f"Host {host!r} is not allowed (DNS rebinding protection); configure allowed_hosts"
                if len(self._hosts_seen) < 64:
                    self._hosts_seen.add(raw_host)  # remember admitted Host values: the check is per request
        return None

    async def _rest_of_body(self, first: MutableMapping[str, Any], receive: Receive, send: Send) -> bytes | None:
        """The body when it did not come in one small chunk: read on to the end, or refuse it (413)."""
        try:
            return await read_body(receive, self.max_body_bytes, first=first)
        except ClientGone:
            return None
        except BodyTooLarge:
            await self._too_large(send, self.max_body_bytes)
            return None

    async def _refuse_version(self, raw: dict[bytes, bytes], send: Send) -> bool:
        """Refuse (400) a POSTed notification or answer whose `MCP-Protocol-Version` header names a version this
        server does not speak, as a request with it is refused; True once refused (protocol.md P104)."""
        version = raw.get(b"mcp-protocol-version")
        if version is None:
            return False
        value = version.decode("latin-1").strip()
        if value in HANDSHAKE_VERSIONS or value in SUPPORTED_VERSIONS:
            return False
        error = McpError(
            INVALID_REQUEST,
            f"Unsupported MCP-Protocol-Version {value[:40]!r}: this server speaks {', '.join(ADVERTISED_VERSIONS)}",
        )
        await self._error(send, 400, None, error)
        return True

    async def _notification(self, msg: Message, scope: Scope, headers: Headers, send: Send) -> None:
        # protocol.md P4: accept any well-formed notification with 202; refuse only a present header
        # that disagrees with the body. A protected server authenticates it first, as every request
        # (401, or 403 without the server-wide scopes; protocol.md P38).
        if self.server.runtime.has_principal_hook:
            refusal = await self.server.runtime.admit(None, Exchange(self._info(scope, headers)))
            if refusal is not None:
                await send_reply(send, self._json_head, refusal)
                return
        declared = headers.get("mcp-method")
        if declared is not None and declared.strip() != msg.method:
            error = McpError(
                HEADER_MISMATCH,
                f"Header mismatch: Mcp-Method header value {declared.strip()!r} "
                f"does not match body value {msg.method!r}",
            )
            await self._error(send, 400, None, error)
            return
        await send({"type": "http.response.start", "status": 202, "headers": [(b"content-length", b"0"), *self._tag]})
        await send({"type": "http.response.body", "body": b""})

    async def _streamed(self, msg: Message, info: RequestInfo, receive: Receive, send: Send) -> None:
        """Answer on an SSE stream: notifications first, the response last; a disconnect cancels."""
        started = False
        closed = False

        async def emit(method: str, params: dict[str, Any]) -> None:
            nonlocal started
            if closed:
                return
            if not started:
                started = True
                await send({"type": "http.response.start", "status": 200, "headers": self._sse_head})
            await send({"type": "http.response.body", "body": _sse(notification(method, params)), "more_body": True})

        work = asyncio.ensure_future(self.server.runtime.handle(msg, Exchange(info, emit)))
        watcher = asyncio.ensure_future(disconnected(receive))
        done, _ = await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
        if work not in done:
            closed = True
            work.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await work
            log.info("client closed the stream of request %r: cancelled", msg.id)
            return
        watcher.cancel()
        reply = work.result()
        if isinstance(reply, Subscription):  # pragma: no cover - listen never carries a progress token
            await self._listen(reply, receive, send)
            return
        if not started:
            await send_reply(send, self._json_head, reply)
            return
        await send({"type": "http.response.body", "body": _sse(reply.body)})

    async def _listen(self, sub: Subscription, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": self._sse_head})

        async def event(payload: dict[str, Any], more: bool = True) -> None:
            await send({"type": "http.response.body", "body": _sse(payload), "more_body": more})

        async def pump() -> None:
            await event(notification(*sub.acknowledgement()))
            async for method, params in sub.notifications():
                await event(notification(method, params))

        work = asyncio.ensure_future(pump())
        watcher = asyncio.ensure_future(disconnected(receive))
        try:
            done, _ = await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
        finally:
            self.server.runtime.hub.close(sub)
        if watcher in done:
            work.cancel()
            return
        watcher.cancel()
        # The server ended the subscription: send the listen result, then close (protocol.md P20).
        with contextlib.suppress(Exception):
            await event(result_response(sub.listen_id, sub.result()), more=False)

    async def _error(self, send: Send, status: int, rid: RequestId | None, error: McpError) -> None:
        body = orjson.dumps(error_response(rid, error))
        head = [*self._json_head, (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": body})

    async def _too_large(self, send: Send, limit: int) -> None:
        error = McpError(INVALID_REQUEST, f"Request body too large: the limit is {limit} bytes")
        await self._error(send, 413, None, error)


def _sse(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message as a server-sent event."""
    return b"event: message\ndata: " + orjson.dumps(message) + b"\n\n"


def _forwarded(scope: Scope) -> list[bytes]:
    """Every `X-Forwarded-For` value of a request, in order (a proxy may add its own header line)."""
    return [value for name, value in scope["headers"] if name == FORWARDED_FOR]


def _handshake_header(raw: dict[bytes, bytes]) -> bool:
    """Whether the `MCP-Protocol-Version` header is absent or names a handshake-era version."""
    version = raw.get(b"mcp-protocol-version")
    return version is None or version.decode("latin-1").strip() in HANDSHAKE_VERSIONS


async def _plain(send: Send, status: int, text: bytes, tag: list[tuple[bytes, bytes]]) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(text)).encode()),
                *tag,
            ],
        }
    )
    await send({"type": "http.response.body", "body": text})


__all__ = ["HttpApp", "Reply"]
